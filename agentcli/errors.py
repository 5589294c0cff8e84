"""Typed errors raised by core code. The CLI turns each into one line and an exit code.

Every message says what is wrong and what to do about it, in one line.
"""

from __future__ import annotations


class AgentGymError(Exception):
    """Base class. ``exit_code`` 1 = runtime failure, 2 = bad usage or configuration."""

    exit_code = 1


class UsageError(AgentGymError):
    """Bad input from the user: an option, an argument, a file that does not fit."""

    exit_code = 2


class DataFormatError(UsageError):
    """A training data file that does not fit its format; the message starts ``PATH:LINE:``."""


class ConfigError(UsageError):
    """A configuration value, file or override that does not validate."""


class EnvUnavailableError(AgentGymError):
    """An environment cannot run on this machine (missing Java, extra or data directory)."""


class EnvServerError(AgentGymError):
    """An environment server is unreachable or answered with an error."""


class EngineServerError(AgentGymError):
    """An inference engine (vLLM, SGLang) that a stage launched did not start or stopped."""


class SessionStateError(UsageError):
    """A call the session cannot answer in its state (a page that shows no instruction)."""


class TaskNotFoundError(UsageError):
    """An item index or id outside what the environment offers."""


class ModelEndpointError(AgentGymError):
    """An OpenAI-compatible model endpoint refuses us or keeps failing."""


class FatalRunError(AgentGymError):
    """No episode can run (nothing answers, or the key is refused): a rollout stops with this
    one error instead of recording the same failure for every item."""


class UnreachableError(FatalRunError):
    """An env server or model endpoint cannot be reached at all."""


class WrongServerError(UsageError, FatalRunError):
    """An environment server that serves another environment than the one asked for."""


class NoExpertError(UsageError, FatalRunError):
    """The oracle was pointed at a server without ``/expert`` (AgentGym's have none)."""


class ModelAuthError(FatalRunError):
    """A model endpoint refuses our API key."""


class ModelUnavailableError(AgentGymError):
    """A model cannot be built or loaded here (a missing package, file or directory)."""


class BudgetExceededError(AgentGymError):
    """A teacher stage stopped before a call that could take its spending past ``--max-cost``."""


class InvalidReplyError(ModelEndpointError):
    """A model's reply stayed unusable (not the JSON asked for) after every repair."""
