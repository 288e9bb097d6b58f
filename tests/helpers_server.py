"""Real server processes for the tests, shared by tests/kiosk and tests/scoreboard.

A ``python -m kiosk ...`` web server (uvicorn: ``guandan scoreboard serve``, ``guandan table
run``) in a subprocess on a loopback port: start it and wait until its health URL answers 200,
stop it (SIGTERM, then SIGKILL after 10 s) or kill -9 it (a crash, a cut cable).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Self

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """``python -m kiosk ARGS`` on ``port``, its output appended to ``log`` (or discarded).

    ``args`` may be left empty by a subclass that builds them in :meth:`command` (read at each
    :meth:`start`, so a restart can reuse a port set after construction). ``env`` is added to the
    environment of the child.
    """

    #: what the error messages call the process
    name = "server"

    def __init__(
        self,
        args: list[str],
        port: int,
        log: Path | None = None,
        health: str = "/healthz",
        env: dict[str, str] | None = None,
    ) -> None:
        self.args = args
        self.port = port
        self.log = log
        self.health = health
        self.env = dict(env or {})
        self.url = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._out: IO[bytes] | None = None

    def command(self) -> list[str]:
        """The arguments after ``python -m kiosk``."""
        return list(self.args)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float = 60.0) -> Self:
        env = dict(os.environ, PYTHONUNBUFFERED="1", **self.env)
        self._close_log()
        self._out = open(self.log, "ab") if self.log else None  # noqa: SIM115 - closed on stop
        out: IO[bytes] | int = self._out if self._out is not None else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kiosk", *self.command()],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=out,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with {self.proc.returncode}: {self.log_tail()}"
                )
            if self.healthy(timeout=5.0):
                return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self.name} not ready in {timeout} s: {self.log_tail()}")

    def healthy(self, timeout: float = 1.0) -> bool:
        """True when the health URL answers 200 now."""
        try:
            with urllib.request.urlopen(self.url + self.health, timeout=timeout) as r:
                return bool(r.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def log_tail(self, chars: int = 2000) -> str:
        if self.log is None or not self.log.exists():
            return "(no log)"
        return self.log.read_text(errors="replace")[-chars:]

    def kill9(self) -> None:
        """SIGKILL, as a crash or a power cut would end it."""
        if self.running:
            assert self.proc is not None
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self._close_log()

    def stop(self) -> None:
        """SIGTERM, then SIGKILL when it has not exited within 10 s."""
        if self.running:
            assert self.proc is not None
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill9()
        self._close_log()

    def _close_log(self) -> None:
        if self._out is not None and (self.proc is None or self.proc.poll() is not None):
            self._out.close()
            self._out = None
