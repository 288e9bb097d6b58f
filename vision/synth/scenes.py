"""Top-down table scenes with labelled corner indices (numpy + OpenCV only).

A scene is composed on the table plane (texture, card shadows, cards laid as players lay them:
singles, fanned combos, stacked bombs; hands and sleeves over them), then seen through a
camera homography (0.7-1.2 m above, slightly tilted), then degraded (lighting gradient, shadow,
glare, blur, noise, JPEG). Every corner index (top-left and the point-symmetric bottom-right one)
that stays at least ``MIN_VISIBLE`` uncovered gets a box. Everything is drawn from
``numpy.random.default_rng(seed)``, so a scene is a pure function of (decks, seed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.synth.decks import CARD_NAMES, Deck

MIN_VISIBLE = 0.7  # fraction of an index box that must stay uncovered to be labelled
IGNORE_BELOW = 0.25  # between the two: not labelled, and kept out of "background" crops
#: Card width range in scene pixels (log-uniform). Below ~40 px (at 416) the index glyphs are
#: 5-6 px tall and unreadable; a kiosk camera 0.7-1.2 m above the table sees cards 50-90 px wide
#: at the detector's 960 px working size.
CARD_W_RANGE = (40.0, 170.0)


@dataclass
class Corner:
    card: str
    box: tuple[float, float, float, float]  # x1, y1, x2, y2 in output pixels
    visible: float
    quad: np.ndarray = field(repr=False)  # 4x2 corners of the index box in output pixels
    deck: str = ""  # the design the card comes from
    has_index: bool = True  # False: the design prints no index there (decks.NO_INDEX)
    instance: int = -1  # which card of the scene (its two corners share it)


@dataclass
class Scene:
    image: np.ndarray  # BGR uint8
    corners: list[Corner]
    distractors: list[tuple[float, float, float, float]]  # boxes on pips/art/backs (no index)


# ------------------------------------------------------------------ textures
def _noise(rng: np.random.Generator, h: int, w: int, scale: float) -> np.ndarray:
    """Smooth value noise in [0, 1] at the given feature size (pixels)."""
    sh, sw = max(2, int(h / scale) + 2), max(2, int(w / scale) + 2)
    small = rng.random((sh, sw)).astype(np.float32)
    big = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    return np.clip(big, 0, 1)


def texture(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    kind = rng.choice(["felt", "wood", "cork", "cloth", "plain", "laminate"])
    if kind == "felt":
        base = np.array(
            rng.choice([[40, 110, 30], [110, 60, 20], [30, 30, 120], [60, 60, 60], [20, 90, 90]])
        )
        base = base * rng.uniform(0.6, 1.4)
        n = 0.6 * _noise(rng, h, w, 40) + 0.4 * rng.random((h, w)).astype(np.float32)
        img = base[None, None, :] * (0.75 + 0.5 * n[..., None])
    elif kind == "wood":
        base = np.array([30, 80, 140]) * rng.uniform(0.5, 1.5)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        ang = rng.uniform(0, math.pi)
        t = xx * math.cos(ang) + yy * math.sin(ang)
        warp = _noise(rng, h, w, 60) * rng.uniform(10, 40)
        grain = np.sin((t + warp) / rng.uniform(2, 8)) * 0.5 + 0.5
        img = base[None, None, :] * (
            0.7 + 0.35 * grain[..., None] + 0.2 * _noise(rng, h, w, 8)[..., None]
        )
    elif kind == "cork":
        base = np.array([70, 120, 170]) * rng.uniform(0.7, 1.2)
        n = 0.5 * rng.random((h, w)).astype(np.float32) + 0.5 * _noise(rng, h, w, 3)
        img = base[None, None, :] * (0.6 + 0.7 * n[..., None])
    elif kind == "cloth":
        c1 = rng.integers(0, 255, 3).astype(np.float32)
        c2 = rng.integers(0, 255, 3).astype(np.float32)
        yy, xx = np.mgrid[0:h, 0:w]
        p = int(rng.integers(4, 30))
        if rng.random() < 0.5:
            m = (((xx // p) + (yy // p)) % 2).astype(np.float32)
        else:
            m = ((xx // p) % 2).astype(np.float32) * 0.5 + ((yy // p) % 2) * 0.5
        m = cv2.GaussianBlur(m, (0, 0), 1.0)
        img = c1[None, None] * m[..., None] + c2[None, None] * (1 - m[..., None])
        img *= 0.85 + 0.3 * rng.random((h, w, 1)).astype(np.float32)
    elif kind == "laminate":
        c = rng.integers(120, 255, 3).astype(np.float32)
        img = c[None, None] * (0.9 + 0.15 * _noise(rng, h, w, 80)[..., None])
    else:
        c = rng.integers(0, 255, 3).astype(np.float32)
        img = c[None, None] * (0.9 + 0.2 * _noise(rng, h, w, 120)[..., None])
    return np.clip(img, 0, 255).astype(np.uint8)


# ------------------------------------------------------------------ cards
def _card_back(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    c = rng.integers(0, 200, 3)
    img = np.zeros((h, w, 4), np.uint8)
    img[..., :3] = 255
    m = int(w * 0.06)
    inner = np.zeros((h - 2 * m, w - 2 * m, 3), np.uint8)
    yy, xx = np.mgrid[0 : inner.shape[0], 0 : inner.shape[1]]
    p = int(rng.integers(4, 14))
    pat = (((xx + yy) // p) % 2 | ((xx - yy) // p) % 2).astype(np.uint8)
    inner[:] = c
    inner[pat == 1] = np.clip(c.astype(int) + 60, 0, 255)
    img[m : h - m, m : w - m, :3] = inner
    mask = np.zeros((h, w), np.uint8)
    cv2.rectangle(mask, (0, 0), (w - 1, h - 1), 255, -1)
    img[..., 3] = mask
    return img


@dataclass
class _Placed:
    img: np.ndarray  # BGRA card image (pre-scaled)
    matrix: np.ndarray  # 2x3 affine from card pixels to plane pixels
    card: str | None  # None = face-down / distractor
    deck: Deck  # the design (its corner-index box, which cards carry an index)


def _affine(cx: float, cy: float, angle: float, scale: float, w: int, h: int) -> np.ndarray:
    """Card pixel -> plane: rotate by angle about the card centre, scale, move to (cx, cy)."""
    c, s = math.cos(angle) * scale, math.sin(angle) * scale
    # plane = R*s*(p - centre) + (cx, cy)
    return np.array(
        [[c, -s, cx - c * w / 2 + s * h / 2], [s, c, cy - s * w / 2 - c * h / 2]], np.float64
    )


def _layout(rng: np.random.Generator, decks: list[Deck], size: int, card_w: float) -> list[_Placed]:
    """Cards as played: singles, fanned combos (pairs to straights), stacked bombs."""
    deck = decks[int(rng.integers(len(decks)))]
    placed: list[_Placed] = []
    n_groups = int(rng.integers(1, 7))
    area = size * size
    # keep the card count sensible for the card size
    max_cards = int(np.clip(area / (card_w * card_w * 1.4) * 0.9, 2, 40))
    total = 0
    for _ in range(n_groups):
        kind = rng.choice(["single", "fan", "fan", "bomb", "row"])
        k = {"single": 1, "fan": int(rng.integers(2, 9)), "bomb": int(rng.integers(4, 9))}.get(
            str(kind), int(rng.integers(2, 6))
        )
        k = min(k, max_cards - total)
        if k <= 0:
            break
        total += k
        if rng.random() < 0.15 and len(decks) > 1:
            deck = decks[int(rng.integers(len(decks)))]
        cx, cy = rng.uniform(-0.05, 1.05) * size, rng.uniform(-0.05, 1.05) * size
        angle = rng.uniform(0, 2 * math.pi)
        if kind == "bomb":
            rank = CARD_NAMES[int(rng.integers(52))][1]
            names = [str(rng.choice(list("SHCD"))) + rank for _ in range(k)]
            step = card_w * rng.uniform(0.0, 0.22)
            spread = rng.uniform(0.0, 0.12)
        elif kind == "row":
            names = [CARD_NAMES[int(rng.integers(54))] for _ in range(k)]
            step = card_w * rng.uniform(0.6, 1.15)
            spread = rng.uniform(0, 0.05)
        else:
            names = [CARD_NAMES[int(rng.integers(54))] for _ in range(k)]
            step = card_w * rng.uniform(0.15, 0.45)
            spread = rng.uniform(0.0, 0.25)
        ax = math.cos(angle + rng.normal(0, 0.15))
        ay = math.sin(angle + rng.normal(0, 0.15))
        for i, name in enumerate(names):
            off = (i - (k - 1) / 2) * step
            a = angle + (i - (k - 1) / 2) * spread + rng.normal(0, 0.04)
            face_down = rng.random() < 0.04
            src = deck.image(name)
            placed.append(
                _Placed(
                    src if not face_down else _card_back(rng, src.shape[1], src.shape[0]),
                    np.zeros((2, 3)),
                    None if face_down else name,
                    deck,
                )
            )
            placed[-1].matrix = np.array([cx + off * ax + rng.normal(0, 1), cy + off * ay, a])
    return placed


# ------------------------------------------------------------------ composition
def _hand_blob(rng: np.random.Generator, size: int, card_w: float) -> tuple[np.ndarray, np.ndarray]:
    """A hand or sleeve: a soft polygon in skin or fabric colour coming in from the border."""
    mask = np.zeros((size, size), np.uint8)
    side = int(rng.integers(4))
    t = rng.uniform(0.1, 0.9) * size
    start = [(t, -20), (size + 20, t), (t, size + 20), (-20, t)][side]
    depth = rng.uniform(0.15, 0.55) * size
    direction = [(0, 1), (-1, 0), (0, -1), (1, 0)][side]
    end = (start[0] + direction[0] * depth, start[1] + direction[1] * depth)
    width = card_w * rng.uniform(0.8, 1.8)
    cv2.line(mask, (int(start[0]), int(start[1])), (int(end[0]), int(end[1])), 255, int(width))
    cv2.ellipse(
        mask,
        (int(end[0]), int(end[1])),
        (int(width * 0.7), int(width * 0.55)),
        float(rng.uniform(0, 180)),
        0,
        360,
        255,
        -1,
    )
    if rng.random() < 0.5:
        skin = np.array([rng.uniform(60, 170), rng.uniform(110, 200), rng.uniform(150, 245)])
    else:
        skin = rng.integers(10, 230, 3).astype(np.float64)
    return mask, skin


def card_width(rng: np.random.Generator, widths: tuple[float, float] | None = None) -> float:
    """A card's width (px) drawn log-uniform over ``widths`` (default ``CARD_W_RANGE``): one
    draw of ``rng``, as scenes and corner mini-scenes have always drawn it."""
    lo, hi = widths or CARD_W_RANGE
    return float(np.exp(rng.uniform(math.log(lo), math.log(hi))))


def render_scene(
    decks: list[Deck], seed: int, size: int = 416, widths: tuple[float, float] | None = None
) -> Scene:
    """One table scene; ``widths``: the range of the cards' width (px), drawn log-uniform
    (default ``CARD_W_RANGE``: a seed gives the same scene as before ``widths`` was added)."""
    rng = np.random.default_rng(seed)
    # the plane is a bit larger than the view; the camera homography picks a quad in it
    pad = int(size * 0.12)
    ps = size + 2 * pad
    plane = texture(rng, ps, ps).astype(np.float32)
    owner = np.full((ps, ps), -1, np.int32)
    card_w = card_width(rng, widths)
    placed = _layout(rng, decks, size, card_w)

    index_polys: list[list[np.ndarray]] = []
    for i, pc in enumerate(placed):
        cx, cy, a = pc.matrix
        src = pc.img
        sh, sw = src.shape[:2]
        scale = card_w / sw
        # pre-shrink with area interpolation for clean small glyphs
        pre = max(1.0, 1.0 / (scale * 1.5))
        if pre > 1.0:
            src = cv2.resize(src, (int(sw / pre), int(sh / pre)), interpolation=cv2.INTER_AREA)
        h, w = src.shape[:2]
        m = _affine(cx + pad, cy + pad, a, card_w / w, w, h)
        pc.matrix = m
        warped = cv2.warpAffine(src, m, (ps, ps), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0, 0))
        alpha = warped[..., 3:4].astype(np.float32) / 255.0
        # soft drop shadow
        sh_off = rng.normal(0, 1.5, 2) + card_w * 0.02
        shadow = cv2.warpAffine(
            warped[..., 3], np.array([[1, 0, sh_off[0]], [0, 1, sh_off[1]]]), (ps, ps)
        )
        shadow = cv2.GaussianBlur(shadow, (0, 0), max(1.0, card_w * 0.03)).astype(np.float32)
        plane *= 1 - 0.35 * (shadow[..., None] / 255.0)
        plane = plane * (1 - alpha) + warped[..., :3].astype(np.float32) * alpha
        owner[alpha[..., 0] > 0.5] = i
        # the two index boxes in plane coordinates
        x1, y1, x2, y2 = pc.deck.index_box
        tl = np.array([[x1 * w, y1 * h], [x2 * w, y1 * h], [x2 * w, y2 * h], [x1 * w, y2 * h]])
        br = np.array([[w, h]]) - tl
        polys = []
        for q in (tl, br):
            qq = np.hstack([q, np.ones((4, 1))]) @ m.T
            polys.append(qq)
        index_polys.append(polys)

    # hands and sleeves
    n_occ = int(rng.choice([0, 0, 1, 1, 2, 3]))
    for _ in range(n_occ):
        mask, colour = _hand_blob(rng, ps, card_w)
        mask_f = cv2.GaussianBlur(mask, (0, 0), 2.0).astype(np.float32) / 255.0
        tex = colour[None, None, :] * (0.8 + 0.3 * _noise(rng, ps, ps, 30)[..., None])
        # shadow of the hand, offset
        off = cv2.warpAffine(
            mask_f, np.float32([[1, 0, card_w * 0.2], [0, 1, card_w * 0.25]]), (ps, ps)
        )
        off = cv2.GaussianBlur(off, (0, 0), card_w * 0.2)
        plane *= 1 - 0.4 * off[..., None]
        plane = plane * (1 - mask_f[..., None]) + tex * mask_f[..., None]
        owner[mask_f > 0.5] = -2

    # camera: a quad in the plane seen as the output square (perspective, zoom, small tilt)
    j = size * 0.06
    base = np.array([[pad, pad], [pad + size, pad], [pad + size, pad + size], [pad, pad + size]])
    quad = (base + rng.uniform(-j, j, (4, 2))).astype(np.float32)
    dst = np.array([[0, 0], [size, 0], [size, size], [0, size]], np.float32)
    hmat = cv2.getPerspectiveTransform(quad, dst)
    img = cv2.warpPerspective(np.clip(plane, 0, 255).astype(np.uint8), hmat, (size, size))

    corners: list[Corner] = []
    for i, pc in enumerate(placed):
        for poly in index_polys[i]:
            pm = np.zeros((ps, ps), np.uint8)
            cv2.fillPoly(pm, [np.round(poly).astype(np.int32)], 1)
            tot = int(pm.sum())
            if tot == 0:
                continue
            vis = float(((owner == i) & (pm > 0)).sum()) / tot
            q = cv2.perspectiveTransform(poly[None].astype(np.float32), hmat)[0]
            bx1, by1 = q.min(axis=0)
            bx2, by2 = q.max(axis=0)
            # the box must lie (mostly) inside the view
            ix1, iy1 = max(bx1, 0), max(by1, 0)
            ix2, iy2 = min(bx2, size), min(by2, size)
            if ix2 <= ix1 or iy2 <= iy1:
                continue
            inside = (ix2 - ix1) * (iy2 - iy1) / max(1e-6, (bx2 - bx1) * (by2 - by1))
            vis *= inside
            if pc.card is None:
                continue
            box = (float(ix1), float(iy1), float(ix2), float(iy2))
            corners.append(
                Corner(pc.card, box, vis, q, pc.deck.name, pc.deck.has_index(pc.card), i)
            )

    # distractor boxes: index-sized boxes on card bodies (pips, art), backs and the table
    distractors: list[tuple[float, float, float, float]] = []
    if corners:
        bw = float(np.median([c.box[2] - c.box[0] for c in corners]))
        bh = float(np.median([c.box[3] - c.box[1] for c in corners]))
        for _ in range(12):
            x, y = rng.uniform(0, size - bw), rng.uniform(0, size - bh)
            box = (x, y, x + bw, y + bh)
            if all(_iou(box, c.box) < 0.1 for c in corners):
                distractors.append(box)

    img = _degrade(rng, img, card_w)
    return Scene(img, corners, distractors)


def _iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / ua if ua > 0 else 0.0


def _degrade(rng: np.random.Generator, img: np.ndarray, card_w: float) -> np.ndarray:
    h, w = img.shape[:2]
    f = img.astype(np.float32)
    # lighting gradient + colour temperature
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    ang = rng.uniform(0, 2 * math.pi)
    g = (xx * math.cos(ang) + yy * math.sin(ang)) / max(h, w)
    light = rng.uniform(0.55, 1.15) + rng.uniform(-0.35, 0.35) * g
    f *= light[..., None]
    f *= rng.uniform(0.85, 1.15, 3)[None, None, :]
    # cast shadow (soft dark blob)
    if rng.random() < 0.35:
        m = np.zeros((h, w), np.float32)
        cv2.ellipse(
            m,
            (int(rng.uniform(0, w)), int(rng.uniform(0, h))),
            (int(rng.uniform(0.1, 0.5) * w), int(rng.uniform(0.05, 0.3) * h)),
            float(rng.uniform(0, 180)),
            0,
            360,
            1.0,
            -1,
        )
        m = cv2.GaussianBlur(m, (0, 0), rng.uniform(5, 30))
        f *= 1 - rng.uniform(0.2, 0.6) * m[..., None]
    # glare
    if rng.random() < 0.3:
        m = np.zeros((h, w), np.float32)
        cv2.ellipse(
            m,
            (int(rng.uniform(0, w)), int(rng.uniform(0, h))),
            (int(rng.uniform(0.03, 0.2) * w), int(rng.uniform(0.02, 0.12) * h)),
            float(rng.uniform(0, 180)),
            0,
            360,
            1.0,
            -1,
        )
        m = cv2.GaussianBlur(m, (0, 0), rng.uniform(3, 15))
        f += rng.uniform(80, 220) * m[..., None]
    # blur: defocus or motion
    r = rng.random()
    if r < 0.3:
        f = cv2.GaussianBlur(f, (0, 0), rng.uniform(0.4, 1.3))
    elif r < 0.4:
        k = int(rng.integers(3, 7))
        kern = np.zeros((k, k), np.float32)
        kern[k // 2, :] = 1.0 / k
        rot = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), float(rng.uniform(0, 180)), 1)
        kern = cv2.warpAffine(kern, rot, (k, k))
        kern /= max(kern.sum(), 1e-6)
        f = cv2.filter2D(f, -1, kern)
    # sensor noise
    f += rng.normal(0, rng.uniform(0, 9), f.shape).astype(np.float32)
    out = np.clip(f, 0, 255).astype(np.uint8)
    # JPEG
    q = int(rng.integers(30, 96))
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, q])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else out
