"""What the scoreboard's routes share: the app state (``app.state.sb``) and the dependencies that
read it and the caller's credentials (admin key, table token).

``app.py`` (the API), ``pages.py`` (the HTML pages) and ``hall.py`` (hall health) all import it;
none of them imports another for these, so the route modules form no import cycle.
"""

from __future__ import annotations

import base64
import logging
import secrets
from collections.abc import Sequence
from typing import Annotated, Any, NamedTuple

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool

from kiosk.scoreboard import service
from kiosk.scoreboard.db import make_engine, session_factory
from kiosk.scoreboard.fold import TableState
from kiosk.scoreboard.groupcommit import FallBack, GroupWriter
from kiosk.scoreboard.live import LiveHub, Peers
from kiosk.scoreboard.schemas import EventBase, IngestResult
from kiosk.scoreboard.service import ApiError
from kiosk.scoreboard.settings import Settings

log = logging.getLogger("guandan.scoreboard")
API = "/api/v1"

bearer = HTTPBearer(auto_error=False, description="table token, or the admin key")


class State:
    """What the routes share (attached to ``app.state.sb``)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.engine = make_engine(settings.db_url)
        self.sf: sessionmaker[Session] = session_factory(self.engine)
        self.directory = service.Directory(self.sf)
        self.hub = LiveHub(self._load_table, self._load_standings, settings.push_interval)
        #: PostgreSQL: ingest requests are stored in groups (groupcommit.py); SQLite: one by one
        self.writer: GroupWriter | None = None
        #: PostgreSQL: the other serve processes on the database (LISTEN/NOTIFY, live.py)
        self.peers: Peers | None = None
        if self.engine.dialect.name == "postgresql":
            self.writer = GroupWriter.for_engine(self.engine, self.directory)
            if settings.peers:
                self.peers = Peers.for_engine(self.engine, self.hub, self.directory)
                self.hub.peers = self.peers

    async def ingest(self, table: str, events: Sequence[EventBase]) -> IngestResult:
        """Store one table's events (all or nothing) and push them to the live stream."""
        if self.writer is None:
            outcome = await run_in_threadpool(
                service.ingest, self.sf, self.directory, table, events
            )
        else:
            directory = self.directory
            code = directory.code(table)
            if table not in directory.tournament_of or any(ev.table != code for ev in events):
                # 404/403 (an unknown table reloads the directory: a query, off the loop)
                await run_in_threadpool(service.check_tables, directory, table, events)
            if service.needs_match_lookup(directory, events):  # a query, off the loop
                await run_in_threadpool(service.check_matches, directory, table, events)
            else:
                service.check_matches(directory, table, events)
            rows = service.prepare_rows(events, table)
            try:
                outcome = await self.writer.submit(table, rows)
            except FallBack:
                outcome = await run_in_threadpool(
                    service.store_rows, self.sf, directory, table, rows
                )
        ended = [b.get("_match") for b in outcome.new_bodies if b.get("type") == "match_ended"]
        if ended and self.directory.moves_current(ended):
            # A finished match let go on from a closed round leaves the table's queue: the next
            # one becomes current.
            self.directory.invalidate()
        try:
            await self.hub.on_ingest(
                outcome.tournament,
                table,
                outcome.new_bodies,
                bool(outcome.rebuilt_matches),
                outcome.new_texts,
            )
        except Exception:  # the push must never fail an ingest that is already stored
            log.exception("live push failed for table %s", table)
        return outcome.result

    async def _load_table(self, table: str, match_id: int | None) -> TableState:
        def load() -> TableState:
            with self.sf() as s:
                return service.load_table_state(s, table, match_id)

        return await run_in_threadpool(load)

    async def _load_standings(self, tournament: int) -> dict[str, Any]:
        def load() -> dict[str, Any]:
            with self.sf() as s:
                t = service.get_tournament(s, tournament)
                return {
                    "tournament": tournament,
                    "standings": [x.to_json() for x in service.compute_standings(s, t)],
                }

        return await run_in_threadpool(load)


async def _sb(request: Request) -> State:
    sb: State = request.app.state.sb
    return sb


SB = Annotated[State, Depends(_sb)]
Creds = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def admin_ok(request: Request, sb: State) -> bool:
    key = sb.settings.admin_key
    if not key:
        return True
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer":
        return secrets.compare_digest(value.strip().encode(), key.encode())
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return False
        _user, _, password = decoded.partition(":")
        return secrets.compare_digest(password.encode(), key.encode())
    return False


async def require_admin(request: Request, sb: SB) -> None:
    if not admin_ok(request, sb):
        raise ApiError(
            401,
            "admin key required: send 'Authorization: Bearer <key>' or log in with any user "
            "name and the key as password (GUANDAN_SCOREBOARD_ADMIN_KEY)",
        )


Admin = Annotated[None, Depends(require_admin)]


def table_for_token(token: str | None, sb: State) -> str:
    """The table a bearer token belongs to; 401 when missing or unknown."""
    if not token:
        raise ApiError(
            401,
            "missing table token: send 'Authorization: Bearer <token>' with the token made "
            "when the table was added (admin page or `guandan scoreboard add-table`)",
        )
    table = sb.directory.table_for_token(token)
    if table is None:
        raise ApiError(
            401,
            "invalid table token: it matches no table (rotated? mistyped?); get the current "
            "token from the admin page or `guandan scoreboard rotate-token`",
        )
    return table


class Caller(NamedTuple):
    table: str
    sb: State


async def table_caller(request: Request) -> Caller:
    """The ingesting table (from its bearer token) and the app state in one dependency: the
    ingest routes are the hot path, and FastAPI resolves every dependency on every request
    (three nested ones cost ~15 % of an ingest's CPU). Same rules as HTTPBearer."""
    sb: State = request.app.state.sb
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return Caller(table_for_token(token.strip() if scheme.lower() == "bearer" else None, sb), sb)
