"""Match-scoped events and closing rounds with unfinished matches (issue 42), on a real server
process with SQLite and with PostgreSQL.

Story 1: "Close round" closed round 1 with all three matches still pending, no warning, and they
stayed pending for good. Now the close is refused (409, each unfinished match listed, nothing
changed) until every such match has a decision, and the decisions score the matches.

Story 2: round 2 was closed while table A1 was still playing, round 3 opened, and A1's remaining
events were credited to round 3's match at A1. Now events carry their match (``match_id``): A1's
late events go to the match they were played in and round 3's match stays untouched; an event
for another table's match is refused and nothing of its request is stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.exc import IntegrityError

from .helpers import Server, deal_events, ev, new_tournament


def _post(c: httpx.Client, token: str, events: list[dict[str, Any]]) -> httpx.Response:
    return c.post("/api/v1/events/batch", json=events, headers={"Authorization": f"Bearer {token}"})


def _stamp(events: list[dict[str, Any]], match_id: int) -> list[dict[str, Any]]:
    return [dict(e, match_id=match_id) for e in events]


def _round(c: httpx.Client, tid: int, number: int) -> dict[str, Any]:
    rounds = c.get(f"/api/v1/tournaments/{tid}/rounds").json()
    return next(r for r in rounds if r["number"] == number)


def _standing(c: httpx.Client, tid: int) -> dict[int, dict[str, Any]]:
    st = c.get(f"/api/v1/tournaments/{tid}/standings").json()["standings"]
    return {s["pair"]: s for s in st}


def test_close_round_with_pending_matches_needs_a_decision_each(server: Server) -> None:
    t = new_tournament(server, tables=3, pairs=7)
    tid, tables, tokens = t["id"], t["tables"], t["tokens"]
    with server.client() as c:
        r1 = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r1.status_code == 201, r1.text
        games = [m for m in r1.json()["matches"] if m["ns"] is not None]
        assert [(m["table"], m["ew"], m["ns"]) for m in games] == [
            (tables[0], 1, 2),
            (tables[1], 3, 4),
            (tables[2], 5, 6),
        ]
        m1, m2, m3 = (m["id"] for m in games)
        # Table 1 plays one deal (NS to 5), then a second deal starts: the match is unfinished.
        first = deal_events(tables[0], 1, 1, "2", ["S", "E", "N", "W"], {"NS": "5", "EW": "2"})
        first.append(ev(tables[0], len(first) + 1, "deal_started", 2, level="5", leader="S"))
        assert _post(c, tokens[tables[0]], _stamp(first, m1)).status_code == 200

        # No decision: refused, every unfinished match named, the round still open.
        r = c.post(f"/api/v1/tournaments/{tid}/rounds/1/close")
        assert r.status_code == 409, r.text
        detail = r.json()["detail"]
        assert "unfinished" in detail["message"] and "未完成" in detail["message"]
        assert [u["match"] for u in detail["undecided"]] == [m1, m2, m3]
        assert detail["undecided"][0]["status"] == "playing"
        assert set(detail["choices"]) == {"wait", "as_played", "forfeit_ew", "forfeit_ns", "void"}
        # Decisions for two of the three: still refused, naming the third; nothing recorded.
        r = c.post(
            f"/api/v1/tournaments/{tid}/rounds/1/close",
            json={
                "decisions": [
                    {"match": m1, "decision": "as_played"},
                    {"match": m2, "decision": "forfeit_ew"},
                ]
            },
        )
        assert r.status_code == 409 and [u["match"] for u in r.json()["detail"]["undecided"]] == [
            m3
        ]
        rnd = _round(c, tid, 1)
        assert rnd["status"] == "open" and rnd["changes"] == []
        assert all(m["decision"] is None for m in rnd["matches"])
        # A decision for a match of another round, or an unknown decision: 422, named.
        r = c.post(
            f"/api/v1/tournaments/{tid}/rounds/1/close",
            json={"decisions": [{"match": 999999, "decision": "void"}]},
        )
        assert r.status_code == 422 and "999999" in r.text
        r = c.post(
            f"/api/v1/tournaments/{tid}/rounds/1/close",
            json={"decisions": [{"match": m1, "decision": "forget"}]},
        )
        assert r.status_code == 422 and "decision" in r.text

        r = c.post(
            f"/api/v1/tournaments/{tid}/rounds/1/close",
            json={
                "reason": "time is up 时间到",
                "decisions": [
                    {"match": m1, "decision": "as_played"},
                    {"match": m2, "decision": "forfeit_ew", "reason": "pair 3 left"},
                    {"match": m3, "decision": "void"},
                ],
            },
        )
        assert r.status_code == 200, r.text
        rnd = _round(c, tid, 1)
        assert rnd["status"] == "closed"
        assert [(x["action"], x["reason"]) for x in rnd["changes"]] == [
            ("closed", "time is up 时间到")
        ]
        by_id = {m["id"]: m for m in rnd["matches"]}
        assert (by_id[m1]["decision"], by_id[m1]["result"], by_id[m1]["decided_by"]) == (
            "as_played",
            "NS",
            "decision",
        )
        assert (by_id[m2]["result"], by_id[m2]["decided_by"]) == ("NS", "decision")
        assert (by_id[m3]["result"], by_id[m3]["decided_by"]) == ("void", "decision")
        st = _standing(c, tid)
        # as played: NS (pair 2) won at 5 v 2; forfeit: pair 4 wins by the profile's 10 levels;
        # void: nothing for pairs 5 and 6.
        assert (st[2]["wins"], st[2]["level_diff"], st[1]["losses"], st[1]["level_diff"]) == (
            1,
            3,
            1,
            -3,
        )
        assert (st[4]["wins"], st[4]["level_diff"], st[3]["level_diff"]) == (1, 10, -10)
        assert st[5]["played"] == st[6]["played"] == 0 and st[5]["by_round"] == [None]
        # the public page says how each was decided
        board = c.get(f"/scoreboard/{tid}?lang=zh").text
        assert "(作废)" in board and "(按已打成绩)" in board and "弃权)" in board
        board = c.get(f"/scoreboard/{tid}?lang=en").text
        assert "(void)" in board and "(as played)" in board and " forfeit)" in board

        # Table 1 plays on after the decision: its events are kept under its match (the log is
        # the truth) but the decision stands.
        more = deal_events(tables[0], len(first), 2, "5", ["E", "S", "W", "N"], {})[1:-1]
        more.append(ev(tables[0], len(first) + len(more) + 1, "match_ended", 2, winner="EW"))
        r = _post(c, tokens[tables[0]], _stamp(more, m1))
        assert r.status_code == 200 and r.json()["missing"] == [], r.text
        assert _standing(c, tid)[2]["wins"] == 1
        m1_now = next(m for m in _round(c, tid, 1)["matches"] if m["id"] == m1)
        assert (m1_now["winner"], m1_now["result"]) == ("EW", "NS")

        # Closing a closed round again, or reopening without a reason: refused.
        assert c.post(f"/api/v1/tournaments/{tid}/rounds/1/close").status_code == 409
        r = c.post(f"/api/v1/tournaments/{tid}/rounds/1/reopen", json={"reason": " "})
        assert r.status_code == 422
        r = c.post(f"/api/v1/tournaments/{tid}/rounds/1/reopen", json={"reason": "wrong ruling"})
        assert r.status_code == 200, r.text
        # A new decision replaces the old one (both kept in the history).
        r = c.post(f"/api/v1/matches/{m3}/decision", json={"decision": "forfeit_ns"})
        assert r.status_code == 200, r.text
        assert [h["decision"] for h in r.json()["history"]] == ["void", "forfeit_ns"]
        assert _standing(c, tid)[5]["wins"] == 1
        rnd = _round(c, tid, 1)
        assert rnd["status"] == "open"
        assert [x["action"] for x in rnd["changes"]] == ["closed", "reopened"]
        # m1 finished at the table only after its decision: the decision may still change.
        r = c.post(f"/api/v1/matches/{m1}/decision", json={"decision": "void"})
        assert r.status_code == 200, r.text
        assert _standing(c, tid)[2]["played"] == 0
        assert c.post(f"/api/v1/tournaments/{tid}/rounds/1/close").status_code == 200


def test_late_events_of_a_round_stay_with_their_match(server: Server) -> None:
    t = new_tournament(server, tables=2, pairs=4)
    tid, (a1, a2), tokens = t["id"], t["tables"], t["tokens"]
    with server.client() as c:
        # Round 1 is decided by rulings (EW wins both), so the story is rounds 2 and 3.
        r = c.post(
            f"/api/v1/tournaments/{tid}/rounds",
            json={"pairings": [{"table": a1, "ew": 1, "ns": 4}, {"table": a2, "ew": 2, "ns": 3}]},
        )
        for m in r.json()["matches"]:
            assert c.post(f"/api/v1/matches/{m['id']}/override", json={"result": "ew"}).is_success
        assert c.post(f"/api/v1/tournaments/{tid}/rounds/1/close").status_code == 200
        r = c.post(
            f"/api/v1/tournaments/{tid}/rounds",
            json={"pairings": [{"table": a1, "ew": 1, "ns": 2}, {"table": a2, "ew": 3, "ns": 4}]},
        )
        assert r.status_code == 201, r.text
        m_a1, m_a2 = (m["id"] for m in r.json()["matches"])
        # The kiosks learn their match; only the table's token (or the admin) may ask.
        asg = c.get(
            f"/api/v1/tables/{a1}/assignment", headers={"Authorization": f"Bearer {tokens[a1]}"}
        ).json()
        assert asg["current"]["match_id"] == m_a1 and asg["current"]["round"] == 2
        assert asg["current"]["ew"]["number"] == 1 and asg["current"]["ns"]["number"] == 2
        # A2 plays its whole match; A1 one deal of it (EW up to 4).
        a2_events = deal_events(a2, 1, 1, "2", ["N", "E", "S", "W"], {"NS": "5", "EW": "2"})
        a2_events.append(ev(a2, len(a2_events) + 1, "match_ended", 1, winner="NS"))
        assert _post(c, tokens[a2], _stamp(a2_events, m_a2)).status_code == 200
        a1_first = deal_events(a1, 1, 1, "2", ["E", "S", "W", "N"], {"NS": "2", "EW": "4"})
        assert _post(c, tokens[a1], _stamp(a1_first, m_a1)).status_code == 200

        # Round 2 closed while A1 still plays: its match is let go on ("wait").
        r = c.post(
            f"/api/v1/tournaments/{tid}/rounds/2/close",
            json={"decisions": [{"match": m_a1, "decision": "wait"}]},
        )
        assert r.status_code == 200, r.text
        r = c.post(
            f"/api/v1/tournaments/{tid}/rounds",
            json={"pairings": [{"table": a1, "ew": 1, "ns": 3}, {"table": a2, "ew": 4, "ns": 2}]},
        )
        assert r.status_code == 201, r.text
        r3_a1, r3_a2 = (m["id"] for m in r.json()["matches"])
        asg = c.get(f"/api/v1/tables/{a1}/assignment").json()
        assert [q["match_id"] for q in asg["queue"]] == [m_a1, r3_a1]
        assert asg["current"]["match_id"] == m_a1 and asg["current"]["decision"] == "wait"

        # An event of A1 that names A2's match: refused, nothing of the request stored.
        seq = len(a1_first) + 1
        bad = [ev(a1, seq, "deal_started", 2, level="4", leader="E", match_id=m_a1)]
        bad.append(ev(a1, seq + 1, "pass", 2, seat="S", match_id=r3_a2))
        r = _post(c, tokens[a1], bad)
        assert r.status_code == 409, r.text
        (conflict,) = r.json()["detail"]["conflicts"]
        assert conflict["id"] == f"{a1}-{seq + 1}" and repr(a2) in conflict["reason"]
        r = _post(c, tokens[a1], [dict(bad[0], match_id=2**31 - 1)])
        assert r.status_code == 409 and "no match" in r.text
        assert c.get(f"/api/v1/tables/{a1}/missing").json()["max_seq"] == len(a1_first)

        # A1 catches up: the rest of its round-1 match, stamped with that match (one event
        # without a stamp, as an older kiosk sends it, goes to the same match: it is the
        # table's current one while it is let go on).
        rest = deal_events(a1, seq, 2, "4", ["W", "N", "E", "S"], {"NS": "2", "EW": "7"})
        legacy = rest.pop(2)
        rest = _stamp(rest, m_a1)
        rest.insert(2, legacy)
        rest.append(ev(a1, seq + len(rest), "match_ended", 2, winner="EW", match_id=m_a1))
        r = _post(c, tokens[a1], rest)
        assert r.status_code == 200 and r.json()["missing"] == [], r.text

        rounds = c.get(f"/api/v1/tournaments/{tid}/rounds").json()
        by_id = {m["id"]: m for rnd in rounds for m in rnd["matches"]}
        assert (by_id[m_a1]["status"], by_id[m_a1]["winner"], by_id[m_a1]["deals_played"]) == (
            "finished",
            "EW",
            2,
        )
        assert by_id[m_a1]["level_ew"] == "7" and by_id[m_a1]["result"] == "EW"
        # Round 3's match at A1 was never played: nothing credited to it.
        assert (by_id[r3_a1]["status"], by_id[r3_a1]["deals_played"]) == ("pending", 0)
        assert by_id[r3_a1]["winner"] is None and by_id[r3_a1]["result"] is None
        st = _standing(c, tid)
        assert (st[1]["points"], st[1]["by_round"]) == (4, [2, 2, None])
        assert st[3]["by_round"] == [0, 0, None] and st[3]["played"] == 2
        stored = c.get(f"/api/v1/tables/{a1}/events").json()
        assert len(stored) == len(a1_first) + len(rest)
        # The finished match leaves the queue: A1 now plays its round-3 match.
        asg = c.get(f"/api/v1/tables/{a1}/assignment").json()
        assert asg["current"]["match_id"] == r3_a1 and asg["current"]["round"] == 3


def test_admin_page_asks_a_decision_per_unfinished_match(server: Server) -> None:
    t = new_tournament(server, tables=2, pairs=4)
    tid, (a1, a2) = t["id"], t["tables"]
    page = f"/admin/{tid}"
    with server.client() as c:
        r = c.post(f"{page}/rounds", data={"mode": "manual", "pairings": f"{a1} 1 2\n{a2} 3 4"})
        assert r.status_code == 303, r.text
        m1, m2 = (m["id"] for m in _round(c, tid, 1)["matches"])
        html = c.get(page).text
        # The close form lists both matches with the choices, in both languages.
        assert f'name="decision_{m1}"' in html and f'name="decision_{m2}"' in html
        assert "结束第 1 轮" in html and "按已打成绩" in html and "score as played" in html
        # A form posted without the decisions (e.g. by a script): refused, the page says why.
        r = c.post(f"{page}/rounds/1/close", data={"reason": "end"})
        assert r.status_code == 409 and "unfinished" in r.text and "未完成" in r.text
        assert _round(c, tid, 1)["status"] == "open"
        r = c.post(
            f"{page}/rounds/1/close",
            data={"reason": "end", f"decision_{m1}": "wait", f"decision_{m2}": "forfeit_ns"},
        )
        assert r.status_code == 303, r.text
        rnd = _round(c, tid, 1)
        assert rnd["status"] == "closed"
        assert {m["id"]: m["decision"] for m in rnd["matches"]} == {m1: "wait", m2: "forfeit_ns"}
        # The match left to go on gets its own decision form; a reopen needs a reason.
        html = c.get(page).text
        assert f"/matches/{m1}/decision" in html and "重新开放" in html
        r = c.post(f"{page}/matches/{m1}/decision", data={"decision": "void", "reason": "left"})
        assert r.status_code == 303
        r = c.post(f"{page}/rounds/1/reopen", data={"reason": ""})
        assert r.status_code == 422 and "reason" in r.text
        r = c.post(f"{page}/rounds/1/reopen", data={"reason": "score entered wrong"})
        assert r.status_code == 303
        rnd = _round(c, tid, 1)
        assert rnd["status"] == "open" and rnd["changes"][-1]["reason"] == "score entered wrong"
        assert "score entered wrong" in c.get(page).text


def test_two_tournaments_may_each_have_a_table_a1(server: Server) -> None:
    with server.client() as c:
        tids, tokens, keys = [], [], []
        for n in (1, 2):
            r = c.post("/api/v1/tournaments", json={"name": f"Cup {n}", "lots_seed": n})
            tid = r.json()["id"]
            for name in ("P1", "P2"):
                c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": name})
            r = c.post(f"/api/v1/tournaments/{tid}/tables", json={"id": "SAME1"})
            if r.status_code == 409 and n == 1:  # left over by the other database's run
                r = c.post(f"/api/v1/tournaments/{tid}/tables", json={"id": "SAME2"})
            assert r.status_code == 201, r.text
            tids.append(tid)
            tokens.append(r.json()["token"])
            keys.append(r.json()["id"])
        code = c.get(f"/api/v1/tournaments/{tids[0]}/tables").json()[0]["code"]
        if code != "SAME1":  # a rerun on the same database: make the clash anew
            r = c.post(f"/api/v1/tournaments/{tids[1]}/tables", json={"id": code})
            assert r.status_code == 201, r.text
            tokens[1], keys[1] = r.json()["token"], r.json()["id"]
        # The same code twice in one tournament: refused.
        r = c.post(f"/api/v1/tournaments/{tids[0]}/tables", json={"id": code})
        assert r.status_code == 409 and "exists already" in r.text
        assert keys[0] != keys[1] and code in keys[1]
        tables = c.get(f"/api/v1/tournaments/{tids[1]}/tables").json()
        assert [(x["id"], x["code"]) for x in tables][-1] == (keys[1], code)
        # Each tournament pairs its own table by the code and gets its own match.
        mids = []
        for tid in tids:
            r = c.post(
                f"/api/v1/tournaments/{tid}/rounds",
                json={"pairings": [{"table": code, "ew": 1, "ns": 2}]},
            )
            assert r.status_code == 201, r.text
            mids.append(r.json()["matches"][0]["id"])
        for i in (0, 1):
            auth = {"Authorization": f"Bearer {tokens[i]}"}
            asg = c.get(f"/api/v1/tables/{code}/assignment", headers=auth).json()
            assert asg["current"]["match_id"] == mids[i] and asg["table"] == keys[i]
            winner = "NS" if i == 0 else "EW"
            evs = [
                ev(code, 1, "deal_started", 1, level="2", leader="S", match_id=mids[i]),
                ev(code, 2, "match_ended", 1, winner=winner, match_id=mids[i]),
            ]
            r = c.post("/api/v1/events/batch", json=evs, headers=auth)
            assert r.status_code == 200, r.text
            assert r.json()["accepted"] == [f"{code}-1", f"{code}-2"]
            # The other tournament's match is not this table's.
            r = c.post(
                "/api/v1/events",
                json=ev(code, 3, "pass", 1, seat="S", match_id=mids[1 - i]),
                headers=auth,
            )
            assert r.status_code == 409
            got = c.get(f"/api/v1/tables/{code}/events", headers=auth).json()
            assert [e["match_id"] for e in got] == [mids[i], mids[i]]
        for i, tid in enumerate(tids):
            (m,) = c.get(f"/api/v1/tournaments/{tid}/rounds").json()[0]["matches"]
            assert m["winner"] == ("NS" if i == 0 else "EW")
        # Without a token a URL names a table by its key: the first table keeps the plain code.
        first = c.get(f"/api/v1/tables/{code}/events").json()
        second = c.get(f"/api/v1/tables/{keys[1]}/events").json()
        assert [e["match_id"] for e in first] == [mids[0]] * 2
        assert [e["match_id"] for e in second] == [mids[1]] * 2
        assert c.get("/api/v1/tables/NOPE-X/events").status_code == 404


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_migrations_keep_the_data_of_an_older_database(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A scoreboard database made before match-scoped events upgrades with its data: tables get
    their code, events keep their match, and ids become unique per table."""
    from sqlalchemy import text

    from kiosk.scoreboard.db import current_revision, make_engine, upgrade
    from kiosk.scoreboard.settings import normalise_db_url

    if backend == "sqlite":
        url = normalise_db_url(str(tmp_path / "old.db"))
    else:
        url = normalise_db_url(request.getfixturevalue("pg_schema_url"))
        url = url.replace("search_path%3D", "search_path%3Dmig_")
        import psycopg

        schema = url.split("search_path%3D", 1)[1]
        base = url.split("?", 1)[0].replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            conn.execute(f'CREATE SCHEMA "{schema}"')
    engine = make_engine(url)
    try:
        upgrade(engine, "0001")
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO tournament (id, name, profile, lots_seed, created_at) "
                    "VALUES (1, 'old', 'swiss-421', 1, CURRENT_TIMESTAMP)"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO game_table (id, tournament_id, name, position, token_hash, "
                    "created_at) VALUES ('A1', 1, 'A1', 1, 'h1', CURRENT_TIMESTAMP)"
                )
            )
            for sql in (
                "INSERT INTO pair (id, tournament_id, number, name, players, club) "
                "VALUES (1, 1, 1, 'p1', '', ''), (2, 1, 2, 'p2', '', '')",
                "INSERT INTO round (id, tournament_id, number, status, created_at) "
                "VALUES (1, 1, 1, 'open', CURRENT_TIMESTAMP)",
                "INSERT INTO match (id, round_id, table_id, pair_ew_id, pair_ns_id, status, "
                "level_ns, level_ew, deals_played, fouls_ns, fouls_ew) "
                "VALUES (1, 1, 'A1', 1, 2, 'playing', '2', '2', 0, 0, 0)",
                "INSERT INTO deal (id, match_id, number, ended) VALUES (1, 1, 1, false)",
                "INSERT INTO event (id, table_id, seq, deal, t, type, match_id, body, digest, "
                "received_at) VALUES ('e1', 'A1', 1, 1, 0.0, 'pass', 1, '{}', 'd', "
                "CURRENT_TIMESTAMP)",
            ):
                conn.execute(text(sql))
        upgrade(engine)
        assert current_revision(engine) == "0010"
        with engine.begin() as conn:
            assert conn.execute(text("SELECT code FROM game_table")).scalar() == "A1"
            assert conn.execute(text("SELECT match_id FROM event")).all() == [(1,)]
            assert conn.execute(text("SELECT count(*) FROM deal")).scalar() == 1
            assert conn.execute(text("SELECT decision FROM match")).all() == [(None,)]
            # 0008: a tournament from before formats is Swiss
            assert conn.execute(text("SELECT format FROM tournament")).all() == [("swiss",)]
            conn.execute(
                text(
                    "INSERT INTO tournament (id, name, profile, lots_seed, created_at) "
                    "VALUES (2, 'new', 'swiss-421', 2, CURRENT_TIMESTAMP)"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO game_table (id, code, tournament_id, name, position, "
                    "token_hash, created_at) VALUES ('A1~2', 'A1', 2, 'A1', 1, 'h2', "
                    "CURRENT_TIMESTAMP)"
                )
            )
            # The same event id at another table: fine now; twice at one table: refused.
            conn.execute(
                text(
                    "INSERT INTO event (id, table_id, seq, deal, t, type, body, digest, "
                    "received_at) VALUES ('e1', 'A1~2', 1, 1, 0.0, 'pass', '{}', 'd', "
                    "CURRENT_TIMESTAMP)"
                )
            )
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO event (id, table_id, seq, deal, t, type, body, digest, "
                    "received_at) VALUES ('e1', 'A1', 2, 1, 0.0, 'pass', '{}', 'd', "
                    "CURRENT_TIMESTAMP)"
                )
            )
    finally:
        engine.dispose()
