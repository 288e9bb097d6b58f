"""Synthetic, device and picamera2 backends, and the spec factory."""

from __future__ import annotations

import sys
import types
import zlib
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

import hardware.camera as camera_module
from hardware.camera import (
    BACKENDS,
    ENV_VAR,
    Camera,
    CameraError,
    DeviceCamera,
    FileCamera,
    Picamera2Camera,
    SyntheticCamera,
    open_camera,
    parse_spec,
    register_backend,
)

# ---- synthetic ------------------------------------------------------------------------------


def test_synthetic_serves_and_records() -> None:
    cam = open_camera("synthetic?frames=5&fps=10&size=320x240&seed=3")
    assert isinstance(cam, SyntheticCamera) and isinstance(cam, Camera)
    assert cam.size == (320, 240) and cam.fps == 10
    frames = list(cam)
    assert len(frames) == 5 and cam.read() is None
    assert [f.t for f in frames] == pytest.approx([0, 0.1, 0.2, 0.3, 0.4])
    assert [SyntheticCamera.decode_index(f.image) for f in frames] == [0, 1, 2, 3, 4]
    assert [s.index for s in cam.served] == [0, 1, 2, 3, 4]
    assert [s.checksum for s in cam.served] == [zlib.crc32(f.image.tobytes()) for f in frames]
    assert len({s.checksum for s in cam.served}) == 5
    # same seed, same frames
    again = open_camera("synthetic?frames=5&fps=10&size=320x240&seed=3")
    assert [s.checksum for s in again.served] == []
    list(again)
    assert [s.checksum for s in again.served] == [s.checksum for s in cam.served]


def test_decode_index_survives_jpeg() -> None:
    rng = np.random.default_rng(0)
    for index in (999, 2**20 - 1, 0x5A5A5):
        image = camera_module._bars_frame(index, (640, 360), rng)
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 60])
        assert ok
        assert SyntheticCamera.decode_index(cv2.imdecode(buf, cv2.IMREAD_COLOR)) == index


def test_synthetic_table_pattern_is_calibratable() -> None:
    from vision.table import calibrate

    cam = open_camera("synthetic:table?frames=2")
    f = cam.read()
    assert f is not None
    cal = calibrate(f.image)
    got = cal.to_image([(0, 0), (900, 0), (900, 900), (0, 900)])
    assert np.abs(got - cam.table_corners_px).max() < 2.0  # type: ignore[attr-defined]


def test_synthetic_source_callable() -> None:
    images = [np.full((48, 64, 3), v, np.uint8) for v in (10, 20, 30)]
    cam = SyntheticCamera(source=lambda i: images[i] if i < len(images) else None, fps=5)
    got = list(cam)
    assert [int(f.image[0, 0, 0]) for f in got] == [10, 20, 30]
    assert [s.index for s in cam.served] == [0, 1, 2]
    grey = SyntheticCamera(source=lambda i: np.zeros((48, 64), np.uint8), frames=1).read()
    assert grey is not None and grey.image.shape == (48, 64, 3)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("synthetic:stripes", "unknown synthetic pattern 'stripes'"),
        ("synthetic?fps=0", "fps must be positive"),
        ("synthetic?fps=fast", "fps='fast' is not a number"),
        ("synthetic?size=10x10", "too small"),
        ("synthetic?size=big", "WIDTHxHEIGHT"),
        ("synthetic?frames=-1", "frames must be >= 0"),
        ("synthetic?frames=two", "not a whole number"),
        ("synthetic?colour=red", "unknown option 'colour'"),
        ("synthetic?realtime=maybe", "not 1/0"),
        ("synthetic?fps", "fps=.. is not a number"),
        ("synthetic?=x", "key=value"),
    ],
)
def test_bad_synthetic_specs(spec: str, message: str) -> None:
    with pytest.raises(CameraError, match=message):
        open_camera(spec)


# ---- factory --------------------------------------------------------------------------------


def test_parse_spec() -> None:
    assert parse_spec("device:0?width=640") == ("device", "0", {"width": "640"})
    assert parse_spec("picamera2") == ("picamera2", "", {})
    assert parse_spec("file:a b/game.mp4") == ("file", "a b/game.mp4", {})
    assert parse_spec("recordings/game.mp4") == ("file", "recordings/game.mp4", {})
    assert parse_spec("game.mkv") == ("file", "game.mkv", {})
    with pytest.raises(CameraError, match="unknown camera 'webcam'"):
        parse_spec("webcam")
    with pytest.raises(CameraError, match="empty camera spec"):
        parse_spec("  ")


def test_environment_and_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "synthetic:table?frames=1&size=640x360")
    cam = open_camera()
    assert cam.spec == "synthetic:table" and cam.size == (640, 360)
    monkeypatch.delenv(ENV_VAR)
    assert open_camera().spec == "synthetic:bars"


def test_register_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BACKENDS, "net", BACKENDS["synthetic"])
    opened = open_camera("net:table?frames=1")
    assert opened.spec == "synthetic:table"
    register_backend("net2", lambda spec, arg, opts: SyntheticCamera(frames=int(arg)))
    try:
        assert len(list(open_camera("net2:4"))) == 4
    finally:
        BACKENDS.pop("net2")


def test_file_spec_needs_a_path() -> None:
    with pytest.raises(CameraError, match="give the video path"):
        open_camera("file:")
    with pytest.raises(CameraError, match="unknown option 'loop'"):
        open_camera("file:x.mp4?loop=1")


def test_on_gap_is_passed_to_the_file_backend(tmp_path: Path) -> None:
    path = tmp_path / "v.avi"
    w = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    for i in range(3):
        w.write(np.full((48, 64, 3), i * 50, np.uint8))
    w.release()
    gaps: list[Any] = []
    cam = open_camera(str(path), on_gap=gaps.append)
    assert isinstance(cam, FileCamera) and cam.on_gap is not None
    assert len(list(cam)) == 3 and gaps == []


# ---- OpenCV device --------------------------------------------------------------------------


class FakeCapture:
    """Stands in for cv2.VideoCapture on a device: records set() calls, fails on demand."""

    def __init__(self, frames: int = 3, opened: bool = True, fail_after: int | None = None):
        self.frames, self.opened, self.fail_after = frames, opened, fail_after
        self.calls: list[tuple[int, float]] = []
        self.reads = 0
        self.released = False
        self.props = {
            cv2.CAP_PROP_FPS: 25.0,
            cv2.CAP_PROP_FRAME_WIDTH: 64.0,
            cv2.CAP_PROP_FRAME_HEIGHT: 48.0,
        }

    def isOpened(self) -> bool:  # noqa: N802 - OpenCV's name
        return self.opened

    def set(self, prop: int, value: float) -> bool:
        self.calls.append((prop, value))
        self.props[prop] = value
        return True

    def get(self, prop: int) -> float:
        return self.props.get(prop, 0.0)

    def read(self) -> tuple[bool, Any]:
        self.reads += 1
        if self.fail_after is not None and self.reads > self.fail_after:
            return False, None
        return True, np.full((48, 64), self.reads, np.uint8)

    def release(self) -> None:
        self.released = True


def test_device_camera_with_a_capture() -> None:
    cap = FakeCapture()
    cam = DeviceCamera(0, width=640, height=480, fps=15, capture=cap)
    assert (cv2.CAP_PROP_FRAME_WIDTH, 640) in cap.calls
    assert (cv2.CAP_PROP_FPS, 15) in cap.calls
    assert cam.fps == 15 and cam.size == (640, 480)
    f = cam.read()
    assert f is not None and f.image.shape == (48, 64, 3) and f.t >= 0
    assert cam.size == (64, 48)  # what the device actually delivers
    cam.close()
    assert cap.released


def test_device_camera_that_stops() -> None:
    cam = DeviceCamera(0, capture=FakeCapture(fail_after=2), retries=3)
    assert cam.read() is not None and cam.read() is not None
    with pytest.raises(CameraError, match=r"stopped delivering frames \(4 reads failed\)"):
        cam.read()


def test_device_camera_not_there() -> None:
    with pytest.raises(CameraError, match="cannot open camera device:0.*video"):
        DeviceCamera(0, capture=FakeCapture(opened=False))
    with pytest.raises(CameraError, match="no camera device /dev/video97"):
        open_camera("device:/dev/video97")
    with pytest.raises(CameraError, match="no camera device /dev/video98"):
        open_camera("device:98")


def test_device_spec_options(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []

    def fake(device: Any) -> FakeCapture:
        made.append(device)
        return FakeCapture()

    monkeypatch.setattr(camera_module.cv2, "VideoCapture", fake)
    # a device node that exists everywhere; the capture itself is the stand-in
    cam = open_camera("device:/dev/null?size=800x600&fps=20")
    assert made == ["/dev/null"] and cam.size == (800, 600) and cam.fps == 20
    with pytest.raises(CameraError, match="unknown option 'zoom'"):
        open_camera("device:/dev/null?zoom=2")


# ---- picamera2 ------------------------------------------------------------------------------


class FakeRequest:
    def __init__(self, cam: FakePicamera2, n: int) -> None:
        self.cam, self.n = cam, n

    def make_array(self, stream: str) -> np.ndarray:
        assert stream == "main"
        w, h = self.cam.config["main"]["size"]
        return np.full((h, w, 3), self.n % 256, np.uint8)

    def get_metadata(self) -> dict[str, Any]:
        return {"SensorTimestamp": 5_000_000_000 + self.n * 33_000_000}

    def release(self) -> None:
        self.cam.released += 1


class FakePicamera2:
    """The parts of picamera2.Picamera2 the backend uses, recording how it was driven."""

    instances: list[FakePicamera2] = []

    def __init__(self, camera_num: int = 0) -> None:
        if camera_num > 0:
            raise IndexError("list index out of range")
        self.config: dict[str, Any] = {}
        self.started = self.stopped = self.closed = False
        self.released = 0
        self.n = 0
        FakePicamera2.instances.append(self)

    def create_video_configuration(self, main: dict[str, Any], controls: dict[str, Any]) -> Any:
        return {"main": main, "controls": controls}

    def configure(self, config: dict[str, Any]) -> None:
        self.config = config

    def start(self) -> None:
        self.started = True

    def capture_request(self) -> FakeRequest:
        assert self.started
        req = FakeRequest(self, self.n)
        self.n += 1
        return req

    def stop(self) -> None:
        self.stopped = True

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake_picamera2(monkeypatch: pytest.MonkeyPatch) -> type[FakePicamera2]:
    module = types.ModuleType("picamera2")
    module.Picamera2 = FakePicamera2  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "picamera2", module)
    FakePicamera2.instances = []
    return FakePicamera2


def test_picamera2_backend(fake_picamera2: type[FakePicamera2]) -> None:
    cam = open_camera("picamera2?size=640x480&fps=30")
    assert isinstance(cam, Picamera2Camera)
    pi = fake_picamera2.instances[0]
    assert pi.config["main"] == {"size": (640, 480), "format": "RGB888"}
    assert pi.config["controls"] == {"FrameRate": 30.0}
    frames = [cam.read() for _ in range(3)]
    assert [f.t for f in frames if f] == pytest.approx([0.0, 0.033, 0.066])
    assert all(f is not None and f.image.shape == (480, 640, 3) for f in frames)
    assert pi.released == 3  # every request goes back to libcamera
    cam.close()
    assert pi.stopped and pi.closed


def test_picamera2_missing_camera(fake_picamera2: type[FakePicamera2]) -> None:
    with pytest.raises(CameraError, match="no Raspberry Pi camera 1.*ribbon cable"):
        open_camera("picamera2:1")
    with pytest.raises(CameraError, match="takes a camera number"):
        open_camera("picamera2:front")


def test_picamera2_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "picamera2", None)  # makes the import fail
    with pytest.raises(CameraError, match=r"apt install python3-picamera2.*system-site-packages"):
        open_camera("picamera2")


def test_picamera2_is_not_imported_until_opened() -> None:
    import subprocess

    code = (
        "import sys, hardware.camera as c; c.open_camera('synthetic?frames=1').read(); "
        "print('picamera2' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
