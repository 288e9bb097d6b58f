"""Ingestion against a real server, on SQLite and PostgreSQL: auth, idempotency, 422 field
names, seq gaps, results derived from the events, live stream."""

from __future__ import annotations

import json

import httpx

from .helpers import Server, ev, match_events, new_tournament


def test_single_event_stored_once_and_retry_is_ok(server: Server) -> None:
    t = new_tournament(server)
    table = t["tables"][0]
    e = ev(table, 1, "deal_started", level="2", leader="S")
    with server.client(t["tokens"][table]) as c:
        first = c.post("/api/v1/events", json=e)
        assert first.status_code == 200, first.text
        assert first.json()["accepted"] == [e["id"]]
        again = c.post("/api/v1/events", json=e)
        assert again.status_code == 200
        assert again.json()["accepted"] == [] and again.json()["duplicates"] == [e["id"]]
        stored = c.get(f"/api/v1/tables/{table}/events").json()
    assert [s["id"] for s in stored] == [e["id"]]


def test_same_id_other_content_is_409_and_nothing_stored(server: Server) -> None:
    t = new_tournament(server)
    table = t["tables"][0]
    with server.client(t["tokens"][table]) as c:
        assert c.post("/api/v1/events", json=ev(table, 1, "pass", seat="S")).status_code == 200
        changed = ev(table, 1, "pass", seat="E")
        r = c.post("/api/v1/events", json=changed)
        assert r.status_code == 409
        assert r.json()["detail"]["conflicts"][0]["id"] == changed["id"]
        # A batch holding one conflicting event stores none of the others either.
        batch = [ev(table, 2, "pass", seat="N"), changed]
        r = c.post("/api/v1/events/batch", json=batch)
        assert r.status_code == 409
        # Same seq under another id is a conflict too.
        other = dict(ev(table, 1, "pass", seat="S"), id="someone-else")
        r = c.post("/api/v1/events", json=other)
        assert r.status_code == 409 and "seq 1" in json.dumps(r.json())
        stored = c.get(f"/api/v1/tables/{table}/events").json()
    assert [s["seq"] for s in stored] == [1]
    assert stored[0]["seat"] == "S"


def test_auth_errors(server: Server) -> None:
    t = new_tournament(server, tables=2)
    a, b = t["tables"]
    e = ev(a, 1, "pass", seat="S")
    with server.client() as c:
        r = c.post("/api/v1/events", json=e)
        assert r.status_code == 401 and "missing table token" in r.json()["detail"]
        r = c.post("/api/v1/events", json=e, headers={"Authorization": "Bearer nope"})
        assert r.status_code == 401 and "invalid table token" in r.json()["detail"]
        r = c.post("/api/v1/events", json=e, headers={"Authorization": f"Bearer {t['tokens'][b]}"})
        assert r.status_code == 403 and f"table {a!r}" in r.json()["detail"]
        # Batch mixing the caller's table and another table: 403, nothing stored.
        mixed = [ev(b, 1, "pass", seat="S"), ev(a, 2, "pass", seat="S")]
        r = c.post(
            "/api/v1/events/batch",
            json=mixed,
            headers={"Authorization": f"Bearer {t['tokens'][b]}"},
        )
        assert r.status_code == 403
        r = c.post(
            "/api/v1/events",
            json=ev("NoSuchTable", 1, "pass", seat="S"),
            headers={"Authorization": f"Bearer {t['tokens'][a]}"},
        )
        assert r.status_code == 404 and "unknown table 'NoSuchTable'" in r.json()["detail"]
        assert c.get(f"/api/v1/tables/{b}/events").json() == []


def test_rotated_token_stops_working(server: Server) -> None:
    t = new_tournament(server)
    table = t["tables"][0]
    old = t["tokens"][table]
    with server.client() as c:
        new = c.post(f"/api/v1/tables/{table}/token").json()["token"]
        r = c.post(
            "/api/v1/events",
            json=ev(table, 1, "pass", seat="S"),
            headers={"Authorization": f"Bearer {old}"},
        )
        assert r.status_code == 401
        r = c.post(
            "/api/v1/events",
            json=ev(table, 1, "pass", seat="S"),
            headers={"Authorization": f"Bearer {new}"},
        )
        assert r.status_code == 200


def test_422_names_the_field(server: Server) -> None:
    t = new_tournament(server)
    table = t["tables"][0]
    cases = [
        ({k: v for k, v in ev(table, 1, "pass", seat="S").items() if k != "seq"}, "'seq'"),
        (ev(table, 1, "pass", seat="X"), "'seat'"),
        (ev(table, 1, "play", seat="S", cards=["S3", "Z9"]), "'cards'"),
        (ev(table, 1, "bogus"), "'type'"),
        (dict(ev(table, 1, "pass", seat="S"), v=2), "'v'"),
        (dict(ev(table, 1, "pass", seat="S"), seq="one"), "'seq'"),
        (
            ev(table, 1, "deal_ended", order=["S", "S", "E", "W"], levels={"NS": "3", "EW": "2"}),
            "'order'",
        ),
        (
            ev(table, 1, "deal_ended", order=["S", "N", "E", "W"], levels={"NS": "Z", "EW": "2"}),
            "'levels.NS'",
        ),
        (ev(table, 1, "foul", seat="S", kind="rude"), "'kind'"),
        (ev(table, 1, "match_ended", winner="NE"), "'winner'"),
        (ev(table, 1, "tribute", to="S", card="HA"), "'from'"),
    ]
    with server.client(t["tokens"][table]) as c:
        for body, field in cases:
            r = c.post("/api/v1/events", json=body)
            assert r.status_code == 422, (body, r.text)
            assert field in r.json()["message"], (field, r.json()["message"])
        r = c.post(
            "/api/v1/events/batch", json=[ev(table, 1, "pass", seat="S"), ev(table, 2, "pass")]
        )
        assert r.status_code == 422 and "events[1].seat" in r.json()["message"]
        r = c.post(
            "/api/v1/events", content=b"{not json", headers={"content-type": "application/json"}
        )
        assert r.status_code == 422
        r = c.post("/api/v1/events", json=ev(table, 1, "pass", seat="S", note="a\u0000b"))
        assert r.status_code == 422 and "note" in json.dumps(r.json())
        assert c.get(f"/api/v1/tables/{table}/events").json() == []


def test_extra_fields_kept_and_cards_canonical(server: Server) -> None:
    t = new_tournament(server)
    table = t["tables"][0]
    e = ev(table, 1, "play", seat="S", cards="h10 s3", combo={"kind": "pair"}, camera="cam0")
    with server.client(t["tokens"][table]) as c:
        assert c.post("/api/v1/events", json=e).status_code == 200
        stored = c.get(f"/api/v1/tables/{table}/events").json()[0]
        assert stored["cards"] == ["HT", "S3"] and stored["camera"] == "cam0"
        # Same event in other notation is the same content: a duplicate, not a conflict.
        same = dict(e, cards=["HT", "S3"])
        r = c.post("/api/v1/events", json=same)
        assert r.status_code == 200 and r.json()["duplicates"] == [e["id"]]


def test_seq_gaps_reported_and_filled(server: Server) -> None:
    t = new_tournament(server)
    table = t["tables"][0]
    evs = [ev(table, s, "pass", seat="SENW"[s % 4]) for s in range(1, 11)]
    with server.client(t["tokens"][table]) as c:
        r = c.post("/api/v1/events/batch", json=[e for e in evs if e["seq"] not in (3, 7, 8)])
        body = r.json()
        assert r.status_code == 200
        assert body["missing"] == [3, 7, 8] and body["missing_count"] == 3 and body["max_seq"] == 10
        m = c.get(f"/api/v1/tables/{table}/missing").json()
        assert m == {
            "table": table,
            "max_seq": 10,
            "stored": 7,
            "missing": [3, 7, 8],
            "missing_count": 3,
        }
        r = c.post("/api/v1/events/batch", json=[evs[2], evs[6], evs[7], evs[0]])
        assert r.json()["missing"] == [] and r.json()["accepted"] == [
            evs[2]["id"],
            evs[6]["id"],
            evs[7]["id"],
        ]
        assert r.json()["duplicates"] == [evs[0]["id"]]
        seqs = [e["seq"] for e in c.get(f"/api/v1/tables/{table}/events").json()]
    assert seqs == list(range(1, 11))


def test_results_standings_and_exports_from_events(server: Server) -> None:
    t = new_tournament(server, tables=2, pairs=4)
    tid = t["id"]
    t1, t2 = t["tables"]
    with server.client() as c:
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})  # Swiss round 1: 1-2, 3-4
        assert r.status_code == 201, r.text
        matches = r.json()["matches"]
        assert [(m["table"], m["ew"], m["ns"]) for m in matches] == [(t1, 1, 2), (t2, 3, 4)]
    # Table 1: NS (pair 2) wins at A against 5. Table 2: EW (pair 3) wins 9 to 4.
    with server.client(t["tokens"][t1]) as c:
        r = c.post("/api/v1/events/batch", json=match_events(t1, "NS", {"NS": "A", "EW": "5"}))
        assert r.status_code == 200, r.text
    with server.client(t["tokens"][t2]) as c:
        evs = match_events(t2, "EW", {"NS": "4", "EW": "9"}, deals=3)
        for e in evs:  # one by one, as a kiosk outbox would
            assert c.post("/api/v1/events", json=e).status_code == 200
    with server.client() as c:
        rounds = c.get(f"/api/v1/tournaments/{tid}/rounds").json()
        m1, m2 = rounds[0]["matches"]
        assert (m1["status"], m1["winner"], m1["level_ns"], m1["level_ew"]) == (
            "finished",
            "NS",
            "A",
            "5",
        )
        assert (m2["winner"], m2["deals_played"]) == ("EW", 3)
        st = c.get(f"/api/v1/tournaments/{tid}/standings").json()["standings"]
        # Pair 2: +9 levels; pair 3: +5; both 2 points -> pair 2 first on 级差分.
        assert [(s["pair"], s["points"], s["level_diff"]) for s in st] == [
            (2, 2, 9),
            (3, 2, 5),
            (4, 0, -5),
            (1, 0, -9),
        ]
        csv_text = c.get(f"/api/v1/tournaments/{tid}/standings.csv").text
        lines = csv_text.strip().splitlines()
        assert lines[0].startswith("rank,pair,name,played")
        assert lines[1].split(",")[:2] == ["1", "2"]
        export = c.get(f"/api/v1/tournaments/{tid}/export.json").json()
        assert len(export["deals"]) == 5 and export["standings"] == st
        state = c.get(f"/api/v1/tables/{t2}/state").json()
        assert state["match_over"] and state["winner"] == "EW" and state["levels"]["EW"] == "9"
        # Round 2 by Swiss: 2 v 3 (leaders), 4 v 1; no rematch.
        c.post(f"/api/v1/tournaments/{tid}/rounds/1/close")
        r2 = c.post(f"/api/v1/tournaments/{tid}/rounds", json={}).json()
        assert [(m["ew"], m["ns"]) for m in r2["matches"]] == [(2, 3), (4, 1)]


def test_correction_replaces_a_result(server: Server) -> None:
    t = new_tournament(server, tables=1, pairs=2)
    tid, table = t["id"], t["tables"][0]
    with server.client() as c:
        c.post(
            f"/api/v1/tournaments/{tid}/rounds",
            json={"pairings": [{"table": table, "ew": 1, "ns": 2}]},
        )
    evs = match_events(table, "NS", {"NS": "A", "EW": "3"}, deals=1)
    end = evs[-1]
    fix = ev(
        table,
        end["seq"] + 1,
        "correction",
        deal=end["deal"],
        replaces=end["id"],
        by={"type": "match_ended", "winner": "EW"},
    )
    with server.client(t["tokens"][table]) as c:
        assert c.post("/api/v1/events/batch", json=evs + [fix]).status_code == 200
    with server.client() as c:
        m = c.get(f"/api/v1/tournaments/{tid}/rounds").json()[0]["matches"][0]
        assert m["winner"] == "EW"
        # An admin override wins over the events.
        assert (
            c.post(f"/api/v1/matches/{m['id']}/override", json={"result": "ns_no_show"}).status_code
            == 200
        )
        st = c.get(f"/api/v1/tournaments/{tid}/standings").json()["standings"]
        assert [(s["pair"], s["points"]) for s in st] == [(1, 2), (2, 0)]


def test_live_stream_snapshot_then_updates(server: Server) -> None:
    t = new_tournament(server, tables=1, pairs=2)
    tid, table = t["id"], t["tables"][0]
    with server.client() as c:
        c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
    evs = match_events(table, "NS", {"NS": "6", "EW": "2"}, deals=1)
    with server.client(t["tokens"][table]) as c:
        c.post("/api/v1/events/batch", json=evs[:3])
    seen: list[tuple[str, dict]] = []
    with (
        httpx.Client(base_url=server.url, timeout=10) as c,
        c.stream("GET", "/api/v1/stream", params={"tournament": tid}) as resp,
    ):
        assert resp.headers["content-type"].startswith("text/event-stream")
        lines = resp.iter_lines()
        kind = None
        posted = False
        for line in lines:
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind:
                seen.append((kind, json.loads(line[6:])))
                if kind == "snapshot" and not posted:
                    snap = seen[-1][1]
                    assert snap["tables"][0]["last_seq"] == 3
                    with server.client(t["tokens"][table]) as k:
                        assert k.post("/api/v1/events/batch", json=evs[3:]).status_code == 200
                    posted = True
                if kind == "standings":
                    break
    kinds = [k for k, _ in seen]
    assert kinds[0] == "snapshot" and "table" in kinds and kinds[-1] == "standings"
    last_table = [d for k, d in seen if k == "table"][-1]
    assert last_table["match_over"] and last_table["winner"] == "NS"
    assert seen[-1][1]["standings"][0]["level_diff"] == 4
    # Reconnect: the snapshot has the whole state.
    with httpx.Client(base_url=server.url, timeout=10) as c:
        text = c.get("/api/v1/stream", params={"tournament": tid, "once": "true"}).text
    snap = json.loads(text.split("data: ", 1)[1].split("\n", 1)[0])
    assert snap["tables"][0]["winner"] == "NS" and snap["standings"][0]["points"] == 2


def test_openapi_served(server: Server) -> None:
    spec = httpx.get(server.url + "/openapi.json").json()
    assert "/api/v1/events" in spec["paths"] and "/api/v1/events/batch" in spec["paths"]


def test_largest_batch_and_too_large(server: Server) -> None:
    t = new_tournament(server)
    table = t["tables"][0]
    evs = [ev(table, s, "play", seat="SENW"[s % 4], cards=["S3"]) for s in range(1, 1002)]
    with server.client(t["tokens"][table]) as c:
        r = c.post("/api/v1/events/batch", json=evs)
        assert r.status_code == 422 and "1000" in r.json()["message"]
        r = c.post("/api/v1/events/batch", json=evs[:1000])
        assert r.status_code == 200 and len(r.json()["accepted"]) == 1000
        assert r.json()["max_seq"] == 1000 and r.json()["missing"] == []
        r = c.post("/api/v1/events/batch", json=evs[500:])
        assert r.json()["accepted"] == [evs[1000]["id"]] and len(r.json()["duplicates"]) == 500


def test_events_before_the_round_join_its_match(server: Server) -> None:
    t = new_tournament(server, tables=1, pairs=2)
    tid, table = t["id"], t["tables"][0]
    evs = match_events(table, "EW", {"NS": "3", "EW": "8"}, deals=1)
    with server.client(t["tokens"][table]) as c:
        assert c.post("/api/v1/events/batch", json=evs[:4]).status_code == 200
    with server.client() as c:
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
        assert r.status_code == 201
    with server.client(t["tokens"][table]) as c:
        assert c.post("/api/v1/events/batch", json=evs[4:]).status_code == 200
    with server.client() as c:
        m = c.get(f"/api/v1/tournaments/{tid}/rounds").json()[0]["matches"][0]
        assert (m["status"], m["winner"], m["level_ew"], m["deals_played"]) == (
            "finished",
            "EW",
            "8",
            1,
        )
        state = c.get(f"/api/v1/tables/{table}/state").json()
        assert state["events"] == len(evs) and state["match_id"] == m["id"]


def test_a_round_lost_on_fouls_shows_the_counted_result(server: Server) -> None:
    """NS win at the table but commit three fouls (swiss-421: the round is lost, 10:-10): the
    rounds API, the public board and the admin page show the result the standings count, not the
    table's winner alone."""
    t = new_tournament(server, tables=2, pairs=4)
    tid = t["id"]
    t1, t2 = t["tables"]
    with server.client() as c:
        assert c.post(f"/api/v1/tournaments/{tid}/rounds", json={}).status_code == 201
    fouled = match_events(t1, "NS", {"NS": "A", "EW": "5"}, fouls=["N", "S", "N"])
    with server.client(t["tokens"][t1]) as c:
        assert c.post("/api/v1/events/batch", json=fouled).status_code == 200
    with server.client(t["tokens"][t2]) as c:
        evs = match_events(t2, "EW", {"NS": "4", "EW": "9"})
        assert c.post("/api/v1/events/batch", json=evs).status_code == 200
    with server.client() as c:
        m1, m2 = c.get(f"/api/v1/tournaments/{tid}/rounds").json()[0]["matches"]
        assert (m1["winner"], m1["fouls_ns"], m1["result"], m1["decided_by"]) == (
            "NS",
            3,
            "EW",
            "fouls",
        )
        assert (m2["winner"], m2["result"], m2["decided_by"]) == ("EW", "EW", "events")
        st = {
            s["pair"]: s for s in c.get(f"/api/v1/tournaments/{tid}/standings").json()["standings"]
        }
        assert (st[1]["points"], st[1]["level_diff"]) == (2, 10)  # pair 1 (EW) gets the round
        board = c.get(f"/scoreboard/{tid}", params={"lang": "en"}).text
        assert "won <small>(foul limit)</small>" in board
        assert "胜 <small>(犯规满限)</small>" in c.get(f"/scoreboard/{tid}?lang=zh").text
        admin = c.get(f"/admin/{tid}").text
        assert "<td>NS</td><td>EW <small>(fouls 犯规)</small></td>" in admin
        # an admin ruling wins over both, and says so
        r = c.post(f"/api/v1/matches/{m1['id']}/override", json={"result": "ns"})
        assert r.status_code == 200, r.text
        m1 = c.get(f"/api/v1/tournaments/{tid}/rounds").json()[0]["matches"][0]
        assert (m1["result"], m1["decided_by"]) == ("NS", "override")
        assert "won <small>(ruling)</small>" in c.get(f"/scoreboard/{tid}?lang=en").text
