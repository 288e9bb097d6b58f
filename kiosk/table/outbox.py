"""The durable outbox: every logged event reaches the central scoreboard exactly once.

The outbox table (kiosk/table/store.py) holds a delivery state per event, written in the same
transaction as the event, so nothing is lost by a crash. This thread posts pending events in seq
order, in batches, to ``POST /api/v1/events/batch`` with the table's bearer token. The scoreboard
is idempotent on event ids (a retry of a stored event is a duplicate, stored once), so
"at least once" from here is "exactly once" at the centre.

* Network down / 5xx: retried with exponential backoff (``base_s`` doubling to ``max_s``, with
  jitter; ``max_s`` is 30 s by default and at most ``MAX_BACKOFF_LIMIT``, 300 s, so a kiosk
  catches up within ``max_s`` of the link's return however long it was down); every new event
  also tries at once. The kiosk keeps working for hours and catches up when the link returns.
* The answer's ``missing`` list and a periodic ``GET /api/v1/tables/{table}/missing`` find seqs
  the centre lacks (e.g. its database was restored): those are sent again.
* 401/403 (wrong token), 404 (table unknown): an alarm on the screen; the events wait.
* 422/409 for a batch: the batch is split; an event refused on its own is marked ``rejected``
  with the reason (alarm) and the others go on.
* Match-scoped events: every event carries the scoreboard match it belongs to (``match_id``).
  The kiosk asks ``GET /api/v1/tables/{table}/assignment`` (when the round opens, after a match
  ends, every ``assign_check_s``) and records each answer it uses as an ``assignment`` note: the
  server's match for one *segment* of the log (the events up to and including a
  ``match_ended``, or those after the last one). A match is given to a segment once, in order,
  and never to two segments, so events logged while offline stay with the match they were
  played in whatever the scoreboard's open round is when they arrive. Events of a segment with
  no match yet are ``held`` (kept, not sent; an alarm says why) until the scoreboard assigns one.
  A scoreboard without the assignment route (older) gets the events as they are.
* Event types the scoreboard does not know (read from its ``/openapi.json``; the referee also
  emits ``warning``, ``count_alert``, ``time_called``, ``series_ended`` and ``notice``) stay
  ``local``: kept in the kiosk's log, not sent. The centre sees gaps at their seqs.
"""

from __future__ import annotations

import bisect
import json
import logging
import random
import threading
import time
import urllib.error
import urllib.request
from typing import Any

from kiosk.table.store import DiskFull, EventLog
from kiosk.table.worker import CONTRACT_TYPES, TableWorker

log = logging.getLogger("guandan.table.outbox")
API = "/api/v1"
ASSIGNMENT_PATH = f"{API}/tables/{{table_id}}/assignment"
#: outbox status of events waiting for the scoreboard to assign their match
HELD = "held"
#: The longest wait between retries that may be configured (``--max-backoff``): 5 minutes.
MAX_BACKOFF_LIMIT = 300.0


class _Http:
    def __init__(self, status: int, body: Any, text: str) -> None:
        self.status = status
        self.body = body
        self.text = text


def _detail(resp: _Http) -> str:
    b = resp.body
    if isinstance(b, dict):
        msg = b.get("message") or b.get("detail")
        if isinstance(msg, dict):
            conflicts = msg.get("conflicts")
            first = conflicts[0] if isinstance(conflicts, list) and conflicts else None
            if isinstance(first, dict) and first.get("reason"):  # the event's own reason first
                return f"{first['reason']} - {msg.get('message', '')}"[:600]
            msg = msg.get("message", json.dumps(msg, ensure_ascii=False))
        if msg is not None and not isinstance(msg, str):
            msg = json.dumps(msg, ensure_ascii=False)
        if msg:
            return str(msg)[:300]
    return resp.text[:300]


def check_backoff(max_s: float, base_s: float = 0.5) -> None:
    """``max_s`` (``--max-backoff``) must lie in ``base_s`` .. ``MAX_BACKOFF_LIMIT``."""
    if not 0 < base_s <= max_s <= MAX_BACKOFF_LIMIT:
        raise ValueError(
            f"--max-backoff {max_s:g}: give {base_s:g} to {MAX_BACKOFF_LIMIT:g} seconds "
            "(the longest wait between retries while the scoreboard is unreachable)"
        )


def accepted_types(openapi: dict[str, Any]) -> set[str]:
    """Event types the scoreboard's schema accepts (``type`` constants of its event models)."""
    out: set[str] = set()
    for schema in openapi.get("components", {}).get("schemas", {}).values():
        props = schema.get("properties", {}) if isinstance(schema, dict) else {}
        ty = props.get("type") if isinstance(props, dict) else None
        if not isinstance(ty, dict) or "id" not in props or "seq" not in props:
            continue
        if "const" in ty:
            out.add(str(ty["const"]))
        for v in ty.get("enum", []):
            out.add(str(v))
    return out


class Outbox:
    def __init__(
        self,
        store: EventLog,
        url: str,
        token: str,
        *,
        table: str,
        worker: TableWorker | None = None,
        batch: int = 200,
        base_s: float = 0.5,
        max_s: float = 30.0,
        gap_check_s: float = 30.0,
        timeout_s: float = 10.0,
        assign_check_s: float = 10.0,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"--scoreboard {url!r}: give the URL, e.g. http://10.0.0.2:8700")
        if not token:
            raise ValueError("--token is empty: give the table's token from the scoreboard")
        check_backoff(max_s, base_s)
        self.store = store
        self.url = url.rstrip("/")
        self.token = token
        self.table = table
        self.worker = worker
        self.batch = batch
        self.base_s = base_s
        self.max_s = max_s
        self.gap_check_s = gap_check_s
        self.timeout_s = timeout_s
        self.types: set[str] | None = None
        self.failures = 0
        self.connected = False
        self.last_ok: float | None = None
        self.last_error: str | None = None
        self.offline_since: float | None = None
        self.posted_batches = 0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._next_gap_check = 0.0
        #: the scoreboard files events by match (it has the assignment route); None: not known
        self.match_scoped: bool | None = None
        self.assign_check_s = assign_check_s
        self._next_assign_check = 0.0
        #: seqs of the logged ``match_ended`` events (segment boundaries), scanned up to _scanned
        self._ends: list[int] = []
        self._scanned = 0
        #: segment -> the scoreboard match it was given (``assignment`` notes)
        self.assigned: dict[int, dict[str, Any]] = {}
        for _at, _kind, body in store.notes("assignment"):
            seg = int(body.get("segment", -1))
            if seg >= 0 and seg not in self.assigned:
                self.assigned[seg] = body
        #: the scoreboard's last answer (``queue``: the table's unfinished matches)
        self.queue: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="table-outbox", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def wake(self) -> None:
        self._wake.set()

    def status(self) -> dict[str, Any]:
        counts = self.store.outbox_counts()
        return {
            "scoreboard": self.url,
            "connected": self.connected,
            "pending": counts["pending"],
            "sent": counts["sent"],
            "local": counts["local"],
            "rejected": counts["rejected"],
            "last_ok": self.last_ok,
            "last_error": self.last_error,
            "offline_since": self.offline_since,
            "retry_in": self._delay() if self.failures else 0.0,
            "held": counts.get(HELD, 0),
            "match": self.current_match(),
        }

    # ------------------------------------------------------------------ match assignment
    def _scan(self) -> None:
        """Learn the ``match_ended`` seqs logged since the last scan (segment boundaries)."""
        for ev in self.store.events(after_seq=self._scanned):
            if ev.type == "match_ended":
                self._ends.append(ev.seq)
            self._scanned = max(self._scanned, ev.seq)

    def segment_of(self, seq: int) -> int:
        """The segment of the log an event is in: how many matches ended before it."""
        return bisect.bisect_left(self._ends, seq)

    def current_match(self) -> dict[str, Any] | None:
        """The assignment of the segment being played now (None: none yet)."""
        return self.assigned.get(len(self._ends))

    def _assign(self, seg: int, ref: dict[str, Any]) -> None:
        body = {
            "segment": seg,
            "match_id": int(ref["match_id"]),
            "round": ref.get("round"),
            "tournament": ref.get("tournament"),
            "ew": ref.get("ew"),
            "ns": ref.get("ns"),
        }
        if self.worker is not None:
            self.worker.note("assignment", body)
        else:
            self.store.note("assignment", body)
        self.assigned[seg] = body
        # events of this segment held for want of a match go out now
        held = [s for s in self.store.outbox_seqs(HELD) if self.segment_of(s) == seg]
        self.store.outbox_mark(held, "pending")
        log.info("segment %d of table %s is match %s", seg, self.table, body["match_id"])

    def _check_assignment(self) -> None:
        """Ask the scoreboard which matches this table plays and give the next one to each
        segment without a match, in order (a match never goes to two segments)."""
        resp = self._request("GET", ASSIGNMENT_PATH.format(table_id=self.table))
        if resp.status != 200 or not isinstance(resp.body, dict):
            return
        self.queue = [q for q in resp.body.get("queue") or [] if isinstance(q, dict)]
        current_seg = len(self._ends)
        used = {int(a["match_id"]) for a in self.assigned.values()}
        seg = max(self.assigned) + 1 if self.assigned else 0
        for ref in self.queue:
            if seg > current_seg:
                break
            if int(ref["match_id"]) in used:
                continue
            self._assign(seg, ref)
            used.add(int(ref["match_id"]))
            seg += 1
        self._match_alarm()

    def _match_alarm(self) -> None:
        if self.worker is None:
            return
        held = self.store.outbox_counts().get(HELD, 0)
        cur = self.current_match()
        live = {int(q["match_id"]) for q in self.queue}
        if cur is None and held:
            self.worker.set_alarm(
                "match",
                f"{held} event(s) wait for the scoreboard to assign table {self.table!r} a "
                "match (open the round or put the table in it); they are kept and sent then",
                f"{held} 条事件等待计分中心为本桌分配比赛（请开启本轮并安排本桌），事件已保留",
            )
        elif cur is not None and self.queue and int(cur["match_id"]) not in live:
            nxt = self.queue[0]
            self.worker.set_alarm(
                "match",
                f"the organiser has closed match {cur['match_id']} (round {cur.get('round')}); "
                "this table's events still go to it but no longer count. End it on the referee "
                f"screen to play match {nxt['match_id']} (round {nxt.get('round')})",
                f"裁判长已结束第 {cur['match_id']} 场比赛，本桌后续事件不再计分；请结束本场，"
                f"开始第 {nxt['match_id']} 场（第 {nxt.get('round')} 轮）",
            )
        else:
            self.worker.set_alarm("match", None)

    def _stamp(self, rows: list[tuple[int, str]]) -> list[tuple[int, str]]:
        """Rows with their match (``match_id``) added; rows of a segment without one are marked
        held and left out."""
        # The rows were read before this scan: every match_ended at or below their seqs is known
        # (an event and its outbox row are written in one transaction), so no row of a new
        # match can be taken for one of the match before it.
        self._scan()
        out: list[tuple[int, str]] = []
        held: list[int] = []
        for seq, text in rows:
            ref = self.assigned.get(self.segment_of(seq))
            if ref is None:
                held.append(seq)
                continue
            body = json.loads(text)
            body["match_id"] = int(ref["match_id"])
            out.append((seq, json.dumps(body, ensure_ascii=False, separators=(",", ":"))))
        if held:
            self.store.outbox_mark(
                held,
                HELD,
                "waiting for the scoreboard to assign this table's match (等待分配比赛)",
            )
            self._match_alarm()
        return out

    # ------------------------------------------------------------------ HTTP
    def _request(self, method: str, path: str, body: bytes | None = None) -> _Http:
        req = urllib.request.Request(self.url + path, data=body, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        req.add_header("Accept", "application/json")
        if body is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                text = resp.read().decode("utf-8", "replace")
                status = resp.status
        except urllib.error.HTTPError as exc:
            text = exc.read().decode("utf-8", "replace")
            status = exc.code
        try:
            parsed = json.loads(text) if text else None
        except json.JSONDecodeError:
            parsed = None
        return _Http(status, parsed, text)

    # ------------------------------------------------------------------ loop
    def _delay(self) -> float:
        return float(min(self.max_s, self.base_s * (2 ** min(self.failures, 20))))

    def _fail(self, why: str, alarm: tuple[str, str] | None = None) -> None:
        self.failures += 1
        self.connected = False
        self.last_error = why
        if self.offline_since is None:
            self.offline_since = time.time()
        if self.worker is not None:
            if alarm is not None:
                self.worker.set_alarm("scoreboard", alarm[0], alarm[1])
            elif self.failures >= 3:
                n = self.store.outbox_counts()["pending"]
                self.worker.set_alarm(
                    "network",
                    f"scoreboard unreachable ({why}); {n} events wait in the outbox and will be "
                    "sent when it is back",
                    f"无法连接计分中心；{n} 条事件在发件箱中等待，恢复后自动发送",
                )

    def _ok(self) -> None:
        # Alarms first: whoever reads "connected" must not still see the outage alarm.
        if self.worker is not None:
            self.worker.set_alarm("network", None)
            self.worker.set_alarm("scoreboard", None)
        self.failures = 0
        self.last_ok = time.time()
        self.last_error = None
        self.offline_since = None
        self.connected = True

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                waited = self._step()
            except DiskFull as exc:
                self.last_error = str(exc)
                waited = False
            except Exception as exc:  # keep the outbox alive whatever happens
                log.exception("outbox step failed")
                self._fail(f"{type(exc).__name__}: {exc}")
                waited = False
            if not waited:
                delay = self._delay() * (0.5 + random.random() / 2) if self.failures else 0.05
                self._wake.wait(delay)
                self._wake.clear()

    def _learn_types(self) -> None:
        resp = self._request("GET", "/openapi.json")
        types: set[str] = set()
        if resp.status == 200 and isinstance(resp.body, dict):
            types = accepted_types(resp.body)
        if resp.status == 200 and isinstance(resp.body, dict):
            self.match_scoped = ASSIGNMENT_PATH in (resp.body.get("paths") or {})
        else:
            self.match_scoped = False
        if not types:
            types = set(CONTRACT_TYPES)
        self.types = types
        if self.worker is not None:  # new rows first, then the rows already logged
            self.worker.deliverable = types
        self.store.outbox_retype(types)

    def _step(self) -> bool:
        """One round; True when it already waited."""
        if self.types is None:
            try:
                self._learn_types()
            except (urllib.error.URLError, OSError, TimeoutError) as exc:
                self._fail(f"{exc}")
                return False
        if self.match_scoped:
            ends = len(self._ends)
            self._scan()
            if len(self._ends) != ends or time.monotonic() >= self._next_assign_check:
                try:
                    self._check_assignment()
                except (urllib.error.URLError, OSError, TimeoutError) as exc:
                    self._fail(f"{getattr(exc, 'reason', exc)}")
                    return False
                self._next_assign_check = time.monotonic() + self.assign_check_s
        rows = self.store.outbox_pending(self.batch)
        if rows and self.match_scoped:
            rows = self._stamp(rows)
            if not rows:
                return False
        if not rows:
            if time.monotonic() >= self._next_gap_check:
                self._gap_check()
                self._next_gap_check = time.monotonic() + self.gap_check_s
                if self.store.outbox_counts()["pending"]:
                    return False
            self._wake.wait(1.0)
            self._wake.clear()
            return True
        try:
            self._send(rows)
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            reason = getattr(exc, "reason", exc)
            self._fail(f"{reason}")
        return False

    def _send(self, rows: list[tuple[int, str]]) -> None:
        body = ("[" + ",".join(b for _s, b in rows) + "]").encode("utf-8")
        resp = self._request("POST", f"{API}/events/batch", body)
        seqs = [s for s, _b in rows]
        if resp.status == 200:
            self.posted_batches += 1
            self.store.outbox_mark(seqs, "sent")
            self._ok()
            missing = resp.body.get("missing", []) if isinstance(resp.body, dict) else []
            if missing:
                self.store.outbox_requeue([int(m) for m in missing])
            return
        detail = _detail(resp)
        if resp.status in (401, 403):
            self._fail(
                f"HTTP {resp.status}: {detail}",
                (
                    f"the scoreboard refuses this kiosk's token (HTTP {resp.status}): {detail} - "
                    "events are kept and will be sent once the token is fixed",
                    "计分中心拒绝本桌令牌：事件已保留，修正令牌后自动发送",
                ),
            )
            return
        if resp.status == 404:
            self._fail(
                f"HTTP 404: {detail}",
                (
                    f"the scoreboard does not know table {self.table!r}: {detail}",
                    f"计分中心没有本桌（{self.table}）：请先在计分中心登记",
                ),
            )
            return
        if resp.status in (409, 422):
            if len(rows) > 1:
                for row in rows:
                    self._send([row])
                return
            self.store.outbox_mark(seqs, "rejected", f"HTTP {resp.status}: {detail}")
            self._ok()
            if self.worker is not None:
                n = self.store.outbox_counts()["rejected"]
                self.worker.set_alarm(
                    "rejected",
                    f"{n} event(s) refused by the scoreboard (kept here); last: seq {seqs[0]} "
                    f"HTTP {resp.status}: {detail}",
                    f"{n} 条事件被计分中心拒收（本机已保留）",
                )
            return
        self._fail(f"HTTP {resp.status}: {detail}")

    def _gap_check(self) -> None:
        try:
            resp = self._request("GET", f"{API}/tables/{self.table}/missing")
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            self._fail(f"{getattr(exc, 'reason', exc)}")
            return
        if resp.status != 200 or not isinstance(resp.body, dict):
            return
        self._ok()
        missing = [int(m) for m in resp.body.get("missing", [])]
        top = int(self.store.event_count())
        max_seq = int(resp.body.get("max_seq", 0))
        # events above the centre's max_seq it never saw (e.g. a restored database)
        beyond = list(range(max_seq + 1, top + 1))
        if missing or beyond:
            n = self.store.outbox_requeue(missing + beyond)
            if n:
                log.info("scoreboard lacks %d events: resending", n)
