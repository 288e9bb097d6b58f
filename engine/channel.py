"""The channel: what the camera reads, what it may have misread, and what each misreading costs.

The decoder (engine/decoder.py) treats the camera as a noisy channel (DESIGN.md, "Decoders in
recognition"): the costs here are its acoustic scores, the rules and the table's continuation its
language model. A cost is in nats: a reading at cost c is e^-c as likely to the camera as its
first, so costs add along a history and compare across kinds of error.

**Readings.** A ``played`` observation carries the cards as read and ``doubts`` (:data:`Doubts`):
per card its runner-ups with a cost, ``None`` for "no card here", and entries with no card for a
card the camera may have missed. :func:`reread` walks the other readings cheapest first
(``_readings``, a best-first walk over one choice per doubt, at most ``_REREAD_TRIES``) and returns
the first the rules accept within a budget: ``REREAD_BUDGET`` for a play illegal as it comes
(index slips are common), ``REREAD_BUDGET_IMPOSSIBLE`` for three copies in a play or a foul with a
third copy, ``HINDSIGHT_BUDGET`` for a suspect read again in hindsight. Beyond its doubts the
camera may have seen a card that was not there (``EXTRA_CARD_COST``) or missed one
(``MISSED_CARD_COST``; :func:`_missed_cards` says which, likeliest first: a bomb's copy, its ranks,
a straight's gap or ends; :func:`_joker_bomb_doubts` the joker bomb read a joker short).

**The other errors**, each a row too: it reports a play when its cards settle but a pass at once
(``REORDER_S``, ``REORDER_COST`` a turn taken back), glimpses cards too faintly to count
(``glimpse``; a joker by one weak corner may be the other, ``GLIMPSE_JOKER_COST``), reads a joker
as the other (:func:`joker_colours`, ``JOKER_COLOUR_COST``, given to every camera play with a
joker as it comes to the referee), finds a play's
card late (``amends``) or reads lying cards anew (``was``; ``MOVED_CARD_COST``,
``MOVED_SURE_COST``), misses a turn (``UNSEEN_COST``) or a seat's last cards (``GONE_CARD_COST``).
The rules' side has its costs as well: ``CLASH_COST`` for a clash with the table's continuation,
``THIRD_COPY_COST`` for a card seen a third time, and the margins and windows the search and the
edits (engine/edits.py) work within.

**The table.** Every cost and window is a row: a :class:`Cost` (a float in nats) or a
:class:`Window` (an int: observations, cards or tries), each with ``why`` it is what it is, all
collected by name in ``COSTS``. A new kind of camera error should need a row here and a generator
of alternatives (engine/edits.py), not a new branch. The helpers below are pure: they read cards
and doubts and know nothing of the log (``_take``, ``_without``: doubts follow their cards;
``_text``, ``_how``: a reading as the corrections' text).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from engine.cards import BIG_JOKER, DISTINCT, SMALL_JOKER, Card, sort_cards

__all__ = ["COSTS", "Cost", "Window", "Doubts", "Reading", "joker_colours", "reread"]


class Cost(float):
    """A cost in nats (a reading at cost c is e^-c as likely to the camera as its first), with
    why it is what it is: a row of ``COSTS``."""

    why: str

    def __new__(cls, value: float, why: str) -> Cost:
        row = super().__new__(cls, value)
        row.why = why
        return row


class Window(int):
    """A window or bound (observations, cards or tries), with why: a row of ``COSTS``."""

    why: str

    def __new__(cls, value: int, why: str) -> Window:
        row = super().__new__(cls, value)
        row.why = why
        return row


# Every cost and window, each with its reason. A new kind of camera error should need a row here
# and a generator of alternatives, not a new branch.
REREAD_BUDGET: Final = Cost(3.0, "an illegal play re-read as it comes: index slips are common")
REREAD_BUDGET_IMPOSSIBLE: Final = Cost(10.0, "... 3 copies in a play, or a foul with a third copy")
HINDSIGHT_BUDGET: Final = Cost(10.0, "a suspect read again in hindsight: readings up to this cost")
EXTRA_CARD_COST: Final = Cost(3.0, "one card seen that was not there (a ghost index beside a fan)")
MISSED_CARD_COST: Final = Cost(3.0, "one card not seen (an index under another): _missed_cards")
HINDSIGHT_GAIN: Final = Window(2, "clashes a look back must remove: a real foul clashes either way")
HINDSIGHT_WINDOW: Final = Window(10, "plays and passes after a suspect within which it is re-read")
GONE_MAX_LEFT: Final = Window(8, "cards by the count a seat gone out unseen may have held at most")
GONE_WINDOW: Final = Window(40, "plays and passes back to its last play (court cards unread long)")
SWAP_MARGIN: Final = Cost(0.5, "a third copy: an earlier reading is the misread when this cheaper")
SWAP_MAX_COST: Final = Cost(5.0, "... and at most this, unless the camera never saw the copy there")
LATE_MAX: Final = Window(2, "cards of a seat's play tried as cards of its last play, seen late")
MOVED_CARD_COST: Final = Cost(0.0, "a card moved to an earlier play: seen late, not misread")
MOVED_SURE_COST: Final = Cost(0.25, "... from a later play where the camera never doubted it")
REORDER_S: Final = Cost(5.0, "seconds within which two seats' turns may have come either way")
REORDER_SPAN: Final = Window(8, "the latest observations of the deal run again in other orders")
REORDER_BEAM: Final = Window(6, "orders kept at once in the reorder beam")
CLASH_COST: Final = Cost(10.0, "the rules' cost of a clash: the table's continuation is evidence")
THIRD_COPY_COST: Final = Cost(3.0, "the rules' cost of a card seen a third time: one misread card")
UNSEEN_COST: Final = Cost(2.0, "a pass or play the camera missed: likelier than a card missed")
GONE_CARD_COST: Final = Cost(3.0, "each card a seat taken as gone out held by the count: missed")
# ... less UNSEEN_COST for each pass put in for that seat since, which a seat gone out never took
COUNT_OFF_MAX: Final = Window(2, "cards a seat reports fewer or more than the count, sought")
COUNT_OFF_GAIN: Final = Window(2, "reports a card missed or not there must mend: one may be wrong")
TIE_COST: Final = Cost(0.5, "a tie, which the earliest change wins: later clashes may be echoes")
REORDER_COST: Final = Cost(0.5, "each turn taken back past another seat's: a late report is common")
GLIMPSE_JOKER_COST: Final = Cost(1.0, "a joker glimpsed by one weak corner was the other joker")
JOKER_COLOUR_COST: Final = Cost(2.5, "a joker read as the other: on many decks only colour differs")
_REREAD_TRIES: Final = Window(256, "readings tried at most per play (the enumerator's bound)")
_HINDSIGHT_TRIES: Final = Window(8, "legal readings whose continuation is tried, cheapest first")
_HINDSIGHT_SUSPECTS: Final = Window(3, "suspects kept at once (the latest)")
_UNSEEN_SEATS: Final = Window(3, "seats taken as passing or playing unseen before a play")
#: the rows above by name
COSTS: Final = {name: row for name, row in globals().items() if isinstance(row, Cost | Window)}


Doubts = Sequence[tuple[Card | None, Sequence[tuple[Card | None, float]]]]
Reading = tuple[list[Card], float, list[str]]


def _missed_cards(
    cards: Sequence[Card],
    played: Mapping[Card, int] | None = None,
    hints: Mapping[Card, float] | None = None,
) -> list[tuple[Card | None, float]]:
    """The cards a camera may have missed in a play of ``cards``, likeliest first, with their
    cost: a copy of a bomb's card; its ranks; for three or more cards a straight's gap, then one
    beyond either end (the ace high or low, the shorter span). Within each, the fewest copies
    accounted for (``played``) first, then the runner-ups' cheapest (``hints``; seeds 9405-9805)."""
    out: list[tuple[Card | None, float]] = []
    seen = Counter(cards) + Counter(played or {})
    hint = hints or {}

    def add(
        cs: Iterable[Card], key: Callable[[Card], Any] = lambda c: (seen[c], hint.get(c, math.inf))
    ) -> None:
        for c in sorted(cs, key=key):
            if all(c != o for o, _ in out):
                out.append((c, MISSED_CARD_COST + 0.001 * len(out)))

    ranks = {c.rank for c in cards}
    if len(cards) >= 3 and len(ranks) == 1:
        add(set(cards), cards.index)
    add(c for c in DISTINCT if c.rank in ranks)
    order = "A23456789TJQKA"
    plain = {c.rank for c in cards if not c.is_joker}
    if len(cards) >= 3 and plain:
        mid = [i for i, r in enumerate(order[1:13], 1) if r in plain]
        spans = [sorted([*mid, ace]) if "A" in plain else mid for ace in (13, 0)]
        idx = min(spans, key=lambda x: (x[-1] - x[0], x))
        lo, hi = idx[0], idx[-1]
        near = [i for i in range(max(0, lo - 1), min(13, hi + 1) + 1) if order[i] not in plain]
        near.sort(key=lambda i: not lo < i < hi)  # a gap first, then one more at either end
        for i in near:
            add(c for c in DISTINCT if c.rank == order[i])
    return out


def _joker_bomb_doubts(cards: Sequence[Card]) -> list[tuple[None, list[tuple[Card, float]]]]:
    """SB HR, which no combination holds, may be the joker bomb with a joker missed (9803)."""
    bomb = Counter(cards) == Counter([SMALL_JOKER, BIG_JOKER])
    return [(None, [(SMALL_JOKER, MISSED_CARD_COST), (BIG_JOKER, MISSED_CARD_COST)])] * bomb


#: a joker read as the other (``joker_colours``; ``_glimpsed`` in engine/edits.py)
_OTHER_JOKER: Final[Mapping[Card, Card]] = {SMALL_JOKER: BIG_JOKER, BIG_JOKER: SMALL_JOKER}


def joker_colours(
    cards: Sequence[Card], doubts: Doubts
) -> tuple[tuple[Card | None, tuple[tuple[Card | None, float], ...]], ...]:
    """``doubts`` with each joker of ``cards`` given the other joker as a runner-up at
    ``JOKER_COLOUR_COST`` at most (cheaper where the camera's own doubt is).

    On many decks the two jokers share one picture and differ only by its colour (guyenne-classic
    prints a small red or black symbol in the corner), and a classifier sure of the picture may be
    sure of the wrong colour: guyenne-classic 49233 and 49238 at 2304x1296 read a single HR as SB
    with no runner-up at all, so "does not beat the trick" was all the rules could say. This is
    the channel's floor for that one confusion, for every deck and every joker, not a case for
    one seed; the rules then choose (a single SB that cannot beat, a third SB)."""
    other = _OTHER_JOKER
    out = [(c, tuple(alts)) for c, alts in doubts]
    for i, (c, alts) in enumerate(out):
        if (
            c is not None
            and c in other
            and all(a != other[c] or x > JOKER_COLOUR_COST for a, x in alts)
        ):
            mine = [(a, x) for a, x in alts if a != other[c]] + [(other[c], JOKER_COLOUR_COST)]
            out[i] = (c, tuple(sorted(mine, key=lambda ax: ax[1])))
    have = Counter(c for c, _ in doubts)
    for c, n in Counter(cards).items():
        if c in other:
            out += [(c, ((other[c], JOKER_COLOUR_COST),))] * max(0, n - have[c])
    return tuple(out)


def _take(pool: list[Any], card: Card) -> Any:
    """The runner-ups of ``card``'s first doubt in ``pool``, taken out of it; None if none."""
    j = next((j for j, (x, _) in enumerate(pool) if x == card), -1)
    return pool.pop(j)[1] if j >= 0 else None


def _without(cards: Sequence[Card], doubts: Doubts, gone: Iterable[Card]) -> tuple[list[Card], Any]:
    """``cards`` and their ``doubts`` without the cards ``gone`` (each one copy)."""
    rest, left = list(cards), list(doubts)
    for c in gone:
        rest.remove(c)
        _take(left, c)
    return rest, left


def _text(cards: Iterable[Card | str]) -> str:
    return " ".join(map(str, cards))


def _how(cards: Sequence[Card], cost: float, changes: Sequence[str]) -> str:
    """A re-reading's text: the cards, what changed and what it cost."""
    return f"re-read as {_text(sort_cards(cards))} ({', '.join(changes)}; cost {cost:.2f})"


def reread(
    cards: Sequence[Card],
    doubts: Doubts,
    ok: Callable[[list[Card]], bool],
    budget: float = REREAD_BUDGET,
) -> Reading | None:
    """The cheapest other reading of ``cards`` (by ``doubts``: per card its runner-ups, None for
    no card; a None card one maybe missed) within ``budget`` that ``ok`` accepts: (cards, cost,
    changes as text like ``"D4 for DA"``), or None."""
    for new, c, changes in _readings(cards, doubts, budget):
        if new and ok(new):
            return sort_cards(new), c, changes
    return None


def _readings(cards: Sequence[Card], doubts: Doubts, budget: float) -> Iterator[Reading]:
    """The other readings of ``cards`` (see :func:`reread`), cheapest first, at most
    ``_REREAD_TRIES``: a best-first walk over one choice per doubt."""
    opts: list[tuple[Card | None, list[tuple[Card | None, float]]]] = []
    for card, alts in doubts:
        good = sorted(((a, float(c)) for a, c in alts if c <= budget), key=lambda x: x[1])
        if card is None:
            good = [(a, c) for a, c in good if a is not None]  # a missed card is some card
        if good:
            opts.append((card, good))
    heap: list[tuple[float, tuple[int, ...]]] = [(0.0, (0,) * len(opts))]
    seen = {heap[0][1]}
    tries = 0
    while heap and tries < _REREAD_TRIES + 1:
        c, choice = heapq.heappop(heap)
        for i in range(len(opts)):
            if choice[i] < len(opts[i][1]):
                nxt = choice[:i] + (choice[i] + 1,) + choice[i + 1 :]
                nc = sum(opts[j][1][m - 1][1] for j, m in enumerate(nxt) if m)
                if nxt not in seen and nc <= budget:
                    seen.add(nxt)
                    heapq.heappush(heap, (nc, nxt))
        tries += 1
        if tries == 1:
            continue  # the reading as it is
        new, changes = list(cards), []
        for (card, alts), m in zip(opts, choice, strict=True):
            if not m:
                continue
            alt = alts[m - 1][0]
            if card is not None:
                new.remove(card)
            if alt is not None:
                new.append(alt)
            what = "not seen" if card is None else f"for {card}"  # a missed card is some card
            changes.append(f"{alt} {what}" if alt is not None else f"no card {what}")
        yield new, c, changes
