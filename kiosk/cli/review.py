"""``guandan review``: the dispute review desk off the kiosk's screen.

* ``bundle --table T --deal N --out dispute.zip [--db kiosk.db] [--footage DIR]`` - the appeal
  bundle of a deal from the kiosk's log and footage (kiosk/review/bundle.py); the log is opened
  read-only, so it works beside a running kiosk.
* ``open dispute.zip [--port P] [--check]`` - check every file against the bundle's checksums,
  then serve the review page on it offline (``--check``: only check).
* ``rerun --table T --deal N [--db kiosk.db] [--footage DIR]`` - read the deal's recorded
  footage again through the current pipeline and list where its events differ from the log.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any


def register(subs: Any) -> None:
    p = subs.add_parser("review", help="dispute review: appeal bundles, offline review, re-reads")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    b = verbs.add_parser("bundle", help="write a deal's appeal bundle (clip, log, frames, rulings)")
    _log_args(b)
    b.add_argument("--out", required=True, help="the bundle to write, e.g. dispute.zip")
    b.add_argument(
        "--no-detect", action="store_true", help="leave the detections off the disputed frames"
    )
    b.set_defaults(handler=_bundle)

    o = verbs.add_parser("open", help="check an appeal bundle and serve its review page offline")
    o.add_argument("bundle", help="the .zip written by `guandan review bundle`")
    o.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    o.add_argument("--port", type=int, default=8730, help="port (default 8730)")
    o.add_argument("--check", action="store_true", help="only check the checksums, then exit")
    o.add_argument("--log-level", default="warning", help="uvicorn log level")
    o.set_defaults(handler=_open)

    r = verbs.add_parser("rerun", help="re-read a deal's footage through the current pipeline")
    _log_args(r)
    r.add_argument("--calibration", help="table calibration file (default: from the markers)")
    r.add_argument("--detector", default="auto", help="auto, model or PATH.onnx (default auto)")
    r.add_argument("--json", action="store_true", help="print the differences as JSON lines")
    r.set_defaults(handler=_rerun)


def _log_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--table", required=True, help="table id")
    p.add_argument("--deal", required=True, type=int, help="deal number (1 = the first)")
    p.add_argument("--db", default="kiosk.db", help="the kiosk's event log (default kiosk.db)")
    p.add_argument("--footage", help="the footage folder (default: <db name>-footage beside --db)")


def read_log(db: str | Path, table: str) -> tuple[list[dict[str, Any]], list[Any], str]:
    """Events, notes and profile of a kiosk log, opened read-only (a running kiosk may hold it)."""
    path = Path(db)
    if not path.is_file():
        raise ValueError(f"--db {db}: no such file (give the kiosk's log, e.g. kiosk.db)")
    try:
        conn = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        events = [json.loads(b) for (b,) in conn.execute("SELECT body FROM events ORDER BY seq")]
        notes = [
            (float(a), str(k), json.loads(b))
            for a, k, b in conn.execute("SELECT at, kind, body FROM notes ORDER BY id")
        ]
        conn.close()
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"--db {db} is not a kiosk log: {exc}") from None
    if meta.get("table") != table:
        raise ValueError(
            f"--db {db} is the log of table {meta.get('table')!r}, not {table!r}: give "
            f"--table {meta.get('table')} or that table's log"
        )
    return events, notes, str(meta.get("profile", ""))


def read_prior(db: str | Path, deal: int) -> list[Any]:
    """The kiosk's logged observations before deal ``deal`` started (its levels, tributes)."""
    from engine.observations import parse_observation

    conn = sqlite3.connect(f"file:{Path(db).resolve()}?mode=ro", uri=True)
    try:
        row = conn.execute(
            "SELECT MIN(obs_idx) FROM events WHERE type = 'deal_started' AND deal = ?", (deal,)
        ).fetchone()
        cut = int(row[0]) if row and row[0] is not None else 0
        rows = conn.execute("SELECT idx, body FROM observations WHERE idx < ? ORDER BY idx", (cut,))
        return [parse_observation(b, where=f"log observation {i}") for i, b in rows]
    finally:
        conn.close()


def footage_of(args: argparse.Namespace) -> Any:
    from kiosk.table.footage import FootageIndex

    if args.footage:
        folder = Path(args.footage)
        if not folder.is_dir():
            raise ValueError(f"--footage {args.footage}: no such folder")
    else:
        db = Path(args.db)
        folder = db.with_name(f"{db.stem}-footage")
        if not folder.is_dir():
            print(
                f"guandan review: note: no footage folder {folder} (give --footage DIR); the "
                "bundle holds the log only",
                file=sys.stderr,
            )
            return None
    return FootageIndex(folder)


def _bundle(args: argparse.Namespace) -> int:
    from kiosk.review.bundle import write_bundle

    events, notes, _profile = read_log(args.db, args.table)
    man = write_bundle(
        args.out,
        table=args.table,
        deal=args.deal,
        events=events,
        notes=notes,
        footage=footage_of(args),
        draw=not args.no_detect,
    )
    frames = sum(1 for n in man["files"] if n.startswith("frames/"))
    size = Path(args.out).stat().st_size
    print(
        f"{args.out}: table {args.table} deal {args.deal}, {len(man['files'])} files "
        f"({'with' if man['clip'] else 'without'} a clip, {frames} disputed frames), "
        f"{size / 2**20:.1f} MB, checksums in manifest.json"
    )
    return 0


def _open(args: argparse.Namespace) -> int:
    import tempfile

    from kiosk.review.bundle import BundleDesk
    from kiosk.review.routes import create_offline_app

    with tempfile.TemporaryDirectory(prefix="gd-appeal-") as tmp:
        desk = BundleDesk(args.bundle, tmp)
        n = len(desk.manifest["files"])
        print(f"{args.bundle}: table {desk.table} deal {desk.deal}, {n} files, checksums OK")
        if args.check:
            return 0
        if not 0 < args.port < 65536:
            raise ValueError(f"--port {args.port}: give a port 1..65535")
        import uvicorn

        print(f"review page: http://{args.host}:{args.port}/review", flush=True)
        uvicorn.run(
            create_offline_app(desk),
            host=args.host,
            port=args.port,
            log_level=args.log_level,
            access_log=False,
        )
    return 0


def _rerun(args: argparse.Namespace) -> int:
    from kiosk.review.rerun import rerun_deal

    events, notes, profile = read_log(args.db, args.table)
    footage = footage_of(args)
    if footage is None:
        raise ValueError("no footage to re-read: give --footage DIR")
    report = rerun_deal(
        events,
        footage,
        deal=args.deal,
        profile=profile,
        table=args.table,
        prior=read_prior(args.db, args.deal),
        notes=notes,
        calibration=args.calibration,
        detector=args.detector,
    )
    if args.json:
        for d in report["differences"]:
            print(json.dumps(d, ensure_ascii=False))
    else:
        print(report["summary"])
        for d in report["differences"]:
            print(f"  {d['text']}")
    return 0
