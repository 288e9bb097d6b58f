"""Hall health routes (kiosk/scoreboard/health.py holds the logic): the kiosks' reports, the
JSON, Prometheus ``/metrics`` and the grid page ``/hall/{tournament}``."""

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from sqlalchemy import select
from starlette.concurrency import run_in_threadpool

from kiosk.scoreboard import service
from kiosk.scoreboard.health import (
    HealthIn,
    current_deck,
    history,
    judge,
    latest,
    metrics_text,
    store_report,
    table_json,
    tournament_health,
)
from kiosk.scoreboard.models import GameTable, Tournament
from kiosk.scoreboard.pages import TEMPLATES
from kiosk.scoreboard.schemas import IntId
from kiosk.scoreboard.service import ApiError
from kiosk.scoreboard.state import API, SB, Creds, State, table_for_token

METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def register_health(app: FastAPI) -> None:
    @app.post(
        f"{API}/tables/{{table_id}}/health",
        tags=["health"],
        responses={401: {}, 403: {}, 404: {}, 422: {}},
    )
    async def post_health(table_id: str, body: HealthIn, creds: Creds, sb: SB) -> dict[str, Any]:
        """A table kiosk's health report (its own table token; every few seconds beside the
        outbox). Answers the status the scoreboard gives the table now, with the reasons (a
        deck older than the tournament's current one among them)."""
        own = table_for_token(creds.credentials if creds else None, sb)
        key = sb.directory.resolve(table_id, own)
        if key != own:
            raise ApiError(
                403,
                f"this token belongs to table {sb.directory.code(own)!r}, not {table_id!r}: "
                "post the report to /api/v1/tables/<your table>/health",
            )

        def store() -> dict[str, Any]:
            with sb.sf() as s:
                row = store_report(s, own, body, sb.settings.health_keep_s)
                gt = s.get(GameTable, own)
                deck = None if gt is None else current_deck(s, gt.tournament_id)
                status, reasons = judge(row.body, 0.0, deck)
            return {"table": own, "status": status, "reasons": [r.to_json() for r in reasons]}

        return await run_in_threadpool(store)

    @app.get(f"{API}/tournaments/{{tid}}/health", tags=["health"], responses={404: {}})
    def get_health(tid: IntId, sb: SB) -> dict[str, Any]:
        """Every table of the tournament: ok / degraded / offline with the reasons (both
        languages), the age of its last report and the report itself."""
        with sb.sf() as s:
            return tournament_health(s, service.get_tournament(s, tid))

    @app.get(f"{API}/tables/{{table_id}}/health", tags=["health"], responses={404: {}})
    def get_table_health(
        table_id: str,
        sb: SB,
        creds: Creds,
        minutes: Annotated[float, Query(gt=0, le=60 * 24 * 366)] = 60.0,
        limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
    ) -> dict[str, Any]:
        """The table's status now and its reports of the last ``minutes`` (oldest first)."""
        own = sb.directory.table_for_token(creds.credentials) if creds else None
        key = sb.directory.resolve(table_id, own)
        if key is None:
            raise ApiError(404, f"no table {table_id!r} on this scoreboard (没有此桌)")
        with sb.sf() as s:
            gt = service.find_table(s, key)
            now = datetime.now(UTC)
            deck = current_deck(s, gt.tournament_id)
            out = table_json(gt, latest(s, [key]).get(key), now, deck)
            out["history"] = history(s, key, minutes * 60.0, limit)
            return out

    @app.get("/metrics", tags=["health"], response_class=PlainTextResponse)
    def metrics(
        sb: SB, tournament: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None
    ) -> Response:
        """Prometheus text exposition of every table's health (``?tournament=ID``: one
        tournament's tables): ``guandan_table_up``, ``guandan_table_status{status}``, camera
        frames/s, seconds since frame and event, outbox events by state, disk, CPU temperature,
        model and deck (``guandan_table_info``), the shared deck's version per tournament and
        per table with ``guandan_table_deck_stale`` and ``guandan_table_deck_behind_seconds``."""
        with sb.sf() as s:
            if tournament is not None:
                ts = [service.get_tournament(s, tournament)]
            else:
                ts = list(s.execute(select(Tournament).order_by(Tournament.id)).scalars())
            text = metrics_text(tournament_health(s, t) for t in ts)
        return PlainTextResponse(text, media_type=METRICS_TYPE)

    @app.get("/hall", include_in_schema=False)
    def hall_index(request: Request) -> Response:
        sb: State = request.app.state.sb
        with sb.sf() as s:
            ts = list(s.execute(select(Tournament).order_by(Tournament.id)).scalars())
        if len(ts) == 1:
            return RedirectResponse(f"/hall/{ts[0].id}", status_code=307)
        return TEMPLATES.TemplateResponse(
            request, "board_index.html", {"tournaments": ts, "base": "/hall"}
        )

    @app.get("/hall/{tid}", include_in_schema=False)
    async def hall(request: Request, tid: IntId) -> Response:
        sb: State = request.app.state.sb

        def load() -> dict[str, Any] | None:
            with sb.sf() as s:
                t = s.get(Tournament, tid)
                return None if t is None else tournament_health(s, t)

        data = await run_in_threadpool(load)
        if data is None:
            return HTMLResponse(
                f"<h1>404</h1><p>No tournament {tid}. 没有此比赛。</p>", status_code=404
            )
        return TEMPLATES.TemplateResponse(request, "hall.html", {"h": data, "tid": tid})
