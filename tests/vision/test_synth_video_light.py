"""The renderer's light level changes brightness, never the cards' opacity (issue 44).

Before the fix ``render_game`` used the light level as the cards' alpha, so under a dim light the
card beneath a fan showed through the card on top."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from engine import load_profile
from engine.cards import parse_cards
from engine.observations import Observation
from vision.synth.video import render_game


def _render(tmp: Path, name: str, below: str, light: float) -> np.ndarray:
    """A still of two cards laid on exactly the same spot (``below`` first, then SA on top)."""
    script = [
        Observation(
            2.0,
            "played",
            seat="S",
            cards=tuple(parse_cards(f"{below} SA")),
            extra={"spacing_mm": 0.0},
        ),
        Observation(5.0, "pass", seat="E"),
    ]
    out = tmp / f"{name}.mp4"
    info = render_game(
        load_profile("standard"),
        seed=11,
        deals=1,
        out=out,
        deck="cv-plain",
        size=(640, 360),
        script=script,
        noise=0.0,
        light=(light, light),
    )
    cap = cv2.VideoCapture(str(out))
    frames = []
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        frames.append(frame)
    cap.release()
    # the cards have settled and the hand has gone at t = 2.0 (the truth log's time)
    settled = int(round((info.observations[0].t + 0.5) * info.fps))
    return frames[settled].astype(np.int16)


def _changed(tmp: Path, light: float) -> int:
    a = _render(tmp, f"a{light}", "HR", light)  # a red, busy face beneath
    b = _render(tmp, f"b{light}", "S2", light)  # a plain black one beneath
    return int((np.abs(a - b).max(axis=2) > 20).sum())


def test_card_beneath_never_shows_through(tmp_path: Path) -> None:
    # the frames may differ along the top card's anti-aliased outline and by the video codec's
    # ringing (as much at full light, where nothing can show through), never across its face
    # (measured: 2 pixels dim and 4 at full light; 91 dim before the fix)
    dim, full = _changed(tmp_path, 0.6), _changed(tmp_path, 1.0)
    assert dim <= full + 20, f"{dim} pixels of the card beneath show through (full light: {full})"


def test_dim_light_darkens_the_cards(tmp_path: Path) -> None:
    dim = _render(tmp_path, "dim", "S2", 0.6)
    bright = _render(tmp_path, "bright", "S2", 1.0)
    # the card's white paper: the brightest pixels of the bright frame
    paper = bright.min(axis=2) > 200
    assert paper.sum() > 500
    # paper and table both at 0.6 of their light (0.596 measured; 0.664 before the fix, where
    # the paper was partly the card beneath)
    ratio = dim[paper].mean() / bright[paper].mean()
    assert abs(ratio - 0.6) < 0.03, ratio
