"""Tribute rules as pure functions (engine/tribute.py), each option of RULES.md."""

from __future__ import annotations

import pytest

from engine.cards import parse_card
from engine.tribute import (
    anti_tribute_holds,
    assign_double,
    higher_than_tribute,
    plan_tribute,
    return_problem,
    tribute_problem,
)

C = parse_card
SEAT_ORDER = ("S", "E", "N", "W")


def test_plans() -> None:
    assert plan_tribute(None, True).kind == "none"
    single = plan_tribute(["S", "E", "W", "N"], True)
    assert (single.kind, single.payers, single.receivers) == ("single", ("N",), ("S",))
    double = plan_tribute(["S", "N", "E", "W"], True)
    assert (double.kind, double.payers, double.receivers) == ("double", ("E", "W"), ("S", "N"))
    off = plan_tribute(["S", "N", "E", "W"], False)
    assert off.kind == "none" and off.first == "S"


@pytest.mark.parametrize(
    ("tie", "chosen", "to_first", "leader"),
    [
        ("clockwise", None, "E", "E"),  # 上游 S takes its 下家 E's card; E leads (000, 002)
        ("fixed", None, "W", "W"),  # 末游 W pays 头游 and leads (001)
        ("winner_chooses", "W", "W", "W"),  # 被挑中的一方先出牌 (000)
        ("winner_chooses", None, "E", "E"),  # choice not seen: clockwise
    ],
)
def test_double_ties(tie: str, chosen: str | None, to_first: str, leader: str) -> None:
    plan = plan_tribute(["S", "N", "E", "W"], True)
    assign, lead, _ = assign_double(
        plan, {"E": C("SA"), "W": C("HA")}, "5", tie, SEAT_ORDER, chosen
    )
    assert assign[to_first] == "S" and lead == leader
    assert set(assign.values()) == {"S", "N"}


def test_double_unequal_and_clockwise_other_direction() -> None:
    plan = plan_tribute(["S", "N", "W", "E"], True)
    assign, lead, how = assign_double(plan, {"W": C("SK"), "E": C("SB")}, "5", "fixed", SEAT_ORDER)
    assert assign == {"E": "S", "W": "N"} and lead == "E" and how == "higher"
    # level card beats A: at level 5, S5 is higher than SA
    assign, lead, _ = assign_double(plan, {"W": C("S5"), "E": C("SA")}, "5", "fixed", SEAT_ORDER)
    assert assign["W"] == "S" and lead == "W"
    cw = ("S", "W", "N", "E")  # clockwise play: S's 下家 is W
    assign, lead, _ = assign_double(plan, {"W": C("SA"), "E": C("CA")}, "5", "clockwise", cw)
    assert assign["W"] == "S" and lead == "W"


def test_anti_tribute() -> None:
    single = plan_tribute(["S", "E", "W", "N"], True)
    assert anti_tribute_holds(single, {"N": [C("HR"), C("HR")]})
    assert not anti_tribute_holds(single, {"N": [C("HR"), C("SB")]})
    double = plan_tribute(["S", "N", "E", "W"], True)
    assert anti_tribute_holds(double, {"E": [C("HR")], "W": [C("HR")]})
    assert not anti_tribute_holds(double, {"E": [C("HR")], "S": [C("HR")]})


@pytest.mark.parametrize(
    ("limit", "card", "returner", "to", "bad"),
    [
        ("max_ten", "ST", "S", "E", False),
        ("max_ten", "SJ", "S", "E", True),
        ("max_ten", "SB", "S", "E", True),
        ("any", "HR", "S", "E", False),
        ("max_ten_to_partner", "SK", "S", "E", False),  # any card to an opponent (002 细则)
        ("max_ten_to_partner", "SK", "S", "N", True),  # <= 10 to one's partner
        ("max_ten_to_partner", "S9", "S", "N", False),
        ("max_ten_not_level", "S5", "S", "E", True),  # level 5: not a level card (national)
        ("max_ten_not_level", "S6", "S", "E", False),
    ],
)
def test_return_limits(limit: str, card: str, returner: str, to: str, bad: bool) -> None:
    why = return_problem(C(card), returner, to, "5", limit, "none")
    assert (why is not None) == bad


def test_wild_tribute_and_higher_card_later() -> None:
    assert tribute_problem(C("H5"), "5") is not None
    assert tribute_problem(C("S5"), "5") is None
    received = [C("SA")]
    assert higher_than_tribute(C("SK"), [C("SA")], received, "5") is None  # was returned
    assert higher_than_tribute(C("SK"), [C("CA")], received, "5") == C("CA")
    assert higher_than_tribute(C("SK"), [C("H5")], [], "5") is None  # wilds excluded
    assert higher_than_tribute(C("SK"), [C("S5")], [], "5") == C("S5")  # level card > K
