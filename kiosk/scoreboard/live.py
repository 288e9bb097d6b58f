"""Live push: table summaries and standings to Server-Sent-Events subscribers.

Every connection starts with a full ``snapshot`` (so a reconnect always has the whole state),
then gets ``table`` events as events are ingested and ``standings`` when results change
(debounced by ``push_interval``). One process keeps the table summaries in memory; a summary
that cannot be updated in order (a resent gap, a new match) is rebuilt from the database.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from kiosk.scoreboard.fold import TableState

Loader = Callable[[str, int | None], Awaitable[TableState]]
StandingsLoader = Callable[[int], Awaitable[dict[str, Any]]]


def sse(event: str, data: Any) -> bytes:
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event}\ndata: {payload}\n\n".encode()


@dataclass
class Subscriber:
    tournament: int | None
    queue: asyncio.Queue[bytes | None] = field(default_factory=lambda: asyncio.Queue(maxsize=1000))
    dropped: bool = False

    def offer(self, message: bytes) -> None:
        if self.dropped:
            return
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            # A client that does not read is cut off; it reconnects and gets a snapshot.
            self.dropped = True
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(None)


class LiveHub:
    def __init__(self, load_table: Loader, load_standings: StandingsLoader, interval: float):
        self._load_table = load_table
        self._load_standings = load_standings
        self._interval = interval
        self.tables: dict[str, TableState] = {}
        self.subscribers: list[Subscriber] = []
        self._pending_standings: set[int] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def subscribe(self, tournament: int | None) -> Subscriber:
        sub = Subscriber(tournament)
        self.subscribers.append(sub)
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        if sub in self.subscribers:
            self.subscribers.remove(sub)

    async def table(self, table: str, match_id: int | None) -> TableState:
        state = self.tables.get(table)
        if state is None or state.match_id != match_id:
            state = await self._load_table(table, match_id)
            self.tables[table] = state
        return state

    async def on_ingest(
        self,
        tournament: int | None,
        table: str,
        bodies: list[dict[str, Any]],
        results_changed: bool,
    ) -> None:
        if not bodies:
            return
        state = self.tables.get(table)
        match_id = bodies[-1].get("_match")
        in_order = (
            state is not None
            and state.match_id == match_id
            and all(b.get("_match") == match_id for b in bodies)
            and int(bodies[0]["seq"]) > state.last_seq
            and not any(b.get("type") == "correction" for b in bodies)
        )
        if in_order and state is not None:
            for b in bodies:
                state.apply(b)
        elif state is not None or self._interested(tournament):
            state = await self._load_table(table, match_id)
            self.tables[table] = state
        if state is not None and self._interested(tournament):
            self._publish(tournament, sse("table", state.to_json()))
        if results_changed and tournament is not None and self._interested(tournament):
            self._schedule_standings(tournament)

    def _interested(self, tournament: int | None) -> bool:
        return any(s.tournament in (None, tournament) for s in self.subscribers)

    def _publish(self, tournament: int | None, message: bytes) -> None:
        for sub in list(self.subscribers):
            if sub.tournament is None or sub.tournament == tournament:
                sub.offer(message)

    def _schedule_standings(self, tournament: int) -> None:
        if tournament in self._pending_standings:
            return
        self._pending_standings.add(tournament)

        async def push() -> None:
            try:
                await asyncio.sleep(self._interval)
            finally:
                self._pending_standings.discard(tournament)
            data = await self._load_standings(tournament)
            self._publish(tournament, sse("standings", data))

        task = asyncio.get_running_loop().create_task(push())
        self._tasks.add(task)  # keep a reference until done (the loop holds only a weak one)
        task.add_done_callback(self._tasks.discard)
