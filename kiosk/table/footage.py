"""Footage of a live table camera for dispute review: segmented video files beside the event log.

:class:`FootageRecorder` writes every frame the kiosk's live camera delivers into MJPG ``.avi``
segments (an AVI cut off by a power loss stays readable up to the cut; an MP4 would not), a new
segment every ``segment_s`` seconds of session time or when the frame size changes::

    <folder>/<table>-<YYYYmmdd-HHMMSS>-t<session seconds>.avi
    <folder>/segments.jsonl     one line per finished segment: file, start_t, end_t, frames,
                                fps, size, started/ended (wall clock, ISO 8601)

``start_t``/``end_t`` are session seconds, the ``t`` of the events, so a disputed event is found
in the footage by its ``t``. The folder is made when the first segment starts.

Disk space: the footage must never take the event log's room. Before each segment and every
``check_s`` seconds the free space is checked; below ``reserve_mb`` the segment is closed,
recording stops and the ``footage`` alarm is raised (the event log and the match go on); once
there is room again a new segment starts and the alarm is cleared. ``paused()`` (the event log's
own disk-full alarm) stops it the same way.

Disk budget: with ``budget_mb`` (or ``$GUANDAN_FOOTAGE_BUDGET_MB``) the folder is held under it
each time a segment is finished: the review desk's rendered clips go first, then the oldest
segments, never one that ``keep`` holds (the review desk sets it: the segments of open
disputes) nor the one being recorded; each dropped segment is listed in ``dropped.jsonl``.

Reading it back (the review desk, kiosk/review): :class:`FootageIndex` - the segments (also one
being recorded or cut off by a crash), which segment and offset hold a session time, the gaps
(a missing or dropped file, a camera outage, nothing recorded), single frames, and WebM clips a
browser plays (clip time x = session time t0 + x; a gap shows a dark frame), cached.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import cv2
import numpy as np

log = logging.getLogger("guandan.table")
#: the footage folder's disk budget in MB, for a kiosk started without one (the Pi service)
ENV_BUDGET = "GUANDAN_FOOTAGE_BUDGET_MB"

AlarmFn = Callable[[str, str | None, str], None]


class FootageRecorder:
    """Segmented MJPG recording of a live camera (see the module doc)."""

    fourcc = "MJPG"
    suffix = ".avi"

    def __init__(
        self,
        folder: str | Path,
        *,
        table: str = "t1",
        segment_s: float = 600.0,
        reserve_mb: float = 1024.0,
        check_s: float = 2.0,
        alarm: AlarmFn | None = None,
        paused: Callable[[], bool] | None = None,
        budget_mb: float | None = None,
        keep: Callable[[Segment], bool] | None = None,
    ) -> None:
        if budget_mb is None and os.environ.get(ENV_BUDGET, "").strip():
            text = os.environ[ENV_BUDGET].strip()
            try:
                budget_mb = float(text)
            except ValueError:
                raise ValueError(
                    f"${ENV_BUDGET}={text!r}: give the footage's disk budget in MB, e.g. 20000"
                ) from None
        if budget_mb is not None and not budget_mb > 0:
            raise ValueError(f"footage budget {budget_mb} MB: give a positive size (or none)")
        if not segment_s > 0:
            raise ValueError(f"footage segments of {segment_s} s: give a positive length")
        if reserve_mb < 0:
            raise ValueError(f"footage reserve {reserve_mb} MB: give 0 or more")
        self.folder = Path(folder)
        parent = self.folder.resolve().parent
        if not parent.is_dir():
            raise ValueError(f"footage folder {folder}: the folder {parent} does not exist")
        if self.folder.exists() and not self.folder.is_dir():
            raise ValueError(f"footage folder {folder}: that is a file, not a folder")
        self.table = table
        self.segment_s = float(segment_s)
        self.reserve_mb = float(reserve_mb)
        self.check_s = check_s
        self.alarm = alarm
        self.paused = paused
        self._lock = threading.Lock()
        self._writer: Any = None
        self._file: Path | None = None
        self._seg: dict[str, Any] = {}
        self._stopped_why: str | None = None
        self._next_check = 0.0
        self.segments: list[dict[str, Any]] = []
        self.frames = 0
        self.closed = False
        #: disk budget of the folder (None: only the free-space reserve limits it)
        self.budget_mb = budget_mb
        #: segments the budget must not drop (the review desk: those of open disputes)
        self.keep = keep
        self.dropped: list[dict[str, Any]] = []
        self._cut_asked = threading.Event()

    # ------------------------------------------------------------------ writing
    def write(self, t: float, image: np.ndarray, fps: float) -> bool:
        """Record one frame taken at session time ``t``; False when it was not recorded."""
        if self.closed:
            return False
        now = time.monotonic()
        if now >= self._next_check or (self._writer is None and self._stopped_why is None):
            self._next_check = now + self.check_s
            why = self._no_room()
            if why is not None:
                self._stop(why)
                return False
            if self._stopped_why is not None:
                self._resume()
        elif self._stopped_why is not None:
            return False
        size = (int(image.shape[1]), int(image.shape[0]))
        w = self._writer
        if w is not None and (
            size != tuple(self._seg["size"])
            or t - self._seg["start_t"] >= self.segment_s
            or self._cut_asked.is_set()
        ):
            self._cut_asked.clear()
            self._finish()
            w = None
        if w is None:
            w = self._start(t, size, fps)
            if w is None:
                return False
        try:
            w.write(np.ascontiguousarray(image))
        except cv2.error as exc:
            self._stop(f"the video writer failed: {exc}")
            return False
        with self._lock:
            self._seg["end_t"] = t
            self._seg["frames"] += 1
            self.frames += 1
        return True

    def _no_room(self) -> str | None:
        if self.paused is not None and self.paused():
            return "the event log's disk is full"
        probe = self.folder if self.folder.exists() else self.folder.resolve().parent
        try:
            free_mb = shutil.disk_usage(probe).free / 2**20
        except OSError as exc:
            return f"the footage folder cannot be checked ({exc.strerror or exc})"
        if free_mb < self.reserve_mb:
            return (
                f"only {free_mb:.0f} MB free on the kiosk's disk (footage keeps "
                f"{self.reserve_mb:.0f} MB for the event log)"
            )
        return None

    def _start(self, t: float, size: tuple[int, int], fps: float) -> Any:
        started = datetime.now().astimezone()
        name = f"{self.table}-{started:%Y%m%d-%H%M%S}-t{t:07.1f}{self.suffix}"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self._stop(f"the footage folder {self.folder} cannot be made ({exc.strerror or exc})")
            return None
        path = self.folder / name
        n = 1
        while path.exists():
            n += 1
            path = self.folder / f"{Path(name).stem}-{n}{self.suffix}"
        rate = fps if fps and 0 < fps <= 240 else 30.0
        writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*self.fourcc), rate, size)
        if not writer.isOpened():
            writer.release()
            self._stop(f"OpenCV cannot write {path} ({self.fourcc})")
            return None
        with self._lock:
            self._writer = writer
            self._file = path
            self._seg = {
                "file": path.name,
                "start_t": round(t, 3),
                "end_t": round(t, 3),
                "frames": 0,
                "fps": rate,
                "size": list(size),
                "started": started.isoformat(timespec="seconds"),
            }
        return writer

    def _finish(self) -> None:
        with self._lock:
            writer, seg = self._writer, dict(self._seg)
            self._writer = None
            self._file = None
        if writer is None:
            return
        try:
            writer.release()
        except cv2.error as exc:  # a full disk while closing: the segment is cut, still readable
            log.warning("footage segment %s: %s", seg.get("file"), exc)
        seg["end_t"] = round(seg["end_t"], 3)
        seg["ended"] = datetime.now().astimezone().isoformat(timespec="seconds")
        self.segments.append(seg)
        try:
            with (self.folder / "segments.jsonl").open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(seg) + "\n")
        except OSError as exc:
            log.warning("footage index %s: %s", self.folder / "segments.jsonl", exc)
        self._budget()

    def _budget(self) -> None:
        """Hold the folder under ``budget_mb`` once a segment is finished (oldest first, never a
        segment ``keep`` holds)."""
        if self.budget_mb is None:
            return
        keep = self.keep or (lambda _s: False)
        try:
            index = FootageIndex(self.folder)
            dropped = index.enforce_budget(self.budget_mb, keep)
            over = index.usage_bytes() / 2**20 - self.budget_mb
        except (OSError, FootageError) as exc:
            log.warning("footage budget: %s", exc)
            return
        self.dropped.extend(dropped)
        for row in dropped:
            log.info(
                "footage budget: dropped %s (t %s..%s)", row["file"], row["start_t"], row["end_t"]
            )
        if over > 0:
            log.warning(
                "footage is %.0f MB over its budget: the rest is kept for open disputes", over
            )

    def _stop(self, why: str) -> None:
        self._finish()
        if self._stopped_why != why:
            log.warning("footage recording stopped: %s", why)
        self._stopped_why = why
        if self.alarm is not None:
            self.alarm(
                "footage",
                f"FOOTAGE RECORDING STOPPED: {why}. The event log is intact and the match goes "
                "on; footage recording resumes by itself once there is room.",
                "录像已停止（磁盘空间不足或无法写入）；事件记录完好，比赛继续，空间恢复后自动继续录像。",
            )

    def _resume(self) -> None:
        self._stopped_why = None
        if self.alarm is not None:
            self.alarm("footage", None, "")

    def request_cut(self) -> None:
        """From another thread (the review desk needs what was recorded up to now): the current
        segment ends before the next frame, which starts a new one (the camera thread does it,
        so the writer is never closed under it)."""
        self._cut_asked.set()

    def cut(self) -> None:
        """End the current segment now (the camera is gone: the next frame starts a new one)."""
        self._finish()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._finish()

    # ------------------------------------------------------------------ state
    def status(self) -> dict[str, Any]:
        with self._lock:
            return {
                "folder": str(self.folder),
                "recording": self._writer is not None,
                "file": self._file.name if self._file is not None else None,
                "segments": len(self.segments) + (1 if self._writer is not None else 0),
                "frames": self.frames,
                "stopped": self._stopped_why,
                "budget_mb": self.budget_mb,
                "dropped": len(self.dropped),
            }


# ---------------------------------------------------------------------------------------------
# Reading the footage back (the review desk, kiosk/review): which segment holds a time, the
# gaps, single frames, and clips a browser can play.

#: a browser plays WebM/VP8 (OpenCV's FFmpeg writes it); MJPG .avi it does not
WEB_FOURCC = "VP80"
WEB_SUFFIX = ".webm"
#: the longest clip the review desk renders in one go (a deal is a few minutes)
MAX_CLIP_S = 1800.0
#: the review desk's rendered clips, beside the segments (regenerable: the budget drops them first)
CACHE_DIR = "review-cache"
#: how many rendered clips the cache keeps (the newest)
CACHE_KEEP = 100
#: segments the disk budget dropped, one JSON line each (the review desk names them in the gaps)
DROPPED = "dropped.jsonl"
_NAME_T = re.compile(r"-t(\d+(?:\.\d+)?)(?:-\d+)?\.avi$")


class FootageError(ValueError):
    """Footage that cannot be read or cut (the message says what and what to do)."""


@dataclass(frozen=True)
class Segment:
    """One footage file: session times ``start_t``..``end_t`` (first and last frame)."""

    file: str
    start_t: float
    end_t: float
    frames: int
    fps: float
    size: tuple[int, int]
    present: bool = True
    #: not in segments.jsonl: the segment being recorded now, or one cut off by a crash
    open: bool = False
    bytes: int = 0

    @property
    def rate(self) -> float:
        """Frames per second of session time (the camera's real rate, not its nominal one)."""
        if self.frames > 1 and self.end_t > self.start_t:
            return (self.frames - 1) / (self.end_t - self.start_t)
        return self.fps or 30.0

    def covers(self, t: float, slack: float = 0.0) -> bool:
        return self.start_t - slack <= t <= self.end_t + slack

    def index_at(self, t: float) -> int:
        i = int(round((t - self.start_t) * self.rate))
        return max(0, min(self.frames - 1, i))

    def t_of(self, index: int) -> float:
        return self.start_t + index / self.rate

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "start_t": self.start_t,
            "end_t": self.end_t,
            "frames": self.frames,
            "fps": round(self.rate, 3),
            "size": list(self.size),
            "present": self.present,
            "open": self.open,
            "bytes": self.bytes,
        }


def _probe(path: Path) -> tuple[int, float, tuple[int, int]]:
    cap = cv2.VideoCapture(str(path))
    try:
        if not cap.isOpened():
            return 0, 0.0, (0, 0)
        n = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
        size = (int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT)))
        return n, fps, size
    finally:
        cap.release()


class FootageIndex:
    """A footage folder as the review desk reads it: ``segments.jsonl`` plus any ``.avi`` not
    yet indexed there (the segment being recorded, or one a crash cut off), files that are gone
    (``present`` False), and the gaps between them."""

    def __init__(
        self,
        folder: str | Path,
        *,
        video: str | Path | None = None,
        cache: str | Path | None = None,
    ) -> None:
        """``video``: one recorded file (a replayed video: session time = video time) taken as the
        only segment instead of the folder's; ``cache``: where rendered clips go (default
        ``<folder>/review-cache``)."""
        self.folder = Path(folder)
        self.video = Path(video) if video is not None else None
        self.cache = Path(cache) if cache is not None else self.folder / CACHE_DIR
        self.problems: list[str] = []

    def dropped(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        path = self.folder / DROPPED
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                    out[str(row["file"])] = row
                except (ValueError, KeyError, TypeError):
                    continue
        return out

    def segments(self) -> list[Segment]:
        self.problems = []
        if self.video is not None:
            frames, fps, size = _probe(self.video) if self.video.is_file() else (0, 0.0, (0, 0))
            if frames <= 0:
                self.problems.append(f"{self.video} cannot be read as a video")
                return []
            rate = fps if fps > 0 else 30.0
            end = round((frames - 1) / rate, 3)
            size_b = self.video.stat().st_size
            return [Segment(self.video.name, 0.0, end, frames, rate, size, bytes=size_b)]
        if not self.folder.is_dir():
            return []
        found: dict[str, Segment] = {}
        index = self.folder / "segments.jsonl"
        if index.is_file():
            for n, line in enumerate(index.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    path = self.folder / str(row["file"])
                    seg = Segment(
                        file=str(row["file"]),
                        start_t=float(row["start_t"]),
                        end_t=float(row["end_t"]),
                        frames=int(row["frames"]),
                        fps=float(row.get("fps") or 0.0),
                        size=(int(row["size"][0]), int(row["size"][1])),
                        present=path.is_file() and path.stat().st_size > 0,
                        bytes=path.stat().st_size if path.is_file() else 0,
                    )
                except (ValueError, KeyError, TypeError, IndexError) as exc:
                    self.problems.append(f"{index} line {n} is not a segment ({exc}): skipped")
                    continue
                found[seg.file] = seg
        for path in sorted(self.folder.glob("*.avi")):
            if path.name in found:
                continue
            m = _NAME_T.search(path.name)
            if m is None:
                continue
            frames, fps, size = _probe(path)
            if frames <= 0:
                continue
            start = float(m.group(1))
            rate = fps if fps > 0 else 30.0
            end = round(start + (frames - 1) / rate, 3)
            found[path.name] = Segment(
                path.name, start, end, frames, rate, size, open=True, bytes=path.stat().st_size
            )
        return sorted(found.values(), key=lambda s: (s.start_t, s.file))

    # ------------------------------------------------------------------ where a time is
    def locate(self, t: float, segments: list[Segment] | None = None) -> dict[str, Any]:
        """The segment and offset holding session time ``t``; else ``gap`` (why it is missing)."""
        segs = self.segments() if segments is None else segments
        for s in segs:
            if s.present and s.covers(t, 0.5 / s.rate):
                i = s.index_at(t)
                return {
                    "t": t,
                    "segment": s.file,
                    "offset": round(t - s.start_t, 3),
                    "frame": i,
                    "frame_t": round(s.t_of(i), 3),
                }
        return {"t": t, "segment": None, "gap": self._why(t, segs)}

    def _why(self, t: float, segs: list[Segment]) -> dict[str, Any]:
        dropped = self.dropped()
        for s in segs:
            if not s.present and s.covers(t, 0.5 / s.rate):
                d = dropped.get(s.file)
                return {
                    "kind": "dropped" if d else "missing",
                    "file": s.file,
                    "start_t": s.start_t,
                    "end_t": s.end_t,
                    "en": (
                        f"segment {s.file} was dropped by the footage disk budget"
                        if d
                        else f"segment {s.file} is missing from {self.folder}"
                    ),
                    "zh": "该段录像已按磁盘预算删除" if d else "该段录像文件缺失",
                }
        before = max((s.end_t for s in segs if s.end_t < t), default=None)
        after = min((s.start_t for s in segs if s.start_t > t), default=None)
        return {
            "kind": "not_recorded",
            "start_t": before,
            "end_t": after,
            "en": "no footage was recorded at this time (camera outage, recording stopped, or "
            "no camera)",
            "zh": "此时没有录像（摄像头断开、录像停止或没有摄像头）",
        }

    def gaps(
        self,
        t0: float,
        t1: float,
        outages: list[tuple[float, float | None]] | None = None,
        segments: list[Segment] | None = None,
    ) -> list[dict[str, Any]]:
        """The stretches of ``t0..t1`` without footage, each with why: ``missing`` (a segment
        file gone), ``dropped`` (by the disk budget), ``outage`` (the camera was lost),
        ``not_recorded``."""
        segs = self.segments() if segments is None else segments
        have = sorted((s.start_t, s.end_t) for s in segs if s.present)
        holes: list[tuple[float, float]] = []
        cur = t0
        for a, b in have:
            slack = 1.0
            if b < cur or a > t1:
                continue
            if a > cur + slack:
                holes.append((cur, min(a, t1)))
            cur = max(cur, b)
        if cur < t1 - 1.0:
            holes.append((cur, t1))
        out = []
        for a, b in holes:
            why = self._why((a + b) / 2, segs)
            for lost, back in outages or []:
                end = back if back is not None else float("inf")
                if lost < b and end > a:
                    why = {
                        "kind": "outage",
                        "en": f"the camera was lost at t={lost:.1f} s"
                        + (f" and back at t={back:.1f} s" if back is not None else ""),
                        "zh": "摄像头断开",
                    }
                    break
            out.append({**why, "start_t": round(a, 3), "end_t": round(b, 3)})
        return out

    # ------------------------------------------------------------------ frames
    def frame_at(self, t: float) -> tuple[np.ndarray, float] | None:
        """The recorded frame nearest session time ``t`` and its time; None in a gap."""
        for s in self.segments():
            if s.present and s.covers(t, 0.5 / s.rate):
                cap = cv2.VideoCapture(str(self.folder / s.file))
                try:
                    i = s.index_at(t)
                    cap.set(cv2.CAP_PROP_POS_FRAMES, i)
                    ok, img = cap.read()
                    if not ok:
                        # a segment cut off by a crash can hold fewer frames than its index says
                        return None
                    return img, s.t_of(i)
                finally:
                    cap.release()
        return None

    def frames(
        self, t0: float, t1: float, rate: float
    ) -> Iterator[tuple[float, np.ndarray | None]]:
        """Frames on a uniform timeline ``t0, t0 + 1/rate, ...`` up to ``t1``: each the recorded
        frame nearest that time, or None where there is none (a gap)."""
        segs = [s for s in self.segments() if s.present]
        cap: Any = None
        cur: Segment | None = None
        pos = -1
        last: tuple[Segment, int, np.ndarray] | None = None
        n = int(math.floor((t1 - t0) * rate + 1e-6)) + 1
        try:
            for j in range(n):
                t = t0 + j / rate
                seg = next((s for s in segs if s.covers(t, 0.5 / s.rate)), None)
                if seg is None:
                    yield t, None
                    continue
                i = seg.index_at(t)
                if last is not None and last[0] is seg and last[1] == i:
                    yield t, last[2]
                    continue
                if seg is not cur:
                    if cap is not None:
                        cap.release()
                    cap = cv2.VideoCapture(str(self.folder / seg.file))
                    cur, pos = seg, -1
                if i != pos + 1:
                    cap.set(cv2.CAP_PROP_POS_FRAMES, i)
                ok, img = cap.read()
                pos = i
                if not ok:
                    yield t, None
                    continue
                last = (seg, i, img)
                yield t, img
        finally:
            if cap is not None:
                cap.release()

    def write_clip(
        self, t0: float, t1: float, out: Path, *, max_width: int = 1280
    ) -> dict[str, Any]:
        """A WebM (VP8) clip of session times ``t0..t1`` at the footage's rate: clip time ``x``
        shows session time ``t0 + x``; a gap shows a dark frame saying so. Written to a
        temporary file first, then renamed (no half-written clip is ever served)."""
        if not t1 > t0:
            raise FootageError(f"clip {t0:g}..{t1:g} s: the end must come after the start")
        if t1 - t0 > MAX_CLIP_S:
            raise FootageError(
                f"clip {t0:g}..{t1:g} s is longer than {MAX_CLIP_S:g} s: ask for a shorter one"
            )
        segs = [s for s in self.segments() if s.present and s.end_t >= t0 and s.start_t <= t1]
        if not segs:
            raise FootageError(f"no footage between t={t0:.1f} and t={t1:.1f} s in {self.folder}")
        rate = max(1.0, min(60.0, round(max(s.rate for s in segs), 3)))
        w0, h0 = max(segs, key=lambda s: s.size[0]).size
        scale = min(1.0, max_width / w0) if w0 else 1.0
        size = (int(round(w0 * scale)) // 2 * 2, int(round(h0 * scale)) // 2 * 2)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.stem}.{threading.get_ident()}.tmp{WEB_SUFFIX}")
        writer = cv2.VideoWriter(str(tmp), cv2.VideoWriter.fourcc(*WEB_FOURCC), rate, size)
        if not writer.isOpened():
            writer.release()
            raise FootageError(f"OpenCV cannot write a {WEB_FOURCC} clip to {tmp}")
        frames = gap_frames = 0
        blank: np.ndarray | None = None
        try:
            for t, img in self.frames(t0, t1, rate):
                if img is None:
                    blank = np.full((size[1], size[0], 3), 40, np.uint8)
                    cv2.putText(
                        blank,
                        f"NO FOOTAGE  t={t:.1f} s",
                        (20, size[1] // 2),
                        cv2.FONT_HERSHEY_SIMPLEX,
                        max(0.5, size[0] / 900),
                        (200, 200, 200),
                        2,
                    )
                    frame = blank
                    gap_frames += 1
                elif (img.shape[1], img.shape[0]) != size:
                    frame = cv2.resize(img, size, interpolation=cv2.INTER_AREA)
                else:
                    frame = img
                writer.write(frame)
                frames += 1
        finally:
            writer.release()
        tmp.replace(out)
        return {
            "t0": round(t0, 3),
            "t1": round(t0 + (frames - 1) / rate, 3),
            "fps": rate,
            "frames": frames,
            "gap_frames": gap_frames,
            "size": list(size),
        }

    def web_clip(self, t0: float, t1: float) -> tuple[Path, dict[str, Any]]:
        """The clip of ``t0..t1`` from the cache (``review-cache/``), rendered on first use;
        a cached clip is reused only while the segments it was cut from are unchanged."""
        segs = [s for s in self.segments() if s.end_t >= t0 and s.start_t <= t1]
        key = json.dumps([[s.file, s.frames, s.present] for s in segs], sort_keys=True)
        tag = hashlib.sha256(f"{t0:.3f}|{t1:.3f}|{key}".encode()).hexdigest()[:16]
        out = self.cache / f"clip-{t0:.1f}-{t1:.1f}-{tag}{WEB_SUFFIX}"
        meta = out.with_suffix(".json")
        with _clip_lock(str(out)):
            if out.is_file() and meta.is_file():
                try:
                    return out, json.loads(meta.read_text(encoding="utf-8"))
                except ValueError:
                    pass
            info = self.write_clip(t0, t1, out)
            meta.write_text(json.dumps(info), encoding="utf-8")
        self._prune_cache()
        return out, info

    def _prune_cache(self, keep: int = CACHE_KEEP) -> None:
        """Only the ``keep`` newest rendered clips stay (they are made again when asked for)."""
        try:
            clips = sorted(self.cache.glob(f"clip-*{WEB_SUFFIX}"), key=lambda p: p.stat().st_mtime)
            for old in clips[:-keep] if len(clips) > keep else []:
                old.unlink(missing_ok=True)
                old.with_suffix(".json").unlink(missing_ok=True)
        except OSError as exc:
            log.warning("review clip cache %s: %s", self.cache, exc)

    # ------------------------------------------------------------------ disk budget
    def usage_bytes(self) -> int:
        if not self.folder.is_dir():
            return 0
        return sum(p.stat().st_size for p in self.folder.rglob("*") if p.is_file())

    def enforce_budget(
        self, budget_mb: float, keep: Callable[[Segment], bool] = lambda s: False
    ) -> list[dict[str, Any]]:
        """Hold the folder under ``budget_mb``: first the review desk's rendered clips go, then
        the oldest finished segments, never one that ``keep`` holds (the segment of an open
        dispute) nor the one being recorded. Each dropped segment is written to
        ``dropped.jsonl`` (the review desk names it in the gaps). Returns the dropped rows."""
        if budget_mb <= 0:
            raise FootageError(f"footage budget {budget_mb} MB: give a positive size")
        limit = budget_mb * 2**20
        used = self.usage_bytes()
        cache = self.cache
        if used > limit and cache.is_dir():
            for p in sorted(cache.glob("*"), key=lambda p: p.stat().st_mtime):
                used -= p.stat().st_size
                p.unlink(missing_ok=True)
                if used <= limit:
                    break
        dropped: list[dict[str, Any]] = []
        for seg in self.segments():
            if used <= limit:
                break
            if not seg.present or seg.open or keep(seg):
                continue
            path = self.folder / seg.file
            size = path.stat().st_size
            path.unlink()
            used -= size
            row = {
                "file": seg.file,
                "start_t": seg.start_t,
                "end_t": seg.end_t,
                "bytes": size,
                "dropped": datetime.now().astimezone().isoformat(timespec="seconds"),
            }
            with (self.folder / DROPPED).open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")
            dropped.append(row)
        return dropped


_CLIP_LOCKS: dict[str, threading.Lock] = {}
_CLIP_LOCKS_GUARD = threading.Lock()


def _clip_lock(key: str) -> threading.Lock:
    with _CLIP_LOCKS_GUARD:
        return _CLIP_LOCKS.setdefault(key, threading.Lock())
