"""The public board's pages and the head referee's dispute list over HTTP (a real scoreboard
process): both languages from the one catalogue with nothing missing, no lots in public, rounds
NS before EW with names, an honest bye, the open disputes derived from the stored events with
links to the table kiosk's review page, and the kiosk-address setting's errors."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.events import FOUL_KINDS
from kiosk.review.log import DISPUTED_TYPES
from kiosk.scoreboard import disputes
from kiosk.scoreboard.formats import FORMATS
from kiosk.scoreboard.pages import CATALOGUE, Tr

from .board_fixture import NAMES, OPEN_T2, board_server, t2_events
from .helpers import Server

HERE = Path(disputes.__file__).parent


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, Any]]]:
    yield from board_server(tmp_path_factory.mktemp("board"))


# ---------------------------------------------------------------- disputes, pure
def test_open_disputes_follow_the_log() -> None:
    evs = t2_events()
    got = {e["id"]: disputes.summary(e)["kind"] for e in disputes.open_disputes(evs)}
    assert got == OPEN_T2
    # a referee's void of the notice answers it; the void itself is no question
    seq = len(evs) + 1
    evs.append(
        {
            "v": 1,
            "id": f"T2-{seq}",
            "table": "T2",
            "deal": 2,
            "seq": seq,
            "t": float(seq),
            "type": "correction",
            "replaces": "T2-20",
            "referee": "Li",
            "reason": "no tribute due (referee Li)",
        }
    )
    assert {e["id"] for e in disputes.open_disputes(evs)} == {"T2-13", "T2-19"}


def test_kiosk_url_setting() -> None:
    assert disputes.kiosk_url("T1", "") is None
    assert disputes.kiosk_url("A7", "http://kiosk-{table}:8080/") == "http://kiosk-A7:8080"
    both = "T1=http://10.0.0.11:8080, T2=https://t2.local"
    assert disputes.kiosk_url("T2", both) == "https://t2.local"
    assert disputes.kiosk_url("T3", both) is None
    for bad, says in (
        ("http://kiosk:8080", "names no table"),
        ("T1=ftp://x", "not an http(s) URL"),
        ("T1=http://x,T2", "is not TABLE=URL"),
        ("kiosk-{table}:8080", "not an http(s) URL"),
    ):
        with pytest.raises(disputes.KioskUrlError) as exc:
            disputes.kiosk_url("T1", bad)
        assert disputes.ENV in str(exc.value) and says in str(exc.value), str(exc.value)


# ---------------------------------------------------------------- the catalogue
def _families() -> dict[str, list[str]]:
    """Keys built from data (``t_("status." ~ m.status)``) and every value they can take."""
    return {
        "status.": ["pending", "playing", "finished", "decided"],
        "ruling.": [
            *("as_played", "forfeit_ew", "forfeit_ns", "void"),
            *("ew", "ns", "draw", "ew_no_show", "ns_no_show", "both_no_show"),
        ],
        "round.": ["open", "closed"],
        "clock.": ["idle", "running", "paused", "time"],
        "by.": ["as_played", "forfeit_ew", "forfeit_ns", "void"],
        "foul.": list(FOUL_KINDS),
        "dispute.kind.": ["review", *DISPUTED_TYPES],
        "seat.": list("NESW"),
        "team.": ["NS", "EW"],
        "result.": ["draw", "void", "none"],  # the rest have their own branch
        "bracket.stage.": ["round", "semi_final", "final", "third_place"],
        "place.": ["1", "2", "3", "4"],
        "format.": list(FORMATS),
    }


def test_catalogue_has_both_languages_for_every_key_the_pages_use() -> None:
    cat = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    used = set()
    for f in ("templates/board.html", "templates/_board_parts.html", "templates/board_list.html"):
        used |= set(re.findall(r't_\("([\w.]+)"', (HERE / f).read_text(encoding="utf-8")))
    used |= set(
        re.findall(r'tr\("([\w.]+)"', (HERE / "static/board.js").read_text(encoding="utf-8"))
    )
    families = _families()
    built = {k for k in used if k.endswith(".")}
    assert built <= set(families), f"keys built from data without a family here: {built}"
    used -= built
    for prefix, values in families.items():
        used |= {prefix + v for v in values}
    assert len(used) > 60
    missing = sorted(k for k in used if not (cat.get(k, {}).get("zh") and cat[k].get("en")))
    assert not missing, f"keys without both languages in {CATALOGUE}: {missing}"
    for key, texts in cat.items():  # the same placeholders in both languages
        zh, en = (set(re.findall(r"\{(\w+)\}", texts[x])) for x in ("zh", "en"))
        assert zh == en, key


def test_a_key_without_a_text_is_shown_as_the_key_and_listed() -> None:
    tr = Tr("en")
    assert tr("round.title", n=3) == "Round 3"
    assert tr("status.lost_in_space") == "status.lost_in_space"
    assert tr.missing == ["status.lost_in_space"]


# ---------------------------------------------------------------- the pages
def _text(page: str) -> str:
    page = re.sub(r"<script.*?</script>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_board_page_in_each_language(board: tuple[Server, dict[str, Any]], lang: str) -> None:
    srv, b = board
    with srv.client() as c:
        r = c.get(f"/scoreboard/{b['id']}", params={"lang": lang})
        standings = c.get(f"/api/v1/tournaments/{b['id']}/standings").json()["standings"]
    assert r.status_code == 200 and "data-i18n-missing" not in r.text
    assert f'data-lang="{lang}"' in r.text and r.cookies.get("gd-lang") == lang
    for s in standings:  # the lots stay on the admin page
        assert str(s["lot"]) not in r.text
    text = re.sub(r"\s+", " ", _text(r.text))
    # round 1: NS first, with names; the bye as a bye with its points
    row = re.search(r'<tr data-match="\d+"><td class="raw">T1</td>(.*?)</tr>', r.text, re.S)
    assert row, r.text
    cells = [_text(x).strip() for x in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))]
    assert cells[:2] == [f"2 {NAMES[1]}", f"1 {NAMES[0]}"], cells
    won = {"zh": f"{NAMES[1]} 胜", "en": f"{NAMES[1]} won"}[lang]
    assert cells[3] == won and cells[4] == "A : 5", cells
    bye = {
        "zh": f"{NAMES[4]} 轮空：记 2 分、级差 0（本轮无对手）",
        "en": f"{NAMES[4]}: bye, 2 points and level difference 0 (no opponent this round)",
    }[lang]
    assert bye in text
    # the open disputes of T2, each linked to the kiosk's review page of its deal
    assert r.text.count('href="http://10.0.0.12:8080/review?deal=2"') == len(OPEN_T2)
    words = {"zh": ("摄像识别的犯规", "暴露张", "裁判提示"), "en": ("camera foul", "exposed card")}
    for w in words[lang]:
        assert w in text
    with srv.client() as c:
        parts = c.get(f"/scoreboard/{b['id']}/parts", params={"lang": lang}).json()
    assert parts["missing"] == []
    assert set(parts["parts"]) == {"standings", "tables", "disputes", "rounds", "clocks"}
    assert NAMES[4] in parts["parts"]["rounds"] and "10.0.0.12" in parts["parts"]["disputes"]


def test_board_language_default_and_cookie(board: tuple[Server, dict[str, Any]]) -> None:
    srv, b = board
    with srv.client() as c:
        assert 'data-lang="zh"' in c.get(f"/scoreboard/{b['id']}").text  # Chinese by default
        c.cookies.set("gd-lang", "en")
        assert 'data-lang="en"' in c.get(f"/scoreboard/{b['id']}").text
        r = c.get("/scoreboard/999")
        assert r.status_code == 404 and "999" in r.text
        assert c.get("/scoreboard/999/parts").status_code == 404


def test_disputes_api(board: tuple[Server, dict[str, Any]]) -> None:
    srv, b = board
    with srv.client() as c:
        r = c.get(f"/api/v1/tournaments/{b['id']}/disputes")
        assert r.status_code == 200, r.text
        tables = {x["code"]: x for x in r.json()["tables"]}
        r404 = c.get("/api/v1/tournaments/999/disputes")
    assert r404.status_code == 404 and "999" in r404.json()["detail"]
    assert tables["T1"]["disputes"] == [] and tables["T1"]["kiosk"] == "http://10.0.0.11:8080"
    t2 = tables["T2"]
    assert t2["kiosk"] == "http://10.0.0.12:8080" and t2["error"] is None
    assert {d["id"]: d["kind"] for d in t2["disputes"]} == OPEN_T2
    for d in t2["disputes"]:
        assert d["review"] == "http://10.0.0.12:8080/review?deal=2" and d["deal"] == 2
    foul = t2["disputes"][0]
    assert (foul["seat"], foul["foul"], foul["type"]) == ("E", "exposed_card", "foul")


def test_tournament_list_in_each_language(board: tuple[Server, dict[str, Any]]) -> None:
    srv, b = board
    with srv.client() as c:
        r = c.get("/scoreboard", params={"lang": "en"}, follow_redirects=False)
        if r.status_code == 307:  # one tournament: straight to it, in the language asked
            assert r.headers["location"] == f"/scoreboard/{b['id']}?lang=en"
            made = c.post("/api/v1/tournaments", json={"name": "夏季杯", "profile": "swiss-421"})
            assert made.status_code == 201, made.text
        for lang, title in (("zh", "<h1>比赛</h1>"), ("en", "<h1>Tournaments</h1>")):
            r = c.get("/scoreboard", params={"lang": lang})
            assert r.status_code == 200 and title in r.text, r.text
            assert "data-i18n-missing" not in r.text and "春季杯 Spring Cup" in r.text
            assert f'href="/scoreboard/{b["id"]}?lang={lang}"' in r.text
