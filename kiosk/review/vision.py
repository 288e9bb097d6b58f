"""What the camera saw at a moment: the corners the detector finds in a recorded frame, their
names, and the seat zones, as JSON for the page to draw and as a JPEG with them drawn (bundle).

The footage holds frames only, so the corners are found again with the current detector
(``vision.detector``, loaded once, on first use); when the kiosk has no model the answer says so
and the page shows the bare frame.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import cv2
import numpy as np

_lock = threading.Lock()
_detector: Any = None
_detector_error: str | None = None


def detector() -> Any:
    """The shipped card detector, or None (``detector_error()`` says why)."""
    global _detector, _detector_error
    with _lock:
        if _detector is None and _detector_error is None:
            try:
                from vision.detector import DEFAULT_MODEL, Detector

                if not DEFAULT_MODEL.exists():
                    _detector_error = f"no card model at {DEFAULT_MODEL}"
                else:
                    _detector = Detector()
            except Exception as exc:  # noqa: BLE001 - no vision build: the frame alone is shown
                _detector_error = f"the detector cannot be loaded: {exc}"
        return _detector


def detector_error() -> str | None:
    return _detector_error


def load_calibration(spec: Any) -> Any:
    """A ``vision.table.Calibration`` from an object, a path, or None."""
    if spec is None:
        return None
    if isinstance(spec, str | Path):
        from vision.table import Calibration

        return Calibration.load(spec)
    return spec


def zones_px(image: np.ndarray, calibration: Any = None) -> dict[str, list[list[float]]]:
    """Seat zones in image pixels: from the kiosk's calibration, else from the frame's own
    corner markers; {} when neither is there."""
    try:
        cal = load_calibration(calibration)
        if cal is None:
            from vision.table import calibrate

            cal = calibrate(image)
        return {
            z: [[round(float(x), 1), round(float(y), 1)] for x, y in cal.zone_polygon_px(z)]
            for z in cal.zones
        }
    except Exception:  # noqa: BLE001 - no markers in view, or no vision build: no zones drawn
        return {}


def look(image: np.ndarray, calibration: Any = None) -> dict[str, Any]:
    """``{size, cards: [{card, box, score}] | None, zones, why}`` for one frame."""
    det = detector()
    out: dict[str, Any] = {
        "size": [int(image.shape[1]), int(image.shape[0])],
        "cards": None,
        "zones": zones_px(image, calibration),
        "why": None,
    }
    if det is None:
        out["why"] = detector_error()
        return out
    with _lock:  # one onnxruntime session, one frame at a time
        found = det.detect(image)
    out["cards"] = [d.to_json() for d in found]
    return out


def draw(image: np.ndarray, seen: dict[str, Any], caption: str = "") -> np.ndarray:
    """The frame with the zones (blue), the corners (green) and their names drawn."""
    img = image.copy()
    for name, poly in (seen.get("zones") or {}).items():
        pts = np.asarray(poly, np.int32).reshape(-1, 1, 2)
        cv2.polylines(img, [pts], True, (255, 160, 0), 2)
        x, y = pts[:, 0, :].mean(axis=0)
        cv2.putText(img, name, (int(x), int(y)), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (255, 160, 0), 2)
    for c in seen.get("cards") or []:
        x1, y1, x2, y2 = (int(round(v)) for v in c["box"])
        cv2.rectangle(img, (x1, y1), (x2, y2), (0, 220, 0), 2)
        cv2.putText(
            img, c["card"], (x1, max(12, y1 - 4)), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 220, 0), 2
        )
    if caption:
        cv2.putText(img, caption, (10, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (255, 255, 255), 2)
    return img


def jpeg(image: np.ndarray, quality: int = 88) -> bytes:
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("the frame cannot be encoded as JPEG")
    return bytes(buf)
