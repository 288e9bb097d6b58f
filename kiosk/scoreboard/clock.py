"""The round clock of a time-limited round (RULES.md: 35 to 120 minutes in the texts).

The organiser starts it when the round begins (the limit: the profile's ``time.limit_minutes``
or minutes given at the start), may pause and resume it, and may call time early; when the
running time reaches the limit, time is called by itself. Each action is a ``round_clock`` row
(append-only) and the state is a fold over them, so every process and every page agrees.

At the call of time the deal in play is finished; then the higher level wins, and equal levels
go by the profile's tie rule (``time.tie``: who reached it first, the last deal's 上游, one more
deal, or a draw). The scoreboard shows the clock and that rule; the table's referee applies it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from engine.profiles import load_profile
from kiosk.scoreboard.models import Round, RoundClockRow
from kiosk.scoreboard.service import ApiError, get_tournament

ACTIONS = ("start", "pause", "resume", "call")
TIE_TEXT = {
    "reached_first": (
        "equal levels: the side that reached the level first wins",
        "级数相同：先到达该级者胜",
    ),
    "last_deal_winner": (
        "equal levels: the last deal's first finisher (上游) wins",
        "级数相同：最后一副的上游方胜",
    ),
    "extra_deal": ("equal levels: one more deal decides", "级数相同：加打一副决定胜负"),
    "draw": ("equal levels: a draw", "级数相同：记为平局"),
}


def _aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


def fold(rows: Sequence[tuple[str, datetime, int | None]], now: datetime) -> dict[str, Any]:
    """The clock's state from its rows ``(action, at, limit_s)`` in order: ``state``
    (``idle``, ``running``, ``paused``, ``time``), ``limit_s``, ``elapsed_s``, ``remaining_s``,
    ``called`` (``organiser``, or ``limit`` when the running time reached it), ``called_at`` and
    ``ends_at`` (while running)."""
    limit = 0
    elapsed = 0.0
    since: datetime | None = None  # running since
    state = "idle"
    called: str | None = None
    called_at: datetime | None = None

    def ran_out(at: datetime) -> bool:
        """Time reached the limit while running, before ``at``: the clock stops there."""
        nonlocal elapsed, since, state, called, called_at
        if state != "running" or since is None or not limit:
            return False
        if elapsed + (at - since).total_seconds() < limit:
            return False
        called_at = since + timedelta(seconds=limit - elapsed)
        elapsed, since, state, called = float(limit), None, "time", "limit"
        return True

    for action, raw_at, limit_s in rows:
        at = _aware(raw_at)
        if ran_out(at):
            break
        if action == "start" and state == "idle":
            limit, elapsed, since, state = int(limit_s or 0), 0.0, at, "running"
        elif action == "pause" and state == "running" and since is not None:
            elapsed += (at - since).total_seconds()
            since, state = None, "paused"
        elif action == "resume" and state == "paused":
            since, state = at, "running"
        elif action == "call" and state in ("running", "paused"):
            if since is not None:
                elapsed += (at - since).total_seconds()
            since, state, called, called_at = None, "time", "organiser", at
    ran_out(now)
    if state == "running" and since is not None:
        elapsed += (now - since).total_seconds()
    remaining = max(0.0, limit - elapsed) if limit else None
    return {
        "state": state,
        "limit_s": limit,
        "elapsed_s": round(elapsed, 1),
        "remaining_s": None if remaining is None else round(remaining, 1),
        "called": called,
        "called_at": called_at.isoformat() if called_at else None,
        "ends_at": (
            (now + timedelta(seconds=remaining)).isoformat()
            if state == "running" and remaining is not None
            else None
        ),
    }


def _round(s: Session, tid: int, number: int) -> Round:
    get_tournament(s, tid)
    rnd = s.execute(
        select(Round).where(Round.tournament_id == tid, Round.number == number)
    ).scalar_one_or_none()
    if rnd is None:
        raise ApiError(404, f"no round {number} in tournament {tid} (没有第 {number} 轮)")
    return rnd


def _rows(s: Session, round_id: int) -> list[tuple[str, datetime, int | None]]:
    q = select(RoundClockRow).where(RoundClockRow.round_id == round_id).order_by(RoundClockRow.id)
    return [(r.action, r.at, r.limit_s) for r in s.execute(q).scalars()]


def clock_state(s: Session, tid: int, number: int) -> dict[str, Any] | None:
    """The round's clock (``fold``) when it was ever started, else None (for the kiosks: the
    table assignment carries it)."""
    rnd = s.execute(
        select(Round.id).where(Round.tournament_id == tid, Round.number == number)
    ).scalar_one_or_none()
    rows = [] if rnd is None else _rows(s, rnd)
    return fold(rows, datetime.now(UTC)) if rows else None


def clock_json(s: Session, tid: int, number: int) -> dict[str, Any]:
    """The round's clock now, with the profile's rule at the call of time (both languages)."""
    rnd = _round(s, tid, number)
    t = get_tournament(s, tid)
    profile = load_profile(t.profile)
    out = fold(_rows(s, rnd.id), datetime.now(UTC))
    tie_en, tie_zh = TIE_TEXT.get(profile.time.tie, (profile.time.tie, profile.time.tie))
    out.update(
        tournament=tid,
        round=number,
        round_status=rnd.status,
        profile_minutes=profile.time.limit_minutes,
        rule={
            "tie": profile.time.tie,
            "en": f"At time the deal in play is finished; the higher level wins; {tie_en}.",
            "zh": f"到时打完当前一副，级数高者胜；{tie_zh}。",
        },
    )
    return out


def act(s: Session, tid: int, number: int, action: str, minutes: int | None = None) -> None:
    """Start, pause, resume or call the round's clock (committed); 409 when the clock or the
    round is not in a state for it, 422 for a start without a time limit."""
    if action not in ACTIONS:
        raise ApiError(422, f"clock action {action!r}: use one of {', '.join(ACTIONS)}")
    rnd = _round(s, tid, number)
    if rnd.status != "open":
        raise ApiError(409, f"round {number} is closed: its clock cannot change (本轮已结束)")
    state = fold(_rows(s, rnd.id), datetime.now(UTC))["state"]
    allowed = {
        "start": ("idle",),
        "pause": ("running",),
        "resume": ("paused",),
        "call": ("running", "paused"),
    }[action]
    if state not in allowed:
        raise ApiError(
            409,
            f"the round {number} clock is {state}: cannot {action} it (计时状态不允许此操作); "
            + {
                "start": "it was started already",
                "pause": "only a running clock pauses",
                "resume": "only a paused clock resumes",
                "call": "time is called on a running or paused clock",
            }[action],
        )
    limit_s = None
    if action == "start":
        t = get_tournament(s, tid)
        mins = minutes if minutes is not None else load_profile(t.profile).time.limit_minutes
        if not mins:
            raise ApiError(
                422,
                f"profile {t.profile} has no time limit: give the round's minutes (1..600) "
                "to start a clock (此规则无限时，请填写分钟数)",
            )
        if not 1 <= mins <= 600:
            raise ApiError(422, f"minutes {mins}: give 1 to 600 (分钟数 1..600)")
        limit_s = int(mins) * 60
    s.add(RoundClockRow(round_id=rnd.id, action=action, limit_s=limit_s, at=datetime.now(UTC)))
    s.commit()
