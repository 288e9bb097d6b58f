"""A deal's recorded footage read again through the current pipeline, compared with the log.

``rerun_deal`` cuts the deal's time span out of the footage (MJPG, at the recording's rate; a
gap holds the last frame seen, so the tracker sees nothing happen there), reads it with
``kiosk.replay.observations_from_video`` (the current detector and tracker), feeds the kiosk's
own observations before the deal and then the re-read ones to a fresh referee, and lines up the
deal's plays, passes, tributes and result with the log's (corrections applied). Nothing is
written to the log: a difference becomes part of it only when a referee rules on it.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2

from engine.observations import Observation, parse_observation
from kiosk.review import log as rlog
from kiosk.table.footage import FootageError, FootageIndex

#: the events compared
COMPARED = ("play", "pass", "tribute", "tribute_returned", "deal_ended")
#: a difference this close to a gap in the footage is marked as such (seconds)
NEAR_GAP_S = 5.0


def _key(e: dict[str, Any]) -> tuple[Any, ...]:
    if e["type"] == "deal_ended":
        return ("deal_ended", tuple(e.get("order") or ()))
    cards = e.get("cards") or ([e["card"]] if e.get("card") else [])
    return (e["type"], e.get("seat") or e.get("from"), tuple(sorted(str(c) for c in cards)))


def _text(e: dict[str, Any]) -> str:
    k = _key(e)
    if k[0] == "deal_ended":
        return "deal ended " + " ".join(k[1])
    if k[0] == "pass":
        return f"{k[1]} passes"
    return f"{k[1]} {k[0].replace('_', ' ')} {' '.join(k[2])}"


def _write_span(footage: FootageIndex, t0: float, t1: float, rate: float, out: Path) -> int:
    size: tuple[int, int] | None = None
    writer: Any = None
    last: Any = None
    pending = 0  # gap frames before the first recorded one
    n = 0
    try:
        for _t, img in footage.frames(t0, t1, rate):
            if img is None and last is None:
                pending += 1
                continue
            frame = img if img is not None else last
            if writer is None:
                size = (int(frame.shape[1]), int(frame.shape[0]))
                writer = cv2.VideoWriter(str(out), cv2.VideoWriter.fourcc(*"MJPG"), rate, size)
                if not writer.isOpened():
                    raise FootageError(f"OpenCV cannot write {out}")
                for _ in range(pending):
                    writer.write(frame)
                    n += 1
            if (frame.shape[1], frame.shape[0]) != size:
                frame = cv2.resize(frame, size)
            writer.write(frame)
            last = frame
            n += 1
    finally:
        if writer is not None:
            writer.release()
    return n


def rerun_deal(
    events: list[dict[str, Any]],
    footage: FootageIndex,
    *,
    deal: int,
    profile: str,
    table: str,
    prior: Sequence[Observation] = (),
    notes: Sequence[tuple[float, str, dict[str, Any]]] = (),
    calibration: Any = None,
    detector: Any = "auto",
) -> dict[str, Any]:
    """The differences between the log's deal ``deal`` and the footage read again (see the module
    doc). ``prior``: the kiosk's observations before the deal (for the levels and tributes)."""
    from engine.profiles import load_profile
    from engine.referee import referee_events
    from kiosk.replay import observations_from_video

    view = rlog.deals_view(events, notes)
    try:
        d = rlog.deal_of(view, deal)
    except LookupError as exc:
        raise ValueError(str(exc)) from None
    lo, hi = max(0.0, d["t0"] - 2.0), d["t1"] + 2.0
    segs = [s for s in footage.segments() if s.present and s.end_t >= lo and s.start_t <= hi]
    if not segs:
        raise FootageError(
            f"deal {deal} (t={d['t0']:.1f}..{d['t1']:.1f} s) has no footage in {footage.folder}"
        )
    c0 = max(math.floor(lo), math.floor(min(s.start_t for s in segs)))
    c1 = min(math.ceil(hi), math.ceil(max(s.end_t for s in segs)))
    rate = max(1.0, round(max(s.rate for s in segs), 3))
    gaps = footage.gaps(c0, c1, rlog.camera_outages(notes))
    with tempfile.TemporaryDirectory(prefix="gd-rerun-") as tmp:
        span = Path(tmp) / "deal.avi"
        frames = _write_span(footage, c0, c1, rate, span)
        read = [
            dataclasses.replace(o, t=round(o.t + c0, 3))
            for o in observations_from_video(span, calibration, detector)
        ]
    if not any(o.type == "deal_start" for o in read):
        # the deal lamp was not in the footage: start the deal where the log did
        start = next((e for e in d["events"] if e["type"] == "deal_started"), None)
        raw: dict[str, Any] = {"t": d["t0"], "type": "deal_start"}
        if start is not None and start.get("lead_by") == "first_card" and start.get("leader"):
            raw["first_leader"] = start["leader"]
        read.insert(0, parse_observation(raw))
    fresh = referee_events(load_profile(profile), [*prior, *read], table=table)
    ndeal = max((e.deal for e in fresh if e.type == "deal_started"), default=deal)
    again = [e.to_json() for e in _effective(fresh) if e.deal == ndeal and e.type in COMPARED]
    live = [
        e
        for e in d["events"]
        if e["effective"] and e["type"] in COMPARED and e["type"] != "correction"
    ]
    a, b = [_key(e) for e in live], [_key(e) for e in again]
    diffs: list[dict[str, Any]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        ls, rs = live[i1:i2], again[j1:j2]
        ts = [float(e["t"]) for e in (*ls, *rs)]
        near = [
            g
            for g in gaps
            if any(g["start_t"] - NEAR_GAP_S <= t <= g["end_t"] + NEAR_GAP_S for t in ts)
        ]
        kind = {"replace": "changed", "delete": "not_seen_again", "insert": "new_in_footage"}[op]
        text = (
            f"{kind}: log "
            + ("; ".join(f"#{e['seq']} t={e['t']:.1f} {_text(e)}" for e in ls) or "-")
            + " | re-read "
            + ("; ".join(f"t={e['t']:.1f} {_text(e)}" for e in rs) or "-")
            + (f" (near a footage gap: {near[0]['kind']})" if near else "")
        )
        diffs.append(
            {
                "kind": kind,
                "log": [
                    {k: e.get(k) for k in ("id", "seq", "t", "type", "seat", "cards")} for e in ls
                ],
                "reread": [{k: e.get(k) for k in ("t", "type", "seat", "cards")} for e in rs],
                "near_gap": near[0] if near else None,
                "text": text,
            }
        )
    summary = (
        f"table {table} deal {deal}: {len(live)} events in the log, {len(again)} re-read from "
        f"{frames} frames (t={c0}..{c1} s, {len(gaps)} gaps); {len(diffs)} differences; the log "
        "is unchanged (a difference becomes a ruling only when a referee applies it)"
    )
    return {
        "deal": deal,
        "t0": c0,
        "t1": c1,
        "frames": frames,
        "gaps": gaps,
        "log_events": len(live),
        "reread_events": len(again),
        "differences": diffs,
        "summary": summary,
    }


def _effective(events: Sequence[Any]) -> list[Any]:
    from engine.deal import effective_events

    return effective_events(events)
