"""The kiosk's outbox stamps every event with its match (issue 42), against a real scoreboard
process (SQLite and PostgreSQL) and a real kiosk log (kiosk/table/store.py) filled by the
referee from a simulated game of two matches (``six-deal-points``: a match is six deals).

The kiosk starts before any round is open (its events are held, not sent), learns its match
when the round opens, then loses the link while the organiser closes the round with its match
still being played ("wait") and opens the next one: after the link returns, the rest of the
first match goes to the round-1 match and the second match to round 2's, never the reverse. A
kiosk whose events name another table's match gets them refused and keeps them, with the
reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from engine.observations import Observation
from engine.profiles import load_profile
from engine.referee import Referee
from engine.sim import simulate
from kiosk.table.outbox import HELD, Outbox
from kiosk.table.store import EventLog
from kiosk.table.worker import CONTRACT_TYPES

from .helpers import Server, new_tournament

PROFILE = "six-deal-points"


def _feed(store: EventLog, ref: Referee, obs: list[Observation]) -> None:
    for o in obs:
        store.append("source", o, ref.feed(o), deliverable=set(CONTRACT_TYPES))


def _drain(ob: Outbox, steps: int = 60) -> None:
    """Run the outbox until nothing is pending (the test drives it instead of its thread)."""
    for _ in range(steps):
        ob._step()
        if not ob.store.outbox_counts()["pending"]:
            return
    raise AssertionError(f"outbox not drained: {ob.status()}")


def _events(c: httpx.Client, table: str) -> list[dict[str, Any]]:
    return c.get(f"/api/v1/tables/{table}/events", params={"limit": 5000}).json()


def test_outbox_files_each_match_of_the_log_by_its_assignment(
    server: Server, tmp_path: Path
) -> None:
    t = new_tournament(server, tables=2, pairs=4)
    tid, (a1, a2), tokens = t["id"], t["tables"], t["tokens"]
    obs = list(simulate(load_profile(PROFILE), deals=8, seed=3).observations)
    store = EventLog(tmp_path / "a1.db", table=a1, profile=PROFILE)
    ref = Referee(load_profile(PROFILE), table=a1)
    ob = Outbox(store, server.url, tokens[a1], table=a1, assign_check_s=0.0)

    # No round open: the events are kept, not sent, and the outbox says why.
    _feed(store, ref, obs[:300])
    _drain(ob)
    assert ob.match_scoped is True
    held = store.outbox_counts().get(HELD, 0)
    assert held > 0 and ob.status()["held"] == held and ob.status()["match"] is None
    with server.client() as c:
        assert _events(c, a1) == []
        r = c.post(
            f"/api/v1/tournaments/{tid}/rounds",
            json={"pairings": [{"table": a1, "ew": 1, "ns": 2}, {"table": a2, "ew": 3, "ns": 4}]},
        )
        m1, m2 = (m["id"] for m in r.json()["matches"])
    _drain(ob)
    assert store.outbox_counts().get(HELD, 0) == 0 and ob.status()["match"]["match_id"] == m1
    with server.client() as c:
        sent = _events(c, a1)
        assert len(sent) == held and {e["match_id"] for e in sent} == {m1}

        # The link drops; meanwhile round 1 is closed with A1's match going on, round 2 opens.
        r = c.post(
            f"/api/v1/tournaments/{tid}/rounds/1/close",
            json={
                "decisions": [
                    {"match": m1, "decision": "wait"},
                    {"match": m2, "decision": "void", "reason": "no kiosk at A2"},
                ]
            },
        )
        assert r.status_code == 200, r.text
        r = c.post(
            f"/api/v1/tournaments/{tid}/rounds",
            json={"pairings": [{"table": a1, "ew": 1, "ns": 3}, {"table": a2, "ew": 2, "ns": 4}]},
        )
        m3, m4 = (m["id"] for m in r.json()["matches"])
    _feed(store, ref, obs[300:])  # the rest of match 1 and two deals of match 2
    end = next(e.seq for e in store.events() if e.type == "match_ended")
    _drain(ob)
    counts = store.outbox_counts()
    assert (counts["pending"], counts.get(HELD, 0), counts["rejected"]) == (0, 0, 0)
    with server.client() as c:
        stored = _events(c, a1)
        assert len(stored) == counts["sent"]
        assert {e["match_id"] for e in stored if e["seq"] <= end} == {m1}
        assert {e["match_id"] for e in stored if e["seq"] > end} == {m3}
        rounds = c.get(f"/api/v1/tournaments/{tid}/rounds").json()
        by_id = {m["id"]: m for rnd in rounds for m in rnd["matches"]}
        winner = next(e.data["winner"] for e in store.events() if e.type == "match_ended")
        assert (by_id[m1]["status"], by_id[m1]["winner"]) == ("finished", winner)
        assert by_id[m3]["status"] == "playing" and by_id[m3]["winner"] is None
        missing = c.get(f"/api/v1/tables/{a1}/missing").json()["missing"]
        assert missing == sorted(store.local_seqs())[: len(missing)]

    # A kiosk whose log says its match is A1's (a wrong table id in its settings, say): every
    # event is refused, kept here with the scoreboard's reason, and nothing is stored there.
    store2 = EventLog(tmp_path / "a2.db", table=a2, profile=PROFILE)
    store2.note("assignment", {"segment": 0, "match_id": m3, "round": 2})
    ref2 = Referee(load_profile(PROFILE), table=a2)
    _feed(store2, ref2, obs[:20])
    ob2 = Outbox(store2, server.url, tokens[a2], table=a2, assign_check_s=0.0)
    _drain(ob2)
    counts2 = store2.outbox_counts()
    assert counts2["rejected"] > 0 and counts2["sent"] == 0
    (seq, reason), *_ = store2.outbox_rejected()
    assert "HTTP 409" in reason and f"match {m3} is played at table {a1!r}" in reason
    assert len(store2.events()) >= counts2["rejected"]  # the log keeps every event
    with server.client() as c:
        assert _events(c, a2) == []
        asg = c.get(f"/api/v1/tables/{a2}/assignment").json()
        assert asg["current"]["match_id"] == m4
