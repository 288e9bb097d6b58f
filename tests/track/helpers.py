"""Synthetic detections from known card layouts (table mm -> image boxes), for the tracker tests."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from vision.table import Calibration, calibrate, render_table_view

CORNERS_PX = np.array([(345.0, 25.0), (935.0, 30.0), (965.0, 700.0), (315.0, 695.0)])


@lru_cache(maxsize=1)
def calibration() -> Calibration:
    image, _ = render_table_view(CORNERS_PX, (1280, 720))
    return calibrate(image)


@dataclass(frozen=True)
class Det:
    card: str
    box: tuple[float, float, float, float]
    score: float = 1.0
    alts: tuple[tuple[str, float], ...] = ()
    weak: bool = False  # vision.detector.Detection.weak
    whole: bool = False  # vision.pipeline.Det.whole: a card read by its picture


Placed = tuple[str, float, float, float]  # card, x_mm, y_mm, angle (radians)


def corner_points(x: float, y: float, angle: float) -> list[tuple[float, float]]:
    """Table-mm centres of a 63x88 mm card's two corner indices (6 and 12 mm in)."""
    c, s = math.cos(angle), math.sin(angle)
    out = []
    for dx, dy in ((-31.5 + 6, -44 + 12), (31.5 - 6, 44 - 12)):
        out.append((x + c * dx - s * dy, y + s * dx + c * dy))
    return out


def detections(
    layout: Sequence[Placed],
    *,
    hide: set[tuple[int, int]] = frozenset(),  # type: ignore[assignment]
    jitter: float = 0.0,
    rng: np.random.Generator | None = None,
    half: float = 6.0,
) -> list[Det]:
    """Boxes of every corner of ``layout`` except (card index, corner 0/1) in ``hide``."""
    cal = calibration()
    rng = rng or np.random.default_rng(0)
    out = []
    for i, (card, x, y, a) in enumerate(layout):
        for k, p in enumerate(corner_points(x, y, a)):
            if (i, k) in hide:
                continue
            px = cal.to_image([p])[0] + (rng.normal(0, jitter, 2) if jitter else 0.0)
            out.append(Det(card, (px[0] - half, px[1] - half, px[0] + half, px[1] + half)))
    return out


def fan(cards: Sequence[str], x: float, y: float, step: float = 17.0) -> list[Placed]:
    """Cards fanned left to right (each covers the right part of the one before)."""
    n = len(cards)
    return [(c, x + (i - (n - 1) / 2) * step, y, 0.0) for i, c in enumerate(cards)]


def fan_hidden(start: int, n: int) -> set[tuple[int, int]]:
    """In a fan every card but the last has its bottom-right index covered."""
    return {(start + i, 1) for i in range(n - 1)}
