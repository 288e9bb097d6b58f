"""The table kiosk's web app: the local screen, referee mode, seat pass signals, the overlay.

``create_app(kiosk)`` where ``kiosk`` is a :class:`Kiosk` (store + worker + outbox). Pages:

* ``/`` - the table screen (touch-friendly, 中文/English): levels, seat on turn with the shot
  clock, cards left per seat (报牌 automatic), the current trick as card images, finishing
  order, fouls, alarms; PASS buttons per seat; referee mode behind the PIN.
* ``/overlay/table``, ``/overlay/ticker`` - OBS browser-source pages (kiosk/overlay).

API (JSON): ``GET /api/state``, ``GET /api/stream`` (SSE: ``state`` on connect and on every
change), ``POST /api/seat/{seat}/pass`` (only from a paired screen, see below, or in referee
mode), ``POST /api/referee/login`` ``{pin}`` ->
``{token}`` (rate-limited: ``max_tries`` wrong PINs lock referee mode for ``lockout_s``,
doubling on each further lockout; the lockout survives a restart), then with
``X-Referee-Token``: ``confirm``, ``void``, ``correct``, ``foul``, ``deal/start``, ``deal/end``,
``seating``, ``pair`` / ``pairings`` / ``unpair``, ``logout``.

Who may press: a change of the game state comes only from the table's own screen, the seat
buttons (hardware, not HTTP) or referee mode. A screen is *paired*: it sends
``X-Table-Pairing: TOKEN``. The kiosk's own screen (a browser on the kiosk itself, i.e. a
loopback client) gets the kiosk's local token inlined in the page and from
``POST /api/pairing/local``; any other device (a table tablet on the venue's Wi-Fi) is paired at
set-up in referee mode (``POST /api/referee/pair`` -> a token the device keeps; the log keeps only
its hash, so a restart keeps the pairing). The overlay, the state and the stream stay open.

Every string a person reads comes from one catalogue, ``static/i18n.json`` (``{key: {zh, en}}``,
Chinese the default; read by ``i18n.py``), inlined into the pages as ``window.GD_I18N``; error
answers carry ``detail`` (English), ``detail_zh`` and a ``code``.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import ipaddress
import json
import re
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from fastapi import Body, FastAPI, Header, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from engine.events import FOUL_KINDS
from engine.observations import ObservationError
from kiosk.overlay.routes import register_overlay
from kiosk.table.i18n import inline_state, say
from kiosk.table.outbox import Outbox
from kiosk.table.store import EventLog
from kiosk.table.worker import SEATS, ActionError, TableWorker

HERE = Path(__file__).parent
#: the referee session token (from POST /api/referee/login), sent as a header
Token = Annotated[str | None, Header(alias="X-Referee-Token")]
#: the screen's pairing token (from the page, ``POST /api/pairing/local`` or ``/api/referee/pair``)
Pairing = Annotated[str | None, Header(alias="X-Table-Pairing")]


def is_loopback(host: str | None) -> bool:
    """Is ``host`` (the client's address) this machine? Note: behind a reverse proxy on the
    kiosk every client would look local; serve the kiosk directly (as ``guandan table run``
    and ``guandan demo`` do)."""
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool(ip.is_loopback or (mapped is not None and mapped.is_loopback))


class ScreenPairing:
    """The screens allowed to press (pass) for this table.

    ``local_token`` belongs to the kiosk's own screen (a browser on the kiosk: a loopback
    client gets it with the page); it is new at each start, and the page fetches the new one
    when its old one is refused. Other devices are paired in referee mode: a random token for
    the device to keep, of which the log's notes keep only the SHA-256 (``pairing`` /
    ``unpairing``), so a restart keeps the pairings and a copy of the log does not give one."""

    def __init__(self, store: EventLog | None = None) -> None:
        self.store = store
        self.local_token = secrets.token_urlsafe(24)
        self.devices: dict[str, dict[str, Any]] = {}  # sha256 -> {id, name, at}
        if store is not None:
            for at, kind, body in store.notes():
                if kind == "pairing" and body.get("hash"):
                    self.devices[str(body["hash"])] = {
                        "id": str(body.get("id")),
                        "name": str(body.get("name", "")),
                        "at": at,
                    }
                elif kind == "unpairing":
                    gone = str(body.get("id"))
                    self.devices = {h: d for h, d in self.devices.items() if d["id"] != gone}

    @staticmethod
    def _hash(token: str) -> str:
        return hashlib.sha256(token.encode()).hexdigest()

    def pair(self, name: str) -> tuple[str, dict[str, Any]]:
        """A new paired device: (its token, its record)."""
        token = secrets.token_urlsafe(24)
        dev = {"id": secrets.token_hex(4), "name": name, "at": time.time()}
        if self.store is not None:
            self.store.note("pairing", {"hash": self._hash(token), "id": dev["id"], "name": name})
        self.devices[self._hash(token)] = dev
        return token, dev

    def unpair(self, device_id: str) -> bool:
        if not any(d["id"] == device_id for d in self.devices.values()):
            return False
        if self.store is not None:
            self.store.note("unpairing", {"id": device_id})
        self.devices = {h: d for h, d in self.devices.items() if d["id"] != device_id}
        return True

    def check(self, token: str | None) -> str | None:
        """The paired screen's name for ``token`` (the local screen: ``local``), else None."""
        if not token:
            return None
        if hmac.compare_digest(token.encode(), self.local_token.encode()):
            return "local"
        dev = self.devices.get(self._hash(token))
        return str(dev["name"]) if dev is not None else None

    def listing(self) -> list[dict[str, Any]]:
        return sorted(self.devices.values(), key=lambda d: d["at"])


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
            return 429, {**_said("err.pin_locked", wait=wait), "retry_after": wait}
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
            return 429, {**_said("err.pin_wrong_locked", wait=wait), "retry_after": wait}
        left = self.max_tries - self.fails
        return 401, {**_said("err.pin_wrong", left=left), "tries_left": left}

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
    #: the screens that may press for this table (default: from the log's notes)
    pairing: ScreenPairing | None = None

    def __post_init__(self) -> None:
        if self.pairing is None:
            self.pairing = ScreenPairing(self.store)

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


class PairIn(BaseModel):
    name: str = Field(
        min_length=1, max_length=60, description="what the device is, e.g. 'table 3 tablet'"
    )


class UnpairIn(BaseModel):
    id: str = Field(min_length=1, max_length=40, description="the device id from GET pairings")


class SeatingIn(BaseModel):
    N: str = Field(default="", max_length=60)
    E: str = Field(default="", max_length=60)
    S: str = Field(default="", max_length=60)
    W: str = Field(default="", max_length=60)


def _said(key: str, **params: Any) -> dict[str, str]:
    """An error body: ``detail`` (English), ``detail_zh``, ``code`` (the catalogue key)."""
    text = say(key, **params)
    return {"detail": text["en"], "detail_zh": text["zh"], "code": key}


def _err(status: int, key: str, **params: Any) -> JSONResponse:
    return JSONResponse(_said(key, **params), status_code=status)


#: engine and worker messages -> catalogue keys (the English detail is kept in ``{detail}``)
_REFUSALS = (
    (re.compile(r"disk full"), "err.disk_full"),
    (re.compile(r"recording is stopped"), "err.recording_stopped"),
    (re.compile(r"card|token|rank|suit", re.I), "err.bad_cards"),
    (re.compile(r"order", re.I), "err.bad_order"),
)


def _refused(exc: Exception) -> JSONResponse:
    """A screen or referee action the worker or the rules refused (422), in both languages."""
    detail = str(exc)
    key = next((k for rx, k in _REFUSALS if rx.search(detail)), "err.refused")
    return _err(422, key, detail=detail)


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
    assert kiosk.pairing is not None
    pairs: ScreenPairing = kiosk.pairing

    @app.exception_handler(RequestValidationError)
    async def bad_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        what = "; ".join(
            f"{'.'.join(str(x) for x in e.get('loc', ()) if x != 'body') or 'body'}: {e.get('msg')}"
            for e in exc.errors()
        )
        body = _said("err.bad_request", detail=what)
        return JSONResponse({**body, "errors": jsonable_encoder(exc.errors())}, status_code=422)

    @app.get("/", include_in_schema=False)
    def screen(request: Request) -> HTMLResponse:
        """The screen, with the full state inlined (first paint without a round trip). A
        browser on the kiosk itself (loopback) is the table's own screen: it gets the local
        pairing with the page; any other device shows the table read-only until paired."""
        local = is_loopback(request.client.host if request.client else None)
        pairing = {"local": local, "token": pairs.local_token if local else None}
        page = HERE / "static" / "screen.html"
        return HTMLResponse(inline_state(page, w.snapshot(), pairing=pairing))

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

    async def _submit(
        origin: str, raw: dict[str, Any], *, wants: tuple[str, ...] = (), key: str = ""
    ) -> JSONResponse:
        """Feed ``raw`` to the referee. ``wants``: event types of which one must come out, else
        the answer is 409 with the referee's notices (e.g. a foul marked between deals)."""
        try:
            evs = await run_in_threadpool(w.submit, origin, raw)
        except (ActionError, ObservationError) as exc:
            return _refused(exc)
        except TimeoutError:
            return _err(503, "err.busy")
        if wants and not any(e.type in wants for e in evs):
            said = "; ".join(str(e.data.get("detail", "")) for e in evs if e.type == "notice")
            d = w.referee.state.deal
            live = d is not None and not d.over and not w.referee.state.match_over
            key = key or ("err.not_recorded" if live else "err.no_deal")
            if "no such event in effect" in said:
                key = "err.already_replaced"
            body = _said(key, detail=said or "-")
            return JSONResponse({**body, "events": [e.to_json() for e in evs]}, status_code=409)
        return JSONResponse({"events": [e.to_json() for e in evs]})

    @app.post("/api/seat/{seat}/pass")
    async def seat_pass(
        seat: str, x_table_pairing: Pairing = None, x_referee_token: Token = None
    ) -> JSONResponse:
        """A pass signalled on the table's paired screen or in referee mode (the seat buttons
        do the same without HTTP). Anyone else gets 403 ``err.not_paired``."""
        by = pairs.check(x_table_pairing)
        if by is None and not kiosk.pin.check(x_referee_token):
            return _err(403, "err.not_paired", table=w.table)
        if seat not in SEATS:
            return _err(422, "err.bad_seat", seat=seat)
        return await _submit(
            "screen" if by is not None else "referee", {"type": "pass", "seat": seat}
        )

    @app.get("/api/pairing")
    def pairing_status(request: Request, x_table_pairing: Pairing = None) -> dict[str, Any]:
        """Is this screen paired (``paired``: its name, or null)? ``local``: it is the kiosk's
        own screen (a loopback client), which can fetch the local pairing itself."""
        local = is_loopback(request.client.host if request.client else None)
        return {"paired": pairs.check(x_table_pairing), "local": local, "table": w.table}

    @app.post("/api/pairing/local")
    def pairing_local(request: Request) -> JSONResponse:
        """The local pairing, for the kiosk's own screen only (a loopback client): the page
        asks for it when the kiosk restarted since it was loaded."""
        if not is_loopback(request.client.host if request.client else None):
            return _err(403, "err.not_local")
        return JSONResponse({"token": pairs.local_token, "name": "local"})

    # ------------------------------------------------------------------ referee mode
    @app.post("/api/referee/login")
    async def login(body: PinIn) -> JSONResponse:
        status, out = await run_in_threadpool(kiosk.pin.login, body.pin)
        headers = {"Retry-After": str(out["retry_after"])} if status == 429 else None
        return JSONResponse(out, status_code=status, headers=headers)

    def _auth(token: str | None) -> JSONResponse | None:
        if not kiosk.pin.check(token):
            return _err(401, "err.login_first")
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
            return _err(404, "err.no_event", event=body.event_id)
        done = {str(b.get("id")) for _a, _k, b in w.store.notes("confirm")}
        try:
            await run_in_threadpool(w.note, "confirm", {"id": body.event_id})
        except ActionError as exc:
            return _refused(exc)
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
            return _err(404, "err.no_event", event=body.event_id)
        return await _submit(
            "referee",
            {"type": "correction", "replaces": body.event_id},
            wants=("correction",),
            key="err.not_applied",
        )

    @app.post("/api/referee/correct")
    async def correct(body: CorrectIn, x_referee_token: Token = None) -> JSONResponse:
        """Correct a play: what the seat really played (no cards: it passed)."""
        if (bad := _auth(x_referee_token)) is not None:
            return bad
        if not _known(body.event_id):
            return _err(404, "err.no_event", event=body.event_id)
        cards = body.cards
        empty = not cards or (isinstance(cards, str) and not cards.strip())
        obs: dict[str, Any] = (
            {"type": "pass", "seat": body.seat}
            if empty
            else {"type": "played", "seat": body.seat, "cards": cards}
        )
        return await _submit(
            "referee",
            {"type": "correction", "replaces": body.event_id, "with": obs},
            wants=("correction",),
            key="err.not_applied",
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
                return _err(422, "err.foul_needs_seat", kind=body.kind)
            raw = {"type": "played", "seat": body.seat, "cards": body.cards}
            d = w.referee.state.deal
            if d is not None and d.turn == body.seat:
                return _err(422, "err.on_turn", seat=body.seat)
        elif body.kind == "card_count" and body.count is not None:
            if body.seat is None:
                return _err(422, "err.count_needs_seat")
            raw = {"type": "count_report", "seat": body.seat, "count": body.count}
        elif body.kind in FOUL_KINDS:
            # any other kind (slow play seen by the referee, a wrong tribute found out, ...):
            # a ``foul`` observation; the engine applies the profile's penalty
            if body.seat is None:
                return _err(422, "err.foul_needs_seat", kind=body.kind)
            raw = {"type": "foul", "seat": body.seat, "kind": body.kind, "detail": body.detail}
        else:
            return _err(422, "err.bad_foul_kind", kind=body.kind, kinds=", ".join(FOUL_KINDS))
        return await _submit("referee", raw, wants=("foul", "warning"))

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

    @app.post("/api/referee/pair")
    async def pair(body: PairIn, x_referee_token: Token = None) -> JSONResponse:
        """Pair the device this request comes from (a table tablet, at set-up): a token for it
        to keep and send as ``X-Table-Pairing``; the log keeps only its hash."""
        if (bad := _auth(x_referee_token)) is not None:
            return bad
        try:
            token, dev = await run_in_threadpool(pairs.pair, body.name.strip())
        except (ActionError, OSError) as exc:
            return _refused(exc)
        return JSONResponse({"token": token, **dev})

    @app.get("/api/referee/pairings")
    def pairings(x_referee_token: Token = None) -> JSONResponse:
        if (bad := _auth(x_referee_token)) is not None:
            return bad
        return JSONResponse({"devices": pairs.listing()})

    @app.post("/api/referee/unpair")
    async def unpair(body: UnpairIn, x_referee_token: Token = None) -> JSONResponse:
        """Unpair a device (lost, or moved to another table): its token no longer presses."""
        if (bad := _auth(x_referee_token)) is not None:
            return bad
        if not await run_in_threadpool(pairs.unpair, body.id):
            return _err(404, "err.no_device", id=body.id)
        return JSONResponse({"ok": True, "unpaired": body.id})

    @app.post("/api/referee/seating")
    async def seating(body: SeatingIn, x_referee_token: Token = None) -> JSONResponse:
        """Which pair (player names) sits where; shown on the screen and the overlay."""
        if (bad := _auth(x_referee_token)) is not None:
            return bad
        try:
            await run_in_threadpool(w.note, "seating", body.model_dump())
        except ActionError as exc:
            return _refused(exc)
        return JSONResponse({"ok": True, "seating": body.model_dump()})

    register_overlay(app, kiosk)
    from kiosk.review.routes import register_live  # the dispute review desk (issue 43)

    register_live(app, kiosk)
    return app
