"""What the camera may have misread: the decoder between the table pipeline and the rules.

The referee (engine/referee.py) judges rules: given a sequence of readings (plays, passes,
tribute cards, exposed cards) it emits the events of CONTRACT.md. This module decides *which*
readings: the camera gives each play with alternatives, and the game's rules and the table's
continuation tell which of them can all be true together. It is a noisy-channel decoder in the
manner of a speech recogniser (DESIGN.md, "Decoders in recognition"): the camera's runner-ups
are the acoustic scores, the rules are the language model, the table state is its state.

**The channel.** A ``played`` observation carries the cards as read and ``doubts``
(``Observation.doubts``): per card its runner-up readings with a cost in nats (the classifier's
log-odds), ``None`` for "no card here", and entries whose card is ``None`` for a card the camera
says it may have missed. Beyond what the camera says, a camera on fanned cards misses a card or
sees one too many (``EXTRA_CARD_COST``, ``MISSED_CARD_COST``; which card: ``_missed_cards``),
reports a play late (its cards settle, a pass lamp is at once: ``REORDER_S``), glimpses cards too
faintly to count (``glimpse``), finds a card of a play late (``amends``), reads a lying card anew
(``was``), or misses a play or a pass altogether (``UNSEEN_COST``). ``_readings`` enumerates a
play's readings cheapest first; as a play comes, one illegal as read is replaced by the cheapest
legal reading within ``REREAD_BUDGET`` (``reread``: no hindsight needed).

**The search.** After each observation the referee calls :meth:`Decoder._second_look`. When the
observation clashes with the log (``_clash``: a foul the table did not act on, a pass by a seat
not on turn, a play after the deal ended by the count), or repeats a card a third time, or the
table ends a deal the referee has open, the sources below propose *alternative histories*
(:class:`Alt`): from an observation ``k`` inside the commit window on, some observations read
otherwise. :meth:`Decoder._search` runs the rules referee again over each alternative's
continuation (``_run``) and scores it: the camera's cost of the readings it takes, plus the rules'
cost of its continuation over the log's (``CLASH_COST`` a clash, ``THIRD_COPY_COST`` a third copy).
An alternative is admitted only when it removes at least its ``gain`` of clashes (``HINDSIGHT_GAIN``
for a look back: a real foul clashes once either way and stays a foul; none for a choice between
readings the camera itself gave, e.g. which copy of a card is the misread). The admitted
alternative of least score wins, the earliest change of those within ``TIE_COST`` (a later clash
may echo an earlier misread), and is published as ``correction`` events (nothing overwritten),
whose play carries ``camera`` (what the camera read) and ``reread`` (what changed, why, at what
cost). The commit window (``_window``, read from the log): the suspects, camera plays illegal as
read, out of turn, or a trick's top a longer play did not beat, with at most ``HINDSIGHT_WINDOW``
plays and passes after them; ``REORDER_SPAN`` observations for the order; ``GONE_WINDOW`` for a
seat gone out unseen. Before it the log is final.

**The sources of alternatives** (each a family of edits to the camera's readings):

* ``_retry``: a suspect play read with its runner-ups, a card too many, a card missed.
* ``_as_read``: a play re-read as it came (``reread``) taken as the camera read it, illegal.
* ``_unseen``: before a play out of turn, the seats on turn taking a pass (or a glimpsed play).
* ``_reorder``: plays and passes of different seats within ``REORDER_S`` in another order (a
  small beam of its own, ``REORDER_BEAM`` orders, proposes those the rules accept).
* ``_seen_again``: a play out of turn that repeats one the decoder put in is that play, late.
* ``_late_in_next``: cards of a seat's play seen only with its next play of the trick.
* ``_won_unseen``, ``_played_glimpsed``: a play the camera missed: the only answer short of a
  bomb (``_ONLY_ANSWER``), or cards glimpsed in the seat's zone (``_glimpsed``).
* ``_gone``, ``_gone_at_end``: a seat's last play taken as emptying its hand, the rest gone down
  unseen (``GONE_CARD_COST`` a card); undone (``_undo_gone``) when the seat plays on.
* ``_swap_copies`` (with ``_undo_added``): a third copy; which reading of it is the misread.
* ``_amend``, ``_relabel``: cards found late or read anew, put in the play they belong to.

Every cost and window is a row of ``COSTS`` with its reason. What is not yet one search: each
alternative changes one place (one suspect's reading, one order, one inserted play or pass), not
a beam over combinations of the window's readings; only suspects are re-read (re-reading every
camera play in the window, up to 3.5 nats, found more plays on two sets of simulated games with
camera errors and fewer on a third, at 1.6 times the CPU: tried and left out, 2026-12-04); and
the sources other than ``_retry`` and ``_reorder`` are hand-written families found on bench
seeds (issue 41). bench/decoder_harness.py checks a change on recorded camera readings and on
simulated games with camera errors.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from itertools import chain, combinations, product
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol

from engine.cards import BIG_JOKER, DISTINCT, SMALL_JOKER, Card, parse_card, sort_cards
from engine.deal import TEAMS, DealState, TableState, third_copies
from engine.events import Event
from engine.observations import Observation, amended, dump_observation
from engine.profiles import Profile

__all__ = [
    "COSTS",
    "Cost",
    "Decoder",
    "RulesCore",
    "reread",
    "REREAD_BUDGET",
    "REREAD_BUDGET_IMPOSSIBLE",
    "HINDSIGHT_WINDOW",
]


class RulesCore(Protocol):
    """What the decoder needs of the rules referee's machine (engine/referee.py ``_Core``): feed
    it observations, read its state, ask whether a play would be legal."""

    st: TableState

    def feed(self, obs: Observation, origin: int) -> Sequence[Any]: ...

    def _live_deal(self) -> DealState | None: ...

    def _legal(self, d: DealState, seat: str, cards: list[Card]) -> bool: ...


class Cost(NamedTuple):
    """One row of the decoder's table: a value and why it is what it is."""

    value: float
    why: str


#: Every cost and window of the decoder, each with its reason: costs in nats (the camera's
#: log-odds: a reading at cost c is e^-c as likely to it as its first), windows in observations.
#: The module's constants of the same names are read from here; a new kind of camera error
#: should need a row here and a source of alternatives, not a new branch.
COSTS: Final[Mapping[str, Cost]] = {
    "REREAD_BUDGET": Cost(
        3.0,
        "a play illegal as read (not a combo, does not beat the trick, a third copy) is re-read "
        "as it comes with the camera's runner-ups, the cheapest legal reading within this: "
        "players seldom play illegally, a classifier slip on a tiny index is common; a play "
        "illegal in every reading within it stays illegal (a foul)",
    ),
    "REREAD_BUDGET_IMPOSSIBLE": Cost(
        10.0,
        "the budget when the reading cannot be true (three copies of a card in one play: two "
        "decks hold two): the camera is wrong for sure, any runner-up it kept may be the truth",
    ),
    "HINDSIGHT_BUDGET": Cost(
        10.0,
        "a suspect play read again in hindsight: its readings up to this cost are tried "
        "against the table's continuation",
    ),
    "EXTRA_CARD_COST": Cost(
        3.0, "one card seen that was not there (a ghost index beside a fan), in hindsight"
    ),
    "MISSED_CARD_COST": Cost(
        3.0,
        "one card not seen (an index under another card), in hindsight: a card of the play's "
        "ranks first, then a straight's missing rank (``_missed_cards``); two for a joker bomb "
        "read as one small and one big joker",
    ),
    "HINDSIGHT_GAIN": Cost(
        2,
        "clashes (fouls the table did not act on, ignored passes, plays after the deal ended) "
        "a changed history must remove: a real foul clashes once either way and stays",
    ),
    "HINDSIGHT_WINDOW": Cost(
        10,
        "plays and passes after a suspect (a camera play illegal as read, out of turn, or a "
        "trick's top a longer play did not beat) within which the table's clashes re-read it",
    ),
    "GONE_MAX_LEFT": Cost(
        8,
        "a seat the table plays on without may have gone out unseen when it holds at most this "
        "many cards by the count (last cards the camera could not name, a pair read as one)",
    ),
    "GONE_WINDOW": Cost(
        40,
        "... and its last camera play lies at most this many plays and passes back: court cards "
        "without an index may go unread for many rounds (bench 2026-11-30: 10 and 20 changed "
        "nothing, 30 and more fixed one guyenne-classic deal)",
    ),
    "SWAP_MARGIN": Cost(
        0.5,
        "a third copy of card X: an earlier camera play's reading of X is taken as the misread "
        "instead of this one's when its runner-up costs at least this much less",
    ),
    "SWAP_MAX_COST": Cost(5.0, "runner-ups dearer than this are not tried on an earlier play"),
    "LATE_MAX": Cost(
        2,
        "cards of a seat's play tried as cards of its last play of the trick, seen late (a "
        "hand moving a hidden index into view, ``_late_in_next``)",
    ),
    "REORDER_S": Cost(
        5.0,
        "seconds within which plays and passes of different seats may have come in either "
        "order: a play is reported when its cards settle, a pass lamp at once (a big joker "
        "reported 3 s after the next seat's pass, issue 41)",
    ),
    "REORDER_SPAN": Cost(8, "the latest observations of the deal run again in other orders"),
    "REORDER_BEAM": Cost(6, "orders kept at once in the reorder beam"),
    "CLASH_COST": Cost(
        10.0,
        "the rules' cost of a clash (a foul the table did not act on, a pass out of turn, a play "
        "after the deal ended by the count): the table's own continuation is strong evidence, "
        "worth more than any reading within ``HINDSIGHT_BUDGET``",
    ),
    "THIRD_COPY_COST": Cost(
        3.0,
        "the rules' cost of a card seen a third time (two decks hold two): some reading of it "
        "is wrong, but any of them may be, so it weighs as one misread card",
    ),
    "UNSEEN_COST": Cost(
        2.0,
        "a pass or a play the camera did not count (a pass lamp missed, a play glimpsed too "
        "faintly or not at all), put in by the decoder: the pipeline's weakest signals, likelier "
        "than a card missed under others (harness 2026-12-04: at 3.0, as a card, a seat was "
        "taken as gone out with two cards unseen where two pass lamps had been missed)",
    ),
    "GONE_CARD_COST": Cost(
        3.0,
        "each card a seat taken as gone out still held by the count: each went down unseen, a "
        "card missed (``MISSED_CARD_COST``) in plays the camera read short",
    ),
    "TIE_COST": Cost(
        0.5,
        "alternatives whose costs differ by less than this are a tie, which the earliest change "
        "wins: a later clash may be an echo of an earlier misread (harness 2026-12-04: a trick's "
        "top read a card short, S4 D4 as D4, lost to the pair played on it read with a ghost "
        "card, 0.001 nats cheaper, and the deal's finishing order came out wrong)",
    ),
    "REORDER_COST": Cost(
        0.5,
        "each observation taken back past another seat's play or pass (``REORDER_S``): a play "
        "reported when its cards settle is common, so a moved one is cheap",
    ),
    "_REREAD_TRIES": Cost(256, "readings tried at most per play (the enumerator's bound)"),
    "_HINDSIGHT_TRIES": Cost(8, "legal readings whose continuation is tried, cheapest first"),
    "_HINDSIGHT_SUSPECTS": Cost(3, "suspects kept at once (the latest)"),
    "_UNSEEN_SEATS": Cost(
        3, "seats taken as passing (or playing what was glimpsed) before a play out of turn"
    ),
    "_SWAP_TRIES": Cost(3, "earlier plays' runner-ups tried for a third copy, cheapest first"),
}
REREAD_BUDGET: Final = COSTS["REREAD_BUDGET"].value
REREAD_BUDGET_IMPOSSIBLE: Final = COSTS["REREAD_BUDGET_IMPOSSIBLE"].value
HINDSIGHT_BUDGET: Final = COSTS["HINDSIGHT_BUDGET"].value
EXTRA_CARD_COST: Final = COSTS["EXTRA_CARD_COST"].value
MISSED_CARD_COST: Final = COSTS["MISSED_CARD_COST"].value
SWAP_MARGIN: Final = COSTS["SWAP_MARGIN"].value
SWAP_MAX_COST: Final = COSTS["SWAP_MAX_COST"].value
REORDER_S: Final = COSTS["REORDER_S"].value
HINDSIGHT_GAIN: Final = int(COSTS["HINDSIGHT_GAIN"].value)
HINDSIGHT_WINDOW: Final = int(COSTS["HINDSIGHT_WINDOW"].value)
GONE_MAX_LEFT: Final = int(COSTS["GONE_MAX_LEFT"].value)
GONE_WINDOW: Final = int(COSTS["GONE_WINDOW"].value)
LATE_MAX: Final = int(COSTS["LATE_MAX"].value)
REORDER_SPAN: Final = int(COSTS["REORDER_SPAN"].value)
REORDER_BEAM: Final = int(COSTS["REORDER_BEAM"].value)
CLASH_COST: Final = COSTS["CLASH_COST"].value
THIRD_COPY_COST: Final = COSTS["THIRD_COPY_COST"].value
UNSEEN_COST: Final = COSTS["UNSEEN_COST"].value
GONE_CARD_COST: Final = COSTS["GONE_CARD_COST"].value
TIE_COST: Final = COSTS["TIE_COST"].value
REORDER_COST: Final = COSTS["REORDER_COST"].value
_REREAD_TRIES: Final = int(COSTS["_REREAD_TRIES"].value)
_HINDSIGHT_TRIES: Final = int(COSTS["_HINDSIGHT_TRIES"].value)
_HINDSIGHT_SUSPECTS: Final = int(COSTS["_HINDSIGHT_SUSPECTS"].value)
_UNSEEN_SEATS: Final = int(COSTS["_UNSEEN_SEATS"].value)
_SWAP_TRIES: Final = int(COSTS["_SWAP_TRIES"].value)

#: fouls that show the table played on differently from the referee's reading
_CLASH_FOULS: Final = frozenset({"illegal_play", "out_of_turn"})
#: observations that move the turn or end the trick (``Referee._won_unseen``)
_TURN_OBS: Final = frozenset({"played", "pass", "trick_cleared", "deal_start"})
#: tricks with one answer short of a bomb: the small joker (pair) is beaten only by the big one
_ONLY_ANSWER: Final[Mapping[tuple[Card, ...], tuple[Card, ...]]] = {
    (SMALL_JOKER,): (BIG_JOKER,),
    (SMALL_JOKER, SMALL_JOKER): (BIG_JOKER, BIG_JOKER),
}


def _joker_bomb_doubts(
    cards: Sequence[Card],
) -> list[tuple[Card | None, list[tuple[Card | None, float]]]]:
    """A second card not seen, for a play of one small and one big joker: no combination holds
    one of each but the four jokers together (the highest bomb), and four jokers laid in a heap
    show few indices (9803, guyenne-classic: SB SB HR HR read SB HR, judged not a combo). The
    play's generic missed card (``_missed_cards``) gives one joker; this gives the other, at the
    same cost, so the joker bomb is a reading at twice ``MISSED_CARD_COST``."""
    if sorted(cards, key=str) != sorted([SMALL_JOKER, BIG_JOKER], key=str):
        return []
    return [(None, [(SMALL_JOKER, MISSED_CARD_COST), (BIG_JOKER, MISSED_CARD_COST)])]


def _missed_cards(
    cards: Sequence[Card],
    played: Mapping[Card, int] | None = None,
    hints: Mapping[Card, float] | None = None,
) -> list[tuple[Card | None, float]]:
    """The cards a camera may have missed in a play of ``cards``, with their cost: the cards of
    its ranks first, those with the fewest copies accounted for first (``played`` in the deal
    so far, plus this play: two decks hold two of each, so a card none of whose copies was seen
    is twice as likely as one with a copy seen; a second copy of a card in the play is no more
    likely than another suit: 9405 HK DK and 9607 HJ CJ, each read with its red card missed,
    were completed with a copy of the other) - but for three or more cards of one rank (a bomb
    a card short, stacked) a second copy of one of them first; then (3 or more cards) the ranks
    that would close a straight's gap, then those that extend it by one at either end (the ace
    high or low, whichever is closer), each rank's suits too with the fewest copies accounted
    for first (``played`` may count the deal's later plays as well: ``Referee._played_after``).
    Among cards with as many copies accounted for, those the
    play's own runner-ups name (``hints``: the cheapest cost at which a card of the play might
    have been read as it) first, the cheapest first: on 9609 W's C7 H7 D7 H9 D9 was read without
    its D7 and E's HK CK DK CJ HJ without its HK, each completed with the spade (the first suit
    of ``DISTINCT``), while the play's runner-ups named D7 (3.8 nats) before S7 (4.3) and HK
    (1.3) before SK (3.8)."""
    out: list[tuple[Card | None, float]] = []
    seen = Counter(cards) + Counter(played or {})
    hint = hints or {}

    def add(c: Card) -> None:
        if all(c != o for o, _ in out):
            out.append((c, MISSED_CARD_COST + 0.001 * len(out)))

    ranks = {c.rank for c in cards}
    if len(cards) >= 3 and len(ranks) == 1:
        # a bomb a card short: its cards lie stacked, and two identical cards stacked give
        # one corner index (9409 CK SK SK DK and 9805 HT HT DT ST, each read without a copy)
        for c in sorted(set(cards), key=cards.index):
            add(c)
    same = [c for c in DISTINCT if c.rank in ranks]
    # stable: DISTINCT's order among equals
    for c in sorted(same, key=lambda c: (seen[c], hint.get(c, math.inf))):
        add(c)
    order = "A23456789TJQKA"
    plain = {c.rank for c in cards if not c.is_joker}
    if len(cards) >= 3 and plain:
        # the ace high (index 13) or low (index 0), whichever spans fewer ranks: T J K A
        # misses a Q, A 2 3 5 a 4 (the ace at both ends made every rank "near", and a wild
        # level card was tried before the Q: seed 9602, 2026-12-01)
        spans = []
        for ace in (13, 0):
            idx = sorted({i for i, r in enumerate(order[1:13], 1) if r in plain})
            idx = sorted([*idx, ace]) if "A" in plain else idx
            spans.append((idx[-1] - idx[0], idx))
        idx = min(spans)[1]
        lo, hi = idx[0], idx[-1]
        near = [i for i in range(max(0, lo - 1), min(13, hi + 1) + 1) if order[i] not in plain]
        near.sort(key=lambda i: not lo < i < hi)  # a gap first, then one more at either end
        for i in near:
            # the fewest copies accounted for first, as for the play's own ranks (a queen
            # closing T J _ K A was taken as an HQ whose two copies the deal held elsewhere)
            of_rank = [c for c in DISTINCT if c.rank == order[i]]
            for c in sorted(of_rank, key=lambda c: (seen[c], hint.get(c, math.inf))):
                add(c)
    return out


def _index_of(
    doubts: Sequence[tuple[Card | None, Sequence[tuple[Card | None, float]]]], card: Card
) -> int:
    """Index of the first doubt about ``card`` (-1: none)."""
    return next((j for j, (c, _) in enumerate(doubts) if c == card), -1)


def _clash(etype: str, data: Mapping[str, Any]) -> bool:
    """An event that shows the table played on differently from the referee's reading: an
    illegal play, a play out of turn, a pass by a seat not on turn, a play or pass after the
    deal ended by the referee's count (a card counted that was not there: a ghost DQ beside
    E's SQ took E out one card early, and E's last card, HR, was ignored; seed 9808)."""
    if etype == "foul":
        return data.get("kind") in _CLASH_FOULS
    if etype != "notice":
        return False
    return data.get("ignored") == "pass_out_of_turn" or bool(data.get("outside"))


def _strain(etype: str, data: Mapping[str, Any]) -> bool:
    """A clash (``_clash``), or a card seen a third time in the deal."""
    return _clash(etype, data) or (etype == "foul" and data.get("kind") == "duplicate_card")


def _rules_cost(events: Iterable[tuple[str, Mapping[str, Any]]]) -> float:
    """The rules' cost of a history's events: ``CLASH_COST`` a clash, ``THIRD_COPY_COST`` a
    card seen a third time."""
    return sum(
        CLASH_COST if _clash(t, d) else THIRD_COPY_COST if _strain(t, d) else 0.0 for t, d in events
    )


def _deal_over_signal(etype: str, data: Mapping[str, Any]) -> bool:
    """A notice that the table ended the deal while the referee had it live: a new deal
    started, or the trick was cleared with a seat still to answer."""
    return etype == "notice" and bool(data.get("abandoned") or data.get("cleared_open"))


#: what counts as a clash for a look: ``_clash`` or ``_strain``
Counts = Callable[[str, Mapping[str, Any]], bool]


class Alt(NamedTuple):
    """An alternative history: from observation ``k`` on, each observation whose index is in
    ``fixes`` read as the observations given there (none: it goes). ``cost``: the camera's, in
    nats, for the readings it takes; ``gain``: the clashes (``counts``) it must remove from the
    log's; ``publish(now, left)``: the corrections that make it the log (``now``, ``left``: the
    clashes from ``k`` on in the log and in this history)."""

    k: int
    fixes: Mapping[int, Sequence[Observation]]
    cost: float
    publish: Callable[[int, int], list[Event]]
    gain: int = HINDSIGHT_GAIN
    counts: Counts = _clash


def reread(
    cards: Sequence[Card],
    doubts: Sequence[tuple[Card | None, Sequence[tuple[Card | None, float]]]],
    ok: Callable[[list[Card]], bool],
    budget: float = REREAD_BUDGET,
) -> tuple[list[Card], float, list[str]] | None:
    """The cheapest other reading of ``cards`` that ``ok`` accepts, or None.

    ``doubts`` (``Observation.doubts``): per doubtful card instance, other readings (a card, or
    None = no card there) with their cost; an entry whose card is None is a card the camera may
    have missed, its readings the cards it may be. Readings are tried cheapest first (total cost
    of the changes, at most ``budget``). Returns (cards, cost, changes as text like ``"D4 for
    DA"``)."""
    for new, c, changes in _readings(cards, doubts, budget):
        if new and ok(new):
            return sort_cards(new), c, changes
    return None


def _readings(
    cards: Sequence[Card],
    doubts: Sequence[tuple[Card | None, Sequence[tuple[Card | None, float]]]],
    budget: float,
) -> Iterator[tuple[list[Card], float, list[str]]]:
    """The other readings of ``cards`` (see :func:`reread`), cheapest first, at most
    ``_REREAD_TRIES``."""
    opts: list[tuple[Card | None, list[tuple[Card | None, float]]]] = []
    for card, alts in doubts:
        good = sorted(((a, float(c)) for a, c in alts if c <= budget), key=lambda x: x[1])
        if card is None:
            good = [(a, c) for a, c in good if a is not None]  # a missed card is some card
        if good:
            opts.append((card, good))
    if not opts:
        return
    n = len(opts)

    def cost(choice: tuple[int, ...]) -> float:
        return sum(opts[i][1][k - 1][1] for i, k in enumerate(choice) if k)

    start = (0,) * n
    heap: list[tuple[float, tuple[int, ...]]] = []
    seen = {start}

    def push(choice: tuple[int, ...]) -> None:
        for i in range(n):
            if choice[i] < len(opts[i][1]):
                nxt = choice[:i] + (choice[i] + 1,) + choice[i + 1 :]
                if nxt not in seen:
                    seen.add(nxt)
                    c = cost(nxt)
                    if c <= budget:
                        heapq.heappush(heap, (c, nxt))

    push(start)
    tries = 0
    while heap and tries < _REREAD_TRIES:
        c, choice = heapq.heappop(heap)
        tries += 1
        new = list(cards)
        changes: list[str] = []
        for i, k in enumerate(choice):
            if not k:
                continue
            card = opts[i][0]
            alt = opts[i][1][k - 1][0]
            if card is None:
                assert alt is not None
                new.append(alt)
                changes.append(f"{alt} not seen")
                continue
            new.remove(card)
            if alt is not None:
                new.append(alt)
                changes.append(f"{alt} for {card}")
            else:
                changes.append(f"no card for {card}")
        yield new, c, changes
        push(choice)


class Decoder:
    """The search and its sources, mixed into :class:`engine.referee.Referee`, whose log they
    read and whose ``_correct`` / ``_rewrite`` publish what they change (the module's
    docstring)."""

    #: the referee's log this decoder reads (engine/referee.py ``Referee``)
    profile: Profile
    _core: RulesCore
    _obs: list[Observation]
    _effective: list[Event]
    _origin: list[int]
    _deal_snap: tuple[int, Any] | None
    _gone_fixes: list[tuple[int, Observation, bool]]
    _glimpses: list[Observation]

    if TYPE_CHECKING:

        @property
        def state(self) -> TableState: ...

        def _copy_core(self, core: Any) -> RulesCore: ...

        def _core_before(self, k: int) -> RulesCore: ...

        def _correct(self, obs: Observation) -> list[Event]: ...

        def _notice(self, t: float, detail: str) -> list[Event]: ...

        def _rewrite(
            self,
            t: float,
            new_obs: list[Observation],
            k: int,
            first_k: int,
            extra: Mapping[str, Any],
            remap: Callable[[int], int],
        ) -> list[Event]: ...

    def _amend(self, obs: Observation) -> list[Event]:
        """Cards the camera found in a seat's play zone soon after that seat's play, with no
        hand near (``played`` with ``amends``: the time of the play observed): a corner found a
        few frames late. The play, as the camera read it (before any second look of the
        referee's), is read again with them (a correction) when that reading is legal and the
        table's continuation has no more clashes or third copies than the log; otherwise a
        notice says why, and the cards count nowhere (a ghost read beside a play must not make
        it illegal)."""
        seat, at = obs.seat, obs.extra["amends"]
        assert seat is not None  # a ``played`` has a seat (parse_observation)
        cards = " ".join(map(str, obs.cards))
        k = amended(self._obs, obs)
        pos = None if k is None else self._play_pos(k)
        fixed = None
        if k is None or pos is None:
            why = f"no play by {seat} observed at t={at} is in effect"
        elif self._effective[pos].deal != self.state.deal_no:
            why = "that play belongs to an earlier deal"
        else:
            e, ok = self._effective[pos], self._obs[k]
            # a play the referee read again (a second look: "camera" holds what the camera
            # saw) is amended from the camera's own reading: the late card may be the one the
            # second look took for no card (seed 9910: E's H3 D3 D3 S8 S8 seen without its
            # second S8, read as a triple with "no card for S8"; the S8 found 0.2 s later was
            # not added, and the two full houses played on it were read as triples)
            seen = e.data.get("camera")
            was = [parse_card(c) for c in seen] if seen is not None else list(ok.cards)
            fix = replace(
                ok,
                cards=tuple(sort_cards([*was, *obs.cards])),
                doubts=ok.doubts + obs.doubts,
                extra={x: v for x, v in ok.extra.items() if x not in ("camera", "reread")},
            )
            before = self._core_before(k)
            d = before._live_deal()
            text = " ".join(map(str, fix.cards))
            if d is None or d.turn != seat or not before._legal(d, seat, list(fix.cards)):
                why = f"{seat} playing {text} would not be legal"
            else:
                saw = f" (the camera saw {' '.join(seen)})" if seen is not None else ""
                reason = (
                    f"{cards} found in {seat}'s play zone with no hand near, "
                    f"{obs.t - at:.1f} s after its play of {' '.join(e.data['cards'])}{saw}: "
                    f"read as {text}"
                )
                fix = replace(fix, extra={**fix.extra, "reread": reason})
                fixed = self._search([self._earlier(e, k, fix, obs.t)])
                why = "the table's continuation would then clash more"
        if fixed is not None:
            return fixed
        return self._notice(obs.t, f"{cards} found late in {seat}'s play zone, not added: {why}")

    def _relabel(self, obs: Observation) -> list[Event]:
        """Cards lying in a seat's play zone that the camera now reads in another suit
        (``played`` with ``was``: their earlier readings). Both are readings of one card, the
        first taken as the card landed, so the first stands unless the new one fits the table
        better. The seat's play holding them (its latest this trick) is read again with the new
        suits (a correction) when the table's continuation then has fewer clashes or third
        copies than the log. Or when the new reading settles a bet of the referee's: an earlier
        play of the deal whose camera reading held the old card was re-read with the new one
        (a third copy: which of them was the misread?); that play then goes back to what the
        camera saw, when the continuation has no more clashes or third copies (seed 9406: S's
        C3 C3 S9 H9 D9 was read with an S3 beside N's S3 S3 H3 S7 S7, and N's second S3 was
        taken for the misread; S's S3 was read C3 when S's hand passed over). Otherwise a
        notice says why the first reading stands."""
        seat = obs.seat
        assert seat is not None  # a ``played`` has a seat (parse_observation)
        old = [parse_card(c) for c in obs.extra["was"]]
        text = f"{' '.join(map(str, old))} in {seat}'s play zone read again as " + " ".join(
            map(str, obs.cards)
        )
        pos = self._relabel_target(seat, old)
        if pos is None:
            why = f"no play of {seat}'s this trick holds {' '.join(map(str, old))}"
            return self._notice(obs.t, f"{text}; the first reading stands: {why}")
        e, k = self._effective[pos], self._origin[pos]
        ok = self._obs[k]
        cards = [parse_card(c) for c in e.data["cards"]]
        for a, b in zip(old, obs.cards, strict=True):
            cards[cards.index(a)] = b
        now_text = " ".join(map(str, sort_cards(cards)))
        # what the camera reads there now: its earlier reading with the cards read anew (a
        # later third copy must not take the new suits for the referee's own guesses)
        camera = [str(c) for c in e.data.get("camera") or ok.cards]
        for a, b in zip(old, obs.cards, strict=True):
            if str(a) in camera:
                camera[camera.index(str(a))] = str(b)
        fix = replace(
            ok,
            cards=tuple(sort_cards(cards)),
            doubts=(),
            extra={
                **ok.extra,
                "camera": camera,
                "reread": f"{text} at t={obs.t:.1f}: read as {now_text}",
            },
        )
        alts = [self._earlier(e, k, fix, obs.t)._replace(gain=1)]
        bet = self._bet_on(pos, list(zip(old, obs.cards, strict=True)))
        if bet is not None:
            eq, kq = self._effective[bet], self._origin[bet]
            oq = self._obs[kq]
            back = replace(
                oq,
                cards=tuple(sort_cards([parse_card(c) for c in eq.data["camera"]])),
                doubts=(),
                extra={
                    **oq.extra,
                    "camera": list(eq.data["camera"]),
                    "reread": f"as the camera read it ({text} at t={obs.t:.1f})",
                },
            )

            def publish(now: int, left: int) -> list[Event]:
                out = self._replace_play(obs.t, eq.id, back)
                again = self._relabel_target(seat, old)
                if again is not None:
                    out += self._replace_play(obs.t, self._effective[again].id, fix)
                return out

            alts.insert(0, Alt(kq, {kq: [back], k: [fix]}, 0.0, publish, gain=0, counts=_strain))
        fixed = self._search(alts)
        if fixed is not None:
            return fixed
        why = f"{seat} playing {now_text} would fit the table's continuation no better"
        return self._notice(obs.t, f"{text}; the first reading stands: {why}")

    def _bet_on(self, pos: int, swaps: Sequence[tuple[Card, Card]]) -> int | None:
        """Position in the effective log of the latest camera play of this deal before ``pos``
        that the referee re-read with a card ``b`` where the camera saw ``a``, for some ``(a,
        b)`` of ``swaps``: a bet that the camera's ``a`` there was the misread."""
        deal = self._effective[pos].deal
        for i in range(pos - 1, -1, -1):
            e = self._effective[i]
            if e.deal != deal:
                return None
            camera = e.data.get("camera")
            if e.type != "play" or not camera:
                continue
            have = Counter(parse_card(c) for c in e.data["cards"])
            seen = Counter(parse_card(c) for c in camera)
            if any(have[b] > seen[b] and seen[a] > have[a] for a, b in swaps):
                return i
        return None

    def _relabel_target(self, seat: str, old: Sequence[Card]) -> int | None:
        """Position in the effective log of ``seat``'s latest play of the current trick (none
        cleared since, this deal) whose cards, as the referee reads them, hold ``old``."""
        need = Counter(old)
        deal = self.state.deal_no
        start = next(
            (
                k
                for k in range(len(self._obs) - 1, -1, -1)
                if self._obs[k].type in ("trick_cleared", "deal_start")
            ),
            -1,
        )
        for i in range(len(self._effective) - 1, -1, -1):
            e = self._effective[i]
            if e.deal != deal or self._origin[i] <= start:
                return None
            if e.type == "play" and e.data.get("seat") == seat:
                if not need - Counter(parse_card(c) for c in e.data["cards"]):
                    return i
        return None

    def _second_look(self, obs: Observation, idx: int, out: list[Event]) -> list[Event]:
        """The search after observation ``idx`` (its events ``out``): the alternatives its
        clashes, third copies or deal end call for, weighed by :meth:`_search`; then this play
        kept as a suspect when it is one (``HINDSIGHT_WINDOW``)."""
        if self._gone_fixes:
            outside = any(e.type == "notice" and e.data.get("outside") for e in out)
            undo = [
                f
                for f in self._gone_fixes
                if (obs.type in ("played", "pass") and obs.seat == f[1].seat) or (outside and f[2])
            ]
            if undo:
                return self._undo_gone(undo, obs.t)
        turn = obs.type in ("played", "pass")
        alts: list[Iterable[Alt]] = [self._reorder(idx, obs.t)] if turn else []
        if any(_clash(e.type, e.data) for e in out):
            alts.append(self._seen_again(idx, out, obs.t))
            for k, why in self._window(idx):  # the oldest first: later ones may be its echoes
                if why == "as read":
                    alts.append(self._as_read(k, obs.t))
                else:
                    alts.append(
                        self._unseen(k, obs.t) if why == "unseen" else self._retry(k, obs.t, why)
                    )
            alts += [
                self._late_in_next(idx, obs.t),
                self._won_unseen(idx, obs.t),
                self._played_glimpsed(obs.t),
                self._gone(obs.t),
            ]
        if any(_deal_over_signal(e.type, e.data) for e in out):
            alts.append(self._gone_at_end(idx, obs.t))
        # a third copy of a card is re-read as it comes (the play event has ``camera``) or
        # flagged (``duplicate_card``): which of its readings was the misread?
        third = any(
            (e.type == "play" and "camera" in e.data)
            or (e.type == "foul" and e.data.get("kind") == "duplicate_card")
            for e in out
        )
        if third and obs.type == "played" and obs.doubts and obs.seat is not None:
            alts.append(self._swap_copies(idx, obs.t))
        return self._search(chain.from_iterable(alts)) or []

    @property
    def _suspects(self) -> list[tuple[int, str]]:
        """The suspects whose window holds the latest observation (``_window``)."""
        return self._window(len(self._obs))

    def _window(self, before: int) -> list[tuple[int, str]]:
        """The suspects before observation ``before`` whose window holds the latest
        observation: camera plays of this deal illegal as read ("illegal"; and the trick's top
        one did not beat, when that is a shorter camera play: "top", ``_short_top``) or out of
        turn ("unseen"), with at most ``HINDSIGHT_WINDOW`` plays and passes observed after them;
        the latest ``_HINDSIGHT_SUSPECTS``, the oldest first."""
        out: list[tuple[int, str]] = []
        later, j = 0, len(self._obs) - 1
        for i in range(len(self._effective) - 1, -1, -1):
            e, k = self._effective[i], self._origin[i]
            while j > k:
                later += self._obs[j].type in ("played", "pass")
                j -= 1
            if later > HINDSIGHT_WINDOW or e.deal != self.state.deal_no:
                break
            if k >= before or not self._obs[k].doubts:
                continue
            if e.type == "play" and e.data.get("legal") is False:
                out.append((k, "illegal"))
                top = self._short_top(i)
                if top is not None:
                    out.append((top, "top"))
            elif e.type == "foul" and e.data.get("kind") == "out_of_turn":
                out.append((k, "unseen"))
            elif e.type == "play" and "camera" in e.data and "reread" not in self._obs[k].extra:
                out.append((k, "as read"))  # re-read as it came: it may have been illegal
        first = [x for n, x in enumerate(out) if all(x[0] != y[0] for y in out[n + 1 :])]
        return first[::-1][-_HINDSIGHT_SUSPECTS:]

    def _short_top(self, i: int) -> int | None:
        """The trick's top (its observation), a camera play legal as read, when the camera play
        at ``i`` in the effective log, of more cards, did not beat it: the top may be a card
        short (seed 9408: E's S7 S7 read S7, one copy's index under the floor; N's pair of
        jacks did not beat a single 7, and the second look dropped a jack, then a king from W's
        pair). A suspect like an illegal play (``_retry``)."""
        e = self._effective[i]
        if not str(e.data.get("reason", "")).startswith("does not beat"):
            return None
        top = next(
            (
                p
                for p in range(i - 1, -1, -1)
                if self._effective[p].type == "play" and self._effective[p].data.get("legal")
            ),
            None,
        )
        if top is None or self._effective[top].deal != e.deal:
            return None
        t = self._effective[top]
        if len(t.data["cards"]) >= len(e.data["cards"]):
            return None
        p = self._last_camera_play(t.data["seat"], e.deal, self._origin[i])
        return self._origin[top] if p == top else None

    def _clashes_since(self, k: int, counts: Counts = _clash) -> int:
        """Clashes (or what ``counts``) in the effective log from observation ``k`` on."""
        return sum(1 for etype, data in self._log_since(k) if counts(etype, data))

    def _log_since(self, k: int) -> list[tuple[str, Mapping[str, Any]]]:
        """The effective log's events from observation ``k`` on, as (type, data).

        Read back from the log's end to the first event of an earlier observation: called after
        every play and pass (``_reorder``), a scan of the whole log made the referee quadratic
        in a session's length (bench/sim.py, 100 deals: 32 deals per CPU-second, 142 before
        3edeb2e). Events come in the order of their observations; the one exception, a tribute
        phase's events published after a ``time_called`` or a forfeit of the observation that
        ends the phase (``_Core._after``), puts no clash out of reach of the scan."""
        out = []
        for i in range(len(self._effective) - 1, -1, -1):
            if self._origin[i] < k:
                break
            out.append((self._effective[i].type, self._effective[i].data))
        return out[::-1]

    def _search(self, alts: Iterable[Alt]) -> list[Event] | None:
        """The one search: of the alternative histories ``alts``, each admitted when its
        continuation (the rules referee run again from its first change) has at least its
        ``gain`` fewer clashes than the log's, the one of least cost: the camera's cost of its
        readings plus the rules' cost of its continuation over the log's (``CLASH_COST`` a
        clash, ``THIRD_COPY_COST`` a card seen a third time); of those within ``TIE_COST`` of
        the least, the earliest change, then the cheapest, then the first. Published as its
        corrections; None when no alternative is admitted."""
        admitted: list[tuple[float, Alt, int, int]] = []
        cores: dict[int, RulesCore] = {}
        for a in alts:
            log = self._log_since(a.k)
            now = sum(1 for e in log if a.counts(*e))
            if now < a.gain:
                continue
            if a.k not in cores:
                cores[a.k] = self._core_before(a.k)
            run = self._run(self._copy_core(cores[a.k]), a.k, a.fixes)
            left = sum(1 for e in run if a.counts(*e))
            if left <= now - a.gain:
                admitted.append((a.cost + _rules_cost(run) - _rules_cost(log), a, now, left))
        if not admitted:
            return None
        least = min(x[0] for x in admitted)
        _, a, now, left = min(
            (x for x in admitted if x[0] < least + TIE_COST), key=lambda x: (x[1].k, x[0])
        )
        return a.publish(now, left)

    def _run(
        self, core: RulesCore, k0: int, fixes: Mapping[int, Sequence[Observation]]
    ) -> list[tuple[str, Mapping[str, Any]]]:
        """The events, as (type, data), when the observations from ``k0`` on are fed to
        ``core``, each one whose index is in ``fixes`` replaced by the observations given
        there."""
        return [
            (pl.type, pl.data)
            for i in range(k0, len(self._obs))
            for oi in fixes.get(i, (self._obs[i],))
            for pl in core.feed(oi, i)
        ]

    def _play_pos(self, k: int) -> int | None:
        """Position in the effective log of the play event of observation ``k``."""
        return next(
            (i for i, e in enumerate(self._effective) if self._origin[i] == k and e.type == "play"),
            None,
        )

    def _unseen(self, k: int, t: float) -> Iterator[Alt]:
        """A camera play out of turn (observation ``k``): the seats the referee had on turn
        before it may have played or passed unseen (a play the camera missed, a pass lamp not
        seen). Taken as passes when the continuation then has ``HINDSIGHT_GAIN`` fewer clashes:
        a correction of the out-of-turn foul with the passes and the play."""
        o = self._obs[k]
        pos = self._first_pos(k)
        now = self._clashes_since(k)
        if o.seat is None or pos is None or now < HINDSIGHT_GAIN:
            return
        before = self._core_before(k)
        trial = self._copy_core(before)
        t0 = self._trick_top_t(before, k)
        passes: list[Observation] = []
        for _ in range(_UNSEEN_SEATS):
            d = trial._live_deal()
            if d is None or d.turn is None or d.turn == o.seat or d.top is None:
                break
            # a seat the camera glimpsed playing since the trick's last play (a joker by one
            # faint corner: seed 9901, W's HR on N's SB, and S's bomb on it read out of turn)
            # played that; otherwise it passed
            g = None if t0 is None else self._glimpsed(trial, d, t0, o.t)
            p = (
                Observation(o.t, "pass", seat=d.turn, extra={"unseen": True})
                if g is None
                else Observation(g.t, "played", seat=d.turn, cards=g.cards, extra={"camera": []})
            )
            if any(_clash(pl.type, pl.data) for pl in trial.feed(p, k)):
                return
            passes.append(p)
        d = trial._live_deal()
        if not passes or d is None or d.turn != o.seat:
            return
        seats = " and ".join(str(p.seat) for p in passes)
        taken = " and ".join(
            f"{p.seat} taken as passing"
            if p.type == "pass"
            else f"{p.seat} taken as playing {' '.join(map(str, p.cards))} (glimpsed at t={p.t:g})"
            for p in passes
        )

        def publish(now: int, left: int) -> list[Event]:
            why = (
                f"{o.seat} played out of turn as seen, and the table played on as if {seats} had "
                f"played or passed ({now} fouls or ignored passes since, {left} with that "
                f"reading): {taken} (a play or a pass the camera did not see)"
            )
            head = [
                p if p.type == "pass" else replace(p, extra={"camera": [], "reread": why})
                for p in passes
            ]
            return self._replace(t, self._effective[pos].id, [*head, o], why)

        yield Alt(k, {k: [*passes, o]}, UNSEEN_COST * len(passes), publish)

    def _reorder(self, idx: int, t: float) -> Iterator[Alt]:
        """Time is a reading too: the order of two turn observations (plays, passes) of
        different seats seen within ``REORDER_S`` of each other is uncertain (the camera
        reports a play when its cards have settled, a pass lamp at once).

        When the last ``REORDER_SPAN`` observations of the deal (up to ``idx``) hold
        ``HINDSIGHT_GAIN`` clashes or more, a beam search (``REORDER_BEAM`` orders kept, fewest
        clashes first, then fewest moves) runs them again in the orders these uncertainties
        allow: at each step the next observation is the first one left as seen, or a play or
        pass seen after it, at most ``REORDER_S`` after every one it is taken back past, all of
        them plays or passes of other seats (nothing moves past a clearing, a deal start or
        anything else), and only to where the rules accept it (a move that makes a foul of its
        own observation explains nothing). The best order replaces the log through a
        ``correction`` when it has ``HINDSIGHT_GAIN`` fewer clashes than the order as seen: a
        real foul (a play out of turn, then the play of the seat on turn) clashes once either
        way and stays. A moved observation takes the time of the first one it now precedes
        (the log stays in time order) and keeps the time it was seen at (``seen_at``); no
        observation is read differently."""
        obs = self._obs
        start = self._deal_snap[0] + 1 if self._deal_snap is not None else 0
        b = max(start, idx - REORDER_SPAN + 1)
        now = self._clashes_since(b)
        if now < HINDSIGHT_GAIN or b >= idx:
            return
        turn = ("played", "pass")

        def movable(r: int, left: Sequence[int]) -> bool:
            """May observation ``r`` go before all of ``left`` (seen before it, still due)?"""
            o = obs[r]
            return o.type in turn and all(
                obs[x].type in turn and obs[x].seat != o.seat and o.t - obs[x].t <= REORDER_S
                for x in left
            )

        # a beam entry: (clashes, moves, order placed so far, indices still due, core)
        beam: list[tuple[int, int, tuple[int, ...], tuple[int, ...], RulesCore]] = [
            (0, 0, (), tuple(range(b, idx + 1)), self._core_before(b))
        ]
        for _ in range(idx + 1 - b):
            grown: list[tuple[int, int, tuple[int, ...], tuple[int, ...], RulesCore]] = []
            for clashes, moves, placed, due, core in beam:
                picks = [0] + [n for n in range(1, len(due)) if movable(due[n], due[:n])]
                for m, n in enumerate(picks):
                    c = core if m == len(picks) - 1 else self._copy_core(core)
                    o = obs[due[n]]
                    if n:
                        o = replace(o, t=obs[due[0]].t, extra={**o.extra, "seen_at": o.t})
                    got = sum(1 for pl in c.feed(o, b + len(placed)) if _clash(pl.type, pl.data))
                    if n and got:  # taken back only to where the rules accept it
                        continue
                    grown.append(
                        (
                            clashes + got,
                            moves + (n > 0),
                            (*placed, due[n]),
                            due[:n] + due[n + 1 :],
                            c,
                        )
                    )
            grown.sort(key=lambda x: (x[0], x[1]))
            beam = grown[:REORDER_BEAM]
        for left, _, order, _, _ in beam:  # the search weighs the orders the beam kept
            if left <= now - HINDSIGHT_GAIN and order != tuple(range(b, idx + 1)):
                yield self._reorder_alt(b, idx, order, t)

    def _reorder_alt(self, b: int, idx: int, order: tuple[int, ...], t: float) -> Alt:
        """Observations ``b`` .. ``idx`` in ``order`` (``_reorder``), a moved one at the time
        of the first it now precedes, ``seen_at`` its own."""
        obs = self._obs
        j = b + next(n for n, r in enumerate(order) if r != b + n)
        new_obs = [*obs[:b], *(obs[r] for r in order)]
        # the moved ones: seen after an observation they now precede
        seen_later = {r for n, r in enumerate(order) if any(x < r for x in order[n + 1 :])}
        where = {r: b + n for n, r in enumerate(order)}
        texts = []
        for n, r in enumerate(order):
            if r not in seen_later:
                continue
            o = obs[r]
            nxt = min(x for x in order[n + 1 :] if x < r)
            new_obs[b + n] = replace(o, t=obs[nxt].t, extra={**o.extra, "seen_at": o.t})
            what = (
                f"{o.seat} playing {' '.join(map(str, o.cards))}"
                if o.type == "played"
                else f"{o.seat} passing"
            )
            past = ", ".join(
                f"{obs[x].seat}'s {'play' if obs[x].type == 'played' else 'pass'} at t={obs[x].t:g}"
                for x in sorted(x for x in order[n + 1 :] if x < r)
            )
            texts.append(f"{what} (seen at t={o.t:g}) before {past}")
        new_obs += obs[idx + 1 :]

        def publish(now: int, left: int) -> list[Event]:
            why = (
                "; ".join(texts) + ": the camera reports a play when its cards have settled "
                f"({now} fouls or ignored passes as seen, {left} in this order)"
            )
            moved = [new_obs[where[r]] for r in order if r in seen_later]
            pos = self._first_pos(min(seen_later))
            data: dict[str, Any] = {
                "target": self._effective[pos].id if pos is not None else None,
                "observation": [dump_observation(o) for o in moved],
                "reason": why,
            }
            first_j = next((i for i, origin in enumerate(self._origin) if origin >= j), 0)

            def remap(i: int) -> int:
                return where.get(i, i)

            return self._rewrite(t, new_obs, j, first_j, data, remap)

        fixes = {b + n: [new_obs[b + n]] for n in range(len(order))}
        return Alt(b, fixes, REORDER_COST * len(seen_later), publish)

    def _seen_again(self, idx: int, out: Sequence[Event], t: float) -> Iterator[Alt]:
        """Camera play ``idx``, out of turn, repeats a play the decoder put in for that seat in
        hindsight (``camera`` empty: glimpsed, or the only answer) with the same cards, in the
        same trick: it is that play, reported late (its cards settled after the others' passes:
        seed 9401, S's SB reported 5.2 s after it landed, when its glimpse had been taken as the
        play already; the repeat was an out-of-turn foul for review). The inserted play becomes
        this observation, at the inserted play's time (``seen_at`` its own), through a
        correction, and the repeat goes."""
        o = self._obs[idx]
        late = any(
            e.type == "foul" and e.data.get("kind") == "out_of_turn" and e.data["seat"] == o.seat
            for e in out
        )
        if o.type != "played" or o.seat is None or not o.doubts or not late:
            return
        i = self._last_play(o.seat, self.state.deal_no, idx)
        if i is None or self._effective[i].data.get("camera") != []:
            return
        k = self._origin[i]
        if any(x.type == "trick_cleared" for x in self._obs[k + 1 : idx]):
            return
        if Counter(self._obs[k].cards) != Counter(o.cards):
            return
        seen = replace(o, t=self._obs[k].t, extra={**o.extra, "seen_at": o.t})
        why = (
            f"{o.seat}'s {' '.join(map(str, o.cards))} seen at t={o.t:g} is its play taken in "
            f"hindsight at t={self._obs[k].t:g} ({self._effective[i].data.get('reread')}), "
            "reported late: the camera reports a play when its cards have settled"
        )
        new_obs = [*self._obs[:k], seen, *self._obs[k + 1 : idx], *self._obs[idx + 1 :]]
        data: dict[str, Any] = {
            "target": self._effective[i].id,
            "observation": [dump_observation(seen)],
            "reason": why,
        }

        def publish(now: int, left: int) -> list[Event]:
            first = next(j for j, origin in enumerate(self._origin) if origin >= k)

            def remap(j: int) -> int:
                return k if j == idx else j - (j > idx)

            return self._rewrite(t, new_obs, k, first, data, remap)

        # the same play: nothing read otherwise, the repeat's foul goes
        yield Alt(k, {k: [seen], idx: []}, 0.0, publish, gain=0)

    def _late_in_next(self, idx: int, t: float) -> Iterator[Alt]:
        """Cards of a seat's play the camera saw only with that seat's next play of the trick
        (one card of a pair lay with its index under the other, and the hand coming back with
        new cards moved it into view: seed 9902, E's CK SK read SK, a single on a pair, then
        E's H2 C2 read H2 C2 SK CK, out of turn as the referee stood). When camera play ``idx``
        clashes, the seat's last play of the same trick (no clearing between), a camera play,
        is tried with some of ``idx``'s cards (at most ``LATE_MAX``) where that makes it legal,
        and the rest of ``idx`` as it is or by a legal re-reading (``_legal_readings``: the SK
        seen again there is no card). Taken when the continuation then has
        ``HINDSIGHT_GAIN`` fewer clashes (the fewest, then the cheapest re-reading): two
        corrections, the earlier play first."""
        o = self._obs[idx]
        seat = o.seat
        if o.type != "played" or seat is None or not o.doubts:
            return
        i = self._last_play(seat, self.state.deal_no, idx)
        if i is None:
            return
        k = self._origin[i]
        ok = self._obs[k]
        between = (self._obs[j].type for j in range(k + 1, idx))
        if ok.type != "played" or not ok.doubts or "trick_cleared" in between:
            return
        now = self._clashes_since(k)
        before = self._core_before(k)
        d = before._live_deal()
        if now < HINDSIGHT_GAIN or d is None or d.turn != seat:
            return
        tried: set[tuple[Card, ...]] = set()
        for n in range(1, min(LATE_MAX, len(o.cards) - 1) + 1):
            for moved in combinations(sort_cards(o.cards), n):
                if moved in tried:
                    continue
                tried.add(moved)
                first = [*ok.cards, *moved]
                if not before._legal(d, seat, first):
                    continue
                camera = [str(c) for c in ok.cards]
                late = " ".join(map(str, moved))
                why = (
                    f"camera read {' '.join(camera)}; {late} seen only with {seat}'s next play "
                    f"at t={o.t:g}: read as {' '.join(map(str, sort_cards(first)))}"
                )
                fix1 = replace(
                    ok,
                    cards=tuple(sort_cards(first)),
                    doubts=(),
                    extra={**ok.extra, "camera": camera, "reread": why},
                )
                rest = list(o.cards)
                doubts = list(o.doubts)
                for c in moved:
                    rest.remove(c)
                    j = _index_of(doubts, c)
                    if j >= 0:
                        del doubts[j]
                trial = self._copy_core(before)
                trial.feed(fix1, k)
                for j in range(k + 1, idx):
                    trial.feed(self._obs[j], j)
                dt = trial._live_deal()
                if dt is None or dt.turn != seat:
                    continue
                head = replace(o, cards=tuple(rest), doubts=tuple(doubts))
                readings: list[tuple[list[Card], float, list[str]]] = []
                if trial._legal(dt, seat, rest):
                    readings.append((rest, 0.0, []))
                readings += self._legal_readings(trial, dt, seat, head)
                for cards, cost, changes in readings:
                    text = " ".join(map(str, sort_cards(cards)))
                    how = f" ({', '.join(changes)}; cost {cost:.2f})" if changes else ""
                    fix2 = replace(
                        o,
                        cards=tuple(sort_cards(cards)),
                        doubts=(),
                        extra={
                            **o.extra,
                            "camera": [str(c) for c in o.cards],
                            "reread": f"{late} taken as {seat}'s earlier play's: read as "
                            f"{text}{how}",
                        },
                    )
                    yield Alt(
                        k, {k: [fix1], idx: [fix2]}, cost, self._late_publish(t, i, idx, fix1, fix2)
                    )

    def _late_publish(
        self, t: float, i: int, idx: int, fix1: Observation, fix2: Observation
    ) -> Callable[[int, int], list[Event]]:
        """Two corrections for ``_late_in_next``, the earlier play (at ``i`` in the effective
        log) first, then camera play ``idx``."""

        def publish(now: int, left: int) -> list[Event]:
            out = self._replace_play(t, self._effective[i].id, fix1)
            pos = self._first_pos(idx)
            if pos is not None:
                out += self._replace_play(t, self._effective[pos].id, fix2)
            return out

        return publish

    def _trick_top_t(self, core: RulesCore, k: int) -> float | None:
        """When the trick's last play was observed, in ``core``'s deal (a core that has seen
        the observations before ``k``); None without one."""
        d = core._live_deal()
        if d is None or d.owner is None:
            return None
        top = self._last_play(d.owner, d.number, k)
        return None if top is None else self._obs[self._origin[top]].t

    def _glimpsed(
        self, core: RulesCore, d: DealState, t0: float, until: float
    ) -> Observation | None:
        """The latest ``glimpse`` of the seat on turn in ``d`` (``core``'s deal) after ``t0``
        (the trick's last play) and at most at ``until``, whose cards would beat the trick;
        None when there is none. One joker glimpsed on a trick of pairs is the pair of that
        joker, the only pair that holds it (seed 9506: W's HR HR on a pair of level twos,
        glimpsed as one HR)."""
        seat = d.turn
        if seat is None:
            return None
        for g in reversed(self._glimpses):
            if g.seat != seat or not t0 < g.t <= until:
                continue
            readings = [list(g.cards)]
            if len(g.cards) == 1 and g.cards[0] in (SMALL_JOKER, BIG_JOKER):
                readings.append([g.cards[0]] * 2)
            for cards in readings:
                if core._legal(d, seat, cards):
                    return replace(g, cards=tuple(cards))
        return None

    def _played_glimpsed(self, t: float) -> Iterator[Alt]:
        """The seat on turn played what the camera glimpsed in its zone, too faintly to count
        (a ``glimpse``), and the table played on as if it had: seed 9501, S's last card, HR on
        W's SQ, seen by one faint corner; E and N passed, ignored with S still on turn, and
        the referee took S as gone out with its HJ before (``_gone``). Taken so when the
        continuation then has ``HINDSIGHT_GAIN`` fewer clashes or third copies: a correction
        inserting the play (``camera`` empty) before the first observation after the glimpse.
        The latest glimpse of that seat since the trick's last play that beats it
        (``_glimpsed``)."""
        d = self._core._live_deal()
        t0 = self._trick_top_t(self._core, len(self._obs))
        if d is None or t0 is None:
            return
        g = self._glimpsed(self._core, d, t0, t)
        if g is None or g.seat is None:
            return
        k = next((j for j, o in enumerate(self._obs) if o.t > g.t), None)
        pos = None if k is None else self._first_pos(k)
        if k is None or pos is None:
            return
        before = self._core_before(k)
        db = before._live_deal()
        if (
            db is None
            or db.turn != g.seat
            or db.counts[g.seat] < len(g.cards)
            or not before._legal(db, g.seat, list(g.cards))
        ):
            return
        now = self._clashes_since(k, _strain)
        if now < HINDSIGHT_GAIN:
            return
        text = " ".join(map(str, g.cards))
        why = (
            f"{g.seat} was on turn and the table played on as if it had played: {g.seat} played "
            f"{text}, which the camera glimpsed there at t={g.t:g} but too faintly to count"
        )
        yield self._insert_unseen(t, k, pos, g.seat, g.cards, g.t, why)

    def _insert_unseen(
        self, t: float, k: int, pos: int, seat: str, cards: Sequence[Card], at: float, why: str
    ) -> Alt:
        """A play by ``seat`` of ``cards`` at ``at`` that the camera did not count (``camera``
        empty; ``why`` its reason), put before observation ``k`` (its first event at ``pos``)
        by a correction at ``t``, weighed by clashes or third copies."""
        play = Observation(
            at, "played", seat=seat, cards=tuple(cards), extra={"camera": [], "reread": why}
        )
        new = [play, self._obs[k]]

        def publish(now: int, left: int) -> list[Event]:
            return self._replace(t, self._effective[pos].id, new, why)

        return Alt(k, {k: new}, UNSEEN_COST, publish, counts=_strain)

    def _won_unseen(self, idx: int, t: float) -> Iterator[Alt]:
        """The seat on turn answered a small joker with the big one (or a pair of small jokers
        with the big pair), the only answers short of a bomb, and the camera missed it: the
        others passed (ignored, that seat being on turn by the referee's reading), the table
        cleared the trick and that seat leads (observation ``idx``, a clash). Taken so, with
        the answer as the cards, when the continuation then has ``HINDSIGHT_GAIN`` fewer
        clashes: a correction inserting the play (``camera`` empty: nothing was read). Only
        when that lead is a camera reading (a person's entry is not second-guessed). For any
        other trick, the answer is what the camera glimpsed in that seat's zone between the
        trick's last play and the clearing (a ``glimpse`` observation), when it beats the
        trick."""
        o = self._obs[idx]
        if o.type != "played" or o.seat is None or not o.doubts:
            return
        c = next(
            (j for j in range(idx - 1, -1, -1) if self._obs[j].type in _TURN_OBS),
            None,
        )
        if c is None or self._obs[c].type != "trick_cleared":
            return
        cleared = self._core_before(c)
        d = cleared._live_deal()
        if d is None or d.turn != o.seat or d.top is None or d.owner is None:
            return
        top = self._last_play(d.owner, d.number, c)
        if top is None:
            return
        k = self._origin[top] + 1  # the seat came on turn with the observation after the top
        answer = _ONLY_ANSWER.get(tuple(d.top.cards))
        how = "the only answer short of a bomb, and the camera did not see it"
        at = self._obs[k].t
        if answer is None:
            # cards the camera glimpsed in the seat's zone meanwhile, too faint to count (a
            # joker by one corner: seed 9909, W's HR on N's C2 at level 2, where SB would have
            # beaten it too), the latest that beats the trick
            g = self._glimpsed(cleared, d, self._obs[k - 1].t, self._obs[c].t)
            if g is None:
                return
            answer, at = g.cards, min(g.t, at)
            how = f"which the camera glimpsed there at t={g.t:g} but too faintly to count"
        if d.counts[o.seat] < len(answer):
            return
        pos = self._first_pos(k)
        now = self._clashes_since(k, _strain)
        if pos is None or now < HINDSIGHT_GAIN:
            return
        text = " ".join(str(x) for x in answer)
        why = (
            f"{o.seat} leads after the table cleared {d.owner}'s "
            f"{' '.join(str(x) for x in d.top.cards)} that the others passed: {o.seat} played "
            f"{text}, {how}"
        )
        yield self._insert_unseen(t, k, pos, o.seat, answer, at, why)

    def _gone(self, t: float) -> Iterator[Alt]:
        """The seat the referee has on turn holds few cards by its count (``GONE_MAX_LEFT``),
        and the table plays on without it: it may have gone out with its last play, the cards
        it still held by the count having gone down unseen earlier (plays the camera missed or
        read short: court cards without an index, a pair read as one card). Its last play, a
        camera reading within ``GONE_WINDOW``, is taken as emptying the hand when the
        continuation then has ``HINDSIGHT_GAIN`` fewer clashes: a correction of that play."""
        d = self._core._live_deal()
        if d is None or d.turn is None:
            return
        seat = d.turn
        if not 0 < d.counts[seat] <= GONE_MAX_LEFT:
            return
        pos = self._last_camera_play(seat, d.number, len(self._obs))
        if pos is None:
            return
        k = self._origin[pos]
        o = self._obs[k]
        ev = self._effective[pos]
        later = sum(1 for x in self._obs[k + 1 :] if x.type in ("played", "pass"))
        now = self._clashes_since(k)
        if later > GONE_WINDOW or now < HINDSIGHT_GAIN:
            return
        before = self._core_before(k)
        bd = before._live_deal()
        if bd is None or bd.turn != seat:
            return
        rest = bd.counts[seat] - len(o.cards)
        if rest <= 0:
            return
        text = [str(c) for c in o.cards]
        camera = list(o.extra.get("camera", text))

        def publish(now: int, left: int) -> list[Event]:
            why = (
                f"{seat} still held {rest} cards by the count after {' '.join(text)}, and the "
                f"table played on as if {seat} had gone out ({now} fouls or ignored passes "
                f"since): taken as {seat}'s last play, {rest} cards having gone down unseen"
            )
            if "reread" in o.extra:
                why = f"{o.extra['reread']}; then {why}"
            fix = replace(
                o, extra={**o.extra, "camera": camera, "reread": why, "rest_unseen": True}
            )
            self._gone_fixes.append((k, o, False))
            return self._replace_play(t, ev.id, fix)

        trial = replace(o, extra={**o.extra, "camera": camera, "reread": "", "rest_unseen": True})
        yield Alt(k, {k: [trial]}, GONE_CARD_COST * rest, publish)

    def _swap_copies(self, idx: int, t: float) -> Iterator[Alt]:
        """The camera's reading of play ``idx`` holds a third copy of a card X in the deal (two
        decks hold two): one of the readings of X is a misread, and ``_played`` re-read this
        one (or could not). The misread is more likely the reading whose runner-up is cheapest:
        when an earlier camera play of the deal read X with a runner-up Y that costs
        ``SWAP_MARGIN`` less than this play's re-reading (or, when none was legal, than its
        cheapest runner-up for X), that play is read with Y instead (a correction) and this one
        stands as the camera read it, provided the continuation has no more clashes or third
        copies than the log. A pair read as a third and fourth copy re-reads both cards."""
        o = self._obs[idx]
        seat = o.seat
        assert seat is not None
        pos = self._play_pos(idx)
        if pos is None or self._effective[pos].data.get("unseen"):
            return
        before = self._core_before(idx)
        d = before._live_deal()
        if d is None or d.turn != seat:
            return
        dup = set(third_copies(d, seat, o.cards))
        if not dup or max(Counter(o.cards).values()) > 2:
            return
        found = reread(o.cards, o.doubts, lambda cs: before._legal(d, seat, cs), REREAD_BUDGET)
        # what reading each such card X otherwise here costs: the legal re-reading's (it reads
        # every third copy otherwise), else at least X's own cheapest runner-up; not another
        # card's (seed 9802: N's S2 at 0.6 and C4 at 8.4 were both third copies, and the S2's
        # 0.6 kept S's earlier C4 C4, whose S4 cost 0.5, from being re-read)
        here_of: dict[Card, float] = {}
        for x in dup:
            if found is not None:
                here_of[x] = found[1]
            else:
                runner = [c for card, a in o.doubts if card == x for y, c in a if y is not None]
                here_of[x] = min(runner, default=REREAD_BUDGET_IMPOSSIBLE)
        deal = self._effective[pos].deal
        # copies of each such card beyond two (a pair read as a third and fourth copy: both)
        excess = {x: d.played.get(x, 0) + o.cards.count(x) - 2 for x in dup}
        options: list[tuple[float, int, Card, Card, int]] = []
        for i in range(pos - 1, -1, -1):
            e = self._effective[i]
            if e.deal != deal:
                break
            if e.type != "play" or e.data.get("legal") is False or e.data.get("unseen"):
                continue
            k = self._origin[i]
            ok = self._obs[k]
            have = [parse_card(c) for c in e.data["cards"]]
            if not ok.doubts or ok.type != "played":
                continue
            for x in dup:
                if x not in have:
                    continue
                by_alt: dict[Card, list[float]] = {}
                for card, alts in ok.doubts:
                    if card == x:
                        for y, cost in alts:
                            if y is not None and y != x and cost <= SWAP_MAX_COST:
                                by_alt.setdefault(y, []).append(float(cost))
                for y, costs in by_alt.items():
                    m = max(1, excess[x])  # every copy too many, or this play stays a third copy
                    if min(have.count(x), len(costs)) < m:
                        continue
                    cost = sum(sorted(costs)[:m])
                    if cost + SWAP_MARGIN <= here_of[x]:
                        options.append((cost, i, x, y, m))
        yield from self._undo_added(pos, deal, dup, seat, o, t)
        yield from self._swaps(options, seat, o, here_of, t)

    def _swaps(
        self,
        options: Sequence[tuple[float, int, Card, Card, int]],
        seat: str,
        o: Observation,
        here_of: Mapping[Card, float],
        t: float,
    ) -> Iterator[Alt]:
        """``_swap_copies``'s earlier plays read with a runner-up ``y`` for ``m`` copies of
        ``x`` (``options``: cost, position in the effective log, x, y, m), the cheapest three."""
        for cost, i, x, y, m in sorted(options, key=lambda v: (v[0], -v[1]))[:_SWAP_TRIES]:
            e = self._effective[i]
            k = self._origin[i]
            ok = self._obs[k]
            have = [parse_card(c) for c in e.data["cards"]]
            for _ in range(m):
                have.remove(x)
            new_cards = sort_cards([*have, *[y] * m])
            ebefore = self._core_before(k)
            ed = ebefore._live_deal()
            if ed is None or ok.seat is None or not ebefore._legal(ed, ok.seat, new_cards):
                continue
            camera = list(ok.extra.get("camera", [str(c) for c in ok.cards]))
            text = [str(c) for c in new_cards]
            why = (
                f"{x} seen a third time this deal ({seat} played "
                f"{' '.join(map(str, o.cards))} as read): "
                f"the cheapest other reading of its copies is {' '.join([str(y)] * m)} for "
                f"{' '.join([str(x)] * m)} in "
                f"{ok.seat}'s {' '.join(e.data['cards'])} (cost {cost:.2f}, against "
                f"{here_of[x]:.2f} here); re-read as {' '.join(text)}"
            )
            fix = replace(
                ok, cards=tuple(new_cards), extra={**ok.extra, "camera": camera, "reread": why}
            )
            yield self._earlier(e, k, fix, t, cost)

    def _earlier(self, e: Event, k: int, fix: Observation, t: float, cost: float = 0.0) -> Alt:
        """The earlier play event ``e`` (of observation ``k``) replaced by ``fix`` through a
        correction, admitted when the continuation then has no more clashes or third copies
        than the log's."""

        def publish(now: int, left: int) -> list[Event]:
            return self._replace_play(t, e.id, fix)

        return Alt(k, {k: [fix]}, cost, publish, gain=0, counts=_strain)

    def _replace_play(self, t: float, event: str, fix: Observation) -> list[Event]:
        """The play event ``event`` replaced by the observation ``fix`` through a correction at
        ``t``, its reason ``fix``'s ``reread``."""
        return self._replace(t, event, [fix], str(fix.extra.get("reread", "")))

    def _replace(self, t: float, event: str, new: Sequence[Observation], why: str) -> list[Event]:
        """The observation behind event ``event`` replaced by ``new`` through a correction at
        ``t`` whose reason is ``why``."""
        return self._correct(
            Observation(
                t, "correction", replaces=event, replacement=tuple(new), extra={"reason": why}
            )
        )

    def _undo_added(
        self, pos: int, deal: int, dup: set[Card], seat: str, o: Observation, t: float
    ) -> Iterator[Alt]:
        """A card X seen a third time, where an earlier play of the deal holds a copy of X that
        the camera did not see (a second look added it, "X not seen", as the cheapest legal
        reading): that guess is the likelier error. The earlier play is read again from the
        camera's own cards with every copy of X the camera did not see left out: its legal
        readings, each admitted when its continuation has no more clashes or third copies than
        the log's."""
        for i in range(pos - 1, -1, -1):
            e = self._effective[i]
            if e.deal != deal:
                break
            camera = e.data.get("camera")
            if e.type != "play" or e.data.get("legal") is False or not camera:
                continue
            have = Counter(parse_card(c) for c in e.data["cards"])
            seen = Counter(parse_card(c) for c in camera)
            added = [x for x in dup if have[x] > seen[x]]
            if not added:
                continue
            k = self._origin[i]
            ok = self._obs[k]
            ebefore = self._core_before(k)
            ed = ebefore._live_deal()
            if ed is None or ok.seat is None or ed.turn != ok.seat:
                continue
            cam = replace(ok, cards=tuple(sort_cards(list(seen.elements()))), doubts=())
            readings = self._legal_readings(ebefore, ed, ok.seat, cam, self._played_after(k, deal))
            if ebefore._legal(ed, ok.seat, list(cam.cards)):
                # the camera's own reading first: a copy put in by a third-copy swap (C3 for
                # S3) is undone by reading the play as the camera did, not by changing another
                # of its cards (seed 9406: N's S3 S3 H3 S7 S7, swapped to S3 H3 C3 S7 S7, was
                # "re-read" S3 S3 H3 S7 H7 at 6 nats when a third C3 came)
                readings = [(list(cam.cards), 0.0, ["as the camera read it"]), *readings]
            for cards, cost, changes in readings:
                got = Counter(cards)
                if any(got[x] > seen[x] for x in added) or got == have:
                    continue
                text = [str(c) for c in sort_cards(cards)]
                x = added[0]
                why = (
                    f"{x} seen a third time this deal ({seat} played "
                    f"{' '.join(map(str, o.cards))} as read), and {ok.seat}'s "
                    f"{' '.join(e.data['cards'])} held a copy the camera did not see (it read "
                    f"{' '.join(camera)}): re-read as {' '.join(text)} "
                    f"({', '.join(changes)}; cost {cost:.2f})"
                )
                fix = replace(
                    ok,
                    cards=tuple(sort_cards(cards)),
                    doubts=(),
                    extra={**ok.extra, "camera": list(camera), "reread": why},
                )
                yield self._earlier(e, k, fix, t, cost)

    def _played_after(self, k: int, deal: int) -> Counter[Card]:
        """Copies of each card in the plays of ``deal`` after observation ``k`` (the effective
        log as it stands): a card the camera may have missed in play ``k`` is likelier one with
        fewer copies seen in the whole deal (9602: a straight's missing queen, guessed SQ, was
        re-read HQ when a third SQ came, the first suit in the order; the deal's copies say
        which queens were still unaccounted for)."""
        got: Counter[Card] = Counter()
        for e, origin in zip(self._effective, self._origin, strict=True):
            if origin > k and e.deal == deal and e.type == "play":
                got.update(parse_card(c) for c in e.data["cards"])
        return got

    def _first_pos(self, k: int) -> int | None:
        """Position in the effective log of the first event of observation ``k``."""
        return next((i for i, origin in enumerate(self._origin) if origin == k), None)

    def _last_play(self, seat: str, deal: int, before: int) -> int | None:
        """Position in the effective log of ``seat``'s last play in ``deal`` before observation
        ``before``."""
        for i in range(len(self._effective) - 1, -1, -1):
            e = self._effective[i]
            if self._origin[i] >= before:
                continue
            if e.deal != deal:
                return None
            if e.type == "play" and e.data["seat"] == seat:
                return i
        return None

    def _last_camera_play(
        self, seat: str, deal: int, before: int, legal_only: bool = True
    ) -> int | None:
        """:meth:`_last_play`, when it is a camera reading (a legal one with ``legal_only``)
        not already taken as the seat's last."""
        i = self._last_play(seat, deal, before)
        if i is None:
            return None
        e, o = self._effective[i], self._obs[self._origin[i]]
        ok = (
            o.doubts
            and (e.data.get("legal") is not False or not legal_only)
            and not e.data.get("unseen")
            and not o.extra.get("not_last")
        )
        return i if ok else None

    def _gone_at_end(self, idx: int, t: float) -> Iterator[Alt]:
        """The table ended the deal (a new deal started, or the trick was cleared with a seat
        still to answer) while by the referee's counts no team has both players out. When one
        team's players still in hold few cards (``GONE_MAX_LEFT``) and each last played a camera
        reading, they are taken as having gone out with those plays (their last cards went down
        unseen; a play illegal as read is read again as in the second look, cheapest legal
        reading first) if the deal then ends before observation ``idx``: one correction per
        seat."""
        core = self._core_before(idx)
        d = core._live_deal()
        if d is None:
            return
        best: tuple[int, list[int]] | None = None
        for team in TEAMS:
            need = [s for s in team if s not in d.order]
            if not need or any(not 0 < d.counts[s] <= GONE_MAX_LEFT for s in need):
                continue
            pos = [self._last_camera_play(s, d.number, idx, legal_only=False) for s in need]
            if any(p is None for p in pos):
                continue
            unseen = sum(d.counts[s] for s in need)
            if best is None or unseen < best[0]:
                best = (unseen, sorted(p for p in pos if p is not None))
        if best is None:
            return
        ks = [self._origin[p] for p in best[1]]
        legal = {
            k: self._effective[p].data.get("legal") is not False
            for k, p in zip(ks, best[1], strict=True)
        }
        if self._obs[idx].type == "trick_cleared":
            # a trick cleared right after the play, nobody answering: the deal's last trick (a
            # missed pass lamp or two would leave passes between the play and the clearing)
            if any(o.type in ("pass", "played") for o in self._obs[ks[-1] + 1 : idx]):
                return
            if legal[ks[-1]] and self._obs[ks[-1]].seat != d.owner:
                return
        options: list[list[tuple[Observation, float]]] = []
        for k in ks:
            o = self._obs[k]
            text = [str(c) for c in o.cards]
            camera = list(o.extra.get("camera", text))
            readings: list[tuple[list[Card], float, str]] = [(list(o.cards), 0.0, "")]
            if not legal[k]:
                before = self._core_before(k)
                bd = before._live_deal()
                if bd is None or o.seat is None:
                    return
                readings = [
                    (
                        cs,
                        cost,
                        f"re-read as {' '.join(str(c) for c in sort_cards(cs))} "
                        f"({', '.join(changes)}; cost {cost:.2f}); ",
                    )
                    for cs, cost, changes in self._legal_readings(before, bd, o.seat, o)
                ]
            opts = []
            for cs, cost, reread in readings:
                why = (
                    f"the table ended the deal while {o.seat} still held cards by the count "
                    f"after the camera's {' '.join(camera)}: {reread}taken as {o.seat}'s last "
                    f"play, the rest having gone down unseen"
                )
                if "reread" in o.extra:
                    why = f"{o.extra['reread']}; then {why}"
                extra = {**o.extra, "camera": camera, "reread": why, "rest_unseen": True}
                fix = replace(
                    o, cards=tuple(sort_cards(cs)), doubts=o.doubts if legal[k] else (), extra=extra
                )
                opts.append((fix, cost))
            if not opts:
                return
            options.append(opts[:_HINDSIGHT_TRIES])
        gone_cost = GONE_CARD_COST * best[0]

        def alt(combo: Sequence[tuple[Observation, float]]) -> Alt:
            fixes = {k: fix for k, (fix, _) in zip(ks, combo, strict=True)}

            def publish(now: int, left: int) -> list[Event]:
                if self._obs[idx].type == "trick_cleared":
                    self._gone_fixes += [(k, self._obs[k], True) for k in ks]
                out: list[Event] = []
                for k in ks:
                    pos = self._play_pos(k)
                    assert pos is not None
                    out += self._replace_play(t, self._effective[pos].id, fixes[k])
                return out

            cost = gone_cost + sum(c for _, c in combo)
            fix_lists = {k: [o] for k, o in fixes.items()}
            return Alt(ks[0], fix_lists, cost, publish, gain=1, counts=_deal_over_signal)

        # the table's signal (a new deal, a clearing with a seat to answer) goes when the deal
        # ends before it
        yield from (alt(combo) for combo in product(*options))

    def _undo_gone(self, undo: list[tuple[int, Observation, bool]], t: float) -> list[Event]:
        """A seat taken as gone out unseen plays or passes again, or the table plays on in a deal
        the referee ended at a clearing: those plays are read as the camera saw them again (and
        never taken as last again), through corrections."""
        out: list[Event] = []
        for k, orig, _ in sorted(undo, key=lambda f: -f[0]):
            ev = next(
                (
                    e
                    for e, origin in zip(self._effective, self._origin, strict=True)
                    if origin == k and e.type == "play"
                ),
                None,
            )
            if ev is None:
                continue
            why = f"{orig.seat} played on: it had not gone out"
            back = replace(orig, extra={**orig.extra, "not_last": True})
            out += self._replace(t, ev.id, [back], why)
        self._gone_fixes = [f for f in self._gone_fixes if f not in undo]
        return out

    @staticmethod
    def _legal_readings(
        before: RulesCore,
        d: DealState,
        seat: str,
        o: Observation,
        later: Mapping[Card, int] | None = None,
    ) -> list[tuple[list[Card], float, list[str]]]:
        """The legal readings of camera play ``o`` by ``seat`` (state ``before`` it), cheapest
        first, at most ``_HINDSIGHT_TRIES``: the camera's runner-ups, one card seen that was not
        there, one card not seen (``_missed_cards``; with the copies of each card accounted for
        in the deal before the play and, ``later``, played after it)."""
        cards = list(o.cards)
        doubts: list[tuple[Card | None, Sequence[tuple[Card | None, float]]]] = []
        given = {i: alts for i, (_, alts) in enumerate(o.doubts)}
        pool = [c for c, _ in o.doubts]
        for c in cards:
            alts = list(given.pop(pool.index(c))) if c in pool else []
            if c in pool:
                pool[pool.index(c)] = None
            if not any(a is None for a, _ in alts):
                alts.append((None, EXTRA_CARD_COST))
            doubts.append((c, alts))
        # the cards the camera itself says it may have missed (a fan's lower card it was not
        # sure of), then one a camera misses on fanned cards
        doubts += [(None, list(alts)) for c, alts in o.doubts if c is None]
        hints: dict[Card, float] = {}
        for _, runner_ups in o.doubts:
            for y, cost in runner_ups:
                if y is not None and cost < hints.get(y, math.inf):
                    hints[y] = float(cost)
        played = Counter(d.played) + Counter(later or {})
        doubts.append((None, _missed_cards(cards, played, hints)))
        doubts += _joker_bomb_doubts(cards)
        found: list[tuple[list[Card], float, list[str]]] = []
        for cs, cost, changes in _readings(cards, doubts, HINDSIGHT_BUDGET):
            if len(found) >= _HINDSIGHT_TRIES:
                break
            key = Counter(cs)
            if cs and before._legal(d, seat, cs) and all(key != Counter(f[0]) for f in found):
                found.append((cs, cost, changes))
        return found

    def _retry(self, k: int, t: float, why: str = "illegal") -> Iterator[Alt]:
        """The legal readings of the suspect observation ``k`` (``_legal_readings``), each a
        correction of its play event admitted with ``HINDSIGHT_GAIN`` fewer clashes. ``why``:
        "illegal" as read, or "top": legal as read, a trick's top a later play did not beat
        (``_short_top``)."""
        o = self._obs[k]
        seat = o.seat
        pos = self._play_pos(k)
        if seat is None or pos is None:
            return
        now = self._clashes_since(k)
        if now < HINDSIGHT_GAIN:
            return
        before = self._core_before(k)
        d = before._live_deal()
        if d is None or d.turn != seat:
            return
        camera = [str(c) for c in o.cards]
        what = (
            "not a legal play, and the table played on as if it were"
            if why == "illegal"
            else "the next plays did not beat it as read, and the table played on as if they did"
        )
        for new_cards, cost, changes in self._legal_readings(before, d, seat, o):
            text = " ".join(str(c) for c in sort_cards(new_cards))
            fix = replace(
                o,
                cards=tuple(sort_cards(new_cards)),
                doubts=(),
                extra={**o.extra, "camera": camera, "reread": ""},
            )
            how = f"re-read as {text} ({', '.join(changes)}; cost {cost:.2f})"
            yield Alt(k, {k: [fix]}, cost, self._retry_publish(t, k, pos, fix, what, how))

    def _as_read(self, k: int, t: float) -> Iterator[Alt]:
        """Camera play ``k``, illegal as read and re-read as it came (``reread`` within
        ``REREAD_BUDGET``), taken as the camera read it: an illegal play after all, when the
        table played on as if it were one (seed 9303: E's DJ S6, a real illegal play, re-read
        as S6 with no card for DJ at 2.98 nats; every later play of the trick was judged not to
        beat a single 6)."""
        o, pos = self._obs[k], self._play_pos(k)
        if pos is None or o.seat is None:
            return
        camera = [str(c) for c in o.cards]
        why = (
            f"{o.seat}'s {' '.join(camera)} taken as the camera read it, not a legal play: the "
            f"table played on as if it were one (re-read as it came: "
            f"{self._effective[pos].data.get('reread')})"
        )
        fix = replace(o, extra={**o.extra, "camera": camera, "reread": why})

        def publish(now: int, left: int) -> list[Event]:
            return self._replace_play(t, self._effective[pos].id, fix)

        yield Alt(k, {k: [fix]}, 0.0, publish)

    def _retry_publish(
        self, t: float, k: int, pos: int, fix: Observation, what: str, how: str
    ) -> Callable[[int, int], list[Event]]:
        """The correction of suspect ``k``'s play (at ``pos``) by ``_retry``'s reading ``fix``."""

        def publish(now: int, left: int) -> list[Event]:
            camera = " ".join(fix.extra["camera"])
            why = (
                f"camera read {camera}: {what} ({now} fouls or ignored passes since, {left} with "
                f"this reading); {how}"
            )
            return self._replace_play(
                t, self._effective[pos].id, replace(fix, extra={**fix.extra, "reread": why})
            )

        return publish
