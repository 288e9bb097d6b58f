"""Hall health (issue 42): kiosks report, the scoreboard judges ok / degraded / offline, keeps a
bounded history and offers it as a grid page, JSON and Prometheus ``/metrics``.

Against a real scoreboard process on SQLite and PostgreSQL; a real kiosk (``build_kiosk`` with a
simulated game) reports on its own; the Prometheus text is read with ``prometheus_client``'s own
parser.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text

from kiosk.scoreboard.db import make_engine
from kiosk.scoreboard.health import judge
from kiosk.scoreboard.settings import normalise_db_url
from kiosk.table.health import HealthReporter, cpu_temperature

from .helpers import Server, new_tournament

GOOD: dict[str, Any] = {
    "v": 1,
    "source": "camera",
    "camera_state": "live",
    "fps": 14.8,
    "since_frame_s": 0.1,
    "since_event_s": 3.0,
    "events": 120,
    "pending": 0,
    "held": 0,
    "refused": 0,
    "disk_free_bytes": 20 * 1024**3,
    "cpu_temp_c": 55.0,
    "model": "card-corners.onnx 3",
    "deck": "plastic (abc123)",
    "recording": True,
    "alarms": [],
}


def _post(c: httpx.Client, table: str, token: str, body: dict[str, Any]) -> httpx.Response:
    return c.post(
        f"/api/v1/tables/{table}/health", json=body, headers={"Authorization": f"Bearer {token}"}
    )


def _age(server: Server, table: str, seconds: float) -> None:
    """Make the table's reports ``seconds`` older, in the database itself (no waiting)."""
    engine = make_engine(normalise_db_url(server.db))
    try:
        with engine.begin() as conn:
            rows = conn.execute(
                text("SELECT id, received_at FROM table_health WHERE table_id = :t"), {"t": table}
            ).all()
            for rid, at in rows:
                if isinstance(at, str):
                    at = datetime.fromisoformat(at)
                conn.execute(
                    text("UPDATE table_health SET received_at = :at WHERE id = :id"),
                    {"at": at - timedelta(seconds=seconds), "id": rid},
                )
    finally:
        engine.dispose()


def _by_table(c: httpx.Client, tid: int) -> dict[str, dict[str, Any]]:
    r = c.get(f"/api/v1/tournaments/{tid}/health")
    assert r.status_code == 200, r.text
    return {x["code"]: x for x in r.json()["tables"]}


def test_grid_json_metrics_and_history(server: Server) -> None:
    t = new_tournament(server, tables=4)
    tid, tokens = t["id"], t["tokens"]
    ok, bad, never, gone = t["tables"]
    with server.client() as c:
        r = _post(c, ok, tokens[ok], GOOD)
        assert r.status_code == 200 and r.json()["status"] == "ok", r.text
        worse = dict(GOOD, since_frame_s=12.4, pending=80, refused=2, disk_free_bytes=100 * 1024**2)
        worse["alarms"] = ["markers", "network"]
        r = _post(c, bad, tokens[bad], worse)
        assert r.json()["status"] == "degraded"
        assert _post(c, gone, tokens[gone], GOOD).json()["status"] == "ok"
        _age(server, gone, 45)

        grid = _by_table(c, tid)
        assert {k: v["status"] for k, v in grid.items()} == {
            ok: "ok",
            bad: "degraded",
            never: "offline",
            gone: "offline",
        }
        codes = [x["code"] for x in grid[bad]["reasons"]]
        assert codes == ["no_frame", "backlog", "refused", "disk_low", "alarm_markers"]
        assert all(x["en"] and x["zh"] for x in grid[bad]["reasons"])
        assert "12 s" in grid[bad]["reasons"][0]["en"] and "秒" in grid[bad]["reasons"][0]["zh"]
        assert grid[never]["reasons"][0]["code"] == "never" and grid[never]["report"] is None
        assert grid[gone]["reasons"][0]["code"] == "silent" and grid[gone]["age_s"] >= 45
        assert grid[ok]["report"]["fps"] == 14.8 and grid[ok]["report"]["model"] == GOOD["model"]
        counts = c.get(f"/api/v1/tournaments/{tid}/health").json()["counts"]
        assert counts == {"ok": 1, "degraded": 1, "offline": 2}

        # Prometheus, read by its own parser
        r = c.get("/metrics", params={"tournament": tid})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
        fams = {f.name: f for f in text_string_to_metric_families(r.text)}
        up = {s.labels["code"]: s.value for s in fams["guandan_table_up"].samples}
        assert up == {ok: 1, bad: 1, never: 0, gone: 0}
        status = {
            (s.labels["code"], s.labels["status"]): s.value
            for s in fams["guandan_table_status"].samples
        }
        assert status[(bad, "degraded")] == 1 and status[(bad, "ok")] == 0
        assert status[(never, "offline")] == 1
        fps = {s.labels["code"]: s.value for s in fams["guandan_table_camera_fps"].samples}
        assert fps[ok] == pytest.approx(14.8) and never not in fps
        outbox = {
            (s.labels["code"], s.labels["state"]): s.value
            for s in fams["guandan_table_outbox_events"].samples
        }
        assert outbox[(bad, "pending")] == 80 and outbox[(bad, "refused")] == 2
        info = [s for s in fams["guandan_table_info"].samples if s.labels["code"] == ok]
        assert info[0].labels["model"] == GOOD["model"] and info[0].labels["deck"] == GOOD["deck"]
        tables = {s.labels["status"]: s.value for s in fams["guandan_tables"].samples}
        assert tables == {"ok": 1, "degraded": 1, "offline": 2}
        assert "guandan_table_up" in c.get("/metrics").text  # every tournament

        # history: the table's reports, oldest first
        for fps_now in (10.0, 11.0):
            assert _post(c, ok, tokens[ok], dict(GOOD, fps=fps_now)).status_code == 200
        h = c.get(f"/api/v1/tables/{ok}/health").json()
        assert h["status"] == "ok" and [x["fps"] for x in h["history"]] == [14.8, 10.0, 11.0]
        assert all(x["received_at"] for x in h["history"])

        # the grid page, both languages, a card per table with its status and reasons
        page = c.get(f"/hall/{tid}")
        assert page.status_code == 200
        html = page.text
        for code, st in ((ok, "ok"), (bad, "degraded"), (never, "offline"), (gone, "offline")):
            assert f'id="health-{code}" data-status="{st}"' in html
        assert "no frame for 12 s · 12 秒没有画面" in html
        assert "Offline 离线" in html and "Degraded 异常" in html and "OK 正常" in html
        assert "11.0 fps" in html
        assert c.get("/hall/999999").status_code == 404


def test_reports_are_checked_and_history_is_bounded(server: Server) -> None:
    t = new_tournament(server, tables=2)
    (a, b), tokens = t["tables"], t["tokens"]
    with server.client() as c:
        r = _post(c, a, "gdt_wrong", GOOD)
        assert r.status_code == 401 and "token" in r.json()["detail"]
        r = c.post(f"/api/v1/tables/{a}/health", json=GOOD)
        assert r.status_code == 401
        r = _post(c, a, tokens[b], GOOD)  # another table's token
        assert r.status_code == 403 and a in r.json()["detail"]
        r = _post(c, a, tokens[a], dict(GOOD, fps=-3))
        assert r.status_code == 422 and "fps" in r.text
        r = _post(c, a, tokens[a], dict(GOOD, alarms="disk"))
        assert r.status_code == 422 and "alarms" in r.text
        assert c.get(f"/api/v1/tables/{a}/health").json()["history"] == []  # nothing stored
        assert c.get("/api/v1/tables/nosuch/health").status_code == 404

        # bounded: a report older than the retention (6 h by default) goes when a new one comes
        assert _post(c, a, tokens[a], dict(GOOD, fps=1.0)).status_code == 200
        _age(server, a, 7 * 3600)
        assert _post(c, a, tokens[a], dict(GOOD, fps=2.0)).status_code == 200
        h = c.get(f"/api/v1/tables/{a}/health", params={"minutes": 60 * 24}).json()
        assert [x["fps"] for x in h["history"]] == [2.0]


def test_a_running_kiosk_reports_itself(server: Server, tmp_path: Path) -> None:
    """``build_kiosk`` with a scoreboard reports on its own while it runs; with no round open
    its events are held, and the scoreboard says so."""
    from engine.profiles import load_profile
    from kiosk.table.service import build_kiosk
    from kiosk.table.sources import SimSource

    t = new_tournament(server, tables=1)
    table, token = t["tables"][0], t["tokens"][t["tables"][0]]
    profile = "six-deal-points"
    kiosk = build_kiosk(
        db=tmp_path / "kiosk.db",
        table=table,
        profile=profile,
        source=SimSource(load_profile(profile), seed=5, speed=0, table=table),
        scoreboard=server.url,
        token=token,
        pin="123456",
    )
    reporter = kiosk.info["health"]
    assert isinstance(reporter, HealthReporter)
    kiosk.start()
    try:
        deadline = time.monotonic() + 30
        grid: dict[str, Any] = {}
        with server.client() as c:
            while time.monotonic() < deadline:
                grid = _by_table(c, t["id"])[table]
                held = (grid["report"] or {}).get("held") or 0
                if grid["status"] == "degraded" and held > 0:
                    break
                time.sleep(0.5)
        assert grid["status"] == "degraded", grid
        assert "held" in [x["code"] for x in grid["reasons"]]
        rep = grid["report"]
        assert rep["source"] == "simulation" and rep["fps"] is None and rep["since_frame_s"] is None
        assert rep["events"] > 0 and rep["since_event_s"] is not None
        assert rep["disk_free_bytes"] > 0 and rep["recording"] is True
        assert reporter.sent >= 1 and reporter.last["status"] == "degraded"
    finally:
        kiosk.stop()
        kiosk.store.close()
    assert not reporter._thread.is_alive()


def test_kiosk_sample_measures_camera_and_reads_the_thermal_zone(tmp_path: Path) -> None:
    from kiosk.table.service import build_kiosk

    class Camera:
        """A source with a live camera's ``status()``: frames counted as they are read."""

        kind = "camera"

        def __init__(self) -> None:
            self.frames = 0
            self.last_frame_at: float | None = None

        def read(self, n: int) -> None:
            self.frames += n
            self.last_frame_at = time.time()

        def status(self) -> dict[str, Any]:
            return {"state": "live", "frames": self.frames, "last_frame_at": self.last_frame_at}

    thermal = tmp_path / "temp"
    thermal.write_text("48312\n")
    assert cpu_temperature(thermal) == 48.3
    assert cpu_temperature(tmp_path / "absent") is None
    kiosk = build_kiosk(
        db=tmp_path / "k.db", table="A1", profile="standard", source=None, pin="123456"
    )
    cam = Camera()
    kiosk.worker.source = cam
    rep = HealthReporter(kiosk, "http://127.0.0.1:9", "t", table="A1", thermal=thermal)
    first = rep.sample()
    assert first["fps"] is None and first["since_frame_s"] is None  # nothing measured yet
    cam.read(10)
    time.sleep(0.5)
    second = rep.sample()
    assert 5 < second["fps"] <= 20 and second["since_frame_s"] >= 0.4
    assert second["cpu_temp_c"] == 48.3 and second["since_event_s"] is None
    assert second["events"] == 0 and second["pending"] == 0
    rep.thermal = tmp_path / "absent"
    assert rep.sample()["cpu_temp_c"] is None
    assert rep.post(second) is None and rep.last_error  # nothing listens on port 9
    with pytest.raises(ValueError, match="health interval"):
        HealthReporter(kiosk, "http://x", "t", table="A1", interval_s=60)
    kiosk.store.close()


def test_judge_thresholds() -> None:
    assert judge(None, None)[0] == "offline"
    assert judge(GOOD, 29.0) == ("ok", [])
    assert judge(GOOD, 30.0)[0] == "offline"
    assert judge(dict(GOOD, since_frame_s=9.9), 0)[0] == "ok"
    assert judge(dict(GOOD, camera_state="lost", since_frame_s=99), 0)[1][0].code == "camera_lost"
    assert judge(dict(GOOD, pending=49), 0)[0] == "ok"
    assert judge(dict(GOOD, held=1), 0)[1][0].code == "held"
    assert judge(dict(GOOD, cpu_temp_c=81.0), 0)[1][0].code == "cpu_hot"
    assert judge(dict(GOOD, recording=False), 0)[1][0].code == "not_recording"
    no_camera = dict(GOOD, fps=None, since_frame_s=None, camera_state=None, cpu_temp_c=None)
    assert judge(no_camera, 0) == ("ok", [])
