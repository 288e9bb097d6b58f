"""legal_moves: distinctness, order, tricks, options and bad input (RULES.md, CONTRACT.md)."""

from __future__ import annotations

import pytest

from engine import CardError, ComboRules, classify, legal_moves, parse_cards


def plays(hand: str, trick: str | None, level: str, **kw: object) -> list[str]:
    return [str(m) for m in legal_moves(hand, trick, level, **kw)]  # type: ignore[arg-type]


def test_small_lead_exact_list_in_order() -> None:
    assert plays("S3 S3 D3 S4 HR", None, "9") == [
        "single 3 [S3]",
        "single 3 [D3]",
        "single 4 [S4]",
        "single HR [HR]",
        "pair 3 [S3 D3]",
        "pair 3 [S3 S3]",
        "triple 3 [S3 S3 D3]",
    ]


def test_two_copies_of_a_card_are_one_single() -> None:
    assert plays("S3 S3", None, "2") == ["single 3 [S3]", "pair 3 [S3 S3]"]


def test_suit_choices_are_distinct_plays() -> None:
    moves = legal_moves("S3 D3 S4 S5 S6 S7", None, "2")
    straights = [m for m in moves if m.kind == "straight"]
    assert [str(m) for m in straights] == [
        "straight 3 [S3 S4 S5 S6 S7]",
        "straight 3 [D3 S4 S5 S6 S7]",
    ]
    flushes = [m for m in moves if m.kind == "straight_flush"]
    assert [str(m) for m in flushes] == ["straight_flush 3 [S3 S4 S5 S6 S7]"]


def test_wild_every_way_example_from_rules() -> None:
    moves = legal_moves("H2 S4 S5 S6 S7", None, "2")
    five = [(m.kind, m.key) for m in moves if m.size == 5]
    assert sorted(five) == [
        ("straight", "3"),
        ("straight", "4"),
        ("straight_flush", "3"),
        ("straight_flush", "4"),
    ]
    singles = [m.key for m in moves if m.kind == "single" and str(m.cards[0]) == "H2"]
    assert len(singles) == 13  # the wild alone, as any rank


def test_level_card_order_in_singles_and_sequences() -> None:
    moves = legal_moves("S7 SA S3 S4 S5 S6", None, "7")
    singles = [m.key for m in moves if m.kind == "single"]
    assert singles == ["3", "4", "5", "6", "A", "7"]  # level card above A
    assert [m.key for m in moves if m.kind == "straight"] == ["3"]  # 7 at its natural rank


def test_answers_same_kind_then_bombs_weakest_first() -> None:
    hand = "S5 D5 S9 D9 SA DA S7 D7 C7 H7 SB SB HR HR S3 S4 S5 S6"
    moves = legal_moves(hand, "S8 D8", "9")
    assert [(m.kind, m.key) for m in moves] == [
        ("pair", "A"),
        ("pair", "9"),  # level pair
        ("pair", "SB"),
        ("pair", "HR"),
        ("bomb", "7"),
        ("straight_flush", "3"),  # S3 S4 S5 S6 S7
        ("joker_bomb", "HR"),
    ]
    assert not any(m.is_bomb for m in moves[:4]) and all(m.is_bomb for m in moves[4:])


def test_answers_to_bombs() -> None:
    hand = "S7 D7 C7 H7 S7 S3 S4 S5 S6 SB SB HR HR ST DT CT HT"
    # 4-card bomb of 8s: 4-card bombs above 8, the 5-bomb, straight flushes, joker bomb
    got = [(m.kind, m.key, m.size) for m in legal_moves(hand, "S8 D8 C8 H8", "2")]
    assert got == [
        ("bomb", "T", 4),
        ("bomb", "7", 5),
        ("straight_flush", "3", 5),
        ("joker_bomb", "HR", 4),
    ]
    # straight flush: only higher straight flushes, 6+ bombs and the joker bomb
    got = [(m.kind, m.key) for m in legal_moves(hand, "D2 D3 D4 D5 D6", "9")]
    assert got == [("straight_flush", "3"), ("joker_bomb", "HR")]
    assert legal_moves("S7 D7 C7 H7 S7 D7 C7 H7 H9 H9", "SB SB HR HR", "9") == []


def test_trick_forms() -> None:
    hand = "S4 D4 S5"
    combo = classify("S3 D3", "2")[0]
    assert legal_moves(hand, combo, "2") == legal_moves(hand, "S3 D3", "2")
    assert legal_moves(hand, parse_cards("S3 D3"), "2") == legal_moves(hand, combo, "2")
    assert plays(hand, "S3 D3", "2") == ["pair 4 [S4 D4]"]


def test_trick_read_as_strongest_reading() -> None:
    # H2 S4 S5 S6 S7 at level 2 is read as the straight flush 4-8
    moves = legal_moves("S5 S6 S7 S8 S9 D5 D6 D7 D8 D9", "H2 S4 S5 S6 S7", "2")
    assert [str(m) for m in moves] == [
        "straight_flush 5 [S5 S6 S7 S8 S9]",
        "straight_flush 5 [D5 D6 D7 D8 D9]",
    ]


def test_full_house_joker_pair_option() -> None:
    hand = "S3 D3 C3 SB SB"
    assert "full_house" in {m.kind for m in legal_moves(hand, None, "2")}
    off = legal_moves(hand, None, "2", rules=ComboRules(full_house_joker_pair=False))
    assert "full_house" not in {m.kind for m in off}


def test_max_cards_per_play_option() -> None:
    hand = "S3 S3 D3 D3 C3 C3 H3 H3 S4 S5 S6 S7"
    rules = ComboRules(max_cards_per_play=6)
    sizes = {m.size for m in legal_moves(hand, None, "2", rules=rules)}
    assert max(sizes) == 6
    assert max(m.size for m in legal_moves(hand, None, "2")) == 8
    # a 5-card limit: no consecutive pairs or triples at all
    five = ComboRules(max_cards_per_play=5)
    kinds = {m.kind for m in legal_moves("S3 D3 S4 D4 S5 D5", None, "2", rules=five)}
    assert "consecutive_pairs" not in kinds


def test_no_wild_stands_for_a_joker() -> None:
    moves = legal_moves("H2 H2 SB HR HR", None, "2")
    assert not any(m.kind == "joker_bomb" for m in moves)
    assert ("pair", "SB") not in {(m.kind, m.key) for m in moves}
    for m in moves:
        assert all(a not in ("SB", "HR") for _, a in m.wilds())


@pytest.mark.parametrize(
    ("hand", "trick", "level", "match"),
    [
        ("S3 S3 S3", None, "2", "S3 appears 3 times in the hand"),
        ("S3 S3", "S3", "2", "hand and the trick"),
        ("S3 Q9", None, "2", "Q9"),
        ("S3", "S4 S5", "2", "not a combo"),
        ("S3", None, "Z", "level"),
    ],
)
def test_bad_input(hand: str, trick: str | None, level: str, match: str) -> None:
    with pytest.raises(CardError, match=match):
        legal_moves(hand, trick, level)


def test_big_hands_are_accepted() -> None:
    hand = " ".join(f"{s}{r}" for s in "SD" for r in "23456789TJQKA")
    moves = legal_moves(hand, None, "2")
    assert len(parse_cards(hand)) == 26 and moves
    assert legal_moves("", None, "2") == []
