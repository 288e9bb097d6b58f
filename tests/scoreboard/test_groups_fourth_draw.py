"""groups_knockout's fourth draw (issue 42; 000 篇11 "第四次抽签（桌号）定对手。开展决赛"): once the
knockout is down to the 决赛's 8 pairs (after its first round), they are drawn anew by lots from
the tournament's lots_seed and meet at the table number they drew; a knockout of 8 pairs or
fewer has no such draw. The schedule on its own, then the API, the bracket, the board and
export.json against a real scoreboard process on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from kiosk.scoreboard.formats import (
    FOURTH_DRAW_SALT,
    FormatError,
    KoMatch,
    adjacent,
    bracket_state,
    draw_order,
    first_knockout_round,
    fourth_draw,
    fourth_draw_due,
    group_knockout_draws,
    knockout_draw,
    next_group_knockout_round,
    next_knockout_round,
)
from kiosk.scoreboard.standings import Pairing

from .helpers import Server
from .test_formats import _override

# ----------------------------------------------------------------------------- pure


def _play(plan: list[Pairing], rnd: int) -> list[KoMatch]:
    """The lower number wins every game."""
    out = []
    for i, p in enumerate(plan):
        result = None
        if p.ns is not None:
            result = "EW" if p.ew < p.ns else "NS"
        out.append(KoMatch(rnd * 100 + i, f"T{i}", p.ew, p.ns, result, round=rnd))
    return out


def _run(first: list[Pairing], seed: int) -> list[list[KoMatch]]:
    rounds = [_play(first, 1)]
    while True:
        try:
            plan = next_group_knockout_round(rounds, seed)
        except FormatError as exc:
            assert "won the final" in exc.message
            return rounds
        rounds.append(_play(plan, len(rounds) + 1))


def _pairs(plan: list[Pairing] | list[KoMatch]) -> list[tuple[int, int | None]]:
    return [(p.ew, p.ns) for p in plan]


def test_the_text_32_pairs_fourth_draw_before_the_last_8() -> None:
    """000 篇11's numbers: 32 pairs in the 复赛, two rounds (32 -> 16 -> 8), then the 8 of the
    决赛 drawn anew; the semi-finals, final and 3rd place follow the drawn round's bracket."""
    qualified = [list(range(1, 17)), list(range(17, 33))]
    seed = 11
    r1 = knockout_draw(qualified, seed)
    rounds = _run(r1, seed)
    sizes = [len(r) for r in rounds]
    assert sizes == [16, 8, 4, 2, 2]  # 复赛 x2, the drawn 8, semi-finals, final + 3rd
    # round 2 (the 复赛's second) is the winners of adjacent matches, not a draw
    winners1 = [min(m.ew, m.ns or 99) for m in rounds[0]]
    assert _pairs(rounds[1]) == [(winners1[i], winners1[i + 1]) for i in range(0, 16, 2)]
    # round 3: the 8 left, drawn by lots (salt "fourth draw"), paired 1st v 2nd, ...
    eight = [min(m.ew, m.ns or 99) for m in rounds[1]]
    assert sorted(p for m in rounds[2] for p in (m.ew, m.ns)) == sorted(eight)
    order = draw_order(seed, FOURTH_DRAW_SALT, eight)
    assert _pairs(rounds[2]) == [(order[i], order[i + 1]) for i in range(0, 8, 2)]
    # the semi-finals: winners of adjacent matches of the drawn round
    w3 = [min(m.ew, m.ns or 99) for m in rounds[2]]
    assert _pairs(rounds[3]) == [(w3[0], w3[1]), (w3[2], w3[3])]
    b = bracket_state(rounds)
    assert b.done and b.places[min(eight)] == 1
    draws = group_knockout_draws(b, seed)
    assert sorted(draws) == [1, 3] and draws[1]["number"] == 3 and draws[3]["number"] == 4
    assert draws[3]["as_drawn"] is True and draws[3]["order"] == order
    assert draws[3]["lots"] == [
        {"pair": p, "table_number": i // 2 + 1} for i, p in enumerate(order)
    ]


def test_the_fourth_draw_is_a_real_draw_and_reproducible() -> None:
    eight = [1, 3, 5, 7, 9, 11, 13, 15]
    bracket_order = adjacent(eight)
    plans = {seed: _pairs(fourth_draw(eight, seed)) for seed in range(30)}
    assert len(set(map(tuple, plans.values()))) > 20  # the lots decide, not the bracket
    assert sum(1 for p in plans.values() if p == _pairs(bracket_order)) <= 1
    for seed, plan in plans.items():
        assert _pairs(fourth_draw(list(reversed(eight)), seed)) == plan  # same seed, same draw
        assert sorted(p for x in plan for p in x if p is not None) == eight
    with pytest.raises(FormatError, match="made for 8 pairs, not 6"):
        fourth_draw([1, 2, 3, 4, 5, 6], 1)


def test_twelve_pairs_the_draw_follows_the_byes() -> None:
    """12 through (a 16 bracket): round 1 has 4 byes and 4 games, round 2 is the last 8,
    drawn; winners of the drawn round meet in the semi-finals."""
    qualified = [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]
    seed = 5
    r1 = knockout_draw(qualified, seed)
    assert sum(1 for p in r1 if p.ns is None) == 4
    rounds = _run(r1, seed)
    assert [len(r) for r in rounds] == [8, 4, 2, 2]
    alive = [m.ew if m.ns is None else min(m.ew, m.ns) for m in rounds[0]]
    assert _pairs(rounds[1]) == _pairs(adjacent(draw_order(seed, FOURTH_DRAW_SALT, alive)))
    draws = group_knockout_draws(bracket_state(rounds), seed)
    assert sorted(draws) == [1, 2] and draws[2]["as_drawn"] is True


@pytest.mark.parametrize("n", [2, 4, 6, 8])
def test_no_fourth_draw_for_8_pairs_or_fewer(n: int) -> None:
    """No 复赛 before the 8: the third draw is the 决赛's and the bracket runs as knockout."""
    rounds = _run(first_knockout_round(range(1, n + 1)), 3)
    for k in range(1, len(rounds)):
        assert _pairs(next_group_knockout_round(rounds[:k], 3)) == _pairs(
            next_knockout_round(rounds[:k])
        )
    assert list(group_knockout_draws(bracket_state(rounds), 3)) == [1]


def test_fourth_draw_waits_for_the_round_and_marks_typed_pairings() -> None:
    r1 = _play(first_knockout_round(range(1, 17)), 1)
    undecided = [*r1[:-1], KoMatch(9, "T9", 15, 16, None, round=1)]
    assert not fourth_draw_due(bracket_state([undecided], strict=False))
    with pytest.raises(FormatError, match=r"match 9 \(round 1, table T9, pairs 15 v 16\) has no"):
        next_group_knockout_round([undecided], 1)
    assert fourth_draw_due(bracket_state([r1]))
    # the 8 typed in bracket order by hand: shown as not drawn
    typed = _play(adjacent([1, 3, 5, 7, 9, 11, 13, 15]), 2)
    drawn = _pairs(fourth_draw([1, 3, 5, 7, 9, 11, 13, 15], 1))
    assert drawn != _pairs(typed)
    draws = group_knockout_draws(bracket_state([r1, typed]), 1)
    assert draws[2]["number"] == 4 and draws[2]["as_drawn"] is False


# ----------------------------------------------------------------------------- API


def _round(c: httpx.Client, tid: int) -> list[dict[str, Any]]:
    r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
    assert r.status_code == 201, r.text
    return list(r.json()["matches"])


def _decide_and_close(c: httpx.Client, tid: int, matches: list[dict[str, Any]]) -> None:
    """The lower number wins every match (a ruling), then the round is closed."""
    for m in matches:
        if m["ns"] is not None:
            _override(c, m["id"], "ew" if m["ew"] < m["ns"] else "ns")
    n = matches[0]["round"]
    r = c.post(f"/api/v1/tournaments/{tid}/rounds/{n}/close", json={})
    assert r.status_code == 200, r.text


def _winner(m: dict[str, Any]) -> int:
    return int(m["ew"] if m["ns"] is None else min(m["ew"], m["ns"]))


def test_fourth_draw_from_the_api(server: Server) -> None:
    """15 pairs in 5 groups of 3, the top 2 of each through: 10 in the knockout (6 byes, 2
    games), then the last 8 drawn anew, on table numbers 1-4; semi-finals from the drawn
    round's bracket, the final and 3rd place. The draw is in the bracket API, on the board
    (zh/en) and in export.json."""
    seed = 7
    with server.client() as c:
        r = c.post(
            "/api/v1/tournaments",
            json={
                "name": "万科杯",
                "format": "groups_knockout",
                "groups": 5,
                "advance": 2,
                "lots_seed": seed,
            },
        )
        assert r.status_code == 201, r.text
        tid = r.json()["id"]
        tables = []
        for i in range(1, 6):
            r = c.post(f"/api/v1/tournaments/{tid}/tables", json={"id": f"gk{tid}T{i}"})
            assert r.status_code == 201, r.text
            tables.append(r.json()["id"])
        for i in range(1, 16):
            r = c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": f"对{i}"})
            assert r.status_code == 201, r.text
        for _ in range(3):  # the group stage: three rounds of five groups of three
            _decide_and_close(c, tid, _round(c, tid))
        g = c.get(f"/api/v1/tournaments/{tid}/groups").json()
        assert [[x["pair"] for x in grp["standings"][:2]] for grp in g["table"]] == [
            [1, 2],
            [4, 5],
            [7, 8],
            [10, 11],
            [13, 14],
        ]
        ko1 = _round(c, tid)  # the third draw: 10 pairs, 6 byes
        assert sum(1 for m in ko1 if m["ns"] is None) == 6 and len(ko1) == 8
        br = c.get(f"/api/v1/tournaments/{tid}/bracket").json()
        assert br["rounds"][0]["draw"] == {"number": 3, "text": "第三次抽签（桌号）定对手"}
        _decide_and_close(c, tid, ko1)
        alive = [_winner(m) for m in ko1]  # bracket order, byes included

        qf = _round(c, tid)  # the fourth draw: the last 8 drawn anew
        order = draw_order(seed, FOURTH_DRAW_SALT, alive)
        want = [(order[i], order[i + 1]) for i in range(0, 8, 2)]
        assert [(m["ew"], m["ns"]) for m in qf] == want
        assert want != [(alive[i], alive[i + 1]) for i in range(0, 8, 2)]  # not the bracket's
        assert [m["table"] for m in qf] == tables[:4]  # table number k: the k-th table
        br = c.get(f"/api/v1/tournaments/{tid}/bracket").json()
        draw = br["rounds"][1]["draw"]
        assert draw["number"] == 4 and draw["text"] == "第四次抽签（桌号）定对手"
        assert draw["as_drawn"] is True and draw["order"] == order
        assert draw["lots"] == [
            {"pair": p, "table_number": i // 2 + 1} for i, p in enumerate(order)
        ]
        assert [(m["ew"], m["ns"]) for m in br["rounds"][1]["matches"]] == want
        for lang, words in (
            (
                "zh",
                ["第三次抽签（桌号）定对手", "第四次抽签（桌号）定对手：决赛（8 强）", "4 号桌"],
            ),
            ("en", ["Fourth draw (table numbers) decides the opponents", "table number 4"]),
        ):
            page = c.get(f"/scoreboard/{tid}", params={"lang": lang}).text
            assert "data-i18n-missing" not in page
            for w in words:
                assert w in page, (lang, w)
        exp = c.get(f"/api/v1/tournaments/{tid}/export.json").json()
        assert exp["tournament"]["lots_seed"] == seed
        assert exp["bracket"]["rounds"] == br["rounds"]
        _decide_and_close(c, tid, qf)

        w = [_winner(m) for m in qf]
        semis = _round(c, tid)
        assert [(m["ew"], m["ns"]) for m in semis] == [(w[0], w[1]), (w[2], w[3])]
        _decide_and_close(c, tid, semis)
        final = _round(c, tid)
        assert len(final) == 2  # the final and the match for 3rd place
        _decide_and_close(c, tid, final)
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 409 and "pair 1 won the final" in r.json()["detail"]
        br = c.get(f"/api/v1/tournaments/{tid}/bracket").json()
        assert [x["draw"] for x in br["rounds"][2:]] == [None, None]
        assert br["places"]["1"] == 1
        exp = c.get(f"/api/v1/tournaments/{tid}/export.json").json()
        assert exp["bracket"]["places"] == br["places"]
        # other formats: no draw key in their bracket, no bracket in a Swiss export
        r = c.post("/api/v1/tournaments", json={"name": "s", "format": "swiss"})
        assert c.get(f"/api/v1/tournaments/{r.json()['id']}/export.json").json()["bracket"] is None
