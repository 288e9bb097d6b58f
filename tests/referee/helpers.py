"""Scripted tables for referee scenario tests: observations built by hand from RULES.md."""

from __future__ import annotations

from engine.combos import beats
from engine.deal import DealState
from engine.events import Event
from engine.observations import Observation, parse_observation
from engine.profiles import Profile, load_profile
from engine.referee import Referee

RANKS = "3456789TJQKA"


class Table:
    """A referee with a clock; ``do`` feeds one observation given as keyword fields."""

    def __init__(self, profile: str | Profile = "standard") -> None:
        self.profile = load_profile(profile) if isinstance(profile, str) else profile
        self.ref = Referee(self.profile)
        self.t = 0.0

    def do(self, type: str, step: float = 2.0, **fields: object) -> list[Event]:
        self.t += step
        obs: Observation = parse_observation({"t": self.t, "type": type, **fields})
        return self.ref.feed(obs)

    def play(self, seat: str, cards: str, step: float = 2.0) -> list[Event]:
        return self.do("played", step, seat=seat, cards=cards.split())

    def pass_(self, seat: str, step: float = 2.0) -> list[Event]:
        return self.do("pass", step, seat=seat)

    @property
    def deal(self) -> DealState:
        d = self.ref.state.deal
        assert d is not None
        return d

    def fouls(self, kind: str | None = None) -> list[Event]:
        return [
            e for e in self.ref.events if e.type == "foul" and (kind is None or e["kind"] == kind)
        ]

    def of(self, etype: str) -> list[Event]:
        return [e for e in self.ref.events if e.type == etype]


def chunks_for(k: int, n: int = 27) -> list[str]:
    """``n`` cards for the k-th seat to go out, as bombs (4..8 cards) of four ranks."""
    r = RANKS[4 * k : 4 * k + 4]
    sizes: list[int] = []
    while n >= 12:
        sizes.append(8)
        n -= 8
    sizes += [n] if n <= 8 else [n - 4, 4]
    out = []
    for rank, size in zip(r, sizes, strict=False):
        cards = [s + rank for s in "SHCD" for _ in range(2)]
        out.append(" ".join(cards[:size]))
    return out


FILLERS = ["S2", "C2", "D2", "S2", "C2", "D2", "SB", "SB", "HR", "HR"]


def play_out(table: Table, finishers: list[str], max_actions: int = 400) -> None:
    """Play the deal in progress until it ends: ``finishers`` go out in this order, each by
    bombs; other seats lead a filler single when the lead is theirs and pass otherwise."""
    fillers = list(FILLERS)
    chunks: dict[str, list[str]] = {}
    for _ in range(max_actions):
        st = table.ref.state
        d = st.deal
        if d is None or d.over or st.match_over:
            return
        seat = d.turn
        assert seat is not None
        active = next((s for s in finishers if d.counts[s] > 0), None)
        if active is not None and active not in chunks:
            chunks[active] = chunks_for(finishers.index(active), d.counts[active])
        if seat == active and (d.top is None or beats(chunks[seat][0], d.top, d.level or "A")):
            table.play(seat, chunks[seat].pop(0))
        elif d.top is None:
            table.play(seat, fillers.pop(0))
        else:
            table.pass_(seat)
    raise AssertionError("scripted deal did not end")
