"""The classifier's crop (vision/crops.py ``crop_square``) at the kiosk's scale and larger."""

from __future__ import annotations

import cv2
import numpy as np

from vision.crops import crop_square


def test_a_square_larger_than_the_crop_is_reduced_by_area() -> None:
    """A corner index cut from a 2304x1296 frame spans more pixels than the 48 px crop.
    ``warpAffine`` takes INTER_AREA as bilinear sampling, which kept one row in two of a square
    twice the crop's size (fine print aliased into stripes); the crop is now the square cut at
    the frame's resolution and reduced by area, as ``cv2.resize`` does."""
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (400, 400, 3), dtype=np.uint8)
    crop = crop_square(image, (100, 100, 196, 196), 48, 1.0)
    want = cv2.resize(image[100:196, 100:196], (48, 48), interpolation=cv2.INTER_AREA)
    assert np.abs(crop.astype(int) - want.astype(int)).max() <= 1
    stripes = np.zeros((400, 400, 3), np.uint8)
    stripes[::2] = 255  # one-pixel lines: reduced by area, an even grey
    grey = crop_square(stripes, (100, 100, 196, 196), 48, 1.0)
    assert grey.std() < 2 and abs(grey.mean() - 127.5) < 2


def test_a_square_smaller_than_the_crop_is_enlarged_as_before() -> None:
    """At 1280x720 a corner's square is smaller than the crop: enlarged bilinearly, centred on
    the box; outside the image is grey (114)."""
    image = np.zeros((100, 100, 3), np.uint8)
    image[40:60, 40:60] = 200
    crop = crop_square(image, (40, 40, 60, 60), 48, 1.35)
    assert crop[24, 24].tolist() == [200, 200, 200]  # the box's centre
    assert crop[0, 0].tolist() == [0, 0, 0]
    edge = crop_square(image, (0, 0, 20, 20), 48, 1.35)
    assert edge[0, 0].tolist() == [114, 114, 114]
    big_edge = crop_square(image, (-40, -40, 40, 40), 48, 1.35)
    assert big_edge[0, 0].tolist() == [114, 114, 114] and big_edge.shape == (48, 48, 3)
