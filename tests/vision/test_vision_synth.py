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
    labelled = paired = 0
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
        # the two corners of one card share its instance number (analysis of corner pairs)
        by_card: dict[int, list[str]] = {}
        for c in s.corners:
            assert c.instance >= 0
            by_card.setdefault(c.instance, []).append(c.card)
        assert all(len(v) <= 2 and len(set(v)) == 1 for v in by_card.values())
        paired += sum(len(v) == 2 for v in by_card.values())
    assert labelled > 10
    assert paired > 3


GUYENNE = Path("/usr/share/aisleriot/cards/guyenne-classic.svgz")


@pytest.mark.skipif(not GUYENNE.exists(), reason="needs Debian's gnome-cards-data")
def test_court_cards_without_an_index_get_no_label(tmp_path: Path) -> None:
    """guyenne-classic prints no index on J, Q, K: their corners are ignore regions, not labels
    (kept apart in the meta file), while its other cards are labelled as usual."""
    import json

    from vision.synth import dataset

    (deck,) = build_all(tmp_path / "decks", include=["guyenne-classic"])
    assert not deck.has_index("SJ") and not deck.has_index("HQ") and not deck.has_index("DK")
    assert deck.has_index("ST") and deck.has_index("CA") and deck.has_index("HR")
    out = tmp_path / "scenes"
    for sub in ("images", "labels", "meta"):
        (out / sub / "val").mkdir(parents=True)
    labelled: list[dict[str, object]] = []
    apart: list[dict[str, object]] = []
    ignored: list[list[float]] = []
    for i in range(8):
        scene = render_scene([deck], dataset.SEED_BASE["val"] + i, 256)
        for c in scene.corners:
            assert c.deck == "guyenne-classic"
            assert c.has_index == (c.card[1] not in "JQK")
        dataset._one(("val", i, str(tmp_path / "decks"), out, 256, ["guyenne-classic"]))
        meta = json.loads((out / "meta" / "val" / f"val_{i:06d}.json").read_text())
        labels = (out / "labels" / "val" / f"val_{i:06d}.txt").read_text().split("\n")
        assert len([x for x in labels if x]) == len(meta["corners"])
        labelled += meta["corners"]
        apart += meta["no_index"]
        ignored += meta["ignored"]
    assert labelled and apart
    assert all(str(c["card"])[1] not in "JQK" for c in labelled)
    assert all(isinstance(c["n"], int) for c in labelled)  # which card of the scene
    assert all(str(c["card"])[1] in "JQK" for c in apart)
    assert all(c["box"] in ignored for c in apart)
    # the evaluation leaves them out by default and can count them the old way
    from vision.detector import Detector
    from vision.train.evaluate import eval_synthetic, eval_synthetic_counts

    det = Detector(Path(__file__).resolve().parents[2] / "models" / "card-corners.onnx")
    new = eval_synthetic(det, out)
    old = eval_synthetic(det, out, count_no_index=True)
    # `guandan train eval` scores both ways from one detector pass: the same figures
    assert eval_synthetic_counts(det, out) == {False: new, True: old}
    assert new["corners"] == len(labelled)
    assert old["corners"] == len(labelled) + len(apart)
    assert set(new["by_deck"]) == {"guyenne-classic"}
    assert old["by_deck"]["guyenne-classic"]["corners"] == old["corners"]


KDE_STANDARD = Path("/usr/share/carddecks/svg-standard")


@pytest.mark.skipif(not KDE_STANDARD.exists(), reason="needs Debian's kdegames-card-data-kf5")
def test_a_kde_deck_renders_by_element_and_feeds_corner_samples(tmp_path: Path) -> None:
    """A KDE deck's cards are rendered one element at a time (rsvg-convert), each at CARD_W
    wide; the design has no jokers, so corner samples of it never name one, and every sample
    is a real crop with a label."""
    from vision.synth.corners import NONE_CLASS, corner_sample
    from vision.synth.decks import CARD_W, kde_card_id, render_kdegames

    assert kde_card_id("CA") == "1_club" and kde_card_id("HT") == "10_heart"
    assert kde_card_id("SQ") == "queen_spade" and kde_card_id("HR") == "red_joker"
    deck = render_kdegames("standard", tmp_path)
    assert deck.name == "kde-standard"
    assert set(deck.cards) == set(CARD_NAMES) - {"SB", "HR"}
    assert {p.stem for p in deck.path.glob("*.png")} == set(deck.cards)
    faces = [deck.image(c) for c in ("S2", "HT", "DK")]
    assert all(f.shape[1] == CARD_W and 1.3 < f.shape[0] / f.shape[1] < 1.5 for f in faces)
    assert not np.array_equal(faces[0], faces[1])
    x1, y1, x2, y2 = deck.index_box
    assert 0 <= x1 < x2 <= 0.45 and 0 <= y1 < y2 <= 0.5
    # loaded again from its folder: the same deck, rendered once
    assert render_kdegames("standard", tmp_path) == deck
    labels = [corner_sample([deck], seed)[1] for seed in range(200)]
    named = {CARD_NAMES[v] for v in labels if v != NONE_CLASS}
    assert not named & {"SB", "HR"} and len(named) > 40
    assert NONE_CLASS in labels
    with pytest.raises(FileNotFoundError, match="kdegames-card-data-kf5"):
        render_kdegames("no-such-deck", tmp_path)


def test_a_kde_deck_without_rsvg_convert_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from vision.synth import decks

    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(FileNotFoundError, match="librsvg2-bin"):
        decks._rsvg(tmp_path / "deck.svgz", "1_club", 1.0)
