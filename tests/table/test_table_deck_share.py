"""``guandan table run`` with a scoreboard URL and table token and no ``--deck`` reads with the
tournament's shared deck (issue 44, "Sharing"), as real processes: a scoreboard, and a kiosk on
a live synthetic camera with the model detector.

* first start: the deck (profile and adapted classifier) is fetched, checked and read with; the
  hall-health report the scoreboard shows names its version;
* restart: the deck is current, nothing is downloaded;
* an explicit ``--deck`` wins (nothing fetched);
* a deck that does not fit the kiosk's classifier is not read with: the shipped model, said in
  the log and in the health report;
* live swap: version 2 uploaded while the kiosk runs (``--deck-check``) is taken up without a
  restart and the health report names it (a real process); with the kiosk service object and a
  proxy that damages downloads: a damaged v2 is refused and v1 read on, a good v2 waits for the
  deal in progress to end and goes in at the deal boundary, between frames; an unfit v3 is not
  taken; the hall shows each state.

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

from kiosk.table.deckfetch import DeckFetch, attach_deck_watch, check_interval, share_deck
from tests.helpers_server import ServerProcess, free_port
from tests.scoreboard.deck_helpers import CorruptingProxy, make_adapted, make_profile, upload
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


def _until(what: Any, timeout: float = 60.0, every: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if got := what():
            return got
        time.sleep(every)
    raise AssertionError(f"not within {timeout} s")


def test_running_kiosk_takes_up_a_new_version(scoreboard: Server, tmp_path: Path) -> None:
    """A real ``table run`` checking every second: v2 uploaded while it runs is read with,
    without a restart (no deal on the synthetic table: the next frame is a deal boundary)."""
    t = new_tournament(scoreboard, tables=1)
    tid, table = t["id"], t["tables"][0]
    token = t["tokens"][table]
    model = make_adapted(tmp_path / "deck.classes.onnx").read_bytes()
    v1 = make_profile(tmp_path / "v1.json", "plastic").read_bytes()
    assert upload(scoreboard.url, tid, v1, model).status_code == 201

    kiosk = _kiosk(tmp_path, scoreboard, table, token, "--deck-check", "1")
    started = time.time()
    kiosk.start(timeout=120)
    try:
        rep = _report(scoreboard, tid, table, started)
        assert rep["deck_source"] == "shared" and rep["deck_version"] == 1, rep
        v2 = make_profile(tmp_path / "v2.json", "plastic-2").read_bytes()
        assert upload(scoreboard.url, tid, v2, model).json()["version"] == 2
        uploaded = time.time()

        def swapped() -> Any:
            rep = _report(scoreboard, tid, table, uploaded)
            return rep if rep.get("deck_version") == 2 else None

        rep = _until(swapped, timeout=90, every=0.5)
        assert "shared v2 plastic-2" in rep["deck"] and rep["deck_pending"] is None, rep
        assert "plastic-2" in rep["deck"].split(" · ")[0]  # the detector reads with it
        log = kiosk.log_tail()
        assert "deck: v2 plastic-2" in log and "downloaded and checked" in log, log
        assert "in force from frame" in log and "(was deck v1 plastic" in log, log
        with httpx.Client(base_url=scoreboard.url, timeout=10) as c:
            row = c.get(f"/api/v1/tournaments/{tid}/health").json()["tables"][0]
        assert row["deck"]["stale"] is False and row["deck"]["version"] == 2, row
        assert "deck_old" not in [x["code"] for x in row["reasons"]]
        cur = json.loads((tmp_path / "k-deck" / "current.json").read_text())
        assert cur["version"] == 2
    finally:
        kiosk.stop()


def test_swap_waits_for_the_deal_and_a_damaged_deck_is_not_taken(
    scoreboard: Server, tmp_path: Path
) -> None:
    """The kiosk service object on a live synthetic camera, its deck checks through a proxy
    that can damage the files (checks run by hand: no waiting on a timer)."""
    from kiosk.table.service import build_kiosk
    from kiosk.table.sources import LiveSource

    t = new_tournament(scoreboard, tables=1)
    tid, table = t["id"], t["tables"][0]
    token = t["tokens"][table]
    model = make_adapted(tmp_path / "deck.classes.onnx").read_bytes()
    v1 = make_profile(tmp_path / "v1.json", "plastic").read_bytes()
    assert upload(scoreboard.url, tid, v1, model).status_code == 201
    cache = tmp_path / "k-deck"

    with CorruptingProxy(scoreboard.url) as proxy:
        proxy.corrupt = False
        start = share_deck(proxy.url, token, table, cache, detector="model")
        assert start.status == "fetched" and start.version == 1
        source = LiveSource(
            "synthetic:table?fps=10&size=640x480", detector="model", deck=str(start.profile)
        )
        kiosk = build_kiosk(
            db=tmp_path / "k.db",
            table=table,
            profile="swiss-421",
            source=source,
            scoreboard=scoreboard.url,
            token=token,
            pin="1357",
        )
        lines: list[str] = []
        watch = attach_deck_watch(
            kiosk,
            source,
            proxy.url,
            token,
            table,
            cache,
            start=start,
            interval_s=3600,  # the test asks by hand
            detector="model",
            say=lines.append,
        )
        assert watch is not None and kiosk.info["deck_share"] is watch
        health = kiosk.info["health"]
        health.timeout_s = 30.0  # a loaded machine: the test's own posts must not time out
        first = source.detector
        kiosk.start()
        try:
            w = kiosk.worker
            w.submit("referee", {"type": "deal_start", "first_leader": "S"})
            assert w.referee.state.deal is not None and not w.referee.state.deal.over

            def hall() -> dict[str, Any]:
                answer = health.post(health.sample())
                assert answer is not None, health.last_error
                return {x["code"]: x for x in answer["reasons"]}

            # v2 uploaded, its download damaged: refused, v1 read on, said why
            v2 = make_profile(tmp_path / "v2.json", "plastic-2").read_bytes()
            assert upload(scoreboard.url, tid, v2, model).json()["version"] == 2
            proxy.corrupt = True
            assert watch.check_once() == "kept"
            assert watch.in_force.version == 1 and watch.pending is None
            assert source.detector is first
            rep = health.sample()
            assert rep["deck_version"] == 1 and "checksum mismatch" in rep["deck_problem"], rep
            assert rep["deck_problem"].startswith("deck v2 refused: "), rep
            assert any("; reading on with deck v1 plastic " in x for x in lines), lines
            why = hall()["deck_old"]
            assert why["en"].startswith("deck v1, current is v2: the kiosk did not take it")
            assert "checksum mismatch" in why["en"] and "本桌未采用新版本" in why["zh"]
            assert json.loads((cache / "current.json").read_text())["version"] == 1

            # the download good again: v2 waits for the deal in progress to end
            proxy.corrupt = False
            assert watch.check_once() == "pending"
            frames = source.frames
            _until(lambda: source.frames >= frames + 10, timeout=30)
            assert watch.in_force.version == 1 and source.detector is first
            rep = health.sample()
            assert rep["deck_version"] == 1 and rep["deck_pending"] == 2, rep
            assert rep["deck_problem"] is None and "v2 ready" in rep["deck"], rep
            why = hall()["deck_old"]
            assert why["en"].endswith("downloaded, taken up when the deal in progress ends")
            assert any("waits for the deal in progress to end" in x for x in lines), lines
            assert watch.check_once() == "pending"  # a 304: nothing downloaded again

            # the deal ends: the next frame takes v2 up
            w.submit("referee", {"type": "deal_result", "order": ["S", "E", "N", "W"]})
            assert w.referee.state.deal.over
            _until(lambda: watch.in_force.version == 2, timeout=30)
            assert source.detector is not first and source.detector.deck.name == "plastic-2"
            assert source._pipe.detector is source.detector
            assert watch.swaps == 1 and watch.pending is None
            rep = health.sample()
            assert rep["deck_version"] == 2 and rep["deck_pending"] is None, rep
            assert rep["deck"].startswith("plastic-2 (") and "shared v2 plastic-2" in rep["deck"]
            assert "deck_old" not in hall()
            notes = kiosk.store.notes("deck")
            assert [n[2]["version"] for n in notes] == [2] and notes[0][2]["event"] == "swapped"
            assert any("in force from frame" in x for x in lines), lines
            assert watch.check_once() == "in force"

            # v3 does not fit this kiosk's classifier: not taken, v2 read on
            other = make_profile(tmp_path / "v3.json", "felt", classifier="0123456789abcdef")
            assert upload(scoreboard.url, tid, other.read_bytes()).json()["version"] == 3
            assert watch.check_once() == "refused"
            assert "enrolled with classifier" in (watch.problem or "")
            assert watch.in_force.version == 2 and watch.pending is None
            assert watch.check_once() == "refused"  # remembered, not tried again
            assert (
                "did not take it (the shared deck profile was enrolled" in hall()["deck_old"]["en"]
            )
        finally:
            kiosk.stop()
            kiosk.store.close()


def test_deck_check_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GUANDAN_DECK_CHECK_S", raising=False)
    assert check_interval(None) == 60.0 and check_interval("0") == 0 and check_interval(5) == 5
    monkeypatch.setenv("GUANDAN_DECK_CHECK_S", "120")
    assert check_interval(None) == 120.0 and check_interval("30") == 30.0
    for bad in ("0.5", "-1", "soon", "1e9"):
        with pytest.raises(ValueError, match="--deck-check"):
            check_interval(bad)
    monkeypatch.setenv("GUANDAN_DECK_CHECK_S", "often")
    with pytest.raises(ValueError, match=r"\$GUANDAN_DECK_CHECK_S often"):
        check_interval(None)
