"""Tribute (进贡), return (还贡) and anti-tribute (抗贡): who pays whom, who leads, what may be
returned, and whether a tribute was the payer's highest card. Pure functions (RULES.md
"Tribute"); the referee (engine/referee.py) applies them to what it observes.

Rules decisions, with their seed files:

* Single down: 下游 (4th) pays 上游 (1st) and leads; in a 1st-4th finish of one team the payer is
  the winner's own partner (000 篇7 "对家供牌") - it is always the 4th seat.
* Double down (双下): 三游 and 下游 both pay; 上游 takes the higher card and returns to its giver,
  who leads (000 lines 145/367/411). Equal cards, profile ``tribute.double_tie``:
  ``clockwise`` - 上游 takes the card of its 下家 (the next seat in play order), that seat leads
  (000 line 367 "按照顺时针方向进贡 … 由上游者的下家先出牌", 002); ``winner_chooses`` - 上游
  picks, the chosen payer leads (000 line 413 "头家具有挑选权，被挑中的一方先出牌"; the pipeline
  reports the choice as ``to`` on the tribute observation, otherwise ``clockwise`` applies);
  ``fixed`` - 末游 pays 头游, 三游 pays 二游, 末游 leads (001 line 72).
* Anti-tribute: the paying side shows both big jokers (single down: 下游 holds both; double down:
  the two losers between them; 000 lines 145/149/365, 001 line 72). No tribute; the leader is
  ``tribute.no_tribute_leader`` (上游, 000 line 365 "由上游者出牌").
* Return limit ``tribute.return_limit``: ``max_ten`` (000 line 363 "不得大于10"), ``any`` (001
  "还一张任意牌"), ``max_ten_to_partner`` (002 细则: <= 10 to one's partner only),
  ``max_ten_not_level`` (national 2022). A card above the limit is a ``wrong_tribute`` foul; with
  ``return_fallback = "smallest"`` it is still flagged, the detail saying it stands only if no
  card met the limit (the referee cannot see hands).
* A wild as tribute is a foul ("除红桃主牌外", 000 line 149). A tribute that was not the payer's
  highest non-wild card shows later, when the payer plays a higher non-wild card that it did not
  receive in return (000 line 363 "进贡的牌必须是自己手中最大的牌").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from engine.cards import BIG_JOKER, Card, is_wild, natural_rank, order_value

__all__ = [
    "TributePlan",
    "plan_tribute",
    "partner",
    "assign_double",
    "anti_tribute_holds",
    "return_problem",
    "tribute_problem",
    "higher_than_tribute",
]

_PARTNER: Final = {"N": "S", "S": "N", "E": "W", "W": "E"}


def partner(seat: str) -> str:
    return _PARTNER[seat]


@dataclass(frozen=True, slots=True)
class TributePlan:
    """Who pays before a deal. ``kind``: ``none`` (first deal, or tribute disabled), ``single``
    or ``double``. ``first`` is the previous deal's 上游 (None for the first deal)."""

    kind: str
    payers: tuple[str, ...] = ()
    receivers: tuple[str, ...] = ()
    first: str | None = None
    order: tuple[str, ...] = ()


def plan_tribute(prev_order: Sequence[str] | None, enabled: bool) -> TributePlan:
    """The tribute owed after a deal with finishing order ``prev_order`` (None: first deal)."""
    if not prev_order or len(prev_order) != 4:
        return TributePlan("none")
    order = tuple(prev_order)
    if not enabled:
        return TributePlan("none", first=order[0], order=order)
    if partner(order[0]) == order[1]:
        return TributePlan("double", (order[2], order[3]), (order[0], order[1]), order[0], order)
    return TributePlan("single", (order[3],), (order[0],), order[0], order)


def assign_double(
    plan: TributePlan,
    cards: Mapping[str, Card],
    level: str | None,
    tie: str,
    seat_order: Sequence[str],
    chosen: str | None = None,
) -> tuple[dict[str, str], str, str]:
    """Receiver of each payer's card and the leader, for a double down where both paid.

    Returns (payer -> receiver, leader, how) where ``how`` says which rule decided.
    ``chosen``: the payer 上游 picked (``winner_chooses``), when the pipeline saw it.
    """
    first, second = plan.receivers
    p3, p4 = plan.payers
    v3, v4 = order_value(cards[p3], level), order_value(cards[p4], level)
    if v3 != v4:
        hi, lo = (p3, p4) if v3 > v4 else (p4, p3)
        return {hi: first, lo: second}, hi, "higher"
    if tie == "fixed":
        return {p4: first, p3: second}, p4, "tie_fixed"
    if tie == "winner_chooses" and chosen in (p3, p4):
        other = p4 if chosen == p3 else p3
        return {chosen: first, other: second}, chosen, "tie_chosen"
    nxt = seat_order[(list(seat_order).index(first) + 1) % 4]
    other = p4 if nxt == p3 else p3
    how = "tie_clockwise" if tie != "winner_chooses" else "tie_chosen_unseen_clockwise"
    return {nxt: first, other: second}, nxt, how


def anti_tribute_holds(plan: TributePlan, shown: Mapping[str, Iterable[Card]]) -> bool:
    """The paying side has shown both big jokers."""
    n = 0
    for seat in plan.payers:
        n += sum(1 for c in shown.get(seat, ()) if c == BIG_JOKER)
    return n >= 2


def tribute_problem(card: Card, level: str | None) -> str | None:
    """Why a tribute card is wrong on its face (a wild), or None."""
    if level is not None and is_wild(card, level):
        return f"{card} is a wild (the ♥ level card) and cannot be tribute"
    return None


def return_problem(
    card: Card, returner: str, to: str, level: str | None, limit: str, fallback: str
) -> str | None:
    """Why a returned card breaks the profile's return limit, or None."""
    if limit == "any":
        return None
    if limit == "max_ten_to_partner" and partner(returner) != to:
        return None
    over = card.is_joker or natural_rank(card) > 10
    lvl = limit == "max_ten_not_level" and level is not None and card.rank == level
    if not over and not lvl:
        return None
    what = "a level card" if lvl and not over else "above 10"
    rule = {
        "max_ten": "returns must be 10 or lower",
        "max_ten_to_partner": "returns to one's partner must be 10 or lower",
        "max_ten_not_level": "returns must be 10 or lower and not a level card",
    }.get(limit, limit)
    tail = " (it stands only if no card met the limit)" if fallback == "smallest" else ""
    return f"return {card} is {what}: {rule}{tail}"


def higher_than_tribute(
    tribute: Card, played: Iterable[Card], received: list[Card], level: str | None
) -> Card | None:
    """A non-wild card of ``played`` higher than ``tribute`` that the payer did not receive in
    return (``received`` is consumed as copies are matched), or None."""
    lv = level or "A"
    tv = order_value(tribute, lv)
    for c in played:
        if level is not None and is_wild(c, level):
            continue
        if order_value(c, lv) > tv:
            if c in received:
                received.remove(c)
                continue
            return c
    return None
