"""kill -9 of the scoreboard mid-ingest, restart on the same database, re-post everything the
kiosk had not seen acknowledged (here: everything): every event is at the centre exactly once."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from .helpers import Server, ev, new_tournament


def test_kill9_mid_ingest_then_repost_exactly_once(db_url: str, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    srv = Server(db_url, log=log).start()
    try:
        t = new_tournament(srv, tables=3)
        streams = {
            table: [
                ev(table, s, "pass", seat="SENW"[s % 4], deal=1 + s // 50) for s in range(1, 601)
            ]
            for table in t["tables"]
        }
        acked: dict[str, set[str]] = {table: set() for table in t["tables"]}
        started = threading.Event()

        def kiosk(table: str) -> None:
            evs = streams[table]
            with httpx.Client(
                base_url=srv.url,
                timeout=5,
                headers={"Authorization": f"Bearer {t['tokens'][table]}"},
            ) as c:
                i = 0
                while i < len(evs):
                    chunk = evs[i : i + 7] if i % 2 else evs[i : i + 1]
                    try:
                        r = c.post("/api/v1/events/batch", json=chunk)
                    except httpx.HTTPError:
                        return  # the server died: the outbox keeps the rest
                    if r.status_code != 200:
                        return
                    acked[table].update(r.json()["accepted"] + r.json()["duplicates"])
                    started.set()
                    i += len(chunk)

        threads = [threading.Thread(target=kiosk, args=(tb,)) for tb in t["tables"]]
        for th in threads:
            th.start()
        assert started.wait(30)
        # Let some batches land, then kill -9 while the kiosks are still posting.
        deadline = time.monotonic() + 60
        while sum(len(a) for a in acked.values()) < 150 and time.monotonic() < deadline:
            time.sleep(0.005)
        srv.kill9()
        for th in threads:
            th.join(30)
        total_acked = sum(len(a) for a in acked.values())
        assert 0 < total_acked < 1800, "the kill must land mid-ingest"

        srv2 = Server(db_url, log=log)
        srv2.port = srv.port
        srv2.url = srv.url
        srv2.start()
        try:
            for table, evs in streams.items():
                with srv2.client(t["tokens"][table]) as c:
                    # What was acknowledged before the crash must have survived it.
                    stored = {
                        e["id"]
                        for e in c.get(
                            f"/api/v1/tables/{table}/events", params={"limit": 5000}
                        ).json()
                    }
                    assert acked[table] <= stored
                    # The kiosk re-posts everything (its outbox), in batches with overlaps.
                    for i in range(0, len(evs), 50):
                        r = c.post("/api/v1/events/batch", json=evs[max(0, i - 10) : i + 50])
                        assert r.status_code == 200, r.text
                    assert r.json()["missing"] == []
                    got = c.get(f"/api/v1/tables/{table}/events", params={"limit": 5000}).json()
                    assert [e["id"] for e in got] == [e["id"] for e in evs]
                    assert [e["seq"] for e in got] == list(range(1, 601))
        finally:
            srv2.stop()
    finally:
        srv.stop()
