"""Hall health, the kiosk's side: every ``interval_s`` seconds a small report goes to the
scoreboard (``POST /api/v1/tables/{table}/health`` with the table's token), beside the outbox's
posting. A kiosk that cannot reach the scoreboard simply stops reporting (the scoreboard then
shows it offline); nothing is queued, a report is only worth its moment.

The report (``kiosk/scoreboard/health.py`` judges it): camera frames/s measured between two
reports and seconds since the last frame (a live camera; null for a file, a simulation or no
camera), seconds since the last event was logged, the outbox's pending / held / refused events,
free disk where the log lives, the CPU temperature (``/sys/class/thermal/thermal_zone0/temp`` on
a Raspberry Pi; null where there is none), the detector model and deck profile (with the
version of the tournament's shared deck it came from, or why the kiosk reads with the shipped
model: kiosk/table/deckfetch.py), and the kinds of the kiosk's active alarms.
"""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from kiosk.table.deckfetch import deck_fields

log = logging.getLogger("guandan.table.health")
THERMAL_ZONE = Path("/sys/class/thermal/thermal_zone0/temp")
HEALTH_PATH = "/api/v1/tables/{table}/health"


def cpu_temperature(path: Path = THERMAL_ZONE) -> float | None:
    """The CPU temperature in °C from a Linux thermal zone (millidegrees), None without one."""
    try:
        raw = path.read_text().strip()
        return round(int(raw) / 1000.0, 1)
    except (OSError, ValueError):
        return None


def disk_free(path: Path) -> int | None:
    """Free bytes on the file system holding ``path`` (its folder), None when unknown."""
    try:
        return int(shutil.disk_usage(path if path.is_dir() else path.parent).free)
    except OSError:
        return None


def versions(source: Any) -> tuple[str | None, str | None]:
    """The detector model (file name and its ``guandan_version``) and the enrolled deck profile
    (name and the classifier it fits) the source reads with; None for what it does not have."""
    det = getattr(source, "detector", None)
    if det is None:
        return None, None
    model = None
    path = getattr(det, "model_path", None)
    version = getattr(det, "version", None)
    if path is not None or version is not None:
        model = " ".join(str(x) for x in (Path(path).name if path else None, version) if x)
    elif isinstance(getattr(det, "name", None), str):
        model = det.name
    deck = getattr(det, "deck", None)
    deck_text = None
    if deck is not None:
        deck_text = f"{getattr(deck, 'name', '?')} ({getattr(deck, 'classifier', '?')})"
    return (model[:200] if model else None), (deck_text[:200] if deck_text else None)


class HealthReporter:
    """Samples the kiosk and posts the report every ``interval_s`` seconds (own thread)."""

    def __init__(
        self,
        kiosk: Any,
        url: str,
        token: str,
        *,
        table: str,
        interval_s: float = 5.0,
        timeout_s: float = 5.0,
        thermal: Path = THERMAL_ZONE,
    ) -> None:
        if not 0.2 <= interval_s <= 25.0:
            raise ValueError(
                f"health interval {interval_s:g} s: give 0.2 to 25 seconds (the scoreboard "
                "shows a table offline after 30 s without a report)"
            )
        self.kiosk = kiosk
        self.url = url.rstrip("/")
        self.token = token
        self.table = table
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.thermal = thermal
        self.started = time.time()
        self._frames: tuple[float, int] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._db: sqlite3.Connection | None = None
        #: the scoreboard's last answer (``status``, ``reasons``), the last error
        self.last: dict[str, Any] | None = None
        self.last_error: str | None = None
        self.sent = 0

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="table-health", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.post(self.sample())
            except Exception as exc:  # noqa: BLE001 - a report must never stop the kiosk
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.debug("health report not sent: %s", self.last_error)
            self._stop.wait(self.interval_s)
        if self._db is not None:
            self._db.close()

    # ------------------------------------------------------------------ the report
    def _since_event(self) -> tuple[float | None, int]:
        """Seconds since the newest event was logged (its observation's ``logged_at``) and the
        number of events, read on a connection of this thread (read-only)."""
        if self._db is None:
            uri = Path(self.kiosk.store.path).resolve().as_uri() + "?mode=ro"
            self._db = sqlite3.connect(uri, uri=True, timeout=5.0, check_same_thread=False)
        row = self._db.execute(
            "SELECT o.logged_at, (SELECT COUNT(*) FROM events) FROM events e "
            "JOIN observations o ON o.idx = e.obs_idx ORDER BY e.seq DESC LIMIT 1"
        ).fetchone()
        if row is None:
            return None, 0
        return max(0.0, round(time.time() - float(row[0]), 1)), int(row[1])

    def _camera(self, now: float) -> dict[str, Any]:
        source = getattr(self.kiosk.worker, "source", None)
        status = getattr(source, "status", None)
        cam = status() if callable(status) else None
        out: dict[str, Any] = {"source": getattr(source, "kind", None) or "none"}
        if not isinstance(cam, dict) or "frames" not in cam:
            return out  # no live camera: frame figures are unknown, not zero
        frames = int(cam.get("frames") or 0)
        mono = time.monotonic()
        fps = None
        if self._frames is not None and mono > self._frames[0]:
            fps = round(max(0, frames - self._frames[1]) / (mono - self._frames[0]), 2)
        self._frames = (mono, frames)
        last = cam.get("last_frame_at")
        out.update(
            camera_state=cam.get("state"),
            fps=fps,
            since_frame_s=None if last is None else max(0.0, round(now - float(last), 1)),
        )
        return out

    def sample(self) -> dict[str, Any]:
        now = time.time()
        k = self.kiosk
        since_event, n_events = self._since_event()
        counts = k.store.outbox_counts()
        model, deck = versions(getattr(k.worker, "source", None))
        shared = k.info.get("deck_share") if isinstance(getattr(k, "info", None), dict) else None
        deck_state = deck_fields(shared, deck)  # version in force, one waiting, why not newest
        if shared is not None:  # the tournament's deck from the scoreboard (deckfetch.py)
            deck = shared.health_text(deck)
        return {
            "v": 1,
            "at": round(now, 3),
            "uptime_s": round(now - self.started, 1),
            **self._camera(now),
            "since_event_s": since_event,
            "events": n_events,
            "pending": int(counts.get("pending", 0)),
            "held": int(counts.get("held", 0)),
            "refused": int(counts.get("rejected", 0)),
            "disk_free_bytes": disk_free(Path(k.store.path)),
            "cpu_temp_c": cpu_temperature(self.thermal),
            "model": model,
            "deck": deck,
            **deck_state,
            "recording": bool(getattr(k.worker, "recording", True)),
            "alarms": sorted(getattr(k.worker, "alarms", {}))[:32],
        }

    def post(self, report: dict[str, Any]) -> dict[str, Any] | None:
        """Send one report; the scoreboard's answer (None when it could not be reached)."""
        path = HEALTH_PATH.format(table=urllib.parse.quote(self.table, safe=""))
        req = urllib.request.Request(
            self.url + path,
            data=json.dumps(report).encode(),
            method="POST",
            headers={
                "Authorization": f"Bearer {self.token}",
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                answer = json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:  # an older scoreboard (404) or a bad token
            self.last_error = f"HTTP {exc.code}: {exc.read()[:200].decode('utf-8', 'replace')}"
            return None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            self.last_error = str(getattr(exc, "reason", exc))
            return None
        self.sent += 1
        self.last_error = None
        self.last = answer if isinstance(answer, dict) else None
        return self.last


def attach_health(kiosk: Any, url: str, token: str, *, table: str, **kw: Any) -> HealthReporter:
    """Make the kiosk report its health while it runs: the reporter starts after the kiosk's
    own threads (``kiosk.start``) and stops before them (``kiosk.stop``)."""
    reporter = HealthReporter(kiosk, url, token, table=table, **kw)
    start, stop = kiosk.start, kiosk.stop

    def start_all() -> None:
        start()
        reporter.start()

    def stop_all() -> None:
        reporter.stop()
        stop()

    kiosk.start, kiosk.stop = start_all, stop_all
    kiosk.info["health"] = reporter
    return reporter
