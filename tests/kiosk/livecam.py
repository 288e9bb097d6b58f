"""A test-only live camera: a recorded game served as if a camera were filming the table now.

Importing this module registers the ``replay:`` backend (``hardware.camera.register_backend``);
a kiosk process gets it with ``GUANDAN_CAMERA_PLUGINS=tests.kiosk.livecam``::

    replay:datasets/demo/game.mp4?fail_after=45&down=2

Frames come in real time (the video's frame rate, by the wall clock), stamped like a device
camera (monotonic seconds since opened). ``fail_after=N``: once N frames have been served in
this process, the next read raises (an unplugged camera, once); ``down=K``: then the next K
opens fail. Reopened, it goes on from the frame where it stopped (the table waited), so the
game's frame numbers - and the oracle labels beside the video - stay in step.
``state=FILE``: the count of frames served is kept in FILE too, so a camera opened by another
process (the kiosk killed and started again) goes on from the frame where the last one stopped;
the restarted kiosk's frame index starts at 0 there (``shifted_oracle`` writes labels to match).
"""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from hardware.camera import BaseCamera, CameraError, Frame, register_backend

#: per spec: frames served so far, opens refused so far, whether the failure has happened
STATE: dict[str, dict[str, Any]] = {}


class ReplayLiveCamera(BaseCamera):
    def __init__(
        self,
        spec: str,
        path: str,
        *,
        fail_after: int | None,
        down: int,
        state_file: str | None = None,
    ) -> None:
        super().__init__()
        self.spec = spec
        state = STATE.setdefault(spec, {"served": 0, "refused": 0, "failed": False})
        self._state_file = Path(state_file) if state_file else None
        if self._state_file is not None and self._state_file.exists():
            served = json.loads(self._state_file.read_text())["served"]
            state["served"] = max(state["served"], int(served))
        if state["failed"] and state["refused"] < down:
            state["refused"] += 1
            raise CameraError(f"camera {spec} is unplugged (test: open {state['refused']})")
        self._state = state
        self._fail_after = fail_after
        self._cap = cv2.VideoCapture(path)
        if not self._cap.isOpened():
            raise CameraError(f"cannot open {path}")
        self._fps = float(self._cap.get(cv2.CAP_PROP_FPS) or 5.0)
        self._size = (
            int(self._cap.get(cv2.CAP_PROP_FRAME_WIDTH)),
            int(self._cap.get(cv2.CAP_PROP_FRAME_HEIGHT)),
        )
        for _ in range(state["served"]):  # the table went on where the camera stopped
            self._cap.grab()
        self._t0 = time.monotonic()
        self._n = 0

    def _read(self) -> Frame | None:
        st = self._state
        if self._fail_after is not None and not st["failed"] and st["served"] >= self._fail_after:
            st["failed"] = True
            raise CameraError(f"camera {self.spec} stopped delivering frames (test: unplugged)")
        due = self._t0 + self._n / self._fps
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        ok, image = self._cap.read()
        if not ok:
            return None
        self._n += 1
        st["served"] += 1
        if self._state_file is not None:
            tmp = self._state_file.with_name(self._state_file.name + ".tmp")
            tmp.write_text(json.dumps({"served": st["served"]}))
            os.replace(tmp, self._state_file)
        return Frame(time.monotonic() - self._t0, np.asarray(image, np.uint8))

    def _close(self) -> None:
        self._cap.release()


def _open_replay(spec: str, arg: str, opts: Any, **kwargs: Any) -> ReplayLiveCamera:
    fail_after = opts.get_int("fail_after")
    down = opts.get_int("down") or 0
    state_file = opts._take("state")
    opts.done()
    return ReplayLiveCamera(spec, arg, fail_after=fail_after, down=down, state_file=state_file)


def shifted_oracle(oracle: Path, start: int, out: Path) -> Path:
    """The oracle labels of a camera that starts at frame ``start`` of the video: frame
    ``start + i`` becomes ``i`` (a restarted kiosk counts its frames from 0)."""
    with gzip.open(oracle, "rt", encoding="utf-8") as src, gzip.open(out, "wt") as dst:
        for line in src:
            row = json.loads(line)
            if int(row["i"]) >= start:
                row["i"] = int(row["i"]) - start
                dst.write(json.dumps(row) + "\n")
    return out


register_backend("replay", _open_replay)
