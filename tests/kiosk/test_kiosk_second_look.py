"""The referee's second look at a camera misread, end to end: a kiosk reading a camera's
observations, its outbox posting to a real scoreboard server. The correction the referee makes
(engine/referee.py ``HINDSIGHT_WINDOW``) reaches the centre, whose fold follows it."""

from __future__ import annotations

import json
from pathlib import Path

from engine.events import parse_event
from tests.kiosk.helpers import (
    free_port,
    get_json,
    kiosk_proc,
    scoreboard_proc,
    setup_scoreboard,
    wait_for,
)


def _cam(t: float, seat: str, cards: list[str]) -> dict[str, object]:
    """A play as the camera reports it (with a runner-up reading too dear to matter)."""
    return {
        "t": t,
        "type": "played",
        "seat": seat,
        "cards": cards,
        "doubts": [{"card": cards[0], "or": [["SB", 4.9]]}],
    }


def test_a_second_look_reaches_the_scoreboard(tmp_path: Path) -> None:
    """E's pair of queens is seen as one HQ; the others pass and E leads again: the referee
    re-reads E's play as a pair through a correction. The scoreboard, which got the first
    reading, the fouls and then the correction, counts E's cards and the fouls as corrected."""
    lines = [
        {"t": 1.0, "type": "deal_start", "first_leader": "S"},
        _cam(3.0, "S", ["ST", "ST"]),
        _cam(5.0, "E", ["HQ"]),
        {"t": 7.0, "type": "pass", "seat": "N"},
        {"t": 9.0, "type": "pass", "seat": "W"},
        {"t": 11.0, "type": "pass", "seat": "S"},
        _cam(13.0, "E", ["C5"]),
    ]
    obs = tmp_path / "obs.jsonl"
    obs.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    _tid, tokens = setup_scoreboard(tmp_path / "sb.db", ["t2l"])
    sb = scoreboard_proc(tmp_path / "sb.db", free_port(), tmp_path / "sb.log").start()
    extra = ["--scoreboard", sb.url, "--token", tokens["t2l"], "--max-backoff", "1"]
    k = kiosk_proc(
        tmp_path / "k.db", free_port(), tmp_path / "k.log", obs=obs, table="t2l", speed=0,
        extra=extra,
    )  # fmt: skip
    try:
        k.start()

        def done() -> object:
            st = get_json(k.url + "/api/state")
            ob = st["outbox"]
            return st if st["source"]["done"] and ob["pending"] == 0 and ob["connected"] else None

        st = wait_for(done, 60, "the kiosk to finish and deliver")
        central = [parse_event(e) for e in get_json(f"{sb.url}/api/v1/tables/t2l/events?limit=500")]
        table = get_json(f"{sb.url}/api/v1/tables/t2l/state")
    finally:
        k.stop()
        sb.stop()
    (corr,) = [e for e in central if e.type == "correction"]
    # a pair of queens: the queen the camera missed is taken as one none of whose copies was
    # seen (SQ first among equals; engine/referee.py _missed_cards)
    assert "re-read as SQ HQ" in corr["reason"]
    # the table screen and the centre agree: E holds 24, S 25, and no foul stands
    assert st["fouls"] == []
    assert table["cards_left"] == {"N": 27, "E": 24, "S": 25, "W": 27}
    assert table["fouls"] == {"N": 0, "E": 0, "S": 0, "W": 0}
    assert table["last_play"]["seat"] == "E" and table["last_play"]["cards"] == ["C5"]
