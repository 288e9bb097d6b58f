"""Event formats with stages (issue 42): group stage then knockout (000 篇11), single elimination
with a repechage (002 第三篇) and a knockout drawn anew each round (003). The schedules on their
own; the API, the admin page and the public board against a real scoreboard process on SQLite
and PostgreSQL, with matches decided by posted events or by rulings."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from kiosk.scoreboard.formats import (
    FormatError,
    KoMatch,
    adjacent,
    assign_groups,
    check_advance,
    draw_order,
    first_redraw_round,
    group_schedule,
    knockout_draw,
    next_knockout_round,
    next_repechage_round,
    redraw,
    repechage_state,
)
from kiosk.scoreboard.standings import Pairing

from .helpers import Server
from .test_formats import _override, _play_by_events, _post_tournament

# ----------------------------------------------------------------------------- pure


def _play(plan: list[Pairing], rnd: int, lower_wins: bool = True) -> list[KoMatch]:
    out = []
    for i, p in enumerate(plan):
        result = None
        if p.ns is not None:
            result = "EW" if (p.ew < p.ns) == lower_wins else "NS"
        out.append(KoMatch(rnd * 100 + i, f"T{i}", p.ew, p.ns, result, round=rnd))
    return out


def _run_repechage(n: int, seed: int = 7) -> tuple[list[list[KoMatch]], list[int]]:
    field_ = list(range(1, n + 1))
    rounds: list[list[KoMatch]] = []
    sizes = []
    while True:
        try:
            plan = next_repechage_round(rounds, field_, seed)
        except FormatError as exc:
            assert "won the final" in exc.message
            break
        assert all(p.ns is not None for p in plan)  # no byes: a pair sits out instead
        sizes.append(len(plan))
        rounds.append(_play(plan, len(rounds) + 1))
    return rounds, sizes


def test_repechage_of_002_with_its_44_pairs() -> None:
    """002 第三篇: 44 pairs, 22 and 11 go out in rounds 1 and 2, the 11 left are drawn anew
    and one of them sits round 3 out into the repechage, 5 winners go on, the 5 losers and
    that pair play the repechage for 3 places: 8 in the 复赛, then semi-finals and the final
    best of 3 (a meeting of the lower number winning both games takes two rounds)."""
    rounds, sizes = _run_repechage(44)
    assert sizes == [22, 11, 5, 3, 4, 2, 2, 2, 2]
    assert [(p.ew, p.ns) for p in [Pairing(m.ew, m.ns) for m in rounds[0]]][:2] == [(1, 2), (3, 4)]
    st = repechage_state(rounds[:3], range(1, 45))
    assert st.phase == "repechage" and st.places == 3 and len(st.pool) == 6
    waiting = st.bracket.waiting[3]
    assert len(waiting) == 1 and waiting[0] in st.pool and len(st.through) == 5
    st = repechage_state(rounds[:4], range(1, 45))
    assert st.phase == "bracket" and len(st.alive) == 8
    assert st.bracket.stage_of == {1: "round", 2: "round", 3: "round", 4: "repechage"}
    b = repechage_state(rounds, range(1, 45)).bracket
    assert b.done and b.places[1] == 1 and sorted(b.places.values()) == [1, 2, 3, 4]
    # went out: round 1 and 2 losers; round 3 losers only once beaten in the repechage
    assert b.out_in[2] == 1 and sum(1 for r in b.out_in.values() if r == 4) == 3


def test_repechage_other_sizes() -> None:
    # 7 pairs: 3 games and pair 7 sits out; 3 winners need 1 place from 4 pairs: two rounds
    rounds, sizes = _run_repechage(7)
    assert sizes[:3] == [3, 2, 1]
    b = repechage_state(rounds, range(1, 8)).bracket
    assert b.stage_of == {1: "round", 2: "repechage", 3: "repechage"} and b.waiting == {1: [7]}
    assert b.done and b.places[1] == 1
    # a power of two from the start: no repechage, semi-finals best of 3
    rounds, sizes = _run_repechage(8)
    assert sizes == [4, 2, 2, 2, 2] and not repechage_state(rounds, range(1, 9)).bracket.stage_of
    for n in (3, 5, 6, 9, 10, 12, 13):
        rounds, _sizes = _run_repechage(n)
        assert repechage_state(rounds, range(1, n + 1)).bracket.done, n


def test_repechage_refuses_what_does_not_fit() -> None:
    field_ = range(1, 6)
    r1 = _play(next_repechage_round([], field_, 1), 1)  # 1 v 2, 3 v 4; 5 sits out
    assert [(m.ew, m.ns) for m in r1] == [(1, 2), (3, 4)]
    with pytest.raises(FormatError, match=r"round 2 .*: pair\(s\) 1 are not in it at this stage"):
        next_repechage_round([r1, _play([Pairing(2, 4), Pairing(5, 1)], 2)], field_, 1)
    with pytest.raises(FormatError, match=r"round 2 .*: it has 0 match\(es\), the format plays 1"):
        next_repechage_round([r1, []], field_, 1)
    with pytest.raises(FormatError, match="has a bye"):
        next_repechage_round(
            [_play([Pairing(1, 2), Pairing(3, 4), Pairing(5, None)], 1)], field_, 1
        )
    with pytest.raises(FormatError, match=r"pair\(s\) 5, 6 have no match in round 1"):
        next_repechage_round([r1], range(1, 7), 1)
    undecided = [r1[0], KoMatch(9, "T9", 3, 4, None, round=1)]
    with pytest.raises(FormatError, match=r"match 9 \(round 1, table T9, pairs 3 v 4\) has no"):
        next_repechage_round([undecided], field_, 1)
    # not strict (the standings, the bracket view): the replay stops there
    st = repechage_state([undecided], field_, strict=False)
    assert st.stopped and len(st.bracket.ties) == 1


def test_redraw_each_round() -> None:
    """003 每轮比赛结束后，重新抽签决定下轮对手 … 差额小组自动轮空进入下轮抽签."""
    assert first_redraw_round([5, 4, 3, 2, 1]) == [Pairing(1, 2), Pairing(3, 4), Pairing(5, None)]
    with pytest.raises(FormatError, match="at least two pairs"):
        first_redraw_round([1])
    assert draw_order(7, "round 2", [1, 2, 3]) == draw_order(7, "round 2", [3, 2, 1])
    orders = {tuple(draw_order(seed, "round 2", range(1, 9))) for seed in range(20)}
    assert len(orders) > 10  # a real draw, not the draw numbers
    # the bye goes to a pair that had none
    for seed in range(20):
        plan = redraw([1, 3, 5], seed, "round 2", {5})
        assert plan[-1].ns is None and plan[-1].ew != 5
    r1 = _play(first_redraw_round(range(1, 10)), 1)  # 1 2 | 3 4 | 5 6 | 7 8 | 9 bye
    plan = next_knockout_round([r1], 1, redraw_seed=11)
    assert plan == redraw([1, 3, 5, 7, 9], 11, "round 2", {9})
    assert sorted(p for x in plan for p in (x.ew, x.ns) if p is not None) == [1, 3, 5, 7, 9]
    # the last round is still the final (and 3rd place after two semi-finals)
    rounds = [r1, _play(plan, 2)]
    while True:
        try:
            plan = next_knockout_round(rounds, 1, redraw_seed=11)
        except FormatError as exc:
            assert "pair 1 won the final" in exc.message
            break
        rounds.append(_play(plan, len(rounds) + 1))


def test_groups_and_the_knockout_draw() -> None:
    groups = assign_groups([8, 7, 6, 5, 4, 3, 2, 1, 9], 2)
    assert groups == {"A": [1, 2, 3, 4, 5], "B": [6, 7, 8, 9]}
    rounds = group_schedule(groups)
    assert len(rounds) == 5  # group A (5 pairs, a bye a round) sets the length
    met = [frozenset((p.ew, p.ns)) for r in rounds for _g, p in r if p.ns is not None]
    assert len(met) == 10 + 6 and len(set(met)) == len(met)
    assert all(
        g == "A" or max(x) >= 6 for g, x in [(g, (p.ew, p.ns or 0)) for r in rounds for g, p in r]
    )
    assert all(r[-1][1].ns is None for r in rounds)  # A's bye listed last
    with pytest.raises(FormatError, match="cannot make 3 groups of at least two"):
        assign_groups([1, 2, 3, 4, 5], 3)
    with pytest.raises(FormatError, match="less than the smallest group"):
        check_advance(groups, 4)
    check_advance(groups, 3)
    # a power of two through: drawn by lots, no byes
    plan = knockout_draw([[1, 2], [6, 7]], 7)
    assert len(plan) == 2 and sorted(p for x in plan for p in (x.ew, x.ns)) == [1, 2, 6, 7]
    assert plan == knockout_draw([[1, 2], [6, 7]], 7)  # the same draw when asked again
    # 3 groups x 2 = 6: two byes, to group winners
    plan = knockout_draw([[1, 2], [5, 6], [9, 10]], 3)
    byes = [p.ew for p in plan if p.ns is None]
    assert len(byes) == 2 and set(byes) <= {1, 5, 9} and len(plan) == 4
    assert adjacent([4, 2, 9]) == [Pairing(4, 2), Pairing(9, None)]


# ----------------------------------------------------------------------------- API


def _round(c: httpx.Client, tid: int) -> list[dict[str, Any]]:
    r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
    assert r.status_code == 201, r.text
    return list(r.json()["matches"])


def _close(c: httpx.Client, tid: int, n: int) -> None:
    r = c.post(f"/api/v1/tournaments/{tid}/rounds/{n}/close", json={})
    assert r.status_code == 200, r.text


def _lower_wins(c: httpx.Client, matches: list[dict[str, Any]]) -> None:
    for m in matches:
        if m["ns"] is not None:
            _override(c, m["id"], "ew" if m["ew"] < m["ns"] else "ns")


def test_groups_then_knockout_from_the_api(server: Server) -> None:
    with server.client() as c:
        # bad input first
        r = c.post("/api/v1/tournaments", json={"name": "x", "format": "swiss", "groups": 2})
        assert r.status_code == 422 and "groups_knockout" in r.json()["detail"]
        r = c.post(
            "/api/v1/tournaments", json={"name": "x", "format": "groups_knockout", "groups": 0}
        )
        assert r.status_code == 422
        r = c.post(
            "/api/v1/tournaments",
            json={"name": "小组杯", "format": "groups_knockout", "groups": 2, "advance": 4},
        )
        assert r.status_code == 201 and (r.json()["groups"], r.json()["advance"]) == (2, 4)
        bad = r.json()["id"]
        for i in range(1, 9):
            c.post(f"/api/v1/tournaments/{bad}/pairs", json={"name": f"P{i}"})
        r = c.post(f"/api/v1/tournaments/{bad}/rounds", json={})
        assert r.status_code == 422 and "less than the smallest group (4 pairs)" in r.text
        assert c.get(f"/api/v1/tournaments/{bad}/groups").status_code == 422

        t = _post_tournament(c, "groups_knockout", tables=4, pairs=8)
        tid = t["id"]
        got = c.get(f"/api/v1/tournaments/{tid}").json()
        assert (got["groups"], got["advance"]) == (2, 2)  # the defaults
        seqs: dict[str, int] = {}
        for n in (1, 2, 3):  # groups A (1-4) and B (5-8), three rounds of round robin
            ms = _round(c, tid)
            assert len(ms) == 4
            for m in ms:
                assert (m["ew"] <= 4) == (m["ns"] <= 4)  # never across the groups
            if n == 3:
                # the knockout waits for every group match: one played by events
                r = c.post(f"/api/v1/tournaments/{tid}/rounds/3/close", json={})
                assert r.status_code == 409, r.text  # unfinished matches need a decision
                _lower_wins(c, ms[1:])
                m = ms[0]
                winner = min(m["ew"], m["ns"])
                _play_by_events(c, t, m, winner, "5", seqs)
            else:
                _lower_wins(c, ms)
            _close(c, tid, n)
            if n == 1:  # a pair added after round 1 has no group: refused, the page stays
                late = c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": "迟到"}).json()
                r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
                assert r.status_code == 422
                assert (
                    f"pair(s) {late['number']} joined after round 1 of the group stage"
                    in (r.json()["detail"])
                )
                assert c.get(f"/api/v1/tournaments/{tid}/groups").status_code == 200
                r = c.patch(
                    f"/api/v1/tournaments/{tid}/pairs/{late['number']}", json={"withdrawn": True}
                )
                assert r.status_code == 200, r.text
        g = c.get(f"/api/v1/tournaments/{tid}/groups").json()
        assert g["group_rounds"] == 3 and not g["knockout_started"]
        table = {x["group"]: x["standings"] for x in g["table"]}
        assert [x["pair"] for x in table["A"]] == [1, 2, 3, 4]
        assert [x["pair"] for x in table["B"]] == [5, 6, 7, 8]
        assert [x["through"] for x in table["A"]] == [True, True, False, False]
        assert [x["points"] for x in table["A"]] == [6, 4, 2, 0]
        ko = _round(c, tid)  # round 4: the knockout, drawn by lots
        assert len(ko) == 2
        assert sorted(p for m in ko for p in (m["ew"], m["ns"])) == [1, 2, 5, 6]
        g = c.get(f"/api/v1/tournaments/{tid}/groups").json()
        assert g["knockout_started"]
        assert [x["qualified"] for x in g["table"][0]["standings"]] == [True, True, False, False]
        br = c.get(f"/api/v1/tournaments/{tid}/bracket").json()
        assert len(br["rounds"]) == 1 and len(br["rounds"][0]["matches"]) == 2
        _lower_wins(c, ko)
        _close(c, tid, 4)
        final = _round(c, tid)
        assert len(final) == 2  # the final and the match for 3rd place
        _lower_wins(c, final)
        _close(c, tid, 5)
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 409 and "pair 1 won the final" in r.json()["detail"]
        st = c.get(f"/api/v1/tournaments/{tid}/standings").json()
        order = [x["pair"] for x in st["standings"]]
        assert order[0] == 1 and sorted(order[:4]) == [1, 2, 5, 6]
        assert sorted(order[4:6]) == [3, 7] and sorted(order[6:8]) == [4, 8]  # by group place
        assert order[8:] == [9]  # the withdrawn late pair, in no group
        assert "place in its group (pairs not in the knockout)" in st["tie_breaks"]
        places = c.get(f"/api/v1/tournaments/{tid}/bracket").json()["places"]
        assert places["1"] == 1
        for lang, words in (
            ("zh", ["小组赛", "A 组", "B 组", "已进淘汰赛", "每组前 2 名出线", "对阵图"]),
            ("en", ["Groups", "Group A", "Group B", "in the knockout", "Top 2 of each group"]),
        ):
            page = c.get(f"/scoreboard/{tid}", params={"lang": lang}).text
            assert "data-i18n-missing" not in page
            for w in words:
                assert w in page, (lang, w)
            parts = c.get(f"/scoreboard/{tid}/parts", params={"lang": lang}).json()
            assert "groups" in parts["parts"] and not parts["missing"]
        r = c.get(f"/api/v1/tournaments/{tid}/groups")
        assert r.status_code == 200
        exp = c.get(f"/api/v1/tournaments/{tid}/export.json").json()
        assert exp["tournament"]["groups"] == 2 and exp["group_stage"]["table"] == r.json()["table"]
        other = _post_tournament(c, "swiss", tables=1, pairs=2)
        r = c.get(f"/api/v1/tournaments/{other['id']}/groups")
        assert r.status_code == 404 and "no group stage" in r.json()["detail"]


def test_groups_admin_form(server: Server) -> None:
    with server.client() as c:
        r = c.post(
            "/admin/tournaments",
            data={
                "name": "表单杯",
                "profile": "swiss-421",
                "format": "groups_knockout",
                "groups": "3",
                "advance": "1",
            },
            follow_redirects=False,
        )
        assert r.status_code == 303, r.text
        tid = int(r.headers["location"].rsplit("/", 1)[1])
        got = c.get(f"/api/v1/tournaments/{tid}").json()
        assert (got["format"], got["groups"], got["advance"]) == ("groups_knockout", 3, 1)
        page = c.get(f"/admin/{tid}").text
        assert "3 groups 组, top 1 of each through" in page and "#bracket" in page
        r = c.post(
            "/admin/tournaments",
            data={"name": "表单杯", "format": "groups_knockout", "groups": "two"},
        )
        assert (
            r.status_code == 422 and "groups 小组数: &#39;two&#39; is not a whole number" in r.text
        )
        # the group fields are ignored for another format (the form sends them empty or not)
        r = c.post(
            "/admin/tournaments",
            data={"name": "表单杯", "format": "knockout_redraw", "groups": "2"},
            follow_redirects=False,
        )
        assert r.status_code == 303
        index = c.get("/admin").text
        for fmt in ("knockout_redraw", "knockout_repechage", "groups_knockout"):
            assert f'value="{fmt}"' in index


def test_repechage_from_the_api(server: Server) -> None:
    """Six pairs: 1 v 2, 3 v 4, 5 v 6; the 3 winners drawn anew, one sits out into the
    repechage; its winner and the round's winner meet in the final, best of 3."""
    with server.client() as c:
        t = _post_tournament(c, "knockout_repechage", tables=3, pairs=6)
        tid = t["id"]
        r1 = _round(c, tid)
        assert [(m["ew"], m["ns"]) for m in r1] == [(1, 2), (3, 4), (5, 6)]
        _lower_wins(c, r1)
        _close(c, tid, 1)
        r2 = _round(c, tid)
        assert len(r2) == 1  # 3 pairs: one game, one pair sits out (no bye match)
        sitting = ({1, 3, 5} - {r2[0]["ew"], r2[0]["ns"]}).pop()
        br = c.get(f"/api/v1/tournaments/{tid}/bracket").json()
        stages = [m["stage"] for m in br["rounds"][1]["matches"]]
        assert (
            stages == ["round", "to_repechage"] and br["rounds"][1]["matches"][1]["ew"] == sitting
        )
        _override(c, r2[0]["id"], "ew")
        loser = r2[0]["ns"]
        _close(c, tid, 2)
        r3 = _round(c, tid)  # the repechage: the loser and the pair that sat out
        assert len(r3) == 1 and {r3[0]["ew"], r3[0]["ns"]} == {loser, sitting}
        br = c.get(f"/api/v1/tournaments/{tid}/bracket").json()
        assert br["rounds"][2]["stage"] == "repechage"
        assert br["rounds"][2]["matches"][0]["stage"] == "repechage"
        for lang, words in (("zh", ["附加赛", "本轮轮空，进入附加赛"]), ("en", ["Repechage"])):
            page = c.get(f"/scoreboard/{tid}", params={"lang": lang}).text
            assert "data-i18n-missing" not in page
            for w in words:
                assert w in page, (lang, w)
        _override(c, r3[0]["id"], "ew")
        rep_winner, rep_loser = r3[0]["ew"], r3[0]["ns"]
        _close(c, tid, 3)
        f1 = _round(c, tid)  # the final: best of 3 (two meetings or fewer)
        assert {f1[0]["ew"], f1[0]["ns"]} == {r2[0]["ew"], rep_winner}
        assert c.get(f"/api/v1/tournaments/{tid}/bracket").json()["rounds"][3]["best_of"] == 3
        _override(c, f1[0]["id"], "ew")
        _close(c, tid, 4)
        f2 = _round(c, tid)
        _override(c, f2[0]["id"], "ew")
        _close(c, tid, 5)
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 409 and "won the final" in r.json()["detail"]
        order = [
            x["pair"] for x in c.get(f"/api/v1/tournaments/{tid}/standings").json()["standings"]
        ]
        assert order[0] == f1[0]["ew"] and order[2] == rep_loser  # out in the repechage (3)
        assert sorted(order[3:]) == [2, 4, 6]  # out in round 1


def test_redraw_from_the_api(server: Server) -> None:
    """003 (six-deal-points): five pairs, 1 v 2, 3 v 4 and a bye for 5; the three winners
    drawn anew with the bye to a pair that had none."""
    with server.client() as c:
        r = c.post(
            "/api/v1/tournaments",
            json={
                "name": "003 杯",
                "profile": "six-deal-points",
                "format": "knockout_redraw",
                "lots_seed": 5,
            },
        )
        assert r.status_code == 201, r.text
        tid = r.json()["id"]
        for i in (1, 2):
            c.post(f"/api/v1/tournaments/{tid}/tables", json={"id": f"rd{tid}T{i}"})
        for i in range(1, 6):
            c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": f"P{i}"})
        r1 = _round(c, tid)
        assert [(m["ew"], m["ns"]) for m in r1] == [(1, 2), (3, 4), (5, None)]
        _lower_wins(c, r1)
        _close(c, tid, 1)
        r2 = _round(c, tid)
        want = redraw([1, 3, 5], 5, "round 2", {5})
        assert [(m["ew"], m["ns"]) for m in r2] == [(p.ew, p.ns) for p in want]
        assert r2[-1]["ns"] is None and r2[-1]["ew"] != 5
        _lower_wins(c, r2)
        _close(c, tid, 2)
        final = _round(c, tid)
        assert len(final) == 1 and final[0]["ns"] is not None
        _lower_wins(c, final)
        _close(c, tid, 3)
        places = c.get(f"/api/v1/tournaments/{tid}/bracket").json()["places"]
        assert places["1"] == 1
        page = c.get(f"/scoreboard/{tid}", params={"lang": "zh"}).text
        assert "每轮重新抽签" in page and "data-i18n-missing" not in page
