"""The appeal bundle: written by ``guandan review bundle`` from a real kiosk's log and footage
(and by the page's button), checked by ``guandan review open`` (a changed file is a clear error,
exit 2), and served offline as the same review page."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from kiosk.review.bundle import BundleError, open_bundle
from tests.helpers_browser import CHROMIUM
from tests.helpers_server import REPO, ServerProcess, free_port

from .helpers import TABLE, get, kiosk_server, login, post, request


def guandan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kiosk", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A kiosk's log with a ruling in it (E's bomb voided), stopped; its footage beside it."""
    d = tmp_path_factory.mktemp("review-bundle")
    proc = kiosk_server(d)
    try:
        h = login(proc.url)
        evs = get(proc.url + "/api/review/deals/1", h)[1]["events"]
        bomb = next(e for e in evs if e["t"] == 9.6 and e["type"] == "play")
        status, out = post(
            proc.url + "/api/review/ruling",
            {"event_id": bomb["id"], "action": "void", "referee": "Li Wei", "reason": "misread"},
            h,
        )
        assert status == 200, out
        # the page's button: the same bundle over HTTP
        status, hd, raw = request(proc.url + "/api/review/bundle?deal=1", headers=h)
        assert status == 200 and hd["content-type"] == "application/zip", raw[:200]
        (d / "button.zip").write_bytes(raw)
        status, _hd, _raw = request(proc.url + "/api/review/bundle?deal=9", headers=h)
        assert status == 404
    finally:
        proc.stop()
    out = d / "dispute.zip"
    r = guandan(
        "review",
        "bundle",
        "--table",
        TABLE,
        "--deal",
        "1",
        "--db",
        str(d / "k.db"),
        "--out",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    assert "checksums" in r.stdout and "with a clip" in r.stdout
    yield {"dir": d, "zip": out, "bomb": bomb}


def test_bundle_holds_clip_log_frames_rulings(table: dict[str, Any], tmp_path: Path) -> None:
    man = open_bundle(table["zip"], tmp_path)
    assert man["table"] == TABLE and man["deal"] == 1 and man["clip"]
    files = man["files"]
    for name in (
        "events.jsonl",
        "deal.json",
        "notes.json",
        "clip.webm",
        "clip.json",
        "frames.json",
        "locate.json",
    ):
        assert name in files, name
    events = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    corr = [e for e in events if e["type"] == "correction"]
    assert corr and corr[0]["target"] == table["bomb"]["id"] and "Li Wei" in corr[0]["reason"]
    # the voided event is still in the bundle's log as it was logged
    assert any(
        e["id"] == table["bomb"]["id"] and e["cards"] == table["bomb"]["cards"] for e in events
    )
    notes = json.loads((tmp_path / "notes.json").read_text())
    assert any(k == "ruling" and b["referee"] == "Li Wei" for _a, k, b in notes)
    assert any(k == "camera" for _a, k, _b in notes)  # the outage of the footage
    frames = json.loads((tmp_path / "frames.json").read_text())
    meta = frames[table["bomb"]["id"]]
    assert meta["frame_t"] == pytest.approx(9.6, abs=0.11)
    drawn = cv2.imread(str(tmp_path / meta["file"]))
    assert drawn is not None and drawn.shape == (720, 1280, 3)
    if meta["seen"]["cards"]:
        x1, y1, x2, y2 = (int(v) for v in meta["seen"]["cards"][0]["box"])
        assert drawn[y1, x1:x2].astype(int)[:, 1].mean() > 150  # the green box is drawn
    clip = json.loads((tmp_path / "clip.json").read_text())
    cap = cv2.VideoCapture(str(tmp_path / "clip.webm"))
    n = 0
    while cap.read()[0]:
        n += 1
    cap.release()
    assert n == clip["frames"] and clip["t0"] == 0 and clip["t1"] >= 44
    loc = json.loads((tmp_path / "locate.json").read_text())
    assert loc[table["bomb"]["id"]]["segment"].endswith(".avi")
    # the button's bundle checks too and holds the same log
    other = open_bundle(table["dir"] / "button.zip", tmp_path / "button")
    assert other["files"]["events.jsonl"]["sha256"] == files["events.jsonl"]["sha256"]


def test_a_changed_file_is_a_clear_error(table: dict[str, Any], tmp_path: Path) -> None:
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(table["zip"]) as src, zipfile.ZipFile(bad, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "events.jsonl":
                data = data.replace(b'"seat": "E"', b'"seat": "W"', 1)
            dst.writestr(item, data)
    r = guandan("review", "open", str(bad), "--check")
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "events.jsonl does not match its checksum" in r.stderr and "fresh copy" in r.stderr
    assert r.stderr.count("\n") == 1  # one line
    r = guandan("review", "open", str(table["zip"]), "--check")
    assert r.returncode == 0 and "checksums OK" in r.stdout, r.stderr
    (tmp_path / "not.zip").write_text("hello")
    with pytest.raises(BundleError, match="not a zip"):
        open_bundle(tmp_path / "not.zip", tmp_path / "x")
    r = guandan(
        "review",
        "bundle",
        "--table",
        "other",
        "--deal",
        "1",
        "--db",
        str(table["dir"] / "k.db"),
        "--out",
        str(tmp_path / "o.zip"),
    )
    assert r.returncode == 2 and f"log of table '{TABLE}'" in r.stderr
    r = guandan(
        "review",
        "bundle",
        "--table",
        TABLE,
        "--deal",
        "5",
        "--db",
        str(table["dir"] / "k.db"),
        "--out",
        str(tmp_path / "o.zip"),
    )
    assert r.returncode == 2 and "deal 5 is not in this table's log" in r.stderr
    assert not (tmp_path / "o.zip").exists()


def test_open_serves_the_review_page_offline(table: dict[str, Any], tmp_path: Path) -> None:
    port = free_port()
    proc = ServerProcess(
        ["review", "open", str(table["zip"]), "--port", str(port)], port, tmp_path / "open.log"
    )
    proc.start()
    try:
        status, out = get(proc.url + "/api/review/deals")  # no PIN offline: the bundle is the file
        assert status == 200 and out["offline"] and out["table"] == TABLE
        status, page = request(proc.url + "/review")[0], request(proc.url + "/review")[2]
        assert status == 200 and b"review.js" in page
        bomb = table["bomb"]
        status, loc = get(proc.url + f"/api/review/locate?event={bomb['id']}")
        assert (
            status == 200
            and loc["segment"].endswith(".avi")
            and loc["offset"] == pytest.approx(9.6)
        )
        assert loc["video"]["seek"] == pytest.approx(9.6 - 3.0 - loc["video"]["t0"])
        status, hd, part = request(proc.url + loc["video"]["url"], headers={"Range": "bytes=0-99"})
        assert status == 206 and len(part) == 100 and part[:4] == b"\x1a\x45\xdf\xa3"
        status, seen = get(proc.url + f"/api/review/look?t={bomb['t']}")
        assert status == 200 and seen["frame_t"] == pytest.approx(9.6, abs=0.11)
        status, out = post(
            proc.url + "/api/review/ruling",
            {"event_id": bomb["id"], "action": "confirm", "referee": "X", "reason": "y"},
        )
        assert status == 409 and "offline" in out["detail"] and out["zh"]
        status, hd, jpg = request(proc.url + "/api/review/frame.jpg?t=8")
        assert status == 200 and jpg[:2] == b"\xff\xd8"
        img = cv2.imdecode(np.frombuffer(jpg, np.uint8), cv2.IMREAD_COLOR)
        assert img.shape[:2] == (720, 1280)
        if CHROMIUM is not None:  # the same page, offline: no PIN, the bundle's clip
            _offline_page_seeks(proc.url, bomb["id"], loc["video"]["seek"])
    finally:
        proc.stop()


def _offline_page_seeks(url: str, event_id: str, seek: float) -> None:
    from .cdp import Browser

    v = "document.getElementById('video')"
    b = Browser()
    try:
        b.goto(url + "/review?lang=zh")
        b.wait("document.querySelectorAll('.ev').length >= 14", "the bundle's events")
        assert not b.js("document.getElementById('offline').hidden")
        b.js(f"document.querySelector('.ev[data-id=\"{event_id}\"]').click(); 1")
        b.wait(
            f"{v}.getAttribute('data-seek') !== null && {v}.readyState >= 2 && !{v}.seeking", "seek"
        )
        assert b.js(f"{v}.currentTime") == pytest.approx(seek, abs=0.05)
        # the bundle holds the detections of the disputed frame itself: drawn there
        b.js(f"{v}.currentTime = {seek + 3.0}; 1")
        b.wait("document.getElementById('overlay').getAttribute('data-cards') !== null", "frame")
    finally:
        b.close()
