"""Event formats (issue 42): round robin with big/small points (000 篇2) and single elimination
with byes, a match for 3rd place and a bracket view (002 第三篇). The schedules on their own; the
API, the admin page and the public board against a real scoreboard process on SQLite and
PostgreSQL, with matches played by posted events or decided by rulings."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from kiosk.scoreboard.db import make_engine
from kiosk.scoreboard.formats import (
    FormatError,
    KoMatch,
    bracket_state,
    first_knockout_round,
    next_knockout_round,
    round_robin_schedule,
)
from kiosk.scoreboard.settings import normalise_db_url
from kiosk.scoreboard.standings import Pairing

from .helpers import REPO, Server, deal_events, ev, match_events, new_tournament

# ----------------------------------------------------------------------------- pure


def test_round_robin_schedule_every_pair_meets_every_other_once() -> None:
    rounds = round_robin_schedule([6, 5, 4, 3, 2, 1])
    assert len(rounds) == 5  # 000 篇2: 五轮大循环 (six pairs)
    met = Counter(frozenset((p.ew, p.ns)) for r in rounds for p in r)
    assert len(met) == 15 and set(met.values()) == {1}
    for r in rounds:
        assert sorted(n for p in r for n in (p.ew, p.ns)) == [1, 2, 3, 4, 5, 6]
    ew = Counter(p.ew for r in rounds for p in r)
    assert max(ew.values()) <= 4, ew  # seats change: no pair sits East-West throughout
    odd = round_robin_schedule([1, 2, 3, 4, 5])
    assert len(odd) == 5
    byes = [p.ew for r in odd for p in r if p.ns is None]
    assert sorted(byes) == [1, 2, 3, 4, 5]  # each pair has one bye
    assert all(r[-1].ns is None for r in odd)  # the bye listed last
    with pytest.raises(FormatError, match="at least two pairs"):
        round_robin_schedule([1])


def test_knockout_first_round_byes() -> None:
    assert first_knockout_round([1, 2, 3, 4]) == [Pairing(1, 2), Pairing(3, 4)]
    six = first_knockout_round([6, 5, 4, 3, 2, 1])
    assert six == [Pairing(1, None), Pairing(2, 3), Pairing(4, None), Pairing(5, 6)]
    assert first_knockout_round([1, 2, 3]) == [Pairing(1, None), Pairing(2, 3)]
    seven = first_knockout_round(range(1, 8))
    assert [p.ns is None for p in seven] == [True, False, False, False]
    with pytest.raises(FormatError, match="at least two pairs"):
        first_knockout_round([1])


def _play(plan: list[Pairing], rnd: int) -> list[KoMatch]:
    """The lower number wins every match."""
    out = []
    for i, p in enumerate(plan):
        result = None if p.ns is None else ("EW" if p.ew < p.ns else "NS")
        out.append(KoMatch(match=rnd * 10 + i, table=f"T{i}", ew=p.ew, ns=p.ns, result=result))
    return out


def test_knockout_rounds_to_the_final_and_third_place() -> None:
    rounds = [_play(first_knockout_round(range(1, 7)), 1)]
    assert next_knockout_round(rounds) == [Pairing(1, 2), Pairing(4, 5)]
    rounds.append(_play(next_knockout_round(rounds), 2))
    # after two semi-finals: the final (winners) and the match for 3rd place (losers)
    assert next_knockout_round(rounds) == [Pairing(1, 4), Pairing(2, 5)]
    rounds.append(_play(next_knockout_round(rounds), 3))
    b = bracket_state(rounds)
    assert b.done and b.places == {1: 1, 4: 2, 2: 3, 5: 4} and b.final_round == 3
    assert b.out_in[3] == 1 and b.out_in[6] == 1
    with pytest.raises(FormatError, match="pair 1 won the final"):
        next_knockout_round(rounds)
    # undecided and drawn matches stop the next round, naming the match
    r1 = _play(first_knockout_round(range(1, 5)), 1)
    undecided = [r1[0], KoMatch(12, "T9", 3, 4, None, round=1)]
    with pytest.raises(FormatError, match=r"match 12 \(round 1, table T9, pairs 3 v 4\) has no"):
        next_knockout_round([undecided])
    with pytest.raises(FormatError, match="needs a winner"):
        next_knockout_round([[r1[0], KoMatch(12, "T9", 3, 4, "draw", round=1)]])
    # a two-pair knockout is one final
    two = [_play(first_knockout_round([1, 2]), 1)]
    assert bracket_state(two).places == {1: 1, 2: 2}


def _game(m: int, rnd: int, ew: int, ns: int, won: int) -> KoMatch:
    return KoMatch(m, "T", ew, ns, "EW" if won == ew else "NS", round=rnd)


def test_best_of_3() -> None:
    """004 篇一/篇七 三局兩勝: a meeting goes on until a pair has two wins."""
    r1 = [_game(1, 1, 1, 2, 1), _game(2, 1, 3, 4, 3)]
    assert next_knockout_round([r1], 3) == [Pairing(1, 2), Pairing(3, 4)]  # 1:0, 1:0
    r2 = [_game(3, 2, 1, 2, 2), _game(4, 2, 3, 4, 3)]  # 1:1, 3 through 2:0
    assert next_knockout_round([r1, r2], 3) == [Pairing(1, 2)]
    r3 = [_game(5, 3, 1, 2, 1)]  # 1 through 2:1
    rounds = [r1, r2, r3]
    assert next_knockout_round(rounds, 3) == [Pairing(1, 3), Pairing(2, 4)]
    b = bracket_state(rounds, 3)
    assert len(b.ties) == 1 and [t.wins() for t in b.ties[0]] == [{1: 2, 2: 1}, {3: 2, 4: 0}]
    r4 = [_game(6, 4, 1, 3, 3), _game(7, 4, 2, 4, 4)]
    r5 = [_game(8, 5, 1, 3, 3), _game(9, 5, 2, 4, 4)]
    b = bracket_state([*rounds, r4, r5], 3)
    assert b.done and b.places == {3: 1, 1: 2, 4: 3, 2: 4} and b.final_round == 2
    # a game without a result stops the next round, naming it
    with pytest.raises(FormatError, match=r"match 9 \(round 5, table T, pairs 2 v 4\)"):
        next_knockout_round([*rounds, r4, [r5[0], KoMatch(9, "T", 2, 4, None, round=5)]], 3)
    # with one game a meeting it would have been over after round 1
    assert next_knockout_round([r1], 1) == [Pairing(1, 3), Pairing(2, 4)]


def test_best_of_3_from_the_semi_finals() -> None:
    """002 第三篇: one game a meeting, 三局二勝 from the semi-finals on (and the final)."""
    r1 = [_game(i + 1, 1, 2 * i + 1, 2 * i + 2, 2 * i + 1) for i in range(4)]  # 1, 3, 5, 7
    semis = next_knockout_round([r1], (1, 3))
    assert semis == [Pairing(1, 3), Pairing(5, 7)]  # round 1 was one game each
    r2 = [_game(11, 2, 1, 3, 1), _game(12, 2, 5, 7, 5)]
    assert next_knockout_round([r1, r2], (1, 3)) == semis  # 1:0 in a best of 3: game 2
    r3 = [_game(13, 3, 1, 3, 1), _game(14, 3, 5, 7, 7)]  # 1 through; 5 v 7 at 1:1
    assert next_knockout_round([r1, r2, r3], (1, 3)) == [Pairing(5, 7)]
    r4 = [_game(15, 4, 5, 7, 5)]
    b = bracket_state([r1, r2, r3, r4], (1, 3))
    assert [[t.best_of for t in ties] for ties in b.ties] == [[1, 1, 1, 1], [3, 3]]
    assert next_knockout_round([r1, r2, r3, r4], (1, 3)) == [Pairing(1, 5), Pairing(3, 7)]


# ----------------------------------------------------------------------------- helpers


def _post_tournament(c: httpx.Client, fmt: str, tables: int, pairs: int) -> dict[str, Any]:
    r = c.post(
        "/api/v1/tournaments",
        json={"name": f"{fmt} 杯", "profile": "swiss-421", "lots_seed": 7, "format": fmt},
    )
    assert r.status_code == 201, r.text
    assert r.json()["format"] == fmt
    tid = r.json()["id"]
    tokens: dict[str, str] = {}
    for i in range(1, tables + 1):
        r = c.post(f"/api/v1/tournaments/{tid}/tables", json={"id": f"{fmt[:2]}{tid}T{i}"})
        assert r.status_code == 201, r.text
        tokens[r.json()["id"]] = r.json()["token"]
    for i in range(1, pairs + 1):
        r = c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": f"对{i} Pair {i}"})
        assert r.status_code == 201, r.text
    return {"id": tid, "tokens": tokens}


def _play_by_events(
    c: httpx.Client,
    t: dict[str, Any],
    m: dict[str, Any],
    winner_pair: int,
    level: str,
    seqs: dict[str, int],
) -> None:
    """Play match ``m`` at its table by posted events: ``winner_pair`` wins at ``level`` to 2."""
    table = m["table"]
    team = "EW" if m["ew"] == winner_pair else "NS"
    final = {team: level, ("NS" if team == "EW" else "EW"): "2"}
    evs = match_events(table, team, final)
    off = seqs.get(table, 0)
    for e in evs:
        e["seq"] += off
        e["id"] = f"{table}-{e['seq']}"
        e["match_id"] = m["id"]
    seqs[table] = off + len(evs)
    r = c.post(
        "/api/v1/events/batch",
        json=evs,
        headers={"Authorization": f"Bearer {t['tokens'][table]}"},
    )
    assert r.status_code == 200, r.text


# ----------------------------------------------------------------------------- round robin

#: who wins each meeting and at which level (the loser ends at 2): 1 beats everyone by one
#: level; 2 > 3 > 4 > 2 in a cycle, so 2, 3 and 4 tie on big points and the small points
#: (级差) decide: 2: +12-1-1 = 10, 4: +1-3-1 = -3, 3: +3-12-1 = -10.
RR_RESULTS = {
    frozenset((1, 2)): (1, "3"),
    frozenset((1, 3)): (1, "3"),
    frozenset((1, 4)): (1, "3"),
    frozenset((2, 3)): (2, "A"),
    frozenset((3, 4)): (3, "5"),
    frozenset((2, 4)): (4, "3"),
}


def test_round_robin_from_the_api(server: Server) -> None:
    with server.client() as c:
        t = _post_tournament(c, "round_robin", tables=2, pairs=4)
        tid = t["id"]
        seqs: dict[str, int] = {}
        met: list[frozenset[int]] = []
        for n in (1, 2, 3):
            r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
            assert r.status_code == 201, r.text
            rnd = r.json()
            assert rnd["number"] == n and len(rnd["matches"]) == 2
            if n == 1:
                # a pair added after round 1 has no place in the schedule
                r = c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": "late 迟到"})
                late = r.json()["number"]
            for m in rnd["matches"]:
                key = frozenset((m["ew"], m["ns"]))
                met.append(key)
                winner, level = RR_RESULTS[key]
                _play_by_events(c, t, m, winner, level, seqs)
            r = c.post(f"/api/v1/tournaments/{tid}/rounds/{n}/close", json={})
            assert r.status_code == 200, r.text
            if n == 1:
                r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
                assert r.status_code == 422, r.text
                detail = r.json()["detail"]
                assert f"pair(s) {late} joined after round 1" in detail and "withdraw" in detail
                r = c.patch(f"/api/v1/tournaments/{tid}/pairs/{late}", json={"withdrawn": True})
                assert r.status_code == 200, r.text
        assert sorted(map(sorted, met)) == sorted(map(sorted, RR_RESULTS))  # each met once
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 409 and "all 3 rounds of the round robin" in r.json()["detail"]
        st = c.get(f"/api/v1/tournaments/{tid}/standings").json()
        assert st["format"] == "round_robin"
        rows = [x for x in st["standings"] if x["pair"] != late]
        assert [x["pair"] for x in rows] == [1, 2, 4, 3]
        assert [x["points"] for x in rows] == [6, 2, 2, 2]  # 大分 (swiss-421: win 2)
        assert [x["level_diff"] for x in rows] == [3, 10, -3, -10]  # 小分 (级差)
        for lang, words in (("zh", ["大分", "小分", "大循环积大小分"]), ("en", ["Big points"])):
            page = c.get(f"/scoreboard/{tid}", params={"lang": lang}).text
            assert "data-i18n-missing" not in page
            for w in words:
                assert w in page, (lang, w)
            assert 'id="bracket"' not in page  # no bracket for a round robin
        assert c.get(f"/api/v1/tournaments/{tid}/bracket").status_code == 404


# ----------------------------------------------------------------------------- knockout


def _override(c: httpx.Client, match: int, result: str) -> None:
    r = c.post(f"/api/v1/matches/{match}/override", json={"result": result})
    assert r.status_code == 200, r.text


def test_knockout_from_the_api_with_bracket(server: Server) -> None:
    with server.client() as c:
        t = _post_tournament(c, "knockout", tables=2, pairs=6)
        tid = t["id"]
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 201, r.text
        r1 = r.json()["matches"]
        assert [(m["ew"], m["ns"]) for m in r1] == [(1, None), (2, 3), (4, None), (5, 6)]
        assert [m["table"] is None for m in r1] == [True, False, True, False]
        g23, g56 = r1[1], r1[3]
        # the round is still open
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 409 and "still open" in r.json()["detail"]
        # 2 v 3 played at the table (3 wins); 5 v 6 left to go on ("wait")
        _play_by_events(c, t, g23, 3, "A", {})
        r = c.post(
            f"/api/v1/tournaments/{tid}/rounds/1/close",
            json={"decisions": [{"match": g56["id"], "decision": "wait"}]},
        )
        assert r.status_code == 200, r.text
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 409, r.text
        detail = r.json()["detail"]
        assert f"match {g56['id']} (round 1, table {g56['table']}, pairs 5 v 6)" in detail
        assert "has no result yet" in detail and "override" in detail
        _override(c, g56["id"], "draw")  # a knockout match needs a winner
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 409 and "needs a winner" in r.json()["detail"], r.text
        _override(c, g56["id"], "ns")  # 6 goes through
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 201, r.text
        r2 = r.json()["matches"]
        assert [(m["ew"], m["ns"]) for m in r2] == [(1, 3), (4, 6)]  # winners of adjacent slots
        br = c.get(f"/api/v1/tournaments/{tid}/bracket").json()
        assert [m["stage"] for m in br["rounds"][1]["matches"]] == ["semi_final"] * 2
        assert br["rounds"][0]["matches"][0]["winner"] == 1  # a bye goes through
        _override(c, r2[0]["id"], "ns")  # 3 beats 1
        _override(c, r2[1]["id"], "ew")  # 4 beats 6
        assert c.post(f"/api/v1/tournaments/{tid}/rounds/2/close", json={}).status_code == 200
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 201, r.text
        r3 = r.json()["matches"]
        assert [(m["ew"], m["ns"]) for m in r3] == [(3, 4), (1, 6)]  # final, then 3rd place
        br = c.get(f"/api/v1/tournaments/{tid}/bracket").json()
        assert [m["stage"] for m in br["rounds"][2]["matches"]] == ["final", "third_place"]
        assert br["places"] == {}
        _override(c, r3[0]["id"], "ew")  # 3 champion
        _override(c, r3[1]["id"], "ns")  # 6 third
        assert c.post(f"/api/v1/tournaments/{tid}/rounds/3/close", json={}).status_code == 200
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 409 and "pair 3 won the final" in r.json()["detail"]
        br = c.get(f"/api/v1/tournaments/{tid}/bracket").json()
        assert br["places"] == {"1": 3, "2": 4, "3": 6, "4": 1}
        st = c.get(f"/api/v1/tournaments/{tid}/standings").json()
        assert st["format"] == "knockout" and st["tie_breaks"][0].startswith("place")
        order = [x["pair"] for x in st["standings"]]
        assert order[:4] == [3, 4, 6, 1] and sorted(order[4:]) == [2, 5]
        for lang, words in (
            ("zh", ["对阵图", "决赛", "三四名决赛", "半决赛", "冠军", "轮空，直接晋级", "淘汰制"]),
            ("en", ["Bracket", "Final", "Match for 3rd place", "Semi-final", "Champion"]),
        ):
            page = c.get(f"/scoreboard/{tid}", params={"lang": lang}).text
            assert "data-i18n-missing" not in page, page[:300]
            assert 'id="bracket"' in page
            for w in words:
                assert w in page, (lang, w)
            parts = c.get(f"/scoreboard/{tid}/parts", params={"lang": lang}).json()
            assert parts["missing"] == [] and 'class="bracket"' in parts["parts"]["bracket"]


def test_formats_bad_input_and_the_admin_page(server: Server) -> None:
    with server.client() as c:
        sf = _post_tournament(c, "knockout_bo3_sf", tables=2, pairs=4)
        assert c.post(f"/api/v1/tournaments/{sf['id']}/rounds", json={}).status_code == 201
        br = c.get(f"/api/v1/tournaments/{sf['id']}/bracket").json()
        assert br["rounds"][0]["best_of"] == 3  # four pairs: round 1 is the semi-finals
        r = c.post("/api/v1/tournaments", json={"name": "x", "format": "ladder"})
        assert r.status_code == 422 and "format" in r.text
        # a swiss tournament is as before, and has no bracket
        sw = new_tournament(server, tables=1, pairs=2)
        assert c.get(f"/api/v1/tournaments/{sw['id']}").json()["format"] == "swiss"
        r = c.get(f"/api/v1/tournaments/{sw['id']}/bracket")
        assert r.status_code == 404 and "not a knockout" in r.json()["detail"]
        # the admin page: a knockout made and its first round opened from the form
        assert "淘汰制" in c.get("/admin").text
        r = c.post(
            "/admin/tournaments",
            data={"name": "Admin KO", "profile": "swiss-421", "format": "knockout"},
            follow_redirects=False,
        )
        assert r.status_code == 303, r.text
        tid = int(r.headers["location"].rsplit("/", 1)[1])
        page = c.get(f"/admin/{tid}").text
        assert "Single elimination 淘汰制" in page and "按胜者编排下一轮淘汰赛" in page
        # one pair: the knockout cannot start, and says why
        c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": "A"})
        r = c.post(f"/admin/{tid}/rounds", data={"mode": "auto"}, follow_redirects=False)
        assert r.status_code == 422 and "at least two pairs" in r.text
        c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": "B"})
        c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": "C"})
        r = c.post(f"/admin/{tid}/rounds", data={"mode": "auto"}, follow_redirects=False)
        assert r.status_code == 422 and "needs 1 tables" in r.text and "add tables" in r.text
        c.post(f"/api/v1/tournaments/{tid}/tables", json={"id": f"KO{tid}"})
        r = c.post(f"/admin/{tid}/rounds", data={"mode": "auto"}, follow_redirects=False)
        assert r.status_code == 303, r.text
        rnd = c.get(f"/api/v1/tournaments/{tid}/rounds").json()[0]["matches"]
        assert [(m["ew"], m["ns"]) for m in rnd] == [(1, None), (2, 3)]
        r = c.post(
            "/admin/tournaments",
            data={"name": "bad", "profile": "swiss-421", "format": "ladder"},
            follow_redirects=False,
        )
        assert r.status_code == 422 and "unknown format" in r.text


def test_cli_add_event_with_a_format(tmp_path: Path) -> None:
    db = str(tmp_path / "cli.db")
    cmd = [sys.executable, "-m", "kiosk", "scoreboard", "add-event", "--db", db, "--name", "RR"]
    r = subprocess.run(
        [*cmd, "--format", "round_robin"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    engine = make_engine(normalise_db_url(db))
    try:
        with engine.begin() as conn:
            assert conn.execute(text("SELECT format FROM tournament")).scalar() == "round_robin"
    finally:
        engine.dispose()
    r = subprocess.run(
        [*cmd, "--format", "ladder"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert r.returncode != 0 and "--format" in r.stderr
    # every format of the scoreboard is offered, the group stage with its settings
    r = subprocess.run(
        [*cmd, "--format", "groups_knockout", "--groups", "3", "--advance", "2"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    engine = make_engine(normalise_db_url(db))
    try:
        with engine.begin() as conn:
            row = conn.execute(
                text("SELECT format, groups, advance FROM tournament ORDER BY id DESC")
            ).first()
            assert tuple(row) == ("groups_knockout", 3, 2)  # type: ignore[arg-type]
    finally:
        engine.dispose()
    r = subprocess.run(
        [*cmd, "--format", "swiss", "--groups", "3"], cwd=REPO, capture_output=True, text=True
    )
    assert r.returncode != 0 and "groups" in r.stderr


def test_knockout_best_of_3_from_the_api(server: Server) -> None:
    with server.client() as c:
        t = _post_tournament(c, "knockout_bo3", tables=2, pairs=4)
        tid = t["id"]

        def next_round() -> list[dict[str, Any]]:
            r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
            assert r.status_code == 201, r.text
            return list(r.json()["matches"])

        def close(n: int) -> None:
            r = c.post(f"/api/v1/tournaments/{tid}/rounds/{n}/close", json={})
            assert r.status_code == 200, r.text

        g1 = next_round()
        assert [(m["ew"], m["ns"]) for m in g1] == [(1, 2), (3, 4)]
        _override(c, g1[0]["id"], "ew")  # 1 leads 1:0
        _override(c, g1[1]["id"], "ew")  # 3 leads 1:0
        close(1)
        g2 = next_round()
        assert [(m["ew"], m["ns"]) for m in g2] == [(1, 2), (3, 4)]  # game 2 of both
        _override(c, g2[0]["id"], "ns")  # 1:1
        _override(c, g2[1]["id"], "ew")  # 3 through 2:0
        close(2)
        g3 = next_round()
        assert [(m["ew"], m["ns"]) for m in g3] == [(1, 2)]  # only the meeting at 1:1
        br = c.get(f"/api/v1/tournaments/{tid}/bracket").json()
        assert len(br["rounds"]) == 1 and br["rounds"][0]["best_of"] == 3
        first, second = br["rounds"][0]["matches"]
        assert (first["wins_ew"], first["wins_ns"], first["winner"]) == (1, 1, None)
        assert len(first["games"]) == 3 and (second["wins_ew"], second["winner"]) == (2, 3)
        for lang, words in (("zh", ["三局两胜", "第 3 局"]), ("en", ["best of 3", "game 3"])):
            page = c.get(f"/scoreboard/{tid}", params={"lang": lang}).text
            assert "data-i18n-missing" not in page
            for w in words:
                assert w in page, (lang, w)
        _override(c, g3[0]["id"], "ns")  # 2 through 2:1
        close(3)
        final = next_round()
        assert [(m["ew"], m["ns"]) for m in final] == [(2, 3), (1, 4)]  # final, 3rd place
        for m in final:
            _override(c, m["id"], "ew")
        close(4)
        again = next_round()
        assert [(m["ew"], m["ns"]) for m in again] == [(2, 3), (1, 4)]  # game 2 of both
        for m in again:
            _override(c, m["id"], "ew")
        close(5)
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 409 and "pair 2 won the final" in r.json()["detail"]
        order = [
            x["pair"] for x in c.get(f"/api/v1/tournaments/{tid}/standings").json()["standings"]
        ]
        assert order == [2, 3, 1, 4]


# ----------------------------------------------------------------------------- deal points

#: finish orders -> deal points (003 "1,2名积3分。1,3名积2分。1,4名积1分")
EW_3 = ["E", "W", "N", "S"]  # EW 1st and 2nd: 3 for EW
EW_1 = ["W", "N", "S", "E"]  # EW 1st and 4th: 1 for EW
NS_2 = ["N", "E", "S", "W"]  # NS 1st and 3rd: 2 for NS


def _deals(table: str, orders: list[list[str]], ended: str | None, seq0: int = 1) -> list[Any]:
    out: list[dict[str, Any]] = []
    seq = seq0
    for d, order in enumerate(orders, start=1):
        evs = deal_events(table, seq, d, "2", order, {"NS": "2", "EW": "2"})
        out.extend(evs)
        seq += len(evs)
    if ended is not None:
        out.append(ev(table, seq, "match_ended", len(orders), winner=ended))
    return out


def test_fixed_deal_point_matches_in_a_knockout(server: Server) -> None:
    """003: six deals at level 2 scored 3/2/1 a deal, the higher total goes through; the
    standings' 级差分 is the deal-point difference, ``as_played`` goes by the points."""
    with server.client() as c:
        r = c.post(
            "/api/v1/tournaments",
            json={"name": "003 杯", "profile": "six-deal-points", "format": "knockout"},
        )
        assert r.status_code == 201, r.text
        tid = r.json()["id"]
        tokens = {}
        for i in (1, 2):
            r = c.post(f"/api/v1/tournaments/{tid}/tables", json={"id": f"dp{tid}T{i}"})
            tokens[r.json()["id"]] = r.json()["token"]
        for i in range(1, 5):
            c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": f"P{i}"})
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 201, r.text
        m1, m2 = r.json()["matches"]
        # m1 (1 EW v 2 NS): EW 3+3+1+1 = 8, NS 2+2 = 4; the table's engine ends it for EW
        orders = [EW_3, EW_3, EW_1, EW_1, NS_2, NS_2]
        evs = _deals(m1["table"], orders, "EW")
        h = {"Authorization": f"Bearer {tokens[m1['table']]}"}
        assert c.post("/api/v1/events/batch", json=evs, headers=h).status_code == 200
        # m2 (3 EW v 4 NS): three deals played, NS 2+2 = 4 against EW 1, time runs out
        evs = _deals(m2["table"], [NS_2, EW_1, NS_2], None)
        h = {"Authorization": f"Bearer {tokens[m2['table']]}"}
        assert c.post("/api/v1/events/batch", json=evs, headers=h).status_code == 200
        r = c.post(
            f"/api/v1/tournaments/{tid}/rounds/1/close",
            json={"decisions": [{"match": m2["id"], "decision": "as_played"}]},
        )
        assert r.status_code == 200, r.text
        got = {m["id"]: m for m in r.json()["matches"]}
        assert (got[m1["id"]]["points_ew"], got[m1["id"]]["points_ns"]) == (8, 4)
        assert (got[m2["id"]]["points_ew"], got[m2["id"]]["points_ns"]) == (1, 4)
        assert got[m2["id"]]["result"] == "NS"  # levels 2:2, the points decide
        st = c.get(f"/api/v1/tournaments/{tid}/standings").json()["standings"]
        diff = {x["pair"]: x["level_diff"] for x in st}
        assert diff == {1: 4, 2: -4, 3: -3, 4: 3}
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 201, r.text
        assert [(m["ew"], m["ns"]) for m in r.json()["matches"]] == [(1, 4), (2, 3)]
        for lang, words in (("zh", ["积分（南北 : 东西）", "积分差"]), ("en", ["Deal points"])):
            page = c.get(f"/scoreboard/{tid}", params={"lang": lang}).text
            assert "data-i18n-missing" not in page
            for w in words:
                assert w in page, (lang, w)
            assert "4 : 8" in page and "4 : 1" in page  # NS : EW


def test_the_api_schema_offers_exactly_the_scoreboard_formats() -> None:
    """TournamentIn.format spells the formats out for the OpenAPI page; it must not drift from
    formats.FORMATS (a format added there and not here would be refused by the API)."""
    from typing import get_args

    from kiosk.scoreboard.formats import FORMATS
    from kiosk.scoreboard.schemas import TournamentIn

    annotation = TournamentIn.model_fields["format"].annotation
    assert set(get_args(annotation)) == set(FORMATS)
