"""The edits: alternative histories of the log, each where a kind of camera error may lie.

The search (engine/decoder.py) does not enumerate histories; it asks generators here for the few
that a clash points at. An :class:`Alt` is a history that differs from the log from observation
``k`` on: each index of ``Alt.fixes`` is read as the observations given there (none: it goes), at
the camera's ``cost`` (engine/channel.py), with ``why`` as the correction's reason. It is admitted
only when its continuation removes ``gain`` clashes as ``counts`` counts them: ``_clash`` (a foul
the table did not act on, a pass out of turn, a play after the deal ended by the count),
``_strain`` (also a card seen a third time), ``_deal_over_signal`` (the table ended a deal the
referee has live) or ``_count_off``'s own (a seat's wrong count reports, ``_miscount``).

An edit is one of four kinds:

* *re-read* a play (``_fix``; what the camera read stays in ``camera``, why in ``reread``; the
  readings from ``_legal_readings``): a suspect by its legal readings, or a trick's top made
  illegal by a card maybe missed (``_reread_at``); the earlier reading of a card seen a third
  time (``_third_copy``); a seat's last plays as emptying its hand, the rest gone down unseen
  (``_gone``; undone by the search's ``_undo_gone``); a seat's bombs or illegal plays with a card
  missed, or its bombs, illegal plays or plays with a doubted card without it, where it says it
  holds fewer or more cards than the count, or plays after going out by it (``_count_off``);
* *insert* turns the camera missed, passes or plays glimpsed (``_glimpsed``) or the only answer
  short of a bomb (``_put_in``, where the search's ``_window`` or ``_unseen`` say they may lie,
  or the table ended the deal);
* *move* an observation back before others reported first (``_moved``): ``_reorder``, a beam over
  orders of the last ``REORDER_SPAN`` observations, and ``_late_in_trick``;
* *move cards* to an earlier play of their seat (``_to_earlier``, at ``_move_cost``): found late
  or read anew by the camera (the search's ``_late_cards``), or seen only with the seat's next
  play (``_late_in_trick``).

Where each is proposed is the search's ``_second_look``: on a clash, the suspects of the commit
window re-read or given the turns missed before them, plus ``_late_in_trick``, ``_unseen``,
``_gone`` and ``_count_off``; at a deal the table ended, ``_gone`` and ``_put_in``; at a wrong
count report, ``_count_off``; on every turn, ``_reorder``; at a third copy, ``_third_copy``.

:class:`Edits` holds the generators and the log readers they share (``_pos``, ``_on_turn``,
``_back``, ``_last_play``, ``_played_after``, ``_clashes_since``, ...); :class:`engine.decoder.
Decoder` subclasses it with the search, and the referee (engine/referee.py) mixes that in with its
log and its rules (``RulesCore``). A generator only proposes: it runs the rules where it must to
stay legal, but what is admitted and what wins is the search's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from itertools import combinations, product
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol

from engine.cards import BIG_JOKER, SMALL_JOKER, Card, parse_card, sort_cards
from engine.channel import (
    _HINDSIGHT_TRIES,
    _OTHER_JOKER,
    _UNSEEN_SEATS,
    COUNT_OFF_GAIN,
    COUNT_OFF_MAX,
    EXTRA_CARD_COST,
    GLIMPSE_JOKER_COST,
    GONE_CARD_COST,
    GONE_MAX_LEFT,
    GONE_WINDOW,
    HINDSIGHT_BUDGET,
    HINDSIGHT_GAIN,
    LATE_MAX,
    MOVED_CARD_COST,
    MOVED_SURE_COST,
    REORDER_BEAM,
    REORDER_COST,
    REORDER_S,
    REORDER_SPAN,
    REREAD_BUDGET,
    SWAP_MARGIN,
    SWAP_MAX_COST,
    UNSEEN_COST,
    Reading,
    _how,
    _joker_bomb_doubts,
    _missed_cards,
    _readings,
    _take,
    _text,
    _without,
    reread,
)
from engine.deal import TEAMS, DealState, TableState, third_copies
from engine.events import Event
from engine.observations import CAMERA_SOURCE, Observation, is_camera

__all__ = ["Alt", "Counts", "Edits", "RulesCore"]


class RulesCore(Protocol):
    """What the decoder needs of the rules referee's machine (engine/referee.py ``_Core``)."""

    st: TableState

    def feed(self, obs: Observation, origin: int) -> Sequence[Any]: ...
    def _live_deal(self) -> DealState | None: ...
    def _legal(self, d: DealState, seat: str, cards: list[Card]) -> bool: ...


#: fouls that show the table played on differently from the referee's reading
_CLASH_FOULS: Final = frozenset({"illegal_play", "out_of_turn"})
#: observations that move the turn or end the trick
_TURN_OBS: Final = frozenset({"played", "pass", "trick_cleared", "deal_start"})
#: tricks with one answer short of a bomb: the small joker (pair) is beaten only by the big one
_ONLY_ANSWER: Final[Mapping[tuple[Card, ...], tuple[Card, ...]]] = {
    (SMALL_JOKER,): (BIG_JOKER,),
    (SMALL_JOKER, SMALL_JOKER): (BIG_JOKER, BIG_JOKER),
}


def _clash(etype: str, data: Mapping[str, Any]) -> bool:
    """The table played on otherwise than the referee's reading: an illegal play, a play or pass
    out of turn, a turn after the deal ended by the count (seed 9808)."""
    if etype == "foul":
        return data.get("kind") in _CLASH_FOULS
    return etype == "notice" and (
        data.get("ignored") == "pass_out_of_turn" or bool(data.get("outside"))
    )


def _strain(etype: str, data: Mapping[str, Any]) -> bool:
    """A clash (``_clash``), or a card seen a third time in the deal."""
    return _clash(etype, data) or (etype == "foul" and data.get("kind") == "duplicate_card")


def _miscount(etype: str, data: Mapping[str, Any]) -> bool:
    """A seat's spoken count that is not the referee's (a warning or a foul)."""
    return etype in ("warning", "foul") and data.get("kind") == "card_count"


def _deal_over_signal(etype: str, data: Mapping[str, Any]) -> bool:
    """The table ended a deal the referee has live (a new deal; a clearing, a seat to answer)."""
    return etype == "notice" and bool(data.get("abandoned") or data.get("cleared_open"))


def _foul(e: Event, kind: str) -> bool:
    return e.type == "foul" and e.data.get("kind") == kind


def _noun(o: Observation) -> str:
    return "play" if o.type == "played" else "pass"


#: what counts as a clash for an alternative: ``_clash``, ``_strain`` or ``_deal_over_signal``
Counts = Callable[[str, Mapping[str, Any]], bool]


class Alt(NamedTuple):
    """A history that differs from the log from observation ``k`` on: each index of ``fixes``
    read as the observations there (none: it goes), at the camera's ``cost``; admitted when it
    removes ``gain`` clashes (``counts``); ``why`` the correction's reason, ``then`` its hook."""

    k: int
    fixes: Mapping[int, Sequence[Observation]]
    cost: float
    why: str
    gain: int = HINDSIGHT_GAIN
    counts: Counts = _clash
    then: Callable[[], None] | None = None


class Edits:
    """The generators of alternative histories and the log readers they share: the base of
    :class:`engine.decoder.Decoder`, mixed into :class:`engine.referee.Referee`, whose log they
    read (the module's docstring)."""

    #: the referee's log this decoder reads (engine/referee.py ``Referee``)
    _core: RulesCore
    _obs: list[Observation]
    _effective: list[Event]
    _origin: list[int]
    _deal_snap: tuple[int, Any] | None
    #: plays taken as a seat's last (``_gone``): (the reading put in, the one before, at a deal's
    #: end), undone (``_undo_gone``) when the seat plays on
    _gone_fixes: list[tuple[Observation, Observation, bool]]
    _glimpses: list[Observation]

    if TYPE_CHECKING:

        @property
        def state(self) -> TableState: ...
        def _copy_core(self, core: Any) -> RulesCore: ...
        def _core_before(self, k: int) -> RulesCore: ...

    # -- the log -------------------------------------------------------------------------------

    def _log_since(self, k: int) -> list[tuple[str, Mapping[str, Any]]]:
        """The effective log's (type, data) from observation ``k`` on, read back from the end."""
        i = len(self._origin)
        while i and self._origin[i - 1] >= k:
            i -= 1
        return [(e.type, e.data) for e in self._effective[i:]]

    def _clashes_since(self, k: int, counts: Counts = _clash) -> int:
        return sum(1 for etype, data in self._log_since(k) if counts(etype, data))

    def _pos(self, k: int, etype: str | None = "play") -> int | None:
        """Position in the effective log of observation ``k``'s play (``etype``; None: any)."""
        eff = enumerate(self._effective)
        return next((i for i, e in eff if self._origin[i] == k and etype in (None, e.type)), None)

    def _on_turn(self, k: int, seat: str | None) -> tuple[RulesCore, DealState] | None:
        """The rules before observation ``k`` and their live deal, if ``seat`` is on turn."""
        before = self._core_before(k)
        d = before._live_deal()
        return None if d is None or seat is None or d.turn != seat else (before, d)

    def _back(self, pos: int, deal: int) -> Iterator[tuple[Event, int]]:
        """(event, observation) of the effective log before ``pos`` in ``deal``, latest first."""
        for i in range(pos - 1, -1, -1):
            if self._effective[i].deal != deal:
                return
            yield self._effective[i], self._origin[i]

    def _last_play(self, seat: str, deal: int, before: int) -> int | None:
        """Position in the effective log of ``seat``'s last play in ``deal`` before ``before``."""
        for i in range(len(self._effective) - 1, -1, -1):
            e = self._effective[i]
            mine = e.type == "play" and e.data["seat"] == seat
            if self._origin[i] < before and (e.deal != deal or mine):
                return i if e.deal == deal else None
        return None

    def _last_camera_play(
        self, seat: str, deal: int, before: int, legal_only: bool = True
    ) -> int | None:
        """:meth:`_last_play`, if a camera reading (legal, with ``legal_only``) not yet last."""
        i = self._last_play(seat, deal, before)
        e, o = (None, None) if i is None else (self._effective[i], self._obs[self._origin[i]])
        if e is None or o is None or not o.doubts or e.data.get("unseen"):
            return None
        as_read = e.data.get("legal") is not False or not legal_only
        return i if as_read and not o.extra.get("not_last") else None

    def _played_after(self, k: int, deal: int) -> Counter[Card]:
        """Copies of each card in the plays of ``deal`` after observation ``k`` (9602)."""
        eff = zip(self._effective, self._origin, strict=True)
        plays = (e for e, o in eff if o > k and e.deal == deal and e.type == "play")
        return Counter(parse_card(c) for e in plays for c in e.data["cards"])

    @staticmethod
    def _fix(
        o: Observation,
        cards: Iterable[Card],
        why: str,
        camera: Iterable[Card | str] | None = None,
        doubts: Any = (),
        **more: Any,
    ) -> Observation:
        """``o`` read as ``cards`` by a look back: ``camera`` what the camera read (default:
        ``o``'s), ``why`` the ``reread``; no ``doubts``: not second-guessed again. A camera
        reading stays the camera's (``source``), so a foul the fix leaves waits for the floor
        referee even where ``o`` was the camera's only by its doubts."""
        cam = [str(c) for c in (o.extra.get("camera", o.cards) if camera is None else camera)]
        mark = {"source": CAMERA_SOURCE} if is_camera(o) else {}
        extra = {**o.extra, **mark, "camera": cam, "reread": why, **more}
        cs = list(cards)
        cs = cs if cs == list(o.cards) else sort_cards(cs)
        return replace(o, cards=tuple(cs), doubts=tuple(doubts), extra=extra)

    @staticmethod
    def _legal_readings(
        before: RulesCore,
        d: DealState,
        seat: str,
        o: Observation,
        later: Mapping[Card, int] | None = None,
        budget: float = HINDSIGHT_BUDGET,
    ) -> list[Reading]:
        """The legal readings of camera play ``o`` by ``seat`` (rules ``before`` it) within
        ``budget``, cheapest first, at most ``_HINDSIGHT_TRIES``: runner-ups, a card too many, a
        card missed (``_missed_cards``, by the copies in the deal and ``later``), a joker bomb."""
        cards = list(o.cards)
        doubts: list[tuple[Card | None, Sequence[tuple[Card | None, float]]]] = []
        pool = list(o.doubts)
        for c in cards:
            alts = list(_take(pool, c) or ())
            if not any(a is None for a, _ in alts):
                alts.append((None, EXTRA_CARD_COST))
            doubts.append((c, alts))
        doubts += [(None, list(alts)) for c, alts in o.doubts if c is None]
        ups = [(y, float(c)) for _, a in o.doubts for y, c in a if y is not None]
        hints = dict(sorted(ups, key=lambda x: -x[1]))  # each card's cheapest, put in last
        doubts.append((None, _missed_cards(cards, Counter(d.played) + Counter(later or {}), hints)))
        doubts += _joker_bomb_doubts(cards)
        found: list[Reading] = []
        for cs, cost, changes in _readings(cards, doubts, budget):
            if len(found) >= _HINDSIGHT_TRIES:
                break
            key = Counter(cs)
            if cs and before._legal(d, seat, cs) and all(key != Counter(f[0]) for f in found):
                found.append((cs, cost, changes))
        return found

    # -- the generators ------------------------------------------------------------------------

    def _reread_at(self, k: int, why: str) -> Iterator[Alt]:
        """Suspect ``k`` (``_window``) re-read: by its legal readings; a top ("top") also with a
        card the camera may have missed that makes it illegal; one re-read as it came ("as
        read") as the camera read it, illegal after all (9303: E's DJ S6 re-read S6)."""
        o, pos = self._obs[k], self._pos(k)
        if o.seat is None or pos is None:
            return
        if why == "as read":
            was = self._effective[pos].data.get("reread")
            text = (
                f"{o.seat}'s {_text(o.cards)} taken as the camera read it, not a legal play: the "
                f"table played on as if it were one (re-read as it came: {was})"
            )
            yield Alt(k, {k: [self._fix(o, o.cards, text, doubts=o.doubts)]}, 0.0, text)
            return
        at = self._on_turn(k, o.seat) if self._clashes_since(k) >= HINDSIGHT_GAIN else None
        if at is None:
            return
        before, d = at
        what = (
            "not a legal play, and the table played on as if it were"
            if why == "illegal"
            else "the next plays did not beat it as read, and the table played on as if they did"
        )
        for cards, cost, changes in self._legal_readings(before, d, o.seat, o):
            text = f"camera read {_text(o.cards)}: {what}; {_how(cards, cost, changes)}"
            yield Alt(k, {k: [self._fix(o, cards, text, o.cards)]}, cost, text)
        # game 47602: N's D8 SQ read D8, SQ a doubt; the next ten plays judged out of turn
        tops = (a for c, alts in o.doubts if c is None and why == "top" for a in alts)
        for card, cost in tops:
            cards = [*o.cards, card] if card is not None else []
            if cards and cost <= HINDSIGHT_BUDGET and not before._legal(d, o.seat, cards):
                text = (
                    f"camera read {_text(o.cards)} with {card} a card it may have missed: "
                    f"{_text(cards)}, not a legal play, so the next plays did not have to beat it "
                    f"({float(cost):.2f} nats)"
                )
                fix = self._fix(o, cards, text, o.cards)  # its foul waits for the floor referee
                yield Alt(k, {k: [fix]}, float(cost), text)

    def _unseen(self, idx: int) -> Iterator[Alt]:
        """Where a play the camera did not count may lie (``_put_in``): when camera play ``idx``
        leads after a clearing by the seat on turn, after the cleared trick's top or any pass
        since (9909; issue 41); and after a glimpse of the seat on turn now (9501)."""
        obs = self._obs
        o, c = obs[idx], next((j for j in range(idx - 1, -1, -1) if obs[j].type in _TURN_OBS), None)
        if c is not None and o.type == "played" and o.doubts and obs[c].type == "trick_cleared":
            d = self._core_before(c)._live_deal()
            top = None if d is None or d.owner is None else self._last_play(d.owner, d.number, c)
            if d is not None and top is not None and d.turn == o.seat:
                first = self._origin[top] + 1
                passes = [j + 1 for j in range(first, c) if self._obs[j].type == "pass"]
                for at in [first, *passes]:
                    yield from self._put_in(at, None, self._obs[c].t)
        d = self._core._live_deal()
        t0 = self._trick_top_t(self._core, len(self._obs))
        g = None if d is None or t0 is None else self._glimpsed(self._core, d, t0, o.t)
        k = None if g is None else next((j for j, x in enumerate(self._obs) if x.t > g[0].t), None)
        if k is not None:
            yield from self._put_in(k, None, o.t)

    def _put_in(
        self,
        k: int,
        stop: str | None,
        until: float,
        counts: Counts | None = None,
        gain: int = HINDSIGHT_GAIN,
    ) -> Iterator[Alt]:
        """Turns the camera missed put in before observation ``k``, each the seat on turn playing
        what was glimpsed (``_glimpsed``, until ``until``) or passing: until ``stop`` is on turn
        (a play out of turn, 9901), or (no ``stop``) one play, the only answer short of a bomb
        (``_ONLY_ANSWER``) or what was glimpsed, weighed by clashes or third copies (or by
        ``counts``, ``gain``: the deal the table ended, ``_second_look``)."""
        o = self._obs[k]
        # before a play out of turn, clashes alone: that play judged in turn may show a third
        # copy the foul hid (seed 9608: a pass missed before it, lost to a seat taken as gone)
        counts = counts or (_clash if stop else _strain)
        if self._pos(k, None) is None or self._clashes_since(k, counts) < gain:
            return
        trial = self._core_before(k)
        t0 = self._trick_top_t(trial, k)
        put: list[Observation] = []
        why: list[str] = []
        cost = 0.0
        for _ in range(_UNSEEN_SEATS if stop else 1):
            d = trial._live_deal()
            seat = None if d is None else d.turn
            if d is None or d.top is None or seat is None or seat == stop:
                break
            got = None if t0 is None else self._glimpsed(trial, d, t0, until)
            g, g_cost = (None, 0.0) if got is None else got
            cards, at = (None, o.t) if g is None else (g.cards, min(g.t, o.t))
            how = "" if g is None else f"which the camera glimpsed there at t={g.t:g}"
            other = "" if g is None or not g_cost else f" as {_text(g.extra['glimpsed'])}"
            if stop is None and tuple(d.top.cards) in _ONLY_ANSWER:
                cards, at, g_cost = _ONLY_ANSWER[tuple(d.top.cards)], o.t, 0.0
                seen = f"{how}{other}" if other else "and the camera did not see it"
                how = f"the only answer short of a bomb, {seen}"
            elif other:
                how += f"{other} ({float(g_cost):.2f} nats)"
            cost += g_cost if cards else 0.0
            if cards is None and stop is None or cards and d.counts[seat] < len(cards):
                return
            why.append(f"{seat} played {_text(cards)}, {how}" if cards else f"{seat} passed")
            p = Observation(at, "pass", seat=seat, extra={"unseen": True})
            if cards:
                extra = {"camera": [], "reread": f"the camera did not count it: {why[-1]}"}
                p = Observation(at, "played", seat=seat, cards=tuple(cards), extra=extra)
            if any(_clash(pl.type, pl.data) for pl in trial.feed(p, k)):
                return
            put.append(p)
        d = trial._live_deal()
        if put and (stop is None or (d is not None and d.turn == stop)):
            text = "the table played on as if turns had been taken that the camera missed: "
            text += "; ".join(why)
            yield Alt(k, {k: [*put, o]}, UNSEEN_COST * len(put) + cost, text, gain, counts)

    def _trick_top_t(self, core: RulesCore, k: int) -> float | None:
        """When the trick's last play in ``core``'s deal (before ``k``) was observed."""
        d = core._live_deal()
        if d is None or d.owner is None:
            return None
        top = self._last_play(d.owner, d.number, k)
        return None if top is None else self._obs[self._origin[top]].t

    def _glimpsed(
        self, core: RulesCore, d: DealState, t0: float, until: float
    ) -> tuple[Observation, float] | None:
        """The latest ``glimpse`` of the seat on turn in ``d`` in (``t0``, ``until``] that beats
        the trick, and its cost: as glimpsed, a joker on a pair as the pair (9506), else a joker
        as the other (``GLIMPSE_JOKER_COST``, game 47804; ``extra['glimpsed']`` the camera's)."""
        seat = d.turn
        seen = [g for g in reversed(self._glimpses) if g.seat == seat and t0 < g.t <= until]
        for other in (False, True):
            for g in seen:
                read = [_OTHER_JOKER.get(c, c) for c in g.cards] if other else list(g.cards)
                if other and read == list(g.cards):
                    continue
                pair = len(read) == 1 and read[0] in _OTHER_JOKER
                for cards in [read] + [[read[0]] * 2] * pair:
                    if seat is not None and core._legal(d, seat, cards):
                        extra = {**g.extra, "glimpsed": [str(c) for c in g.cards]}
                        got = replace(g, cards=tuple(cards), extra=extra if other else g.extra)
                        return got, GLIMPSE_JOKER_COST if other else 0.0
        return None

    def _reorder(self, idx: int) -> Iterator[Alt]:
        """Time is a reading too (a play is reported when its cards settle, a pass at once): a
        beam (``REORDER_BEAM`` orders, fewest clashes then moves) over the deal's last
        ``REORDER_SPAN`` observations, each step the next as seen or one seen after it
        (``_moved``) taken back within ``REORDER_S`` past other seats' turns, one play at most
        (huaian seed 17, tests/referee/test_sim_properties.py), where the rules accept it."""
        obs = self._obs
        start = self._deal_snap[0] + 1 if self._deal_snap is not None else 0
        b = max(start, idx - REORDER_SPAN + 1)
        now, span = self._clashes_since(b), tuple(range(b, idx + 1))
        if now < HINDSIGHT_GAIN or b >= idx:
            return
        turn = ("played", "pass")

        def movable(r: int, left: Sequence[int]) -> bool:
            o = obs[r]
            return (
                o.type in turn
                and sum(obs[x].type == "played" for x in left) <= 1
                and all(
                    obs[x].type in turn and obs[x].seat != o.seat and o.t - obs[x].t <= REORDER_S
                    for x in left
                )
            )

        # a beam entry: (clashes, moves, order placed so far, indices still due, core)
        beam: list[tuple[int, int, tuple[int, ...], tuple[int, ...], RulesCore]]
        beam = [(0, 0, (), span, self._core_before(b))]
        for _ in span:
            grown = beam[:0]  # empty, of the same type
            for clashes, moves, placed, due, core in beam:
                picks = [0] + [n for n in range(1, len(due)) if movable(due[n], due[:n])]
                for m, n in enumerate(picks):
                    c = core if m == len(picks) - 1 else self._copy_core(core)
                    o = self._moved(obs[due[n]], obs[due[0]].t) if n else obs[due[n]]
                    got = sum(1 for pl in c.feed(o, b + len(placed)) if _clash(pl.type, pl.data))
                    if not (n and got):  # taken back only to where the rules accept it
                        rest = due[:n] + due[n + 1 :]
                        grown.append((clashes + got, moves + (n > 0), (*placed, due[n]), rest, c))
            beam = sorted(grown, key=lambda x: (x[0], x[1]))[:REORDER_BEAM]
        for left, _, order, _, _ in beam:
            if left > now - HINDSIGHT_GAIN or order == span:
                continue
            fixes: dict[int, list[Observation]] = {}
            texts = []
            for n, r in enumerate(order):
                o, past = obs[r], sorted(x for x in order[n + 1 :] if x < r)  # now after it
                fixes[b + n] = [self._moved(o, obs[past[0]].t) if past else o]
                if past:
                    what = f"playing {_text(o.cards)}" if o.type == "played" else "passing"
                    turns = [obs[x] for x in past]
                    said = [f"{p.seat}'s {_noun(p)} at t={p.t:g}" for p in turns]
                    texts.append(f"{o.seat} {what} (seen at t={o.t:g}) before {', '.join(said)}")
            why = "; ".join(texts) + ": the camera reports a play when its cards have settled"
            yield Alt(b, fixes, REORDER_COST * len(texts), why)

    @staticmethod
    def _moved(o: Observation, t: float) -> Observation:
        """A move: ``o`` taken back to time ``t`` (``seen_at``: when the camera saw it)."""
        return replace(o, t=t, extra={**o.extra, "seen_at": o.t})

    def _late_in_trick(self, idx: int, out: Sequence[Event]) -> Iterator[Alt]:
        """Camera play ``idx`` holds what its seat played earlier this trick, reported late: it
        is the play put in for the seat in hindsight that it repeats, out of turn (a move, 9401);
        or up to ``LATE_MAX`` of its cards belong to the seat's last camera play (9902: E's CK SK
        read SK, then E's H2 C2 read H2 C2 SK CK; ``_to_earlier``)."""
        o, seat = self._obs[idx], self._obs[idx].seat
        if o.type != "played" or seat is None or not o.doubts:
            return
        i = self._last_play(seat, self.state.deal_no, idx)
        k = None if i is None else self._origin[i]
        if i is None or k is None or any(x.type == "trick_cleared" for x in self._obs[k + 1 : idx]):
            return
        ok, put = self._obs[k], self._effective[i].data
        barred = any(_foul(e, "out_of_turn") and e.data["seat"] == seat for e in out)
        if put.get("camera") == [] and Counter(ok.cards) == Counter(o.cards) and barred:
            why = (
                f"{seat}'s {_text(o.cards)} seen at t={o.t:g} is its play taken in hindsight "
                f"at t={ok.t:g} ({put.get('reread')}), reported "
                "late: the camera reports a play when its cards have settled"
            )
            yield Alt(k, {k: [self._moved(o, ok.t)], idx: []}, 0.0, why, gain=0)
        if ok.type != "played" or not ok.doubts or self._clashes_since(k) < HINDSIGHT_GAIN:
            return
        moves = dict.fromkeys(
            m
            for n in range(1, min(LATE_MAX, len(o.cards) - 1) + 1)
            for m in combinations(sort_cards(o.cards), n)
        )
        head = f"camera read {_text(ok.cards)}; "
        yield from self._to_earlier(
            k, o, [(m, f"{head}{_text(m)} seen only with {seat}'s next play") for m in moves], idx
        )

    def _to_earlier(
        self,
        k: int,
        late: Observation,
        moves: Iterable[tuple[Sequence[Card], str]],
        src: int | None = None,
        was: Sequence[Card] = (),
        gain: int = HINDSIGHT_GAIN,
        counts: Counts = _clash,
    ) -> Iterator[Alt]:
        """Cards moved to an earlier play: play ``k`` as the camera read it, with each of
        ``moves`` (for ``was``, cards read there anew), at ``MOVED_CARD_COST`` a card. ``late``:
        the observation they came with; ``src`` its index, a later play of the seat then read
        without them (as is or re-read), where both are legal; no ``src``: the camera's own
        (``amends``, ``was``), a camera reading the search judges."""
        ok, pos = self._obs[k], self._pos(k)
        seat = ok.seat
        cam = None if pos is None else self._effective[pos].data.get("camera")
        base = list(ok.cards) if cam is None else [parse_card(c) for c in cam]
        if pos is None or seat is None or Counter(was) - Counter(base):
            return
        at = None if src is None else self._on_turn(k, seat)
        if src is not None and at is None:
            return
        left, kept = _without(base, ok.doubts, was)
        for moved, why in moves:
            cards = sort_cards([*left, *moved])
            cost, why = self._move_cost(moved, late, src), f"{why}: read as {_text(cards)}"
            if src is None or at is None:  # the camera's own: the search judges it
                fix = self._fix(ok, cards, why, cards, (*kept, *late.doubts))
                yield Alt(k, {k: [fix]}, cost, why, gain, counts)
                continue
            before, d = at
            if not before._legal(d, seat, cards):
                continue
            fix = self._fix(ok, cards, why, base)
            trial = self._copy_core(before)
            for j, x in [(k, fix), *((j, self._obs[j]) for j in range(k + 1, src))]:
                trial.feed(x, j)
            dt = trial._live_deal()
            if dt is None or dt.turn != seat:
                continue
            rest, doubts = _without(late.cards, late.doubts, moved)
            head = replace(late, cards=tuple(rest), doubts=tuple(doubts))
            readings: list[Reading] = [(rest, 0.0, [])] if trial._legal(dt, seat, rest) else []
            for cs, c, changes in readings + self._legal_readings(trial, dt, seat, head):
                how = f" ({', '.join(changes)}; cost {c:.2f})" if changes else ""
                why2 = f"{_text(moved)} taken as {seat}'s earlier play's: read as {_text(cs)}{how}"
                fix2 = self._fix(late, cs, why2, late.cards)
                yield Alt(k, {k: [fix], src: [fix2]}, cost + c, f"{why}; then {why2}", gain, counts)

    @staticmethod
    def _move_cost(moved: Sequence[Card], late: Observation, src: int | None) -> float:
        """``MOVED_CARD_COST`` a card moved to an earlier play; from a later play (``src``),
        ``MOVED_SURE_COST`` for one the camera did not doubt as no card there: of two cards
        either of which makes both plays legal, the one the tracker saw come back to the zone
        (proc-serif 48845: S's HJ, left from its straight, seen with its next straight, which
        held an SJ too; the SJ had been moved)."""
        pool = [(c, alts) for c, alts in late.doubts if any(a is None for a, _ in alts)]
        sure = MOVED_CARD_COST if src is None else MOVED_SURE_COST
        return sum((MOVED_CARD_COST if _take(pool, c) is not None else sure for c in moved), 0.0)

    def _gone(self, end: int | None = None) -> Iterator[Alt]:
        """The table plays on without the seat on turn, or ends the deal (observation ``end``)
        without a team's players still in: each held at most ``GONE_MAX_LEFT`` cards by the count
        and its last camera play, within ``GONE_WINDOW``, emptied its hand, the rest gone down
        unseen (court cards, a pair read as one); at a deal's end, an illegal one re-read. The
        passes put in for them since go (a seat out takes no turns), ``UNSEEN_COST`` each given
        back: weighed against all the unseen passes it replaces, not the next one alone, each
        silent turn makes a seat's going out likelier (by one card, at the second; game 47904:
        one at a time, 2 < 3 nats, four passes were put in for W, out with a card of its bomb
        missed, and the deal's order came out wrong)."""
        at = len(self._obs) if end is None else end
        d = (self._core if end is None else self._core_before(end))._live_deal()
        if d is None:
            return
        teams = [[d.turn]] if end is None else [[s for s in t if s not in d.order] for t in TEAMS]
        found: list[tuple[int, list[int]]] = []  # (cards unseen, the seats' last plays)
        for need in teams:
            if need and all(s is not None and 0 < d.counts[s] <= GONE_MAX_LEFT for s in need):
                pos = [self._last_camera_play(str(s), d.number, at, end is None) for s in need]
                got = sorted(p for p in pos if p is not None)
                if len(got) == len(pos):
                    found.append((sum(d.counts[str(s)] for s in need), got))
        best = min(found, key=lambda x: x[0], default=None)
        if best is None:
            return
        ks = [self._origin[p] for p in best[1]]
        legal = [self._effective[p].data.get("legal") is not False for p in best[1]]
        cleared = end is not None and self._obs[end].type == "trick_cleared"
        if sum(1 for x in self._obs[ks[0] + 1 :] if x.type in ("played", "pass")) > GONE_WINDOW:
            return
        answered = any(o.type in ("pass", "played") for o in self._obs[ks[-1] + 1 : end])
        if cleared and (answered or (legal[-1] and self._obs[ks[-1]].seat != d.owner)):
            return  # a deal's last trick is cleared right after its last play, nobody answering
        # the passes put in for these seats since (``_put_in``) go, their cost given back
        last = {self._obs[k].seat: k for k in ks}
        put = [
            j
            for j, x in enumerate(self._obs[ks[0] + 1 : at], ks[0] + 1)
            if x.type == "pass" and x.extra.get("unseen") and last.get(x.seat, j) < j
        ]
        options: list[list[tuple[Observation, float]]] = []
        for k, as_read in zip(ks, legal, strict=True):
            o = self._obs[k]
            readings: list[Reading] = [(list(o.cards), 0.0, [])]
            if not as_read:
                before = self._core_before(k)
                bd = before._live_deal()
                if bd is None or o.seat is None:
                    return
                readings = self._legal_readings(before, bd, o.seat, o)
            opts = []
            pre = f"{o.extra['reread']}; then " if "reread" in o.extra else ""
            for cs, cost, changes in readings:
                why = (
                    f"{pre}{o.seat} still held {d.counts[str(o.seat)]} cards by the count after "
                    f"the camera's {_text(o.extra.get('camera', o.cards))}, and the table "
                    f"{'played on' if end is None else 'ended the deal'} as if {o.seat} had gone "
                    f"out: {_how(cs, cost, changes) + '; ' if changes else ''}taken as "
                    f"{o.seat}'s last play, the rest having gone down unseen"
                )
                keep = o.doubts if as_read else ()
                opts.append((self._fix(o, cs, why, doubts=keep, rest_unseen=True), cost))
            if not opts:
                return
            options.append(opts)
        gain, counts = (HINDSIGHT_GAIN, _clash) if end is None else (1, _deal_over_signal)
        n = len(put)
        dropped = f"; {'a pass' if n == 1 else f'{n} passes'} put in since taken back" if n else ""
        for combo in product(*options):
            fixes = {k: [fix] for k, (fix, _) in zip(ks, combo, strict=True)}
            gone = [(x[0], self._obs[k], cleared) for k, x in fixes.items()]
            then = (lambda g=gone: self._gone_fixes.extend(g)) if end is None or cleared else None
            why = "; ".join(str(f[0].extra["reread"]) for f in fixes.values()) + dropped
            cost = GONE_CARD_COST * best[0] - UNSEEN_COST * len(put) + sum(c for _, c in combo)
            yield Alt(ks[0], {**fixes, **{j: [] for j in put}}, cost, why, gain, counts, then)

    def _count_off(self, idx: int) -> Iterator[Alt]:
        """A seat reports (observation ``idx``) up to ``COUNT_OFF_MAX`` cards fewer or more than
        the count, or plays (``idx``) after going out by the count, a card too many for each it
        plays: as many of its camera plays this deal had a card the camera missed, or one it
        saw that was not there, each at its reading's cost where the rules accept it there
        (``_legal_readings``). Missed: in a play read as three or more of one rank a copy of that
        rank (a bomb's fan, one index under another; ``_missed_cards``' first guess), in a play
        illegal as read any card (seed 9650). Not there: in such a fan a copy of its rank, or a
        card the camera itself doubted as no card (a ghost index beside a play); in a play
        illegal as read such a card, the play staying the foul it was. Admitted when
        ``COUNT_OFF_GAIN`` reports then agree with the count, or the play after going out is no
        longer out of turn; for fewer, not where the seat played out of turn earlier this deal
        (the cards taken back may be the ones off, seed 7105). Without it the seat keeps a card
        it never held or lacks one it holds: its true counts are fouls, its going out missed or
        taken too soon (issue 41: five-card bombs read as four on rendered games, as in game
        47904, plastic HK DK SK DK, proc-serif SJ SJ DJ CJ DJ; a ghost SB in an illegal DJ S7,
        tigullio 48651)."""
        o, d = self._obs[idx], self._core_before(idx)._live_deal()
        seat = o.seat
        if d is None or seat is None:
            return
        played = o.type == "played"  # after going out: a card too many for each it plays
        off = (-len(o.cards) if d.counts[seat] == 0 else 0) if played else d.counts[seat] - o.count
        if not 0 < abs(off) <= COUNT_OFF_MAX:
            return
        mine = [
            (e, k)
            for e, k in zip(self._effective, self._origin, strict=True)
            if e.deal == d.number and e.data.get("seat") == seat and k != idx
        ]
        # cards the referee took back from a play out of turn may have stayed down at the table:
        # then the seat holds fewer than the count, never more (tigullio 48861: W's SB out of
        # turn taken back, a ghost H2 in an illegal play, W out by the count one card early)
        if off > 0 and any(_foul(e, "out_of_turn") and e.data.get("cards") for e, _ in mine):
            return
        said = (
            f"played {_text(o.cards)} at t={o.t:g}, gone out by the count"
            if played
            else f"reported {o.count} cards at t={o.t:g}, {d.counts[seat]} by the count"
        )
        options: list[tuple[int, Observation, float]] = []
        for e, k in mine:
            ok = self._obs[k]
            ranks = {c.rank for c in ok.cards}
            if e.type != "play" or e.data.get("unseen"):
                continue
            fan, illegal = len(ok.cards) >= 3 and len(ranks) == 1, e.data.get("legal") is False
            ghosts = {c: x for c, alts in ok.doubts if off < 0 for a, x in alts if a is None}
            if not (fan or illegal or ghosts) or not ok.doubts:
                continue
            at = self._on_turn(k, seat)
            if at is None:
                continue
            before, bd = at
            later = self._played_after(k, d.number)
            readings = self._legal_readings(before, bd, seat, ok, later)
            if illegal and off < 0:  # still the foul it was, a card fewer
                readings += [
                    (_without(ok.cards, (), [g])[0], float(x), [f"no {g}"])
                    for g, x in ghosts.items()
                    if g is not None
                ]
            for cards, cost, changes in readings:
                more, fewer = Counter(cards) - Counter(ok.cards), Counter(ok.cards) - Counter(cards)
                one, other = (more, fewer) if off > 0 else (fewer, more)
                if one.total() != 1 or other:
                    continue
                named = illegal or set(one) <= set(ghosts)
                if named or fan and {c.rank for c in one} == ranks:
                    place = "in the fan" if fan else "there"
                    what = f"missed {place}" if off > 0 else f"saw {place} that was not there"
                    why = (
                        f"{seat} {said}: its {_text(ok.cards)} {_how(cards, cost, changes)}, a "
                        f"card the camera {what}"
                    )
                    options.append((k, self._fix(ok, cards, why, ok.cards), cost))

        # the seat's own reports (another's wrong one is no evidence here: a scan's seed 30, S's
        # and N's each once, N's ghost pair re-read, a look back on its reading made illegal),
        # and turns after the deal or match its report's foul ended (no second report comes);
        # after going out, its play out of turn
        def counts(t: str, x: Mapping[str, Any]) -> bool:
            if played:
                return t == "foul" and x.get("kind") == "out_of_turn" and x.get("seat") == seat
            return _miscount(t, x) and x.get("seat") == seat or t == "notice" and "outside" in x

        gain = 1 if played else COUNT_OFF_GAIN
        for combo in combinations(options, abs(off)):
            fixes = {k: [fix] for k, fix, _ in combo}
            if len(fixes) == len(combo):
                why = "; ".join(str(fix.extra["reread"]) for _, fix, _ in combo)
                cost = sum(c for _, _, c in combo)
                yield Alt(min(fixes), fixes, cost, why, gain, counts)

    def _third_copy(self, idx: int) -> Iterator[Alt]:
        """Camera play ``idx`` holds a third copy of a card X: which reading of X is the misread?
        Each earlier camera play of the deal holding X, latest first, is re-read from the
        camera's reading (the camera's own first) without the copies too many, where X was a
        look back's guess (9406, 9602) or the re-reading costs ``SWAP_MARGIN`` less than reading
        X otherwise here, and at most ``SWAP_MAX_COST`` (9802)."""
        o, pos = self._obs[idx], self._pos(idx)
        seat = o.seat
        if seat is None or pos is None or self._effective[pos].data.get("unseen"):
            return
        at = self._on_turn(idx, seat)
        if at is None:
            return
        before, d = at
        dup = set(third_copies(d, seat, o.cards))
        if not dup or max(Counter(o.cards).values()) > 2:
            return
        found = reread(o.cards, o.doubts, lambda cs: before._legal(d, seat, cs), REREAD_BUDGET)
        ups = [(card, c) for card, a in o.doubts for y, c in a if y is not None]
        cheapest = {x: min([EXTRA_CARD_COST, *(c for card, c in ups if card == x)]) for x in dup}
        here = cheapest if found is None else dict.fromkeys(dup, found[1])  # X read otherwise
        excess = {x: max(1, d.played.get(x, 0) + o.cards.count(x) - 2) for x in dup}
        deal = self._effective[pos].deal
        head = f"seen a third time this deal ({seat} played {_text(o.cards)} as read)"
        for e, k in self._back(pos, deal):
            ok, camera = self._obs[k], e.data.get("camera")
            have = Counter(parse_card(c) for c in e.data.get("cards", ()))
            xs = [x for x in dup if have[x]]
            if e.type != "play" or e.data.get("legal") is False or not (ok.doubts or camera):
                continue  # a person's entry, or a play put in unseen, is not re-read
            cam = replace(ok, cards=tuple(map(parse_card, camera)) if camera else ok.cards)
            seen = Counter(cam.cards)
            guess = any(have[x] > seen[x] for x in xs)  # a copy the camera did not see
            most = min(SWAP_MAX_COST, max((here[x] for x in xs), default=0.0) - SWAP_MARGIN)
            most = HINDSIGHT_BUDGET if guess else most  # the dearest reading worth trying
            if not xs or ok.seat is None or most < 0:
                continue
            et = self._on_turn(k, ok.seat)
            if et is None:
                continue
            eb, ed = et
            later = self._played_after(k, deal)
            readings = self._legal_readings(eb, ed, ok.seat, cam, later, most)
            if seen != have and eb._legal(ed, ok.seat, list(cam.cards)):
                readings = [(list(cam.cards), 0.0, ["as the camera read it"]), *readings]
            for cards, cost, changes in readings:
                got = Counter(cards)
                fewer = [x for x in xs if got[x] <= have[x] - excess[x]]
                if not fewer or any(got[x] > have[x] for x in xs):
                    continue
                guessed = camera and all(have[x] > seen[x] for x in fewer)
                dearest = min(SWAP_MAX_COST, *(here[x] - SWAP_MARGIN for x in fewer))
                if not guessed and cost > dearest:
                    continue
                why = (
                    f"{fewer[0]} {head}: {ok.seat}'s {_text(e.data['cards'])} (the camera read "
                    f"{_text(cam.cards)}) {_how(cards, cost, changes)}, against "
                    f"{min(here[x] for x in fewer):.2f} here"
                )
                fix = self._fix(ok, cards, why, camera, doubts=ok.doubts)
                yield Alt(k, {k: [fix]}, cost, why, gain=0, counts=_strain)
