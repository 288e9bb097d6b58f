"""The review desk's API and page, on the table kiosk (live) or on an appeal bundle (offline).

Page: ``GET /review`` (touch-friendly, 中文/English). API, all behind the referee PIN on the
kiosk (``X-Referee-Token`` from ``POST /api/referee/login``, or ``?token=`` where a browser
cannot send a header: the ``<video>`` element):

* ``GET /api/review/deals`` - the deals with their time spans and open disputes, the footage
  (segments, gaps) and whether this is an offline bundle.
* ``GET /api/review/deals/{deal}`` - a deal's events in order (voided ones marked), rulings,
  the gaps in its footage.
* ``GET /api/review/locate?event=ID`` (or ``?t=``) - the segment and offset holding that moment,
  or the gap (why there is no footage), and the clip to play: ``video {url, t0, t1, seek}``
  (``seek``: the clip time a few seconds before the event).
* ``GET /api/review/clip.webm?t0=&t1=`` - a WebM clip of session times t0..t1 cut from the
  segments (clip time x = session time t0 + x; a gap shows a dark frame), with range requests.
* ``GET /api/review/footage`` and ``GET /api/review/footage/{file}`` - the segment list and a
  recorded segment as it is (MJPG .avi, range requests; a missing one is a 404 naming the gap).
* ``GET /api/review/look?t=`` - the corners the detector finds in the frame at t, and the seat
  zones (for the page to draw); ``GET /api/review/frame.jpg?t=&draw=1`` - that frame as a JPEG.
* ``POST /api/review/ruling`` ``{event_id, action, referee, reason, seat?, cards?, kind?}`` with
  ``action`` one of confirm, correct, void, foul_add, foul_remove: a NEW event through the
  referee's ``correction`` flow (or a foul observation), ``reason`` carrying the referee's name;
  a ``ruling`` note keeps name, reason and the events it made. Nothing is overwritten.
* ``GET /api/review/rerun?deal=N`` - the deal's footage read again through the current
  pipeline: where the log differs (kiosk.review.rerun); nothing is written.
* ``GET /api/review/bundle?deal=N`` - the appeal bundle of a deal (kiosk.review.bundle).
"""

from __future__ import annotations

import math
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from engine.events import FOUL_KINDS
from kiosk.review import log as rlog
from kiosk.review.bundle import BundleDesk, BundleError, write_bundle
from kiosk.table.footage import MAX_CLIP_S, FootageError, FootageIndex

HERE = Path(__file__).parent
STATIC = HERE / "static"
CARDS_JS = HERE.parent / "table" / "static" / "cards.js"
#: a chosen event plays from this many seconds before it ...
LEAD_S = 3.0
#: ... in a clip from PRE_S before to POST_S after it
PRE_S = 10.0
POST_S = 6.0


class RulingIn(BaseModel):
    event_id: str = Field(default="", max_length=80, description="the event ruled on")
    action: str = Field(description="confirm, correct, void, foul_add or foul_remove")
    referee: str = Field(min_length=1, max_length=60, description="the ruling referee's name")
    reason: str = Field(min_length=1, max_length=300, description="why (shown in the log)")
    seat: str | None = Field(default=None, pattern="^[NESW]$")
    cards: list[str] | str = Field(default="", description="correct: the cards really played")
    kind: str | None = Field(default=None, description="foul_add: the foul kind")


def _err(status: int, en: str, zh: str = "") -> JSONResponse:
    return JSONResponse({"detail": en, "zh": zh or en}, status_code=status)


def clip_window(t: float, lo: float = 0.0) -> tuple[float, float]:
    """The clip played for a moment ``t``: whole seconds from PRE_S before to POST_S after."""
    return max(lo, math.floor(t - PRE_S)), math.ceil(t + POST_S)


class LiveDesk:
    """The review desk of a running table kiosk (``kiosk.table.app.Kiosk``)."""

    offline = False

    def __init__(self, kiosk: Any) -> None:
        self.kiosk = kiosk
        self.worker = kiosk.worker
        self.table = self.worker.table
        self._rerun_lock = threading.Lock()

    @property
    def folder(self) -> Path | None:
        info = getattr(self.kiosk, "info", {}) or {}
        if info.get("footage"):
            return Path(info["footage"])
        rec = getattr(self.worker.source, "footage", None)
        if rec is not None and getattr(rec, "folder", None) is not None:
            return Path(rec.folder)
        db = Path(self.worker.store.path)
        return db.with_name(f"{db.stem}-footage")

    @property
    def calibration(self) -> Any:
        return getattr(self.worker.source, "calibration", None)

    def footage(self) -> FootageIndex | None:
        src = self.worker.source
        if getattr(src, "kind", None) == "video":  # a replayed file: it is the footage
            video = Path(str(getattr(src, "spec", "")).removeprefix("file:"))
            db = Path(self.worker.store.path)
            return FootageIndex(video.parent, video=video, cache=db.with_name(f"{db.stem}-review"))
        return FootageIndex(self.folder) if self.folder is not None else None

    def events(self) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.worker.events]

    def notes(self) -> list[tuple[float, str, dict[str, Any]]]:
        return self.worker.store.notes()

    def authorised(self, token: str | None) -> bool:
        return bool(self.kiosk.pin.check(token))

    def settle(self, t: float, wait_s: float = 3.0) -> None:
        """Footage up to session time ``t`` readable: a live camera's segment being recorded
        holds it, so the recorder is asked to end that segment (the camera thread does, at its
        next frame); waits for that up to ``wait_s``."""
        rec = getattr(self.worker.source, "footage", None)
        if rec is None or not hasattr(rec, "request_cut") or not rec.status().get("recording"):
            return
        done = rec.segments[-1]["end_t"] if rec.segments else -1.0
        if t <= done:
            return
        n = len(rec.segments)
        rec.request_cut()
        deadline = time.monotonic() + wait_s
        while len(rec.segments) == n and time.monotonic() < deadline:
            time.sleep(0.05)

    def rerun(self, deal: int) -> dict[str, Any]:
        """The deal's footage read again (kiosk.review.rerun); the log is not touched."""
        from kiosk.review.rerun import rerun_deal

        footage = self.footage()
        if footage is None:
            raise FootageError("this kiosk records no footage")
        events = self.events()
        d = rlog.deal_of(rlog.deals_view(events), deal)
        start = next((e for e in d["events"] if e["type"] == "deal_started"), None)
        logged = self.worker.store.observations()
        cut = next(
            (
                lo.idx
                for lo in logged
                if start is not None and lo.obs.type == "deal_start" and lo.obs.t == start["t"]
            ),
            None,
        )
        prior = [lo.obs for lo in logged if cut is not None and lo.idx < cut]
        if not self._rerun_lock.acquire(blocking=False):
            raise RuntimeError("a re-read is running already: wait for it")
        try:
            return rerun_deal(
                events,
                footage,
                deal=deal,
                profile=self.worker.profile.name,
                table=self.table,
                prior=prior,
                notes=self.notes(),
                calibration=self.calibration,
            )
        finally:
            self._rerun_lock.release()

    def keeps(self, seg: Any) -> bool:
        """Whether ``seg`` (a footage Segment) holds the moments of an open dispute."""
        try:
            times = [float(e["t"]) for e in rlog.open_disputes(_view(self))]
        except Exception:  # noqa: BLE001 - when in doubt, keep the footage
            return True
        return any(seg.start_t - POST_S <= t <= seg.end_t + PRE_S for t in times)


def _view(desk: Any) -> list[dict[str, Any]]:
    return rlog.deals_view(desk.events(), desk.notes())


def _footage_json(desk: Any, t0: float | None = None, t1: float | None = None) -> dict[str, Any]:
    idx = desk.footage()
    if idx is None:
        return {"folder": None, "segments": [], "gaps": [], "problems": []}
    segs = idx.segments()
    evs = desk.events()
    lo = t0 if t0 is not None else min((e["t"] for e in evs), default=0.0)
    hi = t1 if t1 is not None else max((e["t"] for e in evs), default=0.0)
    outages = rlog.camera_outages(desk.notes())
    gaps = idx.gaps(lo, hi, outages, segs) if hi > lo else []
    return {
        "folder": str(idx.folder),
        "segments": [s.to_json() for s in segs],
        "gaps": gaps,
        "problems": idx.problems,
    }


def register_review(app: FastAPI, desk: Any, *, rule: Callable[..., Any] | None = None) -> None:
    """Mount the page and the API of ``desk`` (a :class:`LiveDesk` or a bundle's desk)."""

    def token_of(request: Request) -> str | None:
        return request.headers.get("x-referee-token") or request.query_params.get("token")

    def denied(request: Request) -> JSONResponse | None:
        if desk.authorised(token_of(request)):
            return None
        return _err(
            401,
            "review desk: log in with the referee PIN first (POST /api/referee/login)",
            "复核台：请先输入裁判密码登录",
        )

    @app.get("/review", include_in_schema=False)
    def page() -> HTMLResponse:
        return HTMLResponse((STATIC / "review.html").read_text(encoding="utf-8"))

    @app.get("/review/{name}", include_in_schema=False)
    def asset(name: str) -> Response:
        if name == "cards.js":
            return FileResponse(CARDS_JS, media_type="text/javascript")
        path = STATIC / name
        if name not in {"review.js", "review.css"} or not path.is_file():
            return _err(404, f"no review asset {name!r}")
        kind = "text/javascript" if name.endswith(".js") else "text/css"
        return FileResponse(path, media_type=kind)

    @app.get("/api/review/deals")
    def deals(request: Request) -> JSONResponse:
        if (bad := denied(request)) is not None:
            return bad
        view = _view(desk)
        rows = [
            {k: d[k] for k in ("deal", "t0", "t1", "level", "over", "disputes")}
            | {"events": len(d["events"])}
            for d in view
        ]
        return JSONResponse(
            {
                "table": desk.table,
                "offline": desk.offline,
                "deals": rows,
                "open_disputes": [e["id"] for e in rlog.open_disputes(view)],
                "footage": _footage_json(desk),
                "lead_s": LEAD_S,
            }
        )

    @app.get("/api/review/deals/{deal}")
    def deal(request: Request, deal: int) -> JSONResponse:
        if (bad := denied(request)) is not None:
            return bad
        try:
            d = rlog.deal_of(_view(desk), deal)
        except LookupError as exc:
            return _err(404, str(exc), f"记录中没有第 {deal} 副牌")
        return JSONResponse(d | {"footage": _footage_json(desk, d["t0"], d["t1"])})

    @app.get("/api/review/footage")
    def footage(request: Request) -> JSONResponse:
        if (bad := denied(request)) is not None:
            return bad
        return JSONResponse(_footage_json(desk))

    @app.get("/api/review/footage/{file}")
    def segment(request: Request, file: str) -> Response:
        if (bad := denied(request)) is not None:
            return bad
        idx = desk.footage()
        segs = idx.segments() if idx is not None else []
        seg = next((s for s in segs if s.file == file), None)
        if seg is None or idx is None:
            return _err(404, f"no footage segment {file!r}: see GET /api/review/footage")
        if not seg.present:
            gap = idx.locate((seg.start_t + seg.end_t) / 2, segs).get("gap") or {}
            return JSONResponse(
                {
                    "detail": gap.get("en", f"segment {file} is missing"),
                    "zh": gap.get("zh", "该段录像文件缺失"),
                    "gap": gap,
                },
                status_code=404,
            )
        return FileResponse(idx.folder / seg.file, media_type="video/x-msvideo")

    def _event(event_id: str) -> dict[str, Any] | None:
        return next((e for e in desk.events() if e["id"] == event_id), None)

    @app.get("/api/review/locate")
    def locate(
        request: Request, event: str | None = None, t: float | None = Query(default=None, ge=0)
    ) -> JSONResponse:
        if (bad := denied(request)) is not None:
            return bad
        ev = None
        if event is not None:
            ev = _event(event)
            if ev is None:
                return _err(404, f"no event {event!r} in this table's log", "记录中没有该事件")
            t = float(ev["t"])
        if t is None:
            return _err(422, "give ?event=ID or ?t=SECONDS", "请给出事件或时间")
        out: dict[str, Any] = {"event": event, "t": t}
        if not desk.offline:
            desk.settle(t + POST_S)
        idx = desk.footage()
        if idx is None:
            out.update(segment=None, gap={"kind": "no_footage", "en": "no footage", "zh": "无录像"})
            return JSONResponse(out)
        segs = idx.segments()
        out.update(idx.locate(t, segs))
        if desk.offline and event is not None and event in desk.locs:
            out.update(desk.locs[event])  # where the kiosk's recording held it
        out["video"] = desk.video_for(t, ev) if desk.offline else _live_video(t, segs, request)
        return JSONResponse(out)

    def _live_video(t: float, segs: list[Any], request: Request) -> dict[str, Any] | None:
        present = [s for s in segs if s.present]
        if not present:
            return None
        t0, t1 = clip_window(t)
        # keep the clip inside the recorded span (a gap inside it is shown as a dark frame)
        t0 = max(t0, math.floor(min(s.start_t for s in present)))
        t1 = min(t1, math.ceil(max(s.end_t for s in present)))
        if t1 <= t0:
            return None
        tok = token_of(request) or ""
        return {
            "url": f"/api/review/clip.webm?t0={t0:g}&t1={t1:g}&token={tok}",
            "t0": t0,
            "t1": t1,
            "seek": round(max(0.0, t - LEAD_S - t0), 3),
            "fps": round(max(s.rate for s in present), 3),
        }

    @app.get("/api/review/clip.webm")
    async def clip(request: Request, t0: float = Query(ge=0), t1: float = Query(gt=0)) -> Response:
        if (bad := denied(request)) is not None:
            return bad
        if desk.offline:
            return FileResponse(desk.clip_path, media_type="video/webm")
        if not t1 > t0 or t1 - t0 > MAX_CLIP_S:
            return _err(
                422,
                f"clip t0={t0:g} t1={t1:g}: give t0 < t1, at most {MAX_CLIP_S:g} s apart",
                "片段时间无效",
            )
        await run_in_threadpool(desk.settle, t1)
        idx = desk.footage()
        if idx is None:
            return _err(404, "this kiosk records no footage", "本桌没有录像")
        try:
            path, info = await run_in_threadpool(idx.web_clip, t0, t1)
        except FootageError as exc:
            return _err(404, str(exc), "该时段没有录像")
        headers = {"X-Clip-T0": str(info["t0"]), "X-Clip-Fps": str(info["fps"])}
        return FileResponse(path, media_type="video/webm", headers=headers)

    def _frame(t: float) -> tuple[Any, float] | None:
        if desk.offline:
            return desk.frame_at(t)
        desk.settle(t)
        idx = desk.footage()
        return idx.frame_at(t) if idx is not None else None

    @app.get("/api/review/look")
    async def look(request: Request, t: float = Query(ge=0)) -> JSONResponse:
        if (bad := denied(request)) is not None:
            return bad
        if desk.offline:
            seen = desk.look_at(t)
            if seen is None:
                return _err(404, f"the bundle has no detections near t={t:g} s", "包中无此刻识别")
            return JSONResponse(seen)
        got = await run_in_threadpool(_frame, t)
        if got is None:
            return _err(404, f"no recorded frame at t={t:g} s (a gap)", "此刻没有录像画面")
        from kiosk.review import vision

        img, ft = got
        seen = await run_in_threadpool(vision.look, img, desk.calibration)
        return JSONResponse(seen | {"t": t, "frame_t": round(ft, 3)})

    @app.get("/api/review/frame.jpg")
    async def frame(request: Request, t: float = Query(ge=0), draw: bool = True) -> Response:
        if (bad := denied(request)) is not None:
            return bad
        got = await run_in_threadpool(_frame, t)
        if got is None:
            return _err(404, f"no recorded frame at t={t:g} s (a gap)", "此刻没有录像画面")
        from kiosk.review import vision

        img, ft = got
        if draw and not desk.offline:
            seen = await run_in_threadpool(vision.look, img, desk.calibration)
            img = vision.draw(img, seen, f"t={ft:.2f} s")
        return Response(vision.jpeg(img), media_type="image/jpeg")

    @app.post("/api/review/ruling")
    async def ruling(request: Request, body: RulingIn) -> JSONResponse:
        if (bad := denied(request)) is not None:
            return bad
        if rule is None:
            return _err(
                409,
                "this is an offline appeal bundle: rulings are made on the table kiosk "
                "(the bundle's log is a copy)",
                "这是离线申诉包：请在该桌的计分终端上作出裁决",
            )
        status, out = await run_in_threadpool(rule, body)
        return JSONResponse(out, status_code=status)

    @app.get("/api/review/rerun")
    async def rerun(request: Request, deal: int) -> JSONResponse:
        """The deal's footage read again through the current pipeline: where the log differs
        (slow: the whole deal's frames). Nothing is written; a referee applies a difference as
        a ruling."""
        if (bad := denied(request)) is not None:
            return bad
        if desk.offline:
            return _err(
                409, "offline bundle: re-read the footage on the table kiosk", "离线包不能重新识别"
            )
        try:
            report = await run_in_threadpool(desk.rerun, deal)
        except LookupError as exc:
            return _err(404, str(exc), f"记录中没有第 {deal} 副牌")
        except FootageError as exc:
            return _err(404, str(exc), "没有可重新识别的录像")
        except RuntimeError as exc:
            return _err(409, str(exc), "正在重新识别，请稍候")
        except ValueError as exc:  # the pipeline could not read the footage (no markers, ...)
            return _err(422, str(exc), "录像无法识别")
        return JSONResponse(report)

    @app.get("/api/review/bundle")
    async def bundle(request: Request, deal: int) -> Response:
        if (bad := denied(request)) is not None:
            return bad
        if desk.offline:
            return FileResponse(desk.bundle_path, filename=desk.bundle_path.name)
        tmp = Path(tempfile.mkdtemp(prefix="gd-bundle-")) / f"{desk.table}-deal{deal}.zip"
        try:
            await run_in_threadpool(
                write_bundle,
                tmp,
                table=desk.table,
                deal=deal,
                events=desk.events(),
                notes=desk.notes(),
                footage=desk.footage(),
                calibration=desk.calibration,
            )
        except (BundleError, LookupError) as exc:
            return _err(404, str(exc), "无法生成申诉包")
        return FileResponse(
            tmp,
            media_type="application/zip",
            filename=tmp.name,
            background=BackgroundTask(_rmtree, tmp.parent),
        )


def create_offline_app(desk: BundleDesk) -> FastAPI:
    """The review page and API on a checked bundle (``guandan review open``)."""
    app = FastAPI(title=f"guandan appeal: table {desk.table} deal {desk.deal}", version="1")

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        return {"ok": True, "table": desk.table, "deal": desk.deal, "offline": True}

    register_review(app, desk, rule=None)
    return app


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------------------- rulings
def make_ruler(desk: LiveDesk) -> Callable[[RulingIn], tuple[int, dict[str, Any]]]:
    """The rulings of the live desk: each through the referee's existing flows (worker.submit of
    a ``correction`` or ``foul`` observation, as the referee screen's void/correct/foul do), so
    every one is a new event; then a ``ruling`` note with the referee's name and reason."""
    from engine.observations import ObservationError
    from kiosk.table.worker import ActionError

    w = desk.worker

    def rule(body: RulingIn) -> tuple[int, dict[str, Any]]:
        if body.action not in rlog.ACTIONS:
            return 422, {
                "detail": f"action {body.action!r}: one of {', '.join(rlog.ACTIONS)}",
                "zh": "裁决类型无效",
            }
        referee, reason = body.referee.strip(), body.reason.strip()
        if not referee or not reason:
            return 422, {
                "detail": "a ruling needs the referee's name and a reason",
                "zh": "裁决需填写裁判姓名和理由",
            }
        signed = f"{reason} (referee {referee})"
        evs = desk.events()
        ev = next((e for e in evs if e["id"] == body.event_id), None)
        if ev is None and body.action != "foul_add":
            return 404, {
                "detail": f"no event {body.event_id!r} in this table's log",
                "zh": "记录中没有该事件",
            }
        if (
            ev is not None
            and ev["type"] != "correction"
            and ev["id"] not in rlog.effective_ids(evs)
        ):
            return 409, {
                "detail": f"event {ev['seq']} was already replaced by a correction: rule on the "
                "event that replaced it",
                "zh": "该事件已被更正取代：请对取代它的事件裁决",
            }
        raw: dict[str, Any] | None = None
        if body.action == "confirm":
            assert ev is not None
            done = {str(b.get("id")) for _a, _k, b in w.store.notes("confirm")}
            w.note("confirm", {"id": ev["id"], "referee": referee, "reason": reason})
            if ev["type"] == "foul" and ev.get("review") and ev["id"] not in done:
                raw = {
                    "type": "foul",
                    "seat": ev.get("seat"),
                    "kind": ev.get("kind"),
                    "detail": f"confirmed: {ev.get('detail')}: {signed}",
                    "confirms": ev["id"],
                }
        elif body.action in ("void", "foul_remove"):
            assert ev is not None
            if body.action == "foul_remove" and ev["type"] != "foul":
                return 422, {
                    "detail": f"event {ev['seq']} is a {ev['type']}, not a foul",
                    "zh": "该事件不是犯规，无法撤销犯规",
                }
            raw = {"type": "correction", "replaces": ev["id"], "reason": signed, "referee": referee}
        elif body.action == "correct":
            assert ev is not None
            seat = body.seat or ev.get("seat")
            if seat not in ("N", "E", "S", "W"):
                return 422, {
                    "detail": "correct: give the seat that played (N, E, S or W)",
                    "zh": "更正：请选择出牌的座位",
                }
            cards = body.cards
            empty = not cards or (isinstance(cards, str) and not cards.strip())
            obs: dict[str, Any] = (
                {"type": "pass", "seat": seat}
                if empty
                else {"type": "played", "seat": seat, "cards": cards}
            )
            # the corrected play keeps the moment it was made (where the footage shows it)
            obs["t"] = ev["t"]
            raw = {
                "type": "correction",
                "replaces": ev["id"],
                "with": obs,
                "reason": signed,
                "referee": referee,
            }
        else:  # foul_add
            kind = body.kind or ""
            if kind not in FOUL_KINDS:
                return 422, {
                    "detail": f"foul kind {kind!r}: one of {', '.join(FOUL_KINDS)}",
                    "zh": "请选择犯规类型",
                }
            seat = body.seat or (ev or {}).get("seat")
            if seat not in ("N", "E", "S", "W"):
                return 422, {
                    "detail": f"{kind}: give the seat that committed it",
                    "zh": "请选择犯规的座位",
                }
            raw = {"type": "foul", "seat": seat, "kind": kind, "detail": signed}
        made: list[dict[str, Any]] = []
        if raw is not None:
            try:
                made = [e.to_json() for e in w.submit("referee", raw)]
            except (ActionError, ObservationError) as exc:
                return 422, {"detail": str(exc), "zh": f"裁判无法接受该裁决：{exc}"}
            except TimeoutError:
                return 503, {"detail": "the kiosk is busy: try again", "zh": "终端忙，请重试"}
            ignored = [e for e in made if e["type"] == "notice"]
            if ignored and len(ignored) == len(made):
                return 409, {
                    "detail": ignored[0].get("detail"),
                    "zh": f"裁判未采用该裁决：{ignored[0].get('detail')}",
                    "events": made,
                }
        note = {
            "event_id": body.event_id or None,
            "action": body.action,
            "referee": referee,
            "reason": reason,
            "events": [e["id"] for e in made],
        }
        if body.action == "correct":
            note["cards"] = body.cards
        try:
            w.note("ruling", note)
        except ActionError as exc:
            return 503, {
                "detail": f"the ruling's events are logged, its note is not: {exc}",
                "zh": "裁决事件已记录，但备注未能写入（磁盘满？）",
            }
        return 200, {"ok": True, "ruling": note, "events": made}

    return rule


def register_live(app: FastAPI, kiosk: Any) -> None:
    """The review desk on the table kiosk (kiosk/table/app.py calls this)."""
    desk = LiveDesk(kiosk)
    register_review(app, desk, rule=make_ruler(desk))
    rec = getattr(kiosk.worker.source, "footage", None)
    if rec is not None and hasattr(rec, "keep"):
        rec.keep = desk.keeps  # the footage budget never drops the segment of an open dispute
