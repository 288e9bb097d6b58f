"""The scoreboard's ASGI app: ingestion and read API, live stream, admin pages.

``create_app(settings)``; run it with ``guandan scoreboard serve`` (uvicorn). The OpenAPI spec is
at ``/openapi.json`` and the interactive docs at ``/docs``.
"""

from __future__ import annotations

import asyncio
import csv
import gc
import io
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import Body, Depends, FastAPI, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    StreamingResponse,
)
from fastapi.security import HTTPAuthorizationCredentials
from fastapi.staticfiles import StaticFiles
from pydantic import TypeAdapter, ValidationError
from sqlalchemy import select, text
from starlette.concurrency import run_in_threadpool

from kiosk.scoreboard import formats, service
from kiosk.scoreboard.db import current_revision, upgrade
from kiosk.scoreboard.deckroutes import register_decks
from kiosk.scoreboard.hall import register_health
from kiosk.scoreboard.live import sse
from kiosk.scoreboard.models import Pair, Tournament
from kiosk.scoreboard.pages import register_pages
from kiosk.scoreboard.schemas import (
    EVENT_TYPES,
    Assignment,
    ClockIn,
    CloseIn,
    DecisionIn,
    Event,
    EventBatch,
    IngestResult,
    IntId,
    MissingSeqs,
    OverrideIn,
    PairIn,
    PairOut,
    PairPatch,
    ReopenIn,
    RoundIn,
    TableIn,
    TableOut,
    TablePatch,
    TableWithToken,
    TournamentIn,
    TournamentOut,
)
from kiosk.scoreboard.service import ApiError
from kiosk.scoreboard.settings import Settings
from kiosk.scoreboard.standings import CSV_COLUMNS
from kiosk.scoreboard.state import (
    API,
    SB,
    Admin,
    Caller,
    Creds,
    State,
    admin_ok,
    table_caller,
)

log = logging.getLogger("guandan.scoreboard")
HERE = Path(__file__).parent
KEEPALIVE_S = 15.0


#: The ingest routes read the token themselves (table_caller); the spec still says Bearer.
INGEST_SECURITY: dict[str, Any] = {"security": [{"HTTPBearer": []}]}


def reader_for(table: str, request: Request, creds: Creds, sb: SB) -> None:
    """Without an admin key reads are open; with one, the table's own token or the key."""
    if not sb.settings.admin_key or admin_ok(request, sb):
        return
    if creds is not None and sb.directory.table_for_token(creds.credentials) == table:
        return
    raise ApiError(
        401 if creds is None else 403,
        f"only table {table!r}'s token or the admin key may read its events",
    )


def _validation_message(errors: list[dict[str, Any]]) -> str:
    parts = []
    for err in errors[:5]:
        loc = [x for x in err.get("loc", ()) if x != "body"]
        path = ""
        for x in loc:
            if isinstance(x, int):
                path += f"events[{x}]" if not path else f"[{x}]"
            elif x in EVENT_TYPES or str(x).startswith("function-"):
                continue
            else:
                path += ("." if path else "") + str(x)
        field = path or "body"
        if err.get("type") == "json_invalid":
            field = "body"
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        if err.get("type") in ("union_tag_invalid", "union_tag_not_found"):
            field = (field + ".type") if path else "type"
            msg = f"{msg}; known types: {', '.join(EVENT_TYPES)}"
        parts.append(f"field '{field}': {msg}")
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return "invalid request: " + "; ".join(parts) + more


def api_error_response(exc: ApiError) -> JSONResponse:
    headers = None
    if exc.status == 401:
        headers = {"WWW-Authenticate": 'Basic realm="guandan scoreboard", charset="UTF-8"'}
    return JSONResponse({"detail": exc.detail}, status_code=exc.status, headers=headers)


INGEST_PATHS = {f"{API}/events": TypeAdapter(Event), f"{API}/events/batch": TypeAdapter(EventBatch)}
_JSON_HEADERS = [(b"content-type", b"application/json")]


class ScoreboardApp(FastAPI):
    """FastAPI with a fast path for the ingest routes (the hot path: every kiosk posts every few
    seconds). A POST to ``/api/v1/events`` or ``/api/v1/events/batch`` with a known table token
    and a body the route's own schema accepts is answered here, without FastAPI's middleware,
    routing and dependency machinery (most of an ingest request's CPU). Anything else — no or a
    wrong token, a body that is not JSON or not valid, another content type — goes through the
    routes unchanged, so every error answer (401/422 with the field named) is FastAPI's own.
    The routes stay in the OpenAPI spec and give the same answer for the same request."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and scope["path"] in INGEST_PATHS
            and getattr(self.state, "sb", None) is not None
        ):
            body = await _fast_ingest(self.state.sb, scope, receive, send)
            if body is None:
                return
            receive = _replay(body, receive)
        await super().__call__(scope, receive, send)


def _replay(body: bytes, receive: Any) -> Any:
    """A ``receive`` that hands the already-read body to the app first."""
    sent = False

    async def replay() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _fast_ingest(sb: State, scope: Any, receive: Any, send: Any) -> bytes | None:
    """Answer an ingest request; None when answered, else the body read (for the routes)."""
    auth = ctype = None
    for key, value in scope["headers"]:  # the first of each, as Starlette's headers.get
        if key == b"authorization" and auth is None:
            auth = value
        elif key == b"content-type" and ctype is None:
            ctype = value
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    # Only the plain case: application/json (FastAPI also takes no content type, +json, ...).
    if ctype is None or ctype.split(b";", 1)[0].strip().lower() != b"application/json":
        return body
    scheme, _, token = (auth or b"").partition(b" ")
    if scheme.lower() != b"bearer":
        return body
    try:
        table = sb.directory.table_for_token(token.decode("latin-1").strip())
    except Exception:  # noqa: BLE001 - the route reports it as it always did
        return body
    if table is None or not body:
        return body
    try:
        # pydantic's own JSON parser (no Python dicts in between). Anything it does not take
        # (not JSON, out of schema, NaN, a lone surrogate escape...) goes to the route, which
        # parses it as FastAPI always did and answers.
        parsed = INGEST_PATHS[scope["path"]].validate_json(body)
    except (ValueError, ValidationError):  # not JSON / out of schema: FastAPI's 422
        return body
    events = parsed if isinstance(parsed, list) else [parsed]
    try:
        result = await sb.ingest(table, events)
    except ApiError as exc:
        await api_error_response(exc)(scope, receive, send)
        return None
    except Exception:
        log.exception("ingest failed for table %s", table)
        await PlainTextResponse("Internal Server Error", status_code=500)(scope, receive, send)
        return None
    payload = result.__pydantic_serializer__.to_json(result)
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [*_JSON_HEADERS, (b"content-length", str(len(payload)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": payload})
    return None


def _tournament_out(t: Tournament) -> TournamentOut:
    return TournamentOut(
        id=t.id,
        name=t.name,
        profile=t.profile,
        lots_seed=t.lots_seed,
        format=t.format,
        groups=t.groups,
        advance=t.advance,
    )


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings.from_env()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        sb = State(settings)
        if settings.migrate:
            await run_in_threadpool(upgrade, sb.engine)
        if sb.writer is not None:
            await sb.writer.start()
        if sb.peers is not None:
            await sb.peers.start()
        app.state.sb = sb
        # Everything made so far (modules, the app, its schemas: ~150k objects) lives as long as
        # the process: keep it out of the cyclic collector, whose full passes otherwise walk it
        # all and stall the event loop (and every request) 50-200 ms every few seconds under load.
        gc.collect()
        gc.freeze()
        log.info("scoreboard ready on %s", sb.engine.url.render_as_string(hide_password=True))
        try:
            yield
        finally:
            if sb.peers is not None:
                await sb.peers.close()
            if sb.writer is not None:
                await sb.writer.close()
            sb.engine.dispose()

    app = ScoreboardApp(
        title="guandan-kiosk scoreboard",
        version="1",
        description="Central scoreboard: event ingestion from table kiosks, results, standings, "
        "live stream. Events follow CONTRACT.md (v, id, table, deal, seq, t, type + fields).",
        lifespan=lifespan,
        # FastAPI's built-in OpenTelemetry hooks ask the tracer, meter and logger providers on
        # every request (4 % of the ingest path's CPU); nothing here exports telemetry.
        telemetry={"tracing": False, "metrics": False, "logs": False},
        # /docs is served below from the installed Swagger UI (no CDN: halls are often offline);
        # ReDoc has no offline copy here, so it is off.
        docs_url=None,
        redoc_url=None,
    )

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return api_error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        return JSONResponse(
            {
                "detail": jsonable_encoder(errors, custom_encoder={bytes: repr}),
                "message": _validation_message(errors),
            },
            status_code=422,
        )

    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.mount("/docs-assets", StaticFiles(directory=swagger_ui_dir()), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        """Swagger UI from the installed ``swagger-ui-py`` package: works with no internet."""
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} - API 接口文档",
            swagger_js_url="/docs-assets/swagger-ui-bundle.js",
            swagger_css_url="/docs-assets/swagger-ui.css",
            swagger_favicon_url="/docs-assets/favicon-32x32.png",
        )

    # ------------------------------------------------------------------ health
    @app.get("/healthz", tags=["meta"])
    def healthz(sb: SB) -> dict[str, Any]:
        with sb.engine.connect() as conn:
            conn.execute(text("select 1"))
        out: dict[str, Any] = {
            "ok": True,
            "db": sb.engine.dialect.name,
            "revision": current_revision(sb.engine),
        }
        if sb.writer is not None:
            out["group_commit"] = sb.writer.stats()
        if sb.peers is not None:
            out["peers"] = sb.peers.stats()
        return out

    # ------------------------------------------------------------------ ingestion
    # The two ingest routes below describe the API (OpenAPI, validation errors, auth errors);
    # a request that is well-formed and authenticated is answered by ScoreboardApp's fast path
    # before it reaches them, with the same result (State.ingest).
    @app.post(
        f"{API}/events",
        tags=["ingestion"],
        response_model=IngestResult,
        responses={401: {}, 403: {}, 404: {}, 409: {}, 422: {}},
        openapi_extra=INGEST_SECURITY,
    )
    async def post_event(
        event: Annotated[Event, Body(description="one event (CONTRACT.md)")],
        caller: Annotated[Caller, Depends(table_caller)],
    ) -> IngestResult:
        """Store one event. A retry of a stored event answers 200 and stores nothing twice."""
        return await caller.sb.ingest(caller.table, [event])

    @app.post(
        f"{API}/events/batch",
        tags=["ingestion"],
        response_model=IngestResult,
        responses={401: {}, 403: {}, 404: {}, 409: {}, 422: {}},
        openapi_extra=INGEST_SECURITY,
    )
    async def post_events(
        events: Annotated[EventBatch, Body(description="1..1000 events of the caller's table")],
        caller: Annotated[Caller, Depends(table_caller)],
    ) -> IngestResult:
        """Store a batch, all or nothing. The answer lists missing seqs so the kiosk resends."""
        return await caller.sb.ingest(caller.table, list(events))

    @app.get(f"{API}/tables/{{table_id}}/missing", tags=["ingestion"], response_model=MissingSeqs)
    def get_missing(table_id: str, request: Request, creds: Creds, sb: SB) -> MissingSeqs:
        """Seqs between 1 and the highest stored that the scoreboard has not received."""
        key = _table_key(sb, table_id, creds)
        reader_for(key, request, creds, sb)
        with sb.sf() as s:
            return service.missing_seqs(s, key)

    @app.get(f"{API}/tables/{{table_id}}/events", tags=["ingestion"])
    def get_events(
        table_id: str,
        request: Request,
        creds: Creds,
        sb: SB,
        after_seq: Annotated[int, Query(ge=0, le=2**53)] = 0,
        limit: Annotated[int, Query(ge=1, le=5000)] = 1000,
    ) -> list[dict[str, Any]]:
        """The table's stored events after ``after_seq``, in seq order, exactly as stored."""
        key = _table_key(sb, table_id, creds)
        reader_for(key, request, creds, sb)
        with sb.sf() as s:
            return service.list_events(s, key, after_seq, limit)

    @app.get(f"{API}/tables/{{table_id}}/state", tags=["live"])
    async def get_table_state(table_id: str, sb: SB) -> dict[str, Any]:
        """The table's live summary (fold of its current match's events)."""
        key = _table_key(sb, table_id, None)
        state = await sb.hub.table(key, sb.directory.match_for(key))
        return state.to_json()

    def _table_key(sb: State, table_id: str, creds: HTTPAuthorizationCredentials | None) -> str:
        """The table a URL names: its key, or its code (the caller's own table when the
        bearer is a table token). 404 unknown; 409 a code that several tournaments have."""
        token_table = sb.directory.table_for_token(creds.credentials) if creds else None
        key = sb.directory.resolve(table_id, token_table)
        if key is not None:
            return key
        if sb.directory.has_table(table_id):
            keys = ", ".join(sb.directory.by_code.get(table_id, []))
            raise ApiError(
                409,
                f"several tournaments have a table {table_id!r}: use the table's key ({keys}) "
                "or the table's own token",
            )
        raise ApiError(404, f"no table {table_id!r} on this scoreboard (没有此桌)")

    # ------------------------------------------------------------------ tournaments (admin)
    @app.get(f"{API}/tournaments", tags=["tournament"], response_model=list[TournamentOut])
    def list_tournaments(sb: SB) -> list[TournamentOut]:
        with sb.sf() as s:
            rows = s.execute(select(Tournament).order_by(Tournament.id)).scalars()
            return [_tournament_out(t) for t in rows]

    @app.post(
        f"{API}/tournaments", tags=["tournament"], response_model=TournamentOut, status_code=201
    )
    def post_tournament(body: TournamentIn, _a: Admin, sb: SB) -> TournamentOut:
        with sb.sf() as s:
            t = service.create_tournament(
                s, body.name, body.profile, body.lots_seed, body.format, body.groups, body.advance
            )
            return _tournament_out(t)

    @app.get(f"{API}/tournaments/{{tid}}", tags=["tournament"])
    def get_tournament(tid: IntId, sb: SB) -> dict[str, Any]:
        with sb.sf() as s:
            t = service.get_tournament(s, tid)
            return {
                "id": t.id,
                "name": t.name,
                "profile": t.profile,
                "format": t.format,
                "groups": t.groups,
                "advance": t.advance,
                "lots_seed": t.lots_seed,
                "pairs": [_pair_out(p).model_dump() for p in t.pairs],
                "tables": [
                    {"id": gt.id, "code": gt.code, "name": gt.name, "withdrawn": gt.withdrawn}
                    for gt in t.tables
                ],
                "rounds": service.rounds_json(s, tid),
            }

    @app.post(
        f"{API}/tournaments/{{tid}}/pairs",
        tags=["tournament"],
        response_model=PairOut,
        status_code=201,
    )
    def post_pair(tid: IntId, body: PairIn, _a: Admin, sb: SB) -> PairOut:
        with sb.sf() as s:
            p = service.add_pair(s, tid, body.name, body.players, body.club, body.number)
            return _pair_out(p)

    @app.get(f"{API}/tournaments/{{tid}}/pairs", tags=["tournament"], response_model=list[PairOut])
    def get_pairs(tid: IntId, sb: SB) -> list[PairOut]:
        with sb.sf() as s:
            service.get_tournament(s, tid)
            rows = s.execute(
                select(Pair).where(Pair.tournament_id == tid).order_by(Pair.number)
            ).scalars()
            return [_pair_out(p) for p in rows]

    @app.post(
        f"{API}/tournaments/{{tid}}/tables",
        tags=["tournament"],
        response_model=TableWithToken,
        status_code=201,
    )
    def post_table(tid: IntId, body: TableIn, _a: Admin, sb: SB) -> TableWithToken:
        with sb.sf() as s:
            gt, token = service.add_table(s, tid, body.id, body.name)
        sb.directory.invalidate()
        return TableWithToken(id=gt.id, code=gt.code, name=gt.name, tournament_id=tid, token=token)

    @app.get(
        f"{API}/tournaments/{{tid}}/tables", tags=["tournament"], response_model=list[TableOut]
    )
    def get_tables(tid: IntId, sb: SB) -> list[TableOut]:
        with sb.sf() as s:
            service.get_tournament(s, tid)
            return [
                TableOut(
                    id=gt.id, code=gt.code, name=gt.name, tournament_id=tid, withdrawn=gt.withdrawn
                )
                for gt in service.tables_of(s, tid)
            ]

    @app.patch(
        f"{API}/tournaments/{{tid}}/pairs/{{number}}",
        tags=["tournament"],
        response_model=PairOut,
        responses={404: {}, 409: {}, 422: {}},
    )
    def patch_pair(tid: IntId, number: IntId, body: PairPatch, _a: Admin, sb: SB) -> PairOut:
        """Edit a pair (name, players, club) or withdraw / reinstate it (``withdrawn``). A
        withdrawn pair is paired no more, its results stay; one with an unfinished match is
        refused (409) until the match is decided."""
        with sb.sf() as s:
            p = service.edit_pair(s, tid, number, **body.model_dump(exclude_unset=True))
            return _pair_out(p)

    @app.patch(
        f"{API}/tournaments/{{tid}}/tables/{{table_id}}",
        tags=["tournament"],
        response_model=TableOut,
        responses={404: {}, 409: {}, 422: {}},
    )
    def patch_table(tid: IntId, table_id: str, body: TablePatch, _a: Admin, sb: SB) -> TableOut:
        """Rename a table or withdraw / reinstate it (``withdrawn``: no new matches; its token
        still files its events). One with an unfinished match is refused (409)."""
        with sb.sf() as s:
            gt = service.edit_table(s, tid, table_id, **body.model_dump(exclude_unset=True))
            out = TableOut(
                id=gt.id, code=gt.code, name=gt.name, tournament_id=tid, withdrawn=gt.withdrawn
            )
        sb.directory.invalidate()
        return out

    @app.post(
        f"{API}/tables/{{table_id}}/token", tags=["tournament"], response_model=TableWithToken
    )
    def post_rotate(table_id: str, _a: Admin, sb: SB) -> TableWithToken:
        """A new token for the table; the old one stops working."""
        with sb.sf() as s:
            token = service.rotate_token(s, table_id)
            gt = service.find_table(s, table_id)
            out = TableWithToken(
                id=gt.id, code=gt.code, name=gt.name, tournament_id=gt.tournament_id, token=token
            )
        sb.directory.invalidate()
        return out

    @app.post(f"{API}/tournaments/{{tid}}/rounds", tags=["tournament"], status_code=201)
    def post_round(tid: IntId, body: RoundIn, _a: Admin, sb: SB) -> dict[str, Any]:
        """Open the next round with the given pairings, or, when none are given, the pairings
        of the tournament's format: Swiss; the round robin's next round (409 once all are
        made); the knockout's next round from the last one's winners (409 naming a match that
        has no winner yet, or when the final is decided)."""
        plan = None
        if body.pairings is not None:
            plan = [(p.table, p.ew, p.ns) for p in body.pairings]
        with sb.sf() as s:
            rnd = service.create_round(s, tid, plan)
            number = rnd.number
            out = next(r for r in service.rounds_json(s, tid) if r["number"] == number)
        sb.directory.invalidate()
        return out

    @app.get(f"{API}/tournaments/{{tid}}/bracket", tags=["tournament"], responses={404: {}})
    def get_bracket(tid: IntId, sb: SB) -> dict[str, Any]:
        """A knockout's bracket: its rounds, each with its matches in bracket order (the
        winners of adjacent matches meet next), ``stage`` (round, semi_final, final,
        third_place), ``winner`` (a pair number; a bye's pair goes through); ``places`` once
        decided; groups_knockout: ``draw`` per round (000 篇11's third or fourth draw, the
        fourth with each pair's table number). 404 for a tournament of another format."""
        with sb.sf() as s:
            t = service.get_tournament(s, tid)
            rounds = service.bracket_json(s, t)
            if rounds is None:
                raise ApiError(
                    404,
                    f"tournament {tid} is {t.format}, not a knockout: it has no bracket "
                    f"(see GET {API}/tournaments/{tid}/standings)",
                )
            places = service.knockout_places(s, t)
            return {"tournament": tid, "format": t.format, "rounds": rounds, "places": places}

    @app.get(f"{API}/tournaments/{{tid}}/groups", tags=["tournament"], responses={404: {}, 422: {}})
    def get_groups(tid: IntId, sb: SB) -> dict[str, Any]:
        """A group stage's groups (groups_knockout, 000 篇11): each group's standings from its
        own matches (大分 = points, 小分 = level_diff, then fouls, latest rounds, lots), each
        row with ``through`` (in the top ``advance`` of its group) and ``qualified`` (in the
        knockout, once drawn). 404 for a tournament of another format; 422 while the pairs
        cannot make the groups (too few, or ``advance`` not less than the smallest group)."""
        with sb.sf() as s:
            t = service.get_tournament(s, tid)
            out = service.groups_json(s, t)
            if out is None:
                raise ApiError(
                    404,
                    f"tournament {tid} is {t.format}, which has no group stage (format "
                    f"groups_knockout has; see GET {API}/tournaments/{tid}/standings)",
                )
            if out["group_rounds"] is None:
                service.tournament_groups(s, t)  # raises the reason
            return {"tournament": tid, "format": t.format, **out}

    @app.get(f"{API}/tournaments/{{tid}}/rounds", tags=["tournament"])
    def get_rounds(tid: IntId, sb: SB) -> list[dict[str, Any]]:
        with sb.sf() as s:
            service.get_tournament(s, tid)
            return service.rounds_json(s, tid)

    @app.post(
        f"{API}/tournaments/{{tid}}/rounds/{{number}}/close",
        tags=["tournament"],
        responses={404: {}, 409: {}, 422: {}},
    )
    def post_close(
        tid: IntId,
        number: IntId,
        _a: Admin,
        sb: SB,
        body: Annotated[CloseIn | None, Body()] = None,
    ) -> dict[str, Any]:
        """Close a round. Each unfinished match needs a decision in ``decisions`` (wait,
        as_played, forfeit_ew, forfeit_ns, void); without one for every such match the answer
        is 409 listing them (``undecided``) and nothing changes."""
        body = body or CloseIn()
        plan = [(d.match, d.decision, d.reason) for d in body.decisions]
        with sb.sf() as s:
            service.close_round(s, tid, number, plan, body.reason)
            out = next(r for r in service.rounds_json(s, tid) if r["number"] == number)
        sb.directory.invalidate()
        return {"tournament": tid, "round": number, "status": "closed", "matches": out["matches"]}

    @app.post(
        f"{API}/tournaments/{{tid}}/rounds/{{number}}/reopen",
        tags=["tournament"],
        responses={404: {}, 409: {}, 422: {}},
    )
    def post_reopen(tid: IntId, number: IntId, body: ReopenIn, _a: Admin, sb: SB) -> dict[str, Any]:
        """Reopen a closed round, with a reason (recorded); refused while another is open."""
        with sb.sf() as s:
            service.reopen_round(s, tid, number, body.reason)
        sb.directory.invalidate()
        return {"tournament": tid, "round": number, "status": "open"}

    @app.get(
        f"{API}/tournaments/{{tid}}/rounds/{{number}}/clock",
        tags=["tournament"],
        responses={404: {}},
    )
    def get_clock(tid: IntId, number: IntId, sb: SB) -> dict[str, Any]:
        """The round clock of a time-limited round: ``state`` (idle, running, paused, time),
        ``limit_s``, ``elapsed_s``, ``remaining_s``, ``called`` (organiser or limit) and the
        profile's rule at the call of time (``rule``, both languages)."""
        from kiosk.scoreboard.clock import clock_json

        with sb.sf() as s:
            return clock_json(s, tid, number)

    @app.post(
        f"{API}/tournaments/{{tid}}/rounds/{{number}}/clock",
        tags=["tournament"],
        responses={404: {}, 409: {}, 422: {}},
    )
    def post_clock(tid: IntId, number: IntId, body: ClockIn, _a: Admin, sb: SB) -> dict[str, Any]:
        """Start (``minutes``, default the profile's limit), pause, resume or call time on the
        round's clock; answers the clock. 409 when the clock or round is not in a state for it."""
        from kiosk.scoreboard.clock import act, clock_json

        with sb.sf() as s:
            act(s, tid, number, body.action, body.minutes)
            return clock_json(s, tid, number)

    @app.post(
        f"{API}/matches/{{match_id}}/decision",
        tags=["tournament"],
        responses={404: {}, 409: {}, 422: {}},
    )
    def post_decision(match_id: IntId, body: DecisionIn, _a: Admin, sb: SB) -> dict[str, Any]:
        """The organiser's decision on one unfinished match (e.g. one left to go on with
        ``wait`` that will not finish). Recorded; the latest decision is in force."""
        with sb.sf() as s:
            m = service.decide_match(s, match_id, body.decision, body.reason)
            out = {
                "match": m.id,
                "decision": m.decision,
                "history": service.match_decisions(s, m.id),
            }
        sb.directory.invalidate()
        return out

    @app.get(f"{API}/tables/{{table_id}}/assignment", tags=["ingestion"], response_model=Assignment)
    def get_assignment(table_id: str, request: Request, creds: Creds, sb: SB) -> Assignment:
        """The match this table plays now (``current``: its events carry this ``match_id``)
        and the unfinished matches after it. A kiosk asks when a round opens, after a match
        ends, and every few seconds."""
        key = _table_key(sb, table_id, creds)
        reader_for(key, request, creds, sb)
        from kiosk.scoreboard.clock import clock_state

        with sb.sf() as s:
            out = service.assignment(s, key)
            cur = out["current"]
            if cur is not None:
                out["clock"] = clock_state(s, cur["tournament"], cur["round"])
            return Assignment.model_validate(out)

    @app.post(f"{API}/matches/{{match_id}}/override", tags=["tournament"])
    def post_override(match_id: IntId, body: OverrideIn, _a: Admin, sb: SB) -> dict[str, Any]:
        """Set an admin result (no-show, ruling) that wins over the events; null clears it."""
        with sb.sf() as s:
            m = service.set_override(s, match_id, body.result)
            return {"match": m.id, "override": m.override}

    # ------------------------------------------------------------------ standings and export
    @app.get(f"{API}/tournaments/{{tid}}/standings", tags=["standings"])
    def get_standings(tid: IntId, sb: SB) -> dict[str, Any]:
        """Ranked pairs: points, 级差分, 对手分, fouls, rounds latest first, lots (a round robin:
        大分 = points, 小分 = level_diff; a knockout: final places, then the round a pair went
        out in, then that chain)."""
        with sb.sf() as s:
            t = service.get_tournament(s, tid)
            chain = [
                "points",
                "level_diff",
                "opponents_points",
                "fouls",
                "by_round (latest first)",
                "lot",
            ]
            if t.format in formats.GROUP_FORMATS:
                chain = [
                    "place (final, 3rd place match)",
                    "round went out of the knockout (later first)",
                    "place in its group (pairs not in the knockout)",
                    *chain,
                ]
            elif t.format in formats.BEST_OF:
                chain = ["place (final, 3rd place match)", "round went out (later first)", *chain]
            return {
                "tournament": tid,
                "profile": t.profile,
                "format": t.format,
                "lots_seed": t.lots_seed,
                "tie_breaks": chain,
                "standings": [x.to_json() for x in service.compute_standings(s, t)],
            }

    @app.get(
        f"{API}/tournaments/{{tid}}/standings.csv",
        tags=["standings"],
        response_class=PlainTextResponse,
    )
    def get_standings_csv(tid: IntId, sb: SB) -> PlainTextResponse:
        with sb.sf() as s:
            t = service.get_tournament(s, tid)
            rows = service.compute_standings(s, t)
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(CSV_COLUMNS)
        for r in rows:
            d = r.to_json()
            w.writerow([d[c] for c in CSV_COLUMNS])
        return PlainTextResponse(
            buf.getvalue(),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="standings-{tid}.csv"'},
        )

    @app.get(f"{API}/tournaments/{{tid}}/export.json", tags=["standings"])
    def get_export(tid: IntId, sb: SB) -> dict[str, Any]:
        """Everything about the tournament: pairs, tables, rounds, matches, deals, standings,
        a group stage and a knockout's bracket (as GET .../groups and .../bracket)."""
        with sb.sf() as s:
            t = service.get_tournament(s, tid)
            return service.export_json(s, t)

    # ------------------------------------------------------------------ live
    @app.get(f"{API}/stream", tags=["live"], response_class=StreamingResponse)
    async def stream(
        request: Request,
        sb: SB,
        tournament: Annotated[int, Query(ge=1, le=2**31 - 1)],
        once: bool = False,
    ) -> StreamingResponse:
        """Server-Sent Events: ``snapshot`` (full state) first, then ``table`` and
        ``standings`` updates. ``once=true`` sends the snapshot only (for scripts)."""

        def check() -> list[str]:
            with sb.sf() as s:
                service.get_tournament(s, tournament)
                return list(service.table_ids(s, tournament))

        tables = await run_in_threadpool(check)
        sub = None if once else sb.hub.subscribe(tournament)

        async def body() -> AsyncIterator[bytes]:
            try:
                states = [
                    (await sb.hub.table(t, sb.directory.match_for(t))).to_json() for t in tables
                ]
                standings = await sb._load_standings(tournament)
                yield sse(
                    "snapshot",
                    {
                        "tournament": tournament,
                        "tables": states,
                        "standings": standings["standings"],
                    },
                )
                if sub is None:
                    return
                while True:
                    try:
                        msg = await asyncio.wait_for(sub.queue.get(), KEEPALIVE_S)
                    except TimeoutError:
                        yield b": keepalive\n\n"
                        continue
                    if msg is None:
                        return
                    yield msg
            finally:
                if sub is not None:
                    sb.hub.unsubscribe(sub)

        return StreamingResponse(
            body(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    register_pages(app)
    register_health(app)
    register_decks(app)

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/scoreboard", status_code=307)

    return app


def swagger_ui_dir() -> Path:
    """The Swagger UI files (``swagger-ui-bundle.js``, ``swagger-ui.css``) that the
    ``swagger-ui-py`` package ships, found without importing it (its import pulls in more)."""
    import importlib.util

    spec = importlib.util.find_spec("swagger_ui")
    for loc in (spec.submodule_search_locations or []) if spec else []:
        static = Path(loc) / "static"
        if (static / "swagger-ui-bundle.js").is_file():
            return static
    raise RuntimeError(
        "the Swagger UI files for /docs are missing: install the scoreboard's dependencies "
        "(pip install swagger-ui-py, or `make setup`)"
    )


def _pair_out(p: Pair) -> PairOut:
    return PairOut(
        id=p.id,
        number=p.number,
        name=p.name,
        players=p.players,
        club=p.club,
        withdrawn=p.withdrawn,
    )
