"""Synthetic table frames for the calibration tests (imported by tests/table/test_table_*.py)."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.table import TableGeometry, render_table_view

SIZE = (1280, 720)
#: A view of a 900 mm table filling most of a 1280x720 frame.
BASE = np.array([(340.0, 60.0), (940.0, 60.0), (940.0, 660.0), (340.0, 660.0)])


def random_corners(rng: np.random.Generator, spread: float = 60.0) -> NDArray[np.float64]:
    """A random perspective: each table corner moved up to ``spread`` px, the view turned."""
    centre = BASE.mean(axis=0)
    corners = (BASE - centre) * 0.8 + centre + rng.uniform(-spread, spread, BASE.shape)
    angle = rng.uniform(-0.2, 0.2)
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    return (corners - centre) @ rot.T + centre


def frame(
    corners: NDArray[np.float64] | None = None,
    geometry: TableGeometry | None = None,
    *,
    seed: int = 0,
    noise: int = 8,
    blur: bool = False,
    size: tuple[int, int] = SIZE,
    **kwargs: object,
) -> tuple[NDArray[np.uint8], NDArray[np.float64]]:
    """(BGR frame, true homography table mm -> image px)."""
    rng = np.random.default_rng(seed)
    corners = BASE if corners is None else corners
    image, h = render_table_view(corners, size, geometry, **kwargs)  # type: ignore[arg-type]
    if blur:
        image = cv2.GaussianBlur(image, (3, 3), 0.8)
    if noise:
        image = cv2.add(image, rng.integers(0, noise, image.shape, dtype=np.uint8))
    return image, h


def project(h: NDArray[np.float64], points_mm: Sequence[tuple[float, float]] | NDArray) -> NDArray:
    pts = np.asarray(points_mm, np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, h).reshape(-1, 2)


def cover(image: NDArray[np.uint8], centre_px: Sequence[float], radius: int = 45) -> NDArray:
    """Draw a skin-coloured 'hand' over a point (e.g. a marker)."""
    out = image.copy()
    cx, cy = round(centre_px[0]), round(centre_px[1])
    cv2.ellipse(out, (cx, cy), (radius, int(radius * 1.3)), 30, 0, 360, (120, 160, 215), -1)
    return out
