"""agentgym: train LLM agents on interactive text environments."""

__version__ = "0.1.0"
