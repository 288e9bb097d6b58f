"""CLI round trip, malformed input, event/observation JSON and corrections."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.deal import fold
from engine.events import EventError, dump_event, parse_event, parse_events
from engine.observations import ObservationError, parse_observation
from kiosk.cli import main
from tests.referee.helpers import Table


def test_sim_then_referee_gives_identical_events(tmp_path: Path) -> None:
    ev, obs, ev2 = tmp_path / "ev.jsonl", tmp_path / "obs.jsonl", tmp_path / "ev2.jsonl"
    args = ["sim", "--profile", "huaian", "--deals", "4", "--seed", "1", "--out", str(ev)]
    assert main(args + ["--observations", str(obs), "--mischief", "0.03"]) == 0
    assert main(["referee", "--profile", "huaian", str(obs), "--out", str(ev2)]) == 0
    assert ev.read_bytes() == ev2.read_bytes()
    events = parse_events(ev.read_text(encoding="utf-8").splitlines())
    assert events[0].type == "deal_started" and [e.seq for e in events] == list(
        range(1, len(events) + 1)
    )
    assert len({e.id for e in events}) == len(events)


def test_referee_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    obs = tmp_path / "obs.jsonl"
    obs.write_text('{"t": 1, "type": "deal_start", "first_leader": "S"}\n', encoding="utf-8")
    assert main(["referee", "--profile", "standard", str(obs)]) == 0
    line = capsys.readouterr().out.strip()
    assert json.loads(line)["type"] == "deal_started"


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ('{"t": 1, "type": "played", "seat": "Q", "cards": ["S3"]}', "field 'seat'"),
        ('{"t": 1, "type": "played", "seat": "S"}', "field 'cards' is missing"),
        ('{"t": 1, "type": "played", "seat": "S", "cards": ["S1"]}', "field 'cards'[0]"),
        ('{"type": "pass", "seat": "S"}', "field 't' is missing"),
        ('{"t": 1, "type": "dance"}', "field 'type'"),
        ("not json", "not JSON"),
    ],
)
def test_malformed_observation_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, needle: str
) -> None:
    obs = tmp_path / "bad.jsonl"
    obs.write_text('{"t": 0, "type": "deal_start"}\n\n' + line + "\n", encoding="utf-8")
    assert main(["referee", "--profile", "standard", str(obs)]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl line 3" in err and needle in err


def test_unknown_profile_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "e.jsonl"
    assert main(["sim", "--profile", "nope", "--deals", "1", "--out", str(out)]) == 2
    assert "unknown profile" in capsys.readouterr().err
    assert not out.exists()


def test_event_json_round_trip_and_errors() -> None:
    t = Table()
    t.do("deal_start", first_leader="S")
    t.play("S", "S3")
    for ev in t.ref.events:
        assert parse_event(dump_event(ev)) == ev
    good = t.ref.events[1].to_json()
    for key in ("id", "seq", "type", "seat"):
        bad = dict(good)
        del bad[key]
        with pytest.raises(EventError, match=repr(key)):
            parse_event(bad)
    with pytest.raises(EventError, match="'v'"):
        parse_event({**good, "v": 2})
    with pytest.raises(EventError, match="gapless"):
        parse_events([dump_event(t.ref.events[1])])


def test_observation_parse_keeps_extras() -> None:
    o = parse_observation('{"t": 2.5, "type": "played", "seat": "s", "cards": "h10 sb", "x": 1}')
    assert o.seat == "S" and [str(c) for c in o.cards] == ["HT", "SB"] and o.extra == {"x": 1}
    triple = parse_observation({"t": 1, "type": "played", "seat": "S", "cards": ["S3"] * 3})
    assert len(triple.cards) == 3  # a misread, not malformed: the referee flags it
    t = Table()
    t.do("deal_start", first_leader="S")
    ev = t.ref.feed(triple)
    assert [e.type for e in ev] == ["foul", "play", "foul"]
    assert [e["kind"] for e in ev if e.type == "foul"] == ["duplicate_card", "illegal_play"]
    with pytest.raises(ObservationError, match="'count'"):
        parse_observation({"t": 1, "type": "count_report", "seat": "S", "count": 40})


def test_a_glimpse_parses_round_trips_and_is_no_play() -> None:
    """A ``glimpse`` (cards seen too faintly to count) needs a seat and cards, comes back as the
    same JSON, and changes nothing by itself: no event, no card off the seat's count."""
    o = parse_observation({"t": 3, "type": "glimpse", "seat": "w", "cards": ["大王"]})
    assert (o.seat, [str(c) for c in o.cards]) == ("W", ["HR"])
    assert o.to_json() == {"t": 3.0, "type": "glimpse", "seat": "W", "cards": ["HR"]}
    assert parse_observation(o.to_json()) == o
    with pytest.raises(ObservationError, match="'seat'"):
        parse_observation({"t": 3, "type": "glimpse", "cards": ["HR"]})
    with pytest.raises(ObservationError, match="'cards'"):
        parse_observation({"t": 3, "type": "glimpse", "seat": "W", "cards": ["XX"]})
    t = Table()
    t.do("deal_start", first_leader="S")
    assert t.ref.feed(o) == []
    assert t.deal.counts["W"] == 27 and t.deal.turn == "S"


def test_correction_voids_a_misread_play_and_state_recomputes() -> None:
    t = Table()
    t.do("deal_start", first_leader="S")
    t.play("S", "S9")
    bad = t.play("E", "S5")  # a misread: flagged illegal
    assert [e.type for e in bad] == ["play", "foul"]
    t.play("N", "ST")  # then out of turn? no: N is on turn (E lost the trick)
    before = len(t.ref.events)
    out = t.do(
        "correction",
        replaces=bad[0].id,
        **{"with": {"type": "played", "seat": "E", "cards": ["SJ"]}},
    )
    assert out[0].type == "correction" and out[0]["replaces"] == bad[0].id
    assert out[0]["by"] == out[1].id
    assert len(t.ref.events) > before  # nothing deleted
    d = t.deal
    # corrected: E's SJ beats S9, N's ST does not beat SJ -> illegal
    assert d.counts["E"] == 26 and d.owner == "E"
    assert t.ref.state.fouls[-1][2] == "illegal_play"
    assert fold(t.ref.events, t.profile) == t.ref.state
    # void the N play altogether
    n_play = [e for e in t.ref.events if e.type == "play" and e["seat"] == "N"][-1]
    t.do("correction", replaces=n_play.id)
    assert t.deal.counts["N"] == 27 and t.deal.turn == "N"
    assert t.ref.state.corrections == 2
    assert fold(t.ref.events, t.profile) == t.ref.state
    t.do("correction", replaces="no-such-id")
    assert t.ref.events[-1].type == "notice"
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_event_ids_are_uuid5_of_table_and_seq() -> None:
    import uuid

    from engine.events import _NAMESPACE, event_id

    for table, seq in (("t1", 1), ("t1", 123456), ("桌3", 7)):
        name = f"guandan-kiosk/event/{table}/{seq}"
        assert event_id(table, seq) == str(uuid.uuid5(_NAMESPACE, name))
