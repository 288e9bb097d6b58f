"""Load benchmark of the scoreboard (issue 6): N simulated tables against a real uvicorn server
on PostgreSQL, loopback only, with an end-of-round burst.

Phases (each table is one kiosk with its own keep-alive connection and an outbox that posts
what is pending — one event, or a batch when events piled up while it waited for an answer):
  round  every table plays its deal at a calm pace (events spread over ``--round-s``)
  burst  end of round: every table posts its last events (final plays, seats out, deal_ended,
         match_ended) within ``--burst-s`` seconds — offered load N * burst_events / burst_s
  max    (optional, --max-s > 0) every table posts single events back to back: capacity

Prints one JSON line per figure: events/s, p50/p99 request latency, p99 event latency
(produced -> acknowledged, including time queued in the outbox), events lost (produced but not
stored exactly once in the database), errors. Stops by itself (every loop is bounded).

With ``--processes N`` (PostgreSQL) N serve processes share the database, the tables spread
over them (table i posts to process i mod N), as behind an HTTP proxy; a live-stream subscriber
on the last process then measures how long events stored by the others take to reach it
(``live_lag``: acknowledged -> seen on its stream). The CPU figures sum every serve process:
``server_cpu_ms_per_event`` and ``total_cpu_ms_per_event`` (with PostgreSQL's) project the
capacity of a bigger machine (events/s ~ cores x 1000 / total ms per event, where CPU limits).

  python bench/scoreboard_load.py                 # 1000 tables, PostgreSQL 127.0.0.1:5432/test
  python bench/scoreboard_load.py --tables 200 --db sqlite:///tmp/x.db
  python bench/scoreboard_load.py --tables 100 --processes 2 --round-s 10 --burst-s 3
  python bench/scoreboard_load.py --profile burst.prof   # cProfile of the serve process's
      # event loop during the burst only (pstats file; the profiler slows the server: read
      # where its time goes, not the figures of that run)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SEATS = "SENW"


#: ``python -c PROFILED OUT scoreboard serve ...``: the CLI with a profiler of the main thread
#: (the event loop) switched on by SIGUSR1 and written to OUT by SIGUSR2.
PROFILED = """
import cProfile, runpy, signal, sys
out, prof = sys.argv[1], cProfile.Profile()
def stop(*_):
    prof.disable()
    prof.dump_stats(out)
signal.signal(signal.SIGUSR1, lambda *_: prof.enable())
signal.signal(signal.SIGUSR2, stop)
sys.argv = ["kiosk", *sys.argv[2:]]
runpy.run_module("kiosk", run_name="__main__", alter_sys=True)
"""


def emit(figure: str, value: Any, unit: str, **extra: Any) -> None:
    print(
        json.dumps(
            {"bench": "scoreboard_load", "figure": figure, "value": value, "unit": unit, **extra},
            ensure_ascii=False,
        ),
        flush=True,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


class Conn:
    """A minimal HTTP/1.1 keep-alive client (the bench must not spend the 2 cores on itself)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: bytes, token: str) -> tuple[int, bytes]:
        """One request; a kept-alive connection the server closed meanwhile is reopened once
        (as any HTTP client does); other failures raise ConnectionError."""
        reused = self.writer is not None
        try:
            return await self._request(method, path, body, token)
        except ConnectionError:
            if not reused:
                raise
            return await self._request(method, path, body, token)

    async def _request(self, method: str, path: str, body: bytes, token: str) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        try:
            self.writer.write(head.encode() + body)
            status_line = await self.reader.readline()
            if not status_line:
                raise ConnectionError("closed")
            status = int(status_line.split()[1])
            length = 0
            while True:
                line = await self.reader.readline()
                if line in (b"\r\n", b"\n", b""):
                    break
                k, _, v = line.decode().partition(":")
                if k.lower() == "content-length":
                    length = int(v)
            data = await self.reader.readexactly(length) if length else b""
            return status, data
        except (OSError, ConnectionError, asyncio.IncompleteReadError, ValueError):
            self.close()
            raise ConnectionError("request failed") from None

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def ev(table: str, seq: int, typ: str, deal: int = 1, **f: Any) -> dict[str, Any]:
    return {
        "v": 1,
        "id": f"{table}:{seq}",
        "table": table,
        "deal": deal,
        "seq": seq,
        "t": float(seq),
        "type": typ,
        **f,
    }


def table_events(table: str, rng: random.Random, winner: str) -> tuple[list[dict], list[dict]]:
    """A deal in two parts: (round events, end-of-round events). Shapes as CONTRACT.md."""
    ranks = "3456789TJQKA"
    order = ["S", "N", "E", "W"] if winner == "NS" else ["E", "W", "S", "N"]
    evs = [ev(table, 1, "deal_started", level="2", leader=order[0])]
    seq = 2
    for _ in range(40):
        seat = SEATS[seq % 4]
        if rng.random() < 0.4:
            evs.append(ev(table, seq, "pass", seat=seat))
        else:
            r = rng.choice(ranks)
            evs.append(ev(table, seq, "play", seat=seat, cards=[f"S{r}", f"H{r}"], combo="pair"))
        seq += 1
    tail = []
    for _ in range(6):
        tail.append(ev(table, seq, "play", seat=SEATS[seq % 4], cards=["D5"], combo="single"))
        seq += 1
    for place, seat in enumerate(order, start=1):
        tail.append(ev(table, seq, "seat_out", seat=seat, place=place))
        seq += 1
    levels = {"NS": "5", "EW": "2"} if winner == "NS" else {"NS": "2", "EW": "5"}
    tail.append(ev(table, seq, "deal_ended", order=order, levels=levels))
    seq += 1
    tail.append(ev(table, seq, "match_ended", winner=winner))
    return evs, tail


@dataclass
class Stats:
    req_lat: list[float] = field(default_factory=list)
    ev_lat: list[float] = field(default_factory=list)
    acked: int = 0
    requests: int = 0
    errors: int = 0
    retries: int = 0
    batch_sizes: list[int] = field(default_factory=list)
    first: float = 0.0
    last: float = 0.0
    #: (table, highest seq acknowledged, when) per answered request
    acks: list[tuple[str, int, float]] = field(default_factory=list)


async def kiosk(
    port: int,
    table: str,
    token: str,
    schedule: list[tuple[float, dict]],
    stats: Stats,
    t0: float,
    deadline: float,
    single_only: bool,
) -> int:
    """Outbox: events become pending at their scheduled time; post what is pending (up to 100)
    and wait for the answer; retry with backoff on errors. Returns events still unacked."""
    conn = Conn(port)
    pending: list[tuple[float, dict]] = []
    i = 0
    backoff = 0.05
    try:
        while (i < len(schedule) or pending) and time.perf_counter() < deadline:
            now = time.perf_counter() - t0
            while i < len(schedule) and schedule[i][0] <= now:
                pending.append((t0 + schedule[i][0], schedule[i][1]))
                i += 1
            if not pending:
                await asyncio.sleep(max(0.0, schedule[i][0] - now))
                continue
            chunk = pending[:1] if single_only else pending[:100]
            if len(chunk) == 1:
                path, body = "/api/v1/events", json.dumps(chunk[0][1]).encode()
            else:
                path, body = "/api/v1/events/batch", json.dumps([c[1] for c in chunk]).encode()
            start = time.perf_counter()
            try:
                status, _data = await conn.request("POST", path, body, token)
            except ConnectionError:
                status = 0
            end = time.perf_counter()
            stats.requests += 1
            if status != 200:
                stats.errors += 1
                stats.retries += 1
                await asyncio.sleep(backoff)
                backoff = min(2.0, backoff * 2)
                continue
            backoff = 0.05
            stats.req_lat.append(end - start)
            stats.batch_sizes.append(len(chunk))
            for produced, _e in chunk:
                stats.ev_lat.append(end - produced)
            stats.acked += len(chunk)
            stats.acks.append((table, max(int(c[1]["seq"]) for c in chunk), end))
            stats.first = stats.first or start
            stats.last = end
            del pending[: len(chunk)]
    finally:
        conn.close()
    return len(pending) + (len(schedule) - i)


async def watch(port: int, tournament: int, seen: dict[str, list[tuple[int, float]]]) -> None:
    """A live page's stream: (last_seq, arrival) of every ``table`` update, per table."""
    # the snapshot is one line: all tables and the standings (over asyncio's 64 KiB default
    # line limit from ~150 tables on)
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=2**26)
    try:
        writer.write(
            f"GET /api/v1/stream?tournament={tournament} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Accept: text/event-stream\r\n\r\n".encode()
        )
        kind = b""
        while True:
            line = await reader.readline()
            if not line:
                return
            if line.startswith(b"event: "):
                kind = line[7:].strip()
            elif line.startswith(b"data: ") and kind == b"table":
                now = time.perf_counter()
                data = json.loads(line[6:])
                seen.setdefault(data["table"], []).append((int(data["last_seq"]), now))
    finally:
        writer.close()


def live_lags(
    stats: Stats, seen: dict[str, list[tuple[int, float]]], others: set[str]
) -> tuple[list[float], int]:
    """For each ack of a table served by another process: seconds until the watcher's stream
    showed that seq (or later); and how many it never showed."""
    lags, unseen = [], 0
    for table, seq, at in stats.acks:
        if table not in others:
            continue
        t = next((when for last, when in seen.get(table, ()) if last >= seq), None)
        if t is None:
            unseen += 1
        else:
            lags.append(max(0.0, t - at))
    return lags, unseen


async def run_phase(
    ports: dict[str, int],
    tokens: dict[str, str],
    plans: dict[str, list[tuple[float, dict]]],
    limit_s: float,
    single_only: bool = False,
    watcher: tuple[int, int] | None = None,
) -> tuple[Stats, int, float, dict[str, list[tuple[int, float]]]]:
    """Every table posts to its process's port; ``watcher`` (port, tournament): a live-stream
    subscriber there records what it is shown."""
    stats = Stats()
    seen: dict[str, list[tuple[int, float]]] = {}
    watch_task = None
    if watcher is not None:
        watch_task = asyncio.create_task(watch(watcher[0], watcher[1], seen))
        await asyncio.sleep(0.5)  # subscribed (its snapshot read) before the load starts
    t0 = time.perf_counter() + 0.2
    deadline = t0 + limit_s
    left = await asyncio.gather(
        *[kiosk(ports[t], t, tokens[t], plans[t], stats, t0, deadline, single_only) for t in plans]
    )
    if watch_task is not None:
        await asyncio.sleep(1.0)  # what is still on its way to the stream
        watch_task.cancel()
        try:
            await watch_task
        except (asyncio.CancelledError, OSError):
            pass
    return stats, sum(left), time.perf_counter() - t0, seen


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of processes (Linux /proc; 0 where unreadable)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def postgres_pids() -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "comm").read_text().strip() == "postgres":
                    out.append(int(d.name))
            except OSError:
                continue
    return out


def report(
    phase: str,
    stats: Stats,
    unacked: int,
    offered: float | None,
    cond: dict,
    cpu: tuple[float, float] | None = None,
) -> None:
    span = max(1e-9, stats.last - stats.first)
    if cpu is not None:
        server_cpu, pg_cpu = cpu
        emit(
            f"{phase}.server_cpu_ms_per_event",
            round(1000 * server_cpu / max(1, stats.acked), 3),
            "ms",
            server_cpu_s=round(server_cpu, 2),
            postgres_cpu_s=round(pg_cpu, 2),
            loadavg=os.getloadavg()[0],
            **cond,
        )
        emit(
            f"{phase}.total_cpu_ms_per_event",
            round(1000 * (server_cpu + pg_cpu) / max(1, stats.acked), 3),
            "ms",
            note="serve processes + PostgreSQL; events/s ~ cores x 1000 / this where CPU limits",
            **cond,
        )
        emit(
            f"{phase}.events_per_server_cpu_s",
            round(stats.acked / max(1e-9, server_cpu), 1),
            "events/s",
            note="capacity of one core given to the server alone",
            **cond,
        )
    emit(f"{phase}.events_per_s", round(stats.acked / span, 1), "events/s", offered=offered, **cond)
    emit(f"{phase}.requests_per_s", round(stats.requests / span, 1), "requests/s", **cond)
    emit(f"{phase}.p50_request_latency", round(pct(stats.req_lat, 0.50) * 1000, 2), "ms", **cond)
    emit(f"{phase}.p99_request_latency", round(pct(stats.req_lat, 0.99) * 1000, 2), "ms", **cond)
    emit(
        f"{phase}.p99_event_latency",
        round(pct(stats.ev_lat, 0.99) * 1000, 2),
        "ms",
        note="produced -> acknowledged, incl. time queued in the outbox",
        **cond,
    )
    mean_batch = sum(stats.batch_sizes) / max(1, len(stats.batch_sizes))
    emit(f"{phase}.mean_events_per_request", round(mean_batch, 2), "events", **cond)
    emit(f"{phase}.errors", stats.errors, "requests", unacked_at_deadline=unacked, **cond)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", type=int, default=1000)
    ap.add_argument(
        "--db",
        default="postgresql://postgres@127.0.0.1:5432/test",
        help="PostgreSQL URL (a fresh schema is made and dropped) or sqlite:///path",
    )
    ap.add_argument("--round-s", type=float, default=20.0, help="spread of the round phase")
    ap.add_argument("--burst-s", type=float, default=5.0, help="window of the end-of-round burst")
    ap.add_argument("--max-s", type=float, default=0.0, help="closed-loop capacity phase (s)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the PostgreSQL schema")
    ap.add_argument(
        "--processes",
        type=int,
        default=1,
        help="serve processes on the one PostgreSQL database, the tables spread over them",
    )
    ap.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="write a cProfile (pstats) of the first serve process's main thread (the event "
        "loop: the ingest path) during the burst to this file",
    )
    args = ap.parse_args()
    if args.tables < 2 or args.tables % 2:
        ap.error("--tables: an even number >= 2 (two pairs per table)")
    if not 1 <= args.processes <= 64:
        ap.error("--processes: 1 to 64 serve processes")
    if args.processes > 1 and not args.db.startswith("postgres"):
        ap.error(
            "--processes N > 1 needs PostgreSQL (--db postgresql://...): SQLite is one process"
        )

    schema = None
    db = args.db
    if db.startswith("postgres"):
        import psycopg

        schema = f"gd_bench_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        with psycopg.connect(db, autocommit=True) as c:
            c.execute(f'CREATE SCHEMA "{schema}"')
        db = f"{db}{'&' if '?' in db else '?'}options=-csearch_path%3D{schema}"
    env = dict(os.environ, GUANDAN_SCOREBOARD_PUSH_INTERVAL="1.0")
    procs: list[subprocess.Popen[bytes]] = []
    logs: list[Path] = []
    server_ports: list[int] = []

    def spawn(migrate: bool) -> None:
        port = free_port()
        path = Path(os.environ.get("TMPDIR", "/tmp")) / f"scoreboard_bench_{port}.log"
        cmd = [sys.executable, "-m", "kiosk", "scoreboard", "serve", "--db", db]
        if args.profile is not None and not procs:
            # SIGUSR1 starts the profiler in the main thread, SIGUSR2 stops it and writes it
            cmd[1:3] = ["-c", PROFILED, str(args.profile.resolve())]
        cmd += ["--port", str(port), "--log-level", "warning"]
        if not migrate:
            cmd.append("--no-migrate")  # the first process migrated the database
        with open(path, "wb") as log:
            procs.append(subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=log))
        logs.append(path)
        server_ports.append(port)

    def wait_ready(i: int) -> None:
        import httpx

        for _ in range(300):
            try:
                url = f"http://127.0.0.1:{server_ports[i]}/healthz"
                if httpx.get(url, timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise SystemExit(f"scoreboard process {i + 1} did not start; see {logs[i]}")

    cond = {
        "tables": args.tables,
        "processes": args.processes,
        "db": "postgresql" if schema else "sqlite",
        "machine": f"{platform.node()} {os.cpu_count()} cpu",
        "date": time.strftime("%Y-%m-%d"),
    }
    try:
        import httpx

        spawn(migrate=True)
        wait_ready(0)
        for i in range(1, args.processes):
            spawn(migrate=False)
            wait_ready(i)
        port = server_ports[0]
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=60) as c:
            tid = c.post("/api/v1/tournaments", json={"name": "bench", "lots_seed": 1}).json()["id"]
            tokens = {}
            for i in range(1, args.tables + 1):
                r = c.post(f"/api/v1/tournaments/{tid}/tables", json={"id": f"B{i}"})
                tokens[f"B{i}"] = r.json()["token"]
            for i in range(1, 2 * args.tables + 1):
                c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": f"P{i}"})
            r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={})
            assert r.status_code == 201, r.text
            # Match-scoped events (issue 42): each event carries the match it was played in,
            # as a kiosk stamps it from GET /api/v1/tables/{t}/assignment.
            match_of = {m["table"]: m["id"] for m in r.json()["matches"] if m["table"]}
            missing_match = sorted(set(tokens) - set(match_of))
            assert not missing_match, f"tables without a match: {missing_match[:5]}"
        time.sleep(2.5)  # the server's table directory refreshes every 2 s
        # Table i posts to process i mod N (as a proxy spreading the kiosks would).
        ports = {t: server_ports[i % len(server_ports)] for i, t in enumerate(tokens)}
        watcher = None
        others: set[str] = set()
        if args.processes > 1:
            watcher = (server_ports[-1], tid)
            others = {t for t, p in ports.items() if p != server_ports[-1]}

        rng = random.Random(args.seed)
        first: dict[str, list[tuple[float, dict]]] = {}
        last: dict[str, list[tuple[float, dict]]] = {}
        produced = 0
        for t in tokens:
            head, tail = table_events(t, rng, rng.choice(["NS", "EW"]))
            for e in head + tail:
                e["match_id"] = match_of[t]
            offs = sorted(rng.uniform(0, args.round_s) for _ in head)
            first[t] = list(zip(offs, head, strict=True))
            offs = sorted(rng.uniform(0, args.burst_s) for _ in tail)
            last[t] = list(zip(offs, tail, strict=True))
            produced += len(head) + len(tail)

        pg_pids = postgres_pids()

        def cpu_now() -> tuple[float, float]:
            servers = cpu_seconds([p.pid for p in procs])
            return servers, cpu_seconds(sorted(set(pg_pids) | set(postgres_pids())))

        def report_lag(phase: str, st: Stats, seen: dict[str, list[tuple[int, float]]]) -> None:
            if watcher is None:
                return
            lags, unseen = live_lags(st, seen, others)
            emit(
                f"{phase}.p99_live_lag_other_process",
                round(pct(lags, 0.99) * 1000, 2),
                "ms",
                p50_ms=round(pct(lags, 0.50) * 1000, 2),
                acks=len(lags) + unseen,
                unseen=unseen,
                note="stored by one process (acknowledged) -> on the live stream of another",
                **cond,
            )

        n_round = sum(len(v) for v in first.values())
        emit("load_average", list(os.getloadavg()), "1/5/15 min", when="before round", **cond)
        c0 = cpu_now()
        st, left, _, seen = asyncio.run(
            run_phase(ports, tokens, first, args.round_s + 120, watcher=watcher)
        )
        c1 = cpu_now()
        used = (c1[0] - c0[0], max(0.0, c1[1] - c0[1]))
        report("round", st, left, round(n_round / args.round_s, 1), cond, used)
        report_lag("round", st, seen)
        n_burst = sum(len(v) for v in last.values())
        emit("load_average", list(os.getloadavg()), "1/5/15 min", when="before burst", **cond)
        c1 = cpu_now()
        if args.profile is not None:
            procs[0].send_signal(signal.SIGUSR1)
        st, left, _, seen = asyncio.run(
            run_phase(ports, tokens, last, args.burst_s + 120, watcher=watcher)
        )
        if args.profile is not None:
            procs[0].send_signal(signal.SIGUSR2)
        c2 = cpu_now()
        used = (c2[0] - c1[0], max(0.0, c2[1] - c1[1]))
        report("burst", st, left, round(n_burst / args.burst_s, 1), cond, used)
        report_lag("burst", st, seen)

        if args.max_s > 0:
            extra: dict[str, list[tuple[float, dict]]] = {}
            for t in tokens:
                base_seq = len(first[t]) + len(last[t]) + 1  # gapless after the deal
                extra[t] = [
                    (0.0, ev(t, base_seq + k, "pass", deal=2, seat=SEATS[k % 4]))
                    for k in range(int(args.max_s * 20))
                ]
                for _off, e in extra[t]:
                    e["match_id"] = match_of[t]
                produced += len(extra[t])
            c3 = cpu_now()
            st, left, _, _seen = asyncio.run(
                run_phase(ports, tokens, extra, args.max_s, single_only=True)
            )
            c4 = cpu_now()
            used = (c4[0] - c3[0], max(0.0, c4[1] - c3[1]))
            report("max_single", st, left, None, cond, used)
            produced -= left  # never posted before the phase's time limit: not produced

        # Lost = produced but not stored exactly once; checked in the database itself.
        from sqlalchemy import func, select

        from kiosk.scoreboard.db import make_engine
        from kiosk.scoreboard.models import EventRow, Match
        from kiosk.scoreboard.settings import normalise_db_url

        engine = make_engine(normalise_db_url(db))
        with engine.connect() as conn:
            stored = conn.execute(select(func.count()).select_from(EventRow)).scalar_one()
            distinct = conn.execute(select(func.count(func.distinct(EventRow.id)))).scalar_one()
            finished = conn.execute(
                select(func.count()).select_from(Match).where(Match.status == "finished")
            ).scalar_one()
            # every event filed under the match it carries (the table's own match)
            filed = conn.execute(select(EventRow.table_id, EventRow.match_id)).all()
        misfiled = sum(1 for table, mid in filed if match_of.get(table) != mid)
        engine.dispose()
        emit(
            "events_lost",
            produced - distinct,
            "events",
            produced=produced,
            stored=stored,
            duplicates=stored - distinct,
            **cond,
        )
        emit("matches_finished", finished, "matches", expected=args.tables, **cond)
        emit("events_misfiled", misfiled, "events", stored=stored, **cond)
        emit("load_average", list(os.getloadavg()), "1/5/15 min", when="after", **cond)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
        if schema and not args.keep:
            import psycopg

            with psycopg.connect(args.db, autocommit=True) as c:
                c.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return 0


if __name__ == "__main__":
    sys.exit(main())
