"""Headless Chromium driven over the DevTools protocol (a small stdlib WebSocket client), for
layout tests: the page at an exact viewport (``--window-size`` alone gives Chromium's minimum
window, 500 px wide, and a shorter viewport in ``--dump-dom``), element boxes from the live DOM,
and screenshots.

    with Browser() as b:
        b.open(url, 390, 844)
        boxes = b.boxes(["#seat-N", "header"])   # {selector: [{x, y, w, h, ...}, ...]}
        b.screenshot(path)
"""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.helpers_browser import CHROMIUM, FLAGS


class _WebSocket:
    """Just enough of RFC 6455 for the DevTools protocol: text frames, client masking."""

    def __init__(self, url: str) -> None:
        m = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        assert m, url
        host, port, path = m.group(1), int(m.group(2)), m.group(3)
        self.sock = socket.create_connection((host, port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        req = (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise ConnectionError("DevTools closed the WebSocket handshake")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"DevTools refused the WebSocket: {head[:200]!r}")

    def send(self, text: str) -> None:
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            head = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 1 << 16:
            head = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(head + mask + masked)

    def _exact(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("DevTools closed the WebSocket")
            buf += chunk
        return buf

    def recv(self) -> str:
        parts: list[bytes] = []
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._exact(8))[0]
            payload = self._exact(n)
            op = b0 & 0x0F
            if op in (0x1, 0x0):
                parts.append(payload)
                if b0 & 0x80:
                    return b"".join(parts).decode("utf-8", "replace")
            elif op == 0x8:
                raise ConnectionError("DevTools closed the WebSocket")
            # ping/pong: ignored (DevTools does not ping)

    def close(self) -> None:
        self.sock.close()


class Browser:
    """One headless Chromium with one page, driven over DevTools."""

    def __init__(self) -> None:
        assert CHROMIUM is not None
        self._dir = tempfile.TemporaryDirectory(prefix="gd-cdp-", ignore_cleanup_errors=True)
        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                *FLAGS,
                f"--user-data-dir={self._dir.name}",
                "--remote-debugging-port=0",
                "--hide-scrollbars",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = Path(self._dir.name) / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            pages = [p for p in json.loads(r.read()) if p.get("type") == "page"]
        self.ws = _WebSocket(pages[0]["webSocketDebuggerUrl"])
        self._id = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        mid = self._id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return dict(msg.get("result", {}))

    def js(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-able)."""
        out = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in out:
            raise RuntimeError(f"{expression[:80]}: {out['exceptionDetails']}")
        return out["result"].get("value")

    def open(self, url: str, width: int, height: int, settle: float = 0.3) -> None:
        """Load ``url`` in a ``width`` x ``height`` viewport and wait until it has loaded."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=width < 600,
        )
        self.call("Page.enable")
        # the page before may hold an open event stream: stop it first, or after six of them
        # Chromium's per-host connection limit holds the next page back for a minute
        self.js("window.stop(); document.querySelectorAll('*').length")
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + 30
        time.sleep(0.1)
        while self.js("document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise AssertionError(f"{url} did not load in 30 s")
            time.sleep(0.05)
        time.sleep(settle)

    def boxes(self, selectors: list[str]) -> dict[str, list[dict[str, Any]]]:
        """For each selector, the boxes of its visible elements: x, y, w, h (CSS px in the
        viewport), and sw/sh/cw/ch (scroll and client sizes: more scroll than client = the
        content does not fit its box), ``lines`` (lines of text in it), ``tw`` (the width its
        contents take, cut off or not) and ``text``."""
        code = (
            # lines of text: rects of the contents, grouped when they share a line
            "(function(sels){function lines(el){var g=document.createRange();"
            "g.selectNodeContents(el);var rs=[].slice.call(g.getClientRects()).filter("
            "function(c){return c.width>0&&c.height>0;}).sort(function(p,q){return p.top-q.top;});"
            "var n=0,bottom=-1e9;rs.forEach(function(c){if(c.top>=bottom-2){n++;bottom=c.bottom;}"
            "else bottom=Math.max(bottom,c.bottom);});return n;}"
            "function textWidth(el){var g=document.createRange();g.selectNodeContents(el);"
            "return g.getBoundingClientRect().width;}"
            "var out={};sels.forEach(function(s){out[s]=[];"
            "document.querySelectorAll(s).forEach(function(el){var r=el.getBoundingClientRect();"
            "var cs=getComputedStyle(el);if(r.width===0&&r.height===0)return;"
            "if(cs.visibility==='hidden'||cs.display==='none')return;"
            "out[s].push({x:r.left,y:r.top,w:r.width,h:r.height,sw:el.scrollWidth,"
            "sh:el.scrollHeight,cw:el.clientWidth,ch:el.clientHeight,"
            "lines:lines(el),tw:textWidth(el),text:(el.innerText||'').slice(0,60)});});});"
            "return out;})"
        )
        return dict(self.js(f"{code}({json.dumps(selectors)})"))

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            ws.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._dir.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
