"""No foul inferred from the camera alone may end a deal or a match (issue 41): a foul judged on an
observation the table pipeline made (``source: camera``, even with no runner-up readings: a
perfect detector) is flagged ``review`` and counts towards the pair's limit only once the floor
referee marks it; its penalty in the trick stands."""

from __future__ import annotations

import functools
from dataclasses import replace

from engine.deal import fold
from engine.decoder import Decoder
from engine.observations import Observation, from_camera, is_camera, parse_observation
from tests.referee.helpers import Table


def seen(t: Table, type: str, step: float = 2.0, **fields: object) -> None:
    """An observation as the table pipeline reports it (``source: camera``, no doubts)."""
    t.t += step
    obs: Observation = parse_observation({"t": t.t, "type": type, **fields})
    t.ref.feed(from_camera(obs))


def test_camera_fouls_wait_for_the_floor_referee_before_a_forfeit() -> None:
    t = Table("standard")
    t.do("deal_start", first_leader="S")
    limit = t.profile.fouls.limit
    seen(t, "played", seat="E", cards=["D9"])  # out of turn, as the camera saw it
    seen(t, "exposed", seat="W", cards=["C8"])
    seen(t, "exposed", seat="E", cards=["H7"])
    flagged = t.fouls()
    assert [f["kind"] for f in flagged] == ["out_of_turn", "exposed_card", "exposed_card"]
    assert all(f["review"] is True for f in flagged) and len(flagged) == limit
    assert "taken back" in flagged[0]["penalty"]  # the penalty in the trick stands
    assert not t.of("match_ended") and t.ref.state.team_fouls["EW"] == 0
    # the floor referee confirms them one by one: the last one reaches the limit
    for f in flagged:
        t.do("foul", seat=f["seat"], kind=f["kind"], confirms=f.id, detail="seen on the footage")
    (ended,) = t.of("match_ended")
    assert ended["winner"] == "NS" and ended["reason"] == "fouls"
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_the_same_fouls_typed_in_count_at_once() -> None:
    """A person's entry (no ``source``) counts as before: the third foul ends the match."""
    t = Table("standard")
    t.do("deal_start", first_leader="S")
    t.play("E", "D9")
    t.do("exposed", seat="W", cards=["C8"])
    t.do("exposed", seat="E", cards=["H7"])
    assert not any(f.get("review") for f in t.fouls())
    (ended,) = t.of("match_ended")
    assert ended["winner"] == "NS" and ended["reason"] == "fouls"


def test_is_camera() -> None:
    play = parse_observation({"t": 1.0, "type": "played", "seat": "S", "cards": ["S3"]})
    assert not is_camera(play) and is_camera(from_camera(play))
    assert from_camera(from_camera(play)) == from_camera(play)
    doubted = parse_observation(
        {
            "t": 1.0,
            "type": "played",
            "seat": "S",
            "cards": ["S3"],
            "doubts": [{"card": "S3", "or": [["C3", 1.0]]}],
        }
    )
    assert is_camera(doubted)
    assert parse_observation(from_camera(play).to_json()).extra["source"] == "camera"


def test_a_reading_chosen_in_hindsight_stays_the_camera_s() -> None:
    """A look back re-reads a camera play and drops its doubts (not second-guessed again); the
    reading is still the camera's, so a foul it leaves waits for the floor referee, even where
    the play was the camera's only by its doubts (a stream without ``source``). A typed play
    re-read stays typed."""
    doubted = parse_observation(
        {
            "t": 1.0,
            "type": "played",
            "seat": "S",
            "cards": ["DJ", "S7", "SB"],
            "doubts": [{"card": "SB", "or": [[None, 0.8]]}],
        }
    )
    fix = Decoder._fix(doubted, doubted.cards[:2], "a ghost SB")
    assert fix.doubts == () and is_camera(fix) and fix.extra["camera"] == ["DJ", "S7", "SB"]
    typed = replace(doubted, doubts=())
    assert not is_camera(Decoder._fix(typed, typed.cards[:2], "typed in again"))


def test_a_camera_foul_after_the_trick_closed_lapses_when_the_table_sweeps() -> None:
    """Game 47307 (plastic, 2026-12-05): a misread bomb made the referee close a trick the table
    was still playing; E's out-of-turn play then barred E from the next trick by the referee's
    turns, the table swept the first trick, and E stayed barred in every trick after. A seat
    barred by a foul on the camera's reading plays again once the table sweeps the trick (a
    notice says so, and the fold agrees); a foul typed in by a person keeps its penalty."""
    for camera in (True, False):
        t = Table("standard")
        t.do("deal_start", first_leader="S")
        do = functools.partial(seen, t) if camera else t.do
        do("played", seat="S", cards=["S3"])
        for seat in ("E", "N", "W"):
            do("pass", seat=seat)
        assert t.ref.state.deal.turn == "S"  # the trick is S's, by the turns
        do("played", seat="E", cards=["D9"])  # out of turn: S leads
        (foul,) = t.fouls()
        assert foul["kind"] == "out_of_turn" and bool(foul.get("review")) is camera
        assert t.ref.state.deal.barred == {"E"}
        do("trick_cleared")
        lapsed = [n for n in t.of("notice") if n.get("barring_lapses")]
        do("played", seat="S", cards=["S5"])
        do("played", seat="E", cards=["D9"])
        if camera:
            assert [n["barring_lapses"] for n in lapsed] == [["E"]]
            assert len(t.fouls()) == 1 and t.ref.state.deal.turn == "N"
        else:
            assert lapsed == [] and [f["kind"] for f in t.fouls()] == ["out_of_turn"] * 2
        assert fold(t.ref.events, t.profile) == t.ref.state


def _s_leads_past_barred_e(t: Table) -> None:
    """No barring lapsed yet; S leads S5, E's turn skipped (barred), N and W pass, the table
    sweeps and S leads S7."""
    assert not [n for n in t.of("notice") if n.get("barring_lapses")]
    seen(t, "played", seat="S", cards=["S5"])
    seen(t, "pass", seat="N")
    seen(t, "pass", seat="W")
    seen(t, "trick_cleared")
    seen(t, "played", seat="S", cards=["S7"])


def test_a_sweep_with_no_play_since_the_last_clearing_lapses_no_barring() -> None:
    """Proc-serif 48890 with the renderer's labels: the table swept S's trick, S leads; E plays
    D9 out of turn (the game's mischief) and takes it back from the empty table, which the
    tracker reports as a second clearing. Nothing was swept but E's card, so E stays barred from
    S's trick: S leads S5, E's turn is skipped, N and W pass and S leads again, with no play
    judged out of turn. (Lapsed, E was on turn, and the table's next plays were each judged out
    of turn.)"""
    t = Table("standard")
    t.do("deal_start", first_leader="S")
    seen(t, "played", seat="S", cards=["S3"])
    for seat in ("E", "N", "W"):
        seen(t, "pass", seat=seat)
    seen(t, "trick_cleared")  # the table sweeps S's S3: S leads
    for _ in range(2):  # twice (tigullio 48881: N's HR, then its SB)
        seen(t, "played", seat="E", cards=["D9"])  # out of turn, taken back
        seen(t, "trick_cleared")  # the empty table again: no trick swept
    _s_leads_past_barred_e(t)
    assert [f["kind"] for f in t.fouls()] == ["out_of_turn"] * 2
    assert not [n for n in t.of("notice") if n.get("cleared_open") or n.get("ignored")]
    assert t.ref.state.deal.turn == "E" and t.ref.state.deal.counts["S"] == 24
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_new_deal_starts_with_no_turn_since_a_clearing() -> None:
    """The count of turns since the table's last clearing starts again with each deal: a play
    out of turn before the new deal's first lead, taken back from the empty table and seen as a
    clearing, swept no trick, whatever the last deal's turns were. (Counted on from the deal
    before, the barring lapsed and E, on turn by its lapse, had S's lead judged out of turn.)"""
    t = Table("standard")
    t.do("deal_start", first_leader="S")
    seen(t, "played", seat="S", cards=["S3"])
    seen(t, "pass", seat="E")  # turns in a deal the table then ends unfinished
    t.do("deal_start", first_leader="S")
    seen(t, "played", seat="E", cards=["D9"])  # out of turn, taken back
    seen(t, "trick_cleared")  # the empty table: no trick swept
    _s_leads_past_barred_e(t)
    deal = t.ref.state.deal
    assert [f["kind"] for f in t.fouls()] == ["out_of_turn"]
    assert deal.number == 2 and deal.turn == "E" and deal.counts["S"] == 25
