"""Corner mini-scenes for the classifier: one card corner at its true pixel scale, any rotation,
on a table texture, with fanned neighbours below and above (never over the index), then the
same degradations as the full scenes and the same square crop as the runtime.

Much cheaper than full scenes, so the classifier sees many more corners per deck design. About
1 sample in 8 is a "none" crop centred elsewhere (pips, court art, table, card edges).
"""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cv2
import numpy as np

from vision.crops import CROP_EXPAND, crop_square
from vision.synth.decks import CARD_NAMES, Deck
from vision.synth.scenes import _degrade, card_width, texture

NONE_CLASS = len(CARD_NAMES)


def _paste(canvas: np.ndarray, src: np.ndarray, m: np.ndarray) -> np.ndarray:
    n = canvas.shape[0]
    warped = cv2.warpAffine(src, m, (n, n), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0, 0))
    a = warped[..., 3:4].astype(np.float32) / 255.0
    return canvas * (1 - a) + warped[..., :3].astype(np.float32) * a


def _card_matrix(
    w: int, h: int, scale: float, angle: float, anchor: tuple[float, float], at: tuple[float, float]
) -> np.ndarray:
    """Affine card pixel -> canvas: rotate/scale, card point ``anchor`` lands on ``at``."""
    c, s = math.cos(angle) * scale, math.sin(angle) * scale
    ax, ay = anchor
    return np.array([[c, -s, at[0] - (c * ax - s * ay)], [s, c, at[1] - (s * ax + c * ay)]])


def _any(deck: Deck, rng: np.random.Generator) -> str:
    """A random card of ``deck`` (the same draws as before for a deck with all 54)."""
    name = CARD_NAMES[int(rng.integers(54))]
    return name if name in deck.cards else deck.cards[int(rng.integers(len(deck.cards)))]


def corner_sample(
    decks: list[Deck],
    seed: int,
    expand: float = CROP_EXPAND,
    widths: tuple[float, float] | None = None,
) -> tuple[np.ndarray, int]:
    """One corner mini-scene and its class; ``widths``: the range of the card's width (px),
    drawn log-uniform (default ``CARD_W_RANGE``, the draws as before ``widths`` was added)."""
    rng = np.random.default_rng(seed)
    deck = decks[int(rng.integers(len(decks)))]
    label = NONE_CLASS if rng.random() < 0.12 else int(rng.integers(len(CARD_NAMES)))
    name = CARD_NAMES[label] if label < NONE_CLASS else CARD_NAMES[int(rng.integers(54))]
    if name not in deck.cards:  # a design without jokers (KDE decks): one of its own cards
        name = deck.cards[int(rng.integers(len(deck.cards)))]
        label = CARD_NAMES.index(name) if label < NONE_CLASS else label
    card_w = card_width(rng, widths)
    src = deck.image(name)
    sh, sw = src.shape[:2]
    pre = max(1.0, sw / (card_w * 1.5))
    if pre > 1.0:
        src = cv2.resize(src, (int(sw / pre), int(sh / pre)), interpolation=cv2.INTER_AREA)
    h, w = src.shape[:2]
    scale = card_w / w
    x1, y1, x2, y2 = deck.index_box
    n = int(card_w * 1.3) + 16
    centre = (n / 2, n / 2)
    angle = rng.uniform(0, 2 * math.pi)
    if label < NONE_CLASS:
        anchor = ((x1 + x2) / 2 * w, (y1 + y2) / 2 * h)
    else:  # somewhere on the card away from the top-left / bottom-right index, or off the card
        while True:
            u, v = rng.uniform(-0.3, 1.3), rng.uniform(-0.3, 1.3)
            near_tl = u < x2 + 0.05 and v < y2 + 0.05
            near_br = u > 1 - x2 - 0.05 and v > 1 - y2 - 0.05
            if not (near_tl or near_br):
                break
        anchor = (u * w, v * h)
    canvas = texture(rng, n, n).astype(np.float32)
    m = _card_matrix(w, h, scale, angle, anchor, centre)
    ux, uy = math.cos(angle), math.sin(angle)  # card x axis in the canvas
    vx, vy = -uy, ux  # card y axis
    if rng.random() < 0.5:  # a card below, fanned to the left/up
        other = deck.image(_any(deck, rng))
        other = cv2.resize(other, (w, h), interpolation=cv2.INTER_AREA)
        d = -rng.uniform(0.15, 0.5) * card_w
        off = (d * ux + rng.normal(0, 0.05) * card_w * vx, d * uy + rng.normal(0, 0.05) * vy)
        mo = m.copy()
        mo[:, 2] += off
        canvas = _paste(canvas, other, mo)
    canvas = _paste(canvas, src, m)
    if rng.random() < 0.45:  # a card above, fanned to the right/down, clear of the index
        other = deck.image(_any(deck, rng))
        other = cv2.resize(other, (w, h), interpolation=cv2.INTER_AREA)
        d = rng.uniform(x2 + 0.04, 0.7) * card_w
        along = rng.random() < 0.7
        off = (d * ux, d * uy) if along else (d * 1.4 * vx, d * 1.4 * vy)
        mo = m.copy()
        mo[:, 2] += off
        mo[:, :2] = cv2.getRotationMatrix2D((0, 0), float(rng.normal(0, 4)), 1)[:, :2] @ mo[:, :2]
        canvas = _paste(canvas, other, mo)
    img = _degrade(rng, np.clip(canvas, 0, 255).astype(np.uint8), card_w)
    # the index box in the canvas (axis-aligned hull of the rotated box), with detector-like noise
    quad = np.array([[x1 * w, y1 * h], [x2 * w, y1 * h], [x2 * w, y2 * h], [x1 * w, y2 * h]])
    if label == NONE_CLASS:
        quad = quad - quad.mean(axis=0) + np.array(anchor)
    q = np.hstack([quad, np.ones((4, 1))]) @ m.T
    bx1, by1 = q.min(axis=0)
    bx2, by2 = q.max(axis=0)
    bw, bh = bx2 - bx1, by2 - by1
    dx, dy = rng.normal(0, 0.08, 2) * (bw, bh)
    sx, sy = np.exp(rng.normal(0, 0.1, 2))
    cx, cy = (bx1 + bx2) / 2 + dx, (by1 + by2) / 2 + dy
    box = (cx - bw * sx / 2, cy - bh * sy / 2, cx + bw * sx / 2, cy + bh * sy / 2)
    return crop_square(img, box, expand=expand), label


def _chunk(
    args: tuple[str, list[str] | None, str, int, int, int, float, tuple[str, ...]],
) -> tuple[np.ndarray, np.ndarray]:
    from vision.synth.dataset import split_decks

    deck_root, include, split, start, count, n_random, expand, kde = args
    if kde:
        from vision.synth.decks import build_kdegames

        decks = build_kdegames(Path(deck_root), kde)
    elif n_random:
        from vision.synth.randdecks import build_random

        decks = build_random(Path(deck_root), n_random)
    else:
        decks = split_decks(Path(deck_root), include)[split]
    xs, ys = [], []
    for seed in range(start, start + count):
        x, y = corner_sample(decks, seed, expand)
        xs.append(x)
        ys.append(y)
    return np.stack(xs), np.array(ys, np.int16)


def generate_corners(
    out: Path,
    deck_root: Path,
    n: int,
    split: str = "train",
    seed_base: int = 3_000_000,
    workers: int = 2,
    include: list[str] | None = None,
    random_decks: int = 0,
    expand: float = CROP_EXPAND,
    kde_decks: tuple[str, ...] = (),
) -> Path:
    """``n`` corner samples of ``split``'s decks into ``out`` (npz x, y); kept if already there.
    With ``random_decks`` N the samples come from the randomised decks rand-000 .. N-1
    (``vision.synth.randdecks``) instead, with ``kde_decks`` (names) from those KDE card decks
    (``vision.synth.decks.KDE_DECKS``)."""
    stamp = (
        f"{split} n={n} seed={seed_base} expand={expand}"
        + (f" random={random_decks}" if random_decks else "")
        + (f" kde={','.join(kde_decks)}" if kde_decks else "")
    )
    if random_decks:
        from vision.synth.randdecks import build_random

        build_random(deck_root, random_decks)  # drawn once, before the workers start
    if kde_decks:
        from vision.synth.decks import build_kdegames

        build_kdegames(deck_root, kde_decks)  # rendered once, before the workers start
    if out.exists():
        with np.load(out) as old:
            if str(old["stamp"]) == stamp:
                return out
    step = 500
    # finished chunks survive an interruption (one folder per crop size: they hold crops)
    # (and per deck set: parts of other decks must not be taken for these)
    decks_tag = (f".random{random_decks}" if random_decks else "") + (
        f".{'-'.join(kde_decks)}" if kde_decks else ""
    )
    parts_dir = out.parent / f"{out.stem}.x{expand:g}{decks_tag}.parts"
    parts_dir.mkdir(parents=True, exist_ok=True)
    jobs = [
        (
            str(deck_root),
            include,
            split,
            seed_base + i,
            min(step, n - i),
            random_decks,
            expand,
            kde_decks,
        )
        for i in range(0, n, step)
        if not (parts_dir / f"{seed_base + i}-{min(step, n - i)}.npz").exists()
    ]
    with ProcessPoolExecutor(max_workers=workers) as ex:
        for job, (x, y) in zip(jobs, ex.map(_chunk, jobs), strict=True):
            np.savez(parts_dir / f"{job[3]}-{job[4]}.npz", x=x, y=y)
    xs, ys = [], []
    for i in range(0, n, step):
        with np.load(parts_dir / f"{seed_base + i}-{min(step, n - i)}.npz") as part:
            xs.append(part["x"])
            ys.append(part["y"])
    np.savez(out, x=np.concatenate(xs), y=np.concatenate(ys), stamp=np.array(stamp))
    return out
