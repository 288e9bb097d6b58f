"""The review page in headless Chromium (driven over the DevTools protocol): log in with the PIN,
pick an event, the <video> seeks to a few seconds before it in the clip of the recorded footage,
the detected corners are drawn over the paused frame, a frame step moves one frame, and a ruling
made on the page appears in the log (a new correction event carrying the referee's name)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers_browser import needs_chromium
from tests.helpers_server import ServerProcess

from .cdp import Browser
from .helpers import PIN, get, kiosk_server, login

pytestmark = needs_chromium
V = "document.getElementById('video')"


@pytest.fixture()
def desk(tmp_path: Path) -> Iterator[ServerProcess]:
    proc = kiosk_server(tmp_path)
    try:
        yield proc
    finally:
        proc.stop()


def test_pick_an_event_seek_and_rule(desk: ServerProcess) -> None:
    h = login(desk.url)
    events = get(desk.url + "/api/review/deals/1", h)[1]["events"]
    ev = next(e for e in events if e["t"] == 9.6 and e["type"] == "play")
    loc = get(desk.url + f"/api/review/locate?event={ev['id']}", h)[1]
    want = 9.6 - 3.0 - loc["video"]["t0"]
    row = f"document.querySelector('.ev[data-id=\"{ev['id']}\"]')"
    b = Browser()
    try:
        b.goto(desk.url + "/review?lang=en")
        b.wait(
            "!!document.getElementById('pin') && !document.getElementById('login').hidden",
            "the PIN form",
        )
        b.js(
            f"document.getElementById('pin').value = {json.dumps(PIN)};"
            "document.getElementById('login').requestSubmit(); 1"
        )
        b.wait("document.querySelectorAll('.ev').length >= 14", "the deal's events")
        assert "Deal 1" in b.js("document.getElementById('deals').textContent")
        b.js(f"document.querySelector('.ev[data-id=\"{ev['id']}\"]').click(); 1")
        b.wait(
            f"{V}.getAttribute('data-seek') !== null && {V}.readyState >= 2 && !{V}.seeking",
            "the video to seek",
        )
        now = b.js(f"{V}.currentTime")
        assert now == pytest.approx(want, abs=0.05), (now, want)
        assert b.js("document.querySelector('.ev.on').getAttribute('data-id')") == ev["id"]
        assert "segment" in b.js("document.getElementById('where').textContent")
        # the corners the detector finds on the paused frame are drawn over it
        cards = b.wait(
            "document.getElementById('overlay').getAttribute('data-cards')", "the detections", 90
        )
        seen = get(desk.url + f"/api/review/look?t={loc['video']['t0'] + want:.3f}", h)[1]
        assert int(cards) == len(seen["cards"] or [])
        # one frame forward (the recording's 5 fps)
        b.js("document.getElementById('fwd').click(); 1")
        b.wait(
            f"Math.abs({V}.currentTime - {want + 0.2}) < 0.05 && !{V}.seeking",
            "a frame step",
        )
        # slow motion
        b.js("document.querySelector('.rate[data-rate=\"0.25\"]').click(); 1")
        assert b.js("document.getElementById('video').playbackRate") == 0.25
        # a ruling: void the event, with the referee's name and a reason
        b.js(
            "document.getElementById('referee').value = 'Chen Jing';"
            "document.getElementById('reason').value = 'E did not play: the cards were dropped';"
            "document.querySelector('.act[data-action=\"void\"]').click(); 1"
        )
        b.wait(
            "document.getElementById('rulings').textContent.indexOf('cards were dropped') >= 0",
            "the ruling in the log",
        )
        b.wait(
            f"document.querySelector('.ev.correction') && {row}.classList.contains('void')",
            "the voided event marked",
        )
        assert "Chen Jing" in b.js("document.getElementById('rulings').textContent")
    finally:
        b.close()
    after = get(desk.url + "/api/review/deals/1", h)[1]["events"]
    corr = [e for e in after if e["type"] == "correction"]
    assert corr and corr[-1]["target"] == ev["id"] and "Chen Jing" in corr[-1]["reason"]
