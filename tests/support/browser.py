"""A real headless Chromium, driven over the DevTools protocol through a pipe
(``--remote-debugging-pipe``: JSON messages ending in a NUL byte on file descriptors 3 and 4).
No WebDriver and no websocket library: only the browser, which Debian's ``chromium`` package
installs (``make chromium``). Used by the view's browser test and its screenshot script.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

EXECUTABLES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
NOT_INSTALLED = "Chromium is not installed: run `make chromium` (apt-get install chromium, as root)"


def chromium() -> str | None:
    """The Chromium (or Chrome) on PATH, if any."""
    return next(filter(None, map(shutil.which, EXECUTABLES)), None)


class BrowserError(RuntimeError):
    pass


def _above_four(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


class Browser:
    """One headless browser process with one page (tab), closed on exit."""

    def __init__(self, *, width: int = 1280, height: int = 900, timeout: float = 20) -> None:
        executable = chromium()
        if executable is None:
            raise BrowserError(NOT_INSTALLED)
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="agentgym-chromium-")
        self._log = (Path(self._profile.name) / "stderr.log").open("w+b")  # said if it dies
        commands_read, self._commands = os.pipe()
        self._answers, answers_write = os.pipe()
        # the child's ends above 4, so that moving them to 3 and 4 never closes one of them
        commands_read, answers_write = (_above_four(fd) for fd in (commands_read, answers_write))
        arguments = [
            executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--disable-background-networking", "--hide-scrollbars", "--mute-audio",
            "--remote-debugging-pipe", f"--user-data-dir={self._profile.name}",
            f"--window-size={width},{height}", "about:blank",
        ]  # fmt: skip
        # the browser reads commands on fd 3 and writes answers on fd 4
        shell = f'exec "$0" "$@" 3<&{commands_read} 4>&{answers_write}'
        self._process = subprocess.Popen(
            ["bash", "-c", shell, *arguments],  # dash takes no fd above 9
            pass_fds=(commands_read, answers_write),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        os.close(commands_read)
        os.close(answers_write)
        self._buffer = b""
        self._next_id = 0
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        self.page("Page.enable")
        self.resize(width, height)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):  # it may have exited already
            self.call("Browser.close")
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._commands)
        os.close(self._answers)
        self._log.close()
        self._profile.cleanup()

    # --- the protocol -------------------------------------------------------------------

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None
             ) -> dict[str, Any]:  # fmt: skip
        """Send one command and wait for its answer (events in between are dropped)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._receive(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error'].get('message')}")
                return answer.get("result", {})

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._answers], [], [], left)[0]:
                raise BrowserError("Chromium did not answer in time")
            chunk = os.read(self._answers, 1 << 20)
            if not chunk:
                self._log.seek(0)
                said = self._log.read().decode(errors="replace").strip().splitlines()[-5:]
                raise BrowserError("Chromium exited: " + "\n".join(said))
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def page(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.call(method, params, self._session)

    # --- what a test does -----------------------------------------------------------------

    def resize(self, width: int, height: int) -> None:
        """The page's viewport, in CSS pixels (what a screenshot holds)."""
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        self.page("Emulation.setDeviceMetricsOverride", metrics)

    def goto(self, url: str) -> None:
        self.page("Page.navigate", {"url": url})
        self.wait_for("document.readyState === 'complete'")

    def evaluate(self, expression: str) -> Any:
        """The value of a JS expression in the page (promises awaited)."""
        answer = self.page("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})  # fmt: skip
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            raise BrowserError(details.get("exception", {}).get("description", details["text"]))
        return answer["result"].get("value")

    def wait_for(self, expression: str, timeout: float | None = None) -> None:
        """Poll until the JS expression ``expression`` is truthy."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while not self.evaluate(f"!!({expression})"):
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {expression}")
            time.sleep(0.05)

    def text(self, selector: str) -> str:
        return self.evaluate(f"document.querySelector({json.dumps(selector)}).innerText")

    def click(self, selector: str) -> None:
        self.evaluate(f"document.querySelector({json.dumps(selector)}).click()")

    def choose(self, selector: str, value: str) -> None:
        """Pick ``value`` in a <select>, as a user does (its change event fires)."""
        self.evaluate(
            f"(() => {{ const s = document.querySelector({json.dumps(selector)});"
            f" s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change')); }})()"
        )

    def screenshot(self, path: Path, *, full_page: bool = False) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.page("Page.getLayoutMetrics")["cssContentSize"]
            clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
            params |= {"captureBeyondViewport": True, "clip": clip}
        shot = self.page("Page.captureScreenshot", params)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path
