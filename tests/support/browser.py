"""Headless Chromium driven through the DevTools protocol over `--remote-debugging-pipe`
(the browser reads commands on fd 3 and writes replies and events on fd 4, each message JSON
ended by a NUL byte), with no Python package beyond the standard library.

`load(path)` opens a page from a file:// URL and returns what a person would notice: the
console errors (uncaught exceptions, `console.error`, the browser's own error log entries,
such as a resource that failed to load), the size and place of every `<svg>`, and a
full-page PNG screenshot. The browser runs with a fresh profile and is always killed.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from attrs import frozen

WIDTH, HEIGHT = 1200, 900  # the window: CSS pixels, one device pixel each


def chromium() -> str | None:
    """The browser's executable (Debian's `chromium`), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@frozen
class Box:
    x: float
    y: float
    width: float
    height: float


@frozen
class Loaded:
    errors: tuple[str, ...]  # console and log errors, in the order they came
    svgs: tuple[Box, ...]  # every <svg>, in page coordinates (CSS pixels)
    screenshot: bytes  # PNG of the whole page, one pixel per CSS pixel
    title: str


class BrowserError(RuntimeError):
    """The browser did not answer in time, or answered a command with an error."""


class _Pipe:
    """The DevTools connection: numbered commands, replies matched to them, events kept."""

    def __init__(self, to_browser: int, from_browser: int, deadline: float) -> None:
        self._out, self._in = to_browser, from_browser
        self._deadline = deadline
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive(self._deadline)
            if reply is None:
                raise BrowserError(f"no answer to {method} in time")
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, seconds: float) -> bool:
        """Until an event ``method`` arrives (True), or ``seconds`` pass (False)."""
        if any(e.get("method") == method for e in self.events):
            return True
        until = min(time.monotonic() + seconds, self._deadline)
        while (event := self._receive(until)) is not None:
            self.events.append(event)
            if event.get("method") == method:
                return True
        return False

    def drain(self, seconds: float) -> None:
        """Keep the events that arrive within ``seconds`` (late log entries)."""
        until = min(time.monotonic() + seconds, self._deadline)
        while (event := self._receive(until)) is not None:
            self.events.append(event)

    def _receive(self, until: float) -> dict[str, Any] | None:
        while b"\0" not in self._buffer:
            left = until - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                return None
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise BrowserError("the browser closed the connection")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)


@contextmanager
def _browser(timeout: float) -> Iterator[_Pipe]:
    exe = chromium()
    if exe is None:
        raise BrowserError("chromium is not installed")
    commands_r, commands_w = os.pipe()  # we write, the browser reads on fd 3
    replies_r, replies_w = os.pipe()  # the browser writes on fd 4, we read
    profile = tempfile.mkdtemp(prefix="schedc-chromium-")

    def fds() -> None:  # in the child, before exec: the pipes on the fds the browser expects
        import fcntl

        # moved above 4 first: either pipe may itself be fd 3 or 4
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (commands_r, replies_w)]
        os.dup2(high[0], 3)  # dup2 leaves the new fd inheritable
        os.dup2(high[1], 4)

    process = subprocess.Popen(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
         f"--user-data-dir={profile}", "--no-first-run", "--no-default-browser-check",
         "--disable-extensions", "--disable-background-networking", "--mute-audio",
         "--hide-scrollbars", f"--window-size={WIDTH},{HEIGHT}", "about:blank"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        preexec_fn=fds, close_fds=False,  # our other fds are not inheritable (PEP 446)
        start_new_session=True)
    os.close(commands_r)
    os.close(replies_w)
    try:
        yield _Pipe(commands_w, replies_r, time.monotonic() + timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 9)  # the browser and its helper processes
        process.wait(timeout=10)
        os.close(commands_w)
        os.close(replies_r)
        shutil.rmtree(profile, ignore_errors=True)


_SVGS = """JSON.stringify(Array.from(document.querySelectorAll('svg')).map(s => {
  const r = s.getBoundingClientRect();
  return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height];
}))"""


def load(path: str | os.PathLike[str], timeout: float = 20.0) -> Loaded:
    """Open ``path`` in headless Chromium and report what it showed (see the module)."""
    with _browser(timeout) as pipe:
        target = pipe.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True}
                            )["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            pipe.send(f"{domain}.enable", session=session)
        pipe.send("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False},
                  session=session)
        pipe.events.clear()
        pipe.send("Page.navigate", {"url": Path(path).resolve().as_uri()}, session=session)
        if not pipe.wait_for("Page.loadEventFired", timeout):
            raise BrowserError(f"{path} did not finish loading")
        pipe.drain(0.3)  # log entries of failed loads may follow the load event
        svgs = json.loads(_evaluate(pipe, session, _SVGS))
        title = _evaluate(pipe, session, "document.title")
        size = pipe.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
        shot = pipe.send("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": max(size["width"], WIDTH),
                     "height": size["height"], "scale": 1}}, session=session)
        return Loaded(tuple(_errors(pipe.events)), tuple(Box(*s) for s in svgs),
                      base64.b64decode(shot["data"]), title)


def _evaluate(pipe: _Pipe, session: str, expression: str) -> Any:
    result = pipe.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                       session=session)
    if "exceptionDetails" in result:
        raise BrowserError(f"evaluating {expression!r}: {result['exceptionDetails']}")
    return result["result"].get("value")


def _errors(events: list[dict[str, Any]]) -> Iterator[str]:
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            yield "exception: " + str(details.get("exception", {}).get("description")
                                      or details.get("text"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            yield "console.error: " + " ".join(str(a.get("value", a.get("description")))
                                               for a in params.get("args", []))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            yield f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}".strip()
