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
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import cv2
import numpy as np

log = logging.getLogger("guandan.table")

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
    ) -> None:
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
            size != tuple(self._seg["size"]) or t - self._seg["start_t"] >= self.segment_s
        ):
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
            }
