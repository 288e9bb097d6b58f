"""The table kiosk's web app: the local screen, referee mode, seat pass signals, the overlay.

``create_app(kiosk)`` where ``kiosk`` is a :class:`Kiosk` (store + worker + outbox). Pages:

* ``/`` - the table screen (touch-friendly, 中文/English): levels, seat on turn with the shot
  clock, cards left per seat (报牌 automatic), the current trick as card images, finishing
  order, fouls, alarms; PASS buttons per seat; referee mode behind the PIN.
* ``/overlay/table``, ``/overlay/ticker`` - OBS browser-source pages (kiosk/overlay).

API (JSON): ``GET /api/state``, ``GET /api/stream`` (SSE: ``state`` on connect and on every
change), ``POST /api/seat/{seat}/pass``, ``POST /api/referee/login`` ``{pin}`` ->
``{token}`` (rate-limited: ``max_tries`` wrong PINs lock referee mode for ``lockout_s``,
doubling on each further lockout; the lockout survives a restart), then with
``X-Referee-Token``: ``confirm``, ``void``, ``correct``, ``foul``, ``deal/start``, ``deal/end``,
``seating``,
``logout``.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from fastapi import Body, FastAPI, Header, Request
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from engine.events import FOUL_KINDS
from engine.observations import ObservationError
from kiosk.table.outbox import Outbox
from kiosk.table.store import EventLog
from kiosk.table.worker import SEATS, ActionError, TableWorker

HERE = Path(__file__).parent
#: the referee session token (from POST /api/referee/login), sent as a header
Token = Annotated[str | None, Header(alias="X-Referee-Token")]


class PinGate:
    """Referee PIN with brute-force protection: ``max_tries`` wrong PINs in a row lock it for
    ``lockout_s`` seconds (doubling with each further lockout, capped at an hour). Wrong tries
    are written to the log's notes so a restart does not reset the count."""

    def __init__(
        self,
        pin: str,
        store: EventLog | None = None,
        *,
        max_tries: int = 5,
        lockout_s: float = 60.0,
        session_s: float = 1800.0,
    ) -> None:
        if not pin.isdigit() or not 4 <= len(pin) <= 12:
            raise ValueError(f"--pin {pin!r}: give 4 to 12 digits")
        self._pin = pin.encode()
        self.store = store
        self.max_tries = max_tries
        self.lockout_s = lockout_s
        self.session_s = session_s
        self.fails = 0
        self.lockouts = 0
        self.locked_until = 0.0
        self.sessions: dict[str, float] = {}
        if store is not None:
            for at, kind, _b in store.notes():
                if kind == "pin_ok":
                    self.fails = 0
                elif kind == "pin_fail":
                    self._count_fail(at)

    def _count_fail(self, at: float) -> None:
        self.fails += 1
        if self.fails >= self.max_tries:
            self.lockouts += 1
            self.fails = 0
            self.locked_until = at + min(3600.0, self.lockout_s * 2 ** (self.lockouts - 1))

    def login(self, pin: str) -> tuple[int, dict[str, Any]]:
        now = time.time()
        if now < self.locked_until:
            wait = int(self.locked_until - now) + 1
            return 429, {
                "detail": f"too many wrong PINs: referee mode is locked for {wait} s more",
                "retry_after": wait,
            }
        if hmac.compare_digest(pin.encode(), self._pin):
            self.fails = 0
            if self.store is not None:
                self.store.note("pin_ok", {})
            token = secrets.token_urlsafe(24)
            self.sessions[token] = now + self.session_s
            return 200, {"token": token, "expires_in": self.session_s}
        if self.store is not None:
            self.store.note("pin_fail", {})
        self._count_fail(now)
        if now < self.locked_until:
            wait = int(self.locked_until - now) + 1
            return 429, {
                "detail": f"wrong PIN; too many wrong PINs: referee mode is locked for {wait} s",
                "retry_after": wait,
            }
        left = self.max_tries - self.fails
        return 401, {"detail": f"wrong PIN: {left} tries left before a lockout", "tries_left": left}

    def check(self, token: str | None) -> bool:
        if not token:
            return False
        exp = self.sessions.get(token)
        if exp is None or exp < time.time():
            self.sessions.pop(token or "", None)
            return False
        return True

    def logout(self, token: str | None) -> None:
        self.sessions.pop(token or "", None)


@dataclass
class Kiosk:
    store: EventLog
    worker: TableWorker
    pin: PinGate
    outbox: Outbox | None = None
    overlay_delay: float = 0.0
    standings: Any = None  # kiosk.overlay.feed.StandingsFeed
    info: dict[str, Any] = field(default_factory=dict)

    def start(self) -> None:
        if self.outbox is not None:
            self.worker.on_events = lambda _evs: self.outbox.wake() if self.outbox else None
            self.worker.extra = lambda: {"outbox": self.outbox.status() if self.outbox else None}
        else:
            self.worker.extra = lambda: {"outbox": None}
        self.worker.start()
        if self.outbox is not None:
            self.outbox.start()
        if self.standings is not None:
            self.standings.start()

    def stop(self) -> None:
        if self.standings is not None:
            self.standings.stop()
        self.worker.stop()
        if self.outbox is not None:
            self.outbox.stop()


class PinIn(BaseModel):
    pin: str = Field(min_length=1, max_length=32)


class EventRef(BaseModel):
    event_id: str = Field(min_length=1, max_length=80, description="the event's id")


class CorrectIn(EventRef):
    seat: str = Field(pattern="^[NESW]$")
    cards: list[str] | str = Field(description="the cards actually played; [] or '' = a pass")


class FoulIn(BaseModel):
    kind: str = Field(description="a foul kind of CONTRACT.md, e.g. exposed_card, slow_play")
    seat: str | None = Field(default=None, pattern="^[NESW]$")
    cards: list[str] | str = ""
    count: int | None = Field(default=None, ge=0, le=27)
    detail: str = Field(default="", max_length=200)


class DealEndIn(BaseModel):
    order: list[str] = Field(description="the four seats, first to last, e.g. [S, N, E, W]")
    detail: str = Field(default="", max_length=200)


class DealIn(BaseModel):
    first_leader: str | None = Field(default=None, pattern="^[NESW]$")
    level: str | None = None


class SeatingIn(BaseModel):
    N: str = Field(default="", max_length=60)
    E: str = Field(default="", max_length=60)
    S: str = Field(default="", max_length=60)
    W: str = Field(default="", max_length=60)


def inline_state(page: Path, state: Any) -> str:
    """The page with ``window.GD_STATE`` set to ``state`` (JSON, safe inside <script>)."""
    data = json.dumps(state, ensure_ascii=False).replace("</", "<\\/")
    html = page.read_text(encoding="utf-8")
    return html.replace("<!--STATE-->", f"<script>window.GD_STATE = {data};</script>", 1)


def _err(status: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


def create_app(kiosk: Kiosk, *, manage: bool = True) -> FastAPI:
    """The ASGI app. ``manage``: start/stop the kiosk's threads with the app's lifespan."""
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if manage:
            kiosk.start()
        try:
            yield
        finally:
            if manage:
                kiosk.stop()

    app = FastAPI(title="guandan-kiosk table", version="1", lifespan=lifespan)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="table-static")
    w = kiosk.worker

    @app.get("/", include_in_schema=False)
    def screen() -> HTMLResponse:
        """The screen, with the full state inlined (first paint without a round trip)."""
        return HTMLResponse(inline_state(HERE / "static" / "screen.html", w.snapshot()))

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        return {"ok": True, "table": w.table, "recording": w.recording, "events": len(w.events)}

    @app.get("/api/state")
    def state() -> dict[str, Any]:
        return w.snapshot()

    @app.get("/api/events")
    def events(after_seq: int = 0) -> list[dict[str, Any]]:
        return [e.to_json() for e in w.events if e.seq > after_seq]

    @app.get("/api/stream")
    async def stream(request: Request) -> StreamingResponse:
        async def body() -> AsyncIterator[bytes]:
            seen = -1
            last_beat = time.monotonic()
            while True:
                if await request.is_disconnected():
                    return
                if w.version != seen:
                    seen = w.version
                    data = json.dumps(w.snapshot(), ensure_ascii=False)
                    yield f"event: state\ndata: {data}\n\n".encode()
                    last_beat = time.monotonic()
                elif time.monotonic() - last_beat > 10:
                    yield b": keepalive\n\n"
                    last_beat = time.monotonic()
                await asyncio.sleep(0.1)

        return StreamingResponse(
            body(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def _submit(origin: str, raw: dict[str, Any]) -> JSONResponse:
        try:
            evs = await run_in_threadpool(w.submit, origin, raw)
        except (ActionError, ObservationError) as exc:
            return _err(422, str(exc))
        except TimeoutError:
            return _err(503, "the kiosk is busy (recording stopped?): try again")
        return JSONResponse({"events": [e.to_json() for e in evs]})

    @app.post("/api/seat/{seat}/pass")
    async def seat_pass(seat: str) -> JSONResponse:
        """A pass signalled on the screen (the seat buttons do the same)."""
        if seat not in SEATS:
            return _err(422, f"seat {seat!r}: one of N, E, S, W")
        return await _submit("screen", {"type": "pass", "seat": seat})

    # ------------------------------------------------------------------ referee mode
    @app.post("/api/referee/login")
    async def login(body: PinIn) -> JSONResponse:
        status, out = await run_in_threadpool(kiosk.pin.login, body.pin)
        headers = {"Retry-After": str(out["retry_after"])} if status == 429 else None
        return JSONResponse(out, status_code=status, headers=headers)

    def _auth(token: str | None) -> JSONResponse | None:
        if not kiosk.pin.check(token):
            return _err(401, "referee mode: log in with the PIN first (POST /api/referee/login)")
        return None

    def _known(event_id: str) -> bool:
        return any(e.id == event_id for e in w.events)

    @app.post("/api/referee/logout")
    def logout(x_referee_token: Token = None) -> dict[str, Any]:
        kiosk.pin.logout(x_referee_token)
        return {"ok": True}

    @app.post("/api/referee/confirm")
    async def confirm(body: EventRef, x_referee_token: Token = None) -> JSONResponse:
        """Confirm an event as seen (a note; the game state does not change). A foul on a
        camera reading flagged for review is also marked, once: it then counts towards the
        pair's limit (a ``foul`` observation that ``confirms`` it; its penalty is not applied
        again)."""
        if (bad := _auth(x_referee_token)) is not None:
            return bad
        ev = next((e for e in w.events if e.id == body.event_id), None)
        if ev is None:
            return _err(404, f"no event {body.event_id!r} in this table's log")
        done = {str(b.get("id")) for _a, _k, b in w.store.notes("confirm")}
        try:
            await run_in_threadpool(w.note, "confirm", {"id": body.event_id})
        except ActionError as exc:
            return _err(503, str(exc))
        if ev.type == "foul" and ev.data.get("review") and body.event_id not in done:
            return await _submit(
                "referee",
                {
                    "type": "foul",
                    "seat": ev.data.get("seat"),
                    "kind": ev.data.get("kind"),
                    "detail": f"confirmed: {ev.data.get('detail')}",
                    "confirms": body.event_id,
                },
            )
        return JSONResponse({"ok": True, "confirmed": body.event_id})

    @app.post("/api/referee/void")
    async def void(body: EventRef, x_referee_token: Token = None) -> JSONResponse:
        """Void an event: a ``correction`` observation without ``with``."""
        if (bad := _auth(x_referee_token)) is not None:
            return bad
        if not _known(body.event_id):
            return _err(404, f"no event {body.event_id!r} in this table's log")
        return await _submit("referee", {"type": "correction", "replaces": body.event_id})

    @app.post("/api/referee/correct")
    async def correct(body: CorrectIn, x_referee_token: Token = None) -> JSONResponse:
        """Correct a play: what the seat really played (no cards: it passed)."""
        if (bad := _auth(x_referee_token)) is not None:
            return bad
        if not _known(body.event_id):
            return _err(404, f"no event {body.event_id!r} in this table's log")
        cards = body.cards
        empty = not cards or (isinstance(cards, str) and not cards.strip())
        obs: dict[str, Any] = (
            {"type": "pass", "seat": body.seat}
            if empty
            else {"type": "played", "seat": body.seat, "cards": cards}
        )
        return await _submit(
            "referee", {"type": "correction", "replaces": body.event_id, "with": obs}
        )

    @app.post("/api/referee/foul")
    async def foul(body: FoulIn, x_referee_token: Token = None) -> JSONResponse:
        """Mark a foul by recording what happened; the referee engine applies the rule:
        ``exposed_card`` (seat + cards shown), ``out_of_turn`` (seat + cards it played out of
        turn; taken back), ``card_count`` (seat + the count it reported). Any foul kind without
        that evidence (or slow_play, illegal_play, wrong_tribute, duplicate_card) is recorded
        as the referee's ruling for the seat, with an optional ``detail``."""
        if (bad := _auth(x_referee_token)) is not None:
            return bad
        raw: dict[str, Any]
        if body.kind == "exposed_card" and body.cards:
            raw = {"type": "exposed", "seat": body.seat, "cards": body.cards}
        elif body.kind == "out_of_turn" and body.cards:
            if body.seat is None:
                return _err(422, "out_of_turn needs the seat that played")
            raw = {"type": "played", "seat": body.seat, "cards": body.cards}
            d = w.referee.state.deal
            if d is not None and d.turn == body.seat:
                return _err(422, f"{body.seat} is on turn: that play is not out of turn")
        elif body.kind == "card_count" and body.count is not None:
            if body.seat is None:
                return _err(422, "card_count needs the seat and the count it reported")
            raw = {"type": "count_report", "seat": body.seat, "count": body.count}
        elif body.kind in FOUL_KINDS:
            # any other kind (slow play seen by the referee, a wrong tribute found out, ...):
            # a ``foul`` observation; the engine applies the profile's penalty
            if body.seat is None:
                return _err(422, f"{body.kind} needs the seat that committed it")
            raw = {"type": "foul", "seat": body.seat, "kind": body.kind, "detail": body.detail}
        else:
            return _err(422, f"kind {body.kind!r} is not a foul kind: {', '.join(FOUL_KINDS)}")
        return await _submit("referee", raw)

    @app.post("/api/referee/deal/start")
    async def deal_start(
        x_referee_token: Token = None, body: Annotated[DealIn | None, Body()] = None
    ) -> JSONResponse:
        """Start a deal (a deal in progress is abandoned without a result: end it first with
        ``deal/end`` to score it)."""
        if (bad := _auth(x_referee_token)) is not None:
            return bad
        raw: dict[str, Any] = {"type": "deal_start"}
        if body is not None and body.first_leader:
            raw["first_leader"] = body.first_leader
        if body is not None and body.level:
            raw["level"] = body.level
        return await _submit("referee", raw)

    @app.post("/api/referee/deal/end")
    async def deal_end(body: DealEndIn, x_referee_token: Token = None) -> JSONResponse:
        """End the deal in progress with a ruled finishing order (seats already out keep their
        places); it is scored like any deal."""
        if (bad := _auth(x_referee_token)) is not None:
            return bad
        raw = {"type": "deal_result", "order": body.order, "detail": body.detail}
        return await _submit("referee", raw)

    @app.post("/api/referee/seating")
    async def seating(body: SeatingIn, x_referee_token: Token = None) -> JSONResponse:
        """Which pair (player names) sits where; shown on the screen and the overlay."""
        if (bad := _auth(x_referee_token)) is not None:
            return bad
        try:
            await run_in_threadpool(w.note, "seating", body.model_dump())
        except ActionError as exc:
            return _err(503, str(exc))
        return JSONResponse({"ok": True, "seating": body.model_dump()})

    from kiosk.overlay.routes import register_overlay

    register_overlay(app, kiosk)
    from kiosk.review.routes import register_live  # the dispute review desk (issue 43)

    register_live(app, kiosk)
    return app
