"""Time is a reading too (issue 41): the camera reports a play when its cards have settled, a pass
lamp at once, so a play may reach the referee after the next seat's pass. The referee must take
the order the rules accept (``Referee._reorder``) and end no deal or match on such a misorder.

The whole-match test delays every play that the next seat passed on to 0.5-4 s after that pass
(a count report of the seat moves with its play; a play is never moved past a clearing or a deal
start, which the camera sees as well) and requires the same plays, passes, finishing orders,
levels and match results as the stream in time, and no foul.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

import pytest

from engine.deal import effective_events, fold
from engine.events import Event
from engine.observations import Observation
from engine.profiles import load_profile
from engine.referee import Referee
from engine.sim import simulate
from tests.referee.helpers import Table


def delay_plays(
    observations: Sequence[Observation], rng: random.Random, lo: float = 0.5, hi: float = 4.0
) -> tuple[list[Observation], int]:
    """The stream with each play that another seat's pass followed reported ``lo``..``hi`` s
    after that pass (kept before any later observation that is not a play or a pass), then in
    the order of the new times; and how many plays were delayed."""
    obs = list(observations)
    t_new = [o.t for o in obs]
    delayed = 0
    for i, o in enumerate(obs):
        if o.type != "played":
            continue
        j = i + 1
        own = []  # the seat's count report, spoken right after its play
        while j < len(obs) and obs[j].type == "count_report" and obs[j].seat == o.seat:
            own.append(j)
            j += 1
        if j >= len(obs) or obs[j].type != "pass" or obs[j].seat == o.seat:
            continue
        m = j + 1
        while m < len(obs) and obs[m].type in ("played", "pass"):
            m += 1
        limit = obs[m].t - 0.05 if m < len(obs) else float("inf")
        at = min(obs[j].t + rng.uniform(lo, hi), limit)
        if at - obs[j].t < lo:
            continue
        for k in (i, *own):
            t_new[k] = round(obs[k].t + at - o.t, 3)
        delayed += 1
    order = sorted(range(len(obs)), key=lambda k: (t_new[k], k))
    return [replace(obs[k], t=t_new[k]) for k in order], delayed


def outcome(events: Sequence[Event]) -> list[tuple[object, ...]]:
    """What the table did, from the events in effect: plays, passes, seats out, each deal's
    finishing order and levels, each match's winner (times left out)."""
    out: list[tuple[object, ...]] = []
    for e in effective_events(events):
        if e.type == "play":
            out.append(("play", e["seat"], tuple(e["cards"]), e["legal"]))
        elif e.type == "pass":
            out.append(("pass", e["seat"]))
        elif e.type == "seat_out":
            out.append(("seat_out", e["seat"], e["place"]))
        elif e.type == "deal_ended":
            out.append(("deal_ended", tuple(e["order"]), tuple(sorted(e["levels"].items()))))
        elif e.type == "match_ended":
            out.append(("match_ended", e["winner"], e["reason"]))
    return out


@pytest.mark.parametrize(
    ("name", "seed", "deals"),
    [("six-deal-points", 3, 6), ("standard", 2, 6), ("national", 9, 5)],
)
def test_plays_reported_after_the_next_pass_change_nothing(
    name: str, seed: int, deals: int
) -> None:
    p = load_profile(name)
    sim = simulate(p, deals=deals, seed=seed)
    late, delayed = delay_plays(sim.observations, random.Random(seed))
    assert delayed > 60  # most plays that were passed on
    assert [o.t for o in late] == sorted(o.t for o in late)
    ref = Referee(p)
    ref.feed_all(late)
    assert outcome(ref.events) == outcome(sim.events)
    effective = effective_events(ref.events)
    assert not [e for e in effective if e.type in ("foul", "warning")]
    # nothing ended on a foul on the way either (a correction came before any forfeit)
    assert not [e for e in ref.events if e.get("forfeit") or e.get("reason") == "fouls"]
    assert fold(ref.events, p) == ref.state
    if name == "six-deal-points":
        assert any(e.type == "match_ended" for e in effective)  # the whole match


def test_a_big_joker_reported_after_the_next_seats_pass() -> None:
    """Issue 41's game: S's big joker reported 3 s late, after E's pass lamp (play goes S, E, N,
    W). As seen, E's pass is out of turn and N's pass follows a trick the referee has E to
    answer; in the order the rules accept, the trick is S's and S leads the next."""
    t = Table()
    t.do("deal_start", first_leader="N")
    t.play("N", "SB")
    t.pass_("W")
    t.pass_("E", step=1.0)  # at the table: S's HR, then E's pass
    t.play("S", "HR", step=3.0)
    t.pass_("N", step=1.5)
    t.pass_("W")
    t.do("trick_cleared", step=0.5)
    t.play("S", "S3")
    effective = effective_events(t.ref.events)
    assert [(e.type, e.get("seat")) for e in effective if e.type in ("play", "pass")] == [
        ("play", "N"),
        ("pass", "W"),
        ("play", "S"),
        ("pass", "E"),
        ("pass", "N"),
        ("pass", "W"),
        ("play", "S"),
    ]
    assert not [e for e in effective if e.type in ("foul", "notice")]
    (corr,) = t.of("correction")
    assert "seen at t=" in corr["reason"] and "settled" in corr["reason"]
    joker = next(e for e in effective if e.type == "play" and e["cards"] == ["HR"])
    e_pass = next(e for e in effective if e.type == "pass" and e["seat"] == "E")
    assert joker.t <= e_pass.t  # the log keeps time order
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_real_play_out_of_turn_stays_a_foul() -> None:
    """E plays out of turn a second before S, on turn, plays: in the other order E's play would
    be legal, but a move never explains a single clash (``HINDSIGHT_GAIN``), and the table's
    continuation (E, having lost the trick, does not answer; S wins it and leads) fits the
    order as seen."""
    t = Table()
    t.do("deal_start", first_leader="S")
    t.play("E", "D9")  # out of turn: taken back, E loses the trick
    t.play("S", "S5", step=1.0)
    t.pass_("N")
    t.pass_("W")
    t.do("trick_cleared", step=0.5)
    t.play("S", "S6")
    t.pass_("E")
    effective = effective_events(t.ref.events)
    assert [(e["kind"], e["seat"]) for e in effective if e.type == "foul"] == [("out_of_turn", "E")]
    assert not t.of("correction") and not t.of("notice")


def test_a_play_taken_from_its_glimpse_then_reported_late_is_one_play() -> None:
    """Seed 9401: S's small joker glimpsed by one faint corner; E and N pass (ignored: S on
    turn), and the decoder takes S as playing the glimpsed SB. The camera then reports S's SB,
    5 s after it landed: the same play, not a second one out of turn. One correction puts the
    reported play in place of the inserted one; no foul is left."""
    t = Table()
    t.do("deal_start", first_leader="N")
    doubt = [["SB", 4.9]]
    t.do("played", seat="N", cards=["DA"], doubts=[{"card": "DA", "or": doubt}])
    t.do("played", seat="W", cards=["C2"], doubts=[{"card": "C2", "or": doubt}])
    t.do("glimpse", step=3.0, seat="S", cards=["SB"])
    glimpsed = t.t
    t.pass_("E", step=3.0)
    t.pass_("N", step=1.6)  # S taken as playing the glimpsed SB
    t.do("played", step=0.5, seat="S", cards=["SB"], doubts=[{"card": "SB", "or": [["HR", 4.9]]}])
    t.pass_("W")
    t.do("trick_cleared", step=0.5)
    t.play("S", "S3")
    effective = effective_events(t.ref.events)
    plays = [(e["seat"], e["cards"]) for e in effective if e.type == "play"]
    assert plays == [("N", ["DA"]), ("W", ["C2"]), ("S", ["SB"]), ("S", ["S3"])]
    assert not [e for e in effective if e.type == "foul"]
    late = t.of("correction")[-1]
    assert "reported late" in late["reason"]
    joker = next(e for e in effective if e.type == "play" and e["cards"] == ["SB"])
    assert joker.t == glimpsed
    assert t.deal.counts["S"] == 25
    assert fold(t.ref.events, t.profile) == t.ref.state
