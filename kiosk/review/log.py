"""The event log as the review desk shows it (a fold over the logged events and notes).

Nothing here writes: rulings are made by :mod:`kiosk.review.routes` through the referee's
``correction`` flow (new events), and the referee's name and reason also go to a ``ruling``
note so the desk can list who ruled what.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from engine.events import Event

#: event types a referee is asked to look at
DISPUTED_TYPES = ("foul", "correction", "notice", "warning")
#: ruling actions (POST /api/review/ruling)
ACTIONS = ("confirm", "correct", "void", "foul_add", "foul_remove")


def event_json(ev: Event | dict[str, Any]) -> dict[str, Any]:
    return ev.to_json() if isinstance(ev, Event) else dict(ev)


def effective_ids(events: Sequence[dict[str, Any]]) -> set[str]:
    """Ids of the events still in effect after the log's corrections (engine.deal's rule: a
    correction drops the events from the one it ``replaces`` on)."""
    eff: list[str] = []
    index: dict[str, int] = {}
    for ev in events:
        if ev["type"] == "correction":
            cut = index.get(str(ev.get("replaces")))
            if cut is None:
                continue
            for e in eff[cut:]:
                index.pop(e, None)
            del eff[cut:]
            continue
        index[ev["id"]] = len(eff)
        eff.append(ev["id"])
    return set(eff)


def camera_outages(
    notes: Iterable[tuple[float, str, dict[str, Any]]],
) -> list[tuple[float, float | None]]:
    """(lost t, restored t or None) from the kiosk's ``camera`` notes."""
    out: list[tuple[float, float | None]] = []
    lost: float | None = None
    for _at, kind, body in notes:
        if kind != "camera":
            continue
        if body.get("event") == "lost":
            lost = float(body.get("t") or 0.0)
        elif body.get("event") == "restored":
            start = float(body.get("lost_t", lost if lost is not None else body.get("t", 0.0)))
            out.append((start, float(body.get("t") or start)))
            lost = None
    if lost is not None:
        out.append((lost, None))
    return out


def rulings(notes: Iterable[tuple[float, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [dict(body, at=at) for at, kind, body in notes if kind == "ruling"]


def is_disputed(ev: dict[str, Any]) -> bool:
    return ev["type"] in DISPUTED_TYPES or bool(ev.get("review"))


def deals_view(
    events: Iterable[Event | dict[str, Any]],
    notes: Iterable[tuple[float, str, dict[str, Any]]] = (),
) -> list[dict[str, Any]]:
    """The deals in order, each ``{deal, t0, t1, level, over, events, disputes}`` (disputes: the
    open ones); each event with ``effective`` (False once a correction voided it), ``disputed``,
    its ``rulings``, ``ruled`` (made by a ruling) and ``open`` (disputed, nobody ruled yet)."""
    evs = [event_json(e) for e in events]
    notes = list(notes)
    eff = effective_ids(evs)
    by_target: dict[str, list[dict[str, Any]]] = {}
    made: set[str] = set()  # events a ruling made (a referee's foul, a correction)
    for r in rulings(notes):
        by_target.setdefault(str(r.get("event_id")), []).append(r)
        made.update(str(x) for x in r.get("events") or ())
    confirmed = {str(b.get("id")) for _a, k, b in notes if k == "confirm"}
    deals: dict[int, dict[str, Any]] = {}
    for ev in evs:
        d = deals.setdefault(
            int(ev["deal"]),
            {
                "deal": int(ev["deal"]),
                "t0": ev["t"],
                "t1": ev["t"],
                "level": None,
                "over": False,
                "events": [],
                "disputes": 0,
            },
        )
        d["t0"] = min(d["t0"], ev["t"])
        d["t1"] = max(d["t1"], ev["t"])
        if ev["type"] == "deal_started":
            d["level"] = ev.get("level")
        if ev["type"] == "deal_ended":
            d["over"] = True
        row = dict(ev)
        row["effective"] = ev["type"] == "correction" or ev["id"] in eff
        row["disputed"] = is_disputed(ev)
        row["confirmed"] = ev["id"] in confirmed
        row["rulings"] = by_target.get(ev["id"], [])
        row["ruled"] = bool(ev.get("ruled")) or ev["id"] in made
        row["open"] = (
            row["disputed"]
            and row["effective"]
            and not (row["rulings"] or row["confirmed"] or row["ruled"])
        )
        d["disputes"] += int(row["open"])
        d["events"].append(row)
    return [deals[k] for k in sorted(deals)]


def deal_of(view: list[dict[str, Any]], deal: int) -> dict[str, Any]:
    for d in view:
        if d["deal"] == deal:
            return d
    have = ", ".join(str(d["deal"]) for d in view) or "none"
    raise LookupError(f"deal {deal} is not in this table's log (deals: {have})")


def open_disputes(view: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events flagged for the referee that no ruling answered yet (fouls under review,
    re-reads, notices): what the disk budget must keep the footage of."""
    return [ev for d in view for ev in d["events"] if ev["open"]]
