"""Live push: table summaries and standings to Server-Sent-Events subscribers.

Every connection starts with a full ``snapshot`` (so a reconnect always has the whole state),
then gets ``table`` events as events are ingested and ``standings`` when results change
(debounced by ``push_interval``). Each process keeps the table summaries in memory; a summary
that cannot be updated in order (a resent gap, a new match) is rebuilt from the database.

Several processes on one PostgreSQL act as one scoreboard (``Peers``): each tells the others
what it stored with ``NOTIFY`` on the database's live channel (the new events themselves when
they fit in a notification, else which table to re-read), and listens on it and on the directory
channel (``db.py``: tokens, tables, rounds, matches changed), so a page served by one process
shows events another stored within milliseconds, and a token made or rotated through one is
known to all. Notifications are sent after the events are committed; one lost to a dropped
connection only delays that table's summary until its next event (or the page's reconnect,
which reads everything from the database), and a listener that reconnects re-reads all.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from kiosk.scoreboard.db import ORIGIN, channel
from kiosk.scoreboard.fold import TableState

log = logging.getLogger("guandan.scoreboard")
#: PostgreSQL refuses a NOTIFY payload of 8000 bytes or more; bigger ones name the table only.
MAX_PAYLOAD = 7800
#: The queued notifications, in order, in one transaction (delivered at its commit). The
#: payloads go as one binary text[] parameter: in text format psycopg quotes every payload's
#: JSON for the array literal (~30 us each, measured), in binary it only copies them.
_NOTIFY = """
SELECT pg_notify(%(channel)s, u.p)
  FROM unnest(%(payloads)b::text[]) WITH ORDINALITY AS u(p, i) ORDER BY u.i
"""

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
        #: the other processes on the same PostgreSQL (None: this process is alone)
        self.peers: Peers | None = None

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
        texts: list[str] | None = None,
    ) -> None:
        """Events this process stored: tell the other processes, update and push.
        ``texts``: the bodies as JSON text, when at hand (not serialised again)."""
        if not bodies:
            return
        if self.peers is not None:
            self.peers.publish(tournament, table, bodies, results_changed, texts)
        await self.apply(tournament, table, bodies, results_changed)

    async def apply(
        self,
        tournament: int | None,
        table: str,
        bodies: list[dict[str, Any]] | None,
        results_changed: bool,
        match_id: int | None = None,
    ) -> None:
        """Update the table's summary with events stored (here or by another process) and
        push it; ``bodies`` None: the events are not at hand, re-read the table."""
        state = self.tables.get(table)
        if bodies is not None:
            match_id = bodies[-1].get("_match")
        in_order = (
            bodies is not None
            and state is not None
            and state.match_id == match_id
            and all(b.get("_match") == match_id for b in bodies)
            # the next seq: a summary never skips one (an event stored by a process that did
            # not know this one yet, a resent gap): it is re-read instead
            and int(bodies[0]["seq"]) == state.last_seq + 1
            and not any(b.get("type") == "correction" for b in bodies)
        )
        if in_order and state is not None and bodies is not None:
            for b in bodies:
                state.apply(b)
        elif state is not None or self._interested(tournament):
            state = await self._load_table(table, match_id)
            self.tables[table] = state
        if state is not None and self._interested(tournament):
            self._publish(tournament, sse("table", state.to_json()))
        if results_changed and tournament is not None and self._interested(tournament):
            self._schedule_standings(tournament)

    def forget(self) -> None:
        """Drop the cached summaries (re-read on next use): updates may have been missed."""
        self.tables.clear()

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


class Peers:
    """The other scoreboard processes on this PostgreSQL database (LISTEN/NOTIFY).

    ``publish`` queues a notification of events stored here; a sender task sends what is queued
    in one statement per turn on its own connection. A listener task applies the other
    processes' notifications to ``hub`` and reloads ``directory`` when the directory channel
    says tokens, tables, rounds or matches changed (or an event ended a match).

    Events are published only once another process is known (``others``): a process alone on
    its database spent ~18 % of its ingest CPU, and PostgreSQL more, notifying itself (load
    bench, 2026-12-05). Each listener says ``hello <origin>`` on the directory channel when it
    starts listening (and again after a reconnect); a process that hears it answers ``here
    <origin>``, and a live notification from another process counts too. Until a newcomer is
    heard (a few ms) events stored here reach it only through the database; its summaries
    then skip a seq, and ``LiveHub.apply`` re-reads a summary that would skip one.
    """

    def __init__(self, connect_kwargs: dict[str, Any], hub: LiveHub, directory: Any) -> None:
        self._kwargs = connect_kwargs
        self._hub = hub
        self._directory = directory
        self._queue: list[str] = []
        #: presence messages for the directory channel (``here <origin>``)
        self._control: list[str] = []
        #: the other processes heard on this database (their origins)
        self.others: set[str] = set()
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._live: str | None = None
        self._dir: str | None = None
        self._own = '{"o":' + json.dumps(ORIGIN) + ","
        self.ready = asyncio.Event()  # set once the listener listens
        self.sent = 0
        self.received = 0
        self.dropped = 0

    @classmethod
    def for_engine(cls, engine: Any, hub: LiveHub, directory: Any) -> Peers:
        _args, kwargs = engine.dialect.create_connect_args(engine.url)
        kwargs.pop("context", None)
        return cls(kwargs, hub, directory)

    def stats(self) -> dict[str, int]:
        return {
            "sent": self.sent,
            "received": self.received,
            "dropped": self.dropped,
            "others": len(self.others),
        }

    async def start(self, timeout: float = 10.0) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._listen()), loop.create_task(self._send())]
        try:  # serve only once the others' notifications are heard (a short wait at start)
            await asyncio.wait_for(self.ready.wait(), timeout)
        except TimeoutError:
            log.warning("peers: not listening after %.0f s; retrying in the background", timeout)

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            try:
                await task
            except asyncio.CancelledError:
                pass
        self._tasks = []

    def publish(
        self,
        tournament: int | None,
        table: str,
        bodies: list[dict[str, Any]],
        results_changed: bool,
        texts: list[str] | None = None,
    ) -> None:
        """Queue a notification of events stored here: ``{"o", "tn", "tb", "r", "b"}`` with
        the bodies (``texts``: the same as JSON text, spliced in as they are), or without them
        (``"b": null``, the match and whether it ended) when that is too big for NOTIFY.
        Nothing while no other process is known."""
        if not self.others:
            return
        msg: dict[str, Any] = {"o": ORIGIN, "tn": tournament, "tb": table, "r": results_changed}
        if texts is not None and len(texts) == len(bodies):
            head = json.dumps(msg, ensure_ascii=False, separators=(",", ":"))
            payload = f'{head[:-1]},"b":[{",".join(texts)}]}}'
        else:
            msg["b"] = bodies
            payload = json.dumps(msg, ensure_ascii=False, separators=(",", ":"))
        if len(payload) > MAX_PAYLOAD // 4 and len(payload.encode()) > MAX_PAYLOAD:
            msg["b"] = None
            msg["m"] = bodies[-1].get("_match")
            msg["end"] = any(b.get("type") == "match_ended" for b in bodies)
            payload = json.dumps(msg, ensure_ascii=False, separators=(",", ":"))
        self._queue.append(payload)
        self._wake.set()

    async def _connect(self) -> Any:
        import psycopg

        conn = await psycopg.AsyncConnection.connect(**self._kwargs, autocommit=True)
        cur = await conn.execute("SELECT current_database(), current_schema()")
        row = await cur.fetchone()
        assert row is not None
        database, schema = row
        self._live = channel("live", database, schema or "")
        self._dir = channel("dir", database, schema or "")
        return conn

    async def _send(self) -> None:
        conn = None
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch, self._queue = self._queue[:200], self._queue[200:]
            control, self._control = self._control, []
            if self._queue:
                self._wake.set()
            if not batch and not control:
                continue
            try:
                if conn is None or conn.closed:
                    conn = await self._connect()
                for note in control:
                    await conn.execute("SELECT pg_notify(%s, %s)", (self._dir, note))
                if not batch:
                    continue
                # one statement text whatever the batch (prepared once; a text per batch size
                # cost psycopg a parse of up to 200 placeholders, and PostgreSQL a plan, a turn)
                await conn.execute(_NOTIFY, {"channel": self._live, "payloads": batch})
                self.sent += len(batch)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the stored events stand; peers re-read later
                self.dropped += len(batch)
                log.exception("peers: %d notifications not sent", len(batch))
                if conn is not None:
                    await conn.close()
                conn = None
                await asyncio.sleep(0.5)

    async def _listen(self) -> None:
        backoff = 0.2
        first = True
        while True:
            conn = None
            try:
                conn = await self._connect()
                await conn.execute(f'LISTEN "{self._live}"')
                await conn.execute(f'LISTEN "{self._dir}"')
                # the others learn this process is here (and answer that they are)
                await conn.execute("SELECT pg_notify(%s, %s)", (self._dir, f"hello {ORIGIN}"))
                if not first:  # notifications were missed meanwhile: re-read everything
                    self._directory.invalidate()
                    self._hub.forget()
                first = False
                self.ready.set()
                backoff = 0.2
                async for note in conn.notifies():
                    self.received += 1
                    try:
                        await self._on_note(note.channel, note.payload)
                    except Exception:  # noqa: BLE001 - one bad note must not stop listening
                        log.exception("peers: notification not applied")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - reconnect with backoff
                log.warning("peers: listener connection lost (%s); reconnecting", exc)
                await asyncio.sleep(backoff)
                backoff = min(5.0, backoff * 2)
            finally:
                if conn is not None and not conn.closed:
                    await conn.close()

    async def _on_note(self, name: str, payload: str) -> None:
        if name == self._dir:
            kind, _, origin = payload.partition(" ")
            if kind in ("hello", "here") and origin:  # presence, not a directory change
                if origin != ORIGIN:
                    self.others.add(origin)
                    if kind == "hello":
                        self._control.append(f"here {ORIGIN}")
                        self._wake.set()
                return
            if payload != ORIGIN:
                self._directory.invalidate()
            return
        if payload.startswith(self._own):
            return  # this process's own
        msg = json.loads(payload)
        if isinstance(msg.get("o"), str):
            self.others.add(msg["o"])
        bodies = msg.get("b")
        if bodies is None:
            ended = [msg.get("m")] if msg.get("end") else []
        else:
            ended = [b.get("_match") for b in bodies if b.get("type") == "match_ended"]
        if ended and self._directory.moves_current(ended):
            # a finished match of a closed round leaves its table's queue: the next one
            # becomes current
            self._directory.refresh_soon()
        await self._hub.apply(msg.get("tn"), msg["tb"], bodies, bool(msg.get("r")), msg.get("m"))
