"""A case for every row of the combo table in RULES.md, bomb order, wilds, options, beats."""

from __future__ import annotations

import dataclasses

import pytest

from engine import KINDS, CardError, Combo, ComboRules, beats, classify, parse_cards
from engine.combos import read_trick

NO_JOKER_PAIR = ComboRules(full_house_joker_pair=False)
HEFEI = ComboRules(max_cards_per_play=6)


def readings(cards: str, level: str, rules: ComboRules | None = None) -> list[tuple[str, str]]:
    return [(c.kind, c.key) for c in classify(cards, level, rules=rules)]


# (cards, level, every reading strongest first)
TABLE: list[tuple[str, str, list[tuple[str, str]]]] = [
    # single: card order big joker > small joker > level card > A > ... > 2
    ("S3", "2", [("single", "3")]),
    ("DA", "2", [("single", "A")]),
    ("SB", "2", [("single", "SB")]),
    ("HR", "9", [("single", "HR")]),
    ("C9", "9", [("single", "9")]),
    # pair, including the joker pairs; a small and a big joker are no pair
    ("S3 D3", "2", [("pair", "3")]),
    ("S3 S3", "2", [("pair", "3")]),
    ("SB SB", "2", [("pair", "SB")]),
    ("HR HR", "2", [("pair", "HR")]),
    ("SB HR", "2", []),
    ("S3 S4", "2", []),
    # triple
    ("S3 D3 C3", "2", [("triple", "3")]),
    ("SK SK DK", "K", [("triple", "K")]),
    ("SB SB HR", "2", []),
    # full house: triple + pair of another rank, compared by the triple
    ("S3 D3 C3 S4 D4", "2", [("full_house", "3")]),
    ("S3 D3 S4 D4 C4", "2", [("full_house", "4")]),
    ("S3 D3 C3 SB SB", "2", [("full_house", "3")]),
    ("S3 D3 C3 HR HR", "2", [("full_house", "3")]),
    ("S3 D3 C3 SB HR", "2", []),
    ("S3 D3 C3 S4 D5", "2", []),
    ("S3 D3 S4 D4 S5", "2", []),
    # straight: exactly 5, A low or high, never wrapping, level card at its natural rank
    ("S3 D4 C5 H6 S7", "2", [("straight", "3")]),
    ("SA D2 C3 H4 S5", "9", [("straight", "A")]),
    ("ST DJ CQ HK SA", "9", [("straight", "T")]),
    ("SJ DQ CK HA S2", "9", []),
    ("SQ DK CA H2 S3", "9", []),
    ("S3 D4 C5 H6 S7 S8", "9", []),
    ("S3 D4 C5 D6 S7", "5", [("straight", "3")]),  # C5 is a level card, in place
    ("S3 D4 C6 D7 S8", "2", []),
    # consecutive pairs: exactly three
    ("S3 D3 S4 D4 S5 D5", "2", [("consecutive_pairs", "3")]),
    ("SA DA S2 D2 S3 D3", "9", [("consecutive_pairs", "A")]),
    ("SQ DQ SK DK SA DA", "9", [("consecutive_pairs", "Q")]),
    ("SK DK SA DA S2 D2", "9", []),
    ("S3 D3 S4 D4", "9", []),
    ("S3 D3 S4 D4 S5 D5 S6 D6", "9", []),
    ("S3 D3 S4 D4 S6 D6", "9", []),
    # consecutive triples: exactly two, nothing attached
    ("S3 D3 C3 S4 D4 C4", "2", [("consecutive_triples", "3")]),
    ("SA DA CA S2 D2 C2", "9", [("consecutive_triples", "A")]),
    ("SK DK CK SA DA CA", "9", [("consecutive_triples", "K")]),
    ("S3 D3 C3 S4 D4 C4 S5 D5 C5", "9", []),
    ("S3 D3 C3 S4 D4 C4 S5", "9", []),
    ("S3 D3 C3 S5 D5 C5", "9", []),
    # bombs: 4..10 of a rank (10 = 8 natural + 2 wilds)
    ("S3 D3 C3 H3", "2", [("bomb", "3")]),
    ("S3 D3 C3 H3 S3", "2", [("bomb", "3")]),
    ("S3 S3 D3 D3 C3 C3 H3 H3", "2", [("bomb", "3")]),
    ("S3 S3 D3 D3 C3 C3 H3 H3 H2 H2", "2", [("bomb", "3")]),
    ("S3 D3 C3 S4", "2", []),
    # straight flush (also a straight: two readings, the bomb first)
    ("S3 S4 S5 S6 S7", "9", [("straight_flush", "3"), ("straight", "3")]),
    ("HA H2 H3 H4 H5", "9", [("straight_flush", "A"), ("straight", "A")]),
    ("DT DJ DQ DK DA", "9", [("straight_flush", "T"), ("straight", "T")]),
    # joker bomb
    ("SB SB HR HR", "2", [("joker_bomb", "HR")]),
    ("SB HR HR", "2", []),
    # wilds (♥ level cards): any non-joker card, or themselves
    (
        "H2 S4 S5 S6 S7",
        "2",
        [("straight_flush", "4"), ("straight_flush", "3"), ("straight", "4"), ("straight", "3")],
    ),
    ("S3 S3 S4 S4 H2", "2", [("full_house", "4"), ("full_house", "3")]),
    ("S3 D3 C3 H7 H7", "7", [("bomb", "3"), ("full_house", "3")]),
    ("S3 D3 C3 H7", "7", [("bomb", "3")]),
    ("S9 H9 SA", "9", []),
    ("S9 H9", "9", [("pair", "9")]),
    ("H9 S9", "8", [("pair", "9")]),  # not wild at level 8
    ("HQ SK SK", "Q", [("triple", "K")]),
    ("HQ SB", "Q", []),
    ("HQ SB SB", "Q", []),
    ("HQ SB SB HR", "Q", []),
    ("HQ HQ SB SB S3", "Q", [("full_house", "3")]),
    ("HQ SA S2 S3 S4", "Q", [("straight_flush", "A"), ("straight", "A")]),
    ("HQ HQ SJ SK", "Q", []),
    (
        "SA DA S2 HT H2 HT",
        "T",
        [("consecutive_triples", "A"), ("consecutive_pairs", "A")],
    ),
    ("SK DK CK HT HT SA", "T", [("consecutive_triples", "K")]),
    (
        "HT HT S3 S4 S5",
        "T",
        [
            ("straight_flush", "3"),
            ("straight_flush", "2"),
            ("straight_flush", "A"),
            ("straight", "3"),
            ("straight", "2"),
            ("straight", "A"),
        ],
    ),
]


@pytest.mark.parametrize(("cards", "level", "expected"), TABLE)
def test_combo_table(cards: str, level: str, expected: list[tuple[str, str]]) -> None:
    assert readings(cards, level) == expected


def test_lone_wilds_are_any_rank_strongest_first() -> None:
    ones = readings("H5", "5")
    assert ones[0] == ("single", "5")  # as itself, the level card, strongest
    assert [k for _, k in ones] == ["5", "A", "K", "Q", "J", "T", "9", "8", "7", "6", "4", "3", "2"]
    twos = readings("H5 H5", "5")
    assert len(twos) == 13 and all(kind == "pair" for kind, _ in twos)
    assert "SB" not in {k for _, k in twos} and "HR" not in {k for _, k in twos}


def test_full_house_joker_pair_option() -> None:
    assert readings("S3 D3 C3 SB SB", "2", NO_JOKER_PAIR) == []
    assert readings("S3 D3 C3 HR HR", "2", NO_JOKER_PAIR) == []
    assert readings("S3 D3 C3 S4 S4", "2", NO_JOKER_PAIR) == [("full_house", "3")]


def test_max_cards_per_play_option() -> None:
    assert readings("S3 D3 C3 H3 S3 D3", "2", HEFEI) == [("bomb", "3")]
    assert readings("S3 D3 C3 H3 S3 D3 C3", "2", HEFEI) == []
    assert readings("S3 D3 C3 H3 S3 D3 C3", "2") == [("bomb", "3")]
    assert not beats("S3 D3 C3 H3 S3 D3 C3", "S4 D4 C4 H4", "2", rules=HEFEI)


def test_combo_fields_and_json() -> None:
    (sf, *_rest) = classify("H2 S4 S5 S6 S7", "2")
    assert (sf.kind, sf.key, sf.size) == ("straight_flush", "4", 5)
    assert [str(c) for c in sf.cards] == ["H2", "S4", "S5", "S6", "S7"]
    assert sf.is_bomb
    js = sf.to_json()
    assert js["kind"] == "straight_flush" and js["key"] == "4" and js["size"] == 5
    assert js["cards"] == ["H2", "S4", "S5", "S6", "S7"]
    assert js["wilds"] == [{"card": "H2", "as": "S8"}]
    low = classify("H2 S4 S5 S6 S7", "2")[1]
    assert low.to_json()["wilds"] == [{"card": "H2", "as": "S3"}]
    fh = classify("S3 S3 S4 S4 H2", "2")
    assert fh[1].to_json()["wilds"] == [{"card": "H2", "as": "3"}]
    cards_canonical = classify("SA S2 S3 S4 S5", "9")[0].cards
    assert [str(c) for c in cards_canonical] == ["S2", "S3", "S4", "S5", "SA"]


def test_wild_pair_of_full_house_names_a_rank_not_a_joker() -> None:
    fh = [c for c in classify("S3 D3 C3 H2 H2", "2") if c.kind == "full_house"][0]
    stands = [a for _, a in fh.wilds()]
    assert stands[0] == stands[1] and stands[0] not in ("3", "SB", "HR")


def test_combo_is_frozen_and_unordered() -> None:
    c = classify("S3", "2")[0]
    with pytest.raises(AttributeError):
        c.kind = "pair"  # type: ignore[misc]
    with pytest.raises(TypeError):
        _ = c < c
    assert c == classify(parse_cards("S3"), "2")[0]
    assert hash(c) == hash(classify("s3", "2")[0])
    assert len({c, classify("S3", "2")[0]}) == 1


def test_kinds_constant() -> None:
    assert KINDS == (
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


# ---------------------------------------------------------------------------------------------
# beats


@pytest.mark.parametrize(
    ("play", "trick", "level", "expected"),
    [
        ("S4", "S3", "2", True),
        ("S3", "D3", "2", False),  # equal never beats
        ("S3", "S4", "2", False),
        ("S2", "SA", "2", True),  # level card over A
        ("SA", "S2", "2", False),
        ("SB", "S2", "2", True),
        ("HR", "SB", "2", True),
        ("S7 D7", "SA DA", "7", True),  # level pair over pair of A
        ("SB SB", "S7 D7", "7", True),
        ("HR HR", "SB SB", "7", True),
        ("S4 D4", "S3", "2", False),  # other kind
        ("S4 D4 C4 S5 D5", "S3 D3 C3 SA DA", "2", True),  # full house by the triple only
        ("S3 D3 C3 SA DA", "S4 D4 C4 S5 D5", "2", False),
        ("S4 D5 C6 H7 S8", "SA D2 C3 H4 S5", "9", True),  # A2345 is the lowest straight
        ("ST DJ CQ HK SA", "S9 DT CJ HQ SK", "9", True),  # TJQKA the highest
        ("S3 D3 S4 D4 S5 D5", "SA DA S2 D2 S3 D3", "9", True),
        ("SQ DQ SK DK SA DA", "SJ DJ SQ DQ SK DK", "9", True),
        ("SK DK CK SA DA CA", "SQ DQ CQ SK DK CK", "9", True),
        ("S2 D2 C2 S3 D3 C3", "SA DA CA S2 D2 C2", "9", True),
        # bombs beat every non-bomb
        ("S3 D3 C3 H3", "SQ DQ SK DK SA DA", "9", True),
        ("S3 D3 C3 H3", "HR HR", "9", True),
        ("S3 D3 C3 H3", "ST DJ CQ HK SA", "9", True),
        # bomb order: 4 < 5 < straight flush < 6 ... 10 < joker bomb
        ("S4 D4 C4 H4", "S3 D3 C3 H3", "9", True),
        ("S3 D3 C3 H3", "S4 D4 C4 H4", "9", False),
        ("S9 D9 C9 S9", "SA DA CA HA", "9", True),  # level bomb over A bomb
        ("S3 D3 C3 H3 S3", "SA DA CA HA", "9", True),
        ("SA S2 S3 S4 S5", "SA DA CA HA SA", "9", True),
        ("S3 S4 S5 S6 S7", "SK DK CK HK SK", "9", True),
        ("S3 D3 C3 H3 S3 D3", "DT DJ DQ DK DA", "9", True),
        ("DT DJ DQ DK DA", "S3 D3 C3 H3 S3 D3", "9", False),
        ("D9 DT DJ DQ DK", "D8 D9 DT DJ DQ", "2", True),
        ("D8 D9 DT DJ DQ", "D9 DT DJ DQ DK", "2", False),
        ("S3 D3 C3 H3 S3 D3 C3", "SA DA CA HA SA DA", "9", True),
        ("SA DA CA HA SA DA", "S3 D3 C3 H3 S3 D3", "9", True),
        ("SB SB HR HR", "S3 S3 D3 D3 C3 C3 H3 H3 H9 H9", "9", True),
        ("S3 S3 D3 D3 C3 C3 H3 H3 H9 H9", "SB SB HR HR", "9", False),
        ("SB SB HR HR", "SB SB HR HR", "9", False),
        # a play with several readings beats when one of them does
        ("H2 S4 S5 S6 S7", "S3 D4 C5 H6 S7", "2", True),
        ("H2 S4 S5 S6 S7", "S3 S4 S5 S6 S7", "2", True),  # straight flush 4-8
        ("H2 S4 S5 S6 S7", "S4 S5 S6 S7 S8", "2", False),
        # not a combo never beats
        ("S3 S4", "S2", "9", False),
    ],
)
def test_beats(play: str, trick: str, level: str, expected: bool) -> None:
    assert beats(play, trick, level) is expected


def test_beats_lead_and_combo_arguments() -> None:
    assert beats("S3", None, "2")
    assert not beats("S3 S4", None, "2")
    straight, flush = classify("S3 S4 S5 S6 S7", "9")[::-1]
    # a Combo play is that reading only
    trick = classify("S4 D5 C6 H7 S8", "9")[0]
    assert not beats(straight, trick, "9")
    assert beats(flush, trick, "9")
    assert flush.beats(trick) and not straight.beats(trick)


def test_trick_is_read_as_its_strongest_reading() -> None:
    t = read_trick("H2 S4 S5 S6 S7", "2")
    assert (t.kind, t.key) == ("straight_flush", "4")
    with pytest.raises(CardError, match="not a combo"):
        read_trick("S3 S4", "2")
    # a combo read at another level is read again
    pair = classify("S7 D7", "2")[0]
    assert read_trick(pair, "7").value == 15


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: classify("S3 X4", "2"), "X4"),
        (lambda: classify("S3", "1"), "level"),
        (lambda: classify("S3 S3 S3", "2"), "S3 appears 3 times"),
        (lambda: beats("S3", "S3 S4", "2"), "not a combo"),
        (lambda: classify([object()], "2"), "not a card"),  # type: ignore[list-item]
    ],
)
def test_bad_input_is_card_error(call: object, match: str) -> None:
    with pytest.raises(CardError, match=match):
        call()  # type: ignore[operator]


def test_combo_rules_validation() -> None:
    with pytest.raises(ValueError, match="max_cards_per_play"):
        ComboRules(max_cards_per_play=0)
    with pytest.raises(ValueError, match="full_house_joker_pair"):
        ComboRules(full_house_joker_pair="yes")  # type: ignore[arg-type]
    assert dataclasses.is_dataclass(ComboRules) and ComboRules().max_cards_per_play is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        ComboRules().full_house_joker_pair = False  # type: ignore[misc]


def test_accepts_card_sequences() -> None:
    cards = parse_cards("S3 D3")
    assert classify(cards, "2") == classify("S3 D3", "2") == classify(["S3", "d3"], "2")
    assert isinstance(classify(tuple(cards), "2")[0], Combo)
