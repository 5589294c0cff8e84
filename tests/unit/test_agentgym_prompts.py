"""Each env's opening under the agentgym style is AgentGym's ``conversation_start``: the
expected texts were copied from AgentGym's clients (``agentenv/agentenv/envs/<env>.py`` at
3ef9235, ReAct format), not from our module, so a changed byte fails here."""

from __future__ import annotations

import pytest

from agentcli.conversation import ACKNOWLEDGEMENT, Opening, StudentView, env_opening
from agentcli.envs.registry import SPECS

AGENTGYM = {
    "textcraft": (
        (
            "You are given few useful crafting recipes to craft items in Minecraft. Crafting "
            'commands are of the format "craft [target object] using [input ingredients]".\n'
            "Every round I will give you an observation, you have to respond an action based "
            'on the state and instruction. You can "get" an object (ingredients) from the '
            'inventory or the environment, look-up the game inventory by "inventory", or '
            '"craft" (target) using any of the crafting commands.\n'
            'Your output must strictly follow this format:"Thought:\n'
            "your thoughts.\n"
            "\n"
            "Action:\n"
            'your next action"\n'
            "\n"
            "Reminder: \n"
            '1. Always specify the quantity when using "get" and "craft" commands. - Example '
            "of get: get 1 lapis lazuli - Example1 of craft: craft 1 blue dye using 1 lapis "
            "lazuli - Example2 of craft: craft 1 golden carrot using 8 gold nugget, 1 carrot\n"
            '2. When using "get" command, do not specify whether the item comes from the '
            "inventory or the environment.\n"
            "3. You can use ONLY crafting commands provided, do not use your own crafting "
            "commands. However, if the crafting command uses a generic ingredient like "
            '"planks", you can use special types of the same ingredient e.g. "dark oak planks" '
            "in the command instead.\n"
            "\n"
        ),
        "OK. I'll follow your instructions and try my best to solve the task.",
    ),
    "babyai": (
        (
            "You are an exploration master that wants to finish every goal you are given. "
            "Every round I will give you an observation, and you have to respond an action and "
            "your thought based on the observation to finish the given task. You are placed in "
            "a room and you need to accomplish the given goal with actions.\n"
            "\n"
            "You can use the following actions: \n"
            "\n"
            "- turn right \n"
            "\n"
            "- turn left \n"
            "\n"
            "- move forward \n"
            "\n"
            "- go to <obj> <id> \n"
            "\n"
            "- pick up <obj> <id> \n"
            "\n"
            "- go through <door> <id>: <door> must be an open door. \n"
            "\n"
            "- toggle and go through <door> <id>: <door> can be a closed door or a locked "
            "door. If you want to open a locked door, you need to carry a key that is of the "
            "same color as the locked door. \n"
            "\n"
            "- toggle: there is a closed or locked door right in front of you and you can "
            "toggle it.\n"
            "Your response should use the following format:\n"
            "Thought:\n"
            "<Your Thought>\n"
            "\n"
            "Action:\n"
            "<Your Action>"
        ),
        "OK. I'll follow your instructions and try my best to solve the task.",
    ),
    "alfworld": (
        (
            "Interact with a household to solve a task. Imagine you are an intelligent agent "
            "in a household environment and your target is to perform actions to complete the "
            "task goal. At the beginning of your interactions, you will be given the detailed "
            "description of the current environment and your goal to accomplish. For each of "
            "your turn, you will be given a list of actions which you can choose one to "
            'perform in this turn. You should choose from two actions: "THOUGHT" or "ACTION". '
            'If you choose "THOUGHT", you should first think about the current condition and '
            "plan for your future actions, and then output your action in this turn. Your "
            'output must strictly follow this format:"Thought:\n'
            "your thoughts.\n"
            "\n"
            "Action:\n"
            'your next action"; If you choose "ACTION", you should directly output the action '
            'in this turn. Your output must strictly follow this format:"Action:\n'
            'your next action". After your each turn, the environment will give you immediate '
            "feedback based on which you plan your next few steps. if the envrionment output "
            '"Nothing happened", that means the previous action is invalid and you should try '
            "more options.\n"
            " Reminder: \n"
            "1. the action must be chosen from the given available actions. Any actions except "
            "provided available actions will be regarded as illegal. \n"
            "2. Think when necessary, try to act directly more in the process."
        ),
        "OK. I'll follow your instructions and try my best to solve the task.",
    ),
    "sciworld": (
        (
            "You are an agent for science world. Every round I will give you an observation, "
            "you have to respond an action based on the observation to finish the given task. "
            'Here are the actions you may take: [{"action": "open/close OBJ", "description": '
            '"open/close a container"}, {"action": "de/activate OBJ", "description": '
            '"activate/deactivate a device"}, {"action": "connect OBJ to OBJ", "description": '
            '"connect electrical components"}, {"action": "disconnect OBJ", "description": '
            '"disconnect electrical components"}, {"action": "use OBJ [on OBJ]", '
            '"description": "use a device/item"}, {"action": "look around", "description": '
            '"describe the current room"}, {"action": "look at OBJ", "description": "describe '
            'an object in detail"}, {"action": "look in OBJ", "description": "describe a '
            'container\'s contents"}, {"action": "read OBJ", "description": "read a note or '
            'book"}, {"action": "move OBJ to OBJ", "description": "move an object to a '
            'container"}, {"action": "pick up OBJ", "description": "move an object to the '
            'inventory"}, {"action": "put down OBJ", "description": "drop an inventory item"}, '
            '{"action": "pour OBJ into OBJ", "description": "pour a liquid into a container"}, '
            '{"action": "dunk OBJ into OBJ", "description": "dunk a container into a liquid"}, '
            '{"action": "mix OBJ", "description": "chemically mix a container"}, {"action": '
            '"go to LOC", "description": "move to a new location"}, {"action": "eat OBJ", '
            '"description": "eat a food"}, {"action": "flush OBJ", "description": "flush a '
            'toilet"}, {"action": "focus on OBJ", "description": "signal intent on a task '
            'object"}, {"action": "wait", "description": "take no action for 10 iterations"}, '
            '{"action": "wait1", "description": "take no action for 1 iteration"}, '
            '{"action":"examine OBJ","description":"provides a description of the objects '
            'present on or in a receptacle."}, {"action": "task", "description": "describe '
            'current task"}, {"action": "inventory", "description": "list your inventory"}]\n'
            "Your response should use the following format:\n"
            "Thought:\n"
            "your thoughts.\n"
            "\n"
            "Action:\n"
            "your next action"
        ),
        "OK. I'll follow your instructions and try my best to solve the task.",
    ),
    "webshop": (
        (
            "You are web shopping.\n"
            "I will give you instructions about what to do.\n"
            "You have to follow the instructions.\n"
            "Every round I will give you an observation and a list of available actions, you "
            "have to respond an action based on the state and instruction.\n"
            "You can use search action if search is available.\n"
            "You can click one of the buttons in clickables.\n"
            "An action should be of the following structure:\n"
            "search[keywords]\n"
            "click[value]\n"
            "If the action is not valid, perform nothing.\n"
            "Keywords in search are up to you, but the value in click must be a value in the "
            "list of available actions.\n"
            "Remember that your keywords in search should be carefully designed.\n"
            "Your response should use the following format:\n"
            "\n"
            "Thought:\n"
            "I think ... \n"
            "\n"
            "Action: \n"
            "click[something]"
        ),
        "Ok.",
    ),
    "webarena": (
        (
            "You are an autonomous intelligent agent tasked with navigating a web browser. "
            "You will be given web-based tasks. These tasks will be accomplished through "
            "the use of specific actions you can issue.\n"
            "\n"
            "Here's the information you'll have:\n"
            "The user's objective: This is the task you're trying to complete.\n"
            "The current web page's accessibility tree: This is a simplified "
            "representation of the webpage, providing key information.\n"
            "The current web page's URL: This is the page you're currently navigating.\n"
            "The open tabs: These are the tabs you have open.\n"
            "The previous action: This is the action you just performed. It may be helpful "
            "to track your progress.\n"
            "\n"
            "The actions you can perform fall into several categories:\n"
            "\n"
            "Page Operation Actions:\n"
            "```click [id]```: This action clicks on an element with a specific id on the "
            "webpage.\n"
            "```type [id] [content] [0|1]```: Use this to type the content into the field "
            'with id. By default, the "Enter" key is pressed after typing unless the last '
            "parameter is set to 0.\n"
            "```hover [id]```: Hover over an element with id.\n"
            "`press [key_comb]`:  Simulates the pressing of a key combination on the "
            "keyboard (e.g., Ctrl+v).\n"
            "```scroll [down|up]```: Scroll the page up or down to reveal content below or "
            "above the current view.\n"
            "\n"
            "Tab Management Actions:\n"
            "```new_tab```: Open a new, empty browser tab.\n"
            "```tab_focus [tab_index]```: Switch the browser's focus to a specific tab "
            "using its index.\n"
            "```close_tab```: Close the currently active tab.\n"
            "\n"
            "URL Navigation Actions:\n"
            "```goto [url]```: Navigate to a specific URL.\n"
            "```go_back```: Navigate to the previously viewed page.\n"
            "```go_forward```: Navigate to the next page (if a previous 'go_back' action "
            "was performed).\n"
            "\n"
            "Completion Action:\n"
            "```stop [answer]```: Issue this action when you believe the task is complete. "
            "If the objective is to find a text-based answer, provide the answer in the "
            "bracket. If you believe the task is impossible to complete, provide the "
            'answer as "N/A" in the bracket.\n'
            "\n"
            "Homepage:\n"
            "If you want to visit other websites, check out the homepage at "
            "http://homepage.com. It has a list of websites you can visit.\n"
            "\n"
            "To be successful, it is very important to follow the following rules:\n"
            "1. You should only issue an action that is valid given the current observation\n"
            "2. You should only issue one action at a time.\n"
            "3. You should follow the examples to reason step by step and then issue the "
            "next action.\n"
            "4.For ALL actions that take parameters, you MUST enclose each parameter in "
            "square brackets [].\n"
            "5. Generate the action in the correct format. Start with a \"Let's think "
            'step-by-step...In summary, the next action I will perform is" phrase, '
            "followed by action inside triple backticks (```). For example, \"Let's think "
            "step-by-step. This page has a search box whose ID is [164]. According to the "
            "nominatim rule of openstreetmap, I can search for the restaurants near a "
            'location by "restaurants near". I can submit my typing by pressing the Enter '
            "afterwards. In summary, the next action I will perform is ```type [164] "
            '[restaurants near CMU] [1]```".\n'
            "6. Issue stop action when you think you have achieved the objective. Don't "
            "generate anything after stop."
        ),
        "Ok.",
    ),
}


@pytest.mark.parametrize("env", sorted(AGENTGYM))
def test_the_agentgym_opening_is_agentgyms_text(env):
    instruction, acknowledgement = AGENTGYM[env]
    opening = env_opening(env, SPECS[env].instruction, StudentView(prompt="agentgym"))
    assert opening == Opening(instruction, acknowledgement, "agentgym")


@pytest.mark.parametrize("env", sorted(SPECS))
def test_the_native_opening_is_ours(env):
    opening = env_opening(env, SPECS[env].instruction, StudentView(prompt="native"))
    assert opening == Opening(SPECS[env].instruction, ACKNOWLEDGEMENT, "native")


def test_an_env_agentgym_lacks_opens_our_way_under_either_style():
    assert set(SPECS) - set(AGENTGYM) == {"babyai-putnext"}
    spec = SPECS["babyai-putnext"]
    assert env_opening(spec.name, spec.instruction, StudentView()) == Opening(spec.instruction)


def test_the_default_style_is_agentgyms():
    assert StudentView().prompt == "agentgym"
