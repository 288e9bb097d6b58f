"""The kiosk's worker: observation source -> engine.referee.Referee -> the SQLite log.

One thread owns the referee and is the only writer of game data. Observations come from the
source (its own thread, at most one ahead) and from people: a pass signalled on the screen, a
referee's correction, void, foul or deal start (all are *observations*; the referee turns them
into events - nothing is edited in place). Each observation and its events are logged in one
transaction (kiosk/table/store.py); the screen state is a fold over the logged events.

On start the referee is rebuilt by replaying the logged observations (the same events come out:
ids are UUID5s of table and seq) and the source resumes after the last logged source
observation. A source that sees the table anew (a live camera: ``resume``) is first told what
the log says lies on it (:meth:`TableWorker.table_state`: the cards played since the last
``trick_cleared``, exposed cards, this deal's tributes), so cards already recorded are not
reported again. A full disk stops recording: nothing half-written, the log kept, an alarm on the
screen; the worker retries the same observation every ``retry_s`` seconds and carries on once
there is room.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from engine.deal import effective_events
from engine.events import CONTRACT_EVENT_TYPES, Event, dump_event
from engine.observations import Observation, parse_observation
from engine.profiles import Profile
from engine.referee import Referee
from kiosk.table.sources import ObservationSource
from kiosk.table.store import DiskFull, EventLog

log = logging.getLogger("guandan.table")

#: The event types of CONTRACT.md: what the central scoreboard accepts at least.
CONTRACT_TYPES = frozenset(CONTRACT_EVENT_TYPES)
SEATS = ("N", "E", "S", "W")


class ActionError(ValueError):
    """A screen or referee action that cannot be applied (the message says why)."""


@dataclass
class _Item:
    origin: str
    obs: Observation | None = None
    raw: dict[str, Any] | None = None
    future: Future[list[Event]] | None = None
    done: threading.Event | None = None


@dataclass
class Alarm:
    kind: str
    en: str
    zh: str
    since: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "en": self.en, "zh": self.zh, "since": self.since}


class TableWorker:
    def __init__(
        self,
        store: EventLog,
        profile: Profile,
        source: ObservationSource | None,
        *,
        table: str,
        deliverable: set[str] | None = None,
        retry_s: float = 2.0,
        history_s: float = 900.0,
    ) -> None:
        self.store = store
        self.profile = profile
        self.source = source
        self.table = table
        self.deliverable = set(deliverable or CONTRACT_TYPES)
        self.retry_s = retry_s
        self.history_s = history_s
        self._q: queue.Queue[_Item] = queue.Queue()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.alarms: dict[str, Alarm] = {}
        self.recording = True
        self.source_done = source is None
        self.source_error: str | None = None
        self.replayed = 0
        self._events: list[Event] = []
        self._ref = Referee(profile, table=table)
        self._lock = threading.Lock()
        #: held while the referee state changes or is read for a snapshot (any thread)
        self._big = threading.RLock()
        self._cond = threading.Condition()
        self.version = 0
        self._snapshot: dict[str, Any] = {}
        #: (wall time, version, snapshot) for delayed feeds (overlay)
        self.history: deque[tuple[float, int, dict[str, Any]]] = deque()
        self._last_t = 0.0
        self.extra: Callable[[], dict[str, Any]] | None = None
        #: called (worker thread) after events are logged, e.g. to wake the outbox
        self.on_events: Callable[[list[Event]], None] | None = None
        self.started_at = time.time()
        self._waiting_source = False

    # ------------------------------------------------------------------ lifecycle
    def rebuild(self) -> None:
        """Replay the logged observations through a fresh referee; check it matches the log."""
        logged = self.store.observations()
        ref = Referee(self.profile, table=self.table)
        for lo in logged:
            ref.feed(lo.obs)
        stored = self.store.events()
        fresh = ref.events
        if [dump_event(e) for e in fresh] != [dump_event(e) for e in stored]:
            n = next(
                (i for i, (a, b) in enumerate(zip(fresh, stored, strict=False)) if a.id != b.id),
                min(len(fresh), len(stored)),
            )
            self._alarm(
                "replay",
                f"the referee's replay differs from the event log at event {n + 1}: recording "
                "stopped; the log is kept as it is (check the engine version)",
                f"裁判重放与事件记录在第 {n + 1} 条不一致：已停止记录，记录保留不变",
            )
            self.recording = False
        self._ref = ref
        self._events = stored
        self._last_t = self.store.last_t()
        self.replayed = len(logged)
        self._publish()

    def table_state(self) -> Any:
        """What the log says lies on the table now (``vision.track.TableState``): the fold of
        the logged source observations (what the camera reported) since the current deal
        started (a referee's ``deal_start`` counts too). Corrections change the record, not the
        cards lying there, so they are left out."""
        from vision.track import table_state

        return table_state(
            lo.obs
            for lo in self.store.observations()
            if lo.origin == "source" or lo.obs.type == "deal_start"
        )

    def start(self) -> None:
        self.rebuild()
        resume = getattr(self.source, "resume", None)
        if callable(resume):  # a camera seeing the table anew: what is already recorded there
            resume(self.table_state())
        attach = getattr(self.source, "attach", None)
        if callable(attach):  # a live camera: its alarms, notes and the session time to go on from
            attach(
                alarm=self.set_alarm,
                note=self._camera_note,
                start_t=self._last_t,
                paused=lambda: "disk" in self.alarms,
            )
        t = threading.Thread(target=self._run, name="table-worker", daemon=True)
        t.start()
        self._threads.append(t)
        if self.source is not None:
            s = threading.Thread(target=self._feed_source, name="table-source", daemon=True)
            s.start()
            self._threads.append(s)

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout)

    # ------------------------------------------------------------------ the source thread
    def _feed_source(self) -> None:
        assert self.source is not None
        try:
            skip = self.store.source_count()
            for obs in self.source.observations(skip, self._stop):
                done = threading.Event()
                self._q.put(_Item("source", obs=obs, done=done))
                while not done.wait(0.2):
                    if self._stop.is_set():
                        return
        except Exception as exc:  # a broken source must not kill the kiosk: show it
            log.exception("observation source failed")
            self.source_error = f"{type(exc).__name__}: {exc}"
            self._alarm(
                "source",
                f"the observation source stopped: {self.source_error}",
                f"观察来源中断：{self.source_error}",
            )
        finally:
            if not self._stop.is_set():
                self.source_done = True
                self._publish()

    # ------------------------------------------------------------------ the worker thread
    def clock(self) -> float:
        """Session time now (seconds): the source's clock, never before the last logged t."""
        c = self.source.clock() if self.source is not None else None
        return max(self._last_t, c if c is not None else self._last_t)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                item = self._q.get(timeout=0.2)
            except queue.Empty:
                continue
            while not self._stop.is_set():
                if self._handle(item):
                    break
                # a source observation waits for room; people's actions are refused meanwhile
                self._waiting_source = True
                deadline = time.monotonic() + self.retry_s
                while time.monotonic() < deadline and not self._stop.is_set():
                    try:
                        other = self._q.get(timeout=0.05)
                    except queue.Empty:
                        continue
                    self._handle(other)
                self._waiting_source = False

    def _handle(self, item: _Item) -> bool:
        """Process one item; False when it must be retried (full disk)."""
        with self._big:
            return self._handle_locked(item)

    def _handle_locked(self, item: _Item) -> bool:
        try:
            obs = item.obs
            if obs is None:
                raw = dict(item.raw or {})
                raw["t"] = round(self.clock(), 3)
                obs = parse_observation(raw, where=f"{item.origin} action")
            if not self.recording and "disk" not in self.alarms:
                raise ActionError("recording is stopped (see the alarm on the screen)")
            if "disk" in self.alarms and item.future is not None and self._waiting_source:
                raise ActionError("disk full: recording is stopped, nothing can be recorded now")
            before = len(self._ref.events)
            events = self._ref.feed(obs)
            try:
                self.store.append(item.origin, obs, events, deliverable=self.deliverable)
            except DiskFull as exc:
                self._disk_full(str(exc), before)
                if item.future is not None:  # a person's action: say so now, they can retry
                    raise ActionError(f"disk full: nothing recorded ({exc})") from None
                return False
            except Exception:
                self._rollback(before)
                raise
            if "disk" in self.alarms:
                self._clear("disk")
                self.recording = True
            self._events.extend(events)
            self._last_t = max(self._last_t, obs.t)
            self._publish()
            if events and self.on_events is not None:
                self.on_events(events)
            if item.future is not None:
                item.future.set_result(events)
        except Exception as exc:
            if item.origin == "source":
                log.exception("observation could not be processed")
                self._alarm(
                    "referee",
                    f"an observation could not be processed: {exc}",
                    f"观察无法处理：{exc}",
                )
            if item.future is not None and not item.future.done():
                item.future.set_exception(exc)
        if item.done is not None:
            item.done.set()
        return True

    def _rollback(self, before: int) -> None:
        """The referee ran ahead of the log: rebuild it from the log."""
        ref = Referee(self.profile, table=self.table)
        for lo in self.store.observations():
            ref.feed(lo.obs)
        self._ref = ref
        assert len(ref.events) == before

    def _disk_full(self, detail: str, before: int) -> None:
        self._rollback(before)
        self.recording = False
        self._alarm(
            "disk",
            f"DISK FULL: recording stopped ({detail}). The event log is intact; free space on "
            "the kiosk and recording resumes by itself.",
            "磁盘已满：已停止记录，事件记录完好。请清理空间，记录将自动恢复。",
        )
        self._publish()

    # ------------------------------------------------------------------ actions (any thread)
    def submit(self, origin: str, raw: dict[str, Any], timeout: float = 10.0) -> list[Event]:
        """Feed an observation (without ``t``; the session clock is used) and wait for the
        events it produced. Raises :class:`ActionError` / ``ObservationError``."""
        if "disk" in self.alarms and self._waiting_source:
            raise ActionError("disk full: recording is stopped, nothing can be recorded now")
        fut: Future[list[Event]] = Future()
        self._q.put(_Item(origin, raw=raw, future=fut))
        return fut.result(timeout)

    def note(self, kind: str, body: dict[str, Any]) -> None:
        try:
            self.store.note(kind, body)
        except DiskFull as exc:
            raise ActionError(f"disk full: {exc}") from None
        self._publish()

    def _camera_note(self, body: dict[str, Any]) -> None:
        """A live camera's outage, in the log's notes (kind ``camera``) for dispute review."""
        self.store.note("camera", body)

    # ------------------------------------------------------------------ alarms
    def _alarm(self, kind: str, en: str, zh: str) -> None:
        if kind not in self.alarms:
            self.alarms[kind] = Alarm(kind, en, zh)
            self._publish()

    def _clear(self, kind: str) -> None:
        if self.alarms.pop(kind, None) is not None:
            self._publish()

    def set_alarm(self, kind: str, en: str | None, zh: str = "") -> None:
        """Raise (text given) or clear (None) an alarm from outside (outbox).

        Called from another thread: it takes the worker's lock so that the alarm table is not
        changed while a snapshot is being built from it.
        """
        with self._big:
            if en is None:
                self._clear(kind)
            elif kind not in self.alarms or self.alarms[kind].en != en:
                self.alarms[kind] = Alarm(kind, en, zh or en)
                self._publish()

    # ------------------------------------------------------------------ state
    @property
    def events(self) -> list[Event]:
        return list(self._events)

    @property
    def referee(self) -> Referee:
        return self._ref

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            snap = dict(self._snapshot)
        if self.extra is not None:
            snap.update(self.extra())
        snap["now_t"] = round(self.clock(), 3)
        status = getattr(self.source, "status", None)
        snap["camera"] = status() if callable(status) else None
        return snap

    def wait_change(self, version: int, timeout: float) -> int:
        with self._cond:
            if self.version == version:
                self._cond.wait(timeout)
            return self.version

    def _publish(self) -> None:
        # Build and store under one lock: two threads publish (the worker and the outbox's
        # alarms), and a snapshot built first must not be stored last - that left a cleared
        # network alarm on the screen for good once the replay had ended (CI, stop 8).
        with self._big:
            snap = build_snapshot(self)
            with self._lock:
                self._snapshot = snap
                now = time.time()
                self.version += 1
                self.history.append((now, self.version, snap))
                while len(self.history) > 2 and (
                    self.history[1][0] < now - self.history_s or len(self.history) > 20_000
                ):
                    self.history.popleft()
        with self._cond:
            self._cond.notify_all()

    def delayed(self, delay: float) -> tuple[int, dict[str, Any]] | None:
        """The newest snapshot at least ``delay`` seconds old (None: none that old yet)."""
        cut = time.time() - delay
        with self._lock:
            best = None
            for at, ver, snap in reversed(self.history):
                if at <= cut:
                    best = (ver, snap)
                    break
        return best


# ---------------------------------------------------------------------- the screen's state
def _seat_names(store: EventLog) -> dict[str, str]:
    seating: dict[str, str] = {}
    for _at, _k, body in store.notes("seating"):
        seating = {s: str(body.get(s, "")) for s in SEATS}
    return seating


def _summary(ev: Event) -> str:
    d = ev.data
    ty = ev.type
    if ty == "play":
        text = f"{d['seat']} {' '.join(d['cards'])}" + ("" if d.get("legal", True) else " ✗")
        if d.get("camera"):  # the referee re-read a camera misread (engine/referee.py)
            text += f" (re-read; camera saw {' '.join(d['camera'])})"
        return text
    if ty == "pass":
        return f"{d['seat']} pass"
    if ty == "foul":
        text = f"{d.get('seat') or '?'} {d['kind']}: {d.get('detail', '')}"
        if d.get("review"):  # a camera reading's foul: the referee's confirm makes it count
            text += " (camera: confirm to count it)"
        return text
    if ty == "deal_started":
        return f"deal {ev.deal} level {d.get('level')} leader {d.get('leader') or '?'}"
    if ty == "deal_ended":
        return f"order {' '.join(d['order'])} levels NS {d['levels']['NS']} EW {d['levels']['EW']}"
    if ty in ("tribute", "tribute_returned"):
        return f"{d['from']}→{d['to']} {d['card']}"
    if ty == "seat_out":
        return f"{d['seat']} out #{d['place']}"
    if ty == "match_ended":
        return f"winner {d.get('winner')}"
    if ty == "correction":
        return f"replaces {d['replaces'][:8]}"
    return str(d.get("detail", ""))


def build_snapshot(w: TableWorker) -> dict[str, Any]:
    st = w._ref.state
    p = w.profile
    events = w._events
    eff = effective_events(events)
    # the current match and deal, from the effective events
    match_start = next(
        (
            i
            for i, e in enumerate(eff)
            if e.type == "deal_started" and e.data.get("match") == st.match_no
        ),
        len(eff),
    )
    deal_start = next(
        (i for i in range(len(eff) - 1, -1, -1) if eff[i].type == "deal_started"), len(eff)
    )
    deal_events = eff[deal_start:] if eff else []
    plays = [
        {
            "seq": e.seq,
            "id": e.id,
            "type": e.type,
            "seat": e.data["seat"],
            "cards": list(e.data.get("cards", [])),
            "kind": (e.data.get("combo") or {}).get("kind") if e.type == "play" else None,
            "legal": bool(e.data.get("legal", True)),
            "reread": e.data.get("reread"),
            "t": e.t,
        }
        for e in deal_events
        if e.type in ("play", "pass")
    ][-12:]
    fouls = [
        {
            "seq": e.seq,
            "id": e.id,
            "type": e.type,
            "deal": e.deal,
            "seat": e.data.get("seat"),
            "kind": e.data.get("kind"),
            "detail": e.data.get("detail"),
            "penalty": e.data.get("penalty"),
            "review": bool(e.data.get("review")),
        }
        for e in eff[match_start:]
        if e.type in ("foul", "warning")
    ][-12:]
    last_deal = next((e for e in reversed(eff) if e.type == "deal_ended"), None)
    last_match = next((e for e in reversed(eff) if e.type == "match_ended"), None)
    d = st.deal
    deal_json = d.to_json() if d is not None else None
    clock = None
    if d is not None and not d.over and d.turn is not None and not st.match_over:
        sp = p.slow_play
        limit = sp.first_play_seconds if d.plays == 0 and d.top is None else sp.play_seconds
        clock = {"seat": d.turn, "since": d.clock, "limit": limit}
    confirmed = {str(b.get("id")) for _a, _k, b in w.store.notes("confirm")}
    recent = [
        {
            "seq": e.seq,
            "id": e.id,
            "type": e.type,
            "summary": _summary(e),
            "confirmed": e.id in confirmed,
            "t": e.t,
            "data": e.data,
        }
        for e in eff[-25:]
        if e.type not in ("notice",)
    ]
    notices = [e.data.get("detail", "") for e in eff[-40:] if e.type == "notice"][-3:]
    return {
        "table": w.table,
        "profile": p.name,
        "profile_title": p.title,
        "seq": events[-1].seq if events else 0,
        "events": len(events),
        "match": st.match_no,
        "game": st.game,
        "deal_no": st.deal_no,
        "levels": dict(st.match.levels),
        "match_over": st.match_over,
        "winner": last_match.data.get("winner")
        if last_match is not None and st.match_over
        else None,
        "team_fouls": dict(st.team_fouls),
        "deal": deal_json,
        "plays": plays,
        "fouls": fouls,
        "last_deal": (
            {
                "deal": last_deal.deal,
                "order": list(last_deal.data["order"]),
                "levels": dict(last_deal.data["levels"]),
                "winner": last_deal.data.get("winner"),
            }
            if last_deal is not None
            else None
        ),
        "last_match": (
            {
                "winner": last_match.data.get("winner"),
                "reason": last_match.data.get("reason"),
                "levels": last_match.data.get("levels"),
            }
            if last_match is not None
            else None
        ),
        "shot_clock": clock,
        "rate": getattr(getattr(w.source, "_pace", None), "speed", 1.0) or 1.0,
        "seating": _seat_names(w.store),
        "recent": recent,
        "notices": notices,
        "alarms": [a.to_json() for a in w.alarms.values()],
        "recording": w.recording,
        "source": {
            "kind": getattr(w.source, "kind", "none"),
            "description": getattr(w.source, "description", "no source (referee entries only)"),
            "done": w.source_done,
            "error": w.source_error,
        },
        "report_threshold": p.report.card_count,
        "foul_limit": p.fouls.limit,
        "tribute": _tribute_json(w, deal_events),
    }


def _tribute_json(w: TableWorker, deal_events: list[Event]) -> dict[str, Any]:
    """The tribute of the deal in progress as it happens, for the screens: the payments and
    returns so far (events), the seats whose tribute was not seen, and while the referee still
    waits for the payments (no ``deal_started`` yet) who owes what to whom."""
    done = [
        {"type": e.type, **{k: e.data.get(k) for k in ("from", "to", "card", "seats")}}
        for e in deal_events
        if e.type in ("tribute", "tribute_returned", "anti_tribute")
    ]
    missing = [s for e in deal_events if e.type == "notice" for s in e.data.get("missing", [])]
    phase = getattr(getattr(w._ref, "_core", None), "phase", None)
    pending = None
    if phase is not None:
        pending = {
            "kind": phase.plan.kind,
            "payers": list(phase.plan.payers),
            "receivers": list(phase.plan.receivers),
            "paid": {s: str(c) for s, c in phase.paid.items()},
        }
    return {"events": done, "missing": missing, "pending": pending}
