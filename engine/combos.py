"""Combos (牌型): what a set of cards can be played as, and what beats what (RULES.md, "Combos").

``classify(cards, level)`` lists every reading of a card set, strongest first (``[]``: not a
combo); ``beats(play, trick, level)`` says whether some reading of ``play`` beats ``trick``.

Decisions (seed files quoted in RULES.md):

* Wilds (逢人配, the two ♥ level cards) may stand for any non-joker card, in any combination, or
  be played as themselves (000, 001, 002 all describe 红桃级牌 as 百搭 "except the jokers"). A
  reading is therefore a substitution of the wilds by non-joker cards under which the natural
  cards form a combo. A lone wild is thus a single of any rank; two wilds are a pair of any rank.
* A combo's identity (CONTRACT.md) is kind, key, size and the multiset of physical cards; what
  the wilds stand for is derived (``Combo.wilds()``), and when it is ambiguous (the pair of a full
  house made only of wilds, or the suits of a plain straight) a fixed representative is named.
* Comparison values: single/pair/triple/full house/bomb use the single-card order of the key rank
  (2..14, the level rank 15, small joker 16, big joker 17); sequences use the natural position of
  their lowest rank (A-low = 1 ... T = 10 for straights). Bomb power: 4 cards 1, 5 cards 2,
  straight flush 3, 6..10 cards 4..8, joker bomb 9; any bomb beats any non-bomb.
* Several readings of the same cards are ordered by bomb power, then value, then kind (the order
  of ``KINDS``, later first); different non-bomb kinds are not comparable in play, so that last
  tie-break only makes the order deterministic.
* A deal without a level (``level=None``): in the random-level profile a joker cut gives no
  level card and no wilds (000 篇6 "每局比赛采取切牌随机抽取配子的方式，抽到大小王不带": the cut
  draws the 配子 (wild), a joker drawn brings none). The texts name no level rank for that deal
  either, so every function taking a ``level`` also takes ``None``: no rank is promoted (single
  order 2 < ... < K < A < small joker < big joker, A still low or high in sequences) and no card
  is wild (♥A is an ordinary A). Such combos carry ``level`` None (JSON null). Internally the
  level number is ``engine._tables.NO_LEVEL`` (0), which matches no rank and no wild index, so
  the readers below need no extra branch.
* Option ``full_house_joker_pair`` (default on; the texts are silent): a pair of small or of big
  jokers may be the pair of a full house. Option ``max_cards_per_play`` (000 篇1, the Hefei
  qualifier: "每次出牌不得超过6张"): plays with more cards are not combos.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from engine._tables import (
    CARDS,
    HR_IX,
    ID2IX,
    IX_NAT,
    IX_SUIT,
    NO_LEVEL,
    RANK_CHAR,
    RANK_NUM,
    SB_IX,
    card_index,
    wild_index,
)
from engine.cards import RANKS, SUITS, Card, CardError, parse_cards, parse_level

__all__ = [
    "KINDS",
    "BOMB_KINDS",
    "Combo",
    "ComboRules",
    "DEFAULT_RULES",
    "classify",
    "beats",
    "read_trick",
]

KINDS: Final = (
    "single",
    "pair",
    "triple",
    "full_house",
    "straight",
    "consecutive_pairs",
    "consecutive_triples",
    "bomb",
    "straight_flush",
    "joker_bomb",
)
BOMB_KINDS: Final = frozenset({"bomb", "straight_flush", "joker_bomb"})
_KIND_ORDER: Final = {k: i for i, k in enumerate(KINDS)}
#: Bomb power of a straight flush and of the joker bomb (bombs of n cards: see bomb_power).
SF_POWER: Final = 3
JOKER_BOMB_POWER: Final = 9


def bomb_power(n: int) -> int:
    """Power of an n-card bomb: 4 -> 1, 5 -> 2 (below the straight flush, 3), 6..10 -> 4..8."""
    return 1 if n == 4 else 2 if n == 5 else n - 2


@dataclass(frozen=True)
class ComboRules:
    """The combo options of a rule profile (RULES.md); ``profile.combo_rules`` gives one."""

    #: A pair of small or of big jokers may be the pair of a full house (texts silent; default on).
    full_house_joker_pair: bool = True
    #: At most this many cards in one play (000 篇1 Hefei qualifier: 6); None = no limit.
    max_cards_per_play: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.full_house_joker_pair, bool):
            raise ValueError(
                f"full_house_joker_pair must be true or false, not {self.full_house_joker_pair!r}"
            )
        m = self.max_cards_per_play
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 1):
            raise ValueError(f"max_cards_per_play must be a whole number >= 1 or absent, not {m!r}")


DEFAULT_RULES: Final = ComboRules()


class Combo(NamedTuple):
    """One reading of a set of cards as a combo (immutable).

    ``kind``, ``key``, ``size`` and ``cards`` follow CONTRACT.md (``cards`` in canonical order:
    natural rank, then suit S H C D, jokers last). ``value`` orders combos of one kind, ``power``
    is 0 for non-bombs and the bomb power otherwise, ``level`` is the level it was read at
    (None: a deal without a level, no wilds).
    Two combos are equal when they are the same play (kind, key, size, cards) at the same level.
    """

    kind: str
    key: str
    size: int
    cards: tuple[Card, ...]
    value: int
    power: int
    level: str | None

    @property
    def is_bomb(self) -> bool:
        return self.power > 0

    def beats(self, other: Combo) -> bool:
        """Whether this combo may be played on ``other`` (same level assumed)."""
        if self.power:
            return self.power > other.power or (
                self.power == other.power and self.value > other.value
            )
        return (
            not other.power
            and self.kind == other.kind
            and self.size == other.size
            and self.value > other.value
        )

    def wilds(self) -> list[tuple[Card, str]]:
        """What each wild stands for: (wild card, rank char) — a card text for straight flushes."""
        return _wild_reading(self)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "key": self.key,
            "size": self.size,
            "cards": [str(c) for c in self.cards],
            "level": self.level,
            "bomb": self.power > 0,
            "wilds": [{"card": str(c), "as": a} for c, a in _wild_reading(self)],
        }

    def __str__(self) -> str:
        return f"{self.kind} {self.key} [{' '.join(str(c) for c in self.cards)}]"

    def __repr__(self) -> str:
        return f"Combo({self.kind!r}, key={self.key!r}, cards={' '.join(map(str, self.cards))!r})"

    # Tuple ordering would compare kind names; combos only compare through beats().
    def __lt__(self, other: object) -> bool:
        raise TypeError("combos are not ordered; use beats()")

    def __le__(self, other: object) -> bool:
        raise TypeError("combos are not ordered; use beats()")

    def __gt__(self, other: object) -> bool:
        raise TypeError("combos are not ordered; use beats()")

    def __ge__(self, other: object) -> bool:
        raise TypeError("combos are not ordered; use beats()")


_new = tuple.__new__
_ID2IX: Final = ID2IX


def make(
    kind: str,
    key: str,
    size: int,
    cards: tuple[Card, ...],
    value: int,
    power: int,
    level: str | None,
) -> Combo:
    """Fast constructor (no checks) for the generators."""
    return _new(Combo, (kind, key, size, cards, value, power, level))


def strength(c: Combo) -> tuple[int, int, int]:
    """Sort key, strongest last: bomb power, value, kind order."""
    return (c.power, c.value, _KIND_ORDER[c.kind])


# ----------------------------------------------------------------------------------------------
# Input handling


def indices(cards: str | Iterable[Card | str], what: str = "these cards") -> list[int]:
    """Card indices (sorted) of card text or a sequence of cards; CardError on a third copy."""
    if isinstance(cards, str):
        parsed: Iterable[Card | str] = parse_cards(cards, two_decks=False)
    else:
        parsed = cards
    try:
        out = [_ID2IX[id(c)] for c in parsed]
    except KeyError:
        out = [card_index(c) for c in parsed]
    out.sort()
    if len(out) < 3 or len(set(out)) == len(out):
        return out
    for i in range(2, len(out)):
        if out[i] == out[i - 2]:
            ix = out[i]
            raise CardError(
                f"card {CARDS[ix]} appears {out.count(ix)} times in {what}; "
                "two decks hold only two of each card"
            )
    return out


_LEVELS: Final = {r: (r, RANK_NUM[r]) for r in RANK_NUM}


def level_number(level: str | int | None) -> tuple[str | None, int]:
    """(canonical level, level number 2..14); ``None`` -> (None, NO_LEVEL): no level, no wilds."""
    got = _LEVELS.get(level) if isinstance(level, str) else None
    if got is not None:
        return got
    if level is None:
        return None, NO_LEVEL
    lv = parse_level(level)
    return lv, RANK_NUM[lv]


def _at(lv: str | None) -> str:
    """'at level X' / 'without a level' for messages."""
    return f"at level {lv}" if lv is not None else "without a level (no wilds)"


# ----------------------------------------------------------------------------------------------
# classify


def classify(
    cards: str | Sequence[Card | str],
    level: str | int | None,
    *,
    rules: ComboRules | None = None,
) -> list[Combo]:
    """Every reading of ``cards`` as a combo at ``level``, strongest first; [] = not a combo.
    ``level`` None: a deal without a level (joker cut): natural order, no wilds."""
    got = _LEVELS.get(level) if isinstance(level, str) else None
    lv, lvn = got if got is not None else level_number(level)
    if isinstance(cards, (tuple, list)):
        try:
            ixs = sorted(map(_ID2IX.__getitem__, map(id, cards)))
        except KeyError:
            ixs = indices(cards)
        else:
            if len(set(ixs)) != len(ixs):
                ixs = indices(ixs_cards(ixs))  # rare: a card twice; check for a third copy
    else:
        ixs = indices(cards)
    return read_indices(ixs, lv, lvn, rules or DEFAULT_RULES)


def ixs_cards(ixs: list[int]) -> list[Card]:
    return [CARDS[i] for i in ixs]


_CARD_AT = CARDS.__getitem__
_NAT_AT = IX_NAT.__getitem__
_SUIT_AT = IX_SUIT.__getitem__


def read_indices(ixs: list[int], lv: str | None, lvn: int, rules: ComboRules) -> list[Combo]:
    """classify() on sorted card indices (validated: at most two of each). ``lvn`` NO_LEVEL
    (``lv`` None): ``wix`` below is no card and no rank equals ``lvn``: natural readings."""
    n = len(ixs)
    if n == 0:
        return []
    maxn = rules.max_cards_per_play
    if maxn is not None and n > maxn:
        return []
    cards = tuple(map(_CARD_AT, ixs))
    wix = (lvn - 2) * 4 + 1
    if n == 1:
        ix = ixs[0]
        if ix == wix:
            return _only_wilds(cards, lv, lvn)
        if ix >= SB_IX:
            return [
                _new(Combo, ("single", "SB" if ix == SB_IX else "HR", 1, cards, IX_NAT[ix], 0, lv))
            ]
        r = IX_NAT[ix]
        return [_new(Combo, ("single", RANK_CHAR[r], 1, cards, 15 if r == lvn else r, 0, lv))]
    w = ixs.count(wix)
    nat = [i for i in ixs if i != wix] if w else ixs
    if not nat:
        return _only_wilds(cards, lv, lvn)
    if nat[-1] >= SB_IX:
        return _with_jokers(nat, n, w, cards, lv, lvn, rules)
    ranks = list(map(_NAT_AT, nat))
    lo = ranks[0]
    hi = ranks[-1]
    if lo == hi:
        v = 15 if lo == lvn else lo
        if n >= 4:
            out = [_new(Combo, ("bomb", RANK_CHAR[lo], n, cards, v, bomb_power(n), lv))]
            if n == 5 and len(ranks) == 3:
                # the triple and a pair made of the two wilds
                out.append(_new(Combo, ("full_house", RANK_CHAR[lo], 5, cards, v, 0, lv)))
            return out
        return [_new(Combo, (KINDS[n - 1], RANK_CHAR[lo], n, cards, v, 0, lv))]
    if n == 5:
        out = []
        m = len(ranks)
        if len(set(ranks)) == m:
            # distinct ranks: straight (flush) readings
            flush = len(set(map(_SUIT_AT, nat))) == 1
            for s in _windows(ranks, 5):
                out.append(_new(Combo, ("straight", RANK_CHAR[s], 5, cards, s, 0, lv)))
                if flush:
                    out.append(
                        _new(Combo, ("straight_flush", RANK_CHAR[s], 5, cards, s, SF_POWER, lv))
                    )
        else:
            # full house: two ranks, triple a + pair b or triple b + pair a; wilds fill the rest
            ca = ranks.count(lo)
            cb = m - ca
            if ca + cb == m and ranks.count(hi) == cb:
                if cb <= 2 and ca <= 3:
                    out.append(
                        _new(
                            Combo,
                            ("full_house", RANK_CHAR[lo], 5, cards, 15 if lo == lvn else lo, 0, lv),
                        )
                    )
                if ca <= 2 and cb <= 3:
                    out.append(
                        _new(
                            Combo,
                            ("full_house", RANK_CHAR[hi], 5, cards, 15 if hi == lvn else hi, 0, lv),
                        )
                    )
        if len(out) > 1:
            out.sort(key=strength, reverse=True)
        return out
    if n == 6:
        out = []
        m = len(ranks)
        if all(ranks[i] != ranks[i + 2] for i in range(m - 2)):
            d = sorted(set(ranks))
            for s in _windows(d, 3):
                out.append(_new(Combo, ("consecutive_pairs", RANK_CHAR[s], 6, cards, s, 0, lv)))
        ca = ranks.count(lo)
        if ca <= 3 and ranks.count(hi) == m - ca and m - ca <= 3:
            for s in _windows([lo, hi], 2):
                out.append(_new(Combo, ("consecutive_triples", RANK_CHAR[s], 6, cards, s, 0, lv)))
        if len(out) > 1:
            out.sort(key=strength, reverse=True)
        return out
    return []


def _only_wilds(cards: tuple[Card, ...], lv: str | None, lvn: int) -> list[Combo]:
    """One or two wilds alone: a single or a pair of any rank, strongest (the level rank) first."""
    n = len(cards)
    kind = "single" if n == 1 else "pair"
    out = [_new(Combo, (kind, RANK_CHAR[lvn], n, cards, 15, 0, lv))]
    for r in range(14, 1, -1):
        if r != lvn:
            out.append(_new(Combo, (kind, RANK_CHAR[r], n, cards, r, 0, lv)))
    return out


def _with_jokers(
    nat: list[int],
    n: int,
    w: int,
    cards: tuple[Card, ...],
    lv: str | None,
    lvn: int,
    rules: ComboRules,
) -> list[Combo]:
    """Readings of cards that include a joker (``nat``: the non-wild indices, jokers last)."""
    sb = nat.count(SB_IX)
    hr = nat.count(HR_IX)
    if n == 4 and sb == 2 and hr == 2:
        return [_new(Combo, ("joker_bomb", "HR", 4, cards, 17, JOKER_BOMB_POWER, lv))]
    if n == 2 and (sb == 2 or hr == 2):
        return [_new(Combo, ("pair", "SB" if sb else "HR", 2, cards, 16 if sb else 17, 0, lv))]
    if n == 5 and sb + hr == 2 and (sb == 2 or hr == 2) and rules.full_house_joker_pair:
        rest = nat[:-2]
        if rest:
            t = IX_NAT[rest[0]]
            if IX_NAT[rest[-1]] == t:
                v = 15 if t == lvn else t
                return [_new(Combo, ("full_house", RANK_CHAR[t], 5, cards, v, 0, lv))]
    return []


def _windows(ranks: list[int], length: int) -> list[int]:
    """Start positions (1 = A low .. 15-length) of runs of ``length`` ranks holding ``ranks``.

    ``ranks`` are natural ranks 2..14 (A high), ascending and distinct; A may also sit at 1.
    """
    lo = ranks[0]
    hi = ranks[-1]
    rest_hi = ranks[-2] if len(ranks) > 1 else 1
    key = ((length * 16 + lo) * 16 + hi) * 16 + rest_hi
    got = _WINDOWS.get(key)
    if got is None:
        got = [s for s in range(max(1, hi - length + 1), min(lo, 15 - length) + 1)]
        if hi == 14 and rest_hi <= length:
            got.append(1)  # A low: the other ranks fit in 2..length
        _WINDOWS[key] = got
    return got


_WINDOWS: dict[int, list[int]] = {}


# ----------------------------------------------------------------------------------------------
# beats and tricks


def read_trick(
    trick: Combo | str | Sequence[Card | str],
    level: str | int | None,
    *,
    rules: ComboRules | None = None,
) -> Combo:
    """The trick as a Combo: a Combo is taken as it is (re-read if it was read at another level);
    cards are read as their strongest reading. CardError when the cards are not a combo."""
    lv, lvn = level_number(level)
    if isinstance(trick, Combo):
        if trick.level == lv:
            return trick
        readings = read_indices(indices(trick.cards), lv, lvn, DEFAULT_RULES)
        for c in readings:
            if c.kind == trick.kind and c.key == trick.key:
                return c
        if readings:
            return readings[0]
        raise CardError(f"trick {trick} is not a combo {_at(lv)}")
    ixs = indices(trick, "the trick")
    readings = read_indices(ixs, lv, lvn, rules or DEFAULT_RULES)
    if not readings:
        text = " ".join(str(CARDS[i]) for i in ixs) or "(no cards)"
        raise CardError(f"trick {text} is not a combo {_at(lv)}; give a legal play or None")
    return readings[0]


def beats(
    play: Combo | str | Sequence[Card | str],
    trick: Combo | str | Sequence[Card | str] | None,
    level: str | int | None,
    *,
    rules: ComboRules | None = None,
) -> bool:
    """Whether some reading of ``play`` beats ``trick`` (None: an empty table, any combo leads).
    ``level`` None: a deal without a level (joker cut): natural order, no wilds.

    A ``play`` given as a Combo is used as that reading only.
    """
    rules = rules or DEFAULT_RULES
    lv, lvn = level_number(level)
    if isinstance(play, Combo):
        readings = [play] if play.level == lv else read_indices(indices(play.cards), lv, lvn, rules)
        maxn = rules.max_cards_per_play
        if maxn is not None and play.size > maxn:
            return False
    else:
        readings = read_indices(indices(play, "the play"), lv, lvn, rules)
    if trick is None:
        return bool(readings)
    t = read_trick(trick, lv, rules=rules)
    return any(r.beats(t) for r in readings)


# ----------------------------------------------------------------------------------------------
# What the wilds stand for (derived, for to_json)


def _wild_reading(c: Combo) -> list[tuple[Card, str]]:
    if c.level is None:
        return []  # no level, no wilds
    lvn = RANK_NUM[c.level]
    wix = wild_index(lvn)
    wild = CARDS[wix]
    nw = sum(1 for x in c.cards if x is wild or x == wild)
    if not nw:
        return []
    nats = [card_index(x) for x in c.cards if not (x is wild or x == wild)]
    rc: dict[int, int] = {}
    for ix in nats:
        rc[IX_NAT[ix]] = rc.get(IX_NAT[ix], 0) + 1
    kind = c.kind
    fills: list[str] = []
    if kind in ("single", "pair", "triple", "bomb"):
        fills = [c.key] * nw
    elif kind == "full_house":
        t = RANK_NUM[c.key]
        fills = [c.key] * (3 - rc.get(t, 0))
        others = [r for r in rc if r != t]
        if others and others[0] < 15:
            fills += [RANK_CHAR[others[0]]] * (nw - len(fills))
        elif others:
            pass  # the pair is a joker pair: every wild is in the triple
        else:  # the pair is made of the two wilds: any rank; name the level rank (or A / K)
            p = lvn if lvn != t else (14 if t != 14 else 13)
            fills += [RANK_CHAR[p]] * (nw - len(fills))
    else:
        length, need = {
            "straight": (5, 1),
            "straight_flush": (5, 1),
            "consecutive_pairs": (3, 2),
            "consecutive_triples": (2, 3),
        }[kind]
        s = 1 if c.key == "A" else RANK_NUM[c.key]
        suit = ""
        if kind == "straight_flush":
            suit = SUITS[IX_SUIT[nats[0]]]
        for pos in range(s, s + length):
            r = 14 if pos == 1 else pos
            fills += [suit + RANK_CHAR[r]] * (need - rc.get(r, 0))
    return [(wild, f) for f in fills]


# ----------------------------------------------------------------------------------------------
# declared readings


def declare(
    cards: str | Sequence[Card | str],
    level: str | int | None,
    wilds_as: str | Sequence[str],
    *,
    rules: ComboRules | None = None,
) -> Combo:
    """The reading a player declares: ``wilds_as`` names what each wild in ``cards`` stands for,
    in order (``"S8"``, or a rank ``"8"`` where the suit does not matter). Players declare when a
    set has several readings (RULES.md, seed 000: "出牌时要说明当何牌"); a referee overrides
    the same way.

    Raises ``CardError`` naming the token when a wild is declared as a joker (a wild stands for
    any card but a joker), when the count of declarations differs from the count of wilds, or
    when no reading of the cards matches the declaration (the message lists the readings).
    ``level`` None (a deal without a level): there are no wilds, so ``wilds_as`` must be empty."""
    lv, _lvn = level_number(level)
    cs = parse_cards(cards) if isinstance(cards, str) else parse_cards(list(cards))
    if isinstance(wilds_as, str):
        tokens = [t for t in wilds_as.replace(",", " ").split() if t]
    else:
        tokens = [str(t) for t in wilds_as]
    wanted: list[tuple[str, str]] = []  # (suit or "", rank char)
    for tok in tokens:
        text = str(tok).strip()
        if text.upper() in _RANK_TOKENS:
            wanted.append(("", "T" if text == "10" else text.upper()))
            continue
        card = parse_cards([text], two_decks=False)[0]
        if card.is_joker:
            what = f"a wild (♥{lv})" if lv is not None else "a wild"
            raise CardError(f"wild declared as {text!r}: {what} stands for any card except a joker")
        wanted.append((card.suit, card.rank))
    n_wild = sum(1 for c in cs if c.suit == "H" and c.rank == lv)
    if len(wanted) != n_wild:
        how = f"declare what each ♥{lv} stands for, in order" if lv is not None else "no wilds"
        raise CardError(
            f"{len(wanted)} declaration(s) for {n_wild} wild(s) in {' '.join(map(str, cs))} "
            f"{_at(lv)}: {how}"
        )
    readings = classify(cs, lv, rules=rules)
    nat_ranks = {c.rank for c in cs if not (c.suit == "H" and c.rank == lv)}
    for combo in readings:
        got = sorted(a for _c, a in combo.wilds())
        if _declared_match(got, wanted):
            return combo
        if (
            combo.kind == "full_house"
            and n_wild == 2
            and nat_ranks == {combo.key}
            and wanted[0][1] == wanted[1][1] != combo.key
        ):
            return combo  # the two wilds are the pair: a pair of any other rank
    listed = "; ".join(
        f"{c.kind} {c.key} as {' '.join(a for _w, a in c.wilds()) or '-'}" for c in readings
    )
    raise CardError(
        f"no reading of {' '.join(map(str, cs))} {_at(lv)} has the wilds as "
        f"{' '.join(str(t) for t in tokens)}; readings: {listed or 'none (not a combo)'}"
    )


_RANK_TOKENS: Final = frozenset([*RANKS, "10"])


def _declared_match(got: list[str], wanted: list[tuple[str, str]]) -> bool:
    """Is there a one-to-one match of the reading's wild values and the declarations?"""
    left = list(got)
    for suit, rank in sorted(wanted, key=lambda w: w[0] == ""):  # suited declarations first
        hit = next(
            (
                i
                for i, a in enumerate(left)
                if a[-1] == rank and (not suit or len(a) == 1 or a[0] == suit)
            ),
            None,
        )
        if hit is None:
            return False
        left.pop(hit)
    return True
