"""Footage as the review desk reads it. The disk budget: the kiosk's FootageRecorder holds its
folder under the budget as it records, dropping the oldest segments but never one the review
desk keeps (an open dispute's), and the desk names a dropped segment in its gaps. A replayed
video file is its own footage."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from kiosk.table.footage import ENV_BUDGET, FootageIndex, FootageRecorder, Segment


def _record(folder: Path, budget_mb: float, keep_t: float) -> FootageRecorder:
    def keep(seg: Segment) -> bool:
        return seg.covers(keep_t)

    rec = FootageRecorder(folder, segment_s=1.0, reserve_mb=0.0, budget_mb=budget_mb, keep=keep)
    rng = np.random.default_rng(7)
    for i in range(40):  # 8 s at 5 fps: eight 1-s segments of noise (MJPG cannot shrink it)
        img = rng.integers(0, 256, (120, 160, 3), dtype=np.uint8)
        assert rec.write(i / 5.0, img, 5.0)
    rec.close()
    return rec


def test_budget_drops_oldest_but_never_a_kept_segment(tmp_path: Path) -> None:
    folder = tmp_path / "footage"
    probe = _record(tmp_path / "probe", 1000.0, 0.0)  # no budget pressure: the sizes
    assert len(probe.segments) == 8 and not probe.dropped
    one = FootageIndex(tmp_path / "probe").segments()[0].bytes
    budget = 3.5 * one / 2**20
    rec = _record(folder, budget, keep_t=1.5)  # the second segment holds an open dispute
    index = FootageIndex(folder)
    segs = index.segments()
    present = [s for s in segs if s.present]
    assert any(s.covers(1.5) for s in present), "the kept segment was dropped"
    assert not any(s.covers(0.5) for s in present), "the oldest segment was kept"
    assert segs[-1].present and segs[-2].present  # the newest stay
    assert len(rec.dropped) == len(segs) - len(present) >= 4
    assert index.usage_bytes() <= budget * 2**20 + one  # within budget + the kept segment
    gap = index.locate(0.5)["gap"]
    assert gap["kind"] == "dropped" and "disk budget" in gap["en"] and gap["zh"]
    assert rec.status()["dropped"] == len(rec.dropped)


def test_budget_setting_errors_name_what_to_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_BUDGET, "lots")
    with pytest.raises(ValueError, match=ENV_BUDGET):
        FootageRecorder(tmp_path / "f")
    monkeypatch.setenv(ENV_BUDGET, "500")
    assert FootageRecorder(tmp_path / "f").budget_mb == 500.0
    monkeypatch.delenv(ENV_BUDGET)
    with pytest.raises(ValueError, match="positive"):
        FootageRecorder(tmp_path / "f", budget_mb=0)


def test_a_replayed_video_is_its_own_footage(tmp_path: Path) -> None:
    """A kiosk replaying a file (``--camera file:VIDEO``, ``guandan demo``): the file is the
    footage, session time = video time; clips are cached outside the video's folder."""
    from .helpers import DEMO, demo_frame

    index = FootageIndex(DEMO.parent, video=DEMO, cache=tmp_path / "cache")
    (seg,) = index.segments()
    assert seg.file == "game.mp4" and seg.frames == 1512 and seg.rate == pytest.approx(5.0)
    loc = index.locate(6.6)
    assert loc["segment"] == "game.mp4" and loc["frame"] == 33
    path, info = index.web_clip(4.0, 8.0)
    assert path.parent == tmp_path / "cache" and info["frames"] == 21
    cap = cv2.VideoCapture(str(path))
    frames = [cap.read()[1] for _ in range(21)]
    cap.release()
    got = frames[13].astype(float)  # clip time 2.6 s = video time 6.6 s
    assert np.abs(got - demo_frame(6.6)).mean() < np.abs(got - demo_frame(8.0)).mean()
    assert index.web_clip(4.0, 8.0)[0] == path  # cached
    # the desk of a kiosk replaying that file finds it as its footage
    from types import SimpleNamespace

    from kiosk.review.routes import LiveDesk

    source = SimpleNamespace(kind="video", spec=f"file:{DEMO}")
    store = SimpleNamespace(path=tmp_path / "kiosk.db")
    desk = LiveDesk(
        SimpleNamespace(info={}, worker=SimpleNamespace(source=source, table="t", store=store))
    )
    found = desk.footage()
    assert found is not None and found.video == DEMO and found.cache == tmp_path / "kiosk-review"


def test_the_desk_reads_the_segment_being_recorded(tmp_path: Path) -> None:
    """A floor referee reviews a play of a minute ago: it lies in the segment the live camera is
    still writing; the desk asks the recorder to end it (in the camera's thread) and reads it."""
    import threading
    import time
    from types import SimpleNamespace

    from kiosk.review.routes import LiveDesk

    rec = FootageRecorder(tmp_path / "footage", segment_s=600.0, reserve_mb=0.0)
    stop = threading.Event()

    def camera() -> None:
        i = 0
        while not stop.is_set():
            rec.write(i / 10.0, np.full((48, 64, 3), (i * 3) % 250, np.uint8), 10.0)
            i += 1
            time.sleep(0.01)

    th = threading.Thread(target=camera, daemon=True)
    th.start()
    try:
        deadline = time.monotonic() + 20
        while rec.frames < 40 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert rec.frames >= 40 and not rec.segments  # one long segment, still being written
        source = SimpleNamespace(footage=rec, kind="camera")
        worker = SimpleNamespace(
            source=source, table="t1", store=SimpleNamespace(path=tmp_path / "k.db")
        )
        desk = LiveDesk(SimpleNamespace(info={}, worker=worker))
        desk.settle(2.0)
        assert len(rec.segments) == 1 and rec.segments[0]["end_t"] >= 2.0
        index = desk.footage()
        assert index is not None and index.folder == tmp_path / "footage"
        loc = index.locate(2.0)
        assert loc["segment"] == rec.segments[0]["file"] and loc["frame"] == 20
        got = index.frame_at(2.0)
        assert got is not None and abs(float(got[0].mean()) - 60.0) < 4
    finally:
        stop.set()
        th.join(5)
        rec.close()
