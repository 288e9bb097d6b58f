"""Observations: what the table pipeline tells the referee (CONTRACT.md "Observation JSON").

One JSON object per line, each with ``t`` (seconds) and ``type``:

=================  ============================================================================
``deal_start``     ``{first_leader?, level?}``: a new deal is dealt. ``first_leader``: the seat
                   that drew the face-up card (first deal of a match). ``level``: the cut card
                   of a random-level profile (``"joker"`` or null: no level card, no wilds).
``played``         ``{seat, cards, doubts?}``: cards landed in a seat's play zone. ``doubts``
                   (ours): the camera's runner-up readings of cards it was unsure of,
                   ``[{"card": "DA", "or": [["D4", 1.2], [null, 3.1]]}]`` (one entry per card
                   instance; ``null``: no card there; cost = ln(p(card) / p(other)) in nats);
                   an entry ``{"card": null, "or": [["CK", 1.5]]}`` is a card the camera may
                   have missed (a fan's lower card it was not sure of), ``or`` the cards it
                   may be and what adding each costs; the referee uses them only when the
                   play is illegal as read. ``amends`` (ours): the time of an earlier
                   ``played`` of the same seat that these cards belong to (the camera found
                   them late, with no hand near); the referee reads that play again with them
                   when the table's continuation clashes no more (an illegal play is a clash;
                   engine/decoder.py ``Decoder._late_cards``). ``was``
                   (ours): a list as long as ``cards``: cards of an earlier ``played`` of the
                   seat, still lying in its zone, that the camera now reads as ``cards`` (the
                   same rank, another suit: the same physical card read anew, not a new
                   play); the referee takes the new reading only where it clashes less with
                   the table's continuation (engine/decoder.py ``Decoder._late_cards``).
``pass``           ``{seat}``: a pass (button or gesture).
``tribute``        ``{seat, card, to?}``: a tribute card given by ``seat`` (``to``: the receiver,
                   when the pipeline saw it; needed when 上游 chooses between equal tributes).
``tribute_return`` ``{seat, card, to?}``: a card returned by ``seat``.
``shown``          ``{seat, cards}``: cards shown, e.g. two big jokers for anti-tribute.
``exposed``        ``{seat|null, cards}``: cards seen outside a play.
``glimpse``        ``{seat, cards}`` (ours): cards the camera may have seen land in a seat's play
                   zone but too faintly to count (a joker by one corner under the corner
                   floor: a ghost joker in a court card's picture looks the same). No play:
                   the referee uses it only in hindsight, when the table's continuation shows
                   that seat played something the camera did not count (engine/edits.py
                   ``Edits._put_in``).
``trick_cleared``  ``{}``: the table was cleared.
``count_report``   ``{seat, count}`` (ours): a seat's spoken card count (报牌), when reported.
``correction``     ``{replaces, with?}``: a referee's fix of the event ``replaces`` (an event
                   id); ``with`` is an observation (or a list of them) to use instead of the
                   one that produced that event; absent = void it.
=================  ============================================================================

Any observation may carry ``source`` (ours): ``"camera"`` when the table pipeline inferred it
from the footage (``from_camera``). A foul the referee judges on such an observation (or on a
``played`` with ``doubts``) waits for the floor referee: flagged ``review``, it counts towards the
pair's limit, and so may end a deal or a match, only once marked (engine/referee.py
``CAMERA_REVIEW_FOULS``). Without it an observation is a person's entry or the simulator's.

Unknown extra fields are kept in ``extra`` (CONTRACT.md: "add freely"); the simulator puts its
ground truth there (``mischief``). :func:`parse_observation` raises :class:`ObservationError`
naming the field (and the line, through ``where``).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from engine.cards import Card, CardError, parse_card, parse_level
from engine.events import FOUL_KINDS

__all__ = [
    "OBSERVATION_TYPES",
    "CAMERA_SOURCE",
    "Observation",
    "ObservationError",
    "parse_observation",
    "dump_observation",
    "from_camera",
    "is_camera",
]

SEATS: Final = ("N", "E", "S", "W")
#: ``source`` of an observation the table pipeline inferred from the footage
CAMERA_SOURCE: Final = "camera"
OBSERVATION_TYPES: Final = (
    "deal_start",
    "played",
    "pass",
    "tribute",
    "tribute_return",
    "shown",
    "exposed",
    "glimpse",
    "trick_cleared",
    "count_report",
    "foul",
    "deal_result",
    "correction",
)
_KNOWN: Final = {
    "t",
    "type",
    "seat",
    "cards",
    "card",
    "to",
    "first_leader",
    "level",
    "count",
    "replaces",
    "with",
    "doubts",
}


class ObservationError(ValueError):
    """A malformed observation; the message names the line (when known) and the field."""


@dataclass(frozen=True, slots=True)
class Observation:
    """One observation. Only the fields of its ``type`` are meaningful."""

    t: float
    type: str
    seat: str | None = None
    cards: tuple[Card, ...] = ()
    to: str | None = None
    first_leader: str | None = None
    #: deal_start of a random-level profile: the cut rank; "" = not given; None = a joker.
    level: str | None = ""
    count: int = -1
    replaces: str = ""
    #: correction: the observations to use instead (empty = void)
    replacement: tuple[Observation, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: played: the camera's runner-up readings of cards it was not sure of, one entry per card
    #: instance: ``(card, ((other card or None = no card there, cost), ...))``, cost = ln(p(card)
    #: / p(other)) >= 0 in nats, cheapest first. The referee re-reads a play that is illegal as
    #: read (engine/channel.py ``reread``). An entry whose card is None is a card the camera
    #: may have missed: its readings are the cards it may be (none of them None).
    doubts: tuple[tuple[Card | None, tuple[tuple[Card | None, float], ...]], ...] = ()

    def __hash__(self) -> int:  # ``extra`` is a dict
        return hash((self.t, self.type, self.seat, self.cards, self.replaces))

    @property
    def card(self) -> Card:
        """The single card of a tribute or a return."""
        return self.cards[0]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": self.t, "type": self.type}
        ty = self.type
        if ty == "deal_start":
            if self.first_leader is not None:
                out["first_leader"] = self.first_leader
            if self.level != "":
                out["level"] = self.level if self.level is not None else "joker"
        elif ty in ("played", "shown", "exposed", "glimpse"):
            out["seat"] = self.seat
            out["cards"] = [str(c) for c in self.cards]
            if self.doubts:
                out["doubts"] = [
                    {
                        "card": None if c is None else str(c),
                        "or": [[None if o is None else str(o), v] for o, v in alts],
                    }
                    for c, alts in self.doubts
                ]
        elif ty == "pass":
            out["seat"] = self.seat
        elif ty in ("tribute", "tribute_return"):
            out["seat"] = self.seat
            out["card"] = str(self.cards[0])
            if self.to is not None:
                out["to"] = self.to
        elif ty == "count_report":
            out["seat"] = self.seat
            out["count"] = self.count
        elif ty == "foul":  # ``kind`` and ``detail`` travel in ``extra``
            out["seat"] = self.seat
        # deal_result: ``order`` (and ``detail``) travel in ``extra``
        elif ty == "correction":
            out["replaces"] = self.replaces
            if self.replacement:
                reps = [o.to_json() for o in self.replacement]
                out["with"] = reps[0] if len(reps) == 1 else reps
        out.update(self.extra)
        return out


def from_camera(obs: Observation) -> Observation:
    """``obs`` marked as the table pipeline's (``source: camera``)."""
    if obs.extra.get("source") == CAMERA_SOURCE:
        return obs
    return replace(obs, extra={**obs.extra, "source": CAMERA_SOURCE})


def is_camera(obs: Observation) -> bool:
    """Whether ``obs`` is the camera's reading: marked ``source: camera``, or a play with the
    camera's runner-up readings (``doubts``)."""
    return bool(obs.doubts) or obs.extra.get("source") == CAMERA_SOURCE


def amended(before: Sequence[Observation], late: Observation) -> int | None:
    """The index in ``before`` of the ``played`` that ``late`` amends (``extra["amends"]``: the
    time of that seat's play; the latest such), or None: none there, or ``late`` amends none."""
    at = late.extra.get("amends") if late.type == "played" else None
    if at is None:
        return None
    return next(
        (
            i
            for i in range(len(before) - 1, -1, -1)
            if before[i].type == "played" and before[i].seat == late.seat and before[i].t == at
        ),
        None,
    )


def reread_of(before: Sequence[Observation], again: Observation) -> int | None:
    """The index in ``before`` of the ``played`` whose cards ``again`` reads anew
    (``extra["was"]``): the seat's latest play since the table was last cleared (or the
    deal began) that holds every card named there; None: none, or ``again`` reads none anew."""
    old = again.extra.get("was") if again.type == "played" else None
    if not old:
        return None
    need = Counter(str(c) for c in old)
    for i in range(len(before) - 1, -1, -1):
        o = before[i]
        if o.type in ("trick_cleared", "deal_start"):
            return None
        if o.type == "played" and o.seat == again.seat and "was" not in o.extra:
            if not need - Counter(str(c) for c in o.cards):
                return i
    return None


def relabelled(cards: Iterable[Card], again: Observation) -> tuple[Card, ...]:
    """``cards`` with each card that ``again`` reads anew (``extra["was"]``) replaced by
    its new reading (the card at the same place in ``again.cards``)."""
    out = list(cards)
    for old, new in zip(again.extra.get("was", ()), again.cards, strict=True):
        i = next(i for i, c in enumerate(out) if str(c) == str(old))
        out[i] = new
    return tuple(out)


def merge_amends(observations: Iterable[Observation]) -> list[Observation]:
    """``observations`` with each ``played`` that amends an earlier one (``extra["amends"]``:
    the time of the seat's play it belongs to; cards the camera found late) merged into that
    play, and each that reads an earlier play's cards anew (``extra["was"]``) applied to
    it: what the camera last saw each play hold. One with no such play stays as it is."""
    out: list[Observation] = []
    for o in observations:
        j = amended(out, o)
        r = reread_of(out, o)
        if j is not None:
            out[j] = replace(out[j], cards=out[j].cards + o.cards, doubts=out[j].doubts + o.doubts)
        elif r is not None:
            out[r] = replace(out[r], cards=relabelled(out[r].cards, o))
        else:
            out.append(o)
    return out


def dump_observation(obs: Observation) -> str:
    """One JSON line (no newline)."""
    return json.dumps(obs.to_json(), ensure_ascii=False, separators=(",", ":"))


def _fail(where: str, msg: str) -> ObservationError:
    return ObservationError(f"{where}: {msg}")


def _seat(obj: Mapping[str, Any], key: str, where: str, *, nullable: bool = False) -> str | None:
    if key not in obj:
        if nullable:
            return None
        raise _fail(where, f"field {key!r} is missing; give a seat N, E, S or W")
    v = obj[key]
    if v is None and nullable:
        return None
    if not isinstance(v, str) or v.strip().upper() not in SEATS:
        extra = " or null" if nullable else ""
        raise _fail(where, f"field {key!r} = {v!r} is not a seat; use N, E, S or W{extra}")
    return v.strip().upper()


def _cards(obj: Mapping[str, Any], key: str, where: str) -> tuple[Card, ...]:
    if key not in obj:
        raise _fail(where, f"field {key!r} is missing; give a list of cards like ['S3', 'HT']")
    v = obj[key]
    if isinstance(v, str):
        items: list[Any] = [x for x in v.replace(",", " ").split() if x]
    elif isinstance(v, list):
        items = v
    else:
        raise _fail(where, f"field {key!r} must be a list of cards, got {v!r}")
    if not items:
        raise _fail(where, f"field {key!r} is empty; an observation of cards needs at least one")
    out: list[Card] = []
    for i, c in enumerate(items):
        try:
            out.append(parse_card(c))
        except CardError as exc:
            raise _fail(where, f"field {key!r}[{i}]: {exc}") from None
    # A third copy of a card is not malformed input: it is a probable misread, which the
    # referee flags as ``duplicate_card`` (the feed never stops on it).
    return tuple(out)


def _card(obj: Mapping[str, Any], key: str, where: str) -> tuple[Card, ...]:
    if key not in obj:
        raise _fail(where, f"field {key!r} is missing; give one card like 'SA'")
    v = obj[key]
    if isinstance(v, list) and len(v) == 1:
        v = v[0]
    try:
        return (parse_card(v),)
    except CardError as exc:
        raise _fail(where, f"field {key!r}: {exc}") from None


def _doubts(
    obj: Mapping[str, Any], cards: tuple[Card, ...], where: str
) -> tuple[tuple[Card | None, tuple[tuple[Card | None, float], ...]], ...]:
    """``doubts`` of a played observation: ``[{"card": "DA", "or": [["D4", 1.2], [null, 3]]}]``
    (each ``card`` one of the play's cards, at most as often as it is there, or null: a card
    the camera may have missed; ``or``: other readings, a card or null = no card there, with a
    cost >= 0; a missed card's are cards)."""
    raw = obj.get("doubts")
    if raw is None:
        return ()
    hint = 'give a list like [{"card": "DA", "or": [["D4", 1.2], [null, 3.0]]}]'
    if not isinstance(raw, list):
        raise _fail(where, f"field 'doubts' must be a list, got {raw!r}; {hint}")
    left: dict[Card, int] = {}
    for c in cards:
        left[c] = left.get(c, 0) + 1
    out: list[tuple[Card | None, tuple[tuple[Card | None, float], ...]]] = []
    for i, item in enumerate(raw):
        f = f"field 'doubts'[{i}]"
        if not isinstance(item, Mapping) or "card" not in item or "or" not in item:
            raise _fail(where, f"{f} = {item!r} needs 'card' and 'or'; {hint}")
        card: Card | None = None
        if item["card"] is not None:  # null: a card the camera may have missed
            try:
                card = parse_card(item["card"])
            except CardError as exc:
                raise _fail(where, f"{f} 'card': {exc}") from None
            if left.get(card, 0) < 1:
                raise _fail(where, f"{f}: {card} is not (or not that often) among the played cards")
            left[card] -= 1
        alts = item["or"]
        if not isinstance(alts, list):
            raise _fail(where, f"{f} 'or' must be a list of [card or null, cost]; {hint}")
        parsed: list[tuple[Card | None, float]] = []
        for j, pair in enumerate(alts):
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                raise _fail(where, f"{f} 'or'[{j}] = {pair!r} is not [card or null, cost]")
            other, cost = pair
            if (
                isinstance(cost, bool)
                or not isinstance(cost, int | float)
                or not math.isfinite(cost)
                or cost < 0
            ):
                raise _fail(where, f"{f} 'or'[{j}]: cost must be a number >= 0, got {cost!r}")
            try:
                alt = None if other is None else parse_card(other)
            except CardError as exc:
                raise _fail(where, f"{f} 'or'[{j}]: {exc}") from None
            if card is None and alt is None:
                raise _fail(
                    where,
                    f"{f} 'or'[{j}]: a card the camera may have missed (card null) is read as "
                    "cards, not null",
                )
            parsed.append((alt, float(cost)))
        out.append((card, tuple(parsed)))
    return tuple(out)


def _was(obj: Mapping[str, Any], cards: tuple[Card, ...], where: str) -> list[str]:
    """A ``played``'s ``was``: the earlier readings of its ``cards``, one per card, each of
    the same rank (the same physical card, its suit read anew)."""
    if "amends" in obj:
        raise _fail(where, "fields 'amends' and 'was' together; cards are either new or read anew")
    old = _cards(obj, "was", where)
    if len(old) != len(cards):
        raise _fail(
            where,
            f"field 'was' names {len(old)} cards for {len(cards)} in 'cards'; give the "
            "earlier reading of each card, in the same order",
        )
    for i, (a, b) in enumerate(zip(old, cards, strict=True)):
        if a.rank != b.rank or a.is_joker or a == b:
            raise _fail(
                where,
                f"field 'was'[{i}] = {a} for {b}: a card read anew keeps its rank and "
                "changes its suit (jokers are not read anew)",
            )
    return [str(c) for c in old]


def parse_observation(obj: Mapping[str, Any] | str, *, where: str = "observation") -> Observation:
    """An :class:`Observation` from its JSON object or text; :class:`ObservationError` names the
    field that is wrong (``where`` names the line, e.g. ``"obs.jsonl line 12"``)."""
    if isinstance(obj, str):
        try:
            obj = json.loads(obj)
        except json.JSONDecodeError as exc:
            raise _fail(where, f"not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, Mapping):
        raise _fail(where, f"an observation must be a JSON object, got {type(obj).__name__}")
    if "t" not in obj:
        raise _fail(where, "field 't' is missing; give seconds since the recording started")
    t = obj["t"]
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
        raise _fail(where, f"field 't' must be a number of seconds >= 0, got {t!r}")
    if "type" not in obj:
        raise _fail(where, "field 'type' is missing; one of " + ", ".join(OBSERVATION_TYPES))
    ty = obj["type"]
    if ty not in OBSERVATION_TYPES:
        raise _fail(
            where, f"field 'type' = {ty!r} is unknown; one of " + ", ".join(OBSERVATION_TYPES)
        )
    w = f"{where} ({ty})"
    extra = {k: v for k, v in obj.items() if k not in _KNOWN}
    tf = float(t)
    if ty == "deal_start":
        fl = _seat(obj, "first_leader", w, nullable=True)
        level: str | None = ""
        if "level" in obj:
            lv = obj["level"]
            if lv is None or (isinstance(lv, str) and lv.strip().lower() in ("joker", "none")):
                level = None
            else:
                try:
                    level = parse_level(lv)
                except CardError as exc:
                    raise _fail(w, f"field 'level': {exc} (or 'joker' for no level)") from None
        return Observation(tf, ty, first_leader=fl, level=level, extra=extra)
    if ty in ("played", "shown", "glimpse"):
        seat, cards = _seat(obj, "seat", w), _cards(obj, "cards", w)
        doubts = _doubts(obj, cards, w) if ty == "played" else ()
        if ty == "played" and "amends" in obj:
            at = obj["amends"]
            if isinstance(at, bool) or not isinstance(at, int | float) or not math.isfinite(at):
                raise _fail(
                    w,
                    f"field 'amends' = {at!r} is not a time; give the t (seconds) of the "
                    "seat's earlier 'played' these cards belong to",
                )
            extra["amends"] = float(at)
        if ty == "played" and "was" in obj:
            extra["was"] = _was(obj, cards, w)
        return Observation(tf, ty, seat=seat, cards=cards, extra=extra, doubts=doubts)
    if ty == "exposed":
        seat = _seat(obj, "seat", w, nullable=True)
        return Observation(tf, ty, seat=seat, cards=_cards(obj, "cards", w), extra=extra)
    if ty == "pass":
        return Observation(tf, ty, seat=_seat(obj, "seat", w), extra=extra)
    if ty in ("tribute", "tribute_return"):
        seat = _seat(obj, "seat", w)
        to = _seat(obj, "to", w, nullable=True)
        return Observation(tf, ty, seat=seat, cards=_card(obj, "card", w), to=to, extra=extra)
    if ty == "trick_cleared":
        return Observation(tf, ty, extra=extra)
    if ty == "count_report":
        seat = _seat(obj, "seat", w)
        if "count" not in obj:
            raise _fail(w, "field 'count' is missing; give the number of cards reported")
        n = obj["count"]
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 27:
            raise _fail(w, f"field 'count' must be a whole number 0..27, got {n!r}")
        return Observation(tf, ty, seat=seat, count=n, extra=extra)
    if ty == "foul":  # a foul the referee marked by hand (kiosk referee mode)
        seat = _seat(obj, "seat", w)
        kind = obj.get("kind")
        if kind not in FOUL_KINDS:
            raise _fail(
                w, f"field 'kind' = {kind!r} is not a foul kind; one of {', '.join(FOUL_KINDS)}"
            )
        detail = obj.get("detail", "")
        if detail is not None and not isinstance(detail, str):
            raise _fail(w, f"field 'detail' must be text, got {detail!r}")
        return Observation(tf, ty, seat=seat, extra=extra)
    if ty == "deal_result":  # the referee ends the deal in progress with a finishing order
        raw_order = obj.get("order")
        if not isinstance(raw_order, list) or len(raw_order) != 4:
            raise _fail(
                w, f"field 'order' must list the four seats first to last, got {raw_order!r}"
            )
        order = [_seat({"order": s}, "order", w) for s in raw_order]
        if len(set(order)) != 4:
            raise _fail(
                w, f"field 'order' = {raw_order!r} repeats a seat; give N, E, S, W once each"
            )
        extra["order"] = order
        return Observation(tf, ty, extra=extra)
    # correction
    if "replaces" not in obj:
        raise _fail(w, "field 'replaces' is missing; give the id of the event to fix")
    rid = obj["replaces"]
    if not isinstance(rid, str) or not rid:
        raise _fail(w, f"field 'replaces' must be an event id string, got {rid!r}")
    reps: tuple[Observation, ...] = ()
    if "with" in obj and obj["with"] is not None:
        raw = obj["with"]
        items: Sequence[Any] = raw if isinstance(raw, list) else [raw]
        parsed: list[Observation] = []
        for i, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise _fail(w, f"field 'with' must be an observation object, got {item!r}")
            sub = dict(item)
            sub.setdefault("t", tf)
            o = parse_observation(sub, where=f"{w} field 'with'[{i}]")
            if o.type in ("correction", "deal_start"):
                raise _fail(w, f"field 'with'[{i}]: a correction cannot insert a {o.type}")
            parsed.append(o)
        reps = tuple(parsed)
    return Observation(tf, ty, replaces=rid, replacement=reps, extra=extra)
