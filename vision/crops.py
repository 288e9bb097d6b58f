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
    side, resized to size x size; outside the image is grey.

    A square larger than ``size`` (a corner index cut from a 2304x1296 frame, where the corner
    stage found it on a reduced copy) is cut at the frame's own resolution and then reduced by
    area: ``warpAffine`` takes ``INTER_AREA`` as plain bilinear sampling (it was asked for that
    until 2026-12-06, and sampled every other pixel of a square twice ``size``), which aliases
    fine print and picture into patterns the classifier never saw at the kiosk's scale."""
    x1, y1, x2, y2 = (float(v) for v in box)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    side = max(x2 - x1, y2 - y1, 2.0) * expand
    grey = (114,) * 3
    if side <= size:
        s = size / side
        m = np.array([[s, 0, size / 2 - s * cx], [0, s, size / 2 - s * cy]], np.float32)
        return cv2.warpAffine(
            image,
            m,
            (size, size),
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=grey,
        )
    n = int(np.ceil(side))
    m = np.array([[1, 0, n / 2 - cx], [0, 1, n / 2 - cy]], np.float32)
    native = cv2.warpAffine(
        image, m, (n, n), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=grey
    )
    return cv2.resize(native, (size, size), interpolation=cv2.INTER_AREA)


CLS_SIZE = 48  # classifier input side (a model's own size is in its metadata: ``input_size``)


def classifier_input(crops: np.ndarray, size: int = CLS_SIZE) -> np.ndarray:
    """uint8 N x CROP_SIZE x CROP_SIZE x 3 (BGR) -> float32 N x 3 x size x size, 0..1."""
    if len(crops) == 0:
        return np.zeros((0, 3, size, size), np.float32)
    if crops.shape[1:3] != (size, size):
        crops = np.stack([cv2.resize(c, (size, size), interpolation=cv2.INTER_AREA) for c in crops])
    return crops.transpose(0, 3, 1, 2).astype(np.float32) / 255.0
