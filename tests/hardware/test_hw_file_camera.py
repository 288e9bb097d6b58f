"""The video-file camera on real files written with cv2.VideoWriter, whole, damaged and cut."""

from __future__ import annotations

import re
from pathlib import Path

import cv2
import numpy as np
import pytest

from hardware.camera import Camera, CameraError, FileCamera, Gap, SyntheticCamera, open_camera

FPS = 10.0
SIZE = (320, 240)
N = 60


def _write(path: Path, fourcc: str = "MJPG", n: int = N) -> Path:
    cam = SyntheticCamera(frames=n, fps=FPS, size=SIZE, seed=1)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*fourcc), FPS, SIZE)
    assert writer.isOpened()
    for f in cam:
        writer.write(f.image)
    writer.release()
    return path


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("videos")
    whole = _write(d / "whole.avi")
    data = whole.read_bytes()
    truncated = d / "truncated.avi"
    truncated.write_bytes(data[: len(data) * 6 // 10])
    # blank out the JPEG payloads of frames 20..25, keeping the container intact
    damaged_bytes = bytearray(data)
    starts = [m.start() for m in re.finditer(b"\xff\xd8\xff", data)]
    assert len(starts) == N
    for k in range(20, 26):
        a, b = starts[k], starts[k + 1] - 16
        damaged_bytes[a:b] = bytes(b - a)
    damaged = d / "damaged.avi"
    damaged.write_bytes(bytes(damaged_bytes))
    mp4 = _write(d / "whole.mp4", "mp4v")
    cut_mp4 = d / "cut.mp4"
    cut_mp4.write_bytes(mp4.read_bytes()[: mp4.stat().st_size // 2])
    garbage = d / "notes.avi"
    garbage.write_bytes(b"this is not a video\n" * 100)
    empty = d / "empty.mp4"
    empty.write_bytes(b"")
    return {
        "whole": whole,
        "truncated": truncated,
        "damaged": damaged,
        "mp4": mp4,
        "cut_mp4": cut_mp4,
        "garbage": garbage,
        "empty": empty,
    }


def _indices(cam: FileCamera) -> list[tuple[int, float]]:
    return [(SyntheticCamera.decode_index(f.image), f.t) for f in cam]


@pytest.mark.parametrize("name", ["whole", "mp4"])
def test_reads_every_frame_in_order_with_video_time(videos: dict[str, Path], name: str) -> None:
    with FileCamera(videos[name]) as cam:
        assert isinstance(cam, Camera)
        assert cam.fps == pytest.approx(FPS)
        assert cam.size == SIZE
        assert cam.frame_count == N
        got = _indices(cam)
        assert cam.read() is None  # stays at the end
        assert cam.gaps == []
        assert cam.frames_read == N
    assert [i for i, _ in got] == list(range(N))
    assert [t for _, t in got] == pytest.approx([i / FPS for i in range(N)])


def test_truncated_file_reports_the_missing_end(videos: dict[str, Path]) -> None:
    seen: list[Gap] = []
    cam = FileCamera(videos["truncated"], on_gap=seen.append)
    got = _indices(cam)
    cam.close()
    assert 0 < len(got) < N
    assert [i for i, _ in got] == list(range(len(got)))
    assert seen == cam.gaps and len(seen) == 1
    gap = seen[0]
    assert (gap.first_frame, gap.last_frame) == (len(got), N - 1)
    assert gap.start_t == pytest.approx(len(got) / FPS)
    assert gap.end_t == pytest.approx(N / FPS)
    text = str(gap)
    assert "truncated.avi" in text and f"frames {len(got)}-{N - 1}" in text
    assert "ends early" in text


def test_damaged_stretch_is_skipped_and_reported(videos: dict[str, Path]) -> None:
    cam = FileCamera(videos["damaged"])
    got = _indices(cam)
    assert [i for i, _ in got] == [*range(20), *range(26, N)]
    # timestamps stay right after the gap
    assert dict(got)[26] == pytest.approx(2.6)
    assert len(cam.gaps) == 1
    gap = cam.gaps[0]
    assert (gap.first_frame, gap.last_frame, gap.frames) == (20, 25, 6)
    assert gap.start_t == pytest.approx(2.0) and gap.end_t == pytest.approx(2.6)
    assert "frames 20-25 (2.00s-2.60s) could not be read" in str(gap)
    assert gap.to_json()["first_frame"] == 20


def test_cut_mp4_is_refused_with_the_reason(videos: dict[str, Path]) -> None:
    with pytest.raises(CameraError, match=r"cannot open video .*cut.mp4.*no 'moov' atom.*cut off"):
        FileCamera(videos["cut_mp4"])


@pytest.mark.parametrize(
    ("name", "message"),
    [("garbage", "not a video OpenCV/FFmpeg can decode"), ("empty", "the file is empty")],
)
def test_not_a_video(videos: dict[str, Path], name: str, message: str) -> None:
    with pytest.raises(CameraError, match=message):
        FileCamera(videos[name])


def test_missing_and_directory(tmp_path: Path) -> None:
    with pytest.raises(CameraError, match="not found"):
        FileCamera(tmp_path / "nope.mp4")
    with pytest.raises(CameraError, match="is a directory"):
        FileCamera(tmp_path)
    assert isinstance(CameraError("x"), ValueError)


def test_closed_camera_refuses_reads(videos: dict[str, Path]) -> None:
    cam = open_camera(f"file:{videos['whole']}")
    assert cam.read() is not None
    cam.close()
    cam.close()  # twice is fine
    with pytest.raises(CameraError, match="closed"):
        cam.read()


def test_realtime_paces_frames_by_video_time(
    videos: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import hardware.camera as camera_module

    clock = [100.0]
    sleeps: list[float] = []

    def fake_sleep(s: float) -> None:
        sleeps.append(s)
        clock[0] += s

    monkeypatch.setattr(camera_module.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(camera_module.time, "sleep", fake_sleep)
    cam = open_camera(f"file:{videos['whole']}?realtime=1")
    for _ in range(5):
        assert cam.read() is not None
    assert sum(sleeps) == pytest.approx(0.4)
    assert len(sleeps) == 4


def test_frames_are_bgr_uint8(videos: dict[str, Path]) -> None:
    f = FileCamera(videos["whole"]).read()
    assert f is not None
    t, image = f  # unpacks as (timestamp, frame)
    assert t == 0.0 and image.dtype == np.uint8 and image.shape == (SIZE[1], SIZE[0], 3)
