"""Square corner crops fed to the card classifier (shared by training and the runtime)."""

from __future__ import annotations

import cv2
import numpy as np

CROP_SIZE = 48
#: the classifier's class for a crop that is no corner index (a pip, the art): the detector drops
#: it, enrolment skips it
NONE_CLASS = "none"
#: side of the square = longest box side * this (shows the card's corner edges); a model's own
#: value is in its metadata (``crop_expand``, from the training config's ``[data] crop_expand``)
CROP_EXPAND = 1.35


def crop_square(
    image: np.ndarray,
    box: tuple[float, float, float, float] | np.ndarray,
    size: int = CROP_SIZE,
    expand: float = CROP_EXPAND,
) -> np.ndarray:
    """The square around ``box`` (x1, y1, x2, y2), its side ``expand`` x the box's longest
    side, resized to size x size; outside the image is grey."""
    x1, y1, x2, y2 = (float(v) for v in box)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    side = max(x2 - x1, y2 - y1, 2.0) * expand
    s = size / side
    m = np.array([[s, 0, size / 2 - s * cx], [0, s, size / 2 - s * cy]], np.float32)
    interp = cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR
    return cv2.warpAffine(
        image, m, (size, size), flags=interp, borderMode=cv2.BORDER_CONSTANT, borderValue=(114,) * 3
    )


CLS_SIZE = 48  # classifier input side (a model's own size is in its metadata: ``input_size``)


def classifier_input(crops: np.ndarray, size: int = CLS_SIZE) -> np.ndarray:
    """uint8 N x CROP_SIZE x CROP_SIZE x 3 (BGR) -> float32 N x 3 x size x size, 0..1."""
    if len(crops) == 0:
        return np.zeros((0, 3, size, size), np.float32)
    if crops.shape[1:3] != (size, size):
        crops = np.stack([cv2.resize(c, (size, size), interpolation=cv2.INTER_AREA) for c in crops])
    return crops.transpose(0, 3, 1, 2).astype(np.float32) / 255.0
