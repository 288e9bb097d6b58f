"""Internal lookup tables shared by ``engine.combos`` and ``engine.moves`` (not public API).

Cards are handled internally as small integers: ``idx = (natural_rank - 2) * 4 + suit`` for the
52 suited cards (suits S H C D = 0..3), 52 for the small joker, 53 for the big joker. That order is
also the canonical order of a combo's cards (natural rank, then suit S H C D; jokers last), the
order ``engine.cards.sort_cards`` gives without a level.
"""

from __future__ import annotations

from typing import Final

from engine.cards import BIG_JOKER, RANKS, SMALL_JOKER, SUITS, Card, CardError, parse_card

SB_IX: Final = 52
HR_IX: Final = 53

#: Card objects by index (the interned instances of engine.cards).
CARDS: Final[tuple[Card, ...]] = tuple(
    [parse_card(s + r) for r in RANKS for s in SUITS] + [SMALL_JOKER, BIG_JOKER]
)
#: id() of each interned card -> index; cards built by hand are looked up by text instead.
ID2IX: Final[dict[int, int]] = {id(c): i for i, c in enumerate(CARDS)}
TEXT2IX: Final[dict[str, int]] = {str(c): i for i, c in enumerate(CARDS)}
#: Natural rank (2..14) of each index; 16/17 for the jokers.
IX_NAT: Final[tuple[int, ...]] = tuple([i // 4 + 2 for i in range(52)] + [16, 17])
IX_SUIT: Final[tuple[int, ...]] = tuple([i % 4 for i in range(52)] + [0, 1])

#: Rank character by natural rank number (index 2..14); position 1 is the A-low of sequences.
RANK_CHAR: Final[tuple[str, ...]] = ("", "A", *RANKS)
#: Rank number by rank character.
RANK_NUM: Final[dict[str, int]] = {r: i + 2 for i, r in enumerate(RANKS)}
#: Level number of a deal without a level (a joker cut, 000 篇6 "抽到大小王不带"): it equals no
#: rank (no rank is promoted) and its wild index ``(0 - 2) * 4 + 1 = -7`` is no card's index (no
#: wilds), so the level-number arithmetic of engine.combos reads such a deal naturally.
NO_LEVEL: Final = 0


def card_index(card: object) -> int:
    """Index of a Card (fast path for the interned instances); CardError for anything else."""
    ix = ID2IX.get(id(card))
    if ix is not None:
        return ix
    if isinstance(card, Card):
        found = TEXT2IX.get(str(card))
        if found is not None:
            return found
        raise CardError(f"card {card!r} is not a card of the two-deck set")
    if isinstance(card, str):
        return TEXT2IX[str(parse_card(card))]
    raise CardError(f"{card!r} is not a card; give card text like 'S3 HT SB' or Card objects")


def order_of_ranks(level_num: int) -> tuple[int, ...]:
    """Natural ranks 2..14 in ascending single-card order at a level (the level rank last);
    natural order for ``NO_LEVEL``."""
    if level_num == NO_LEVEL:
        return tuple(range(2, 15))
    return tuple([r for r in range(2, 15) if r != level_num] + [level_num])


def wild_index(level_num: int) -> int:
    """Index of the wild card (♥ of the level rank); not a card index for ``NO_LEVEL``."""
    return (level_num - 2) * 4 + 1
