"""A test-only live camera: a recorded game served as if a camera were filming the table now.

Importing this module registers the ``replay:`` backend (``hardware.camera.register_backend``);
a kiosk process gets it with ``GUANDAN_CAMERA_PLUGINS=tests.kiosk.livecam``::

    replay:datasets/demo/game.mp4?fail_after=45&down=2

Frames come in real time (the video's frame rate, by the wall clock), stamped like a device
camera (monotonic seconds since opened). ``fail_after=N``: once N frames have been served in
this process, the next read raises (an unplugged camera, once); ``down=K``: then the next K
opens fail. Reopened, it goes on from the frame where it stopped (the table waited), so the
game's frame numbers - and the oracle labels beside the video - stay in step.
"""

from __future__ import annotations

import time
from typing import Any

import cv2
import numpy as np

from hardware.camera import BaseCamera, CameraError, Frame, register_backend

#: per spec: frames served so far, opens refused so far, whether the failure has happened
STATE: dict[str, dict[str, Any]] = {}


class ReplayLiveCamera(BaseCamera):
    def __init__(self, spec: str, path: str, *, fail_after: int | None, down: int) -> None:
        super().__init__()
        self.spec = spec
        state = STATE.setdefault(spec, {"served": 0, "refused": 0, "failed": False})
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

    @property
    def fps(self) -> float:
        return self._fps

    @property
    def size(self) -> tuple[int, int]:
        return self._size

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
        return Frame(time.monotonic() - self._t0, np.asarray(image, np.uint8))

    def _close(self) -> None:
        self._cap.release()


def _open_replay(spec: str, arg: str, opts: Any, **kwargs: Any) -> ReplayLiveCamera:
    fail_after = opts.get_int("fail_after")
    down = opts.get_int("down") or 0
    opts.done()
    return ReplayLiveCamera(spec, arg, fail_after=fail_after, down=down)


register_backend("replay", _open_replay)
