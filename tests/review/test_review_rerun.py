"""``guandan review rerun``: the deal's recorded footage read again through the current pipeline
(the shipped detector) lists where the log differs from what the footage shows - here a play a
referee "corrected" wrongly - and leaves the log as it was."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers_browser import CHROMIUM
from vision.detector import DEFAULT_MODEL

from .helpers import REPO, TABLE, get, kiosk_server, login, post


@pytest.mark.skipif(not DEFAULT_MODEL.exists(), reason=f"no card model at {DEFAULT_MODEL}")
def test_rerun_lists_the_difference_and_changes_nothing(tmp_path: Path) -> None:
    proc = kiosk_server(tmp_path)
    try:
        h = login(proc.url)
        evs = get(proc.url + "/api/review/deals/1", h)[1]["events"]
        d7 = next(e for e in evs if e["t"] == 34.96 and e["type"] == "play")
        status, out = post(
            proc.url + "/api/review/ruling",
            {
                "event_id": d7["id"],
                "action": "correct",
                "seat": "E",
                "cards": ["D8"],
                "referee": "Li Wei",
                "reason": "looked like D8",
            },
            h,
        )
        assert status == 200, out
        # the same re-read on the kiosk (the page's button): nothing written
        n = len(get(proc.url + "/api/events", h)[1])
        status, rep = get(proc.url + "/api/review/rerun?deal=1", h)
        assert status == 200, rep
        hit = [d for d in rep["differences"] if d["kind"] == "changed"]
        assert (
            hit and hit[0]["log"][0]["cards"] == ["D8"] and hit[0]["reread"][0]["cards"] == ["D7"]
        )
        assert len(get(proc.url + "/api/events", h)[1]) == n
        assert get(proc.url + "/api/review/rerun?deal=3", h)[0] == 404
        if CHROMIUM is not None:
            _page_offers_the_difference_as_a_correction(proc.url, h["X-Referee-Token"])
    finally:
        proc.stop()
    db = tmp_path / "k.db"
    count = sqlite3.connect(db).execute("SELECT COUNT(*) FROM events").fetchone()[0]
    r = subprocess.run(
        [sys.executable, "-m", "kiosk", "review", "rerun", "--table", TABLE, "--deal", "1",
         "--db", str(db), "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    diffs = [json.loads(x) for x in r.stdout.splitlines()]
    changed = [d for d in diffs if d["kind"] == "changed" and d["log"][0]["cards"] == ["D8"]]
    assert changed, diffs
    assert changed[0]["reread"][0]["cards"] == ["D7"] and changed[0]["reread"][0]["seat"] == "E"
    # plays the footage shows as logged are not listed
    assert not [d for d in diffs if any(x["t"] in (6.6, 9.6, 12.6) for x in d["log"])], diffs
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM events").fetchone()[0] == count
    r = subprocess.run(
        [sys.executable, "-m", "kiosk", "review", "rerun", "--table", TABLE, "--deal", "4",
         "--db", str(db)],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 2 and "deal 4 is not in this table's log" in r.stderr


def _page_offers_the_difference_as_a_correction(url: str, token: str) -> None:
    from .cdp import Browser

    b = Browser()
    try:
        b.goto(url + f"/review?lang=en&token={token}")
        b.wait("document.querySelectorAll('.ev').length >= 14", "the deal's events")
        b.js("document.getElementById('rerun').click(); 1")
        b.wait("!!document.querySelector('#diffs button.use')", "the re-read's differences", 180)
        b.js("document.querySelector('#diffs button.use').click(); 1")
        b.wait(
            "document.querySelector('.seatbtn.on') && !document.getElementById('grid').hidden",
            "form",
        )
        assert b.js("document.querySelector('.seatbtn.on').getAttribute('data-seat')") == "E"
        picked = b.js("[].map.call(document.querySelectorAll('#picked svg'), s => s.dataset.card)")
        assert picked == ["D7"]
        assert "D7" in b.js("document.getElementById('reason').value")
    finally:
        b.close()
