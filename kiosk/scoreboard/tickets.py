"""Short-lived secrets in URLs: the token page that survives a reload, the printed table cards
and their pairing codes (``models.Ticket``).

A ticket is 32 random bytes (URL-safe text) given once in a redirect or a QR code; the database
keeps only its SHA-256, and what it opens (a table's token, a card print's codes) is stored
*sealed*: XORed with a SHAKE-256 key stream of the ticket, so neither a copy of the database nor
the URL alone gives the secret.

* ``reveal`` (15 min): made when the admin page adds a table or rotates a token; the page then
  redirects (303) to ``/admin/{id}/tokens/{ticket}``, which shows the token as often as it is
  reloaded and makes nothing new.
* ``cards`` (1 h): a print of table cards (``/admin/{id}/cards/{ticket}``): the tables' pairing
  codes, sealed as JSON.
* ``pair`` (7 days, once): a table card's QR code opens ``/pair/{ticket}``; confirming it gives
  the table a new token (the old one stops working), shown there for 15 min with the command
  line for the kiosk. Printing new cards voids the table's unclaimed codes.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from kiosk.scoreboard.models import GameTable, Ticket
from kiosk.scoreboard.service import ApiError, get_tournament, hash_token, new_token

REVEAL_S = 15 * 60
CARDS_S = 3600
PAIR_S = 7 * 24 * 3600


def _id(ticket: str) -> str:
    return hashlib.sha256(ticket.encode()).hexdigest()


def seal(text: str, ticket: str) -> str:
    data = text.encode()
    key = hashlib.shake_256(b"guandan-ticket|" + ticket.encode()).digest(len(data))
    return bytes(a ^ b for a, b in zip(data, key, strict=True)).hex()


def unseal(sealed: str, ticket: str) -> str:
    data = bytes.fromhex(sealed)
    key = hashlib.shake_256(b"guandan-ticket|" + ticket.encode()).digest(len(data))
    return bytes(a ^ b for a, b in zip(data, key, strict=True)).decode()


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


def _new(
    s: Session,
    kind: str,
    tid: int,
    table: str | None,
    secret: str | None,
    ttl_s: float,
) -> str:
    ticket = secrets.token_urlsafe(32)
    now = _now()
    s.execute(delete(Ticket).where(Ticket.expires_at < now))  # expired ones go as new ones come
    s.add(
        Ticket(
            id=_id(ticket),
            kind=kind,
            tournament_id=tid,
            table_id=table,
            sealed=None if secret is None else seal(secret, ticket),
            created_at=now,
            expires_at=now + timedelta(seconds=ttl_s),
        )
    )
    return ticket


def _find(s: Session, ticket: str, kind: str) -> Ticket | None:
    if not 20 <= len(ticket) <= 100:
        return None
    row = s.get(Ticket, _id(ticket))
    return row if row is not None and row.kind == kind else None


# ---------------------------------------------------------------------- the token page
def reveal(s: Session, tid: int, table: str, token: str) -> str:
    """A ticket that shows ``token`` of ``table`` for ``REVEAL_S`` seconds (committed)."""
    ticket = _new(s, "reveal", tid, table, token, REVEAL_S)
    s.commit()
    return ticket


def open_reveal(s: Session, tid: int, ticket: str) -> dict[str, str]:
    """``{"table", "code", "token"}`` of a reveal ticket; 404 unknown, 410 expired."""
    row = _find(s, ticket, "reveal")
    if row is None or row.tournament_id != tid or row.sealed is None or row.table_id is None:
        raise ApiError(404, "no such token page: rotate the table's token for a new one (无此页)")
    if _aware(row.expires_at) < _now():
        raise ApiError(
            410,
            "this token page has expired (it shows a token for 15 minutes): rotate the table's "
            "token for a new one (令牌页面已过期，请重新生成令牌)",
        )
    gt = s.get(GameTable, row.table_id)
    code = gt.code if gt is not None else row.table_id
    return {"table": row.table_id, "code": code, "token": unseal(row.sealed, ticket)}


# ---------------------------------------------------------------------- table cards
def print_cards(s: Session, tid: int, base_url: str) -> str:
    """New pairing codes for every table in use (voiding their unclaimed ones) and a ticket
    for the print (committed)."""
    get_tournament(s, tid)
    tables = list(
        s.execute(
            select(GameTable)
            .where(GameTable.tournament_id == tid, GameTable.withdrawn.is_(False))
            .order_by(GameTable.position, GameTable.id)
        ).scalars()
    )
    if not tables:
        raise ApiError(422, "no tables to print cards for: add tables first (请先添加牌桌)")
    s.execute(
        delete(Ticket).where(
            Ticket.kind == "pair",
            Ticket.table_id.in_([gt.id for gt in tables]),
            Ticket.used_at.is_(None),
        )
    )
    codes = {gt.id: _new(s, "pair", tid, gt.id, None, PAIR_S) for gt in tables}
    payload = json.dumps({"base": base_url.rstrip("/"), "codes": codes})
    ticket = _new(s, "cards", tid, None, payload, CARDS_S)
    s.commit()
    return ticket


def open_cards(s: Session, tid: int, ticket: str) -> list[dict[str, Any]]:
    """The cards of a print: per table its code, name and pairing URL, in table order."""
    row = _find(s, ticket, "cards")
    if row is None or row.tournament_id != tid or row.sealed is None:
        raise ApiError(404, "no such print of table cards: print them again (无此打印页)")
    if _aware(row.expires_at) < _now():
        raise ApiError(
            410,
            "this print of table cards has expired (1 hour): print them again, which makes new "
            "pairing codes (打印页已过期，请重新打印)",
        )
    data = json.loads(unseal(row.sealed, ticket))
    tables = {
        gt.id: gt
        for gt in s.execute(select(GameTable).where(GameTable.tournament_id == tid)).scalars()
    }
    out = []
    for key, code in data["codes"].items():
        gt = tables.get(key)
        if gt is None:
            continue
        out.append(
            {
                "table": key,
                "code": gt.code,
                "name": gt.name,
                "url": f"{data['base']}/pair/{code}",
                "position": gt.position,
            }
        )
    return sorted(out, key=lambda x: (x["position"], x["table"]))


# ---------------------------------------------------------------------- pairing a kiosk
def pairing(s: Session, ticket: str) -> dict[str, Any]:
    """What a pairing code is for: ``table``, ``code``, ``tournament`` (id and name), ``state``
    (``open``, or ``used`` with ``token`` while it is shown); 404 unknown or expired."""
    row = _find(s, ticket, "pair")
    now = _now()
    if row is None or row.table_id is None:
        raise ApiError(
            404,
            "unknown pairing code: ask the organiser for a new table card (无效的配对码)",
        )
    gt = s.get(GameTable, row.table_id)
    t = get_tournament(s, row.tournament_id)
    out: dict[str, Any] = {
        "table": row.table_id,
        "code": gt.code if gt else row.table_id,
        "name": gt.name if gt else "",
        "tournament": t.id,
        "tournament_name": t.name,
        "state": "open",
        "token": None,
    }
    if row.used_at is None:
        if _aware(row.expires_at) < now:
            raise ApiError(
                404,
                "this pairing code has expired (7 days): ask the organiser to print a new table "
                "card (配对码已过期)",
            )
        return out
    out["state"] = "used"
    out["used_at"] = _aware(row.used_at).isoformat()
    if row.sealed is not None and _aware(row.used_at) + timedelta(seconds=REVEAL_S) > now:
        out["token"] = unseal(row.sealed, ticket)
    return out


def claim(s: Session, ticket: str) -> dict[str, Any]:
    """Use a pairing code: the table gets a new token (the old one stops working), shown with
    the code for ``REVEAL_S`` seconds. 409 when it was used already."""
    info = pairing(s, ticket)
    if info["state"] != "open":
        raise ApiError(
            409,
            f"this pairing code was used at {info['used_at'][:16]} UTC: the token it gave is "
            "shown for 15 minutes there; after that ask the organiser for a new table card "
            "(此配对码已使用)",
        )
    now = _now()
    token = new_token()
    won = s.execute(
        update(Ticket)
        .where(Ticket.id == _id(ticket), Ticket.used_at.is_(None))
        .values(used_at=now, sealed=seal(token, ticket))
    ).rowcount  # type: ignore[attr-defined]
    gt = s.get(GameTable, info["table"])
    if not won or gt is None:  # another device claimed it in between
        s.rollback()
        raise ApiError(409, "this pairing code was just used by another device (此配对码已使用)")
    gt.token_hash = hash_token(token)  # one transaction: the code used, the new token in force
    s.commit()
    return {**info, "state": "used", "used_at": now.isoformat(), "token": token}
