"""The table screen and the overlay in headless Chromium (Debian's ``chromium``): the DOM holds
the state (levels, counts, cards as images, finishing order, names) in both languages, the
screenshots are not blank, the overlay's background is transparent, the ticker shows standings.
Skipped when chromium is not installed (``apt-get install -y chromium``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers_browser import chromium, needs_chromium, screenshot

from .helpers import (
    Proc,
    free_port,
    get_json,
    kiosk_proc,
    post_json,
    scoreboard_proc,
    setup_scoreboard,
    sim_observations,
    wait_for,
    write_misread_straight,
    write_observations,
)

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def kiosk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Proc, dict[str, Any]]]:
    d = tmp_path_factory.mktemp("browser")
    tid, tokens = setup_scoreboard(d / "sb.db", ["tb"])
    sb = scoreboard_proc(d / "sb.db", free_port(), d / "sb.log").start()
    obs = sim_observations(2, 31)
    f = write_observations(d / "obs.jsonl", obs[: len(obs) - 40])  # stop mid-deal
    extra = ["--scoreboard", sb.url, "--token", tokens["tb"], "--tournament", str(tid)]
    k = kiosk_proc(d / "k.db", free_port(), d / "k.log", obs=f, table="tb", speed=0, extra=extra)
    try:
        k.start()
        wait_for(
            lambda: (
                get_json(k.url + "/api/state")["source"]["done"]
                and get_json(k.url + "/overlay/state")["standings"]
            ),
            60,
            "the kiosk to finish its file and the standings to arrive",
        )
        _s, login = post_json(k.url + "/api/referee/login", {"pin": "1357"})
        h = {"X-Referee-Token": login["token"]}
        names = {"N": "Li Na", "E": "Zhao Yi", "S": "Wang Fang", "W": "Sun Jie"}
        assert post_json(k.url + "/api/referee/seating", names, h)[0] == 200
        yield k, get_json(k.url + "/api/state")
    finally:
        k.stop()
        sb.stop()


def test_table_screen_dom_in_chinese_and_english(kiosk: tuple[Proc, dict[str, Any]]) -> None:
    k, st = kiosk
    d = st["deal"]
    assert d is not None and not d["over"], "the file stops mid-deal"
    dom = chromium(k.url + "/?lang=en", "--dump-dom")
    assert 'id="lvNS">' + st["levels"]["NS"] + "<" in dom
    assert 'id="lvEW">' + st["levels"]["EW"] + "<" in dom
    assert "Finishing order" in dom and "Wang Fang" in dom
    for seat in "NESW":
        assert f'id="clock-{seat}"' in dom
        count = d["counts"][seat]
        seg = dom.split(f'id="seat-{seat}"', 1)[1].split('class="seat', 1)[0]
        assert f">{count} left</div>" in seg, (seat, count, seg[:300])
        # the kiosk's own screen (loopback) is paired: a PASS button on the seat to answer
        answering = seat == d["turn"] and d["trick"] and d["owner"] != seat
        assert ('data-pass="' + seat + '">PASS</button>' in seg) == bool(answering), seg
    turn = dom.split(f'id="seat-{d["turn"]}"', 1)[0].rsplit("<div", 1)[1]
    assert "turn" in turn  # the seat on turn is highlighted
    if d["trick"]:
        trick = dom.split('id="trick"', 1)[1].split("</div>", 1)[0]
        for card in d["trick"]["cards"]:
            assert f'data-card="{card}"' in trick
    zh = chromium(k.url + "/?lang=zh", "--dump-dom")
    assert "出完顺序" in zh and "南北" in zh and "张" in zh


def test_table_screen_screenshot_is_not_blank(
    kiosk: tuple[Proc, dict[str, Any]], tmp_path: Path
) -> None:
    k, _st = kiosk
    img = screenshot(k.url + "/", tmp_path / "screen.png", "1280,800")
    assert img.shape[0] == 800 and img.shape[1] == 1280
    rgb = img[:, :, :3].reshape(-1, 3)
    colours = np.unique(rgb // 8, axis=0)
    assert rgb.std() > 20 and len(colours) > 100
    # the white card faces are there (the trick and the last plays)
    white = np.all(img[:, :, :3] > 235, axis=2).mean()
    assert 0.002 < white < 0.5


def test_overlay_is_transparent_and_shows_the_table(
    kiosk: tuple[Proc, dict[str, Any]], tmp_path: Path
) -> None:
    k, st = kiosk
    dom = chromium(k.url + "/overlay/table?delay=0", "--dump-dom")
    assert 'id="lvNS">' + st["levels"]["NS"] + "<" in dom and "Li Na" in dom
    assert "data-card=" in dom or "pass" in dom
    img = screenshot(
        k.url + "/overlay/table?delay=0",
        tmp_path / "overlay.png",
        "900,500",
        "--default-background-color=00000000",
    )
    assert img.ndim == 3 and img.shape[2] == 4, "expected an RGBA screenshot"
    alpha = img[:, :, 3]
    assert (alpha == 0).mean() > 0.2  # the background is transparent for OBS
    assert (alpha > 150).mean() > 0.1  # the panel is drawn
    assert img[alpha > 150][:, :3].std() > 20


def test_overlay_ticker_shows_the_standings(kiosk: tuple[Proc, dict[str, Any]]) -> None:
    k, _st = kiosk
    for lang, pts in (("zh", " 分"), ("en", " pts")):
        dom = chromium(k.url + f"/overlay/ticker?lang={lang}", "--dump-dom")
        track = dom.split('id="track"', 1)[1].split("</div>", 1)[0]
        assert "pair 1" in track and "pair 2" in track and pts in track, track


def _screen_after_misread(
    tmp_path: Path, after: dict[str, object], table: str, ready: Any, *pages: str
) -> tuple[dict[str, Any], list[str]]:
    """A kiosk replaying ``write_misread_straight`` then ``after``: its state once ``ready``
    (a function of the state) holds, and the DOM of each page path."""
    f = write_misread_straight(tmp_path / "obs.jsonl", after)
    k = kiosk_proc(tmp_path / "k.db", free_port(), tmp_path / "k.log", obs=f, table=table,
                   speed=0, extra=[])  # fmt: skip
    try:
        k.start()
        wait_for(lambda: ready(get_json(k.url + "/api/state")), 30, f"the kiosk ({table})")
        st = get_json(k.url + "/api/state")
        return st, [chromium(k.url + p, "--dump-dom") for p in pages]
    finally:
        k.stop()


def test_a_re_read_play_is_marked_on_the_table_screen(tmp_path: Path) -> None:
    """A camera misread the referee re-read (engine/referee.py ``reread``) shows with a mark
    whose tooltip says what the camera saw, so the floor referee can check the cards."""
    after = {"t": 5.0, "type": "played", "seat": "E", "cards": ["D4", "C5", "H6", "S7", "D8"]}
    _st, (dom,) = _screen_after_misread(
        tmp_path, after, "tr", lambda st: len(st["plays"]) == 2, "/?lang=en"
    )
    plays = dom.split('id="plays"', 1)[1].split("</aside>", 1)[0]
    assert plays.count('class="reread"') == 1 and "↺ re-read" in plays
    assert "camera read D3 C4 H5 S6 DA" in plays and "D7 for DA" in plays


def test_a_foul_on_a_camera_reading_is_shown_as_to_be_confirmed(tmp_path: Path) -> None:
    """An out-of-turn play as the camera read it is a foul flagged for the floor referee
    (engine/referee.py ``CAMERA_REVIEW_FOULS``): the fouls list says it counts only when marked."""
    after = {
        "t": 5.0,
        "type": "played",
        "seat": "N",
        "cards": ["D9"],
        "doubts": [{"card": "D9", "or": [["D6", 2.5]]}],
    }
    st, (dom, air) = _screen_after_misread(
        tmp_path, after, "tf", lambda s: len(s["fouls"]) == 1, "/?lang=en", "/overlay/table?delay=0"
    )
    # not on air until the referee marks it (the overlay does show the table: S's straight)
    assert "data-card=" in air
    assert air.split('id="fouls"', 1)[1].split("</div>", 1)[0].strip(">").strip() == ""
    (foul,) = st["fouls"]
    assert foul["review"] is True and foul["kind"] == "out_of_turn"
    assert st["team_fouls"]["NS"] == 0
    fouls = dom.split('id="fouls"', 1)[1].split("</ul>", 1)[0]
    assert 'class="review"' in fouls and "counts when the referee marks it" in fouls


def test_ticker_is_live_and_never_runs_empty(kiosk: tuple[Proc, dict[str, Any]]) -> None:
    """Two pairs only: the items repeat so that the scrolling line is full all through its
    cycle, and this table's live levels lead it."""
    import time

    from .helpers_layout import Browser

    k, st = kiosk
    with Browser() as b:
        b.open(k.url + "/overlay/ticker?lang=zh", 1920, 1080)
        deadline = time.monotonic() + 20
        while "pair 1" not in (b.js("document.getElementById('track').innerText") or ""):
            assert time.monotonic() < deadline, "no standings on the ticker"
            time.sleep(0.2)
        first = b.js("document.querySelector('#track .it').innerText")
        assert first.startswith("桌 tb") and f"南北 {st['levels']['NS']}" in first, first
        assert b.js("document.getElementById('track').scrollWidth") >= 2 * 1920
        for _ in range(3):  # wherever the loop is, the line is covered with items
            covered = b.js(
                "(function(){var xs=new Array(1920).fill(0);"
                "document.querySelectorAll('#track .it').forEach(function(e){"
                "var r=e.getBoundingClientRect();for(var x=Math.max(0,Math.floor(r.left));"
                "x<Math.min(1920,r.right+48);x++)xs[x]=1;});"
                "return xs.reduce(function(a,c){return a+c;},0)/1920;})()"
            )
            assert covered > 0.9, f"the ticker is {1 - covered:.0%} empty"
            time.sleep(1.0)
