"""State as a fold over events (DESIGN.md: the event log is the truth).

Pure functions over event bodies (dicts, in ``seq`` order): ``apply_corrections`` resolves
``correction`` events, ``match_summary`` gives the deals and the result of a match,
``TableState`` is the live summary of a table that the stream pushes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

SEATS = ("N", "E", "S", "W")
TEAM_OF = {"N": "NS", "S": "NS", "E": "EW", "W": "EW"}
HAND_SIZE = 27
RESULT_TYPES = frozenset({"deal_started", "deal_ended", "match_ended", "foul", "correction"})

EventBody = Mapping[str, Any]


def apply_corrections(events: Iterable[EventBody]) -> list[EventBody]:
    """The events in effect, in order; corrections themselves are not returned. Nothing is
    deleted from the log.

    A correction whose ``by`` is an event-like object (has a ``type``) puts that object in the
    place of the event it ``replaces`` (keeping its id, table, deal, seq and t). Any other
    correction is the referee's (engine/referee.py; ``by`` is the id of the first event of the
    corrected continuation, or null): it rewinds the events in effect to just before the one it
    ``replaces``, and the continuation follows it in the log. A correction of an event not in
    effect changes nothing."""
    out: list[EventBody] = []
    index: dict[str, int] = {}
    for ev in events:
        if ev.get("type") != "correction":
            index[str(ev.get("id"))] = len(out)
            out.append(ev)
            continue
        cut = index.get(str(ev.get("replaces")))
        if cut is None:
            continue
        by = ev.get("by")
        if isinstance(by, Mapping) and "type" in by:
            merged = dict(by)
            for key in ("v", "id", "table", "deal", "seq", "t"):
                merged[key] = out[cut].get(key)
            out[cut] = merged
            continue
        for e in out[cut:]:
            index.pop(str(e.get("id")), None)
        del out[cut:]
    return out


def counts_as_foul(ev: EventBody) -> bool:
    """A foul event that counts (as the referee counts towards a pair's limit): not a
    ``duplicate_card`` (a probable misread) and not a camera reading still waiting for the
    referee's mark (``review``)."""
    return ev.get("type") == "foul" and ev.get("kind") != "duplicate_card" and not ev.get("review")


@dataclass
class DealSummary:
    number: int
    level: str | None = None
    leader: str | None = None
    order: list[str] | None = None
    levels: dict[str, str] | None = None
    ended: bool = False


@dataclass
class MatchSummary:
    deals: dict[int, DealSummary] = field(default_factory=dict)
    levels: dict[str, str] = field(default_factory=lambda: {"NS": "2", "EW": "2"})
    #: ``NS``, ``EW`` or ``draw`` once ``match_ended`` is seen, else None.
    winner: str | None = None
    finished: bool = False
    started: bool = False
    fouls: dict[str, int] = field(default_factory=lambda: {"NS": 0, "EW": 0})

    @property
    def deals_played(self) -> int:
        return sum(1 for d in self.deals.values() if d.ended)

    @property
    def status(self) -> str:
        if self.finished:
            return "finished"
        return "playing" if self.started else "pending"


def match_summary(events: Sequence[EventBody]) -> MatchSummary:
    """Deals, levels, winner and fouls of one match from its events in ``seq`` order."""
    out = MatchSummary()
    for ev in apply_corrections(events):
        kind = ev.get("type")
        out.started = True
        number = int(ev.get("deal", 0))
        if kind == "deal_started":
            deal = out.deals.setdefault(number, DealSummary(number))
            deal.level = ev.get("level")
            deal.leader = ev.get("leader")
        elif kind == "deal_ended":
            deal = out.deals.setdefault(number, DealSummary(number))
            deal.order = list(ev.get("order") or [])
            deal.levels = dict(ev.get("levels") or {})
            deal.ended = True
            if deal.levels:
                out.levels = {"NS": deal.levels.get("NS", "2"), "EW": deal.levels.get("EW", "2")}
        elif kind == "match_ended":
            winner = ev.get("winner")
            out.winner = winner if winner in ("NS", "EW") else "draw"
            out.finished = True
        elif counts_as_foul(ev):
            seat = ev.get("seat")
            if seat in TEAM_OF:
                out.fouls[TEAM_OF[seat]] += 1
    return out


@dataclass
class TableState:
    """What a screen shows about a table: fold of its events with ``apply``."""

    table: str
    match_id: int | None = None
    deal: int | None = None
    level: str | None = None
    levels: dict[str, str] = field(default_factory=lambda: {"NS": "2", "EW": "2"})
    leader: str | None = None
    cards_left: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SEATS, HAND_SIZE))
    finished: list[str] = field(default_factory=list)
    last_play: dict[str, Any] | None = None
    fouls: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SEATS, 0))
    winner: str | None = None
    match_over: bool = False
    last_seq: int = 0
    last_t: float = 0.0
    events: int = 0

    def apply(self, ev: EventBody) -> None:
        kind = ev.get("type")
        self.events += 1
        self.last_seq = max(self.last_seq, int(ev.get("seq", 0)))
        self.last_t = float(ev.get("t", 0.0))
        if kind == "deal_started":
            self.deal = int(ev.get("deal", 0))
            self.level = ev.get("level")
            self.leader = ev.get("leader")
            self.cards_left = dict.fromkeys(SEATS, HAND_SIZE)
            self.finished = []
            self.last_play = None
        elif kind in ("tribute", "tribute_returned"):
            giver, taker = ev.get("from"), ev.get("to")
            if giver in self.cards_left and taker in self.cards_left:
                self.cards_left[giver] -= 1
                self.cards_left[taker] += 1
        elif kind == "play":
            seat = ev.get("seat")
            cards = ev.get("cards") or []
            if seat in self.cards_left:
                self.cards_left[seat] = max(0, self.cards_left[seat] - len(cards))
            self.last_play = {"seat": seat, "cards": list(cards), "combo": ev.get("combo")}
        elif kind == "seat_out":
            seat = ev.get("seat")
            if seat in SEATS and seat not in self.finished:
                self.finished.append(seat)
        elif counts_as_foul(ev):
            seat = ev.get("seat")
            if seat in self.fouls:
                self.fouls[seat] += 1
        elif kind == "deal_ended":
            self.finished = list(ev.get("order") or self.finished)
            levels = ev.get("levels") or {}
            self.levels = {"NS": levels.get("NS", "2"), "EW": levels.get("EW", "2")}
        elif kind == "match_ended":
            winner = ev.get("winner")
            self.winner = winner if winner in ("NS", "EW") else "draw"
            self.match_over = True

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "match_id": self.match_id,
            "deal": self.deal,
            "level": self.level,
            "levels": dict(self.levels),
            "leader": self.leader,
            "cards_left": dict(self.cards_left),
            "finished": list(self.finished),
            "last_play": self.last_play,
            "fouls": dict(self.fouls),
            "winner": self.winner,
            "match_over": self.match_over,
            "last_seq": self.last_seq,
            "last_t": self.last_t,
            "events": self.events,
        }


def table_state(table: str, match_id: int | None, events: Sequence[EventBody]) -> TableState:
    state = TableState(table=table, match_id=match_id)
    for ev in apply_corrections(events):
        state.apply(ev)
    # Corrections are counted as events too (they are in the log).
    state.events = len(events)
    if events:
        state.last_seq = max(int(e.get("seq", 0)) for e in events)
    return state
