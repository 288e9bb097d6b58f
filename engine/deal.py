"""Table and deal state as a fold over the event log (DESIGN.md: "the event log is the truth").

:func:`apply_event` is the only way the state changes: the referee applies each event it emits,
and :func:`fold` replays a log (corrections included) into the same state, so
``fold(referee.events, profile) == referee.state``.

Turn order (RULES.md "One deal"): play passes to the next seat in the profile's direction
(S -> E -> N -> W by default); seats with no cards and seats that lost the right to play in this
trick (out of turn, exposed card, illegal play: 002 "停止一轮出牌") are skipped; when the turn
comes back round to the seat that made the last play, that seat leads again, or - when it has gone
out - its partner (接风, 001 line 75 "对家接风", 000 line 153). An out-of-turn play is taken back
and never moves the turn (national 2022 notes in RULES.md); an illegal play stays out (cards
leave the hand: 000 line 449 "一旦被对方看到…不得收回") but does not change the trick.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from engine.cards import Card, parse_card, parse_cards
from engine.combos import Combo, classify
from engine.events import Event, EventError
from engine.match import MatchState, team_of
from engine.profiles import Profile

__all__ = [
    "SEATS",
    "TEAMS",
    "DealState",
    "TableState",
    "apply_event",
    "fold",
    "effective_events",
    "play_level",
    "combo_json",
    "BARRING_FOULS",
    "know",
    "third_copies",
    "UNCOUNTED_FOULS",
]

SEATS: Final = ("N", "E", "S", "W")
TEAMS: Final = ("NS", "EW")
_PARTNER: Final = {"N": "S", "S": "N", "E": "W", "W": "E"}
#: fouls after which the offender may not play again in the current trick (002 十一).
BARRING_FOULS: Final = ("out_of_turn", "exposed_card", "illegal_play")
#: a card seen a third time is a probable misread, not a player's foul: it is flagged for
#: review but does not count towards the three fouls of a pair.
UNCOUNTED_FOULS: Final = ("duplicate_card",)


def play_level(level: str | None) -> str | None:
    """The level to read plays at: the deal's level. A joker cut (000 篇6 "抽到大小王不带": no
    level card, no wilds) stays None, the level-less reading of engine.combos and engine.moves
    (natural order, ♥A an ordinary A); its combos carry ``level`` null in events."""
    return level


@dataclass(eq=True)
class DealState:
    """One deal as the referee knows it from the plays alone (it never sees hands)."""

    number: int
    level: str | None
    leader: str | None
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SEATS, 27))
    #: seat on turn; None before the first lead of a first deal with an unknown leader
    turn: str | None = None
    top: Combo | None = None
    owner: str | None = None
    barred: set[str] = field(default_factory=set)
    #: seats whose hand is void (national: a wrong tribute found after play starts); they
    #: play no more and finish last
    void: set[str] = field(default_factory=set)
    #: national 2022: after an out-of-turn play the partner may not lead that kind in the next
    #: trick: (partner, kind, trick index)
    lead_ban: tuple[str, str, int] | None = None
    order: list[str] = field(default_factory=list)
    #: times each card has been played this deal (two decks: at most 2)
    played: dict[Card, int] = field(default_factory=dict)
    tributes: list[tuple[str, str, str]] = field(default_factory=list)
    returns: list[tuple[str, str, str]] = field(default_factory=list)
    anti: tuple[str, ...] = ()
    #: tribute card of each payer, cards each payer received in return (for wrong tribute)
    paid: dict[str, Card] = field(default_factory=dict)
    received: dict[str, list[Card]] = field(default_factory=dict)
    #: cards known to be in a seat's hand (tribute, return, shown, exposed) and not yet played:
    #: with the cards played they make the two-deck conservation check
    known: dict[str, list[Card]] = field(default_factory=dict)
    tribute_flagged: set[str] = field(default_factory=set)
    #: seats that reached the report threshold (报牌)
    alerted: set[str] = field(default_factory=set)
    #: when the seat on turn got the turn (slow play)
    clock: float = 0.0
    plays: int = 0
    tricks: int = 0
    over: bool = False
    forfeit: str | None = None

    @property
    def out(self) -> list[str]:
        return list(self.order)

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "level": self.level,
            "leader": self.leader,
            "counts": dict(self.counts),
            "turn": self.turn,
            "trick": combo_json(self.top) if self.top is not None else None,
            "owner": self.owner,
            "barred": sorted(self.barred),
            "void": sorted(self.void),
            "order": list(self.order),
            "must_report": sorted(self.alerted),
            "over": self.over,
        }


@dataclass(eq=True)
class TableState:
    """Everything the screens show for one table: the match score and the deal in progress."""

    profile: Profile
    match: MatchState
    match_no: int = 0
    game: int = 0
    deal_no: int = 0
    deal: DealState | None = None
    prev_order: tuple[str, ...] | None = None
    team_fouls: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TEAMS, 0))
    fouls: list[tuple[int, str | None, str]] = field(default_factory=list)
    count_warnings: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SEATS, 0))
    match_over: bool = True
    match_started: float = 0.0
    time_called: bool = False
    deals_after_time: int = 0
    series: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TEAMS, 0))
    series_over: bool = True
    corrections: int = 0

    @classmethod
    def new(cls, profile: Profile) -> TableState:
        return cls(profile=profile, match=MatchState.new(profile))

    @property
    def seat_order(self) -> tuple[str, str, str, str]:
        return self.profile.play.seat_order

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile.name,
            "match": self.match_no,
            "game": self.game,
            "deal": self.deal_no,
            "levels": self.match.levels,
            "match_over": self.match_over,
            "winner": self.match.winner,
            "team_fouls": dict(self.team_fouls),
            "series": dict(self.series),
            "current": self.deal.to_json() if self.deal is not None else None,
        }


def know(d: DealState, seat: str, cards: Iterable[Card]) -> None:
    """Record that ``seat`` holds ``cards`` (as a multiset: cards already known count)."""
    held = d.known.setdefault(seat, [])
    want: dict[Card, int] = {}
    for c in cards:
        want[c] = want.get(c, 0) + 1
    for c, n in want.items():
        held.extend([c] * max(0, n - held.count(c)))


def third_copies(d: DealState, seat: str | None, cards: Iterable[Card]) -> list[Card]:
    """Cards of ``cards`` (played or shown by ``seat``) that would be a third copy in the deal:
    copies played so far, plus copies known in other hands, plus these."""
    want: dict[Card, int] = {}
    for c in cards:
        want[c] = want.get(c, 0) + 1
    out: list[Card] = []
    others = [h for s, h in d.known.items() if s != seat and h]
    played = d.played
    for c, n in want.items():
        if not others:
            if played.get(c, 0) + n > 2:
                out.append(c)
            continue
        elsewhere = sum(h.count(c) for h in others)
        if seat is None:
            n = max(0, n - elsewhere)  # an unknown seat may be showing a known card
        if played.get(c, 0) + elsewhere + n > 2:
            out.append(c)
    return out


def combo_json(combo: Combo) -> dict[str, Any]:
    """``combo.to_json()``; when engine.combos cannot name what the wilds stand for (seen: a wild
    in the triple of a full house with a joker pair, 2026-11-29) the same fields without the
    ``wilds`` list, so the feed never stops."""
    try:
        return combo.to_json()
    except (IndexError, KeyError, ValueError):
        return {
            "kind": combo.kind,
            "key": combo.key,
            "size": combo.size,
            "cards": [str(c) for c in combo.cards],
            "level": combo.level,
            "bomb": combo.power > 0,
        }


# ---------------------------------------------------------------------------------- turn order
def _active(d: DealState, seat: str) -> bool:
    return d.counts[seat] > 0 and seat not in d.void


def _end_trick(st: TableState, d: DealState, t: float) -> None:
    owner = d.owner
    assert owner is not None
    if _active(d, owner):
        leader = owner
    elif _active(d, _PARTNER[owner]):
        leader = _PARTNER[owner]  # 接风
    else:
        order = st.seat_order
        i = order.index(owner)
        leader = next(
            (order[(i + k) % 4] for k in range(1, 4) if _active(d, order[(i + k) % 4])), owner
        )
    d.top = None
    d.owner = None
    d.barred.clear()
    d.tricks += 1
    d.turn = leader
    d.clock = t


def _advance(st: TableState, d: DealState, seat: str, t: float) -> None:
    """Move the turn on from ``seat`` (who just played, passed or lost the trick)."""
    if d.over:
        d.turn = None
        return
    order = st.seat_order
    i = order.index(seat)
    for k in range(1, 5):
        s = order[(i + k) % 4]
        if d.owner is not None and s == d.owner:
            _end_trick(st, d, t)
            return
        if _active(d, s) and s not in d.barred:
            d.turn = s
            d.clock = t
            return
    # an empty trick and everybody barred: the barring lapses
    d.barred.clear()
    d.turn = next((order[(i + k) % 4] for k in range(1, 5) if _active(d, order[(i + k) % 4])), None)
    d.clock = t


# ---------------------------------------------------------------------------------- evolve
def _cards(data: Mapping[str, Any], key: str) -> list[Card]:
    return parse_cards(data[key], two_decks=False)


def _combo_from(data: Mapping[str, Any], cards: Sequence[Card], level: str | None) -> Combo | None:
    cj = data.get("combo")
    if not isinstance(cj, Mapping):
        return None
    readings = classify(cards, level)
    for r in readings:
        if r.kind == cj.get("kind") and r.key == cj.get("key"):
            return r
    at = f"at level {level}" if level is not None else "without a level"
    raise EventError(f"play {cj!r}: no reading of {' '.join(map(str, cards))} {at}")


def apply_event(
    st: TableState, etype: str, t: float, data: Mapping[str, Any], combo: Combo | None = None
) -> None:
    """Apply one event to the state (in place). Corrections are handled by :func:`fold`.
    ``combo``: the reading of a ``play`` when the caller has it (saves reading it again)."""
    p = st.profile
    if etype == "deal_started":
        match_no = int(data.get("match", st.match_no))
        if match_no != st.match_no or st.match_over:
            st.match_no = match_no
            st.match = MatchState.new(p)
            st.match_over = False
            st.prev_order = None
            st.team_fouls = dict.fromkeys(TEAMS, 0)
            st.count_warnings = dict.fromkeys(SEATS, 0)
            st.match_started = t
            st.time_called = False
            st.deals_after_time = 0
            game = int(data.get("game", 1))
            if game == 1 or st.series_over:
                st.series = dict.fromkeys(TEAMS, 0)
                st.series_over = False
            st.game = game
        st.deal_no += 1
        leader = data["leader"]
        st.deal = DealState(number=st.deal_no, level=data["level"], leader=leader, clock=t)
        st.deal.turn = leader
        return
    if etype in ("match_ended", "series_ended", "time_called", "notice", "warning"):
        _apply_match(st, etype, t, data)
        return
    d = st.deal
    if d is None:
        raise EventError(f"{etype} event before any deal_started")
    if etype == "play":
        seat = data["seat"]
        cards = _cards(data, "cards")
        # ``unseen``: cards the seat played that no camera saw (the referee's second look found
        # the table playing on as if this play had emptied the hand)
        d.counts[seat] = max(0, d.counts[seat] - len(cards) - int(data.get("unseen", 0)))
        got = d.received.get(seat)
        mine = d.known.get(seat)
        for c in cards:
            if mine and c in mine:
                mine.remove(c)
            d.played[c] = min(2, d.played.get(c, 0) + 1)
            if got and c in got:
                got.remove(c)  # a card received in return, now played
        d.clock = t
        if data.get("legal", True) and data["combo"] is not None:
            d.top = combo if combo is not None else _combo_from(data, cards, play_level(d.level))
            d.owner = seat
            d.plays += 1
            _advance(st, d, seat, t)
        return
    if etype == "pass":
        _advance(st, d, data["seat"], t)
        return
    if etype == "seat_out":
        seat = data["seat"]
        if seat not in d.order:
            d.order.append(seat)
        # A legal play that empties a hand has moved the turn on already; an illegal one (a
        # banned lead of the last card, national 2022) leaves it on the seat now out.
        if d.turn == seat and not d.over:
            _advance(st, d, seat, t)
        return
    if etype == "foul":
        seat = data["seat"]
        kind = data["kind"]
        st.fouls.append((d.number, seat, kind))
        if seat is not None and kind not in UNCOUNTED_FOULS and not data.get("review"):
            st.team_fouls[team_of(seat)] += 1
        if kind == "exposed_card" and seat is not None and not d.over:
            know(d, seat, parse_cards(data.get("cards") or [], two_decks=False))
        if kind == "wrong_tribute" and seat is not None:
            d.tribute_flagged.add(seat)
            if data.get("void") and not d.over:
                d.void.add(seat)
                d.barred.discard(seat)
                if d.turn == seat:
                    _advance(st, d, seat, t)
        ban = data.get("lead_ban")
        if isinstance(ban, Mapping) and not d.over:
            d.lead_ban = (str(ban["seat"]), str(ban["kind"]), d.tricks + 1)
        if (
            seat is not None
            and kind in BARRING_FOULS
            and not data.get("confirms")  # a confirmation counts; its penalty was applied
            and getattr(p.fouls, kind) == "lose_trick"
            and not d.over
            and _active(d, seat)
        ):
            d.barred.add(seat)
            if d.turn == seat or (d.turn is None and d.top is None):
                _advance(st, d, seat, t)
        return
    if etype in ("tribute", "tribute_returned"):
        card = parse_card(data["card"])
        giver, to = data["from"], data["to"]
        if etype == "tribute":
            d.tributes.append((giver, to, data["card"]))
            d.paid[giver] = card
        else:
            d.returns.append((giver, to, data["card"]))
            d.received.setdefault(to, []).append(card)
        held = d.known.get(giver)
        if held and card in held:
            held.remove(card)
        d.known.setdefault(to, []).append(card)
        d.clock = t
        return
    if etype == "anti_tribute":
        d.anti = tuple(data["seats"])
        for seat, cards in dict(data.get("shown") or {}).items():
            know(d, seat, parse_cards(cards, two_decks=False))
        return
    if etype == "count_alert":
        d.alerted.add(data["seat"])
        return
    if etype == "deal_ended":
        forfeit = data.get("forfeit")
        if forfeit:
            st.match = st.match.after_forfeit(forfeit)
            st.team_fouls[forfeit] = 0
            st.prev_order = None  # no finishing order: no tribute for the next deal
            d.forfeit = forfeit
        else:
            order = tuple(data["order"])
            d.order = list(order)
            st.match = st.match.after_deal(order)
            st.prev_order = order
        d.over = True
        d.turn = None
        if st.time_called:
            st.deals_after_time += 1
        return
    raise EventError(f"unknown event type {etype!r}")


def _apply_match(st: TableState, etype: str, t: float, data: Mapping[str, Any]) -> None:
    if etype == "warning":
        if data["kind"] == "card_count" and data["seat"] is not None:
            st.count_warnings[data["seat"]] += 1
        return
    if etype == "notice":
        if data.get("abandoned") and st.deal is not None:
            st.deal.over = True
            st.deal.turn = None
            st.prev_order = None  # no result: no tribute for the next deal
        if data.get("barring_lapses") and st.deal is not None:
            st.deal.barred.difference_update(data["barring_lapses"])
        return
    if etype == "time_called":
        st.time_called = True
        return
    if etype == "match_ended":
        forfeit = data.get("forfeit")
        if forfeit and not st.match.over:
            st.match = st.match.after_forfeit(forfeit)
        st.match_over = True
        if st.deal is not None and not st.deal.over:
            st.deal.over = True
            st.deal.turn = None
            st.deal.forfeit = forfeit
        winner = data["winner"]
        if winner in st.series:
            st.series[winner] += 1
        return
    if etype == "series_ended":
        st.series_over = True
        return


def fold(events: Iterable[Event], profile: Profile) -> TableState:
    """The state after a log. A ``correction`` rewinds the effective log to just before the
    event it ``replaces``; the events after it are the corrected continuation. Nothing in the
    log is deleted; the state is recomputed from it."""
    events = list(events)
    for expect, ev in enumerate(events, 1):
        if ev.seq != expect:
            raise EventError(f"event seq {ev.seq} where {expect} was expected (gapless)")
    st = TableState.new(profile)
    for ev in effective_events(events):
        apply_event(st, ev.type, ev.t, ev.data)
    st.corrections = sum(1 for ev in events if ev.type == "correction")
    return st


def effective_events(events: Iterable[Event]) -> list[Event]:
    """The events in effect after a log's corrections (each ``correction`` drops the events from
    the one it ``replaces`` on; the corrected continuation follows it). The correction events
    themselves are left out. Raises ``EventError`` for a correction of an event not in effect."""
    effective: list[Event] = []
    index: dict[str, int] = {}
    for ev in events:
        if ev.type == "correction":
            rid = ev.data["replaces"]
            if rid not in index:
                raise EventError(
                    f"correction seq {ev.seq} replaces {rid!r}, not an effective event of this log"
                )
            cut = index[rid]
            for e in effective[cut:]:
                index.pop(e.id, None)
            del effective[cut:]
            continue
        index[ev.id] = len(effective)
        effective.append(ev)
    return effective
