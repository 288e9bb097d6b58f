"""Hall health: what each table kiosk reports about itself, judged ok / degraded / offline.

A kiosk posts a small report every few seconds (``kiosk/table/health.py``) beside its outbox:
camera frames/s, seconds since its last frame and its last event, the outbox backlog (pending,
held, refused), free disk, CPU temperature (a Pi), model and deck versions, its alarms. Each
report is a ``table_health`` row (``received_at`` is the scoreboard's clock, so a kiosk with a
wrong clock is judged right); rows older than ``Settings.health_keep_s`` are dropped as new
ones arrive (bounded history). A table is

* **offline** when its last report is older than ``OFFLINE_S`` (30 s), or it never reported;
* **degraded** when the last report shows trouble (each reason named, in both languages): no
  camera frame for ``NO_FRAME_S`` (10 s), a camera the kiosk has lost, an outbox backlog of
  ``BACKLOG`` events or more, events held (no match assigned) or refused by the scoreboard,
  free disk under ``DISK_LOW_BYTES``, CPU at ``CPU_HOT_C`` or more, recording stopped, one
  of the kiosk's own alarms, or a **stale deck**: the tournament shares a deck (issue 44,
  kiosk/scoreboard/decks.py) and the kiosk reads cards with another version of it, or with the
  shipped model (code ``deck_old``; the reason says whether the kiosk has the new version
  already and waits for the deal to end, refused it and why, or has not checked yet, and
  after ``DECK_GRACE_S`` since the upload that it needs a look);
* **ok** otherwise.

A kiosk reading with a deck of its own (``--deck``) or reading no cards (a simulation) is not
compared. The deck part of each table (``deck`` in the JSON: the kiosk's version, the
tournament's, ``stale``, ``behind_s``) is also in ``/metrics``:
``guandan_tournament_deck_version``, ``guandan_table_deck_version`` (0: the shipped model),
``guandan_table_deck_stale`` (1/0) and ``guandan_table_deck_behind_seconds`` (a stale table:
seconds since the current version was uploaded; alert on it staying over a few minutes).

The same judgement feeds the grid page (``/hall/{tournament}``), the JSON
(``GET /api/v1/tournaments/{id}/health``) and Prometheus (``GET /metrics``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from kiosk.scoreboard.models import DeckVersion, GameTable, TableHealth, Tournament

OFFLINE_S = 30.0
NO_FRAME_S = 10.0
BACKLOG = 50
DISK_LOW_BYTES = 500 * 1024 * 1024
CPU_HOT_C = 80.0
STATUSES = ("ok", "degraded", "offline")
#: a kiosk checks the tournament's deck every minute by default (kiosk/table/deckfetch.py
#: ``DECK_CHECK_S``); one still behind this long after an upload needs someone to look
DECK_GRACE_S = 300.0
#: where a kiosk says it reads with a shared deck: the tournament's (``shared``) or none of it
#: (``shipped``: the shipped model); ``own``: a ``--deck`` of its own, not compared
DECK_SOURCES = ("shared", "shipped", "own")
#: the deck text of a kiosk that reports no ``deck_source`` (before the field): "... shared v3"
_SHARED_TEXT = re.compile(r"\bshared\b.*?\bv(\d+)\b")
#: a kiosk's deck problem starts by naming the version, which the reason names already
_PROBLEM_HEAD = re.compile(r"^deck v\d+\b[^:]*?\b(?:not taken|refused|not used): ")
#: Kiosk alarms that are not a reason of their own here: the report's numbers already say it
#: (``network``: the kiosk reached us; ``rejected``/``match``: the refused/held counts).
_ALARMS_COVERED = {"network", "scoreboard", "rejected", "match", "camera", "disk"}


#: Printable text (no control characters: PostgreSQL's JSON refuses NUL)
Text = Annotated[str, StringConstraints(max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$")]
Kind = Annotated[str, StringConstraints(max_length=32, pattern=r"^[^\x00-\x1f\x7f]*$")]


class HealthIn(BaseModel):
    """One kiosk's report (``POST /api/v1/tables/{table}/health``). Every figure may be null:
    null means the kiosk cannot tell (no camera, no thermal sensor), never zero."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    v: int = Field(default=1, ge=1, le=1, description="report format version (1)")
    at: float | None = Field(
        default=None, ge=0, le=1e11, description="the kiosk's clock (Unix seconds)"
    )
    uptime_s: float | None = Field(default=None, ge=0, le=1e9)
    source: Kind | None = Field(
        default=None, description="camera, video, simulation, observations or none"
    )
    camera_state: Kind | None = Field(default=None, description="live or lost")
    fps: float | None = Field(
        default=None, ge=0, le=1000, description="camera frames per second, measured"
    )
    since_frame_s: float | None = Field(
        default=None, ge=0, le=1e9, description="seconds since the camera's last frame"
    )
    since_event_s: float | None = Field(
        default=None, ge=0, le=1e9, description="seconds since the last event was logged"
    )
    events: int | None = Field(default=None, ge=0, le=2**53, description="events logged")
    pending: int | None = Field(default=None, ge=0, le=2**53, description="outbox: to send")
    held: int | None = Field(
        default=None, ge=0, le=2**53, description="outbox: held for want of a match"
    )
    refused: int | None = Field(
        default=None, ge=0, le=2**53, description="outbox: refused by the scoreboard"
    )
    disk_free_bytes: int | None = Field(default=None, ge=0, le=2**62)
    cpu_temp_c: float | None = Field(default=None, ge=-60, le=200)
    model: Text | None = Field(default=None, description="detector model version")
    deck: Text | None = Field(default=None, description="enrolled deck profile")
    deck_source: Kind | None = Field(
        default=None,
        description="shared (the tournament's deck from the scoreboard), shipped (the shipped "
        "model: no shared deck in force), own (a --deck of the kiosk's own); null: reads no "
        "cards",
    )
    deck_version: int | None = Field(
        default=None, ge=1, le=2**31 - 1, description="the shared deck version read with"
    )
    deck_pending: int | None = Field(
        default=None,
        ge=1,
        le=2**31 - 1,
        description="a newer version downloaded and checked, taken up when the deal ends",
    )
    deck_problem: Text | None = Field(
        default=None, description="why the kiosk did not take the scoreboard's newest deck"
    )
    recording: bool | None = None
    alarms: list[Kind] = Field(
        default_factory=list, max_length=32, description="kinds of the kiosk's active alarms"
    )


@dataclass(frozen=True)
class Reason:
    code: str
    en: str
    zh: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "en": self.en, "zh": self.zh}


def _fmt_bytes(n: float) -> str:
    return f"{n / 1024**3:.1f} GB" if n >= 1024**3 else f"{n / 1024**2:.0f} MB"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def _minutes_zh(seconds: float) -> str:
    return f"{seconds / 60:.0f} 分钟" if seconds < 5400 else f"{seconds / 3600:.1f} 小时"


def deck_state(
    report: dict[str, Any] | None, deck: dict[str, Any] | None, now: datetime | None = None
) -> dict[str, Any] | None:
    """The table's deck against the tournament's (``deck``: its current version, see
    :func:`current_deck`; None: it shares none). None when it does not apply: no report, a
    kiosk that reads no cards, or one reading with a ``--deck`` of its own."""
    if report is None:
        return None
    source = report.get("deck_source")
    version = report.get("deck_version")
    if source is None:  # a kiosk from before deck_source: what its deck text says
        text = str(report.get("deck") or "")
        if m := _SHARED_TEXT.search(text):
            source, version = "shared", int(m[1])
        elif text.startswith("shipped model"):
            source, version = "shipped", None
        else:
            return None
    if source not in ("shared", "shipped"):
        return None
    if source == "shipped":
        version = None
    current = None if deck is None else int(deck["version"])
    stale = current is not None and version != current
    behind = None
    if stale and deck is not None and deck.get("uploaded_at") is not None:
        at = deck["uploaded_at"]
        at = datetime.fromisoformat(at) if isinstance(at, str) else at
        behind = max(0.0, ((now or datetime.now(UTC)) - _aware(at)).total_seconds())
    return {
        "source": source,
        "version": version,
        "pending": report.get("deck_pending"),
        "problem": report.get("deck_problem"),
        "current": current,
        "stale": stale,
        "behind_s": None if behind is None else round(behind, 1),
    }


def deck_reason(state: dict[str, Any]) -> Reason:
    """Why a stale deck matters and what happens next, for an organiser looking over the hall:
    the kiosk has the new version and waits for the deal to end, refused it (and why), will
    take it up at its next check, or is still behind ``DECK_GRACE_S`` after the upload."""
    cur, have = state["current"], state["version"]
    if have is None:
        en, zh = (
            f"no shared deck (shipped model), current is v{cur}",
            f"未用牌组（出厂模型），当前 {cur}",
        )
    else:
        en, zh = f"deck v{have}, current is v{cur}", f"牌组版本 {have}，当前 {cur}"
    behind = state.get("behind_s")
    problem = _PROBLEM_HEAD.sub("", str(state.get("problem") or ""))
    if len(problem) > 100:
        problem = problem[:99] + "…"
    if state.get("pending") == cur:
        en += ": downloaded, taken up when the deal in progress ends"
        zh += "：已下载，本局结束后启用"
    elif problem:
        en += f": the kiosk did not take it ({problem})"
        zh += "：本桌未采用新版本（原因见英文）"
    elif behind is not None and behind >= DECK_GRACE_S:
        en += (
            f": still not taken up {_minutes(behind)} after the upload; look at the kiosk "
            "(its log says why) or restart it"
        )
        zh += f"：上传 {_minutes_zh(behind)}后仍未更新，请检查本桌（日志有原因）或重启"
    else:
        en += ": the kiosk takes it up at its next check (about a minute)"
        zh += "：本桌下次检查时（约一分钟内）自动更新"
    return Reason("deck_old", en, zh)


def judge(
    report: dict[str, Any] | None,
    age_s: float | None,
    deck: dict[str, Any] | None = None,
    now: datetime | None = None,
) -> tuple[str, list[Reason]]:
    """The status of a table from its last report (None: never reported) and the report's age
    in seconds on the scoreboard's clock; ``deck``: the tournament's current deck version
    (:func:`current_deck`; None: none shared)."""
    if report is None or age_s is None:
        return "offline", [Reason("never", "no report yet", "尚未收到报告")]
    if age_s >= OFFLINE_S:
        return "offline", [
            Reason("silent", f"no report for {age_s:.0f} s", f"{age_s:.0f} 秒未收到报告")
        ]
    out: list[Reason] = []
    since = report.get("since_frame_s")
    if report.get("camera_state") == "lost":
        out.append(Reason("camera_lost", "camera lost", "摄像头断开"))
    elif since is not None and since >= NO_FRAME_S:
        out.append(Reason("no_frame", f"no frame for {since:.0f} s", f"{since:.0f} 秒没有画面"))
    pending = report.get("pending") or 0
    if pending >= BACKLOG:
        out.append(
            Reason("backlog", f"outbox backlog: {pending} events", f"发件箱积压 {pending} 条事件")
        )
    if held := report.get("held") or 0:
        out.append(
            Reason(
                "held",
                f"{held} events held: no match assigned",
                f"{held} 条事件待分配比赛",
            )
        )
    if refused := report.get("refused") or 0:
        out.append(Reason("refused", f"{refused} events refused", f"{refused} 条事件被拒收"))
    disk = report.get("disk_free_bytes")
    if disk is not None and disk < DISK_LOW_BYTES:
        out.append(
            Reason(
                "disk_low",
                f"disk low: {_fmt_bytes(disk)} free",
                f"磁盘空间不足：剩 {_fmt_bytes(disk)}",
            )
        )
    temp = report.get("cpu_temp_c")
    if temp is not None and temp >= CPU_HOT_C:
        out.append(Reason("cpu_hot", f"CPU hot: {temp:.0f} °C", f"CPU 过热：{temp:.0f} °C"))
    if report.get("recording") is False:
        out.append(Reason("not_recording", "recording stopped", "已停止记录"))
    for kind in report.get("alarms") or []:
        if kind not in _ALARMS_COVERED:
            out.append(Reason(f"alarm_{kind}", f"kiosk alarm: {kind}", f"本桌警报：{kind}"))
    state = deck_state(report, deck, now)
    if state is not None and state["stale"]:
        out.append(deck_reason(state))
    return ("degraded" if out else "ok"), out


# ---------------------------------------------------------------------- storage
def store_report(
    s: Session, table: str, report: HealthIn, keep_s: float, now: datetime | None = None
) -> TableHealth:
    """Store one report and drop the table's reports older than ``keep_s`` seconds."""
    now = now or datetime.now(UTC)
    row = TableHealth(
        table_id=table, received_at=now, body=report.model_dump(mode="json", exclude_none=False)
    )
    s.add(row)
    s.execute(
        delete(TableHealth).where(
            TableHealth.table_id == table,
            TableHealth.received_at < now - timedelta(seconds=keep_s),
        )
    )
    s.commit()
    return row


def _aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


def latest(s: Session, tables: Sequence[str]) -> dict[str, TableHealth]:
    """The newest report of each of ``tables`` (those that reported)."""
    if not tables:
        return {}
    newest = (
        select(func.max(TableHealth.id))
        .where(TableHealth.table_id.in_(list(tables)))
        .group_by(TableHealth.table_id)
    )
    rows = s.execute(select(TableHealth).where(TableHealth.id.in_(newest))).scalars()
    return {r.table_id: r for r in rows}


def history(s: Session, table: str, since_s: float, limit: int) -> list[dict[str, Any]]:
    """The table's reports of the last ``since_s`` seconds, oldest first (at most ``limit``,
    the newest kept)."""
    cut = datetime.now(UTC) - timedelta(seconds=since_s)
    rows = list(
        s.execute(
            select(TableHealth)
            .where(TableHealth.table_id == table, TableHealth.received_at >= cut)
            .order_by(TableHealth.id.desc())
            .limit(limit)
        ).scalars()
    )
    return [{"received_at": _aware(r.received_at).isoformat(), **r.body} for r in reversed(rows)]


def current_deck(s: Session, tid: int) -> dict[str, Any] | None:
    """The tournament's deck version in force (its latest upload): version, name and when it
    was uploaded; None when it shares none."""
    row = s.execute(
        select(DeckVersion.version, DeckVersion.name, DeckVersion.uploaded_at)
        .where(DeckVersion.tournament_id == tid)
        .order_by(DeckVersion.version.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    return {"version": int(row[0]), "name": row[1], "uploaded_at": _aware(row[2]).isoformat()}


def table_json(
    gt: GameTable, row: TableHealth | None, now: datetime, deck: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One table's status and reasons; ``deck``: the tournament's current deck
    (:func:`current_deck`), to compare the kiosk's with."""
    age = None if row is None else max(0.0, (now - _aware(row.received_at)).total_seconds())
    report = None if row is None else dict(row.body)
    status, reasons = judge(report, age, deck, now)
    return {
        "table": gt.id,
        "code": gt.code,
        "name": gt.name,
        "status": status,
        "reasons": [r.to_json() for r in reasons],
        "last_report_at": None if row is None else _aware(row.received_at).isoformat(),
        "age_s": None if age is None else round(age, 1),
        "deck": deck_state(report, deck, now),
        "report": report,
    }


def tournament_health(s: Session, t: Tournament) -> dict[str, Any]:
    tables = list(
        s.execute(
            select(GameTable)
            .where(GameTable.tournament_id == t.id, GameTable.withdrawn.is_(False))
            .order_by(GameTable.position, GameTable.id)
        ).scalars()
    )
    now = datetime.now(UTC)
    last = latest(s, [gt.id for gt in tables])
    deck = current_deck(s, t.id)
    rows = [table_json(gt, last.get(gt.id), now, deck) for gt in tables]
    counts = {k: sum(1 for r in rows if r["status"] == k) for k in STATUSES}
    if deck is not None:  # how many tables read with it, for the hall's headline
        judged = [r["deck"] for r in rows if r["status"] != "offline" and r["deck"] is not None]
        deck = dict(
            deck,
            tables_current=sum(1 for d in judged if not d["stale"]),
            tables_behind=sum(1 for d in judged if d["stale"]),
        )
    return {
        "tournament": t.id,
        "name": t.name,
        "at": now.isoformat(),
        "thresholds": {
            "offline_s": OFFLINE_S,
            "no_frame_s": NO_FRAME_S,
            "backlog": BACKLOG,
            "disk_low_bytes": DISK_LOW_BYTES,
            "cpu_hot_c": CPU_HOT_C,
            "deck_grace_s": DECK_GRACE_S,
        },
        "counts": counts,
        "deck": deck,
        "tables": rows,
    }


# ---------------------------------------------------------------------- Prometheus
#: (metric, help, type, report field); one sample per table whose report has the figure
_GAUGES = (
    ("guandan_table_camera_fps", "Camera frames per second, measured by the kiosk.", "fps"),
    (
        "guandan_table_seconds_since_frame",
        "Seconds since the kiosk's camera delivered a frame.",
        "since_frame_s",
    ),
    (
        "guandan_table_seconds_since_event",
        "Seconds since the kiosk logged its last game event.",
        "since_event_s",
    ),
    ("guandan_table_disk_free_bytes", "Free disk space on the kiosk.", "disk_free_bytes"),
    (
        "guandan_table_cpu_temperature_celsius",
        "CPU temperature of the kiosk (a Raspberry Pi's thermal zone 0).",
        "cpu_temp_c",
    ),
    ("guandan_table_events_logged", "Game events in the kiosk's log.", "events"),
)


def _label(value: object) -> str:
    text = str(value)
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(**kw: object) -> str:
    return "{" + ",".join(f'{k}="{_label(v)}"' for k, v in kw.items()) + "}"


def _num(x: float) -> str:
    if isinstance(x, bool):
        return "1" if x else "0"
    if isinstance(x, int):
        return str(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return repr(float(x))


def metrics_text(tournaments: Iterable[dict[str, Any]]) -> str:
    """The Prometheus text exposition (format 0.0.4) of every table of ``tournaments`` (each a
    :func:`tournament_health` answer)."""
    ts = list(tournaments)
    lines: list[str] = []

    def family(name: str, help_: str, samples: list[tuple[str, float]]) -> None:
        lines.append(f"# HELP {name} {help_}")
        lines.append(f"# TYPE {name} gauge")
        lines.extend(f"{name}{labels} {_num(v)}" for labels, v in samples)

    def base(t: dict[str, Any], row: dict[str, Any]) -> dict[str, object]:
        return {"tournament": t["tournament"], "table": row["table"], "code": row["code"]}

    every = [(t, row) for t in ts for row in t["tables"]]
    family(
        "guandan_table_up",
        "1 when the table's kiosk reported in the last 30 s, else 0.",
        [(_labels(**base(t, r)), int(r["status"] != "offline")) for t, r in every],
    )
    family(
        "guandan_table_status",
        "The table's hall status: 1 for the status it is in (ok, degraded, offline).",
        [
            (_labels(**base(t, r), status=st), int(r["status"] == st))
            for t, r in every
            for st in STATUSES
        ],
    )
    family(
        "guandan_table_report_age_seconds",
        "Seconds since the table's kiosk last reported (absent: never).",
        [(_labels(**base(t, r)), r["age_s"]) for t, r in every if r["age_s"] is not None],
    )
    for name, help_, key in _GAUGES:
        family(
            name,
            help_,
            [
                (_labels(**base(t, r)), r["report"][key])
                for t, r in every
                if r["report"] is not None and r["report"].get(key) is not None
            ],
        )
    family(
        "guandan_table_outbox_events",
        "Events in the kiosk's outbox by state: pending (to send), held (no match yet), "
        "refused (by the scoreboard).",
        [
            (_labels(**base(t, r), state=st), r["report"][st])
            for t, r in every
            if r["report"] is not None
            for st in ("pending", "held", "refused")
            if r["report"].get(st) is not None
        ],
    )
    family(
        "guandan_table_info",
        "The kiosk's detector model and deck profile (value always 1).",
        [
            (
                _labels(
                    **base(t, r),
                    model=r["report"].get("model") or "",
                    deck=r["report"].get("deck") or "",
                ),
                1,
            )
            for t, r in every
            if r["report"] is not None
        ],
    )
    family(
        "guandan_tournament_deck_version",
        "The tournament's current shared deck version (absent: it shares none).",
        [
            (_labels(tournament=t["tournament"]), t["deck"]["version"])
            for t in ts
            if t.get("deck") is not None
        ],
    )
    decked = [
        (t, r, r["deck"])
        for t, r in every
        if r["status"] != "offline" and r.get("deck") is not None
    ]
    family(
        "guandan_table_deck_version",
        "The shared deck version the table's kiosk reads with (0: the shipped model, no shared "
        "deck; absent: offline, reads no cards, or a deck of its own).",
        [(_labels(**base(t, r)), d["version"] or 0) for t, r, d in decked],
    )
    family(
        "guandan_table_deck_stale",
        "1 when the table's kiosk does not read with the tournament's current deck version "
        "(the hall shows it degraded, reason deck_old), else 0 (absent as "
        "guandan_table_deck_version).",
        [(_labels(**base(t, r)), int(d["stale"])) for t, r, d in decked],
    )
    family(
        "guandan_table_deck_behind_seconds",
        "A stale table: seconds since the tournament's current deck version was uploaded (a "
        "kiosk checks every minute by default; alert when this stays over a few minutes).",
        [
            (_labels(**base(t, r)), d["behind_s"])
            for t, r, d in decked
            if d["stale"] and d["behind_s"] is not None
        ],
    )
    family(
        "guandan_tables",
        "Tables of the tournament by hall status.",
        [
            (_labels(tournament=t["tournament"], status=st), t["counts"][st])
            for t in ts
            for st in STATUSES
        ],
    )
    return "\n".join(lines) + "\n"
