"""The scoreboard's public standings page and its admin page in headless Chromium (Debian's
``chromium``): the DOM holds the teams and their numbers (as the standings API gives them), the
screenshots are not blank, the admin page asks for the key. Skipped when chromium is missing."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers_browser import chromium, needs_chromium, screenshot

from .helpers import Server, match_events

pytestmark = needs_chromium

KEY = "brow5er-key"
NAMES = ["Team Wang 王队", "Team Zhao 赵队", "Team Chen 陈队", "Team Wu 吴队", "Team Feng 冯队"]
COLUMNS = (
    "rank",
    "pair",
    "name",
    "played",
    "wins",
    "draws",
    "losses",
    "points",
    "level_diff",
    "opponents_points",
    "fouls",
    "lot",
)


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, Any]]]:
    """Five pairs, round 1 on two tables and a bye: T1 NS wins A:5; at T2 NS reaches 9 but
    commits three fouls, so EW takes the round 10:-10 (swiss-421 ``[fouls]``)."""
    d = tmp_path_factory.mktemp("sbbrowser")
    srv = Server(str(d / "sb.db"), admin_key=KEY, log=d / "server.log").start()
    try:
        with srv.client(KEY) as c:
            r = c.post(
                "/api/v1/tournaments",
                json={"name": "春季杯 Spring Cup", "profile": "swiss-421", "lots_seed": 5},
            )
            assert r.status_code == 201, r.text
            tid = r.json()["id"]
            for name in NAMES:
                assert c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": name}).is_success
            tokens = {}
            for table in ("T1", "T2"):
                r = c.post(f"/api/v1/tournaments/{tid}/tables", json={"id": table})
                assert r.status_code == 201, r.text
                tokens[table] = r.json()["token"]
            pairings = [
                {"table": "T1", "ew": 1, "ns": 2},
                {"table": "T2", "ew": 3, "ns": 4},
                {"table": None, "ew": 5, "ns": None},
            ]
            r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={"pairings": pairings})
            assert r.status_code == 201, r.text
        plays = {
            "T1": match_events("T1", "NS", {"NS": "A", "EW": "5"}),
            "T2": match_events("T2", "NS", {"NS": "9", "EW": "2"}, fouls=["N", "S", "N"]),
        }
        for table, evs in plays.items():
            with srv.client(tokens[table]) as c:
                assert c.post("/api/v1/events/batch", json=evs).status_code == 200
        with srv.client(KEY) as c:
            standings = c.get(f"/api/v1/tournaments/{tid}/standings").json()["standings"]
        yield srv, {"id": tid, "standings": standings}
    finally:
        srv.stop()


def _standings_rows(dom: str) -> list[list[str]]:
    """The cells of the rendered standings table (tags stripped, entities decoded)."""
    found = re.search(r'<table class="standings" id="standings">(.*?)</table>', dom, re.S)
    assert found, "no standings table in the page"
    body = found.group(1).split("<tbody>", 1)[1]
    return [
        [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td>(.*?)</td>", r)]
        for r in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def _expected_rows(standings: list[dict[str, Any]]) -> list[list[str]]:
    return [[str(s[c]) for c in COLUMNS] for s in standings]


def test_standings_follow_the_events_and_the_profile(board: tuple[Server, dict[str, Any]]) -> None:
    _srv, b = board
    got = {s["pair"]: (s["points"], s["level_diff"], s["fouls"]) for s in b["standings"]}
    assert got == {
        1: (0, -9, 0),
        2: (2, 9, 0),
        3: (2, 10, 0),
        4: (0, -10, 3),
        5: (2, 0, 0),
    }
    assert [s["pair"] for s in b["standings"]] == [3, 2, 5, 1, 4]


def _board_rows(dom: str) -> list[list[str]]:
    """The cells of the public page's standings (cells carry classes there)."""
    found = re.search(r'<table class="standings" id="standings">(.*?)</table>', dom, re.S)
    assert found, "no standings table in the page"
    body = found.group(1).split("<tbody>", 1)[1]
    return [
        [
            html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", r)
        ]
        for r in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    ]


def test_public_standings_page_dom(board: tuple[Server, dict[str, Any]]) -> None:
    """The public page (Chinese by default): the standings without the lots, a bye counted
    as a bye (not as a game won), the tables' levels."""
    srv, b = board
    dom = chromium(f"{srv.url}/scoreboard/{b['id']}?lang=en", "--dump-dom")
    assert "春季杯 Spring Cup" in dom and "swiss-421" in dom
    byes = {5: 1}
    want = [
        [str(x) for x in (s["rank"], s["pair"], s["name"], s["played"])]
        + [str(s["wins"] - byes.get(s["pair"], 0)), str(s["draws"]), str(s["losses"])]
        + [str(byes.get(s["pair"], 0))]
        + [str(s[c]) for c in ("points", "level_diff", "opponents_points", "fouls")]
        for s in b["standings"]
    ]
    assert _board_rows(dom) == want
    assert not any(str(s["lot"]) in dom for s in b["standings"])  # the lots are not public
    for name in NAMES:
        assert name in dom
    for table, (ns, ew) in (("T1", ("A", "5")), ("T2", ("9", "2"))):
        card = dom.split(f'id="table-{table}"', 1)[1].split("</section>", 1)[0]
        assert f"NS <b>{ns}</b> · EW <b>{ew}</b>" in card, card
    t2 = dom.split('id="table-T2"', 1)[1].split("</section>", 1)[0]
    assert "fouls 3" in t2


def test_public_standings_page_screenshot_is_not_blank(
    board: tuple[Server, dict[str, Any]], tmp_path: Path
) -> None:
    srv, b = board
    img = screenshot(f"{srv.url}/scoreboard/{b['id']}", tmp_path / "board.png", "1280,900")
    assert img.shape[0] == 900 and img.shape[1] == 1280
    rgb = img[:, :, :3].reshape(-1, 3)
    assert rgb.std() > 20 and len(np.unique(rgb // 8, axis=0)) > 20
    dark = np.all(img[:, :, :3] < 100, axis=2).mean()
    assert 0.005 < dark < 0.6  # text is drawn, and the page is not one dark block


def test_admin_page_needs_the_key(board: tuple[Server, dict[str, Any]]) -> None:
    srv, b = board
    with srv.client() as c:
        r = c.get(f"/admin/{b['id']}")
    assert r.status_code == 401 and "Basic" in r.headers["www-authenticate"]
    # Chromium waits at its login prompt: nothing of the tournament is shown.
    dom = chromium(f"{srv.url}/admin/{b['id']}", "--dump-dom")
    assert "Team Wang" not in dom and "Spring Cup" not in dom


def test_admin_page_dom_and_screenshot(
    board: tuple[Server, dict[str, Any]], tmp_path: Path
) -> None:
    srv, b = board
    url = srv.url.replace("http://", f"http://admin:{KEY}@") + f"/admin/{b['id']}"
    dom = chromium(url, "--dump-dom")
    assert "春季杯 Spring Cup" in dom and "lots seed 5" in dom
    assert _standings_rows(dom) == _expected_rows(b["standings"])
    for number, name in enumerate(NAMES, start=1):
        assert f"<td>{number}</td><td>{name}</td>" in dom
    # the round: T2's fouls 0/3 and the override forms for both played matches
    assert "<td>0/3</td>" in dom and dom.count('name="result"') == 2
    img = screenshot(url, tmp_path / "admin.png", "1280,1600")
    assert img.shape[0] == 1600 and img.shape[1] == 1280
    rgb = img[:, :, :3].reshape(-1, 3)
    assert rgb.std() > 20 and len(np.unique(rgb // 8, axis=0)) > 20
    dark = np.all(img[:, :, :3] < 100, axis=2).mean()
    assert 0.005 < dark < 0.6
