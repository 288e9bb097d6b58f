"""``guandan table run``: the table kiosk (registered into ``guandan table`` by kiosk/cli/table.py).

guandan table run [--camera SPEC | --observations FILE | --simulate SEED]
                  [--scoreboard URL --token T] [--db PATH] [--pin PIN] [--table ID]
                  [--profile P] [--speed X] [--host H] [--port P] [--overlay-delay S]

Kept light at import time: fastapi/uvicorn are imported by the handler only.
"""

from __future__ import annotations

import argparse
from typing import Any


def register_run(verbs: Any) -> None:
    run = verbs.add_parser(
        "run",
        help="run the table kiosk: pipeline -> referee -> event log -> screen and scoreboard",
        description=(
            "Run the table kiosk: observations (camera through the vision pipeline, an "
            "observation file, or a seeded simulation) go through the referee; every event is "
            "written to a local SQLite log and sent to the scoreboard (when given). Serves the "
            "table screen at / and the broadcast overlay at /overlay/table and /overlay/ticker. "
            "Restarting with the same --db resumes where it stopped."
        ),
    )
    src = run.add_mutually_exclusive_group()
    src.add_argument(
        "--camera",
        metavar="SPEC",
        help="camera for the vision pipeline: file:VIDEO (a recorded or rendered game; the "
        "pipeline reads files - live device/picamera2 capture is not wired in yet)",
    )
    src.add_argument(
        "--observations", metavar="FILE", help="observation JSONL (`guandan sim --observations`)"
    )
    src.add_argument("--simulate", metavar="SEED", type=int, help="a seeded simulated match")
    run.add_argument("--calibration", metavar="FILE", help="with --camera: table calibration")
    run.add_argument(
        "--detector",
        default="auto",
        help="with --camera: auto (the shipped model), model, oracle (labels recorded beside a "
        "rendered video), or a path to a model",
    )
    run.add_argument(
        "--scoreboard", metavar="URL", help="central scoreboard, e.g. http://hall:8700"
    )
    run.add_argument("--token", metavar="T", help="this table's token from the scoreboard")
    run.add_argument("--tournament", type=int, help="tournament id for the overlay's standings")
    run.add_argument("--db", default="kiosk.db", help="local event log (SQLite; default kiosk.db)")
    run.add_argument(
        "--pin", help="referee PIN, 4-12 digits (default $GUANDAN_TABLE_PIN or random)"
    )
    run.add_argument("--table", default="t1", help="table id (must match the scoreboard's)")
    run.add_argument("--profile", default="swiss-421", help="rule profile (default swiss-421)")
    run.add_argument(
        "--speed",
        type=float,
        default=1.0,
        help="file/simulation pacing: 1 = real time, 10 = ten times faster, 0 = no waiting",
    )
    run.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    run.add_argument("--port", type=int, default=8710, help="port (default 8710)")
    run.add_argument(
        "--overlay-delay", type=float, default=0.0, metavar="S", help="overlay data delay (s)"
    )
    run.add_argument("--buttons", metavar="SPEC", help="seat pass buttons: gpiozero[:N=17,...]")
    run.add_argument(
        "--max-backoff",
        type=float,
        default=30.0,
        metavar="S",
        help="outbox: longest wait between retries when the scoreboard is down, 0.5..300 "
        "(default 30)",
    )
    run.add_argument(
        "--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"]
    )
    run.set_defaults(handler=_run)


def make_source(args: argparse.Namespace, profile: Any) -> Any:
    from kiosk.table.sources import JsonlSource, SimSource, VideoSource

    if args.speed < 0:
        raise ValueError(f"--speed {args.speed}: give 0 (no waiting) or more")
    if args.observations:
        return JsonlSource(args.observations, speed=args.speed)
    if args.simulate is not None:
        return SimSource(profile, seed=args.simulate, speed=args.speed, table=args.table)
    if args.camera:
        return VideoSource(
            args.camera, calibration=args.calibration, speed=args.speed, detector=args.detector
        )
    return None


def _run(args: argparse.Namespace) -> int:
    from engine.profiles import load_profile
    from kiosk.table.service import attach_buttons, build_kiosk, print_banner, serve

    if not 0 < args.port < 65536:
        raise ValueError(f"--port {args.port}: give a port 1..65535")
    profile = load_profile(args.profile)
    source = make_source(args, profile)
    kiosk = build_kiosk(
        db=args.db,
        table=args.table,
        profile=profile.name,
        source=source,
        scoreboard=args.scoreboard,
        token=args.token,
        pin=args.pin,
        overlay_delay=args.overlay_delay,
        tournament=args.tournament,
        max_backoff=args.max_backoff,
    )
    buttons = attach_buttons(kiosk, args.buttons) if args.buttons else None
    print_banner(kiosk, args.host, args.port)
    try:
        serve(kiosk, args.host, args.port, args.log_level)
    finally:
        if buttons is not None:
            buttons.close()
    return 0
