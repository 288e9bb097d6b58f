"""A deal without a level: ``level=None`` in classify / beats / read_trick / declare / legal_moves.

Seed 000 篇6 (the ``eight-deal-random-level`` profile): "每局比赛采取切牌随机抽取配子的方式，
抽到大小王不带" — the wild (配子) is drawn by cutting, and a joker cut brings none. The texts name
no level rank for such a deal either, so it is read naturally: no rank is promoted (2 < ... < K <
A < small joker < big joker) and no card is wild; ♥A is an ordinary A.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from engine import CardError, beats, classify, declare, legal_moves, parse_cards
from engine.combos import read_trick
from engine.deal import play_level
from engine.moves import lead_moves

RANKS = "23456789TJQKA"


def readings(cards: str, level: str | None) -> list[tuple[str, str]]:
    return [(c.kind, c.key) for c in classify(cards, level)]


@pytest.mark.parametrize(
    ("cards", "expected", "at_level_a"),
    [
        # ♥A is no wild: these are combos only when it is one (level A)
        ("HA HA S5", [], [("triple", "5")]),
        ("HA S5", [], [("pair", "5")]),
        ("HA S5 S5 C5", [], [("bomb", "5")]),
        ("HA HA S5 C5", [], [("bomb", "5")]),
        ("HA S3 S4 S5 S6", [], [("straight", "3"), ("straight", "2")]),
        ("HA S5 S5 C5 S6", [], [("full_house", "5")]),
        # ♥A as itself: natural readings only
        ("HA", [("single", "A")], None),
        ("HA HA", [("pair", "A")], None),
        ("HA SA DA", [("triple", "A")], None),
        ("HA SA CA DA", [("bomb", "A")], None),
        ("HA S2 S3 S4 S5", [("straight", "A")], None),
        ("HA SK SQ SJ ST", [("straight", "T")], None),
        ("HA HK HQ HJ HT", [("straight_flush", "T"), ("straight", "T")], None),
        ("HA HA S2 S2 S3 S3", [("consecutive_pairs", "A")], None),
        ("HA SA DA SK SK DK", [("consecutive_triples", "K")], None),
        ("HA SA DA SB SB", [("full_house", "A")], None),
        ("HA HA SB SB", [], None),
        ("SK SA S2 S3 S4", [], None),  # never wraps
    ],
)
def test_heart_ace_is_an_ordinary_card(
    cards: str, expected: list[tuple[str, str]], at_level_a: list[tuple[str, str]] | None
) -> None:
    assert readings(cards, None) == expected
    for combo in classify(cards, None):
        assert combo.level is None and combo.wilds() == []
    if at_level_a is not None:  # the level path is unchanged: ♥A is wild at level A
        got = readings(cards, "A")
        assert all(r in got for r in at_level_a), got


def test_natural_order_and_no_promotion() -> None:
    for i, r in enumerate(RANKS):
        (single,) = classify("S" + r, None)
        assert single.value == i + 2  # nothing at 15: no level rank
    assert classify("S7", "7")[0].value == 15  # at a level the level rank is promoted
    assert beats("SA", "SK", None) and not beats("SK", "SA", None)
    assert beats("HA", "SK", None)  # ♥A is a plain A, above K
    assert beats("S3", "S2", None) and not beats("S2", "SA", None)
    assert beats("S2", "SA", "2")  # the old promotion, at level 2 only
    assert not beats("S7", "SA", None) and beats("S7", "SA", "7")
    assert beats("SB", "HA", None) and beats("HR", "SB", None)
    assert beats("HA SA", "SK SK", None) and not beats("SK SK", "HA SA", None)
    assert beats("SA SA DA S2 S2", "SK SK DK S3 S3", None)
    assert beats("S2 S2 D2 D2", "HA SA DA SK SK", None)  # a natural bomb beats a full house
    assert not beats("HA S2 D2 C2", "S9 S9 D9", None)  # ♥A does not make a 2 bomb
    assert beats("HA S2 D2 C2", "S9 S9 D9", "A")
    # sequences: A low or high, as at any level
    assert beats("ST SJ SQ SK HA", "C9 ST SJ SQ SK", None)
    assert not beats("HA S2 S3 S4 S5", "S2 S3 S4 S5 S6", None)


def test_read_trick_and_rereading() -> None:
    t = read_trick("HA SA", None)
    assert (t.kind, t.key, t.level) == ("pair", "A", None)
    assert read_trick(t, None) is t
    wild_pair = classify("HA S5", "A")[0]
    with pytest.raises(CardError, match="without a level"):
        read_trick(wild_pair, None)  # a pair only thanks to the wild
    with pytest.raises(CardError, match="not a combo without a level"):
        read_trick("HA S5", None)
    # a combo read at a level is re-read without one
    assert beats(classify("SA", "A")[0], "SK", None)


def test_declare_without_a_level() -> None:
    straight = declare("HA SK SQ SJ ST", None, [])
    assert (straight.kind, straight.key, straight.level) == ("straight", "T", None)
    with pytest.raises(CardError, match="no wilds"):
        declare("HA S5", None, "5")


def test_json_carries_level_null() -> None:
    (pair,) = classify("HA HA", None)
    js = pair.to_json()
    assert js["level"] is None and js["wilds"] == [] and js["key"] == "A"
    assert json.loads(json.dumps(js))["level"] is None


def _sub_multiset(cards: tuple[object, ...], hand: list[object]) -> bool:
    need, have = Counter(cards), Counter(hand)
    return all(have[c] >= n for c, n in need.items())


@pytest.mark.parametrize(
    "hand",
    [
        "HA HA S5 C5 D5 S6 S7 S8 S9 SB",
        "HA SA S2 S3 S4 S5 D5 D5 C5 HK HK",
        "HA HA SA SA DA DA SK SK DK DK HR HR SB SB",
    ],
)
def test_legal_moves_never_use_wilds(hand: str) -> None:
    cards = parse_cards(hand)
    lead = legal_moves(cards, None, None)
    assert lead and lead == lead_moves(cards, None)
    assert len({(m.kind, m.key, m.size, m.cards) for m in lead}) == len(lead)
    for m in lead:
        assert m.level is None and m.wilds() == []
        assert _sub_multiset(m.cards, list(cards))
        # every move is a natural reading of its own cards
        assert (m.kind, m.key) in readings(" ".join(map(str, m.cards)), None)
    for trick in ("D3", "C2 C2", "C4 C4 D4", "C9 C9 D9 D9", "D2 C3 C4 C5 C6"):
        for m in legal_moves(cards, trick, None):
            assert m.wilds() == [] and beats(m, trick, None)


def test_legal_moves_examples() -> None:
    hand = "HA S5 C5 D5"
    no_level = {(m.kind, m.key, m.size) for m in legal_moves(hand, None, None)}
    assert ("bomb", "5", 4) not in no_level  # at level A ♥A would make it a bomb
    assert ("bomb", "5", 4) in {(m.kind, m.key, m.size) for m in legal_moves(hand, None, "A")}
    assert ("single", "A", 1) in no_level and ("triple", "5", 3) in no_level
    assert not [k for k in no_level if k[0] == "pair" and k[1] != "5"]
    assert [str(m) for m in legal_moves("HA HA S5", "SK", None)] == ["single A [HA]"]
    assert [str(m) for m in legal_moves("HA HA S5", "SK SK", None)] == ["pair A [HA HA]"]
    assert legal_moves("HA S5 C5 D5", "SK SK", None) == []
    # S7 is no level card without a level: it does not beat A
    assert legal_moves("S7 S7", "SA", None) == []


def test_play_level_keeps_a_joker_cut() -> None:
    assert play_level(None) is None
    assert play_level("9") == "9"
