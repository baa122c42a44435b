"""One headless Chromium for a whole test module, driven over the DevTools protocol on a pipe.

``--remote-debugging-pipe`` makes Chromium read protocol commands from its file descriptor 3 and
write answers and events to descriptor 4, each message a JSON text ended by a NUL byte, so no
WebSocket library is needed.  Pages are opened as targets of that one browser (``Browser.page``)
and read back with ``Runtime.evaluate``; screenshots come from ``Page.captureScreenshot``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


class ProtocolError(RuntimeError):
    """Chromium answered a command with an error, went away, or did not answer in time."""


class Browser:
    def __init__(self, binary: str, flags: list[str], timeout: float = 60.0) -> None:
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory()
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        to_browser, self._write_fd = os.pipe()
        self._read_fd, from_browser = os.pipe()
        # The browser expects the pipe on descriptors 3 (commands in) and 4 (messages out): a small Python
        # trampoline puts them there (high numbers first, so the two moves cannot clash) and execs it.
        move = ("import fcntl, os, sys\n"
                "a, b = (fcntl.fcntl(int(f), fcntl.F_DUPFD, 100) for f in sys.argv[1:3])\n"
                "for f in sys.argv[1:3]: os.close(int(f))\n"
                "os.dup2(a, 3); os.dup2(b, 4); os.close(a); os.close(b)\n"
                "os.execv(sys.argv[3], sys.argv[3:])\n")
        cmd = [binary, *flags, f"--user-data-dir={self._profile.name}", "--remote-debugging-pipe", "about:blank"]
        self._proc = subprocess.Popen([sys.executable, "-c", move, str(to_browser), str(from_browser), *cmd],
                                      pass_fds=(to_browser, from_browser), stdin=subprocess.DEVNULL,
                                      stdout=self._log, stderr=self._log)
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict] = []

    # ------------------------------------------------------------------ protocol
    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        """Send one command and wait for its answer (events arriving meanwhile are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._write_fd, data):]
        deadline = time.monotonic() + self.timeout
        while True:
            for msg in self._read(deadline):
                if msg.get("id") == self._next_id:
                    if "error" in msg:
                        raise ProtocolError(f"{method}: {msg['error']}")
                    return msg.get("result", {})
                if "method" in msg:
                    self._events.append(msg)

    def _read(self, deadline: float) -> list[dict]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._read_fd], [], [], left)[0]:
                raise ProtocolError(f"no answer from Chromium within {self.timeout:.0f} s{self._tail()}")
            chunk = os.read(self._read_fd, 1 << 20)
            if not chunk:
                raise ProtocolError(f"Chromium exited (status {self._proc.wait()}){self._tail()}")
            self._buffer += chunk
        *messages, self._buffer = self._buffer.split(b"\0")
        return [json.loads(m) for m in messages]

    def _tail(self) -> str:
        self._log.seek(0)
        return ": " + self._log.read().decode(errors="replace")[-2000:]

    # ------------------------------------------------------------------ pages
    def page(self, url: str, width: int = 1400, height: int = 1000) -> Page:
        """A new tab of ``width`` x ``height`` CSS pixels, navigated to ``url``."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, target, session)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session)
        answer = self.send("Page.navigate", {"url": url}, session)
        if answer.get("errorText"):
            raise ProtocolError(f"cannot open {url}: {answer['errorText']}")
        return page

    def close(self) -> None:
        with contextlib.suppress(ProtocolError):
            self.send("Browser.close")
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._write_fd)
        os.close(self._read_fd)
        self._log.close()
        self._profile.cleanup()


class Page:
    def __init__(self, browser: Browser, target: str, session: str) -> None:
        self._browser = browser
        self._target = target
        self._session = session

    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression in the page."""
        answer = self._browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                                    self._session)
        if "exceptionDetails" in answer:
            raise ProtocolError(f"{expression}: {answer['exceptionDetails'].get('text')}")
        return answer["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0, interval: float = 0.05) -> Any:
        """The first truthy value of ``expression``, polled until ``timeout`` (then its last value)."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value or time.monotonic() > deadline:
                return value
            time.sleep(interval)

    def loaded(self, timeout: float = 30.0) -> None:
        """Wait for the document's load event (``readyState`` complete)."""
        self.wait_for("document.readyState === 'complete'", timeout)

    def html(self) -> str:
        """The document as serialized now (what ``--dump-dom`` prints)."""
        return self.evaluate("document.documentElement.outerHTML")

    def screenshot(self, out: Path) -> Path:
        data = self._browser.send("Page.captureScreenshot", {"format": "png"}, self._session)["data"]
        out.write_bytes(base64.b64decode(data))
        return out

    def close(self) -> None:
        self._browser.send("Target.closeTarget", {"targetId": self._target})
