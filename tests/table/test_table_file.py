"""The calibration JSON file: round trip and every way it can be wrong."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from table_helpers import BASE, frame, project

from vision.table import (
    CALIBRATION_FORMAT,
    CALIBRATION_VERSION,
    Calibration,
    CalibrationFileError,
    TableGeometry,
    calibrate,
)


@pytest.fixture(scope="module")
def calibrated() -> tuple[Calibration, Any]:
    image, true_h = frame(BASE, seed=1)
    return calibrate(image), true_h


def _write(tmp_path: Path, data: Any, name: str = "cal.json") -> Path:
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


def test_round_trip(tmp_path: Path, calibrated: tuple[Calibration, Any]) -> None:
    cal, true_h = calibrated
    path = tmp_path / "calibration.json"
    cal.save(path)
    data = json.loads(path.read_text())
    assert data["format"] == CALIBRATION_FORMAT and data["version"] == CALIBRATION_VERSION
    assert data["dictionary"] == "DICT_4X4_50"
    assert set(data["markers"]) == {"0", "1", "2", "3"}
    assert data["markers"]["2"]["corner"] == "SE"
    assert set(data["zones"]) == {"N", "E", "S", "W", "centre"}
    loaded = Calibration.load(path)
    assert loaded.geometry == cal.geometry
    assert loaded.image_size == cal.image_size
    pts = np.random.default_rng(0).uniform(0, 900, (30, 2))
    px = project(true_h, pts)
    assert np.abs(loaded.to_table(px) - cal.to_table(px)).max() < 1e-6
    assert {k: v.tolist() for k, v in loaded.zones.items()} == {
        k: v.tolist() for k, v in cal.zones.items()
    }
    assert set(loaded.marker_corners_px) == {0, 1, 2, 3}
    assert not list(tmp_path.glob(".*.tmp"))  # atomic write leaves nothing behind


def test_edited_zones_survive_a_recalibration(tmp_path: Path, calibrated: Any) -> None:
    cal, _ = calibrated
    path = tmp_path / "cal.json"
    cal.save(path)
    data = json.loads(path.read_text())
    data["zones"]["N"] = [[300, 20], [600, 20], [600, 250], [300, 250]]
    path.write_text(json.dumps(data))
    edited = Calibration.load(path)
    assert cal.zone_at_mm((150, 60)) == "N"
    assert edited.zone_at_mm((150, 60)) is None  # now outside the narrowed N zone
    again = calibrate(frame(BASE, seed=2)[0], previous=edited)
    assert again.zones["N"].tolist() == data["zones"]["N"]
    assert again.zone_at_mm((450, 100)) == "N"
    assert again.zone_at_mm((150, 60)) is None


def _good(calibrated: Any) -> dict[str, Any]:
    return calibrated[0].to_json()


def _mutations() -> list[tuple[str, Any, str]]:
    def drop(key: str) -> Any:
        return lambda d: d.pop(key)

    def setter(path: list[Any], value: Any) -> Any:
        def apply(d: dict[str, Any]) -> None:
            for k in path[:-1]:
                d = d[k]
            d[path[-1]] = value

        return apply

    return [
        ("not-ours", setter(["format"], "something-else"), "key 'format'"),
        ("version", setter(["version"], 99), "key 'version'.*reads version 1.*99"),
        ("no-homography", drop("homography"), "key 'homography': missing"),
        ("no-markers", drop("markers"), "key 'markers': missing"),
        ("no-size", drop("image_size"), "key 'image_size': missing"),
        ("hom-shape", setter(["homography"], [[1, 0], [0, 1]]), "key 'homography': expected a 3x3"),
        ("hom-text", setter(["homography", 0, 0], "one"), "key 'homography': expected a number"),
        ("hom-singular", setter(["homography"], [[0, 0, 0], [0, 0, 0], [0, 0, 1]]), "singular"),
        ("hom-edited", setter(["homography", 0, 2], 0.0), "key 'homography'.*off by"),
        ("size", setter(["image_size"], [1280]), "key 'image_size'"),
        ("size-neg", setter(["image_size"], [-5, 720]), "key 'image_size'"),
        ("table-field", setter(["table", "legs"], 4), "key 'table.legs': unknown field"),
        ("table-neg", setter(["table", "width_mm"], -900), "key 'table'.*positive"),
        ("table-text", setter(["table", "height_mm"], "900"), "key 'table.height_mm'"),
        ("marker-missing", lambda d: d["markers"].pop("1"), "key 'markers.1': missing"),
        ("marker-px", setter(["markers", "2", "image_px"], [1]), r"key 'markers.2.image_px'"),
        ("marker-mm", setter(["markers", "0", "table_mm"], [0, 0]), "key 'markers.0.table_mm'"),
        ("corners", setter(["markers", "3", "corners_px"], [[1, 2]]), "markers.3.corners_px"),
        ("zone-short", setter(["zones", "E"], [[0, 0], [1, 1]]), "key 'zones.E'.*polygon"),
        ("zone-missing", lambda d: d["zones"].pop("centre"), "key 'zones.centre': missing"),
        ("dictionary", setter(["dictionary"], "DICT_6X6_250"), "key 'dictionary'"),
        ("nan", setter(["markers", "0", "image_px"], [float("nan"), 1.0]), "finite"),
    ]


@pytest.mark.parametrize(("name", "mutate", "message"), _mutations(), ids=lambda v: str(v)[:20])
def test_bad_files_name_the_key(
    tmp_path: Path, calibrated: Any, name: str, mutate: Any, message: str
) -> None:
    data = copy.deepcopy(_good(calibrated))
    mutate(data)
    path = _write(tmp_path, json.dumps(data))
    with pytest.raises(CalibrationFileError, match=message) as exc:
        Calibration.load(path)
    assert str(path) in str(exc.value)
    assert "guandan table calibrate" in str(exc.value)
    assert isinstance(exc.value, ValueError)


def test_not_a_calibration_at_all(tmp_path: Path) -> None:
    with pytest.raises(CalibrationFileError, match="not found"):
        Calibration.load(tmp_path / "nope.json")
    with pytest.raises(CalibrationFileError, match="is a directory"):
        Calibration.load(tmp_path)
    with pytest.raises(CalibrationFileError, match=r"not valid JSON \(line 1, column"):
        Calibration.load(_write(tmp_path, "{'format': 1"))
    with pytest.raises(CalibrationFileError, match="expected a JSON object, got list"):
        Calibration.load(_write(tmp_path, "[1, 2]"))
    binary = tmp_path / "frame.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00")
    with pytest.raises(CalibrationFileError, match="binary, not JSON"):
        Calibration.load(binary)


def test_a_file_made_for_another_geometry_is_consistent(tmp_path: Path) -> None:
    g = TableGeometry(width_mm=1000, height_mm=800, marker_offset_mm=45)
    corners = np.array([(300.0, 90.0), (1000.0, 90.0), (1000.0, 650.0), (300.0, 650.0)])
    cal = calibrate(frame(corners, g, seed=2)[0], g)
    path = tmp_path / "c.json"
    cal.save(path)
    assert Calibration.load(path).geometry == g
