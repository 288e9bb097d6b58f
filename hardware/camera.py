"""Cameras: one protocol, several backends, chosen by a spec string (like gpiozero's pin factories).

Specs (``open_camera(spec)``; ``None`` reads the environment variable ``GUANDAN_CAMERA``, default
``synthetic``), options after ``?`` as ``key=value&...``:

=================================  ===========================================================
``file:PATH`` (or a bare path)     a video file read with OpenCV (FFmpeg). Timestamps are video
                                   time. Options: ``realtime=1`` (pace like a live camera).
                                   Stretches that cannot be decoded are skipped and reported in
                                   ``camera.gaps`` (and to ``on_gap``), a file that ends before
                                   its header says is reported as a final gap.
``device:0`` / ``device:/dev/video2``  an OpenCV capture device (V4L2 on Linux). Options:
                                   ``width``, ``height``, ``fps``. Timestamps: seconds since
                                   opened.
``picamera2`` / ``picamera2:1``    the Raspberry Pi camera via picamera2 (imported only when
                                   opened; on the Pi install Debian's ``python3-picamera2``,
                                   hardware/pi/README.md). Options: ``width``, ``height``,
                                   ``fps``. Timestamps: sensor time since the first frame.
``synthetic`` / ``synthetic:table``  generated frames (``bars``: the frame index is encoded in
                                   the image, ``SyntheticCamera.decode_index``; ``table``: a table
                                   with the four corner markers). Options: ``frames`` (default
                                   unlimited), ``fps``, ``size=WxH``, ``seed``. Records what it
                                   served in ``camera.served``.
=================================  ===========================================================

More backends: ``register_backend(name, opener)``, or name modules in the environment variable
``GUANDAN_CAMERA_PLUGINS`` (comma separated): each is imported before the first spec is read and
registers its backends when imported (how a command line process gets a network camera, or the
tests a camera that fails on cue).

Every camera: ``read() -> Frame(t, image) | None`` (None at the end), iteration, ``close()``,
context manager, ``fps``, ``size`` (width, height), ``spec``, ``frames_read``. Images are BGR
``uint8`` arrays (H, W, 3). Bad specs and unreadable sources raise ``CameraError`` (a
``ValueError``) with a message saying what was wrong and what to do.

This module imports nothing of ours (DESIGN.md: hardware/ may import engine card types only).
"""

from __future__ import annotations

import importlib
import math
import os
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable
from urllib.parse import unquote

import cv2
import numpy as np
from numpy.typing import NDArray

__all__ = [
    "CameraError",
    "Frame",
    "Gap",
    "Camera",
    "BaseCamera",
    "FileCamera",
    "DeviceCamera",
    "Picamera2Camera",
    "SyntheticCamera",
    "ServedFrame",
    "open_camera",
    "register_backend",
    "BACKENDS",
    "ENV_VAR",
    "PLUGINS_VAR",
    "load_plugins",
    "parse_spec",
]

ENV_VAR = "GUANDAN_CAMERA"
PLUGINS_VAR = "GUANDAN_CAMERA_PLUGINS"
Image = NDArray[np.uint8]


class CameraError(ValueError):
    """A camera spec or source that cannot be used; the message says what to do."""


class Frame(NamedTuple):
    """One frame: ``t`` in seconds (video time for files) and the BGR image."""

    t: float
    image: Image


@dataclass(frozen=True)
class Gap:
    """A stretch of a video file that could not be read."""

    source: str
    first_frame: int
    last_frame: int  # inclusive
    start_t: float
    end_t: float
    reason: str

    @property
    def frames(self) -> int:
        return self.last_frame - self.first_frame + 1

    def __str__(self) -> str:
        frames = (
            f"frame {self.first_frame}"
            if self.frames == 1
            else f"frames {self.first_frame}-{self.last_frame}"
        )
        return (
            f"{self.source}: {frames} ({self.start_t:.2f}s-{self.end_t:.2f}s) could not be read: "
            f"{self.reason}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "first_frame": self.first_frame,
            "last_frame": self.last_frame,
            "start_t": round(self.start_t, 3),
            "end_t": round(self.end_t, 3),
            "reason": self.reason,
        }


@runtime_checkable
class Camera(Protocol):
    """What the pipeline needs from any camera."""

    spec: str

    @property
    def fps(self) -> float: ...

    @property
    def size(self) -> tuple[int, int]: ...

    def read(self) -> Frame | None: ...

    def __iter__(self) -> Iterator[Frame]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Camera: ...

    def __exit__(self, *exc: object) -> None: ...


class BaseCamera:
    """Shared plumbing: iteration, context manager, counters, closed-state checks."""

    spec: str = ""

    #: set by each backend when it opens its source
    _fps: float = 0.0
    _size: tuple[int, int] = (0, 0)

    def __init__(self) -> None:
        self.frames_read = 0
        self.closed = False

    @property
    def fps(self) -> float:
        return self._fps

    @property
    def size(self) -> tuple[int, int]:
        return self._size

    def _read(self) -> Frame | None:
        raise NotImplementedError

    def read(self) -> Frame | None:
        if self.closed:
            raise CameraError(f"camera {self.spec} is closed")
        frame = self._read()
        if frame is not None:
            self.frames_read += 1
        return frame

    def __iter__(self) -> Iterator[Frame]:
        while True:
            frame = self.read()
            if frame is None:
                return
            yield frame

    def _close(self) -> None:
        pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._close()

    def __enter__(self) -> BaseCamera:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec!r} frames_read={self.frames_read}>"


def _to_bgr(image: NDArray[Any]) -> Image:
    if image.ndim == 2:
        return np.asarray(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR), np.uint8)
    if image.ndim == 3 and image.shape[2] == 4:
        return np.asarray(cv2.cvtColor(image, cv2.COLOR_BGRA2BGR), np.uint8)
    return np.asarray(image, np.uint8)


# --------------------------------------------------------------------------------------------
# video file


def _why_unopenable(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            head = fh.read(64)
            size = path.stat().st_size
            if size == 0:
                return "the file is empty"
            fh.seek(0)
            data = fh.read(min(size, 64 * 1024 * 1024))
    except OSError as exc:
        return f"it cannot be read ({exc.strerror})"
    if head[4:8] == b"ftyp" and b"moov" not in data:
        return (
            "it is an MP4/MOV without its index (no 'moov' atom): the recording was cut off "
            "before it was finished; an MP4 cannot be read without it (record to .mkv or .avi "
            "with MJPG so a cut-off file stays readable up to the cut)"
        )
    return "it is not a video OpenCV/FFmpeg can decode, or it is damaged"


class FileCamera(BaseCamera):
    """A video file. Unreadable stretches are skipped and recorded in ``gaps``."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        realtime: bool = False,
        on_gap: Callable[[Gap], None] | None = None,
        max_failures: int | None = None,
    ) -> None:
        super().__init__()
        self.path = Path(path)
        self.spec = f"file:{self.path}"
        self.realtime = realtime
        self.on_gap = on_gap
        self.gaps: list[Gap] = []
        if not self.path.exists():
            raise CameraError(f"video file {self.path} not found")
        if self.path.is_dir():
            raise CameraError(f"{self.path} is a directory, not a video file")
        self._cap = cv2.VideoCapture(str(self.path))
        if not self._cap.isOpened():
            self._cap.release()
            raise CameraError(f"cannot open video {self.path}: {_why_unopenable(self.path)}")
        fps = float(self._cap.get(cv2.CAP_PROP_FPS) or 0.0)
        self._fps_known = math.isfinite(fps) and fps > 0
        self._fps = fps if self._fps_known else 30.0
        count = self._cap.get(cv2.CAP_PROP_FRAME_COUNT)
        self.frame_count: int | None = int(count) if count and count > 0 else None
        self._size = (
            int(self._cap.get(cv2.CAP_PROP_FRAME_WIDTH)),
            int(self._cap.get(cv2.CAP_PROP_FRAME_HEIGHT)),
        )
        # after this many failed reads in a row (past the header's frame count) we are at the end
        self._max_failures = max_failures
        self._next = 0  # index of the frame expected next
        self._ended = False
        self._last_t: float | None = None
        self._t0: float | None = None

    def _gap(self, first: int, last: int, start_t: float, end_t: float, reason: str) -> None:
        gap = Gap(str(self.path), first, last, start_t, end_t, reason)
        self.gaps.append(gap)
        if self.on_gap is not None:
            self.on_gap(gap)

    def _read(self) -> Frame | None:
        if self._ended:
            return None
        step = 1.0 / self._fps
        failures = 0
        limit = self._max_failures
        if limit is None:
            remaining = (self.frame_count or 0) - self._next
            limit = max(remaining, 0) + 8
        while True:
            ok, image = self._cap.read()
            if ok and image is not None:
                break
            failures += 1
            if failures > limit:
                self._ended = True
                # frame counts in headers can be estimates: one frame short is not a gap
                if self.frame_count is not None and self._next < self.frame_count - 1:
                    start = self._last_t + step if self._last_t is not None else 0.0
                    missing = self.frame_count - self._next
                    self._gap(
                        self._next,
                        self.frame_count - 1,
                        start,
                        start + missing * step,
                        "the file ends early (truncated, or damaged from here on)",
                    )
                return None
        index = self._next + failures
        pos_ms = float(self._cap.get(cv2.CAP_PROP_POS_MSEC))
        if math.isfinite(pos_ms) and pos_ms >= 0 and (pos_ms > 0 or index == 0):
            t = pos_ms / 1000.0  # the frame's own timestamp (right for variable frame rates)
        else:
            t = index * step
        if self._last_t is not None and t <= self._last_t:
            t = self._last_t + step  # never go back in time
        if failures:
            start = self._last_t + step if self._last_t is not None else 0.0
            self._gap(
                self._next,
                index - 1,
                start,
                max(start, t),
                "damaged frames could not be decoded and were skipped",
            )
        self._next = index + 1
        self._last_t = t
        if self.realtime:
            now = time.monotonic()
            if self._t0 is None:
                self._t0 = now - t
            delay = self._t0 + t - now
            if delay > 0:
                time.sleep(delay)
        return Frame(t, _to_bgr(image))

    def _close(self) -> None:
        self._cap.release()


# --------------------------------------------------------------------------------------------
# OpenCV device


class DeviceCamera(BaseCamera):
    """An OpenCV capture device (``/dev/videoN`` via V4L2 on Linux)."""

    def __init__(
        self,
        device: int | str = 0,
        *,
        width: int | None = None,
        height: int | None = None,
        fps: float | None = None,
        retries: int = 10,
        capture: Any = None,
    ) -> None:
        super().__init__()
        self.device = device
        self.spec = f"device:{device}"
        self.retries = retries
        if capture is None:
            node = Path(device) if isinstance(device, str) else Path(f"/dev/video{device}")
            if (isinstance(device, str) or sys.platform.startswith("linux")) and not node.exists():
                raise CameraError(
                    f"no camera device {node}: check it is plugged in (ls /dev/video*)"
                )
            capture = cv2.VideoCapture(device)
        self._cap = capture
        if not self._cap.isOpened():
            self._cap.release()
            raise CameraError(
                f"cannot open camera {self.spec}: not present, busy in another program, or no "
                "permission (add the user to the 'video' group); list devices with "
                "`ls /dev/video*`"
            )
        if width:
            self._cap.set(cv2.CAP_PROP_FRAME_WIDTH, width)
        if height:
            self._cap.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        if fps:
            self._cap.set(cv2.CAP_PROP_FPS, fps)
        got = float(self._cap.get(cv2.CAP_PROP_FPS) or 0.0)
        self._fps = got if math.isfinite(got) and got > 0 else float(fps or 30.0)
        self._size = (
            int(self._cap.get(cv2.CAP_PROP_FRAME_WIDTH)),
            int(self._cap.get(cv2.CAP_PROP_FRAME_HEIGHT)),
        )
        self._t0 = time.monotonic()

    def _read(self) -> Frame | None:
        for _ in range(self.retries + 1):
            ok, image = self._cap.read()
            if ok and image is not None:
                t = time.monotonic() - self._t0
                image = _to_bgr(image)
                self._size = (image.shape[1], image.shape[0])
                return Frame(t, image)
        raise CameraError(
            f"camera {self.spec} stopped delivering frames ({self.retries + 1} reads failed): "
            "check the cable and that no other program uses it"
        )

    def _close(self) -> None:
        self._cap.release()


# --------------------------------------------------------------------------------------------
# Raspberry Pi camera


_PICAMERA2_HELP = (
    "picamera2 is not installed: on Raspberry Pi OS run `sudo apt install python3-picamera2` and "
    "create the venv with `python3 -m venv --system-site-packages` (hardware/pi/README.md); "
    "elsewhere use a `file:`, `device:` or `synthetic` camera"
)


class Picamera2Camera(BaseCamera):
    """The Raspberry Pi camera (libcamera) through picamera2, imported only when opened."""

    def __init__(
        self,
        camera_num: int = 0,
        *,
        width: int = 1280,
        height: int = 720,
        fps: float = 30.0,
    ) -> None:
        super().__init__()
        self.spec = f"picamera2:{camera_num}"
        try:
            module = importlib.import_module("picamera2")
        except ImportError as exc:
            raise CameraError(f"{_PICAMERA2_HELP} ({exc})") from None
        try:
            self._cam = module.Picamera2(camera_num)
        except (IndexError, RuntimeError) as exc:
            raise CameraError(
                f"no Raspberry Pi camera {camera_num}: check the ribbon cable and "
                f"`rpicam-hello --list-cameras` ({exc})"
            ) from None
        # "RGB888" in picamera2 is B, G, R byte order in memory: what OpenCV calls BGR.
        config = self._cam.create_video_configuration(
            main={"size": (width, height), "format": "RGB888"},
            controls={"FrameRate": float(fps)},
        )
        self._cam.configure(config)
        self._cam.start()
        self._fps = float(fps)
        self._size = (width, height)
        self._t0_ns: int | None = None
        self._t0 = time.monotonic()

    def _read(self) -> Frame | None:
        request = self._cam.capture_request()
        try:
            image = np.asarray(request.make_array("main"))
            metadata = request.get_metadata() or {}
        finally:
            request.release()
        stamp = metadata.get("SensorTimestamp")
        if isinstance(stamp, int):
            if self._t0_ns is None:
                self._t0_ns = stamp
            t = (stamp - self._t0_ns) / 1e9
        else:
            t = time.monotonic() - self._t0
        image = _to_bgr(image)
        self._size = (image.shape[1], image.shape[0])
        return Frame(t, image)

    def _close(self) -> None:
        try:
            self._cam.stop()
        finally:
            self._cam.close()


# --------------------------------------------------------------------------------------------
# synthetic

#: ArUco dictionary and corner ids of the table markers (same as vision/table.py).
_ARUCO_DICTIONARY = "DICT_4X4_50"


@dataclass(frozen=True)
class ServedFrame:
    """What a synthetic camera served: index, timestamp and a checksum of the pixels."""

    index: int
    t: float
    checksum: int


_BITS = 20  # frame index bits encoded in a bars frame


def _bars_frame(index: int, size: tuple[int, int], rng: np.random.Generator) -> Image:
    w, h = size
    x = np.linspace(0, 255, w, dtype=np.float32)
    img = np.empty((h, w, 3), np.uint8)
    img[:, :, 0] = x.astype(np.uint8)[None, :]
    img[:, :, 1] = np.linspace(0, 255, h, dtype=np.float32).astype(np.uint8)[:, None]
    img[:, :, 2] = (index * 7) % 256
    # a moving square
    s = max(4, min(w, h) // 8)
    cx = (index * 5) % max(1, w - s)
    cy = (index * 3) % max(1, h - s)
    img[cy : cy + s, cx : cx + s] = (255, 255, 255)
    noise = rng.integers(0, 6, img.shape, dtype=np.uint8)
    img = np.asarray(cv2.add(img, noise), np.uint8)
    # frame index, one bit per block along the top band (black = 0, white = 1)
    band = max(4, h // 24)
    bw = max(1, w // _BITS)
    for bit in range(_BITS):
        img[:band, bit * bw : (bit + 1) * bw] = 255 if (index >> bit) & 1 else 0
    return np.asarray(img, np.uint8)


def _table_frame(
    index: int, size: tuple[int, int], rng: np.random.Generator, corners: NDArray[np.float64]
) -> Image:
    w, h = size
    top_w = 900
    top = np.empty((top_w, top_w, 3), np.uint8)
    top[:] = (60, 110, 40)
    aruco = cv2.aruco
    dictionary = aruco.getPredefinedDictionary(getattr(aruco, _ARUCO_DICTIONARY))
    side, quiet, offset = 60, 10, 50
    for mid, (mx, my) in enumerate(
        [
            (offset, offset),
            (top_w - offset, offset),
            (top_w - offset, top_w - offset),
            (offset, top_w - offset),
        ]
    ):
        tile = np.full((side + 2 * quiet, side + 2 * quiet), 255, np.uint8)
        tile[quiet:-quiet, quiet:-quiet] = aruco.generateImageMarker(dictionary, mid, side)
        y0, x0 = my - tile.shape[0] // 2, mx - tile.shape[1] // 2
        top[y0 : y0 + tile.shape[0], x0 : x0 + tile.shape[1]] = tile[:, :, None]
    # a "card" sliding across the table
    cx = 200 + (index * 9) % 500
    cv2.rectangle(top, (cx, 400), (cx + 63, 488), (245, 245, 245), -1)
    src = np.array([(0, 0), (top_w, 0), (top_w, top_w), (0, top_w)], np.float32) - 0.5
    warp = cv2.getPerspectiveTransform(src, corners.astype(np.float32))
    img = cv2.warpPerspective(top, warp, (w, h), borderValue=(70, 70, 80))
    noise = np.asarray(rng.integers(0, 6, img.shape, dtype=np.uint8), np.uint8)
    return np.asarray(cv2.add(img, noise), np.uint8)


class SyntheticCamera(BaseCamera):
    """Generated frames; records what it served (``served``), like gpiozero's mock pins.

    ``pattern``: ``bars`` (frame index encoded in the top band: ``decode_index``) or ``table``
    (a 900 mm table with the four corner markers under a fixed perspective). ``source`` overrides
    both: a callable ``(index) -> image`` or None at the end. ``frames`` None = unlimited.
    """

    def __init__(
        self,
        pattern: str = "bars",
        *,
        frames: int | None = None,
        fps: float = 30.0,
        size: tuple[int, int] = (1280, 720),
        seed: int = 0,
        realtime: bool = False,
        source: Callable[[int], NDArray[Any] | None] | None = None,
    ) -> None:
        super().__init__()
        if pattern not in ("bars", "table"):
            raise CameraError(f"unknown synthetic pattern {pattern!r}: use 'bars' or 'table'")
        if fps <= 0 or not math.isfinite(fps):
            raise CameraError(f"synthetic camera: fps must be positive, got {fps!r}")
        w, h = size
        if w < 32 or h < 24:
            raise CameraError(f"synthetic camera: size {w}x{h} is too small (at least 32x24)")
        self.pattern = pattern
        self.spec = f"synthetic:{pattern}"
        self.frames = frames
        self._fps = float(fps)
        self._size = (int(w), int(h))
        self.seed = seed
        self.realtime = realtime
        self.source = source
        self.served: list[ServedFrame] = []
        self._rng = np.random.default_rng(seed)
        self._index = 0
        self._t0: float | None = None
        m = min(w, h)
        cx, cy, half = w / 2, h / 2, 0.45 * m
        jitter = np.random.default_rng(seed + 1).uniform(-0.04 * m, 0.04 * m, (4, 2))
        self._corners = (
            np.array(
                [
                    (cx - half, cy - half),
                    (cx + half, cy - half),
                    (cx + half, cy + half),
                    (cx - half, cy + half),
                ]
            )
            + jitter
        )

    @property
    def table_corners_px(self) -> NDArray[np.float64]:
        """Where the ``table`` pattern puts the table corners NW, NE, SE, SW (pixels)."""
        return self._corners.copy()

    def _read(self) -> Frame | None:
        i = self._index
        if self.frames is not None and i >= self.frames:
            return None
        if self.source is not None:
            got = self.source(i)
            if got is None:
                return None
            image = _to_bgr(np.asarray(got))
        elif self.pattern == "table":
            image = _table_frame(i, self._size, self._rng, self._corners)
        else:
            image = _bars_frame(i, self._size, self._rng)
        t = i / self._fps
        if self.realtime:
            now = time.monotonic()
            if self._t0 is None:
                self._t0 = now
            delay = self._t0 + t - now
            if delay > 0:
                time.sleep(delay)
        self._index += 1
        self.served.append(ServedFrame(i, t, zlib.crc32(image.tobytes())))
        return Frame(t, image)

    @staticmethod
    def decode_index(image: NDArray[Any]) -> int:
        """The frame index encoded in a ``bars`` frame (survives mild compression)."""
        h, w = image.shape[:2]
        band = max(4, h // 24)
        bw = max(1, w // _BITS)
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        index = 0
        for bit in range(_BITS):
            block = gray[1 : band - 1, bit * bw + 1 : (bit + 1) * bw - 1]
            if float(block.mean()) > 127:
                index |= 1 << bit
        return index


# --------------------------------------------------------------------------------------------
# factory


_PLUGINS_LOADED: set[str] = set()


def load_plugins(names: str | None = None) -> list[str]:
    """Import the camera plugin modules named in ``names`` (comma separated; default
    ``$GUANDAN_CAMERA_PLUGINS``); each registers its backends with :func:`register_backend` when
    imported. Each module is imported once. Returns the modules newly imported."""
    text = os.environ.get(PLUGINS_VAR, "") if names is None else names
    loaded: list[str] = []
    for name in (n.strip() for n in text.split(",")):
        if not name or name in _PLUGINS_LOADED:
            continue
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise CameraError(
                f"camera plugin {name!r} (${PLUGINS_VAR}) cannot be imported: {exc}; fix the "
                f"module name or unset {PLUGINS_VAR}"
            ) from None
        _PLUGINS_LOADED.add(name)
        loaded.append(name)
    return loaded


def parse_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """``"device:0?width=640"`` -> ``("device", "0", {"width": "640"})``."""
    load_plugins()
    text = spec.strip()
    if not text:
        raise CameraError("empty camera spec: use file:PATH, device:N, picamera2 or synthetic")
    query = ""
    if "?" in text:
        text, query = text.split("?", 1)
    options: dict[str, str] = {}
    for part in filter(None, query.split("&")):
        key, _, value = part.partition("=")
        if not key.strip():
            raise CameraError(
                f"camera spec {spec!r}: options after '?' must be key=value&key=value"
            )
        options[unquote(key.strip())] = unquote(value.strip())
    kind, sep, arg = text.partition(":")
    if not sep:
        arg = ""
    if kind not in BACKENDS:
        # a bare path to a video file
        if Path(text).suffix or os.sep in text:
            return "file", text, options
        raise CameraError(
            f"unknown camera {text!r}: use one of {', '.join(sorted(BACKENDS))} "
            "(e.g. file:game.mp4, device:0, picamera2, synthetic)"
        )
    return kind, arg, options


class _Options:
    def __init__(self, spec: str, options: dict[str, str]) -> None:
        self.spec = spec
        self.options = dict(options)

    def _take(self, key: str) -> str | None:
        return self.options.pop(key, None)

    def get_int(self, key: str) -> int | None:
        raw = self._take(key)
        if raw is None:
            return None
        try:
            value = int(raw)
        except ValueError:
            raise CameraError(
                f"camera spec {self.spec!r}: {key}={raw!r} is not a whole number"
            ) from None
        if value < 0:
            raise CameraError(f"camera spec {self.spec!r}: {key} must be >= 0, got {value}")
        return value

    def get_float(self, key: str) -> float | None:
        raw = self._take(key)
        if raw is None:
            return None
        try:
            value = float(raw)
        except ValueError:
            raise CameraError(f"camera spec {self.spec!r}: {key}={raw!r} is not a number") from None
        if not math.isfinite(value) or value <= 0:
            raise CameraError(f"camera spec {self.spec!r}: {key} must be positive, got {raw}")
        return value

    def get_bool(self, key: str) -> bool:
        raw = self._take(key)
        if raw is None:
            return False
        if raw.lower() in ("1", "true", "yes", "on", ""):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise CameraError(f"camera spec {self.spec!r}: {key}={raw!r} is not 1/0 or true/false")

    def get_size(self, key: str) -> tuple[int, int] | None:
        raw = self._take(key)
        if raw is None:
            return None
        try:
            w, h = (int(p) for p in raw.lower().split("x"))
        except ValueError:
            raise CameraError(
                f"camera spec {self.spec!r}: {key}={raw!r} is not WIDTHxHEIGHT, e.g. 1280x720"
            ) from None
        return (w, h)

    def done(self) -> None:
        if self.options:
            key = sorted(self.options)[0]
            raise CameraError(f"camera spec {self.spec!r}: unknown option {key!r}")


def _open_file(spec: str, arg: str, opts: _Options, **kwargs: Any) -> Camera:
    if not arg:
        raise CameraError(f"camera spec {spec!r}: give the video path, e.g. file:game.mp4")
    realtime = opts.get_bool("realtime")
    opts.done()
    return FileCamera(arg, realtime=realtime, **kwargs)


def _open_device(spec: str, arg: str, opts: _Options, **kwargs: Any) -> Camera:
    device: int | str = int(arg) if arg.isdigit() else (arg or 0)
    size = opts.get_size("size")
    width, height = opts.get_int("width"), opts.get_int("height")
    if size:
        width, height = size
    fps = opts.get_float("fps")
    opts.done()
    return DeviceCamera(device, width=width, height=height, fps=fps, **kwargs)


def _open_picamera2(spec: str, arg: str, opts: _Options, **kwargs: Any) -> Camera:
    if arg and not arg.isdigit():
        raise CameraError(
            f"camera spec {spec!r}: picamera2 takes a camera number, e.g. picamera2:0"
        )
    size = opts.get_size("size") or (opts.get_int("width") or 1280, opts.get_int("height") or 720)
    fps = opts.get_float("fps") or 30.0
    opts.done()
    return Picamera2Camera(int(arg or 0), width=size[0], height=size[1], fps=fps, **kwargs)


def _open_synthetic(spec: str, arg: str, opts: _Options, **kwargs: Any) -> Camera:
    frames = opts.get_int("frames")
    fps = opts.get_float("fps") or 30.0
    size = opts.get_size("size") or (1280, 720)
    seed = opts.get_int("seed") or 0
    realtime = opts.get_bool("realtime")
    opts.done()
    return SyntheticCamera(
        arg or "bars", frames=frames, fps=fps, size=size, seed=seed, realtime=realtime, **kwargs
    )


#: Backend name -> opener ``(spec, arg, options, **kwargs) -> Camera``.
BACKENDS: dict[str, Callable[..., Camera]] = {
    "file": _open_file,
    "device": _open_device,
    "picamera2": _open_picamera2,
    "synthetic": _open_synthetic,
}
_LOCK = threading.Lock()


def register_backend(name: str, opener: Callable[..., Camera]) -> None:
    """Add a backend (e.g. a network camera) under ``name:`` specs."""
    with _LOCK:
        BACKENDS[name] = opener


def open_camera(spec: str | None = None, **kwargs: Any) -> Camera:
    """Open the camera named by ``spec`` (or ``$GUANDAN_CAMERA``, default ``synthetic``).
    Extra keyword arguments go to the backend (e.g. ``on_gap=`` for files)."""
    if spec is None:
        spec = os.environ.get(ENV_VAR) or "synthetic"
    kind, arg, options = parse_spec(spec)
    return BACKENDS[kind](spec, arg, _Options(spec, options), **kwargs)
