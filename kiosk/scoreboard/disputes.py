"""Open disputes per table, for the head referee at the centre (issue 43).

Derived from the events the scoreboard already stores, the way the table kiosk's review desk
derives them (:mod:`kiosk.review.log`): an event is *disputed* when it is a foul, a correction,
a notice or a warning, or a camera foul flagged for ``review``; it is *open* while it is still
in effect (no correction replaced it) and no referee answered it. What the scoreboard sees of a
referee's answer is in the log too: a ``correction`` that names its ``referee`` (a void or a
correct ruling), a foul ``ruled`` by the referee, and a ruled foul that ``confirms`` a flagged
one. The kiosk's ``confirm`` notes on events that need no new event (a notice looked at and
left as it is) stay on the kiosk: such an event stays listed here until it is replaced or the
match ends, and the kiosk's review page is the place that says it was confirmed.

The scoreboard never copies footage: each dispute links to the table kiosk's review page
(``http://KIOSK/review?deal=N``). The kiosk's address comes from
``GUANDAN_SCOREBOARD_KIOSK_URLS``: either a template with ``{table}`` (``http://kiosk-{table}:8080``)
or a comma-separated list ``T1=http://10.0.0.11:8080,T2=http://10.0.0.12:8080``. The hall health
reports do not carry the kiosk's address, so there is nothing to learn it from there.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.orm import Session

from kiosk.review.log import effective_ids, is_disputed
from kiosk.scoreboard.models import EventRow, GameTable

ENV = "GUANDAN_SCOREBOARD_KIOSK_URLS"


class KioskUrlError(ValueError):
    """``GUANDAN_SCOREBOARD_KIOSK_URLS`` cannot be read; the message says how to write it."""


def parse_kiosk_urls(text: str | None) -> tuple[str | None, dict[str, str]]:
    """``(template, {table code: url})`` from the setting's text (empty: neither)."""
    text = (text or "").strip()
    if not text:
        return None, {}

    def check(url: str, what: str) -> str:
        parts = urlsplit(url.replace("{table}", "t"))
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise KioskUrlError(
                f"{ENV}: {what} {url!r} is not an http(s) URL; write e.g. "
                "'http://kiosk-{table}:8080' or 'T1=http://10.0.0.11:8080,T2=http://10.0.0.12:8080'"
            )
        return url.rstrip("/")

    if "=" not in text:
        if "{table}" not in text:
            raise KioskUrlError(
                f"{ENV}: {text!r} names no table: give a template with {{table}} "
                "('http://kiosk-{table}:8080') or TABLE=URL pairs ('T1=http://10.0.0.11:8080')"
            )
        return check(text, "template"), {}
    urls: dict[str, str] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        code, sep, url = item.partition("=")
        if not sep or not code.strip() or not url.strip():
            raise KioskUrlError(
                f"{ENV}: {item!r} is not TABLE=URL; write e.g. 'T1=http://10.0.0.11:8080'"
            )
        urls[code.strip()] = check(url.strip(), f"the URL of table {code.strip()!r}")
    return None, urls


def kiosk_url(code: str, setting: str | None = None) -> str | None:
    """The review desk's base URL of table ``code`` (None: not set). Raises
    :class:`KioskUrlError` for a setting that cannot be read."""
    template, urls = parse_kiosk_urls(os.environ.get(ENV) if setting is None else setting)
    if code in urls:
        return urls[code]
    if template is not None:
        return template.replace("{table}", code)
    return None


def open_disputes(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The open disputes of one table's log (events in seq order), oldest first."""
    eff = effective_ids(events)
    answered = {str(e["confirms"]) for e in events if e.get("type") == "foul" and e.get("confirms")}
    out = []
    for ev in events:
        if not is_disputed(ev):
            continue
        if ev["type"] != "correction" and ev["id"] not in eff:
            continue  # replaced by a correction: the correction is what is in effect
        if ev.get("ruled") or ev["id"] in answered:
            continue
        if ev["type"] == "correction" and ev.get("referee"):
            continue  # a referee's ruling is the answer, not a question
        out.append(ev)
    return out


def summary(ev: dict[str, Any]) -> dict[str, Any]:
    """What the page shows of a dispute (no cards of hands, no footage)."""
    kind = "review" if ev.get("review") else ev["type"]
    return {
        "id": ev["id"],
        "seq": ev["seq"],
        "deal": ev["deal"],
        "t": ev["t"],
        "type": ev["type"],
        "kind": kind,
        "seat": ev.get("seat"),
        "foul": ev.get("kind") if ev["type"] == "foul" else None,
        "detail": str(ev.get("detail") or ev.get("reason") or "")[:200],
    }


def table_disputes(
    s: Session, tables: Iterable[GameTable], setting: str | None = None
) -> list[dict[str, Any]]:
    """Per table (in the tournament's order): ``{table, code, kiosk, error, disputes}``, each
    dispute with its ``review`` link (None when the kiosk's address is not set)."""
    out = []
    for gt in tables:
        bodies = list(
            s.execute(
                select(EventRow.body).where(EventRow.table_id == gt.id).order_by(EventRow.seq)
            ).scalars()
        )
        error = None
        try:
            base = kiosk_url(gt.code, setting)
        except KioskUrlError as exc:
            base, error = None, str(exc)
        rows = []
        for ev in open_disputes(bodies):
            row = summary(ev)
            row["review"] = f"{base}/review?deal={row['deal']}" if base else None
            rows.append(row)
        out.append(
            {"table": gt.id, "code": gt.code, "kiosk": base, "error": error, "disputes": rows}
        )
    return out
