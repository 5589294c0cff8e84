"""The interface every teacher implements, whether an LLM behind an endpoint or an oracle
that reads the simulator.

A teacher works on one record at a time; the stages (``annotate``, ``extract-state``,
``correct``) run many at once, resume, and write the results.
"""

from __future__ import annotations

from typing import Protocol

from agentcli.records import Correction, Episode, PrivilegedState


class Teacher(Protocol):
    name: str  # recorded in the outputs' meta: "oracle" or the endpoint's model name

    async def annotate(self, demo: Episode) -> Episode:
        """The demo with each step's ``reason`` written: why the expert took that action,
        from what was known at that step only (no future information)."""
        ...

    async def extract_state(self, index: int, demo: Episode | None) -> PrivilegedState:
        """What a teacher may know about task ``index`` and the student may not; an LLM
        teacher reads it out of the expert's ``demo``, an oracle from the simulator."""
        ...

    async def correct(self, episode: Episode, state: PrivilegedState | None) -> Correction:
        """For every step of the student's ``episode``, a better reason and action valid in
        the student's own state at that step; ``original_*`` copied from the episode."""
        ...

    async def aclose(self) -> None: ...
