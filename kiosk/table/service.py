"""Putting a kiosk together (used by ``guandan table run`` and ``guandan demo``)."""

from __future__ import annotations

import logging
import os
import secrets
import sys
import threading
from pathlib import Path
from typing import Any

from engine.profiles import load_profile
from kiosk.table.app import Kiosk, PinGate, create_app
from kiosk.table.outbox import Outbox, check_backoff
from kiosk.table.sources import ObservationSource
from kiosk.table.store import EventLog
from kiosk.table.worker import TableWorker

log = logging.getLogger("guandan.table")
ENV_PIN = "GUANDAN_TABLE_PIN"


def build_kiosk(
    *,
    db: str | Path,
    table: str,
    profile: str,
    source: ObservationSource | None,
    scoreboard: str | None = None,
    token: str | None = None,
    pin: str | None = None,
    overlay_delay: float = 0.0,
    tournament: int | None = None,
    max_backoff: float = 30.0,
    gap_check_s: float = 30.0,
    max_tries: int = 5,
    lockout_s: float = 60.0,
) -> Kiosk:
    if bool(scoreboard) != bool(token):
        raise ValueError("give both --scoreboard URL and --token T (or neither)")
    if not 0 <= overlay_delay <= 900:
        raise ValueError(f"--overlay-delay {overlay_delay}: give 0 to 900 seconds")
    if scoreboard:
        check_backoff(max_backoff)
    pin_text = pin or os.environ.get(ENV_PIN) or f"{secrets.randbelow(10**6):06d}"
    PinGate(pin_text)  # check the PIN before anything is created
    prof = load_profile(profile)
    store = EventLog(db, table=table, profile=prof.name)
    worker = TableWorker(store, prof, source, table=table)
    gate = PinGate(pin_text, store, max_tries=max_tries, lockout_s=lockout_s)
    outbox = None
    standings = None
    if scoreboard and token:
        outbox = Outbox(
            store,
            scoreboard,
            token,
            table=table,
            worker=worker,
            max_s=max_backoff,
            gap_check_s=gap_check_s,
        )
        from kiosk.overlay.routes import StandingsFeed

        standings = StandingsFeed(scoreboard, table, tournament=tournament)
    info = {"pin_generated": not (pin or os.environ.get(ENV_PIN)), "pin": pin_text}
    kiosk = Kiosk(
        store=store,
        worker=worker,
        pin=gate,
        outbox=outbox,
        overlay_delay=overlay_delay,
        standings=standings,
        info=info,
    )
    if scoreboard and token:  # hall health: a report every few seconds beside the outbox
        from kiosk.table.health import attach_health

        attach_health(kiosk, scoreboard, token, table=table)
    return kiosk


def attach_buttons(kiosk: Kiosk, spec: Any) -> Any:
    """Seat pass buttons (hardware/buttons.py; a spec or opened buttons): a press is a
    ``pass`` observation."""
    from hardware.buttons import open_buttons

    buttons = open_buttons(spec) if isinstance(spec, str) else spec

    def pressed(press: Any) -> None:
        if not getattr(press, "accepted", True):
            return

        def go() -> None:
            try:
                kiosk.worker.submit("button", {"type": "pass", "seat": press.seat})
            except Exception as exc:  # noqa: BLE001 - a bad press must not stop the buttons
                log.warning("pass button %s: %s", press.seat, exc)

        threading.Thread(target=go, daemon=True).start()

    buttons.subscribe(pressed)
    return buttons


class UvicornThread:
    """A uvicorn server in a thread (the demo runs the scoreboard and the kiosk in one process)."""

    def __init__(self, app: Any, host: str, port: int, log_level: str = "warning") -> None:
        import uvicorn

        config = uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=False)
        self.server = uvicorn.Server(config)
        # uvicorn installs signal handlers only in the main thread: none here
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self, timeout: float = 60.0) -> UvicornThread:
        import time

        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the web server could not start (port in use?)")
            if time.monotonic() > deadline:
                raise RuntimeError("the web server did not start in time")
            time.sleep(0.05)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)


def serve(kiosk: Kiosk, host: str, port: int, log_level: str = "warning") -> None:
    import uvicorn

    app = create_app(kiosk)
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=False)


def print_banner(kiosk: Kiosk, host: str, port: int) -> None:
    base = f"http://{host}:{port}"
    print(f"table kiosk: {base}/  overlay: {base}/overlay/table  ticker: {base}/overlay/ticker")
    w = kiosk.worker
    print(f"source: {getattr(w.source, 'description', 'none (referee entries only)')}")
    if kiosk.info.get("pin_generated"):
        print(f"referee PIN (generated; set --pin or ${ENV_PIN}): {kiosk.info['pin']}")
    sys.stdout.flush()
