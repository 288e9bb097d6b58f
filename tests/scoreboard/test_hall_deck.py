"""Hall health and the tournament's shared deck (issue 44, "Sharing"): a table whose kiosk reads
with an older deck version than the tournament's current one, or with the shipped model while
the tournament shares a deck, is degraded on the grid with a reason in both languages that says
what happens next; the JSON and ``/metrics`` carry it per table.

Against a real scoreboard process on SQLite and on PostgreSQL; the decks are uploaded through
the API, the reports posted with each table's token; the Prometheus text is read with
``prometheus_client``'s own parser.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text

from kiosk.scoreboard.db import make_engine
from kiosk.scoreboard.health import DECK_GRACE_S, deck_reason, deck_state, judge
from kiosk.scoreboard.settings import normalise_db_url

from .deck_helpers import make_profile, upload
from .helpers import Server, new_tournament
from .test_hall_health import GOOD, _by_table, _post


def _report(**deck: Any) -> dict[str, Any]:
    return dict(GOOD, **deck)


def _age_deck(server: Server, tid: int, seconds: float) -> None:
    """Make the tournament's deck uploads ``seconds`` older, in the database itself."""
    engine = make_engine(normalise_db_url(server.db))
    try:
        with engine.begin() as conn:
            rows = conn.execute(
                text("SELECT id, uploaded_at FROM deck_version WHERE tournament_id = :t"),
                {"t": tid},
            ).all()
            for rid, at in rows:
                if isinstance(at, str):
                    at = datetime.fromisoformat(at)
                conn.execute(
                    text("UPDATE deck_version SET uploaded_at = :at WHERE id = :id"),
                    {"at": at - timedelta(seconds=seconds), "id": rid},
                )
    finally:
        engine.dispose()


def _metric(fams: dict[str, Any], name: str) -> dict[str, float]:
    return {s.labels["code"]: s.value for s in fams[name].samples}


def test_a_stale_deck_degrades_the_table(server: Server, tmp_path: Path) -> None:
    t = new_tournament(server, tables=6)
    tid, tokens = t["id"], t["tokens"]
    on, behind, shipped, own, old_kiosk, waiting = t["tables"]
    with server.client() as c:
        # no deck shared yet: nothing to be behind
        r = _post(c, shipped, tokens[shipped], _report(deck_source="shipped"))
        assert r.json()["status"] == "ok", r.text
        assert c.get(f"/api/v1/tournaments/{tid}/health").json()["deck"] is None

        for name in ("plastic", "plastic-2"):
            r = upload(server.url, tid, make_profile(tmp_path / f"{name}.json", name).read_bytes())
            assert r.status_code == 201, r.text
        assert r.json()["version"] == 2

        reports = {
            on: _report(deck_source="shared", deck_version=2),
            behind: _report(deck_source="shared", deck_version=1),
            shipped: _report(
                deck_source="shipped",
                deck_problem="deck v2 refused: profile: checksum mismatch",
            ),
            own: _report(deck_source="own", deck="mine (abc)"),
            # a kiosk from before deck_source: its deck text says the version
            old_kiosk: _report(deck="plastic (abc) · shared v1 plastic 1a2b3c4d +model"),
            waiting: _report(deck_source="shared", deck_version=1, deck_pending=2),
        }
        answers = {k: _post(c, k, tokens[k], body) for k, body in reports.items()}
        assert all(a.status_code == 200 for a in answers.values())
        # the kiosk's own answer says it too
        assert answers[behind].json()["status"] == "degraded"
        assert [x["code"] for x in answers[behind].json()["reasons"]] == ["deck_old"]
        assert answers[on].json()["status"] == "ok"

        health = c.get(f"/api/v1/tournaments/{tid}/health").json()
        assert health["deck"]["version"] == 2 and health["deck"]["name"] == "plastic-2"
        assert health["deck"]["tables_current"] == 1 and health["deck"]["tables_behind"] == 4
        assert health["thresholds"]["deck_grace_s"] == DECK_GRACE_S
        grid = _by_table(c, tid)
        status = {k: v["status"] for k, v in grid.items()}
        assert status == {
            on: "ok",
            behind: "degraded",
            shipped: "degraded",
            own: "ok",
            old_kiosk: "degraded",
            waiting: "degraded",
        }
        why = {k: v["reasons"][0] for k, v in grid.items() if v["reasons"]}
        assert all(x["code"] == "deck_old" for x in why.values())
        assert why[behind]["en"] == (
            "deck v1, current is v2: the kiosk takes it up at its next check (about a minute)"
        )
        assert why[behind]["zh"] == "牌组版本 1，当前 2：本桌下次检查时（约一分钟内）自动更新"
        assert why[shipped]["en"].startswith("no shared deck (shipped model), current is v2: ")
        assert (
            "checksum mismatch" in why[shipped]["en"] and "本桌未采用新版本" in why[shipped]["zh"]
        )
        assert why[old_kiosk]["en"].startswith("deck v1, current is v2")
        assert why[waiting]["en"].endswith("downloaded, taken up when the deal in progress ends")
        assert why[waiting]["zh"].endswith("已下载，本局结束后启用")
        assert grid[behind]["deck"] == {
            "source": "shared",
            "version": 1,
            "pending": None,
            "problem": None,
            "current": 2,
            "stale": True,
            "behind_s": grid[behind]["deck"]["behind_s"],
        }
        assert grid[on]["deck"]["stale"] is False and grid[own]["deck"] is None
        assert grid[shipped]["deck"]["version"] is None

        # the same from /api/v1/tables/{table}/health
        one = c.get(f"/api/v1/tables/{behind}/health").json()
        assert one["status"] == "degraded" and one["deck"]["current"] == 2

        # Prometheus: per table, what monitoring alerts on
        fams = {
            f.name: f
            for f in text_string_to_metric_families(
                c.get("/metrics", params={"tournament": tid}).text
            )
        }
        (cur,) = fams["guandan_tournament_deck_version"].samples
        assert cur.labels["tournament"] == str(tid) and cur.value == 2
        assert _metric(fams, "guandan_table_deck_version") == {
            on: 2,
            behind: 1,
            shipped: 0,
            old_kiosk: 1,
            waiting: 1,
        }
        assert _metric(fams, "guandan_table_deck_stale") == {
            on: 0,
            behind: 1,
            shipped: 1,
            old_kiosk: 1,
            waiting: 1,
        }
        assert set(_metric(fams, "guandan_table_deck_behind_seconds")) == {
            behind,
            shipped,
            old_kiosk,
            waiting,
        }

        # still behind well after the upload: the reason says to look at the kiosk
        _age_deck(server, tid, 600)
        grid = _by_table(c, tid)
        en = grid[behind]["reasons"][0]["en"]
        assert en.startswith("deck v1, current is v2: still not taken up 10 min after the upload")
        assert "上传 10 分钟后仍未更新" in grid[behind]["reasons"][0]["zh"]
        assert grid[behind]["deck"]["behind_s"] >= 600
        fams = {
            f.name: f
            for f in text_string_to_metric_families(
                c.get("/metrics", params={"tournament": tid}).text
            )
        }
        assert _metric(fams, "guandan_table_deck_behind_seconds")[behind] >= 600
        # ... and the kiosk catching up clears it
        assert _post(c, behind, tokens[behind], reports[on]).json()["status"] == "ok"

        # the grid page: both languages, the deck headline, the arrow to the current version
        html = c.get(f"/hall/{tid}").text
        assert f'id="health-{waiting}" data-status="degraded"' in html
        assert "downloaded, taken up when the deal in progress ends · " in html
        assert "牌组版本 1，当前 2：已下载，本局结束后启用" in html
        assert 'id="deck">Deck 牌组: <b>v2</b> plastic-2' in html
        assert "v1 → v2 (v2 ready 待启用)" in html and "shipped 出厂 → v2" in html
        assert "v2 ✓" in html


@pytest.mark.parametrize(
    ("report", "stale"),
    [
        ({"deck_source": "shared", "deck_version": 4}, False),
        ({"deck_source": "shared", "deck_version": 3}, True),
        ({"deck_source": "shared", "deck_version": 5}, True),  # a scoreboard restored from backup
        ({"deck_source": "shipped"}, True),
        ({"deck_source": "own"}, None),
        ({"deck": "plastic (abc)"}, None),  # an explicit --deck before deck_source
        ({"deck": "shared, cached: scoreboard unreachable v3 plastic ab"}, True),
        ({"deck": "shipped model: scoreboard unreachable"}, True),
        ({}, None),  # reads no cards
    ],
)
def test_deck_state(report: dict[str, Any], stale: bool | None) -> None:
    deck = {"version": 4, "uploaded_at": "2026-12-05T10:00:00+00:00"}
    state = deck_state(report, deck)
    assert (None if state is None else state["stale"]) == stale
    status, reasons = judge(report, 1.0, deck)
    assert status == ("degraded" if stale else "ok")
    if stale:
        assert reasons[0].code == "deck_old" and reasons[0].zh.startswith(("牌组版本", "未用牌组"))
    # no deck shared: never behind
    assert judge(report, 1.0, None)[0] == "ok"


def test_deck_reason_words() -> None:
    state = {"current": 4, "version": 3, "pending": None, "problem": None, "behind_s": 30.0}
    r = deck_reason(state)
    assert (
        r.en == "deck v3, current is v4: the kiosk takes it up at its next check (about a minute)"
    )
    assert r.zh == "牌组版本 3，当前 4：本桌下次检查时（约一分钟内）自动更新"
    late = deck_reason(dict(state, behind_s=2 * 3600.0))
    assert "2.0 h after the upload" in late.en and "2.0 小时后仍未更新" in late.zh
    refused = deck_reason(dict(state, problem="x" * 500))
    assert len(refused.en) < 250
