"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
fd 3 to the browser, fd 4 from it, JSON messages ending in NUL): open a page, run JavaScript in
it, wait for a condition. No driver package; the Chromium of tests/helpers_browser.py."""

from __future__ import annotations

import fcntl
import json
import os
import queue
import subprocess
import tempfile
import threading
import time
from typing import Any

from tests.helpers_browser import CHROMIUM, FLAGS


class Browser:
    def __init__(self, size: str = "1280,900") -> None:
        assert CHROMIUM is not None
        self._profile = tempfile.TemporaryDirectory(prefix="gd-cdp-", ignore_cleanup_errors=True)
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        # out of the way of fds 3 and 4, so the child's dup2 cannot clobber one with the other
        child_in = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10)
        child_out = fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
        os.close(to_r)
        os.close(from_w)

        def fds() -> None:
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                *FLAGS,
                "--remote-debugging-pipe",
                "--autoplay-policy=no-user-gesture-required",
                f"--window-size={size}",
                f"--user-data-dir={self._profile.name}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4, child_in, child_out),
            preexec_fn=fds,  # noqa: PLW1509 - only dup2 in the child
        )
        os.close(child_in)
        os.close(child_out)
        self._w = os.fdopen(to_w, "wb", buffering=0)
        self._r = os.fdopen(from_r, "rb", buffering=0)
        self._id = 0
        self._replies: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self.console: list[Any] = []
        threading.Thread(target=self._read, daemon=True).start()
        targets = self.send("Target.getTargets")["targetInfos"]
        page = next((t for t in targets if t["type"] == "page"), None)
        tid = (
            page["targetId"]
            if page
            else self.send("Target.createTarget", url="about:blank")["targetId"]
        )
        self.session = self.send("Target.attachToTarget", targetId=tid, flatten=True)["sessionId"]
        self.send("Runtime.enable", session=self.session)
        self.send("Page.enable", session=self.session)

    def _read(self) -> None:
        buf = b""
        while True:
            chunk = self._r.read(65536)
            if not chunk:
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg:
                    with self._lock:
                        q = self._replies.get(msg["id"])
                    if q is not None:
                        q.put(msg)
                elif msg.get("method") in ("Runtime.consoleAPICalled", "Runtime.exceptionThrown"):
                    self.console.append(msg["params"])

    def send(self, method: str, session: str | None = None, **params: Any) -> Any:
        with self._lock:
            self._id += 1
            mid = self._id
            q: queue.Queue[dict[str, Any]] = queue.Queue()
            self._replies[mid] = q
        msg: dict[str, Any] = {"id": mid, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        self._w.write(json.dumps(msg).encode() + b"\0")
        try:
            reply = q.get(timeout=60)
        finally:
            with self._lock:
                self._replies.pop(mid, None)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def goto(self, url: str) -> None:
        self.send("Page.navigate", session=self.session, url=url)

    def js(self, expr: str) -> Any:
        out = self.send(
            "Runtime.evaluate",
            session=self.session,
            expression=expr,
            awaitPromise=True,
            returnByValue=True,
        )
        if "exceptionDetails" in out:
            raise RuntimeError(f"{expr[:80]}: {out['exceptionDetails']}")
        return out.get("result", {}).get("value")

    def wait(self, expr: str, what: str, timeout: float = 60.0) -> Any:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            try:
                last = self.js(expr)
            except RuntimeError as exc:
                last = str(exc)
            else:
                if last:
                    return last
            time.sleep(0.2)
        raise AssertionError(
            f"timed out waiting for {what} (last: {last!r}; console: {self.console[-5:]})"
        )

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self._w.close()
        self._profile.cleanup()
