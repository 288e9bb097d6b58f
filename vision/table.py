"""Table calibration: four ArUco corner markers, image -> table millimetres, seat zones.

Layout (seen from above, North at the top; play passes S -> E -> N -> W, counter-clockwise):

    marker 0 (NW) ─────────── marker 1 (NE)          table x: west -> east, 0 .. width_mm
        │        ╲     N     ╱        │              table y: north -> south, 0 .. height_mm
        │    W    ┌ centre ┐    E    │
        │        ╱     S     ╲        │              zones: N, E, S, W (trapezoids between the
    marker 3 (SW) ─────────── marker 2 (SE)          table edge and the centre square) and centre

* Dictionary ``DICT_4X4_50`` (OpenCV's ``cv2.aruco``); ids 0..3 are the corners NW, NE, SE, SW,
  i.e. clockwise from the north-west corner when seen from above. Other ids are ignored.
  ``guandan hardware markers`` prints the sheet (``hardware/markers.py`` uses the same constants;
  a test checks they agree).
* A marker's *centre* sits ``marker_offset_mm`` from both table edges at its corner. Only the
  centres are used, so a marker may be stuck down in any rotation.
* The calibration is a small versioned JSON file (``Calibration.save`` / ``Calibration.load``):
  ``format`` ("guandan-table-calibration"), ``version`` (1), ``created``, ``dictionary``,
  ``image_size`` [w, h], ``table`` (the TableGeometry fields in mm), ``markers`` ("0".."3":
  ``corner``, ``image_px``, ``table_mm``, ``estimated``, ``corners_px``), ``homography`` (3x3,
  image px -> table mm) and ``zones`` (name -> polygon of [x, y] mm; N, E, S, W and centre are
  required, edit them freely). Loading checks every key and that the homography reproduces the
  markers, and names the key that is wrong.
* Three visible markers are enough when a previous calibration is given: the hidden one is
  carried over from it (through the affine motion of the three visible ones). Otherwise the
  calibration is refused with a message naming the missing corner.
* ``check_camera`` / ``CameraWatch`` tell when the camera (or a marker) moved since calibration.

This module imports nothing of ours (DESIGN.md: vision may import engine card types only).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import cv2
import numpy as np
from numpy.typing import NDArray

__all__ = [
    "ARUCO_DICTIONARY",
    "CORNER_IDS",
    "CORNER_NAMES",
    "SEATS",
    "CENTRE",
    "ZONES",
    "CALIBRATION_FORMAT",
    "CALIBRATION_VERSION",
    "TableError",
    "MarkersNotFound",
    "CalibrationFileError",
    "TableGeometry",
    "MarkerSighting",
    "MarkerDetection",
    "Calibration",
    "CameraCheck",
    "CameraWatch",
    "detect_markers",
    "calibrate",
    "calibrate_frames",
    "check_camera",
    "render_table_view",
    "draw_calibration",
]

#: The ArUco dictionary of the corner markers (a name of a ``cv2.aruco.DICT_*`` constant).
ARUCO_DICTIONARY = "DICT_4X4_50"
#: Marker id -> table corner it marks (seen from above, North at the top).
CORNER_IDS: dict[int, str] = {0: "NW", 1: "NE", 2: "SE", 3: "SW"}
CORNER_NAMES: dict[str, str] = {
    "NW": "north-west",
    "NE": "north-east",
    "SE": "south-east",
    "SW": "south-west",
}
SEATS: tuple[str, ...] = ("N", "E", "S", "W")
CENTRE = "centre"
ZONES: tuple[str, ...] = (*SEATS, CENTRE)
CALIBRATION_FORMAT = "guandan-table-calibration"
CALIBRATION_VERSION = 1

#: A homography read from a file must reproduce its own marker positions this closely (mm).
_CONSISTENCY_MM = 2.0

FloatArray = NDArray[np.float64]
Point = tuple[float, float]


class TableError(ValueError):
    """Calibration or table-geometry problem a user can fix; the message says what to do."""


class MarkersNotFound(TableError):
    """Too few corner markers were found in a frame to calibrate."""

    def __init__(self, message: str, visible: Sequence[int] = (), missing: Sequence[int] = ()):
        super().__init__(message)
        self.visible = tuple(visible)
        self.missing = tuple(missing)


class CalibrationFileError(TableError):
    """A calibration file that is missing, not JSON, of another version, or has a bad key."""


def _corner_label(marker_id: int) -> str:
    corner = CORNER_IDS[marker_id]
    return f"marker {marker_id} ({corner}, {CORNER_NAMES[corner]} corner)"


# --------------------------------------------------------------------------------------------
# geometry


@dataclass(frozen=True)
class TableGeometry:
    """Physical layout of the table in millimetres (defaults: a square ~900 mm card table)."""

    width_mm: float = 900.0
    height_mm: float = 900.0
    #: Side of the printed black marker square.
    marker_mm: float = 60.0
    #: Distance from each of the two edges at a corner to that corner marker's centre.
    marker_offset_mm: float = 50.0
    #: Side of the square centre zone.
    centre_mm: float = 300.0
    #: Seat zones start this far in from the table edge (0 = at the edge).
    edge_mm: float = 0.0

    def __post_init__(self) -> None:
        for name in ("width_mm", "height_mm", "marker_mm", "marker_offset_mm", "centre_mm"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                raise TableError(f"table geometry: {name} must be a positive number, got {value!r}")
        if not math.isfinite(self.edge_mm) or self.edge_mm < 0:
            raise TableError(f"table geometry: edge_mm must be >= 0, got {self.edge_mm!r}")
        short = min(self.width_mm, self.height_mm)
        if self.marker_offset_mm < self.marker_mm / 2:
            raise TableError(
                f"table geometry: marker_offset_mm {self.marker_offset_mm:g} is less than half "
                f"the marker size {self.marker_mm:g}: the marker would hang over the edge"
            )
        if 2 * self.marker_offset_mm >= short:
            raise TableError(
                f"table geometry: marker_offset_mm {self.marker_offset_mm:g} is too large for a "
                f"{self.width_mm:g}x{self.height_mm:g} mm table"
            )
        if self.centre_mm >= short - 2 * self.edge_mm:
            raise TableError(
                f"table geometry: centre_mm {self.centre_mm:g} leaves no room for the seat zones "
                f"on a {self.width_mm:g}x{self.height_mm:g} mm table"
            )

    @classmethod
    def parse_size(cls, text: str, **kwargs: float) -> TableGeometry:
        """``"900x900"`` (mm, width x height) -> geometry; other fields from ``kwargs``."""
        parts = text.lower().replace("mm", "").replace("×", "x").split("x")
        try:
            width, height = (float(p) for p in parts)
        except ValueError:
            raise TableError(
                f"table size {text!r} is not WIDTHxHEIGHT in millimetres, e.g. 900x900"
            ) from None
        return cls(width_mm=width, height_mm=height, **kwargs)

    def marker_positions(self) -> dict[int, Point]:
        """Marker id -> its centre in table mm."""
        o, w, h = self.marker_offset_mm, self.width_mm, self.height_mm
        return {0: (o, o), 1: (w - o, o), 2: (w - o, h - o), 3: (o, h - o)}

    def default_zones(self) -> dict[str, list[Point]]:
        """Seat trapezoids between the (inset) table edge and the centre square, plus the centre."""
        e, w, h = self.edge_mm, self.width_mm, self.height_mm
        cx, cy, r = w / 2, h / 2, self.centre_mm / 2
        nw, ne, se, sw = (e, e), (w - e, e), (w - e, h - e), (e, h - e)
        cnw, cne, cse, csw = (cx - r, cy - r), (cx + r, cy - r), (cx + r, cy + r), (cx - r, cy + r)
        return {
            "N": [nw, ne, cne, cnw],
            "E": [ne, se, cse, cne],
            "S": [se, sw, csw, cse],
            "W": [sw, nw, cnw, csw],
            CENTRE: [cnw, cne, cse, csw],
        }

    def to_json(self) -> dict[str, float]:
        return {
            "width_mm": self.width_mm,
            "height_mm": self.height_mm,
            "marker_mm": self.marker_mm,
            "marker_offset_mm": self.marker_offset_mm,
            "centre_mm": self.centre_mm,
            "edge_mm": self.edge_mm,
        }


# --------------------------------------------------------------------------------------------
# marker detection


@dataclass(frozen=True, eq=False)
class MarkerSighting:
    """One detected marker: its four image corners (as OpenCV orders them) and centre."""

    marker_id: int
    corners: FloatArray  # (4, 2) pixels

    @property
    def centre(self) -> Point:
        """Intersection of the diagonals: the true projected centre under perspective."""
        p0, p1, p2, p3 = (self.corners[i] for i in range(4))
        return _line_intersection(p0, p2, p1, p3)

    @property
    def side_px(self) -> float:
        c = self.corners
        return float(np.mean([np.linalg.norm(c[i] - c[(i + 1) % 4]) for i in range(4)]))


@dataclass(frozen=True)
class MarkerDetection:
    """Corner markers found in one frame, plus what else was seen (for error messages)."""

    corners: dict[int, MarkerSighting]
    other_ids: tuple[int, ...] = ()
    duplicate_ids: tuple[int, ...] = ()

    @property
    def visible(self) -> tuple[int, ...]:
        return tuple(sorted(self.corners))

    @property
    def missing(self) -> tuple[int, ...]:
        return tuple(i for i in CORNER_IDS if i not in self.corners)


def _line_intersection(a: FloatArray, b: FloatArray, c: FloatArray, d: FloatArray) -> Point:
    """Intersection of line a-b with line c-d (falls back to the mean for parallel lines)."""
    r, s = b - a, d - c
    denom = r[0] * s[1] - r[1] * s[0]
    if abs(denom) < 1e-12:
        m = (a + b + c + d) / 4
        return (float(m[0]), float(m[1]))
    t = ((c[0] - a[0]) * s[1] - (c[1] - a[1]) * s[0]) / denom
    p = a + t * r
    return (float(p[0]), float(p[1]))


_DETECTOR: Any = None


def _detector() -> Any:
    global _DETECTOR
    if _DETECTOR is None:
        aruco = cv2.aruco
        dictionary = aruco.getPredefinedDictionary(getattr(aruco, ARUCO_DICTIONARY))
        params = aruco.DetectorParameters()
        params.cornerRefinementMethod = aruco.CORNER_REFINE_SUBPIX
        _DETECTOR = aruco.ArucoDetector(dictionary, params)
    return _DETECTOR


def _as_gray(image: NDArray[Any]) -> NDArray[np.uint8]:
    if not isinstance(image, np.ndarray) or image.size == 0:
        raise TableError("the frame is empty or not an image array")
    if image.ndim == 3 and image.shape[2] == 4:
        image = cv2.cvtColor(image, cv2.COLOR_BGRA2GRAY)
    elif image.ndim == 3 and image.shape[2] == 3:
        image = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    elif image.ndim == 3 and image.shape[2] == 1:
        image = image[:, :, 0]
    elif image.ndim != 2:
        raise TableError(f"the frame has shape {image.shape}; expected HxW or HxWx3 pixels")
    if image.dtype != np.uint8:
        scaled = image.astype(np.float64)
        lo, hi = float(scaled.min()), float(scaled.max())
        image = ((scaled - lo) * (255.0 / max(hi - lo, 1e-12))).astype(np.uint8)
    return np.ascontiguousarray(image)


def _detect_once(gray: NDArray[np.uint8]) -> MarkerDetection:
    corners, ids, _rejected = _detector().detectMarkers(gray)
    found: dict[int, MarkerSighting] = {}
    others: set[int] = set()
    dups: set[int] = set()
    if ids is not None:
        for quad, marker_id in zip(corners, ids.ravel().tolist(), strict=True):
            mid = int(marker_id)
            if mid not in CORNER_IDS:
                others.add(mid)
                continue
            if mid in found:
                dups.add(mid)
                continue
            found[mid] = MarkerSighting(mid, np.asarray(quad, np.float64).reshape(4, 2))
    for mid in dups:
        found.pop(mid, None)
    return MarkerDetection(found, tuple(sorted(others)), tuple(sorted(dups)))


def _sharpen(gray: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Unsharp mask: brings back small, soft markers (out of focus, motion blur)."""
    soft = cv2.GaussianBlur(gray, (0, 0), 2.0)
    return np.asarray(cv2.addWeighted(gray, 1.8, soft, -0.8, 0), np.uint8)


def detect_markers(image: NDArray[Any]) -> MarkerDetection:
    """Find the corner markers (ids 0..3 of ``DICT_4X4_50``) in a BGR or grey frame.

    When a corner marker is missing, the frame is searched once more after sharpening (small or
    soft markers); markers found the first time keep their first-pass corners."""
    gray = _as_gray(image)
    first = _detect_once(gray)
    if not first.missing:
        return first
    second = _detect_once(_sharpen(gray))
    found = dict(first.corners)
    dups = set(first.duplicate_ids)
    for mid, sighting in second.corners.items():
        if mid not in found and mid not in dups:
            found[mid] = sighting
    others = sorted(set(first.other_ids) | set(second.other_ids))
    return MarkerDetection(found, tuple(others), tuple(sorted(dups)))


# --------------------------------------------------------------------------------------------
# calibration


def _homography(src: Sequence[Point], dst: Sequence[Point]) -> FloatArray:
    h, _ = cv2.findHomography(np.asarray(src, np.float64), np.asarray(dst, np.float64), 0)
    if h is None or not np.all(np.isfinite(h)) or abs(np.linalg.det(h)) < 1e-15:
        raise TableError(
            "the marker positions give no usable homography (markers on a line?): "
            "check that all four table corners are in view"
        )
    return np.asarray(h / h[2, 2], np.float64)


def _apply(h: FloatArray, points: NDArray[Any]) -> FloatArray:
    pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
    if pts.shape[0] == 0:
        return np.zeros((0, 2), np.float64)
    return np.asarray(cv2.perspectiveTransform(pts, h).reshape(-1, 2), np.float64)


def _check_quad_order(marker_px: Mapping[int, Point]) -> None:
    """The four marker centres must form a convex quad, clockwise (y down) in id order."""
    pts = np.array([marker_px[i] for i in range(4)], np.float64)
    crosses = []
    for i in range(4):
        a, b, c = pts[i], pts[(i + 1) % 4], pts[(i + 2) % 4]
        crosses.append((b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0]))
    if all(x > 0 for x in crosses):
        return
    if all(x < 0 for x in crosses):
        raise TableError(
            "the corner markers appear mirrored: seen from above with North at the top they must "
            "go 0 NW, 1 NE, 2 SE, 3 SW clockwise; swap the markers so each corner holds its id "
            "(or the image is flipped)"
        )
    raise TableError(
        "the corner markers are out of order (their centres do not form a convex quadrilateral "
        "0 NW -> 1 NE -> 2 SE -> 3 SW): check each corner holds the right marker id"
    )


@dataclass(frozen=True, eq=False)
class Calibration:
    """A table calibration: homography image px -> table mm, marker positions, zones."""

    geometry: TableGeometry
    image_size: tuple[int, int]  # (width, height) px
    homography: FloatArray  # 3x3, image px -> table mm
    marker_px: dict[int, Point]
    zones: dict[str, FloatArray] = field(default_factory=dict)
    estimated: tuple[int, ...] = ()
    created: str = ""
    #: marker id -> its four image corners (4, 2) as detected; lets a later calibration estimate a
    #: covered marker through the full camera motion (absent in hand-made files)
    marker_corners_px: dict[int, FloatArray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.zones:
            zones = {k: np.asarray(v, np.float64) for k, v in self.geometry.default_zones().items()}
            object.__setattr__(self, "zones", zones)

    # ---- mapping ---------------------------------------------------------------------------

    @property
    def inverse(self) -> FloatArray:
        inv = np.linalg.inv(self.homography)
        return np.asarray(inv / inv[2, 2], np.float64)

    def to_table(self, points_px: NDArray[Any] | Sequence[Point]) -> FloatArray:
        """Image points (N, 2) px -> table points (N, 2) mm."""
        return _apply(self.homography, np.asarray(points_px, np.float64))

    def to_image(self, points_mm: NDArray[Any] | Sequence[Point]) -> FloatArray:
        """Table points (N, 2) mm -> image points (N, 2) px."""
        return _apply(self.inverse, np.asarray(points_mm, np.float64))

    def box_to_table(self, box: Sequence[float]) -> FloatArray:
        """An image box ``[x1, y1, x2, y2]`` -> its four corners in table mm (4, 2)."""
        x1, y1, x2, y2 = (float(v) for v in box)
        return self.to_table([(x1, y1), (x2, y1), (x2, y2), (x1, y2)])

    def box_centre_mm(self, box: Sequence[float]) -> Point:
        x1, y1, x2, y2 = (float(v) for v in box)
        p = self.to_table([((x1 + x2) / 2, (y1 + y2) / 2)])[0]
        return (float(p[0]), float(p[1]))

    def zone_at_mm(self, point_mm: Sequence[float]) -> str | None:
        """The zone (``N E S W centre``) containing a table point, or None (off every zone)."""
        x, y = float(point_mm[0]), float(point_mm[1])
        for name in (CENTRE, *SEATS, *(z for z in self.zones if z not in ZONES)):
            poly = self.zones.get(name)
            if poly is None:
                continue
            contour = poly.astype(np.float32).reshape(-1, 1, 2)
            if cv2.pointPolygonTest(contour, (x, y), False) >= 0:
                return name
        return None

    def zone_of_point(self, point_px: Sequence[float]) -> str | None:
        """Zone of an image point (px)."""
        p = self.to_table([(float(point_px[0]), float(point_px[1]))])[0]
        return self.zone_at_mm(p)

    def zone_of_box(self, box: Sequence[float]) -> str | None:
        """Zone of an image box ``[x1, y1, x2, y2]``, judged by its centre."""
        return self.zone_at_mm(self.box_centre_mm(box))

    def zones_of_boxes(self, boxes: NDArray[Any] | Sequence[Sequence[float]]) -> list[str | None]:
        """Zones of many image boxes (N, 4) at once (the tracker's per-frame call)."""
        arr = np.asarray(boxes, np.float64).reshape(-1, 4)
        centres = np.stack([(arr[:, 0] + arr[:, 2]) / 2, (arr[:, 1] + arr[:, 3]) / 2], axis=1)
        return [self.zone_at_mm(p) for p in self.to_table(centres)]

    def zone_polygon_px(self, zone: str) -> FloatArray:
        """A zone's outline in image pixels (for drawing)."""
        return self.to_image(self.zones[zone])

    def on_table(self, point_mm: Sequence[float]) -> bool:
        x, y = float(point_mm[0]), float(point_mm[1])
        return 0 <= x <= self.geometry.width_mm and 0 <= y <= self.geometry.height_mm

    # ---- frames of another size ------------------------------------------------------------

    def check_frame(self, image: NDArray[Any]) -> None:
        """Raise TableError when a frame's size differs from the calibration's."""
        h, w = image.shape[:2]
        if (w, h) != self.image_size:
            raise TableError(
                f"the frame is {w}x{h} px but the calibration was made at "
                f"{self.image_size[0]}x{self.image_size[1]}: recalibrate for this camera mode "
                "(guandan table calibrate) or use Calibration.for_image_size"
            )

    def for_image_size(self, width: int, height: int) -> Calibration:
        """The same calibration for the same view scaled to another resolution."""
        w0, h0 = self.image_size
        sx, sy = width / w0, height / h0
        if abs(sx - sy) > 0.01 * max(sx, sy):
            raise TableError(
                f"cannot rescale a {w0}x{h0} calibration to {width}x{height}: the aspect ratio "
                "differs (another camera mode crops the view); recalibrate"
            )
        scale = np.diag([1 / sx, 1 / sy, 1.0])
        return Calibration(
            geometry=self.geometry,
            image_size=(width, height),
            homography=self.homography @ scale,
            marker_px={k: (v[0] * sx, v[1] * sy) for k, v in self.marker_px.items()},
            zones=dict(self.zones),
            estimated=self.estimated,
            created=self.created,
            marker_corners_px={
                k: v * np.array([sx, sy]) for k, v in self.marker_corners_px.items()
            },
        )

    # ---- file ------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        mm = self.geometry.marker_positions()
        return {
            "format": CALIBRATION_FORMAT,
            "version": CALIBRATION_VERSION,
            "created": self.created,
            "dictionary": ARUCO_DICTIONARY,
            "image_size": list(self.image_size),
            "table": self.geometry.to_json(),
            "markers": {
                str(i): {
                    "corner": CORNER_IDS[i],
                    "image_px": [round(self.marker_px[i][0], 3), round(self.marker_px[i][1], 3)],
                    "table_mm": [mm[i][0], mm[i][1]],
                    "estimated": i in self.estimated,
                    **(
                        {
                            "corners_px": [
                                [round(float(x), 3), round(float(y), 3)]
                                for x, y in self.marker_corners_px[i]
                            ]
                        }
                        if i in self.marker_corners_px
                        else {}
                    ),
                }
                for i in sorted(self.marker_px)
            },
            "homography": [[float(v) for v in row] for row in self.homography],
            "zones": {
                k: [[round(float(x), 3), round(float(y), 3)] for x, y in v]
                for k, v in self.zones.items()
            },
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the JSON file atomically (a crash never leaves half a calibration)."""
        target = Path(path)
        tmp = target.with_name(f".{target.name}.tmp")
        text = json.dumps(self.to_json(), indent=2)
        # keep number lists ([x, y], matrix rows) on one line
        text = re.sub(
            r"\[\s+([^\[\]{}]*?)\s+\]",
            lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",")) + "]",
            text,
        )
        tmp.write_text(text + "\n", encoding="utf-8")
        os.replace(tmp, target)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Calibration:
        p = Path(path)
        hint = f"re-run `guandan table calibrate ... --out {p}`"
        if not p.exists():
            raise CalibrationFileError(f"calibration file {p} not found: {hint}")
        if p.is_dir():
            raise CalibrationFileError(f"calibration file {p} is a directory, not a JSON file")
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            raise CalibrationFileError(
                f"{p}: not a calibration file (binary, not JSON text); give the file written by "
                "`guandan table calibrate --out`"
            ) from None
        except json.JSONDecodeError as exc:
            raise CalibrationFileError(
                f"{p}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); {hint}"
            ) from None
        return cls.from_json(data, source=str(p))

    @classmethod
    def from_json(cls, data: Any, source: str = "calibration") -> Calibration:
        hint = "re-run `guandan table calibrate`"

        def bad(key: str, what: str) -> CalibrationFileError:
            return CalibrationFileError(f"{source}: key {key!r}: {what}; {hint}")

        if not isinstance(data, dict):
            raise CalibrationFileError(
                f"{source}: expected a JSON object, got {type(data).__name__}; {hint}"
            )
        if data.get("format") != CALIBRATION_FORMAT:
            raise bad(
                "format",
                f"expected {CALIBRATION_FORMAT!r}, got {data.get('format')!r} "
                "(this is not a guandan table calibration file)",
            )
        version = data.get("version")
        if version != CALIBRATION_VERSION:
            raise bad(
                "version",
                f"this guandan reads version {CALIBRATION_VERSION}, the file has {version!r}",
            )
        for key in ("image_size", "table", "markers", "homography"):
            if key not in data:
                raise bad(key, "missing")
        if data.get("dictionary", ARUCO_DICTIONARY) != ARUCO_DICTIONARY:
            raise bad("dictionary", f"expected {ARUCO_DICTIONARY!r}, got {data['dictionary']!r}")

        def number(value: Any, key: str) -> float:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise bad(key, f"expected a number, got {value!r}")
            if not math.isfinite(value):
                raise bad(key, f"expected a finite number, got {value!r}")
            return float(value)

        def pair(value: Any, key: str) -> Point:
            if not isinstance(value, list) or len(value) != 2:
                raise bad(key, f"expected [x, y], got {value!r}")
            return (number(value[0], key), number(value[1], key))

        size = data["image_size"]
        if (
            not isinstance(size, list)
            or len(size) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in size)
        ):
            raise bad("image_size", f"expected [width, height] in pixels, got {size!r}")

        table = data["table"]
        if not isinstance(table, dict):
            raise bad("table", f"expected an object, got {table!r}")
        fields = {}
        for name in TableGeometry.__dataclass_fields__:
            if name in table:
                fields[name] = number(table[name], f"table.{name}")
        unknown = sorted(set(table) - set(TableGeometry.__dataclass_fields__))
        if unknown:
            raise bad(f"table.{unknown[0]}", "unknown field")
        try:
            geometry = TableGeometry(**fields)
        except TableError as exc:
            raise bad("table", str(exc)) from None

        markers = data["markers"]
        if not isinstance(markers, dict):
            raise bad("markers", f"expected an object keyed by marker id, got {markers!r}")
        marker_px: dict[int, Point] = {}
        corners_px: dict[int, FloatArray] = {}
        estimated: list[int] = []
        expected_mm = geometry.marker_positions()
        for key in ("0", "1", "2", "3"):
            entry = markers.get(key)
            if not isinstance(entry, dict):
                raise bad(f"markers.{key}", "missing or not an object")
            marker_px[int(key)] = pair(entry.get("image_px"), f"markers.{key}.image_px")
            if "table_mm" in entry:
                got = pair(entry["table_mm"], f"markers.{key}.table_mm")
                want = expected_mm[int(key)]
                if math.dist(got, want) > 0.5:
                    raise bad(
                        f"markers.{key}.table_mm",
                        f"{list(got)} does not match the table geometry ({list(want)})",
                    )
            if entry.get("estimated", False):
                estimated.append(int(key))
            if "corners_px" in entry:
                raw = entry["corners_px"]
                ckey = f"markers.{key}.corners_px"
                if not isinstance(raw, list) or len(raw) != 4:
                    raise bad(ckey, f"expected four [x, y] corners, got {raw!r}")
                corners_px[int(key)] = np.array([pair(c, ckey) for c in raw], np.float64)

        hom = data["homography"]
        if (
            not isinstance(hom, list)
            or len(hom) != 3
            or not all(isinstance(row, list) and len(row) == 3 for row in hom)
        ):
            raise bad("homography", f"expected a 3x3 list of numbers, got {hom!r}")
        h = np.array([[number(v, "homography") for v in row] for row in hom], np.float64)
        if abs(np.linalg.det(h)) < 1e-15:
            raise bad("homography", "the matrix is singular")
        mapped = _apply(h, np.array([marker_px[i] for i in range(4)]))
        err = max(math.dist(tuple(mapped[i]), expected_mm[i]) for i in range(4))
        if not err <= _CONSISTENCY_MM:
            raise bad(
                "homography",
                f"does not map the markers' image_px onto their table positions "
                f"(off by {err:.1f} mm): the file was edited or damaged",
            )

        zones: dict[str, FloatArray] = {}
        raw_zones = data.get("zones")
        if raw_zones is not None:
            if not isinstance(raw_zones, dict):
                raise bad("zones", f"expected an object of polygons, got {raw_zones!r}")
            for name, poly in raw_zones.items():
                key = f"zones.{name}"
                if not isinstance(poly, list) or len(poly) < 3:
                    raise bad(key, "expected a polygon: a list of at least 3 [x, y] points in mm")
                zones[name] = np.array([pair(p, key) for p in poly], np.float64)
            for name in ZONES:
                if name not in zones:
                    raise bad(f"zones.{name}", "missing (zones need N, E, S, W and centre)")
        created = data.get("created", "")
        return cls(
            geometry=geometry,
            image_size=(int(size[0]), int(size[1])),
            homography=h,
            marker_px=marker_px,
            zones=zones,
            estimated=tuple(estimated),
            created=created if isinstance(created, str) else "",
            marker_corners_px=corners_px,
        )


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _shift_mm(previous: Calibration, marker_id: int, centre_px: Point) -> float:
    """How far (mm, through the previous homography) a marker's centre is from where it was."""
    got = previous.to_table([centre_px])[0]
    want = previous.geometry.marker_positions()[marker_id]
    return float(math.dist((float(got[0]), float(got[1])), want))


def _estimate_missing(
    visible_px: Mapping[int, Point],
    previous: Calibration,
    missing: int,
    visible_corners: Mapping[int, FloatArray] | None = None,
) -> Point:
    """Carry a hidden marker over from the previous calibration through the camera's motion.

    With the visible markers' corners (now and in a previous calibration at the same resolution)
    the motion is the full plane homography previous image -> this image, fitted to their 12
    corners: right for any camera move (a tilt, not just a shift). Otherwise (older files, another
    resolution, or a marker turned on the table so its corners no longer match) the affine motion
    of the three visible centres: exact for a still camera, close for small moves."""
    ids = sorted(visible_px)
    if visible_corners is not None and all(
        i in visible_corners and i in previous.marker_corners_px for i in ids
    ):
        src12 = np.concatenate([previous.marker_corners_px[i] for i in ids])
        dst12 = np.concatenate([np.asarray(visible_corners[i], np.float64) for i in ids])
        fitted, _ = cv2.findHomography(src12, dst12, 0)
        if fitted is not None and np.all(np.isfinite(fitted)):
            motion = np.asarray(fitted, np.float64)
            if float(np.abs(_apply(motion, src12) - dst12).max()) < 3.0:
                p = _apply(motion, np.array([previous.marker_px[missing]]))[0]
                return (float(p[0]), float(p[1]))
    src = np.array([previous.marker_px[i] for i in ids], np.float32)
    dst = np.array([visible_px[i] for i in ids], np.float32)
    affine = np.asarray(cv2.getAffineTransform(src, dst), np.float64)
    x, y = previous.marker_px[missing]
    guess = affine @ np.array([x, y, 1.0])
    return (float(guess[0]), float(guess[1]))


def _from_centres(
    centres: Mapping[int, Point],
    image_size: tuple[int, int],
    geometry: TableGeometry | None,
    previous: Calibration | None,
    zones: Mapping[str, Sequence[Point]] | None,
    max_estimate_shift_mm: float,
    other_ids: Sequence[int] = (),
    duplicate_ids: Sequence[int] = (),
    corners: Mapping[int, FloatArray] | None = None,
) -> Calibration:
    if geometry is None:
        geometry = previous.geometry if previous is not None else TableGeometry()
    visible = sorted(centres)
    missing = [i for i in CORNER_IDS if i not in centres]
    px: dict[int, Point] = dict(centres)
    estimated: tuple[int, ...] = ()
    if missing:
        seen = ", ".join(_corner_label(i) for i in visible) or "no corner markers"
        extra = ""
        if duplicate_ids:
            extra += f"; marker id(s) {list(duplicate_ids)} appear more than once (one per corner)"
        if other_ids:
            extra += (
                f"; also saw marker id(s) {list(other_ids)}, which are not corner markers "
                f"(print the sheet with `guandan hardware markers`)"
            )
        need = ", ".join(_corner_label(i) for i in missing)
        if len(missing) > 1:
            raise MarkersNotFound(
                f"found {seen}; missing {need}: all four corner markers ({ARUCO_DICTIONARY} ids "
                f"0-3) must be in view and uncovered to calibrate{extra}",
                visible,
                missing,
            )
        if previous is not None and previous.image_size != image_size:
            # corner detections do not scale exactly with the image: use the centres only
            previous = replace(previous.for_image_size(*image_size), marker_corners_px={})
        if previous is None:
            raise MarkersNotFound(
                f"only 3 of 4 corner markers visible, {need} is covered or out of view: uncover "
                f"it, or give the previous calibration (--previous FILE) so it can be "
                f"estimated{extra}",
                visible,
                missing,
            )
        shifts = {i: _shift_mm(previous, i, centres[i]) for i in visible}
        worst = max(shifts.values())
        if worst > max_estimate_shift_mm:
            raise MarkersNotFound(
                f"{need} is hidden and the visible markers moved up to {worst:.0f} mm since the "
                f"previous calibration (limit {max_estimate_shift_mm:g} mm): the camera moved "
                "too far to estimate the hidden corner; uncover it and calibrate again",
                visible,
                missing,
            )
        if previous.geometry != geometry:
            raise MarkersNotFound(
                f"{need} is hidden and the previous calibration has another table geometry: "
                "uncover the marker to calibrate with the new geometry",
                visible,
                missing,
            )
        px[missing[0]] = _estimate_missing(centres, previous, missing[0], corners)
        estimated = (missing[0],)
    _check_quad_order(px)
    mm = geometry.marker_positions()
    h = _homography([px[i] for i in range(4)], [mm[i] for i in range(4)])
    if zones is None and previous is not None and previous.geometry == geometry:
        zone_arrays = dict(previous.zones)
    elif zones is not None:
        zone_arrays = {k: np.asarray(v, np.float64) for k, v in zones.items()}
    else:
        zone_arrays = {}
    return Calibration(
        geometry=geometry,
        image_size=image_size,
        homography=h,
        marker_px=px,
        zones=zone_arrays,
        estimated=estimated,
        created=_now(),
        marker_corners_px={i: np.asarray(c, np.float64) for i, c in (corners or {}).items()},
    )


def calibrate(
    image: NDArray[Any],
    geometry: TableGeometry | None = None,
    *,
    previous: Calibration | None = None,
    zones: Mapping[str, Sequence[Point]] | None = None,
    max_estimate_shift_mm: float = 100.0,
) -> Calibration:
    """Calibrate from one frame.

    ``geometry`` defaults to the previous calibration's, else ``TableGeometry()``. Zones default
    to the previous calibration's (so hand-edited zones survive a recalibration), else the
    geometry's defaults. With 3 markers visible the hidden one is estimated from ``previous``
    (if the visible ones moved no more than ``max_estimate_shift_mm``); else MarkersNotFound.
    """
    detection = detect_markers(image)
    h, w = image.shape[:2]
    centres = {i: s.centre for i, s in detection.corners.items()}
    return _from_centres(
        centres,
        (w, h),
        geometry,
        previous,
        zones,
        max_estimate_shift_mm,
        detection.other_ids,
        detection.duplicate_ids,
        {i: s.corners for i, s in detection.corners.items()},
    )


def calibrate_frames(
    frames: Iterable[NDArray[Any]],
    geometry: TableGeometry | None = None,
    *,
    previous: Calibration | None = None,
    zones: Mapping[str, Sequence[Point]] | None = None,
    max_estimate_shift_mm: float = 100.0,
) -> Calibration:
    """Calibrate from several frames of a still camera: marker centres are averaged over the
    frames where they were seen (less noise); a marker seen in no frame counts as hidden."""
    sums: dict[int, list[Point]] = {}
    quads: dict[int, list[FloatArray]] = {}
    size: tuple[int, int] | None = None
    others: set[int] = set()
    dups: set[int] = set()
    count = 0
    for image in frames:
        h, w = image.shape[:2]
        if size is None:
            size = (w, h)
        elif size != (w, h):
            raise TableError(f"frames change size ({size[0]}x{size[1]} then {w}x{h})")
        det = detect_markers(image)
        count += 1
        others.update(det.other_ids)
        dups.update(det.duplicate_ids)
        for i, s in det.corners.items():
            sums.setdefault(i, []).append(s.centre)
            quads.setdefault(i, []).append(s.corners)
    if size is None:
        raise TableError("no frames to calibrate from (the camera delivered nothing)")
    centres: dict[int, Point] = {}
    for i, pts in sums.items():
        arr = np.asarray(pts, np.float64)
        med = np.median(arr, axis=0)
        centres[i] = (float(med[0]), float(med[1]))
    return _from_centres(
        centres,
        size,
        geometry,
        previous,
        zones,
        max_estimate_shift_mm,
        sorted(others),
        sorted(dups),
        {i: np.median(np.stack(q), axis=0) for i, q in quads.items()},
    )


# --------------------------------------------------------------------------------------------
# camera moved?

CheckStatus = Literal["ok", "moved", "marker_moved", "unknown"]


@dataclass(frozen=True)
class CameraCheck:
    """Result of comparing a frame's markers with the calibration."""

    status: CheckStatus
    shift_mm: dict[int, float]  # visible marker id -> distance from its calibrated position
    message: str

    @property
    def visible(self) -> tuple[int, ...]:
        return tuple(sorted(self.shift_mm))

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _check(
    detection: MarkerDetection, calibration: Calibration, threshold_mm: float
) -> CameraCheck:
    shifts = {i: _shift_mm(calibration, i, s.centre) for i, s in detection.corners.items()}
    if not shifts:
        return CameraCheck(
            "unknown",
            {},
            "no corner markers visible (covered or out of view): cannot tell whether the camera "
            "moved",
        )
    values = sorted(shifts.values())
    median = float(np.median(values))
    far = sorted(i for i, v in shifts.items() if v > threshold_mm)
    detail = ", ".join(f"{i}: {shifts[i]:.1f} mm" for i in sorted(shifts))
    if median > threshold_mm:
        return CameraCheck(
            "moved",
            shifts,
            f"the camera moved: markers are {median:.0f} mm (median) from their calibrated "
            f"positions ({detail}; threshold {threshold_mm:g} mm): recalibrate "
            "(guandan table calibrate)",
        )
    if far:
        return CameraCheck(
            "marker_moved",
            shifts,
            f"marker(s) {far} moved on the table while the others stayed ({detail}): put the "
            "marker back or recalibrate",
        )
    return CameraCheck("ok", shifts, f"camera steady ({detail})")


def check_camera(
    image: NDArray[Any], calibration: Calibration, threshold_mm: float = 10.0
) -> CameraCheck:
    """Compare the markers in ``image`` with ``calibration``: ok, moved, marker_moved or unknown
    (no markers visible). Shifts are measured in table mm through the calibration."""
    h, w = image.shape[:2]
    if (w, h) != calibration.image_size:
        calibration = calibration.for_image_size(w, h)
    return _check(detect_markers(image), calibration, threshold_mm)


class CameraWatch:
    """Watches frames for camera movement with debouncing, and recalibrates when it can.

    ``update(frame)`` returns the latest CameraCheck; ``moved`` becomes True only after
    ``confirm`` consecutive frames said "moved" (a hand over a marker or one bad detection does
    not trip it). With ``auto_recalibrate`` a confirmed move is followed by a recalibration on the
    first frame where enough markers are visible; ``calibration`` then holds the new one and
    ``recalibrations`` counts them.
    """

    def __init__(
        self,
        calibration: Calibration,
        threshold_mm: float = 10.0,
        confirm: int = 3,
        auto_recalibrate: bool = True,
        max_estimate_shift_mm: float = 100.0,
    ) -> None:
        if confirm < 1:
            raise TableError("CameraWatch: confirm must be >= 1")
        self.calibration = calibration
        self.threshold_mm = threshold_mm
        self.confirm = confirm
        self.auto_recalibrate = auto_recalibrate
        self.max_estimate_shift_mm = max_estimate_shift_mm
        self.moved = False
        self.recalibrations = 0
        self.last: CameraCheck | None = None
        self._streak = 0

    def update(self, image: NDArray[Any]) -> CameraCheck:
        h, w = image.shape[:2]
        cal = self.calibration
        if (w, h) != cal.image_size:
            cal = cal.for_image_size(w, h)
        detection = detect_markers(image)
        check = _check(detection, cal, self.threshold_mm)
        if check.status == "moved":
            self._streak += 1
            if self._streak >= self.confirm:
                self.moved = True
        elif check.status == "ok":
            self._streak = 0
            self.moved = False
        if self.moved and self.auto_recalibrate:
            centres = {i: s.centre for i, s in detection.corners.items()}
            quads = {i: s.corners for i, s in detection.corners.items()}
            try:
                new = _from_centres(
                    centres, (w, h), None, cal, None, self.max_estimate_shift_mm, corners=quads
                )
            except TableError as exc:
                check = CameraCheck(
                    check.status, check.shift_mm, f"{check.message}; cannot recalibrate yet: {exc}"
                )
            else:
                self.calibration = new
                self.recalibrations += 1
                self.moved = False
                self._streak = 0
                check = CameraCheck(
                    "moved", check.shift_mm, f"{check.message}; recalibrated automatically"
                )
        self.last = check
        return check


# --------------------------------------------------------------------------------------------
# rendering (tests, synthetic footage, debugging)


def _marker_image(marker_id: int, side_px: int) -> NDArray[np.uint8]:
    aruco = cv2.aruco
    dictionary = aruco.getPredefinedDictionary(getattr(aruco, ARUCO_DICTIONARY))
    return np.asarray(aruco.generateImageMarker(dictionary, marker_id, side_px), np.uint8)


def render_table_view(
    table_corners_px: Sequence[Point],
    image_size: tuple[int, int] = (1280, 720),
    geometry: TableGeometry | None = None,
    *,
    px_per_mm: float = 1.0,
    felt_bgr: tuple[int, int, int] = (60, 110, 40),
    background_bgr: tuple[int, int, int] = (70, 70, 80),
    marker_rotations: Sequence[int] = (0, 0, 0, 0),
    markers: Sequence[tuple[int, Point]] | None = None,
) -> tuple[NDArray[np.uint8], FloatArray]:
    """Render a top-down table with its four corner markers and warp it so the table corners
    (NW, NE, SE, SW) land on ``table_corners_px``. Returns the BGR image and the true homography
    table mm -> image px. Markers get a white quiet zone; ``marker_rotations`` (quarter turns,
    one per marker) shows that stick-down rotation does not matter. ``markers`` overrides which
    marker ids are drawn where: ``[(id, (x_mm, y_mm)), ...]`` (default: the four corners)."""
    g = geometry or TableGeometry()
    tw, th = round(g.width_mm * px_per_mm), round(g.height_mm * px_per_mm)
    top = np.empty((th, tw, 3), np.uint8)
    top[:] = felt_bgr
    side = max(12, round(g.marker_mm * px_per_mm))
    quiet = max(2, round(side / 6))
    placed = list(g.marker_positions().items()) if markers is None else list(markers)
    for k, (mid, (mx, my)) in enumerate(placed):
        tile = np.full((side + 2 * quiet, side + 2 * quiet), 255, np.uint8)
        turns = marker_rotations[k] if k < len(marker_rotations) else 0
        tile[quiet : quiet + side, quiet : quiet + side] = np.rot90(
            _marker_image(mid, side), turns % 4
        )
        x0 = round(mx * px_per_mm - tile.shape[1] / 2)
        y0 = round(my * px_per_mm - tile.shape[0] / 2)
        top[y0 : y0 + tile.shape[0], x0 : x0 + tile.shape[1]] = tile[:, :, None]
    # pixel-centre convention: table point (x, y) mm sits at top-view pixel (x*ppm - .5, y*ppm - .5)
    src = np.array([(0, 0), (tw, 0), (tw, th), (0, th)], np.float64) - 0.5
    dst = np.asarray(table_corners_px, np.float64)
    warp = cv2.getPerspectiveTransform(src.astype(np.float32), dst.astype(np.float32))
    out = cv2.warpPerspective(
        top,
        warp,
        image_size,
        flags=cv2.INTER_AREA if px_per_mm > 1.5 else cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=background_bgr,
    )
    scale = np.array([[px_per_mm, 0, -0.5], [0, px_per_mm, -0.5], [0, 0, 1.0]])
    return np.asarray(out, np.uint8), np.asarray(warp @ scale, np.float64)


def draw_calibration(image: NDArray[Any], calibration: Calibration) -> NDArray[np.uint8]:
    """A copy of ``image`` with the zones outlined and labelled (for checking a calibration)."""
    out = image.copy() if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    colours = {
        "N": (255, 128, 0),
        "E": (0, 200, 255),
        "S": (0, 0, 255),
        "W": (255, 0, 255),
        CENTRE: (255, 255, 255),
    }
    for name, poly in calibration.zones.items():
        pts = calibration.to_image(poly)
        colour = colours.get(name, (0, 255, 0))
        cv2.polylines(out, [np.round(pts).astype(np.int32)], True, colour, 2, cv2.LINE_AA)
        c = pts.mean(axis=0)
        cv2.putText(
            out, name, (int(c[0]) - 20, int(c[1]) + 8), cv2.FONT_HERSHEY_SIMPLEX, 0.9, colour, 2
        )
    for mid, (x, y) in calibration.marker_px.items():
        colour = (0, 0, 255) if mid in calibration.estimated else (0, 255, 0)
        cv2.circle(out, (round(x), round(y)), 6, colour, 2)
    return np.asarray(out, np.uint8)
