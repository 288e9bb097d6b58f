"""Property tests over random two-deck hands and levels (issue 2, "Tests")."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Card, ComboRules, beats, classify, legal_moves
from engine.cards import DECK, RANKS

LEVELS = st.sampled_from(list(RANKS))
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def hands(draw: st.DrawFn, size: int = 27) -> list[Card]:
    """A random hand dealt from the 108-card deck (so at most two of each card)."""
    seed = draw(st.integers(0, 2**32 - 1))
    deck = list(DECK)
    random.Random(seed).shuffle(deck)
    return deck[:size]


@st.composite
def deal(draw: st.DrawFn) -> tuple[list[Card], list[Card]]:
    seed = draw(st.integers(0, 2**32 - 1))
    deck = list(DECK)
    random.Random(seed).shuffle(deck)
    return deck[:27], deck[27:54]


def _key(m: object) -> tuple[object, ...]:
    return (m.kind, m.key, m.size, m.cards)  # type: ignore[attr-defined]


@SETTINGS
@given(hand=hands(), level=LEVELS)
def test_every_lead_classifies_with_that_reading_and_no_duplicates(
    hand: list[Card], level: str
) -> None:
    moves = legal_moves(hand, None, level)
    assert len({_key(m) for m in moves}) == len(moves)
    hand_count = Counter(hand)
    for m in moves:
        assert m in classify(m.cards, level)
        assert m.size == len(m.cards)
        assert not Counter(m.cards) - hand_count  # only cards from the hand
        for _, stands in m.wilds():
            assert stands not in ("SB", "HR") and not stands.endswith(("B", "R"))


@SETTINGS
@given(cards=deal(), level=LEVELS, pick=st.integers(0, 10**9))
def test_every_answer_beats_the_trick(
    cards: tuple[list[Card], list[Card]], level: str, pick: int
) -> None:
    hand, other = cards
    leads = legal_moves(other, None, level)
    trick = leads[pick % len(leads)]
    answers = legal_moves(hand, trick, level)
    assert len({_key(m) for m in answers}) == len(answers)
    for m in answers:
        assert m.beats(trick)
        assert beats(m.cards, trick, level)
    # and nothing that beats it is missing: the answers are the leads that beat it
    lead_beating = {m for m in legal_moves(hand, None, level) if m.beats(trick)}
    assert set(answers) == lead_beating


@SETTINGS
@given(hand=hands(size=10), level=LEVELS, mask=st.integers(0, 2**10 - 1))
def test_legal_lead_exactly_when_classify_nonempty(hand: list[Card], level: str, mask: int) -> None:
    sub = [c for i, c in enumerate(hand) if mask >> i & 1]
    as_leads = {m.cards for m in legal_moves(hand, None, level)}
    readings = classify(sub, level)
    canonical = readings[0].cards if readings else None
    assert bool(readings) == (canonical in as_leads)
    # every reading of the subset is listed among the leads
    leads = set(legal_moves(hand, None, level))
    assert all(r in leads for r in readings)


@SETTINGS
@given(
    hand=hands(size=14),
    level=LEVELS,
    fh=st.booleans(),
    maxn=st.sampled_from([None, 4, 5, 6]),
)
def test_options_are_respected(hand: list[Card], level: str, fh: bool, maxn: int | None) -> None:
    rules = ComboRules(full_house_joker_pair=fh, max_cards_per_play=maxn)
    moves = legal_moves(hand, None, level, rules=rules)
    for m in moves:
        assert m in classify(m.cards, level, rules=rules)
        if maxn is not None:
            assert m.size <= maxn
        if m.kind == "full_house" and not fh:
            assert not any(c.is_joker for c in m.cards)
    unrestricted = set(legal_moves(hand, None, level))
    assert set(moves) <= unrestricted


@SETTINGS
@given(hand=hands(size=6), level=LEVELS)
def test_readings_strongest_first(hand: list[Card], level: str) -> None:
    for n in range(1, 7):
        readings = classify(hand[:n], level)
        for a, b in zip(readings, readings[1:], strict=False):
            assert (a.power, a.value) >= (b.power, b.value)
