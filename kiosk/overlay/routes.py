"""Overlay pages and their delayed SSE feed, mounted on the table kiosk's app.

The delay is applied on the server: the kiosk keeps its recent states with their wall-clock
times (``TableWorker.history``) and the feed sends, at any moment, the newest state at least
``delay`` seconds old (standings likewise). Every (re)connect starts with the full state
(``event: state`` and ``event: standings``), so an OBS source that reloads shows everything.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles

from kiosk.table.i18n import inline_state

HERE = Path(__file__).parent
MAX_DELAY = 900.0


class StandingsFeed:
    """Polls the scoreboard's standings for the tournament that holds this table."""

    def __init__(
        self,
        url: str,
        table: str,
        *,
        tournament: int | None = None,
        every_s: float = 3.0,
        history_s: float = MAX_DELAY + 60,
    ) -> None:
        self.url = url.rstrip("/")
        self.table = table
        self.tournament = tournament
        self.every_s = every_s
        self.history_s = history_s
        self.history: deque[tuple[float, dict[str, Any]]] = deque()
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=5) as resp:
            return json.loads(resp.read().decode("utf-8"))

    def _find_tournament(self) -> int | None:
        for t in self._get("/api/v1/tournaments"):
            tables = self._get(f"/api/v1/tournaments/{t['id']}/tables")
            if any(x.get("id") == self.table for x in tables):
                return int(t["id"])
        return None

    def poll(self) -> None:
        try:
            if self.tournament is None:
                self.tournament = self._find_tournament()
                if self.tournament is None:
                    self.error = f"no tournament on the scoreboard has table {self.table!r}"
                    return
            data = self._get(f"/api/v1/tournaments/{self.tournament}/standings")
            names: dict[int, str] = {}
            try:
                for p in self._get(f"/api/v1/tournaments/{self.tournament}/pairs"):
                    names[int(p["number"])] = str(p["name"])
            except (urllib.error.URLError, OSError, ValueError, KeyError):
                pass
            data["names"] = {str(k): v for k, v in names.items()}
            self.error = None
        except (urllib.error.URLError, OSError, ValueError, KeyError) as exc:
            self.error = f"standings unavailable: {getattr(exc, 'reason', exc)}"
            return
        now = time.time()
        with self._lock:
            if not self.history or self.history[-1][1] != data:
                self.history.append((now, data))
            while len(self.history) > 2 and self.history[1][0] < now - self.history_s:
                self.history.popleft()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.poll()
            self._stop.wait(self.every_s)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="overlay-standings", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def delayed(self, delay: float) -> tuple[float, dict[str, Any]] | None:
        cut = time.time() - delay
        with self._lock:
            for at, data in reversed(self.history):
                if at <= cut:
                    return at, data
        return None


def _overlay_fields(snap: dict[str, Any]) -> dict[str, Any]:
    """What a broadcast may show: no referee-only detail (recent list, outbox, PIN state)."""
    keep = (
        "table",
        "profile",
        "profile_title",
        "seq",
        "match",
        "deal_no",
        "levels",
        "match_over",
        "winner",
        "team_fouls",
        "deal",
        "plays",
        "fouls",
        "last_deal",
        "last_match",
        "seating",
        "report_threshold",
        "foul_limit",
        "tribute",
        "shot_clock",
        "now_t",
        "rate",
    )
    return {k: snap.get(k) for k in keep}


def register_overlay(app: FastAPI, kiosk: Any) -> None:
    app.mount("/overlay/static", StaticFiles(directory=HERE / "static"), name="overlay-static")
    w = kiosk.worker

    def _initial(delay: float | None) -> dict[str, Any]:
        d = kiosk.overlay_delay if delay is None else delay
        got = w.delayed(d)
        st = kiosk.standings.delayed(d) if kiosk.standings is not None else None
        return {
            "delay": d,
            "state": _overlay_fields(got[1]) if got else None,
            "standings": st[1] if st else None,
        }

    @app.get("/overlay/table", include_in_schema=False)
    def table_page(
        delay: float | None = Query(default=None, ge=0, le=MAX_DELAY),
        layout: str = Query(default="full", pattern="^(full|lower)$", description="full or lower"),
        lang: str = Query(default="zh", pattern="^(zh|en)$", description="zh or en"),
    ) -> HTMLResponse:
        """The table for broadcast: ``layout=full`` (seats round the picture, the trick large
        in the middle) or ``lower`` (a lower third); ``lang`` zh (default) or en; sized to the
        viewport (1920x1080 or 1280x720)."""
        return HTMLResponse(inline_state(HERE / "static" / "table.html", _initial(delay)))

    @app.get("/overlay/ticker", include_in_schema=False)
    def ticker_page(
        delay: float | None = Query(default=None, ge=0, le=MAX_DELAY),
        lang: str = Query(default="zh", pattern="^(zh|en)$", description="zh or en"),
    ) -> HTMLResponse:
        return HTMLResponse(inline_state(HERE / "static" / "ticker.html", _initial(delay)))

    @app.get("/overlay/state")
    def overlay_state(
        delay: float | None = Query(default=None, ge=0, le=MAX_DELAY),
    ) -> JSONResponse:
        return JSONResponse(_initial(delay))

    @app.get("/overlay/stream")
    async def overlay_stream(
        request: Request,
        delay: float | None = Query(default=None, ge=0, le=MAX_DELAY),
    ) -> StreamingResponse:
        d = kiosk.overlay_delay if delay is None else delay

        async def body() -> AsyncIterator[bytes]:
            yield f"event: hello\ndata: {json.dumps({'delay': d})}\n\n".encode()
            seen_ver = -1
            seen_st = -1.0
            last = time.monotonic()
            while True:
                if await request.is_disconnected():
                    return
                got = w.delayed(d)
                if got is not None and got[0] != seen_ver:
                    seen_ver = got[0]
                    data = json.dumps(_overlay_fields(got[1]), ensure_ascii=False)
                    yield f"event: state\ndata: {data}\n\n".encode()
                    last = time.monotonic()
                if kiosk.standings is not None:
                    st = kiosk.standings.delayed(d)
                    if st is not None and st[0] != seen_st:
                        seen_st = st[0]
                        data = json.dumps(st[1], ensure_ascii=False)
                        yield f"event: standings\ndata: {data}\n\n".encode()
                        last = time.monotonic()
                if time.monotonic() - last > 10:
                    yield b": keepalive\n\n"
                    last = time.monotonic()
                await asyncio.sleep(0.2)

        return StreamingResponse(
            body(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
