"""``guandan table run`` on a live camera, killed with SIGKILL mid-trick and started again.

The bundled game is served as a live camera (``tests/kiosk/livecam.py``, ``replay:`` backend)
that keeps its place in a state file, so the restarted kiosk's camera goes on from the frame
where the killed one stopped - with the three plays of the first trick still lying in the play
zones. The restarted pipeline is told what the event log says lies there, so it reports none
of them again; the passes, the clear and the next trick's plays still come through, and the log
ends up as the referee's events on the recording's truth observations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.observations import Observation, parse_observation
from engine.profiles import load_profile
from engine.referee import referee_events
from kiosk.table.store import EventLog
from tests.helpers_server import ServerProcess

from .helpers import REPO, free_port, get_json, wait_for
from .livecam import shifted_oracle

GAME = REPO / "datasets" / "demo" / "game.mp4"
ORACLE = REPO / "datasets" / "demo" / "game.mp4.oracle.jsonl.gz"
TRUTH = REPO / "datasets" / "demo" / "game.mp4.truth.jsonl"
PLUGIN = {"GUANDAN_CAMERA_PLUGINS": "tests.kiosk.livecam"}
FPS = 5.0


def _kiosk(tmp_path: Path, camera: str, detector: Path, log: str) -> ServerProcess:
    port = free_port()
    args = [
        "table", "run", "--camera", camera, "--db", str(tmp_path / "k.db"), "--port", str(port),
        "--pin", "1357", "--table", "t1", "--profile", "standard", "--detector", str(detector),
        "--footage", "off", "--log-level", "warning",
    ]  # fmt: skip
    proc = ServerProcess(args, port, tmp_path / log, env=PLUGIN)
    proc.name = "kiosk"
    return proc


def _key(o: Observation) -> tuple[str, str | None, list[str]]:
    return (o.type, o.seat, sorted(str(c) for c in o.cards))


def _ev_key(e: Any) -> tuple[str, str | None, list[str]]:
    return (e.type, e.data.get("seat"), sorted(e.data.get("cards", [])))


def _logged(db: Path) -> tuple[list[Observation], list[Any]]:
    log = EventLog(db, table="t1", profile="standard")
    try:
        return [lo.obs for lo in log.observations() if lo.origin == "source"], log.events()
    finally:
        log.close()


def test_kill9_mid_trick_on_a_live_camera_then_restart_reports_no_play_twice(
    tmp_path: Path,
) -> None:
    truth = [parse_observation(x) for x in TRUTH.read_text().splitlines() if x.strip()]
    want_events = [_ev_key(e) for e in referee_events(load_profile("standard"), truth, table="t1")]
    # the first trick: S, E, N play (6.6 s, 9.6 s, 12.6 s), three passes, cleared at 24.1 s;
    # the next one opens with N S4 (27.1 s) and W H5 (30.1 s)
    cleared_t = next(o.t for o in truth if o.type == "trick_cleared")
    w_h5 = truth.index(next(o for o in truth if o.type == "played" and o.seat == "W"))

    state = tmp_path / "camera.json"
    camera = f"replay:{GAME}?state={state}"
    first = _kiosk(tmp_path, camera, ORACLE, "kiosk1.log").start()
    try:
        wait_for(
            lambda: len(get_json(first.url + "/api/state")["plays"]) >= 3,
            90,
            "the first trick's three plays",
            every=0.1,
        )
        first.kill9()  # mid-trick: three plays lie in the play zones
    finally:
        first.stop()
    served = int(json.loads(state.read_text())["served"])
    assert served / FPS < cleared_t - 2.0, f"killed too late ({served} frames)"
    obs, events = _logged(tmp_path / "k.db")
    assert [_key(o) for o in obs] == [_key(o) for o in truth[: len(obs)]]
    assert len(obs) >= 4 and "trick_cleared" not in [o.type for o in obs]  # mid-trick
    assert [_ev_key(e) for e in events] == want_events[: len(events)]

    # the kiosk comes back; the camera goes on from the frame where it stopped, its frames
    # counted from 0 again (the oracle labels shifted to match)
    labels = shifted_oracle(ORACLE, served, tmp_path / "rest.oracle.jsonl.gz")
    second = _kiosk(tmp_path, camera, labels, "kiosk2.log").start()
    try:
        wait_for(
            lambda: ("play", "W", ["H5"])
            in [(p["type"], p["seat"], sorted(p["cards"])) for p in get_json(
                second.url + "/api/state")["plays"]],
            120,
            "W's H5 in the second trick",
        )  # fmt: skip
        st = get_json(second.url + "/api/state")
    finally:
        second.stop()
    assert not st["alarms"], st["alarms"]

    obs, events = _logged(tmp_path / "k.db")
    got = [_key(o) for o in obs]
    # what the camera reported: the truth, each play once, the clear seen after the restart
    assert got[: w_h5 + 1] == [_key(o) for o in truth[: w_h5 + 1]], got
    assert got == [_key(o) for o in truth[: len(got)]]
    # the log: the referee's events on the truth, no play twice, no foul
    assert [_ev_key(e) for e in events] == want_events[: len(events)]
    plays = [k for k in (_ev_key(e) for e in events) if k[0] == "play"]
    assert len(plays) == len({(s, tuple(c)) for _t, s, c in plays}) >= 5
    assert not [e for e in events if e.type == "foul"]
