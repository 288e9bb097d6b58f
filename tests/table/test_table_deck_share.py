"""``guandan table run`` with a scoreboard URL and table token and no ``--deck`` reads with the
tournament's shared deck (issue 44, "Sharing"), as real processes: a scoreboard, and a kiosk on
a live synthetic camera with the model detector.

* first start: the deck (profile and adapted classifier) is fetched, checked and read with; the
  hall-health report the scoreboard shows names its version;
* restart: the deck is current, nothing is downloaded;
* an explicit ``--deck`` wins (nothing fetched);
* a deck that does not fit the kiosk's classifier is not read with: the shipped model, said in
  the log and in the health report.

The fetching itself (checksums, a damaged download, an unreachable scoreboard, new versions) is
tested on SQLite and PostgreSQL in tests/scoreboard/test_deck_share.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kiosk.table.deckfetch import DeckFetch
from tests.helpers_server import ServerProcess, free_port
from tests.scoreboard.deck_helpers import make_adapted, make_profile, upload
from tests.scoreboard.helpers import Server, new_tournament

CAMERA = "synthetic:table?fps=2&size=640x480"


@pytest.fixture(scope="module")
def scoreboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("sb")
    srv = Server(str(tmp / "sb.db"), log=tmp / "sb.log").start()
    try:
        yield srv
    finally:
        srv.stop()


def _kiosk(tmp: Path, srv: Server, table: str, token: str, *extra: str) -> ServerProcess:
    port = free_port()
    args = [
        "table", "run", "--camera", CAMERA, "--detector", "model", "--db", str(tmp / "k.db"),
        "--port", str(port), "--pin", "1357", "--table", table, "--scoreboard", srv.url,
        "--token", token, "--log-level", "warning", *extra,
    ]  # fmt: skip
    proc = ServerProcess(args, port, tmp / "kiosk.log")
    proc.name = "kiosk"
    return proc


def _report(srv: Server, tid: int, table: str, since: float, timeout: float = 60.0) -> Any:
    """The table's latest health report received after ``since`` (epoch seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = httpx.get(f"{srv.url}/api/v1/tournaments/{tid}/health", timeout=10)
        for row in r.json()["tables"]:
            rep = row.get("report") or {}
            if row["table"] == table and rep.get("at", 0) > since:
                return rep
        time.sleep(0.5)
    raise AssertionError(f"no health report from {table} in {timeout} s")


def test_kiosk_reads_with_the_shared_deck_and_reports_its_version(
    scoreboard: Server, tmp_path: Path
) -> None:
    t = new_tournament(scoreboard, tables=1)
    tid, table = t["id"], t["tables"][0]
    token = t["tokens"][table]
    profile = make_profile(tmp_path / "deck.json", "plastic")
    model = make_adapted(tmp_path / "deck.classes.onnx")
    r = upload(scoreboard.url, tid, profile.read_bytes(), model.read_bytes())
    assert r.status_code == 201, r.text

    kiosk = _kiosk(tmp_path, scoreboard, table, token)
    started = time.time()
    kiosk.start(timeout=120)
    try:
        log = kiosk.log_tail()
        assert "deck: v1 plastic" in log and "deck v1 fetched" in log, log
        rep = _report(scoreboard, tid, table, started)
        # the detector reads with the profile rebound to the adapted classifier, from v1
        assert "shared v1 plastic" in rep["deck"] and "+model" in rep["deck"], rep
        cur = json.loads((tmp_path / "k-deck" / "current.json").read_text())
        assert cur["version"] == 1 and set(cur["files"]) == {"profile", "model"}
    finally:
        kiosk.stop()

    # restart: current, nothing downloaded
    (tmp_path / "kiosk.log").write_text("")
    kiosk.start(timeout=120)
    try:
        log = kiosk.log_tail()
        assert "deck v1 is current" in log and "downloaded" not in log, log
    finally:
        kiosk.stop()


def test_explicit_deck_wins_and_an_unfit_deck_is_not_read_with(
    scoreboard: Server, tmp_path: Path
) -> None:
    t = new_tournament(scoreboard, tables=1)
    tid, table = t["id"], t["tables"][0]
    token = t["tokens"][table]
    # a profile enrolled with another classifier, shared without an adapted one
    other = make_profile(tmp_path / "other.json", "felt", classifier="0123456789abcdef")
    r = upload(scoreboard.url, tid, other.read_bytes())
    assert r.status_code == 201 and "will not use it" in r.json()["warnings"][0]

    (tmp_path / "own").mkdir()
    own = make_profile(tmp_path / "own" / "deck.json", "mine")
    kiosk = _kiosk(tmp_path, scoreboard, table, token, "--deck", str(own))
    kiosk.start(timeout=120)
    try:
        assert "deck:" not in kiosk.log_tail()  # --deck given: nothing fetched
        assert not (tmp_path / "k-deck").exists()
    finally:
        kiosk.stop()

    kiosk = _kiosk(tmp_path, scoreboard, table, token)
    started = time.time()
    kiosk.start(timeout=120)
    try:
        log = kiosk.log_tail()
        assert "reading with the SHIPPED model" in log and "enrolled with classifier" in log, log
        rep = _report(scoreboard, tid, table, started)
        assert rep["deck"].startswith("shipped model: deck v1 felt"), rep
    finally:
        kiosk.stop()


def test_health_text_says_where_the_deck_came_from() -> None:
    shared = DeckFetch("fetched", "ok", 3, "plastic", Path("d.json"), {"profile": "ab" * 32})
    assert shared.health_text("plastic (x)") == "plastic (x) · shared v3 plastic abababab"
    cached = DeckFetch(
        "cached", "unreachable", 3, "plastic", Path("d.json"), {"profile": "ab" * 32}
    )
    assert "cached: scoreboard unreachable" in cached.health_text()
    none = DeckFetch("unavailable", "scoreboard unreachable (refused); no deck cached")
    assert none.health_text("ignored") == (
        "shipped model: scoreboard unreachable (refused); no deck cached"
    )
    assert len(DeckFetch("none", "x" * 500).health_text()) == 200
