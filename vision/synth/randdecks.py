"""Randomised drawn decks for the classifier (domain randomisation of the corner index).

The held-out deck designs show that the classifier's errors are the index's *design*: suit pips
of a few pixels whose shape differs from deck to deck (clubs read as spades, diamonds as hearts).
Each deck here draws its index with a different rank font (DejaVu Sans / Mono / Condensed,
Liberation Sans / Narrow / Mono / Serif, Noto CJK's Latin), a suit shape taken from a font
(DejaVu, Liberation, Noto CJK) or drawn from primitives with random proportions (lobe size, stem
width, waist of the diamond), random index size, spacing and alignment, ink colours and paper.
Centres: pips of the same shape, a framed "picture" with strokes for J/Q/K, Chinese or Latin
jokers. The decks feed only the classifier's corner mini-scenes (``vision.synth.corners``), so the
detector's scenes and the held-out decks are unchanged. DejaVu Serif (the held-out ``proc-serif``
deck's font) is never used.

Deck ``rand-NNN`` is a pure function of NNN: the same faces on every machine with the same fonts.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.synth.decks import CARD_NAMES, CARD_W, Deck, load_deck, measure_index_box, pip_grid

_DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
_LIBERATION = Path("/usr/share/fonts/truetype/liberation")
_NOTO = Path("/usr/share/fonts/opentype/noto")

#: Rank fonts (no DejaVu Serif: that is the held-out proc-serif deck's face).
RANK_FONTS = (
    _DEJAVU / "DejaVuSans-Bold.ttf",
    _DEJAVU / "DejaVuSans.ttf",
    _DEJAVU / "DejaVuSansCondensed-Bold.ttf",
    _DEJAVU / "DejaVuSansMono-Bold.ttf",
    _DEJAVU / "DejaVuSans-ExtraLight.ttf",
    _LIBERATION / "LiberationSans-Bold.ttf",
    _LIBERATION / "LiberationSans-Regular.ttf",
    _LIBERATION / "LiberationSansNarrow-Bold.ttf",
    _LIBERATION / "LiberationMono-Bold.ttf",
    _LIBERATION / "LiberationSerif-Bold.ttf",
    _LIBERATION / "LiberationSerif-Regular.ttf",
    _NOTO / "NotoSansCJK-Bold.ttc",
    _NOTO / "NotoSansCJK-Regular.ttc",
    _NOTO / "NotoSerifCJK-Bold.ttc",
)
#: Fonts whose suit glyphs (U+2660 etc.) are used as pip shapes.
SUIT_FONTS = (
    _DEJAVU / "DejaVuSans.ttf",
    _LIBERATION / "LiberationSans-Regular.ttf",
    _NOTO / "NotoSansCJK-Regular.ttc",
)
_CJK = (_NOTO / "NotoSansCJK-Bold.ttc", _NOTO / "NotoSerifCJK-Bold.ttc")
_GLYPH = {"S": "\u2660", "H": "\u2665", "C": "\u2663", "D": "\u2666"}
_SS = 4  # supersampling of the drawn shapes


def _available(paths: tuple[Path, ...]) -> list[Path]:
    found = [p for p in paths if p.exists()]
    if not found:
        raise FileNotFoundError(
            "no fonts for the randomised decks: apt-get install fonts-dejavu-core "
            "fonts-liberation fonts-noto-cjk"
        )
    return found


# --------------------------------------------------------------------------- suit shapes
def _shape_params(rng: np.random.Generator) -> dict[str, float]:
    return {
        "lobe": float(rng.uniform(0.24, 0.32)),  # heart/spade lobe radius (of the size)
        "point": float(rng.uniform(0.85, 1.0)),  # heart/spade tip distance
        "club": float(rng.uniform(0.2, 0.27)),  # club ball radius
        "spread": float(rng.uniform(0.8, 1.05)),  # club ball spacing
        "stem": float(rng.uniform(0.06, 0.2)),  # stem half width at the foot
        "stem_len": float(rng.uniform(0.22, 0.34)),
        "waist": float(rng.uniform(0.5, 0.8)),  # diamond width / height
        "bulge": float(rng.uniform(-0.12, 0.1)),  # diamond sides: concave < 0 < convex
    }


def _heart_mask(n: int, p: dict[str, float], up: bool) -> np.ndarray:
    """A heart (tip down) in an n x n mask; ``up`` flips it (the spade's body)."""
    m = np.zeros((n, n), np.uint8)
    r = p["lobe"] * n
    cy = 0.36 * n
    for sx in (-1, 1):
        cv2.circle(m, (int(n / 2 + sx * r * 0.92), int(cy)), int(r), 255, -1, cv2.LINE_AA)
    tip = (n / 2, cy + p["point"] * 0.62 * n)
    pts = np.array(
        [
            (n / 2 - 1.85 * r, cy + 0.25 * r),
            (n / 2 + 1.85 * r, cy + 0.25 * r),
            tip,
        ],
        np.int32,
    )
    cv2.fillConvexPoly(m, pts, 255, cv2.LINE_AA)
    return m[::-1].copy() if up else m


def _stem(m: np.ndarray, p: dict[str, float], top: float) -> None:
    n = m.shape[0]
    half = p["stem"] * n
    foot = min(0.98 * n, top + p["stem_len"] * n)
    pts = np.array(
        [
            (n / 2 - 0.03 * n, top),
            (n / 2 + 0.03 * n, top),
            (n / 2 + half, foot),
            (n / 2 - half, foot),
        ],
        np.int32,
    )
    cv2.fillConvexPoly(m, pts, 255, cv2.LINE_AA)


def drawn_suit(suit: str, size: int, p: dict[str, float]) -> np.ndarray:
    """Alpha mask (size x size) of a suit drawn from circles and polygons."""
    n = size * _SS
    if suit == "H":
        m = _heart_mask(n, p, up=False)
    elif suit == "S":
        m = _heart_mask(n, p, up=True)
        m = np.roll(m, -int(0.12 * n), axis=0)
        _stem(m, p, 0.62 * n)
    elif suit == "C":
        m = np.zeros((n, n), np.uint8)
        r = p["club"] * n
        d = r * p["spread"]
        cy = 0.42 * n
        for cx, yy in (
            (n / 2, cy - 1.05 * d),
            (n / 2 - 1.05 * d, cy + 0.5 * d),
            (n / 2 + 1.05 * d, cy + 0.5 * d),
        ):
            cv2.circle(m, (int(cx), int(yy)), int(r), 255, -1, cv2.LINE_AA)
        cv2.circle(m, (int(n / 2), int(cy + 0.1 * d)), int(0.5 * r), 255, -1, cv2.LINE_AA)
        _stem(m, p, cy + 0.3 * d)
    else:  # D
        hw, hh = p["waist"] * 0.45 * n, 0.47 * n
        c = (n / 2, n / 2)
        pts = []
        corners = [(c[0], c[1] - hh), (c[0] + hw, c[1]), (c[0], c[1] + hh), (c[0] - hw, c[1])]
        for k in range(4):
            a, b = corners[k], corners[(k + 1) % 4]
            for t in np.linspace(0, 1, 9)[:-1]:
                x, y = a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t
                # push the side's midpoint out (convex) or in (concave)
                ox, oy = x - c[0], y - c[1]
                k_ = 1 + p["bulge"] * math.sin(math.pi * t)
                pts.append((c[0] + ox * k_, c[1] + oy * k_))
        m = np.zeros((n, n), np.uint8)
        cv2.fillPoly(m, [np.array(pts, np.int32)], 255, cv2.LINE_AA)
    return cv2.resize(m, (size, size), interpolation=cv2.INTER_AREA)


def _glyph_mask(font: Any, text: str) -> np.ndarray:
    """Tight alpha mask of ``text`` in a PIL font."""
    from PIL import Image, ImageDraw

    x0, y0, x1, y1 = font.getbbox(text)
    im = Image.new("L", (max(1, x1 - x0 + 2), max(1, y1 - y0 + 2)), 0)
    ImageDraw.Draw(im).text((1 - x0, 1 - y0), text, font=font, fill=255)
    return np.array(im)


def _fit(mask: np.ndarray, h: int) -> np.ndarray:
    """Scale a mask to height h (keeps the aspect)."""
    mh, mw = mask.shape
    w = max(1, int(round(mw * h / max(1, mh))))
    return cv2.resize(mask, (w, max(1, h)), interpolation=cv2.INTER_AREA)


def _stamp(img: np.ndarray, mask: np.ndarray, x: int, y: int, colour: tuple[int, ...]) -> None:
    """Ink ``mask`` (alpha) in ``colour`` onto BGRA ``img`` at top-left (x, y), clipped."""
    h, w = img.shape[:2]
    mh, mw = mask.shape
    x1, y1, x2, y2 = max(0, x), max(0, y), min(w, x + mw), min(h, y + mh)
    if x2 <= x1 or y2 <= y1:
        return
    a = mask[y1 - y : y2 - y, x1 - x : x2 - x].astype(np.float32)[..., None] / 255.0
    region = img[y1:y2, x1:x2, :3].astype(np.float32)
    img[y1:y2, x1:x2, :3] = (region * (1 - a) + np.array(colour[:3], np.float32) * a).astype(
        np.uint8
    )


# --------------------------------------------------------------------------- one deck
def render_random(index: int, out_root: Path) -> Deck:
    """Deck ``rand-<index>``: drawn once under ``out_root``, loaded afterwards."""
    from PIL import ImageFont  # train extra

    name = f"rand-{index:03d}"
    out = out_root / name
    if (out / "deck.json").exists():
        return load_deck(out)
    rng = np.random.default_rng(50_000 + index)
    rank_fonts, suit_fonts = _available(RANK_FONTS), _available(SUIT_FONTS)
    w = CARD_W
    h = int(round(w * rng.uniform(1.36, 1.56)))
    rank_path = rank_fonts[int(rng.integers(len(rank_fonts)))]
    rank_h = int(w * rng.uniform(0.1, 0.19))  # cap height of the rank in the corner
    suit_h = int(rank_h * rng.uniform(0.6, 1.05))
    gap = int(rank_h * rng.uniform(0.05, 0.35))
    x0 = int(w * rng.uniform(0.03, 0.08))
    y0 = int(h * rng.uniform(0.025, 0.06))
    centred = rng.random() < 0.7  # suit centred under the rank (else left-aligned)
    drawn = rng.random() < 0.5
    params = _shape_params(rng)
    suit_font = ImageFont.truetype(str(suit_fonts[int(rng.integers(len(suit_fonts)))]), 200)
    rank_font = ImageFont.truetype(str(rank_path), 200)
    red = (int(rng.integers(0, 60)), int(rng.integers(0, 50)), int(rng.integers(160, 235)), 255)
    if rng.random() < 0.15:  # orange-red
        red = (0, int(rng.integers(60, 100)), int(rng.integers(210, 250)), 255)
    dark = int(rng.integers(0, 45))
    black = (dark + int(rng.integers(0, 40)) * (rng.random() < 0.25), dark, dark, 255)
    paper = tuple(int(v) for v in rng.integers(232, 256, 3)) + (255,)
    thin = rng.random() < 0.3  # lighter strokes: erode the rank glyph a little

    suit_masks: dict[str, np.ndarray] = {}
    for s in "SHCD":
        m = drawn_suit(s, 96, params) if drawn else _glyph_mask(suit_font, _GLYPH[s])
        suit_masks[s] = m

    def rank_mask(label: str) -> np.ndarray:
        m = _fit(_glyph_mask(rank_font, label), rank_h)
        if label == "10" and m.shape[1] > 1.25 * rank_h:  # "10" squeezed like most decks do
            m = cv2.resize(m, (int(1.2 * rank_h), rank_h), interpolation=cv2.INTER_AREA)
        if thin:
            m = cv2.erode(m, np.ones((2, 2), np.uint8))
        return m

    def blank() -> np.ndarray:
        img = np.zeros((h, w, 4), np.uint8)
        mask = np.zeros((h, w), np.uint8)
        r = int(w * rng.uniform(0.03, 0.08))
        cv2.rectangle(mask, (r, 0), (w - 1 - r, h - 1), 255, -1)
        cv2.rectangle(mask, (0, r), (w - 1, h - 1 - r), 255, -1)
        for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
            cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
        img[..., :3] = paper[:3]
        img[..., 3] = mask
        edge = cv2.morphologyEx(mask, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8))
        img[edge > 0, :3] = (120, 120, 120)
        return img

    out.mkdir(parents=True, exist_ok=True)
    frame = rng.random() < 0.5
    court_cols = [tuple(int(v) for v in rng.integers(0, 256, 3)) for _ in range(3)]
    joker_cjk = rng.random() < 0.6
    cjk_path = _CJK[int(rng.integers(len(_CJK)))] if all(p.exists() for p in _CJK) else rank_path
    faces: dict[str, np.ndarray] = {}
    for card in CARD_NAMES:
        img = blank()
        if card in ("SB", "HR"):
            col = black if card == "SB" else red
            text = ("小王" if card == "SB" else "大王") if joker_cjk else "JOKER"
            font = ImageFont.truetype(str(cjk_path if joker_cjk else rank_path), 200)
            # the joker's index fills the same height as a rank + suit index
            gh = max(4, int((rank_h + gap + suit_h) / (len(text) * 1.15)))
            y = y0
            for ch in text:
                g = _fit(_glyph_mask(font, ch), gh)
                _stamp(img, g, x0, y, col)
                y += int(gh * 1.15)
            big = _fit(_glyph_mask(font, "王" if joker_cjk else "J"), int(h * 0.3))
            _stamp(img, big, (w - big.shape[1]) // 2, (h - big.shape[0]) // 2, col)
        else:
            suit, rank = card[0], card[1]
            col = red if suit in "HD" else black
            label = "10" if rank == "T" else rank
            rm = rank_mask(label)
            _stamp(img, rm, x0, y0, col)
            sm = _fit(suit_masks[suit], suit_h)
            sx = x0 + (rm.shape[1] - sm.shape[1]) // 2 if centred else x0
            _stamp(img, sm, max(0, sx), y0 + rank_h + gap, col)
            if rank in "JQK":
                px1, py1, px2, py2 = int(0.24 * w), int(0.16 * h), int(0.76 * w), int(0.84 * h)
                if frame:
                    cv2.rectangle(img, (px1, py1), (px2, py2), col, 2)
                for _ in range(14):  # picture strokes in the court colours
                    c = court_cols[int(rng.integers(3))]
                    p1 = (int(rng.uniform(px1, px2)), int(rng.uniform(py1, py2)))
                    p2 = (int(rng.uniform(px1, px2)), int(rng.uniform(py1, py2)))
                    cv2.line(img, p1, p2, (*c, 255), int(rng.integers(2, 9)))
                big = _fit(rank_mask(label), int(h * 0.18))
                _stamp(img, big, px1 + 6, py1 + 6, col)
                _stamp(
                    img, _fit(suit_masks[suit], int(h * 0.1)), px1 + 6, py1 + 10 + big.shape[0], col
                )
            elif rank == "A":
                big = _fit(suit_masks[suit], int(h * rng.uniform(0.18, 0.32)))
                _stamp(img, big, (w - big.shape[1]) // 2, (h - big.shape[0]) // 2, col)
            else:
                n = 10 if rank == "T" else int(rank)
                pip = _fit(suit_masks[suit], int(h * 0.12))
                for px, py in pip_grid(n, w, h, (0.34, 0.32), (0.22, 0.56)):
                    g = pip if py < h / 2 else pip[::-1, ::-1]
                    _stamp(img, g, int(px - g.shape[1] / 2), int(py - g.shape[0] / 2), col)
        # bottom-right index: the top-left corner turned half round
        cw_, ch_ = int(w * 0.32), int(h * 0.36)
        corner = img[:ch_, :cw_].copy()[::-1, ::-1]
        ink = np.abs(corner[..., :3].astype(int) - np.array(paper[:3])).sum(axis=2) > 60
        ink &= corner[..., 3] > 200
        img[h - ch_ :, w - cw_ :][ink] = corner[ink]
        faces[card] = img
        cv2.imwrite(str(out / f"{card}.png"), img)
    box = measure_index_box(faces)
    idx_bottom = (y0 + rank_h + gap + suit_h) / h
    box = (box[0], box[1], box[2], max(box[3], idx_bottom + 0.01))
    (out / "deck.json").write_text(
        json.dumps(
            {
                "name": name,
                "source": "randomised",
                "index_box": box,
                "rank_font": rank_path.name,
                "suits": "drawn" if drawn else "font",
            }
        )
    )
    return load_deck(out)


def build_random(out_root: Path, n: int) -> list[Deck]:
    """Decks rand-000 .. rand-<n-1> (drawn on first use)."""
    return [render_random(i, out_root) for i in range(n)]
