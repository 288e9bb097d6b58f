"""A match decided by a ruling shows as decided, with the ruling and its reason (issue 42), on a
real server process with SQLite and with PostgreSQL.

The bug: a match's ``status`` was only the fold of its events (pending, playing, finished), so a
round closed with decisions (as played, forfeit, void) or a floor ruling (an override) left the
match "not started" (未开始) or "playing" on the pages and in the API for good, beside a result
the standings counted.
"""

from __future__ import annotations

import html
import re
from typing import Any

import httpx

from .helpers import Server, deal_events, ev, new_tournament


def _row(page: str, match_id: int) -> str:
    """The text of the rounds table's row of a match (tags dropped, entities decoded)."""
    m = re.search(rf'<tr data-match="{match_id}">(.*?)</tr>', page, re.S)
    assert m, f"no row for match {match_id}"
    return html.unescape(re.sub(r"<[^>]+>", "", m.group(1)))


def _matches(c: httpx.Client, tid: int) -> dict[int, dict[str, Any]]:
    rounds = c.get(f"/api/v1/tournaments/{tid}/rounds").json()
    return {m["id"]: m for r in rounds for m in r["matches"]}


def test_decided_matches_show_decided_with_the_reason(server: Server) -> None:
    t = new_tournament(server, tables=3, pairs=6)
    tid, tables, tokens = t["id"], t["tables"], t["tokens"]
    with server.client() as c:
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 201, r.text
        m1, m2, m3 = (m["id"] for m in r.json()["matches"] if m["ns"] is not None)
        # Table 1 plays a deal (NS to 4) and starts the next: playing when time is called.
        evs = deal_events(tables[0], 1, 1, "2", ["S", "E", "N", "W"], {"NS": "4", "EW": "2"})
        evs.append(ev(tables[0], len(evs) + 1, "deal_started", 2, level="4", leader="S"))
        evs = [dict(e, match_id=m1) for e in evs]
        headers = {"Authorization": f"Bearer {tokens[tables[0]]}"}
        assert c.post("/api/v1/events/batch", json=evs, headers=headers).status_code == 200
        before = _matches(c, tid)
        assert [before[m]["status"] for m in (m1, m2, m3)] == ["playing", "pending", "pending"]
        assert all(before[m]["ruling"] is None for m in (m1, m2, m3))

        r = c.post(
            f"/api/v1/tournaments/{tid}/rounds/1/close",
            json={
                "reason": "time called 22:00 时间到",
                "decisions": [
                    {"match": m1, "decision": "as_played"},
                    {"match": m2, "decision": "forfeit_ew", "reason": "pair 3 left 三号队离场"},
                    {"match": m3, "decision": "wait"},
                ],
            },
        )
        assert r.status_code == 200, r.text
        # The close's own answer already says so.
        closed = {m["id"]: m for m in r.json()["matches"]}
        assert closed[m2]["status"] == "decided"

        got = _matches(c, tid)
        assert (got[m1]["status"], got[m1]["play_status"], got[m1]["result"]) == (
            "decided",
            "playing",
            "NS",
        )
        # no reason of its own: the close's reason
        assert got[m1]["ruling"] == {
            "by": "decision",
            "kind": "as_played",
            "reason": "time called 22:00 时间到",
        }
        assert (got[m2]["status"], got[m2]["play_status"], got[m2]["result"]) == (
            "decided",
            "pending",
            "NS",
        )
        assert got[m2]["ruling"] == {
            "by": "decision",
            "kind": "forfeit_ew",
            "reason": "pair 3 left 三号队离场",
        }
        # wait is no ruling: the match goes on, its status is still the play's
        assert (got[m3]["status"], got[m3]["ruling"], got[m3]["decision"]) == (
            "pending",
            None,
            "wait",
        )

        # A floor ruling (an override) on the match left to go on, then a void on a new
        # decision of the as-played one: the latest decision and its reason are shown.
        r = c.post(f"/api/v1/matches/{m3}/override", json={"result": "ew_no_show"})
        assert r.status_code == 200, r.text
        got = _matches(c, tid)
        assert (got[m3]["status"], got[m3]["play_status"], got[m3]["result"]) == (
            "decided",
            "pending",
            "NS",
        )
        assert got[m3]["ruling"] == {"by": "override", "kind": "ew_no_show", "reason": ""}
        r = c.post(
            f"/api/v1/matches/{m1}/decision", json={"decision": "void", "reason": "wrong deck 牌错"}
        )
        assert r.status_code == 200, r.text
        got = _matches(c, tid)
        assert got[m1]["ruling"] == {"by": "decision", "kind": "void", "reason": "wrong deck 牌错"}
        assert (got[m1]["status"], got[m1]["result"]) == ("decided", "void")

        # The export says the same.
        export = c.get(f"/api/v1/tournaments/{tid}/export.json").json()
        exported = {m["id"]: m for r in export["rounds"] for m in r["matches"]}
        assert (
            exported[m2]["status"] == "decided" and exported[m2]["ruling"]["kind"] == "forfeit_ew"
        )

        # The public board, in both languages: decided, the ruling, the reason as typed.
        pages = {}
        for lang in ("zh", "en"):
            r = c.get(f"/scoreboard/{tid}", params={"lang": lang})
            assert r.status_code == 200, r.text
            assert "data-i18n-missing" not in r.text
            pages[lang] = r.text
            parts = c.get(f"/scoreboard/{tid}/parts", params={"lang": lang}).json()
            assert parts["missing"] == []
            assert _row(parts["parts"]["rounds"], m2) == _row(r.text, m2)  # live updates too
        zh = {m: _row(pages["zh"], m) for m in (m1, m2, m3)}
        en = {m: _row(pages["en"], m) for m in (m1, m2, m3)}
        for rows in (zh, en):
            assert all("未开始" not in x and "not started" not in x for x in rows.values()), rows
        assert "已裁定 · 东西弃权：pair 3 left 三号队离场" in zh[m2], zh[m2]
        assert "decided by ruling · East-West forfeit: pair 3 left 三号队离场" in en[m2], en[m2]
        assert "已裁定 · 作废，不计成绩：wrong deck 牌错" in zh[m1], zh[m1]
        assert "decided by ruling · void, no result: wrong deck 牌错" in en[m1], en[m1]
        assert "已裁定 · 东西缺席" in zh[m3] and "decided by ruling · East-West no-show" in en[m3]
        # A table card that still names the pairs of a decided match says it is decided.
        for table in tables:
            card = re.search(
                rf'<section class="tablecard" id="table-{table}".*?</section>', pages["en"], re.S
            )
            assert card, table
            if "Pair" in card.group(0):
                assert "decided by ruling" in card.group(0), card.group(0)

        # Clearing the override puts the match back to the play's status (the log is the truth).
        assert c.post(f"/api/v1/matches/{m3}/override", json={"result": None}).status_code == 200
        got = _matches(c, tid)
        assert (got[m3]["status"], got[m3]["ruling"]) == ("pending", None)
