"""Cards in the notation of CONTRACT.md: suit first (``S3``, ``HT``); jokers ``SB`` and ``HR``.

Two standard decks are in play, 108 cards: every suited card exists twice, and there are two
small and two big jokers. ``parse_cards`` accepts the lenient input forms (``10`` for ``T``,
lower case, the suit symbols, ``小王``/``大王``) and always gives canonical cards; ``str(card)``
is canonical text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "CardError",
    "Card",
    "SUITS",
    "RANKS",
    "LEVELS",
    "SMALL_JOKER",
    "BIG_JOKER",
    "DECK",
    "parse_card",
    "parse_cards",
    "parse_level",
    "format_cards",
    "natural_rank",
    "order_value",
    "is_wild",
    "sort_cards",
    "check_two_decks",
]


class CardError(ValueError):
    """Card text or a card set that cannot be right; the message names the token and why."""


SUITS: Final = "SHCD"
RANKS: Final = "23456789TJQKA"
#: Levels are rank characters 2..A.
LEVELS: Final = RANKS
_SUIT_ALIASES: Final = {
    "♠": "S",
    "♥": "H",
    "♣": "C",
    "♦": "D",
    "♤": "S",
    "♡": "H",
    "♧": "C",
    "♢": "D",
}
_JOKER_ALIASES: Final = {
    "SB": "SB",
    "HR": "HR",
    "小王": "SB",
    "大王": "HR",
    "BJ": "SB",  # black joker
    "RJ": "HR",  # red joker
}
#: Natural rank numbers: 2..14 for 2..A; the jokers sit above every rank.
_NATURAL: Final = {r: i + 2 for i, r in enumerate(RANKS)}
SMALL_JOKER_VALUE: Final = 16
BIG_JOKER_VALUE: Final = 17
LEVEL_VALUE: Final = 15


@dataclass(frozen=True, slots=True)
class Card:
    """One physical card. ``rank`` is ``2``..``A``, or ``B``/``R`` for the small/big joker."""

    suit: str
    rank: str

    def __str__(self) -> str:
        return self.suit + self.rank

    def __repr__(self) -> str:
        return f"Card({self.suit + self.rank!r})"

    @property
    def is_joker(self) -> bool:
        return self.rank in "BR"

    @property
    def natural(self) -> int:
        """2..14 for 2..A (A high), 16 for the small joker, 17 for the big joker."""
        return natural_rank(self)

    def to_json(self) -> str:
        return str(self)


SMALL_JOKER: Final = Card("S", "B")
BIG_JOKER: Final = Card("H", "R")

_INTERNED: dict[str, Card] = {}
for _s in SUITS:
    for _r in RANKS:
        _INTERNED[_s + _r] = Card(_s, _r)
_INTERNED["SB"] = SMALL_JOKER
_INTERNED["HR"] = BIG_JOKER

#: The 54 distinct cards, in a fixed order (suits S H C D, ranks 2..A, then SB, HR).
DISTINCT: Final = tuple(_INTERNED.values())
#: The 108-card two-deck model.
DECK: Final = tuple(c for c in DISTINCT for _ in range(2))

_SPLIT: Final = re.compile(r"[\s,;]+")


def parse_card(token: str) -> Card:
    """Parse one card token; raise ``CardError`` naming it when it is not a card."""
    if not isinstance(token, str):
        raise CardError(f"card {token!r} is not text; write cards like S3, HT, SB, HR")
    raw = token.strip()
    if not raw:
        raise CardError("empty card token; write cards like S3, HT, SB, HR")
    up = raw.upper()
    if up in _JOKER_ALIASES:
        return _INTERNED[_JOKER_ALIASES[up]]
    if raw in _JOKER_ALIASES:
        return _INTERNED[_JOKER_ALIASES[raw]]
    suit = _SUIT_ALIASES.get(raw[0], up[0])
    rank = up[1:]
    if rank == "10":
        rank = "T"
    if suit not in SUITS:
        raise CardError(
            f"card {raw!r}: unknown suit {raw[0]!r}; suits are S H C D (or ♠ ♥ ♣ ♦), suit first"
        )
    if len(rank) != 1 or rank not in RANKS:
        raise CardError(
            f"card {raw!r}: unknown rank {raw[1:]!r}; ranks are 2-9, T (or 10), J, Q, K, A; "
            "jokers are SB (small) and HR (big)"
        )
    return _INTERNED[suit + rank]


def parse_cards(cards: str | Iterable[Card | str], *, two_decks: bool = True) -> list[Card]:
    """Parse card text (``"H2 S3 S4"``) or a sequence of cards/tokens into canonical ``Card``s.

    With ``two_decks`` (the default) a card given a third time raises ``CardError``: two decks
    hold only two of each.
    """
    if isinstance(cards, str):
        tokens: Iterable[Card | str] = [t for t in _SPLIT.split(cards.strip()) if t]
    else:
        tokens = cards
    out: list[Card] = []
    for t in tokens:
        out.append(t if isinstance(t, Card) else parse_card(t))
    if two_decks:
        check_two_decks(out)
    return out


def check_two_decks(cards: Iterable[Card], what: str = "these cards") -> None:
    """Raise ``CardError`` when a card appears more than twice (two decks hold two of each)."""
    counts = Counter(cards)
    extra = [c for c, n in counts.items() if n > 2]
    if extra:
        c = extra[0]
        raise CardError(
            f"card {c} appears {counts[c]} times in {what}; two decks hold only two of each card"
        )


def parse_level(level: str | int) -> str:
    """Canonical level rank (``"2"``..``"A"``); accepts ``10`` for ``T`` and lower case."""
    text = str(level).strip().upper()
    if text == "10":
        text = "T"
    if len(text) != 1 or text not in LEVELS:
        raise CardError(f"level {level!r} is not a rank; levels are 2-9, T (or 10), J, Q, K, A")
    return text


def format_cards(cards: Iterable[Card]) -> str:
    return " ".join(str(c) for c in cards)


def natural_rank(card: Card) -> int:
    """2..14 for 2..A (A high), 16 small joker, 17 big joker."""
    if card.rank == "B":
        return SMALL_JOKER_VALUE
    if card.rank == "R":
        return BIG_JOKER_VALUE
    return _NATURAL[card.rank]


def order_value(card: Card, level: str | None) -> int:
    """Single-card order at ``level``: 2..14, the level rank 15, small joker 16, big joker 17.
    ``level`` None (a deal without a level, a joker cut): the natural order."""
    if card.rank == level:
        return LEVEL_VALUE
    return natural_rank(card)


def is_wild(card: Card, level: str | None) -> bool:
    """The two ♥ level cards are wild (逢人配); ``level`` None (a joker cut): no card is."""
    return card.suit == "H" and card.rank == level


def sort_cards(cards: Sequence[Card], level: str | None = None) -> list[Card]:
    """Cards in ascending order (by level order when ``level`` is given), suits S H C D."""
    if level is None:
        return sorted(cards, key=lambda c: (natural_rank(c), SUITS.index(c.suit)))
    return sorted(cards, key=lambda c: (order_value(c, level), SUITS.index(c.suit)))
