"""The public board in Chromium (over DevTools, tests/kiosk/helpers_layout.py) at a hall screen
(1920x1080) and a phone (390x844), in Chinese and English: nothing cut off or overlapping
(element boxes), no text outside the catalogue's language, and every section live: events
posted to a table change the table card, the standings, the rounds and the dispute list without
a reload."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers_browser import needs_chromium
from tests.kiosk.helpers_layout import Browser

from .board_fixture import NAMES, board_server
from .helpers import Server, ev

pytestmark = needs_chromium

SIZES = [(1920, 1080), (1280, 800), (390, 844)]  # a hall screen, a tablet, a phone
DATA = [*NAMES, "春季杯 Spring Cup", "swiss-421"]
#: the page's text without the data (names) and without elements marked raw (file names, the
#: other language's name on the switch, the setting's name)
TEXT_JS = (
    "(function(){var c=document.body.cloneNode(true);"
    "c.querySelectorAll('.raw,script').forEach(function(e){e.remove();});"
    "document.body.appendChild(c);c.style.position='absolute';"
    "var t=c.innerText;c.remove();return t;})()"
)


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, Any]]]:
    yield from board_server(tmp_path_factory.mktemp("boardbrowser"))


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        yield b


def _inside(box: dict[str, Any], width: int, what: str) -> None:
    assert box["x"] >= -0.5 and box["x"] + box["w"] <= width + 0.5, f"{what} cut off: {box}"


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (
        a["x"] < b["x"] + b["w"] - 1
        and b["x"] < a["x"] + a["w"] - 1
        and a["y"] < b["y"] + b["h"] - 1
        and b["y"] < a["y"] + a["h"] - 1
    )


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_board_fits_and_speaks_one_language(
    board: tuple[Server, dict[str, Any]],
    browser: Browser,
    tmp_path: Path,
    width: int,
    height: int,
    lang: str,
) -> None:
    srv, b = board
    browser.open(f"{srv.url}/scoreboard/{b['id']}?lang={lang}", width, height, settle=1.5)
    browser.screenshot(tmp_path / f"board-{width}-{lang}.png")
    assert browser.js("document.documentElement.getAttribute('data-i18n-missing')") is None
    assert browser.js("document.getElementById('live').dataset.state") == "board.live"
    assert browser.js("document.documentElement.scrollWidth") <= width, "the page scrolls sideways"
    sel = [
        "#standings",
        "#standings th",
        "#standings td",
        ".tablecard",
        ".disputecard",
        ".dispute a.review",
        "table.rounds",
        "h1",
        "header",
    ]
    boxes = browser.boxes(sel)
    for s in sel:
        assert boxes[s], f"nothing shown for {s}"
        for box in boxes[s]:
            _inside(box, width, s)
    cards = boxes[".tablecard"] + boxes[".disputecard"]
    for i, x in enumerate(cards):
        for y in cards[i + 1 :]:
            assert not _overlap(x, y), (x, y)
    names = [c for c in boxes["#standings td"] if c["text"].strip() in NAMES]
    assert len(names) == len(NAMES)
    for c in names:  # a name on at most two lines, never one character per line
        assert c["lines"] <= 2 and c["sw"] <= c["cw"] + 1, c
    standings = boxes["#standings"][0]
    if width >= 1600:
        # a hall screen: the standings whole on the first screen, tables beside them
        assert standings["y"] + standings["h"] <= height
        assert min(c["x"] for c in boxes[".tablecard"]) >= standings["x"] + standings["w"]
        assert len(boxes["#standings th"]) == 12
    elif width > 600:
        # a tablet or a laptop: every column, none under the table cards (at 1280 wide the
        # English standings once ran under them, their last column hidden)
        assert len(boxes["#standings th"]) == 12
        for card in boxes[".tablecard"] + boxes[".disputecard"]:
            assert not _overlap(standings, card), (standings, card)
    else:
        # a phone: the main columns (rank, name, won, lost, points, level difference)
        assert len(boxes["#standings th"]) == 6
    text = browser.js(TEXT_JS)
    for d in DATA:
        text = text.replace(d, " ")
    assert {"zh": "待裁决争议", "en": "Open disputes"}[lang] in text  # the text was read
    if lang == "en":
        assert not re.findall(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]+", text), text
    else:
        assert not re.findall(r"[A-Za-z]{2,}", text), text


def _wait(browser: Browser, expr: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = browser.js(expr)
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"not true within {timeout} s: {expr}")


def test_board_is_live(board: tuple[Server, dict[str, Any]], browser: Browser) -> None:
    """T2 ends its match and the referee voids the notice: the page changes without a reload."""
    srv, b = board
    browser.open(f"{srv.url}/scoreboard/{b['id']}?lang=en", 1920, 1080, settle=1.5)
    browser.js("window.__notReloaded = true")
    assert browser.js("document.querySelectorAll('.dispute').length") == 3
    row = "document.querySelector('#rounds tr[data-match]:nth-child(2) .result').textContent"
    assert browser.js(row).strip() == "—"
    # the referee voids the notice (a correction drops the events from its target on, so it
    # comes before the play goes on), then the deal and the match end
    evs = [ev("T2", 21, "correction", 2, replaces="T2-20", referee="Li", reason="no tribute due")]
    for place, seat in enumerate(["S", "N", "E", "W"], start=1):
        evs.append(ev("T2", 21 + place, "seat_out", 2, seat=seat, place=place))
    order, levels = ["S", "N", "E", "W"], {"NS": "6", "EW": "2"}
    evs.append(ev("T2", 26, "deal_ended", 2, order=order, levels=levels))
    evs.append(ev("T2", 27, "match_ended", 2, winner="NS"))
    with srv.client(b["tokens"]["T2"]) as c:
        r = c.post("/api/v1/events/batch", json=evs)
        assert r.status_code == 200, r.text
    _wait(browser, f"{row}.indexOf('{NAMES[3]} won') >= 0")
    _wait(browser, "document.querySelectorAll('.dispute').length === 2")
    card = browser.js("document.getElementById('table-T2').innerText")
    assert f"Winner: {NAMES[3]}" in card and "NS 6 · EW 2" in card, card
    _wait(
        browser,
        "[].some.call(document.querySelectorAll('#standings tr[data-pair=\"4\"] td.pts'),"
        "function(td){return td.textContent.trim() === '2';})",
    )
    assert browser.js("window.__notReloaded") is True


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_knockout_bracket_fits_and_speaks_one_language(
    board: tuple[Server, dict[str, Any]],
    browser: Browser,
    tmp_path: Path,
    width: int,
    height: int,
    lang: str,
) -> None:
    """A knockout's bracket (对阵图): the page never scrolls sideways (the bracket scrolls in
    its own box), the meetings of a round do not overlap, text from the catalogue only."""
    srv, _b = board
    names = [f"Ko{i}" for i in range(1, 7)]
    with srv.client() as c:
        tid = next(
            (t["id"] for t in c.get("/api/v1/tournaments").json() if t["name"] == "淘汰杯"), None
        )
        if tid is None:
            r = c.post("/api/v1/tournaments", json={"name": "淘汰杯", "format": "knockout"})
            tid = r.json()["id"]
            for code in ("K1", "K2"):
                c.post(f"/api/v1/tournaments/{tid}/tables", json={"id": code})
            for n in names:
                c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": n})
            r1 = c.post(f"/api/v1/tournaments/{tid}/rounds", json={}).json()["matches"]
            for m in r1:
                if m["ns"] is not None:
                    c.post(f"/api/v1/matches/{m['id']}/override", json={"result": "ew"})
            c.post(f"/api/v1/tournaments/{tid}/rounds/1/close", json={})
            assert c.post(f"/api/v1/tournaments/{tid}/rounds", json={}).status_code == 201
    browser.open(f"{srv.url}/scoreboard/{tid}?lang={lang}", width, height, settle=1.5)
    browser.screenshot(tmp_path / f"bracket-{width}-{lang}.png")
    assert browser.js("document.documentElement.getAttribute('data-i18n-missing')") is None
    assert browser.js("document.documentElement.scrollWidth") <= width, "the page scrolls sideways"
    boxes = browser.boxes([".bracket", ".bround", ".bmatch"])
    assert len(boxes[".bround"]) == 2 and len(boxes[".bmatch"]) == 6
    _inside(boxes[".bracket"][0], width, ".bracket")
    matches = boxes[".bmatch"]
    for i, x in enumerate(matches):
        for y in matches[i + 1 :]:
            assert not _overlap(x, y), (x, y)
    text = browser.js(TEXT_JS)
    for d in [*names, "淘汰杯", "swiss-421"]:
        text = text.replace(d, " ")
    assert {"zh": "对阵图", "en": "Bracket"}[lang] in text
    if lang == "en":
        assert not re.findall(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]+", text), text
    else:
        assert not re.findall(r"[A-Za-z]{2,}", text), text


GROUP_NAMES = [f"Gr{i}" for i in range(1, 9)]


def _stage_tournament(srv: Server) -> int:
    """A group stage (2 groups of 4, the top 2 through) played to the knockout's first round,
    made once per module."""
    with srv.client() as c:
        tid = next(
            (t["id"] for t in c.get("/api/v1/tournaments").json() if t["name"] == "小组杯"), None
        )
        if tid is not None:
            return int(tid)
        r = c.post("/api/v1/tournaments", json={"name": "小组杯", "format": "groups_knockout"})
        tid = r.json()["id"]
        for code in ("G1", "G2", "G3", "G4"):
            c.post(f"/api/v1/tournaments/{tid}/tables", json={"id": code})
        for n in GROUP_NAMES:
            c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": n})
        for n in (1, 2, 3):
            ms = c.post(f"/api/v1/tournaments/{tid}/rounds", json={}).json()["matches"]
            for m in ms:
                if m["ns"] is not None:
                    res = "ew" if m["ew"] < m["ns"] else "ns"
                    c.post(f"/api/v1/matches/{m['id']}/override", json={"result": res})
            c.post(f"/api/v1/tournaments/{tid}/rounds/{n}/close", json={})
        assert c.post(f"/api/v1/tournaments/{tid}/rounds", json={}).status_code == 201
    return int(tid)


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_group_stage_fits_and_speaks_one_language(
    board: tuple[Server, dict[str, Any]],
    browser: Browser,
    tmp_path: Path,
    width: int,
    height: int,
    lang: str,
) -> None:
    """Group stage then knockout (000 篇11): a table per group (side by side on a hall screen,
    one under the other on a phone) and the knockout's bracket; nothing cut off or
    overlapping, no sideways scroll, text from the catalogue only."""
    srv, _b = board
    tid = _stage_tournament(srv)
    browser.open(f"{srv.url}/scoreboard/{tid}?lang={lang}", width, height, settle=1.5)
    browser.screenshot(tmp_path / f"groups-{width}-{lang}.png")
    assert browser.js("document.documentElement.getAttribute('data-i18n-missing')") is None
    assert browser.js("document.documentElement.scrollWidth") <= width, "the page scrolls sideways"
    sel = [".groups", ".group", ".gtable", ".gtable td", ".gtable th", ".bracket", ".bmatch"]
    boxes = browser.boxes(sel)
    for s in sel:
        assert boxes[s], f"nothing shown for {s}"
    for s in (".groups", ".group", ".gtable td", ".gtable th"):
        for box in boxes[s]:
            _inside(box, width, s)
    groups = boxes[".group"]
    assert len(groups) == 2 and not _overlap(groups[0], groups[1])
    tables = boxes[".gtable"]
    assert len(tables) == 2 and not _overlap(tables[0], tables[1]), tables
    for g, tb in zip(groups, tables, strict=True):  # each group's table inside its box
        assert tb["x"] >= g["x"] - 0.5 and tb["x"] + tb["w"] <= g["x"] + g["w"] + 0.5, (g, tb)
    if width >= 1600:  # side by side on a hall screen
        assert abs(groups[0]["y"] - groups[1]["y"]) < 2
    names = [c for c in boxes[".gtable td"] if c["text"].strip().split(" ")[0] in GROUP_NAMES]
    assert len(names) == 8
    for c in names:
        assert c["lines"] <= 2 and c["sw"] <= c["cw"] + 1, c
    assert len(boxes[".bmatch"]) == 2
    text = browser.js(TEXT_JS)
    for d in [*GROUP_NAMES, "小组杯", "swiss-421"]:
        text = text.replace(d, " ")
    assert {"zh": "已进淘汰赛", "en": "in the knockout"}[lang] in text
    if lang == "en":
        assert not re.findall(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]+", text), text
    else:
        assert not re.findall(r"[A-Za-z]{2,}", text), text


REP_NAMES = [f"Rp{i}" for i in range(1, 7)]


def _repechage_tournament(srv: Server) -> int:
    """A knockout with repechage (002 第三篇) of six pairs, made up to its repechage."""
    with srv.client() as c:
        tid = next(
            (t["id"] for t in c.get("/api/v1/tournaments").json() if t["name"] == "附加赛杯"),
            None,
        )
        if tid is not None:
            return int(tid)
        r = c.post("/api/v1/tournaments", json={"name": "附加赛杯", "format": "knockout_repechage"})
        tid = r.json()["id"]
        for code in ("R1", "R2", "R3"):
            c.post(f"/api/v1/tournaments/{tid}/tables", json={"id": code})
        for n in REP_NAMES:
            c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": n})
        for n in (1, 2):
            ms = c.post(f"/api/v1/tournaments/{tid}/rounds", json={}).json()["matches"]
            for m in ms:
                c.post(f"/api/v1/matches/{m['id']}/override", json={"result": "ew"})
            c.post(f"/api/v1/tournaments/{tid}/rounds/{n}/close", json={})
        assert c.post(f"/api/v1/tournaments/{tid}/rounds", json={}).status_code == 201
    return int(tid)


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_repechage_bracket_fits_and_speaks_one_language(
    board: tuple[Server, dict[str, Any]],
    browser: Browser,
    tmp_path: Path,
    width: int,
    height: int,
    lang: str,
) -> None:
    """The repechage's round (附加赛) and the pair that sat a round out into it, in the
    bracket: no sideways scroll, meetings not overlapping, catalogue text only."""
    srv, _b = board
    tid = _repechage_tournament(srv)
    browser.open(f"{srv.url}/scoreboard/{tid}?lang={lang}", width, height, settle=1.5)
    browser.screenshot(tmp_path / f"repechage-{width}-{lang}.png")
    assert browser.js("document.documentElement.getAttribute('data-i18n-missing')") is None
    assert browser.js("document.documentElement.scrollWidth") <= width, "the page scrolls sideways"
    boxes = browser.boxes([".bracket", ".bround", ".bmatch", ".bmatch.stage-repechage"])
    assert len(boxes[".bround"]) == 3 and len(boxes[".bmatch"]) == 3 + 2 + 1
    assert len(boxes[".bmatch.stage-repechage"]) == 1
    _inside(boxes[".bracket"][0], width, ".bracket")
    matches = boxes[".bmatch"]
    for i, x in enumerate(matches):
        for y in matches[i + 1 :]:
            assert not _overlap(x, y), (x, y)
    text = browser.js(TEXT_JS)
    for d in [*REP_NAMES, "附加赛杯", "swiss-421"]:
        text = text.replace(d, " ")
    assert {"zh": "本轮轮空，进入附加赛", "en": "into the repechage"}[lang] in text
    if lang == "en":
        assert not re.findall(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]+", text), text
    else:
        assert not re.findall(r"[A-Za-z]{2,}", text), text
