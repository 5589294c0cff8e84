"""The transport of environments: what carries sessions between a simulator and an agent.

``format`` and ``protocol`` are AgentGym's wire (the request bodies, what differs per
environment, transitions as bodies); ``server`` serves an environment on it (``openenv``
adds OpenEnv's WebSocket sessions, ``renamed`` WebShop's names, ``sessions`` holds the live
ones); ``client`` drives a server of ours or AgentGym's; ``launcher`` and ``serve`` start
servers; ``check`` probes one. Importing this package imports none of them.
"""
