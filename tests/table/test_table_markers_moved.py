"""Covered markers, frames without markers, and camera-moved detection."""

from __future__ import annotations

import numpy as np
import pytest
from table_helpers import BASE, cover, frame, project

from vision.table import (
    CameraWatch,
    MarkersNotFound,
    TableError,
    TableGeometry,
    calibrate,
    check_camera,
    detect_markers,
)

MARKERS_MM = TableGeometry().marker_positions()


def _err(cal, true_h, n: int = 100, seed: int = 0) -> float:  # type: ignore[no-untyped-def]
    pts = np.random.default_rng(seed).uniform(0, 900, (n, 2))
    return float(np.linalg.norm(cal.to_table(project(true_h, pts)) - pts, axis=1).max())


def _covered(corners: np.ndarray, hidden: list[int], seed: int = 0):  # type: ignore[no-untyped-def]
    image, true_h = frame(corners, seed=seed)
    for mid in hidden:
        image = cover(image, project(true_h, [MARKERS_MM[mid]])[0])
    return image, true_h


def test_frame_without_markers_names_every_missing_corner() -> None:
    blank = np.full((720, 1280, 3), (60, 110, 40), np.uint8)
    with pytest.raises(MarkersNotFound) as exc:
        calibrate(blank)
    msg = str(exc.value)
    assert "found no corner markers" in msg
    for label in ("marker 0 (NW", "marker 1 (NE", "marker 2 (SE", "marker 3 (SW"):
        assert label in msg
    assert "must be in view and uncovered" in msg
    assert exc.value.missing == (0, 1, 2, 3) and exc.value.visible == ()
    assert isinstance(exc.value, ValueError)


def test_one_covered_marker_without_previous_is_refused_clearly() -> None:
    image, _ = _covered(BASE, [2])
    assert detect_markers(image).visible == (0, 1, 3)
    with pytest.raises(MarkersNotFound, match=r"only 3 of 4.*marker 2 \(SE.*--previous") as exc:
        calibrate(image)
    assert exc.value.missing == (2,)


@pytest.mark.parametrize("hidden", [0, 1, 2, 3])
def test_one_covered_marker_is_estimated_from_the_previous_calibration(hidden: int) -> None:
    previous = calibrate(frame(BASE, seed=1)[0])
    # the camera was nudged a little since (a few px), then a hand covers one marker
    nudged = BASE + np.random.default_rng(hidden).uniform(-3, 3, BASE.shape)
    image, true_h = _covered(nudged, [hidden], seed=2)
    cal = calibrate(image, previous=previous)
    assert cal.estimated == (hidden,)
    assert _err(cal, true_h) < 4.0
    # without the estimate (the previous calibration as is) the error would be larger
    assert _err(previous, true_h) > _err(cal, true_h)


def test_estimate_refused_when_the_camera_moved_far() -> None:
    previous = calibrate(frame(BASE, seed=1)[0])
    moved = BASE + np.array([90.0, 40.0])
    image, _ = _covered(moved, [1], seed=3)
    with pytest.raises(MarkersNotFound, match=r"marker 1 \(NE.*moved up to \d+ mm.*uncover it"):
        calibrate(image, previous=previous)


def test_estimate_refused_when_the_geometry_changed() -> None:
    previous = calibrate(frame(BASE, seed=1)[0])
    image, _ = _covered(BASE, [3])
    with pytest.raises(MarkersNotFound, match="another table geometry"):
        calibrate(image, TableGeometry(width_mm=1000, height_mm=1000), previous=previous)


def test_two_covered_markers_are_refused_even_with_a_previous_calibration() -> None:
    previous = calibrate(frame(BASE, seed=1)[0])
    image, _ = _covered(BASE, [0, 2])
    with pytest.raises(MarkersNotFound, match=r"missing marker 0 \(NW.*marker 2 \(SE") as exc:
        calibrate(image, previous=previous)
    assert exc.value.visible == (1, 3)


def test_check_camera_steady_moved_and_unknown() -> None:
    cal = calibrate(frame(BASE, seed=1)[0])
    same = check_camera(frame(BASE, seed=5)[0], cal)
    assert same.status == "ok" and same.ok and same.visible == (0, 1, 2, 3)
    assert max(same.shift_mm.values()) < 2
    jitter = check_camera(frame(BASE + 1.5, seed=6)[0], cal)
    assert jitter.status == "ok"
    moved_view = BASE + np.array([25.0, -15.0])
    moved = check_camera(frame(moved_view, seed=7)[0], cal)
    assert moved.status == "moved" and not moved.ok
    assert min(moved.shift_mm.values()) > 10
    assert "recalibrate" in moved.message
    # still detected with two markers covered
    partly, _ = _covered(moved_view, [0, 3], seed=8)
    assert check_camera(partly, cal).status == "moved"
    blank = np.full((720, 1280, 3), 90, np.uint8)
    unknown = check_camera(blank, cal)
    assert unknown.status == "unknown" and "cannot tell" in unknown.message
    # the threshold is respected
    assert check_camera(frame(moved_view, seed=7)[0], cal, threshold_mm=200).status == "ok"


def test_check_camera_on_a_rescaled_stream() -> None:
    import cv2

    cal = calibrate(frame(BASE, seed=1)[0])
    small = cv2.resize(frame(BASE, seed=2)[0], (960, 540), interpolation=cv2.INTER_AREA)
    assert check_camera(small, cal).status == "ok"


def test_a_bumped_marker_is_told_apart_from_a_moved_camera() -> None:
    cal = calibrate(frame(BASE, seed=1)[0])
    g = TableGeometry()
    pos = dict(g.marker_positions())
    pos[2] = (pos[2][0] - 30, pos[2][1] - 20)
    image, _ = frame(BASE, seed=2, markers=list(pos.items()))
    check = check_camera(image, cal)
    assert check.status == "marker_moved"
    assert "[2]" in check.message and "put the marker back" in check.message


def test_camera_watch_debounces_and_recalibrates() -> None:
    cal = calibrate(frame(BASE, seed=1)[0])
    watch = CameraWatch(cal, threshold_mm=10, confirm=3)
    moved_view = BASE + np.array([30.0, 20.0])
    moved_frame, true_h = frame(moved_view, seed=3)
    steady = frame(BASE, seed=4)[0]
    # one odd frame does not trip it
    assert watch.update(moved_frame).status == "moved"
    assert not watch.moved
    assert watch.update(steady).status == "ok"
    # three in a row do; with auto_recalibrate the third one recalibrates
    watch.update(moved_frame)
    watch.update(moved_frame)
    result = watch.update(moved_frame)
    assert "recalibrated automatically" in result.message
    assert watch.recalibrations == 1 and not watch.moved
    assert watch.calibration is not cal
    assert _err(watch.calibration, true_h) < 3.0
    assert watch.update(moved_frame).status == "ok"


def test_camera_watch_without_auto_recalibration_reports_moved() -> None:
    cal = calibrate(frame(BASE, seed=1)[0])
    watch = CameraWatch(cal, confirm=2, auto_recalibrate=False)
    moved_frame, _ = frame(BASE + np.array([-30.0, 10.0]), seed=3)
    watch.update(moved_frame)
    watch.update(moved_frame)
    assert watch.moved and watch.recalibrations == 0 and watch.calibration is cal
    # markers hidden: the watch keeps its state instead of guessing
    watch.update(np.full((720, 1280, 3), 90, np.uint8))
    assert watch.moved
    with pytest.raises(TableError, match="confirm"):
        CameraWatch(cal, confirm=0)


def test_camera_watch_waits_for_enough_markers_to_recalibrate() -> None:
    cal = calibrate(frame(BASE, seed=1)[0])
    watch = CameraWatch(cal, confirm=1)
    far = BASE + np.array([60.0, 30.0])
    image, _ = _covered(far, [0, 1], seed=3)
    result = watch.update(image)
    assert result.status == "moved" and "cannot recalibrate yet" in result.message
    assert watch.moved and watch.recalibrations == 0
    result = watch.update(frame(far, seed=4)[0])
    assert watch.recalibrations == 1


def test_covered_marker_after_a_real_camera_move_uses_the_marker_corners() -> None:
    from dataclasses import replace

    previous = calibrate(frame(BASE, seed=1)[0])
    assert set(previous.marker_corners_px) == {0, 1, 2, 3}
    # tilt the camera: every corner of the view moves differently (a perspective change)
    tilted = BASE + np.array([(25.0, 10.0), (5.0, -12.0), (-20.0, 18.0), (12.0, 4.0)])
    image, true_h = _covered(tilted, [1], seed=2)
    cal = calibrate(image, previous=previous)
    assert cal.estimated == (1,)
    assert _err(cal, true_h) < 3.0
    # a previous file without corners falls back to the affine estimate: still usable, coarser
    bare = replace(previous, marker_corners_px={})
    rough = calibrate(image, previous=bare)
    assert rough.estimated == (1,)
    assert _err(rough, true_h) > _err(cal, true_h)


def test_previous_calibration_at_another_resolution() -> None:
    import cv2

    previous = calibrate(frame(BASE, seed=1)[0])
    image, true_h = _covered(BASE, [0], seed=2)
    small = cv2.resize(image, (960, 540), interpolation=cv2.INTER_AREA)
    cal = calibrate(small, previous=previous)
    assert cal.image_size == (960, 540) and cal.estimated == (0,)
    pts = np.random.default_rng(0).uniform(0, 900, (100, 2))
    px = project(true_h, pts) * 0.75
    assert np.linalg.norm(cal.to_table(px) - pts, axis=1).max() < 4.0


def test_a_marker_turned_on_the_table_falls_back_to_the_affine_estimate() -> None:
    previous = calibrate(frame(BASE, seed=1)[0])
    # marker 1 was turned a quarter on the table and marker 3 is covered: the corner fit is
    # inconsistent, the estimate still works (the camera did not move)
    image, true_h = frame(BASE, seed=2, marker_rotations=(0, 1, 0, 0))
    image = cover(image, project(true_h, [MARKERS_MM[3]])[0])
    cal = calibrate(image, previous=previous)
    assert cal.estimated == (3,)
    assert _err(cal, true_h) < 3.0
