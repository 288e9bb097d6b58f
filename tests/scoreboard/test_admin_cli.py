"""Admin pages (plain HTML forms, no JS), the admin key, and the CLI verbs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from .helpers import REPO, Server


@pytest.fixture()
def keyed(tmp_path: Path) -> Server:
    srv = Server(str(tmp_path / "sb.db"), admin_key="s3cret", log=tmp_path / "log").start()
    yield srv  # type: ignore[misc]
    srv.stop()


def test_admin_pages_set_up_an_event_without_js(keyed: Server) -> None:
    auth = ("organiser", "s3cret")
    with httpx.Client(base_url=keyed.url, timeout=10) as c:
        assert c.get("/admin").status_code == 401
        assert "WWW-Authenticate" in c.get("/admin").headers
        assert c.get("/admin", auth=("x", "wrong")).status_code == 401
        r = c.post("/admin/tournaments", data={"name": "秋季赛", "profile": "national"}, auth=auth)
        assert r.status_code == 303
        page = r.headers["location"]
        tid = int(page.rsplit("/", 1)[1])
        for name in ["张三 / 李四", "王五 / 赵六", "Ann / Bob"]:
            r = c.post(f"{page}/pairs", data={"name": name}, auth=auth)
            assert r.status_code == 303
        r = c.post(f"{page}/pairs", data={"name": "Dup", "number": "2"}, auth=auth)
        assert r.status_code == 409 and "pair number 2 is taken" in r.text
        r = c.post(f"{page}/tables", data={"table_id": "A1", "name": "Table 1"}, auth=auth)
        assert r.status_code == 303 and "/tokens/" in r.headers["location"]  # post/redirect/get
        shown = c.get(r.headers["location"], auth=auth)
        assert shown.status_code == 200
        token = re.search(r'<code id="token">([^<]+)</code>', shown.text).group(1)  # type: ignore[union-attr]
        again = c.get(r.headers["location"], auth=auth).text  # a reload shows the same token
        assert f'<code id="token">{token}</code>' in again
        r = c.post(f"{page}/tables", data={"table_id": "bad id!"}, auth=auth)
        assert r.status_code == 422 and "table id" in r.text
        r = c.post(f"{page}/rounds", data={"mode": "manual", "pairings": "A1 1 2\nxx"}, auth=auth)
        assert r.status_code == 422 and "line 2" in r.text
        r = c.post(
            f"{page}/rounds", data={"mode": "manual", "pairings": "A1 1 2\nbye 3"}, auth=auth
        )
        assert r.status_code == 303
        html = c.get(page, auth=auth).text
        assert "Round 1 (open)" in html and "张三 / 李四" in html
        # Cross-site form posts are refused.
        r = c.post(f"{page}/rounds/1/close", auth=auth, headers={"Origin": "http://evil.example"})
        assert r.status_code == 403
        # The table token works for ingestion; admin API needs the key.
        e = {
            "v": 1,
            "id": "x1",
            "table": "A1",
            "deal": 1,
            "seq": 1,
            "t": 0.0,
            "type": "match_ended",
            "winner": "EW",
        }
        assert (
            c.post(
                "/api/v1/events", json=e, headers={"Authorization": f"Bearer {token}"}
            ).status_code
            == 200
        )
        assert c.post("/api/v1/tournaments", json={"name": "x"}).status_code == 401
        assert (
            c.post(
                "/api/v1/tournaments",
                json={"name": "x"},
                headers={"Authorization": "Bearer s3cret"},
            ).status_code
            == 201
        )
        # Reads of a table's events: its token or the key.
        assert c.get("/api/v1/tables/A1/events").status_code == 401
        assert (
            c.get(
                "/api/v1/tables/A1/events", headers={"Authorization": f"Bearer {token}"}
            ).status_code
            == 200
        )
        # national: win 3, bye 3, loss 1.
        st = c.get(f"/api/v1/tournaments/{tid}/standings").json()["standings"]
        assert sorted((s["pair"], s["points"]) for s in st) == [(1, 3), (2, 1), (3, 3)]
        r = c.post(f"{page}/matches/1/override", data={"result": "draw"}, auth=auth)
        assert r.status_code == 303
        st = c.get(f"/api/v1/tournaments/{tid}/standings").json()["standings"]
        assert sorted((s["pair"], s["points"]) for s in st) == [(1, 2), (2, 2), (3, 3)]
        r = c.post(f"{page}/rounds/1/close", auth=auth)
        assert r.status_code == 303
        # Swiss round 2 needs 1 table: 3 pairs -> one game and a bye to a pair without one.
        r = c.post(f"{page}/rounds", data={"mode": "swiss"}, auth=auth)
        assert r.status_code == 303
        rounds = c.get(f"/api/v1/tournaments/{tid}/rounds").json()
        r2 = rounds[1]["matches"]
        assert [m["ns"] for m in r2].count(None) == 1 and r2[-1]["ew"] != 3
        board = c.get(f"/scoreboard/{tid}").text
        assert "秋季赛" in board and "standings.csv" in board


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kiosk", "scoreboard", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_verbs(tmp_path: Path) -> None:
    db = str(tmp_path / "cli.db")
    r = _cli("migrate", "--db", db)
    assert r.returncode == 0 and "0010" in r.stdout
    tid = _cli("add-event", "--db", db, "--name", "Cup", "--profile", "huaian").stdout.strip()
    assert tid == "1"
    assert _cli("add-pair", "--db", db, "--event", tid, "--name", "A").stdout.strip() == "1"
    assert _cli("add-pair", "--db", db, "--event", tid, "--name", "B").stdout.strip() == "2"
    token = _cli("add-table", "--db", db, "--event", tid, "--table", "T1").stdout.strip()
    assert token.startswith("gdt_")
    new = _cli("rotate-token", "--db", db, "--table", "T1").stdout.strip()
    assert new.startswith("gdt_") and new != token
    out = _cli("standings", "--db", db, "--event", tid).stdout.splitlines()
    assert out[0].startswith("rank,pair,name") and len(out) == 3
    bad = _cli("add-event", "--db", db, "--name", "X", "--profile", "nope")
    assert bad.returncode == 2 and "unknown profile 'nope'" in bad.stderr
    bad = _cli("add-table", "--db", db, "--event", tid, "--table", "bad id")
    assert bad.returncode == 2 and "--table" in bad.stderr
    bad = _cli("standings", "--db", db, "--event", "99")
    assert bad.returncode == 2 and "no tournament 99" in bad.stderr
    bad = _cli("serve", "--db", "mysql://x/y")
    assert bad.returncode == 2 and "unsupported database URL" in bad.stderr
    # hall health and withdrawal
    health = json.loads(_cli("health", "--db", db, "--event", tid).stdout)
    assert [(x["code"], x["status"]) for x in health["tables"]] == [("T1", "offline")]
    prom = _cli("health", "--db", db, "--event", tid, "--format", "prometheus").stdout
    assert 'guandan_table_up{tournament="1",table="T1",code="T1"} 0' in prom
    out = json.loads(_cli("withdraw", "--db", db, "--event", tid, "--pair", "2").stdout)
    assert out == {"pair": 2, "name": "B", "withdrawn": True}
    out = json.loads(_cli("withdraw", "--db", db, "--event", tid, "--table", "T1").stdout)
    assert out["withdrawn"] is True
    assert json.loads(_cli("health", "--db", db, "--event", tid).stdout)["tables"] == []
    back = _cli("withdraw", "--db", db, "--event", tid, "--table", "T1", "--reinstate")
    assert json.loads(back.stdout)["withdrawn"] is False
    bad = _cli("withdraw", "--db", db, "--event", tid, "--pair", "9")
    assert bad.returncode == 2 and "no pair 9" in bad.stderr
    bad = _cli("health", "--db", db, "--event", "99")
    assert bad.returncode == 2 and "no tournament 99" in bad.stderr


def test_cli_close_round_needs_a_decision_per_unfinished_match(tmp_path: Path) -> None:
    from kiosk.scoreboard import service
    from kiosk.scoreboard.db import make_engine, session_factory, upgrade

    db = str(tmp_path / "close.db")
    engine = make_engine(f"sqlite:///{db}")
    upgrade(engine)
    with session_factory(engine)() as s:
        t = service.create_tournament(s, "Cup", "swiss-421", 1)
        for name in ("A", "B"):
            service.add_pair(s, t.id, name)
        service.add_table(s, t.id, "T1")
        mid = service.create_round(s, t.id, [("T1", 1, 2)]).matches[0].id
    engine.dispose()
    bad = _cli("close-round", "--db", db, "--event", "1", "--round", "1")
    assert bad.returncode == 2 and "unfinished" in bad.stderr and "未完成" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    bad = _cli("close-round", "--db", db, "--event", "1", "--round", "1", "--decide", "x")
    assert bad.returncode == 2 and "MATCH=DECISION" in bad.stderr
    bad = _cli("close-round", "--db", db, "--event", "1", "--round", "1", "--decide", f"{mid}=no")
    assert bad.returncode == 2 and "decision 'no'" in bad.stderr
    ok = _cli("close-round", "--db", db, "--event", "1", "--round", "1", "--decide", f"{mid}=wait")
    assert ok.returncode == 0, ok.stderr
    ok = _cli("decide", "--db", db, "--match", str(mid), "--decision", "forfeit_ew")
    assert ok.returncode == 0 and "forfeit_ew" in ok.stdout, ok.stderr
    assert _cli("reopen-round", "--db", db, "--event", "1", "--round", "1").returncode == 2
    ok = _cli("reopen-round", "--db", db, "--event", "1", "--round", "1", "--reason", "typo")
    assert ok.returncode == 0, ok.stderr
    out = _cli("standings", "--db", db, "--event", "1", "--format", "json").stdout
    assert [(r["pair"], r["points"]) for r in json.loads(out)] == [(2, 2), (1, 0)]


def test_serve_on_the_network_needs_an_admin_key(tmp_path: Path) -> None:
    from kiosk.cli.scoreboard import check_open_admin, is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.20")
    check_open_admin("0.0.0.0", "key", False)  # a key: fine
    check_open_admin("0.0.0.0", None, True)  # deliberately open: fine
    check_open_admin("127.0.0.1", None, False)  # loopback only: fine
    env = {k: v for k, v in os.environ.items() if k != "GUANDAN_SCOREBOARD_ADMIN_KEY"}
    r = subprocess.run(
        [sys.executable, "-m", "kiosk", "scoreboard", "serve", "--db", str(tmp_path / "s.db"),
         "--host", "0.0.0.0", "--port", "8799"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert "--host 0.0.0.0" in r.stderr and "--admin-key" in r.stderr and "--open-admin" in r.stderr
    assert not (tmp_path / "s.db").exists()  # refused before touching anything
