"""A client that speaks AgentGym's wire as its env clients do (agentenv/agentenv/envs/*.py at
3ef9235), for tests that AgentGym's clients can drive our servers.

Per env it sends what AgentGym's client sends (textcraft's /create body of minecraft_dir,
commands and goal; alfworld's reset by ``game`` and ``world_type``; ids as ``id``, or
``env_idx`` on webshop) and reads back the fields that client reads, failing where it would:
any answer but HTTP 200 (AgentGym's clients ``assert res.status_code == 200``), or a field it
reads that is missing (their KeyError).
"""

from __future__ import annotations

from typing import Any

import httpx

# The fields each AgentGym client reads from each answer.
READS: dict[str, dict[str, tuple[str, ...]]] = {
    "textcraft": {
        "create": ("id", "observation"),
        "reset": ("observation",),
        "step": ("observation", "reward", "done"),
    },
    "sciworld": {
        "create": ("id",),
        "reset": ("task_description", "observation"),
        "step": ("observation", "reward", "score", "done"),
    },
    "babyai": {
        "create": ("id",),
        "reset": ("observation", "reward", "score", "done"),
        "step": ("observation", "reward", "score", "done"),
    },
    "alfworld": {
        "create": ("id",),
        "reset": ("observation", "available_actions"),
        "step": ("observation", "available_actions", "reward", "done"),
    },
}


class AgentGymClientError(AssertionError):
    """What AgentGym's client raises: its ``assert res.status_code == 200`` failing."""


class AgentGymStyleClient:
    """One env client, created as AgentGym's is: ``/create`` in the constructor."""

    def __init__(self, base_url: str, env: str, **create_body: Any) -> None:
        self.env = env
        self.http = httpx.Client(base_url=base_url, timeout=120)
        if env == "textcraft":
            body = {"minecraft_dir": "agentenv_textcraft/", "commands": None, "goal": None}
            self.created = self._read(
                "create", self.http.post("/create", json={**body, **create_body})
            )
        else:
            self.created = self._read("create", self.http.post("/create"))
        self.id = self.created["id"]

    def reset(self, index: int) -> dict[str, Any]:
        body = (
            {"game": index, "world_type": "Text"} if self.env == "alfworld" else {"data_idx": index}
        )
        return self._read("reset", self._post("/reset", body))

    def step(self, action: str) -> dict[str, Any]:
        return self._read("step", self._post("/step", {"action": action}))

    def get(self, path: str) -> Any:
        return self._ok(self.http.get(f"{path}?id={self.id}")).json()

    def close(self) -> Any:
        answer = self._ok(self._post("/close", {})).json()
        self.http.close()
        return answer

    def _post(self, path: str, data: dict[str, Any]) -> httpx.Response:
        return self.http.post(path, json={**data, "id": self.id})

    def _read(self, call: str, response: httpx.Response) -> dict[str, Any]:
        body = self._ok(response).json()
        missing = [name for name in READS[self.env][call] if name not in body]
        if missing:
            raise KeyError(f"{self.env} {call}: no {', '.join(missing)} in {body}")
        return body

    @staticmethod
    def _ok(response: httpx.Response) -> httpx.Response:
        if response.status_code != 200:
            raise AgentGymClientError(f"HTTP {response.status_code}: {response.text}")
        return response
