"""The review desk's test table: the bundled demo recording's first 45 s as kiosk footage.

The observations are the recording's own truth (``datasets/demo/game.mp4.truth.jsonl``, the
first 15, up to t = 43.45 s: the deal is still in progress), so every event's ``t`` is the video
time of what caused it. The frames are written by the kiosk's own ``FootageRecorder`` in 15-s
segments at the video's 5 fps, with:

* the second segment (t 15..29.8) deleted afterwards: a missing segment;
* no frames for t 36..38.8 and the segment cut there (the camera lost, then back), with the
  ``camera`` notes a live source writes: an outage.
"""

from __future__ import annotations

import json
import shutil
import time
import urllib.error
import urllib.request
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2

from engine.observations import parse_observation
from kiosk.table.footage import FootageRecorder
from kiosk.table.store import EventLog
from tests.helpers_server import REPO, ServerProcess, free_port

DEMO = REPO / "datasets" / "demo" / "game.mp4"
TRUTH = REPO / "datasets" / "demo" / "game.mp4.truth.jsonl"
PROFILE = "standard"
PIN = "1357"
TABLE = "tr"
END_T = 44.0
OUTAGE = (36.0, 39.0)
MISSING = (15.0, 30.0)


def demo_frame(t: float) -> Any:
    """The demo recording's frame at video time ``t`` (5 fps)."""
    cap = cv2.VideoCapture(str(DEMO))
    try:
        cap.set(cv2.CAP_PROP_POS_FRAMES, int(round(t * 5)))
        ok, img = cap.read()
        assert ok, f"no frame at t={t} in {DEMO}"
        return img
    finally:
        cap.release()


@lru_cache(maxsize=1)
def _footage_master() -> Path:
    """The footage folder, written once per test session (copied for each kiosk)."""
    import atexit
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="gd-review-footage-"))
    atexit.register(shutil.rmtree, top, True)
    root = top / "footage"
    rec = FootageRecorder(root, table=TABLE, segment_s=15.0, reserve_mb=0.0)
    cap = cv2.VideoCapture(str(DEMO))
    i = 0
    try:
        while True:
            t = round(i / 5.0, 3)
            if t >= 45.0:
                break
            ok, img = cap.read()
            assert ok, f"{DEMO} ended at frame {i}"
            i += 1
            if OUTAGE[0] <= t < OUTAGE[1]:
                if t == OUTAGE[0]:
                    rec.cut()  # the camera is gone: the segment ends at the last frame
                continue
            assert rec.write(t, img, 5.0), f"frame at t={t} not recorded: {rec.status()}"
    finally:
        cap.release()
        rec.close()
    segs = [json.loads(x) for x in (root / "segments.jsonl").read_text().splitlines()]
    missing = [s for s in segs if s["start_t"] == MISSING[0]]
    assert len(missing) == 1, segs
    (root / missing[0]["file"]).unlink()
    return root


def write_observations(path: Path, end_t: float = END_T) -> Path:
    lines = [x for x in TRUTH.read_text().splitlines() if parse_observation(x).t <= end_t]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def make_table(d: Path) -> tuple[Path, Path]:
    """The kiosk's log (with the camera notes of the outage) and its footage beside it."""
    db = d / "k.db"
    shutil.copytree(_footage_master(), d / "k-footage")
    log = EventLog(db, table=TABLE, profile=PROFILE)
    log.note("camera", {"event": "lost", "spec": "test", "reason": "unplugged", "t": OUTAGE[0]})
    log.note(
        "camera",
        {"event": "restored", "spec": "test", "t": OUTAGE[1], "lost_t": OUTAGE[0], "down_s": 3},
    )
    log.close()
    return db, write_observations(d / "obs.jsonl")


def kiosk_server(d: Path) -> ServerProcess:
    db, obs = make_table(d)
    port = free_port()
    args = [
        "table",
        "run",
        "--observations",
        str(obs),
        "--db",
        str(db),
        "--port",
        str(port),
        "--table",
        TABLE,
        "--profile",
        PROFILE,
        "--speed",
        "0",
        "--pin",
        PIN,
    ]
    proc = ServerProcess(args, port, d / "kiosk.log")
    proc.name = "table kiosk"
    proc.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if get(proc.url + "/api/state")[1]["source"]["done"]:
            return proc
        time.sleep(0.2)
    proc.stop()
    raise AssertionError(f"the kiosk did not finish its observations: {proc.log_tail()}")


def request(
    url: str,
    *,
    body: Any = None,
    headers: dict[str, str] | None = None,
    method: str | None = None,
) -> tuple[int, dict[str, str], bytes]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    status, _h, raw = request(url, headers=headers)
    return status, json.loads(raw.decode() or "null")


def post(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    status, _h, raw = request(url, body=body, headers=headers)
    return status, json.loads(raw.decode() or "null")


def login(url: str) -> dict[str, str]:
    status, out = post(url + "/api/referee/login", {"pin": PIN})
    assert status == 200, out
    return {"X-Referee-Token": out["token"]}
