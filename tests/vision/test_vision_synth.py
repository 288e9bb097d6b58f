"""Synthetic scenes: reproducible, labels inside the image, covered corners unlabelled."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PIL", reason="procedural decks need the train extra (Pillow)")

from vision.synth.decks import CARD_NAMES, Deck, build_all  # noqa: E402
from vision.synth.scenes import MIN_VISIBLE, render_scene  # noqa: E402


@pytest.fixture(scope="module")
def decks(tmp_path_factory: pytest.TempPathFactory) -> list[Deck]:
    root = tmp_path_factory.mktemp("decks")
    return build_all(root, include=["proc-sans"])


def test_procedural_deck_has_all_54_faces(decks: list[Deck]) -> None:
    (deck,) = decks
    assert {p.stem for p in Path(deck.path).glob("*.png")} == set(CARD_NAMES)
    x1, y1, x2, y2 = deck.index_box
    assert 0 <= x1 < x2 <= 0.45 and 0 <= y1 < y2 <= 0.5
    face = deck.image("HR")
    assert face.shape[2] == 4 and face[..., 3].max() == 255


def test_scene_is_a_pure_function_of_its_seed(decks: list[Deck]) -> None:
    a, b = render_scene(decks, 7, 256), render_scene(decks, 7, 256)
    assert np.array_equal(a.image, b.image)
    assert [(c.card, c.box, c.visible) for c in a.corners] == [
        (c.card, c.box, c.visible) for c in b.corners
    ]
    c = render_scene(decks, 8, 256)
    assert not np.array_equal(a.image, c.image)


def test_labels_lie_in_the_image_and_show_ink(decks: list[Deck]) -> None:
    labelled = 0
    for seed in range(6):
        s = render_scene(decks, seed, 256)
        assert s.image.shape == (256, 256, 3)
        for c in s.corners:
            x1, y1, x2, y2 = c.box
            assert 0 <= x1 < x2 <= 256 and 0 <= y1 < y2 <= 256
            assert c.card in CARD_NAMES
            assert 0.0 <= c.visible <= 1.0
            if c.visible >= MIN_VISIBLE and (x2 - x1) * (y2 - y1) > 40:
                labelled += 1
                patch = s.image[int(y1) : int(y2) + 1, int(x1) : int(x2) + 1]
                assert patch.std() > 3, "a labelled index must not be a flat patch"
    assert labelled > 10
