"""Perft: fixed counts of legal leads and answers, checked against a brute-force reference.

The reference here is deliberately slow and obviously correct: it reads a card set by trying
every substitution of each wild by each of the 52 non-joker cards and classifying the resulting
natural cards by the definitions in RULES.md, and it finds legal plays by enumerating every
sub-multiset of a (small) hand. The fast generator must agree with it on small hands; the counts
for the 27-card hands are then frozen so that any change in move generation shows up.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterable

import pytest

from engine import Card, ComboRules, classify, legal_moves, parse_cards
from engine.cards import RANKS, SUITS

NAT = {r: i + 2 for i, r in enumerate(RANKS)}  # 2..14
CHAR = {v: k for k, v in NAT.items()}
Reading = tuple[str, str]  # (kind, key)
Play = tuple[str, str, int, tuple[str, ...]]  # (kind, key, size, sorted card texts)


def _seq_key(low: int) -> str:
    return "A" if low == 1 else CHAR[low]


def _run_lows(ranks: set[int], length: int) -> list[int]:
    """Lowest positions (1 = A low) of runs of `length` consecutive ranks equal to `ranks`."""
    out = []
    for low in range(1, 15 - length + 1):
        run = {14 if p == 1 else p for p in range(low, low + length)}
        if run == ranks:
            out.append(low)
    return out


def ref_natural(cards: list[tuple[int, str]], fh_joker_pair: bool = True) -> set[Reading]:
    """Readings of natural cards (rank 2..14, 16 small joker, 17 big joker; suit)."""
    n = len(cards)
    ranks = [r for r, _ in cards]
    cnt = Counter(ranks)
    jokers = [r for r in ranks if r >= 16]
    out: set[Reading] = set()
    jk = {16: "SB", 17: "HR"}
    if n == 1:
        r = ranks[0]
        out.add(("single", jk.get(r) or CHAR[r]))
    if n in (2, 3) and len(cnt) == 1:
        r = ranks[0]
        if r < 16:
            out.add((["pair", "triple"][n - 2], CHAR[r]))
        elif n == 2:
            out.add(("pair", jk[r]))
    if 4 <= n <= 10 and len(cnt) == 1 and ranks[0] < 16:
        out.add(("bomb", CHAR[ranks[0]]))
    if n == 4 and cnt == Counter({16: 2, 17: 2}):
        out.add(("joker_bomb", "HR"))
    if n == 5 and sorted(cnt.values()) == [2, 3]:
        t = next(r for r, c in cnt.items() if c == 3)
        p = next(r for r, c in cnt.items() if c == 2)
        if t < 16 and (p < 16 or fh_joker_pair):
            out.add(("full_house", CHAR[t]))
    if not jokers:
        if n == 5 and len(cnt) == 5:
            for low in _run_lows(set(ranks), 5):
                out.add(("straight", _seq_key(low)))
                if len({s for _, s in cards}) == 1:
                    out.add(("straight_flush", _seq_key(low)))
        if n == 6 and set(cnt.values()) == {2} and len(cnt) == 3:
            for low in _run_lows(set(ranks), 3):
                out.add(("consecutive_pairs", _seq_key(low)))
        if n == 6 and set(cnt.values()) == {3} and len(cnt) == 2:
            for low in _run_lows(set(ranks), 2):
                out.add(("consecutive_triples", _seq_key(low)))
    return out


NON_JOKERS = [(NAT[r], s) for r in RANKS for s in SUITS]


def _nat(card: Card) -> tuple[int, str]:
    if card.rank == "B":
        return (16, "S")
    if card.rank == "R":
        return (17, "H")
    return (NAT[card.rank], card.suit)


def ref_classify(
    cards: Iterable[Card],
    level: str | None,
    fh_joker_pair: bool = True,
    max_cards: int | None = None,
) -> set[Reading]:
    cards = list(cards)
    if max_cards is not None and len(cards) > max_cards:
        return set()
    wild = [c for c in cards if c.suit == "H" and c.rank == level]
    rest = [_nat(c) for c in cards if not (c.suit == "H" and c.rank == level)]
    out: set[Reading] = set()
    for sub in itertools.combinations_with_replacement(NON_JOKERS, len(wild)):
        out |= _natural_cached(tuple(sorted(rest + list(sub))), fh_joker_pair)
    return out


_NATURAL_CACHE: dict[tuple[tuple[tuple[int, str], ...], bool], set[Reading]] = {}


def _natural_cached(cards: tuple[tuple[int, str], ...], fh_joker_pair: bool) -> set[Reading]:
    got = _NATURAL_CACHE.get((cards, fh_joker_pair))
    if got is None:
        got = _NATURAL_CACHE[(cards, fh_joker_pair)] = ref_natural(list(cards), fh_joker_pair)
    return got


def ref_power(kind: str, size: int) -> int:
    if kind == "joker_bomb":
        return 100
    if kind == "straight_flush":
        return 50
    if kind == "bomb":
        return {4: 10, 5: 20}.get(size, 50 + size)
    return 0


def ref_value(kind: str, key: str, level: str | None) -> int:
    if kind in ("straight", "straight_flush", "consecutive_pairs", "consecutive_triples"):
        return 1 if key == "A" else NAT[key]
    order = [r for r in RANKS if r != level] + [level, "SB", "HR"]
    return order.index(key)


def ref_beats(a: tuple[str, str, int], b: tuple[str, str, int], level: str | None) -> bool:
    pa, pb = ref_power(a[0], a[2]), ref_power(b[0], b[2])
    if pa or pb:
        if pa != pb:
            return pa > pb
        return ref_value(a[0], a[1], level) > ref_value(b[0], b[1], level)
    return a[0] == b[0] and a[2] == b[2] and ref_value(*a[:2], level) > ref_value(*b[:2], level)


def _text(cards: Iterable[Card]) -> tuple[str, ...]:
    # canonical order: natural rank (A high, jokers last), then suit S H C D
    return tuple(str(c) for c in sorted(cards, key=lambda c: (_nat(c)[0], SUITS.index(c.suit))))


def ref_moves(
    hand: list[Card],
    trick: tuple[str, str, int] | None,
    level: str | None,
    fh_joker_pair: bool = True,
    max_cards: int | None = None,
) -> set[Play]:
    """Every (kind, key, size, cards) over every sub-multiset of the hand."""
    cnt = Counter(hand)
    distinct = sorted(cnt, key=str)
    out: set[Play] = set()
    for pick in itertools.product(*[range(cnt[c] + 1) for c in distinct]):
        sub = [c for c, m in zip(distinct, pick, strict=True) for _ in range(m)]
        if not sub:
            continue
        for kind, key in ref_classify(sub, level, fh_joker_pair, max_cards):
            if trick is None or ref_beats((kind, key, len(sub)), trick, level):
                out.add((kind, key, len(sub), _text(sub)))
    return out


def fast_moves(hand: list[Card], trick: object, level: str | None, **kw: object) -> list[Play]:
    return [
        (m.kind, m.key, m.size, tuple(str(c) for c in m.cards))
        for m in legal_moves(hand, trick, level, **kw)  # type: ignore[arg-type]
    ]


# ---------------------------------------------------------------------------------------------
# Small hands: the fast generator must equal the brute-force reference, leads and answers.

#: (hand, level, number of legal leads) with 0, 1 and 2 wilds.
SMALL_HANDS: list[tuple[str, str, int]] = [
    ("S3 S3 D3 C4 D4 S5 D5 S6 S7", "2", 25),
    ("SA DA S2 D2 S3 D3 C3 HR HR", "5", 21),
    ("ST SJ SQ SK SA DA CK SB SB HR HR", "9", 19),
    ("S4 S4 D4 C4 H4 S7 D7", "7", 33),
    ("H2 S4 S5 S6 S7 D8", "2", 33),
    ("HK SQ SQ DQ CJ DJ SA", "K", 40),
    ("H3 SA S2 S4 S5 D2 DA", "3", 36),
    ("H8 S9 D9 C9 H9 SB SB", "8", 55),
    ("H2 H2 S3 S3 D4 S5", "2", 46),
    ("HA HA SK SK DQ DQ SJ", "A", 59),
    ("HT HT S6 S7 S8 S9 C9", "T", 84),
    ("H4 H4 S4 D4 C4 S4 D4 C4", "4", 111),
]

#: Tricks to answer (skipped for a hand when hand and trick would hold a card three times).
TRICKS = [
    "C3",
    "C2 C2",
    "CT CT DT",
    "C6 C6 D6 C5 C5",
    "CA C2 C3 C4 C5",
    "C5 C6 C7 C8 C9",
    "CA CA C2 C2 C3 C3",
    "CK CK DK CA CA DA",
    "C3 C3 D3 D3",
    "CQ CQ DQ DQ SQ",
    "C2 C3 C4 C5 C6",
    "C8 C8 D8 D8 S8 S8",
    "SB SB HR HR",
]


def _answerable(hand: str, trick: str) -> bool:
    cnt = Counter(parse_cards(hand) + parse_cards(trick))
    return max(cnt.values()) <= 2


@pytest.mark.parametrize(("hand", "level", "leads"), SMALL_HANDS)
def test_small_hand_leads_match_reference(hand: str, level: str, leads: int) -> None:
    cards = parse_cards(hand)
    fast = fast_moves(cards, None, level)
    ref = ref_moves(cards, None, level)
    assert len(fast) == len(set(fast)), "duplicate plays"
    assert set(fast) == ref
    assert len(fast) == leads


@pytest.mark.parametrize(("hand", "level", "leads"), SMALL_HANDS)
def test_small_hand_answers_match_reference(hand: str, level: str, leads: int) -> None:
    cards = parse_cards(hand)
    checked = 0
    for trick_text in TRICKS:
        if not _answerable(hand, trick_text):
            continue
        trick = classify(trick_text, level)[0]
        fast = fast_moves(cards, trick, level)
        ref = ref_moves(cards, (trick.kind, trick.key, trick.size), level)
        assert len(fast) == len(set(fast))
        assert set(fast) == ref, trick_text
        checked += 1
    assert checked >= 8


@pytest.mark.parametrize(
    ("hand", "level", "fh_joker_pair", "max_cards"),
    [
        ("S3 S3 D3 SB SB HR HR C4 C4", "2", False, None),
        ("H2 H2 S3 D3 C3 S3 D3 C3 S4", "2", True, 6),
        ("H2 S3 D3 C3 S3 D3 C3 SB SB", "2", False, 5),
    ],
)
def test_options_match_reference(
    hand: str, level: str, fh_joker_pair: bool, max_cards: int | None
) -> None:
    cards = parse_cards(hand)
    rules = ComboRules(full_house_joker_pair=fh_joker_pair, max_cards_per_play=max_cards)
    fast = fast_moves(cards, None, level, rules=rules)
    assert len(fast) == len(set(fast))
    assert set(fast) == ref_moves(cards, None, level, fh_joker_pair, max_cards)


#: (hand, number of legal leads) without a level (a joker cut, 000 篇6 "抽到大小王不带"): the
#: reference with level None has no wild and no level rank, so ♥A is an ordinary A.
NO_LEVEL_HANDS: list[tuple[str, int]] = [
    ("HA HA S2 S3 S4 S5 D5 SK SK", 12),
    ("HA SA DA SK SK DK SQ SQ SB", 29),
    ("HA HK HQ HJ HT S9 D9 C9", 17),
    ("HA S5 S5 C5 D5 HR HR", 17),
]


@pytest.mark.parametrize(("hand", "leads"), NO_LEVEL_HANDS)
def test_no_level_small_hands_match_reference(hand: str, leads: int) -> None:
    cards = parse_cards(hand)
    fast = fast_moves(cards, None, None)
    assert len(fast) == len(set(fast)) == leads
    assert set(fast) == ref_moves(cards, None, None)
    assert len(fast_moves(cards, None, "A")) > leads  # at level A the two ♥A are wild
    checked = 0
    for trick_text in TRICKS:
        if not _answerable(hand, trick_text):
            continue
        trick = classify(trick_text, None)[0]
        fast = fast_moves(cards, trick, None)
        ref = ref_moves(cards, (trick.kind, trick.key, trick.size), None)
        assert len(fast) == len(set(fast))
        assert set(fast) == ref, trick_text
        checked += 1
    assert checked >= 10


def test_dense_random_small_hands_match_reference() -> None:
    """Seeded hands drawn from a few adjacent ranks, jokers and wilds (many combos per card)."""
    rng = random.Random(7)
    from engine.cards import DECK

    for _ in range(40):
        level = rng.choice(RANKS)
        lo = rng.randint(0, 11)
        ranks = [RANKS[(lo + k) % 13] for k in range(rng.choice([1, 2, 3, 5]))]
        pool = [c for c in DECK if c.rank in ranks or c.is_joker] + [Card("H", level)] * 2
        hand = rng.sample(pool, rng.randint(1, 8))
        if max(Counter(hand).values()) > 2:
            continue
        fast = fast_moves(hand, None, level)
        assert len(fast) == len(set(fast))
        assert set(fast) == ref_moves(hand, None, level), (level, [str(c) for c in hand])


# ---------------------------------------------------------------------------------------------
# 27-card hands: frozen counts (the generator agrees with the reference on the small hands)

#: (hand, level, trick, leads, answers): four hands each with 0, 1 and 2 wilds.
PERFT: list[tuple[str, str, str, int, int]] = [
    # 1 wild(s), trick: pair
    (
        "H2 D3 S4 H4 C4 H5 D5 S6 H6 C6 S8 S9 D9 ST HT SJ HJ HJ CJ DJ HQ DQ SK HK DK HA HR",
        "2",
        "HT CT",
        1740,
        53,
    ),
    # 0 wild(s), trick: full_house
    (
        "S2 C2 C2 C3 D3 S4 S4 H4 C4 S5 S6 H6 C6 C7 D7 S8 S8 SJ HJ HJ CJ HQ CQ DK HA DA HR",
        "7",
        "S9 C9 D9 HT CT",
        293,
        44,
    ),
    # 0 wild(s), trick: straight
    (
        "H2 C2 S3 C3 D3 C4 H5 C5 S6 H6 H7 H7 C7 H8 D8 D9 HT SJ SQ SQ HQ SK DK SA CA SB HR",
        "J",
        "S9 DT HJ DJ CQ",  # HJ is wild: read as the straight 9-K
        215,
        9,
    ),
    # 0 wild(s), trick: straight
    (
        "D2 S3 S3 S4 H4 D4 S5 S7 C7 D8 S9 S9 C9 D9 ST CT HJ CJ SQ CQ CQ DQ CK SA SA DA SB",
        "9",
        "C2 H3 C4 D5 HA",
        292,
        123,
    ),
    # 0 wild(s), trick: full_house
    (
        "C2 C2 S3 H3 D3 S4 C4 S5 D5 S6 S6 S7 C7 S8 H8 C8 D8 DT SJ DJ SQ CQ DQ CK SA CA DA",
        "5",
        "C6 D6 H9 H9 C9",
        315,
        39,
    ),
    # 1 wild(s), trick: straight
    (
        "S2 H2 D2 H3 D4 H5 C5 D5 D6 H7 S8 H8 C8 H9 D9 SJ HJ CJ SQ DQ SK CK DK DK SA CA HR",
        "8",
        "S3 C4 D5 S6 S7",
        979,
        203,
    ),
    # 1 wild(s), trick: straight
    (
        "C2 D2 C3 S4 C4 D4 H5 D5 S6 H6 C6 S7 D7 H8 D8 H9 C9 ST CT CJ CJ SQ DQ DK SA HA HR",
        "5",
        "H5 D8 S9 DJ HQ",
        1179,
        76,
    ),
    # 1 wild(s), trick: straight
    (
        "S2 C2 C3 S4 H4 C4 D4 H5 S6 H6 H6 D6 S8 C8 C8 D8 H9 H9 C9 DT HJ SQ HQ SK SA DA SB",
        "5",
        "S6 D7 D8 C9 ST",
        960,
        115,
    ),
    # 2 wild(s), trick: triple
    (
        "D2 D4 S5 H5 C5 H6 S7 C7 S8 H8 D8 S9 S9 H9 C9 HT DT HJ SQ DQ DQ SK DK SA HA HA CA",
        "A",
        "S2 H2 D2",
        3187,
        112,
    ),
    # 2 wild(s), trick: straight
    (
        "S2 H2 C2 S3 H3 H3 C4 D4 S5 D5 H6 C6 D7 D7 S8 C8 D8 D9 ST HT DQ HK HK SA HA CA DA",
        "K",
        "D2 C3 S4 S5 SA",
        3327,
        874,
    ),
    # 2 wild(s), trick: consecutive_pairs
    (
        "S3 C3 C3 D3 H4 D4 S5 H5 C5 H6 H6 D6 D6 S7 D7 S8 H8 D8 H9 D9 ST DT SJ CQ HK CK SB",
        "6",
        "S9 D9 HT HT SJ DJ",
        2882,
        81,
    ),
    # 2 wild(s), trick: consecutive_pairs
    (
        "S2 C3 C3 D3 H4 C4 H5 C5 D6 S7 H7 H7 C7 S8 C8 C9 C9 ST DJ HQ CQ SK CK DK SA CA DA",
        "7",
        "HQ DQ HK CK SA HA",
        2182,
        50,
    ),
]


@pytest.mark.parametrize(("hand", "level", "trick", "leads", "answers"), PERFT)
def test_perft(hand: str, level: str, trick: str, leads: int, answers: int) -> None:
    lead = legal_moves(hand, None, level)
    assert len(lead) == leads
    answer = legal_moves(hand, trick, level)
    assert len(answer) == answers
    keys = {(m.kind, m.key, m.cards) for m in lead}
    assert len(keys) == len(lead)
    # every answer is also a lead, and the lead moves that beat the trick are the answers
    t = classify(trick, level)[0]
    assert [m for m in lead if m.beats(t)] == [m for m in lead if m in set(answer)]
    assert set(answer) == {m for m in lead if m.beats(t)}


#: (hand, trick, leads, answers) without a level: 27-card hands of PERFT (the first holds both ♥A:
#: 3187 leads and 112 answers at level A), frozen.
NO_LEVEL_PERFT: list[tuple[str, str, int, int]] = [
    (PERFT[8][0], PERFT[8][2], 456, 11),
    (PERFT[3][0], PERFT[3][2], 292, 123),
]


@pytest.mark.parametrize(("hand", "trick", "leads", "answers"), NO_LEVEL_PERFT)
def test_perft_no_level(hand: str, trick: str, leads: int, answers: int) -> None:
    lead = legal_moves(hand, None, None)
    answer = legal_moves(hand, trick, None)
    assert (len(lead), len(answer)) == (leads, answers)
    assert all(m.level is None and not m.wilds() for m in lead)
    t = classify(trick, None)[0]
    assert set(answer) == {m for m in lead if m.beats(t)}


def test_perft_wild_counts() -> None:
    wilds = Counter(
        sum(1 for c in parse_cards(h) if c.suit == "H" and c.rank == lv) for h, lv, *_ in PERFT
    )
    assert wilds == {0: 4, 1: 4, 2: 4}
