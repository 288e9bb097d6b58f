"""``guandan demo``: the whole product on one machine, nothing to install by hand.

Starts an embedded scoreboard (SQLite in a temporary folder, or ``--data DIR``), registers a
demo tournament (two pairs, one table, one round), starts a table kiosk that replays the bundled
rendered game through the vision pipeline (``datasets/demo/``) when both are present - otherwise
a seeded simulated match, and it says so - prints the URLs of the table screen, the overlay and
the scoreboard, waits for the match to end and every event to reach the scoreboard, and prints
the result (finishing order and levels per deal, the winner, the standings).

``--headless`` runs as fast as possible and exits (0 when the whole recording was refereed and
the scoreboard holds every deliverable event exactly once, 1 otherwise).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
#: the bundled rendered game (GUANDAN_DEMO_DIR overrides, e.g. for a freshly rendered one)
DEMO_DIR = Path(os.environ.get("GUANDAN_DEMO_DIR") or REPO / "datasets" / "demo")
DEMO_PROFILE = "swiss-421"
DEMO_TABLE = "t1"
DEMO_PIN = "2468"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "demo",
        help="the main job: embedded scoreboard + table kiosk on the bundled game",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--headless", action="store_true", help="run to the end fast and exit")
    p.add_argument(
        "--speed",
        type=float,
        default=None,
        help="replay speed (1 = real time; default 20, or as fast as possible with --headless)",
    )
    p.add_argument("--port", type=int, default=None, help="table kiosk port (default 8710)")
    p.add_argument(
        "--scoreboard-port", type=int, default=None, help="scoreboard port (default port+1)"
    )
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--data", metavar="DIR", help="keep the databases here (default: a temp dir)")
    p.add_argument("--seed", type=int, default=7, help="seed of the simulated match (default 7)")
    p.add_argument(
        "--simulate", action="store_true", help="use the simulated match even if a video is there"
    )
    p.add_argument(
        "--detector",
        default="auto",
        help="card detector for the bundled video: 'auto' (the default: the shipped ONNX model "
        "models/card-corners.onnx, or the recorded labels when it is not there), 'model', "
        "'oracle' (the corner labels recorded beside the video: what a perfect detector would "
        "report), or a path to a model",
    )
    p.add_argument(
        "--overlay-delay", type=float, default=0.0, metavar="S", help="overlay data delay (s)"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=1800.0,
        help="give up after this many seconds (default 1800)",
    )
    p.set_defaults(handler=_demo)


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _port_ok(host: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def find_demo_video() -> tuple[Path, Path | None, dict[str, Any]] | None:
    """The bundled rendered game: ``datasets/demo/*.mp4`` (+ ``calibration.json``,
    ``meta.json`` with the profile), or None."""
    if not DEMO_DIR.is_dir():
        return None
    meta: dict[str, Any] = {}
    mf = DEMO_DIR / "meta.json"
    if mf.is_file():
        try:
            meta = json.loads(mf.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            meta = {}
    video = DEMO_DIR / str(meta["video"]) if "video" in meta else None
    if video is None or not video.is_file():
        vids = sorted(DEMO_DIR.glob("*.mp4"))
        if not vids:
            return None
        video = vids[0]
    # `guandan synth video` writes VIDEO.calibration.json next to the video
    names = [str(meta["calibration"])] if "calibration" in meta else []
    names += [video.name + ".calibration.json", "calibration.json"]
    cal = next((DEMO_DIR / n for n in names if (DEMO_DIR / n).is_file()), None)
    return video, cal, meta


def describe_detector(detector: str, video: Path) -> str:
    """What reads the cards of the bundled video, in words, for the demo's opening lines."""
    from vision.detector import DEFAULT_MODEL
    from vision.pipeline import PipelineError, auto_detector

    if detector == "auto":
        try:
            detector = auto_detector(video)
        except PipelineError:
            return "none found (the replay says why)"
    if detector == "oracle":
        return (
            "the corner labels recorded beside the video (what a perfect detector would "
            "report), in place of the card model"
        )
    if detector == "model":
        model = DEFAULT_MODEL
        where = model.relative_to(REPO) if model.is_relative_to(REPO) else model
        return f"the shipped card model {where} (onnxruntime)"
    return f"card detector {detector}"


def _get(url: str, key: str | None = None) -> Any:
    req = urllib.request.Request(url)
    if key:
        req.add_header("Authorization", f"Bearer {key}")
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read().decode("utf-8"))


def setup_scoreboard(db_url: str, profile: str) -> tuple[int, str]:
    """Create the demo tournament, pairs, table and round; returns (tournament id, token)."""
    from kiosk.scoreboard import service
    from kiosk.scoreboard.db import make_engine, session_factory, upgrade

    engine = make_engine(db_url)
    upgrade(engine)
    with session_factory(engine)() as s:
        t = service.create_tournament(s, "guandan demo", profile, 1)
        tid = t.id
        service.add_pair(s, tid, "North-South pair 南北", "N & S", "demo", 1)
        service.add_pair(s, tid, "East-West pair 东西", "E & W", "demo", 2)
        _gt, token = service.add_table(s, tid, DEMO_TABLE, "Demo table")
        service.create_round(s, tid, [(DEMO_TABLE, 2, 1)])
    engine.dispose()
    return tid, token


def _demo(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from engine.profiles import load_profile
    from kiosk.cli import CliError
    from kiosk.scoreboard.app import create_app as scoreboard_app
    from kiosk.scoreboard.settings import Settings
    from kiosk.table.app import create_app as table_app
    from kiosk.table.service import UvicornThread, build_kiosk
    from kiosk.table.sources import SimSource, VideoSource, vision_available

    if args.speed is not None and args.speed < 0:
        raise ValueError(f"--speed {args.speed}: give 0 (as fast as possible) or more")
    speed = args.speed if args.speed is not None else (0.0 if args.headless else 20.0)
    host = args.host
    if args.port is not None:
        port = args.port
    else:
        port = 8710 if (not args.headless and _port_ok(host, 8710)) else _free_port(host)
    sport = args.scoreboard_port or (port + 1 if _port_ok(host, port + 1) else _free_port(host))
    for name, p in (("--port", port), ("--scoreboard-port", sport)):
        if not 0 < p < 65536:
            raise ValueError(f"{name} {p}: give a port 1..65535")
        if not _port_ok(host, p):
            raise CliError(f"{name} {p} is in use: pick another port")

    if args.data:
        data = Path(args.data)
        data.mkdir(parents=True, exist_ok=True)
        if (data / "kiosk.db").exists() or (data / "scoreboard.db").exists():
            raise ValueError(
                f"--data {data} already holds a demo (kiosk.db / scoreboard.db): "
                "give an empty folder or delete those files"
            )
        tmp = None
    else:
        tmp = tempfile.TemporaryDirectory(prefix="guandan-demo-")
        data = Path(tmp.name)

    profile_name = DEMO_PROFILE
    source: Any
    found = None if args.simulate else find_demo_video()
    if found is not None and vision_available():
        video, cal, meta = found
        profile_name = str(meta.get("profile", "standard"))  # `guandan synth video` default
        source = VideoSource(
            f"file:{video}",
            calibration=str(cal) if cal else None,
            speed=speed,
            detector=args.detector,
        )
        det = describe_detector(args.detector, video)
        what = f"the bundled rendered game {video} through the vision pipeline; detections: {det}"
    else:
        why = (
            "--simulate given"
            if args.simulate
            else (
                "no bundled rendered game in datasets/demo/"
                if found is None
                else "the vision pipeline (vision.pipeline) is not available"
            )
        )
        profile = load_profile(profile_name)
        source = SimSource(profile, seed=args.seed, speed=speed, table=DEMO_TABLE)
        what = f"a seeded SIMULATED match (seed {args.seed}; {why})"

    db_url = f"sqlite:///{data / 'scoreboard.db'}"
    tid, token = setup_scoreboard(db_url, profile_name)
    from kiosk.cli.scoreboard import is_loopback

    # Bound to the network (e.g. --host 0.0.0.0 to show the pages on a tablet): the admin pages
    # get a one-off key, printed below, instead of being open to everyone on the Wi-Fi.
    admin_key = None if is_loopback(host) else secrets.token_urlsafe(9)
    settings = replace(
        Settings(db_url=db_url, admin_key=admin_key), migrate=False, push_interval=0.5
    )
    sb = UvicornThread(scoreboard_app(settings), host, sport).start()
    sb_url = f"http://{host}:{sport}"
    kiosk = build_kiosk(
        db=data / "kiosk.db",
        table=DEMO_TABLE,
        profile=profile_name,
        source=source,
        scoreboard=sb_url,
        token=token,
        pin=DEMO_PIN,
        overlay_delay=args.overlay_delay,
        tournament=tid,
        max_backoff=5.0,
        gap_check_s=5.0,
    )
    kiosk.start()
    kt = UvicornThread(table_app(kiosk, manage=False), host, port).start()
    base = f"http://{host}:{port}"
    print("guandan demo")
    print(f"  replaying:    {what}")
    print(f"  profile:      {profile_name}; speed {'max' if speed == 0 else f'{speed:g}x'}")
    print(f"  table screen: {base}/   (referee PIN {DEMO_PIN})")
    print(f"  overlay:      {base}/overlay/table   ticker: {base}/overlay/ticker")
    print(f"  scoreboard:   {sb_url}/scoreboard   admin: {sb_url}/admin   API: {sb_url}/docs")
    if admin_key:
        print(f"  admin key:    {admin_key}   (any user name, this as the password)")
    print(f"  data:         {data}{' (temporary)' if tmp else ''}")
    sys.stdout.flush()
    rc = 1
    try:
        rc = _wait_and_report(kiosk, sb_url, tid, args.timeout, admin_key)
        if not args.headless:
            print("demo finished; the pages stay up - press Ctrl-C to stop", flush=True)
            while True:
                time.sleep(1)
    except KeyboardInterrupt:
        print("guandan demo: stopped", file=sys.stderr)
    finally:
        kt.stop()
        kiosk.stop()
        sb.stop()
        kiosk.store.close()
        if tmp is not None:
            tmp.cleanup()
    return rc


def _wait_and_report(
    kiosk: Any, sb_url: str, tid: int, timeout: float, admin_key: str | None = None
) -> int:
    w = kiosk.worker
    deadline = time.monotonic() + timeout
    last_print = 0.0
    while time.monotonic() < deadline:
        snap = w.snapshot()
        ob = snap.get("outbox") or {}
        done = w.source_done and ob.get("pending", 1) == 0 and w._q.empty()
        if done:
            break
        if time.monotonic() - last_print > 15:
            last_print = time.monotonic()
            print(
                f"  ... deal {snap['deal_no']} levels NS {snap['levels']['NS']} "
                f"EW {snap['levels']['EW']}, {snap['events']} events, "
                f"{ob.get('sent', 0)} at the scoreboard",
                flush=True,
            )
        time.sleep(0.2)
    else:
        print("guandan demo: timed out before the match ended", file=sys.stderr)
        return 1
    # make sure the scoreboard has processed and let the standings settle
    time.sleep(0.5)
    from engine.deal import effective_events

    events = w.events
    eff = effective_events(events)
    deals = [e for e in eff if e.type == "deal_ended"]
    ended = [e for e in eff if e.type == "match_ended"]
    print("result")
    for e in deals:
        order = " ".join(e.data["order"]) or "(forfeit)"
        lv = e.data["levels"]
        print(f"  deal {e.deal:2d}: order {order:8s}  levels NS {lv['NS']:>2} EW {lv['EW']:>2}")
    if ended:
        m = ended[-1].data
        lv = m.get("levels", {})
        print(
            f"  winner: {m.get('winner') or 'draw'} ({m.get('reason')}); final levels "
            f"NS {lv.get('NS')} EW {lv.get('EW')}"
        )
    else:
        print("  no winner yet: the recording ends before the match does")
    central = _get(f"{sb_url}/api/v1/tables/{w.table}/events?limit=5000", admin_key)
    missing = _get(f"{sb_url}/api/v1/tables/{w.table}/missing", admin_key)
    ids = [e["id"] for e in central]
    counts = kiosk.store.outbox_counts()
    deliverable = counts["sent"] + counts["pending"]
    exactly_once = len(ids) == len(set(ids)) == deliverable
    print(
        f"  events: {len(events)} logged at the table, {len(ids)} at the scoreboard "
        f"({counts['local']} kiosk-only types kept local: "
        f"{', '.join(sorted({e.type for e in events if e.type not in w.deliverable})) or '-'}; "
        f"{counts['rejected']} refused); exactly once: {'yes' if exactly_once else 'NO'}"
    )
    if missing.get("missing_count"):
        print(
            f"  the scoreboard sees {missing['missing_count']} seq gaps: the kiosk-only events "
            "above (it does not accept those types yet)"
        )
    try:
        st = _get(f"{sb_url}/api/v1/tournaments/{tid}/standings", admin_key)
        for r in st.get("standings", []):
            print(
                f"  standings {r['rank']}. {r['name']}: {r['points']} pts "
                f"(W{r['wins']} D{r['draws']} L{r['losses']}, level diff {r['level_diff']})"
            )
    except (OSError, ValueError) as exc:
        print(f"  standings unavailable: {exc}")
    sys.stdout.flush()
    if w.source_error:
        print(f"  the source failed: {w.source_error}")
    return 0 if exactly_once and counts["rejected"] == 0 and not w.source_error else 1
