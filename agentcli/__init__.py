"""agentgym: train LLM agents on interactive text environments."""

from importlib.metadata import version

# Written once, in pyproject.toml; read back from the installed package's metadata.
__version__ = version("agentgym")
