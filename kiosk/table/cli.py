"""``guandan table run``: the table kiosk (registered into ``guandan table`` by kiosk/cli/table.py).

guandan table run [--camera SPEC | --observations FILE | --simulate SEED] [--capture-size WxH]
                  [--scoreboard URL --token T] [--db PATH] [--pin PIN] [--table ID]
                  [--profile P] [--speed X] [--host H] [--port P] [--overlay-delay S]
                  [--footage DIR|off] [--footage-segment MIN] [--footage-reserve MB]
                  [--footage-budget MB] [--buttons SPEC]

Without a source option the camera is ``$GUANDAN_CAMERA`` (and the calibration
``$GUANDAN_CALIBRATION``); without ``--buttons`` the seat pass buttons are ``$GUANDAN_BUTTONS``
(hardware/buttons.py specs; the Pi service file sets all three). A live camera's capture size is
``--capture-size WxH``, else ``$GUANDAN_CAPTURE_SIZE``, else the camera spec's own (``size=``) or
1280x720: ``2304x1296`` films the Pi Camera Module 3's full view (the pipeline detects on a
reduced copy and names the cards from the full frame; kiosk/table/sources.py).

``--camera file:VIDEO`` replays a recording (kiosk.table.sources.VideoSource, paced by
``--speed``); any other camera spec (``device:N``, ``picamera2[:N]``, ``synthetic[:table]``,
hardware/camera.py) is read live (``LiveSource``) and its frames are recorded for dispute review
(kiosk/table/footage.py).

Kept light at import time: fastapi/uvicorn are imported by the handler only.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

#: defaults of --camera (when no source option is given), --calibration and --buttons
ENV_CAMERA = "GUANDAN_CAMERA"
ENV_CALIBRATION = "GUANDAN_CALIBRATION"
ENV_BUTTONS = "GUANDAN_BUTTONS"  # hardware.buttons.ENV_VAR
ENV_CAPTURE_SIZE = "GUANDAN_CAPTURE_SIZE"  # kiosk.table.sources.ENV_CAPTURE_SIZE


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
        help="camera for the vision pipeline: file:VIDEO (a recorded or rendered game, paced "
        "by --speed), or a live camera read until the kiosk stops: device:N (OpenCV/V4L2, "
        "/dev/videoN), picamera2[:N] (the Raspberry Pi camera), synthetic[:table] (generated "
        "frames, to try the kiosk out); options after '?', e.g. device:0?width=1280&height=720"
        "&fps=30. A live camera that fails to open stops the kiosk at start; one that stops "
        "delivering later raises an alarm and is reopened by itself. Default $GUANDAN_CAMERA "
        "when no source option is given",
    )
    src.add_argument(
        "--observations", metavar="FILE", help="observation JSONL (`guandan sim --observations`)"
    )
    src.add_argument("--simulate", metavar="SEED", type=int, help="a seeded simulated match")
    add_capture_size(run)
    run.add_argument(
        "--calibration",
        metavar="FILE",
        help="with --camera: table calibration (default $GUANDAN_CALIBRATION; without one the "
        "pipeline calibrates from the corner markers in the frames)",
    )
    run.add_argument(
        "--detector",
        default="auto",
        help="with --camera: auto (the shipped model), model, oracle (labels recorded beside a "
        "rendered video), or a path to a model",
    )
    run.add_argument(
        "--deck",
        metavar="FILE",
        help="with --camera: the table's deck design, enrolled with `guandan vision enrol`; "
        "default with --scoreboard and --token: the deck the tournament shares on the "
        "scoreboard (guandan scoreboard deck upload), fetched at start",
    )
    run.add_argument(
        "--deck-cache",
        metavar="DIR",
        help="where the deck fetched from the scoreboard is kept (the last good one is read "
        "with when the scoreboard cannot be reached; default DB-deck beside --db, e.g. "
        "kiosk-deck/)",
    )
    run.add_argument(
        "--deck-check",
        metavar="S",
        help="live camera reading the shared deck: seconds between asks for a new version "
        "while running (an unchanged deck costs a 304); a new one is downloaded, checked and "
        "taken up at the next deal boundary. Default $GUANDAN_DECK_CHECK_S, else 60; 0: only "
        "at start",
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
        help="file/simulation pacing: 1 = real time, 10 = ten times faster, 0 = no waiting "
        "(ignored for a live camera: it runs in real time)",
    )
    run.add_argument(
        "--footage",
        metavar="DIR",
        help="live camera: folder for the recorded footage (segmented MJPG .avi files and "
        "segments.jsonl; default DB-footage beside --db, e.g. kiosk-footage/); 'off' records "
        "nothing",
    )
    run.add_argument(
        "--footage-segment",
        type=float,
        default=10.0,
        metavar="MIN",
        help="live camera: minutes per footage file (default 10)",
    )
    run.add_argument(
        "--footage-reserve",
        type=float,
        default=1024.0,
        metavar="MB",
        help="live camera: stop recording footage (alarm; the event log goes on) when less than "
        "this is free on its disk (default 1024)",
    )
    run.add_argument(
        "--footage-budget",
        type=float,
        default=None,
        metavar="MB",
        help="live camera: hold the footage folder under this many MB, dropping the oldest "
        "segments first, never one of an open dispute (default $GUANDAN_FOOTAGE_BUDGET_MB, else "
        "no budget: only --footage-reserve limits it)",
    )
    run.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    run.add_argument("--port", type=int, default=8710, help="port (default 8710)")
    run.add_argument(
        "--overlay-delay", type=float, default=0.0, metavar="S", help="overlay data delay (s)"
    )
    run.add_argument(
        "--buttons",
        metavar="SPEC",
        help="seat pass buttons (a press is a pass): gpiozero[:N=17,E=27,S=22,W=23] (BCM pins) "
        "or mock; default $GUANDAN_BUTTONS, else none",
    )
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


def add_capture_size(parser: argparse.ArgumentParser) -> None:
    """The ``--capture-size WxH`` option (``table run``, ``table calibrate``, ``table check``)."""
    parser.add_argument(
        "--capture-size",
        metavar="WxH",
        help="live camera: the frame size to capture, e.g. 2304x1296 (the Pi Camera Module 3's "
        "full view at 30+ fps; the HQ camera: 2028x1520); the cards are detected on a reduced "
        "copy and named from the full frame. Default $GUANDAN_CAPTURE_SIZE, else the camera "
        "spec's size= or 1280x720. A video file is read at its own size",
    )


def capture_size_of(args: argparse.Namespace, camera: str | None) -> tuple[int, int] | None:
    """The capture size of --capture-size, else of $GUANDAN_CAPTURE_SIZE (None: neither). A bad
    one is a SourceError (exit 2) naming where it came from; one given with a video file is
    noted as unused (the file is read at its own size)."""
    from kiosk.table.sources import capture_size

    text = getattr(args, "capture_size", None)
    where = "--capture-size"
    if not text:
        text = os.environ.get(ENV_CAPTURE_SIZE, "").strip() or None
        where = f"${ENV_CAPTURE_SIZE}"
    size = capture_size(text, where)
    if size is not None and camera and where == "--capture-size":
        from hardware.camera import CameraError, parse_spec

        try:
            kind = parse_spec(camera)[0]
        except CameraError:
            kind = ""  # the camera spec's own error comes where it is opened
        if kind == "file":
            print(
                "guandan table: note: --capture-size is for a live camera; a video file is read "
                "at its own size",
                file=sys.stderr,
            )
    return size


def make_source(args: argparse.Namespace, profile: Any) -> Any:
    from kiosk.table.sources import JsonlSource, SimSource, VideoSource

    if args.speed < 0:
        raise ValueError(f"--speed {args.speed}: give 0 (no waiting) or more")
    if args.observations or args.simulate is not None:
        capture_size_of(args, None)  # a bad --capture-size is an error whatever the source
    if args.observations:
        return JsonlSource(args.observations, speed=args.speed)
    if args.simulate is not None:
        return SimSource(profile, seed=args.simulate, speed=args.speed, table=args.table)
    # the Pi service (hardware/pi/guandan-kiosk.service) sets these instead of options
    camera = args.camera or os.environ.get(ENV_CAMERA) or None
    if camera:
        size = capture_size_of(args, camera)
        calibration = args.calibration
        if calibration is None and os.environ.get(ENV_CALIBRATION):
            calibration = os.environ[ENV_CALIBRATION]
            if not Path(calibration).is_file():
                raise ValueError(
                    f"${ENV_CALIBRATION}={calibration}: file not found; write it with `guandan "
                    "table calibrate --camera SPEC --out FILE`, or unset it"
                )
        from hardware.camera import CameraError
        from kiosk.table.sources import LiveSource, is_live_spec

        try:
            live = is_live_spec(camera)
        except CameraError as exc:
            raise CameraError(f"--camera {camera}: {exc}") from None
        if not live:
            return VideoSource(
                camera,
                calibration=calibration,
                speed=args.speed,
                detector=args.detector,
                deck=args.deck,
            )
        footage = make_footage(args)
        if args.speed != 1.0:
            print("guandan table run: note: --speed is ignored for a live camera", file=sys.stderr)
        return LiveSource(
            camera,
            calibration=calibration,
            detector=args.detector,
            deck=args.deck,
            footage=footage,
            capture_size=size,
        )
    capture_size_of(args, None)
    return None


def open_seat_buttons(args: argparse.Namespace) -> Any:
    """The seat pass buttons of --buttons, else of $GUANDAN_BUTTONS (the Pi service sets it),
    else None. A bad spec or unusable GPIO is a ``ButtonError`` (a ValueError: exit 2) naming
    where the spec came from."""
    spec = getattr(args, "buttons", None)
    where = "--buttons"
    if not spec:
        spec = os.environ.get(ENV_BUTTONS, "").strip() or None
        where = f"${ENV_BUTTONS}"
    if not spec:
        return None
    from hardware.buttons import ButtonError, open_buttons

    try:
        return open_buttons(spec)
    except ButtonError as exc:
        hint = "" if where == "--buttons" else " (fix it or unset it)"
        raise ButtonError(f"{where}={spec}: {exc}{hint}") from None


def footage_folder(args: argparse.Namespace) -> Path | None:
    """Where a live camera's footage goes: --footage, or ``<db stem>-footage`` beside --db."""
    choice = getattr(args, "footage", None)
    if choice is not None and choice.lower() == "off":
        return None
    if choice:
        return Path(choice)
    db = Path(args.db)
    return db.with_name(f"{db.stem}-footage")


def make_footage(args: argparse.Namespace) -> Any:
    from kiosk.table.footage import FootageRecorder

    folder = footage_folder(args)
    if folder is None:
        return None
    minutes = float(getattr(args, "footage_segment", 10.0))
    if not 0 < minutes <= 24 * 60:
        raise ValueError(f"--footage-segment {minutes:g}: give minutes, more than 0 up to 1440")
    budget = getattr(args, "footage_budget", None)
    if budget is not None and not budget > 0:
        raise ValueError(
            f"--footage-budget {budget:g}: give the footage folder's disk budget in MB, more "
            "than 0 (e.g. 20000), or leave it out for none"
        )
    return FootageRecorder(
        folder,
        table=args.table,
        segment_s=minutes * 60.0,
        reserve_mb=float(getattr(args, "footage_reserve", 1024.0)),
        budget_mb=budget,
    )


def shared_deck(args: argparse.Namespace) -> Any:
    """The tournament's deck from the scoreboard (kiosk/table/deckfetch.py) when the kiosk reads
    a camera with a model, has --scoreboard and --token and no --deck of its own; sets
    ``args.deck`` to it. None when not asked for."""
    camera = args.camera or (
        None if args.observations or args.simulate is not None else os.environ.get(ENV_CAMERA)
    )
    if args.deck or not (args.scoreboard and args.token) or not camera:
        return None
    if args.detector == "oracle" or args.detector.endswith((".jsonl", ".jsonl.gz")):
        return None  # the recorded labels read no deck
    from kiosk.table.deckfetch import check_interval, default_cache, share_deck

    args.deck_check_s = check_interval(getattr(args, "deck_check", None))
    cache = Path(args.deck_cache) if getattr(args, "deck_cache", None) else default_cache(args.db)
    got = share_deck(
        args.scoreboard,
        args.token,
        args.table,
        cache,
        detector=args.detector,
        say=lambda line: print(f"guandan table run: {line}", file=sys.stderr, flush=True),
    )
    if got.using:
        args.deck = str(got.profile)
    return got


def _run(args: argparse.Namespace) -> int:
    from engine.profiles import load_profile
    from kiosk.table.service import attach_buttons, build_kiosk, print_banner, serve

    if not 0 < args.port < 65536:
        raise ValueError(f"--port {args.port}: give a port 1..65535")
    profile = load_profile(args.profile)
    buttons = open_seat_buttons(args)  # before the camera and the log: a bad spec stops here
    try:
        deck = shared_deck(args)
        try:
            source = make_source(args, profile)
        except ValueError as exc:
            if deck is None or not deck.using:
                raise
            # the shared deck does not fit this kiosk's pipeline: read without it, and say so
            from kiosk.table.deckfetch import DeckFetch

            fetched, args.deck = args.deck, None
            try:
                source = make_source(args, profile)
            except ValueError:
                args.deck = fetched
                raise exc from None  # not the deck's fault: the error as it was
            deck = DeckFetch("unusable", f"deck {deck.short()} not used: {exc}")
            print(
                f"guandan table run: deck: reading with the SHIPPED model: {deck.message}",
                file=sys.stderr,
                flush=True,
            )
    except BaseException:
        if buttons is not None:
            buttons.close()
        raise
    try:
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
    except BaseException:
        close = getattr(source, "close", None)
        if callable(close):  # a live camera opened for nothing: let it go
            close()
        if buttons is not None:
            buttons.close()
        raise
    if deck is not None:  # shown in the hall-health report; new versions taken up between deals
        from kiosk.table.deckfetch import attach_deck_watch, default_cache

        attach_deck_watch(
            kiosk,
            source,
            args.scoreboard,
            args.token,
            args.table,
            Path(args.deck_cache) if args.deck_cache else default_cache(args.db),
            start=deck,
            interval_s=args.deck_check_s,
            detector=args.detector,
            say=lambda line: print(f"guandan table run: {line}", file=sys.stderr, flush=True),
        )
    if buttons is not None:
        attach_buttons(kiosk, buttons)
    print_banner(kiosk, args.host, args.port)
    if buttons is not None:
        print(f"seat buttons: {buttons.spec}", flush=True)
    try:
        serve(kiosk, args.host, args.port, args.log_level)
    finally:
        if buttons is not None:
            buttons.close()
    return 0
