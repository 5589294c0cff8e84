"""The transport of environments: what carries sessions between a simulator and an agent.

``protocol`` is AgentGym's wire (the request bodies, and what differs per
environment), ``server`` serves an environment on it (``openenv`` adds OpenEnv's WebSocket
sessions, ``renamed`` WebShop's names, ``sessions`` holds the live ones), ``client`` drives
a server of ours or AgentGym's, ``launcher`` and ``serve`` start servers, ``check`` probes one.
Importing this package imports none of them.
"""
