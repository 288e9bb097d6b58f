"""Referee events: the log that every screen folds over (CONTRACT.md "Event JSON").

Every event has ``v`` (schema version, 1), ``id`` (unique and stable: a UUID5 of the table and
``seq``, so re-running the referee on the same observations gives the same ids), ``table``,
``deal`` (the deal number at the table, 1-based; 0 before the first deal), ``seq`` (per table,
gapless, from 1), ``t`` (seconds, taken from the observation that caused the event) and ``type``.
The extra fields of each type are in :data:`EVENT_FIELDS`; more fields may be present
(CONTRACT.md: "add freely") and are kept as they are. Ours on ``play``: ``legal``, ``reason``
(why not), ``left`` (cards the seat still holds) and, when the referee re-read a camera misread
(engine/referee.py ``reread``, or its second look), ``camera`` (the cards as the camera read
them) and ``reread`` (what was changed and what it cost), and ``unseen`` (cards the seat held by
the count that went down unseen: the table played on as if this play had emptied the hand). On
``correction``: ``target`` (the
event named by the correction), ``voids`` (events no longer in effect), ``observation`` (the
observations used instead, null = void) and, for the referee's own second look at a camera
play, ``reason``. On ``foul``: ``review`` (a camera reading's foul, counted only once the
referee marks it), ``ruled`` (marked by the referee) and ``confirms`` (the id of the flagged
foul a referee's mark confirms: it counts, and its penalty is not applied again). On
``notice``: ``ignored`` = ``"pass_out_of_turn"`` for a pass by a seat not on turn,
``cleared_open`` (the trick was cleared with a seat still to answer), ``barring_lapses`` (the
seats barred from a trick the referee had closed when the table swept it: they play again),
``outside`` (a play or a
pass outside a deal) and ``abandoned`` (a new deal started before the last one ended).

Pure: no I/O. :func:`parse_event` reads one JSON object (or its text) and raises
:class:`EventError` naming the field that is wrong.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "EVENT_VERSION",
    "EVENT_FIELDS",
    "FOUL_KINDS",
    "SEATS",
    "Event",
    "EventError",
    "CONTRACT_EVENT_TYPES",
    "EVENT_FIELDS",
    "FOUL_KINDS",
    "event_id",
    "parse_event",
    "parse_events",
    "dump_event",
]

EVENT_VERSION: Final = 1
SEATS: Final = ("N", "E", "S", "W")
#: The foul kinds of CONTRACT.md, exactly.
FOUL_KINDS: Final = (
    "out_of_turn",
    "exposed_card",
    "illegal_play",
    "slow_play",
    "card_count",
    "wrong_tribute",
    "duplicate_card",
)
#: Required extra fields per event type. The first eleven are CONTRACT.md's; the rest are ours.
EVENT_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "deal_started": ("level", "leader"),
    "tribute": ("from", "to", "card"),
    "tribute_returned": ("from", "to", "card"),
    "anti_tribute": ("seats",),
    "play": ("seat", "cards", "combo"),
    "pass": ("seat",),
    "seat_out": ("seat", "place"),
    "foul": ("seat", "kind", "detail"),
    "correction": ("replaces", "by"),
    "deal_ended": ("order", "levels"),
    "match_ended": ("winner",),
    # additions (CONTRACT.md allows adding): a warning that is not (yet) a foul, the moment a
    # seat must report its count (报牌), time called in a time-limited match, a best-of-N result,
    # and a notice for an observation the referee could not use (it never blocks the feed).
    "warning": ("seat", "kind", "detail"),
    "count_alert": ("seat", "count"),
    "time_called": (),
    "series_ended": ("winner",),
    "notice": ("detail",),
}
#: The event types CONTRACT.md lists (the first eleven keys above).
CONTRACT_EVENT_TYPES: Final = tuple(EVENT_FIELDS)[:11]
_HEAD: Final = ("v", "id", "table", "deal", "seq", "t", "type")
_NAMESPACE: Final = uuid.UUID("6f1c2a5e-8d0b-5c3e-9a47-1b2d3c4e5f60")


class EventError(ValueError):
    """A malformed event; the message names the field and what is expected."""


_NS_BYTES: Final = _NAMESPACE.bytes


def event_id(table: str, seq: int) -> str:
    """The stable id of event ``seq`` at ``table``: ``uuid.uuid5(namespace, name)`` as text,
    the same on every re-run (computed directly; ``uuid.UUID`` objects are slow to build)."""
    name = f"guandan-kiosk/event/{table}/{seq}".encode()
    b = bytearray(hashlib.sha1(_NS_BYTES + name, usedforsecurity=False).digest()[:16])
    b[6] = (b[6] & 0x0F) | 0x50
    b[8] = (b[8] & 0x3F) | 0x80
    x = b.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


@dataclass(frozen=True, slots=True)
class Event:
    """One event. ``data`` holds the type's fields (JSON values), in output order."""

    type: str
    table: str
    deal: int
    seq: int
    t: float
    data: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""
    v: int = EVENT_VERSION

    def __hash__(self) -> int:  # data is a dict: hash by the (unique) id
        return hash(self.id)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "v": self.v,
            "id": self.id,
            "table": self.table,
            "deal": self.deal,
            "seq": self.seq,
            "t": self.t,
            "type": self.type,
        }
        out.update(self.data)
        return out


def dump_event(event: Event) -> str:
    """One JSON line (no newline), keys in a fixed order, UTF-8 text kept as is."""
    return json.dumps(event.to_json(), ensure_ascii=False, separators=(",", ":"))


def _need(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise EventError(f"{where}: field {key!r} is missing")
    return obj[key]


def _seat_or_none(value: Any, key: str, where: str) -> None:
    if value is not None and value not in SEATS:
        raise EventError(f"{where}: field {key!r} = {value!r} is not a seat (N, E, S, W or null)")


def parse_event(obj: Mapping[str, Any] | str, *, where: str = "event") -> Event:
    """An :class:`Event` from its JSON object (or text). Raises :class:`EventError`."""
    if isinstance(obj, str):
        try:
            obj = json.loads(obj)
        except json.JSONDecodeError as exc:
            raise EventError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, Mapping):
        raise EventError(f"{where}: an event must be a JSON object, got {type(obj).__name__}")
    v = _need(obj, "v", where)
    if v != EVENT_VERSION:
        raise EventError(f"{where}: field 'v' = {v!r}; this reader knows version {EVENT_VERSION}")
    eid = _need(obj, "id", where)
    if not isinstance(eid, str) or not eid:
        raise EventError(f"{where}: field 'id' must be a non-empty string, got {eid!r}")
    table = _need(obj, "table", where)
    if not isinstance(table, str):
        raise EventError(f"{where}: field 'table' must be a string, got {table!r}")
    deal = _need(obj, "deal", where)
    if isinstance(deal, bool) or not isinstance(deal, int) or deal < 0:
        raise EventError(f"{where}: field 'deal' must be a whole number >= 0, got {deal!r}")
    seq = _need(obj, "seq", where)
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        raise EventError(f"{where}: field 'seq' must be a whole number >= 1, got {seq!r}")
    t = _need(obj, "t", where)
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
        raise EventError(f"{where}: field 't' must be seconds >= 0, got {t!r}")
    etype = _need(obj, "type", where)
    if etype not in EVENT_FIELDS:
        raise EventError(
            f"{where}: field 'type' = {etype!r} is unknown; known: " + ", ".join(EVENT_FIELDS)
        )
    for k in EVENT_FIELDS[etype]:
        _need(obj, k, f"{where} ({etype})")
    w = f"{where} ({etype})"
    if etype in ("play", "pass", "seat_out", "count_alert"):
        if obj["seat"] not in SEATS:
            raise EventError(f"{w}: field 'seat' = {obj['seat']!r} is not a seat (N, E, S, W)")
    if etype in ("foul", "warning"):
        _seat_or_none(obj["seat"], "seat", w)
        if etype == "foul" and obj["kind"] not in FOUL_KINDS:
            raise EventError(
                f"{w}: field 'kind' = {obj['kind']!r} is unknown; kinds: " + ", ".join(FOUL_KINDS)
            )
    if etype == "play" and (
        not isinstance(obj["cards"], list) or not all(isinstance(c, str) for c in obj["cards"])
    ):
        raise EventError(f"{w}: field 'cards' must be a list of card strings")
    if etype in ("tribute", "tribute_returned"):
        for k in ("from", "to"):
            if obj[k] not in SEATS:
                raise EventError(f"{w}: field {k!r} = {obj[k]!r} is not a seat (N, E, S, W)")
        if not isinstance(obj["card"], str):
            raise EventError(f"{w}: field 'card' must be a card string, got {obj['card']!r}")
    if etype == "deal_started":
        _seat_or_none(obj["leader"], "leader", w)
    if etype == "deal_ended" and (
        not isinstance(obj["order"], list) or not isinstance(obj["levels"], Mapping)
    ):
        raise EventError(f"{w}: 'order' must be a list of seats and 'levels' an object")
    if etype == "correction":
        if not isinstance(obj["replaces"], str):
            raise EventError(f"{w}: field 'replaces' must be an event id, got {obj['replaces']!r}")
        if obj["by"] is not None and not isinstance(obj["by"], str):
            raise EventError(f"{w}: field 'by' must be an event id or null, got {obj['by']!r}")
    data = {k: val for k, val in obj.items() if k not in _HEAD}
    return Event(type=etype, table=table, deal=deal, seq=seq, t=float(t), data=data, id=eid, v=v)


def parse_events(lines: Iterable[str]) -> list[Event]:
    """Events from JSON lines (blank lines skipped); errors name the line; ``seq`` is checked
    to be gapless."""
    out: list[Event] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        ev = parse_event(line, where=f"event line {n}")
        expect = out[-1].seq + 1 if out else 1
        if ev.seq != expect:
            raise EventError(f"event line {n}: field 'seq' = {ev.seq}, expected {expect} (gapless)")
        out.append(ev)
    return out
