"""Per-table suit balance (vision/suits.py): a deck that makes the classifier read every club
as a spade is rebalanced from the table's own readings; a deck read well is left alone."""

from __future__ import annotations

import numpy as np
import pytest

from vision.suits import MAX_LOG, PRIOR_COUNT, SuitBalance

SUITS = "SHCD"
RANKS = "23456789TJQKA"
NAMES = [s + r for s in SUITS for r in RANKS] + ["SB", "HR", "none"]


def reading(rng: np.random.Generator, card: str, lean: dict[str, float]) -> np.ndarray:
    """Class probabilities of one corner of ``card``: its rank sure, the suit a softmax over
    scores where the true suit gets 2 and ``lean`` adds to some suits (a deck-specific bias)."""
    score = {
        s: (2.0 if s == card[0] else 0.0) + lean.get(s, 0.0) + rng.normal(0, 0.7) for s in SUITS
    }
    z = np.array([score[s] for s in SUITS])
    ps = np.exp(z - z.max())
    ps /= ps.sum()
    p = np.full(len(NAMES), 1e-6)
    for i, s in enumerate(SUITS):
        p[NAMES.index(s + card[1])] = ps[i] * 0.97
    p[NAMES.index("none")] = 0.03
    return p / p.sum()


def deal(rng: np.random.Generator, n: int, lean: dict[str, float]) -> tuple[np.ndarray, list[str]]:
    cards = [SUITS[int(rng.integers(4))] + RANKS[int(rng.integers(13))] for _ in range(n)]
    return np.stack([reading(rng, c, lean) for c in cards]), cards


def accuracy(probs: np.ndarray, cards: list[str]) -> float:
    return float(
        np.mean([NAMES[int(np.argmax(p))] == c for p, c in zip(probs, cards, strict=True)])
    )


def test_a_deck_read_as_spades_is_rebalanced_from_the_tables_own_readings() -> None:
    rng = np.random.default_rng(1)
    lean = {"S": 4.0}  # clubs score 2 for clubs but 4 for spades: nearly all read as spades
    bal = SuitBalance(NAMES)
    warm, _ = deal(rng, 300, lean)
    bal.observe(warm)
    probs, cards = deal(rng, 400, lean)
    clubs = [i for i, c in enumerate(cards) if c[0] == "C"]
    raw = [NAMES[int(np.argmax(probs[i]))][0] for i in clubs]
    fixed = bal.adjust(probs)
    now = [NAMES[int(np.argmax(fixed[i]))][0] for i in clubs]
    assert raw.count("C") < 0.2 * len(clubs)  # the bias as the classifier has it
    assert now.count("C") > 0.6 * len(clubs)
    assert accuracy(fixed, cards) > accuracy(probs, cards) + 0.1
    w = bal.weights()
    assert w["S"] < 1 < w["C"] and abs(np.log(w["C"]) - np.log(w["S"])) <= 2 * MAX_LOG
    # ranks, jokers and "none" keep their probability mass
    assert np.allclose(fixed.sum(axis=1), 1.0, atol=1e-5)
    assert np.allclose(fixed[:, NAMES.index("none")], probs[:, NAMES.index("none")], atol=1e-6)


def test_a_deck_read_well_keeps_its_readings_and_few_readings_move_nothing() -> None:
    rng = np.random.default_rng(2)
    bal = SuitBalance(NAMES)
    few, _ = deal(rng, 5, {"S": 4.0})
    bal.observe(few)
    shrink = 5 / (5 + PRIOR_COUNT)  # few readings move the weights little
    assert all(abs(np.log(v)) <= MAX_LOG * shrink + 1e-3 for v in bal.weights().values())
    bal = SuitBalance(NAMES)
    warm, _ = deal(rng, 400, {})
    bal.observe(warm)
    probs, cards = deal(rng, 400, {})
    fixed = bal.adjust(probs)
    assert all(abs(np.log(v)) < 0.25 for v in bal.weights().values())
    changed = np.mean(np.argmax(fixed, axis=1) != np.argmax(probs, axis=1))
    assert changed < 0.03 and accuracy(fixed, cards) >= accuracy(probs, cards) - 0.01


def test_only_suited_card_readings_count_and_a_class_list_without_suits_is_refused() -> None:
    bal = SuitBalance(NAMES)
    joker = np.full(len(NAMES), 1e-6)
    joker[NAMES.index("SB")] = 1.0
    nothing = np.full(len(NAMES), 1e-6)
    nothing[NAMES.index("none")] = 1.0
    bal.observe(np.stack([joker, nothing]))
    assert bal.readings == 0
    with pytest.raises(ValueError, match="52 suited cards"):
        SuitBalance(["SB", "HR", "none"])


def test_a_card_read_again_where_it_lay_counts_once() -> None:
    """The pipeline reads a zone many times while its cards lie there: with boxes, the same
    class at the same place is one reading, so a long trick of spades does not tip the
    balance; a card elsewhere counts."""
    rng = np.random.default_rng(3)
    probs, _ = deal(rng, 1, {})
    box = np.array([[100.0, 50.0, 112.0, 74.0]])
    bal = SuitBalance(NAMES)
    for _ in range(50):
        bal.observe(probs, box)
    assert bal.readings == 1
    bal.observe(probs, box + 40)
    assert bal.readings == 2
