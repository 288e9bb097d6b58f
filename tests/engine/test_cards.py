"""Card notation (CONTRACT.md) and the two-deck model (RULES.md "Cards and ranks")."""

from __future__ import annotations

import pytest

from engine import Card, CardError, parse_card, parse_cards, parse_level
from engine.cards import (
    BIG_JOKER,
    DECK,
    DISTINCT,
    SMALL_JOKER,
    check_two_decks,
    format_cards,
    is_wild,
    natural_rank,
    order_value,
    sort_cards,
)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("S3", "S3"),
        ("HT", "HT"),
        ("h10", "HT"),
        ("♠A", "SA"),
        ("♥2", "H2"),
        ("♣k", "CK"),
        ("♦9", "D9"),
        ("sb", "SB"),
        ("HR", "HR"),
        ("小王", "SB"),
        ("大王", "HR"),
    ],
)
def test_parse_card_lenient_input_canonical_output(text: str, canonical: str) -> None:
    assert str(parse_card(text)) == canonical


@pytest.mark.parametrize("bad", ["", "X3", "S1", "S11", "SZ", "3S", "H", "joker"])
def test_parse_card_rejects_and_names_token(bad: str) -> None:
    with pytest.raises(CardError) as err:
        parse_card(bad)
    if bad:
        assert repr(bad.strip()) in str(err.value) or bad in str(err.value)


def test_card_error_is_value_error() -> None:
    assert issubclass(CardError, ValueError)


def test_parse_cards_text_and_sequences() -> None:
    assert [str(c) for c in parse_cards("H2, s3;♠4  D10")] == ["H2", "S3", "S4", "DT"]
    cards = parse_cards([Card("S", "3"), "HR"])
    assert [str(c) for c in cards] == ["S3", "HR"]
    assert parse_cards("S3")[0] is parse_card("S3")  # interned


def test_third_copy_is_an_error() -> None:
    parse_cards("S3 S3 SB SB")
    with pytest.raises(CardError, match="S3 appears 3 times"):
        parse_cards("S3 S3 S3")
    with pytest.raises(CardError, match="HR"):
        check_two_decks(parse_cards("HR HR HR", two_decks=False))


def test_deck_is_108_cards_two_of_each() -> None:
    assert len(DECK) == 108
    assert len(DISTINCT) == 54
    assert all(DECK.count(c) == 2 for c in DISTINCT)
    assert sum(1 for c in DECK if c.is_joker) == 4


@pytest.mark.parametrize(("text", "level"), [("2", "2"), ("10", "T"), ("t", "T"), ("a", "A")])
def test_parse_level(text: str, level: str) -> None:
    assert parse_level(text) == level


@pytest.mark.parametrize("bad", ["1", "0", "B", "R", "11", "", "SB"])
def test_parse_level_rejects(bad: str) -> None:
    with pytest.raises(CardError, match="level"):
        parse_level(bad)


def test_order_and_wilds() -> None:
    s7, h7, sa, s2 = parse_cards("S7 H7 SA S2")
    # level 7: the level card is above A, below the jokers
    assert order_value(s7, "7") == 15
    assert order_value(sa, "7") == 14
    assert order_value(SMALL_JOKER, "7") == 16
    assert order_value(BIG_JOKER, "7") == 17
    assert order_value(s2, "7") == 2
    assert natural_rank(s7) == 7
    assert is_wild(h7, "7") and not is_wild(s7, "7") and not is_wild(h7, "8")
    assert format_cards(sort_cards(parse_cards("HR S7 SA S2"), "7")) == "S2 SA S7 HR"
    assert format_cards(sort_cards(parse_cards("HR S7 SA S2"))) == "S2 S7 SA HR"
