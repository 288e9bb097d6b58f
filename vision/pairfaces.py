"""A card's suit from its face between its two corner indices (deck enrolment, run time).

Plastic (held out of detector training) prints a corner pip of 4-5 px at the kiosk's camera,
and its club and spade pips there look alike to the classifier and to the enrolled suit pictures
(vision/enrol.py ``SuitTemplates``): its clubs and spades were still swapped in plays. The same
card's body pips, 10-15 px, are plainly three-lobed or pointed. A card seen by both its corner
indices shows that face: cut it in the frame the two index centres define (a similarity that
puts them at fixed points, so no calibration, card size or card outline is needed, and a face
cut at enrolment and one cut at run time line up), and compare it with the enrolled faces of
the same rank in both suits of its colour.

* Enrolment (``faces_from_shot``): in each suit frame, every card whose two corners were both
  enrolled gives its face (``FACE`` px square, grey). Kept in the deck profile as PNG.
* Run time (``PairFaces.evidence``): the face between two corners read as the same rank of one
  colour, searched +-``SHIFT`` px and both ways up against the mean of the two enrolled faces;
  there, inside both enrolled cards' outlines, the standardised face is projected on the
  difference of the two standardised faces: +0.5 where it is the first card, -0.5 the second.
  With how alike the face is to the enrolled pair (normalised correlation), which says whether
  it is that card at all (covered, or not a card).

The table pipeline turns the projection into nats (vision/pipeline.py ``_pair_faces``).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

#: side of a face picture (px); the two index centres sit at ``(c - HALF, c - HALF)`` and
#: ``(c + HALF, c + HALF)``, c its middle: the card (63 x 88 mm, indices ~75-82 mm apart) fits
FACE = 72
HALF = 19.0
#: run-time search each way (px) for the corner boxes' jitter
SHIFT = 3
#: the enrolled card's outline is eroded by this (px) before comparing
ERODE = 5
#: at enrolment, a card's two corners lie within this share of the frame's median spacing
SPACING_TOL = 0.15


class PairFaceError(ValueError):
    """Face pictures in a deck profile that cannot be used."""


def face_between(
    gray: np.ndarray, p: Sequence[float], q: Sequence[float], margin: int = 0
) -> np.ndarray:
    """The face of the card whose two corner index centres lie at ``p`` and ``q`` (image px) in
    a grey image: ``FACE`` px square (plus ``margin`` each side), ``p`` top left."""
    a = np.asarray(p, np.float32)
    b = np.asarray(q, np.float32)
    d = b - a
    if float(np.hypot(*d)) < 1e-3:
        raise ValueError("face_between: the two corners coincide")
    src = np.float32([a, b, a + np.float32([-d[1], d[0]])])
    c = (FACE - 1) / 2 + margin
    lo, hi = c - HALF, c + HALF
    dst = np.float32([[lo, lo], [hi, hi], [lo - 2 * HALF, lo + 2 * HALF]])
    m = cv2.getAffineTransform(src, dst)
    side = FACE + 2 * margin
    return cv2.warpAffine(gray, m, (side, side), flags=cv2.INTER_LINEAR, borderValue=128)


def card_area(picture: np.ndarray) -> np.ndarray | None:
    """The enrolled card's own pixels in its face picture (the bright blob at the middle, its
    convex hull, eroded): neighbours and table are left out. None when no card is there."""
    _, light = cv2.threshold(picture, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    _, labels = cv2.connectedComponents(light)
    h = FACE // 2
    mid = labels[h - 10 : h + 10, h - 10 : h + 10].ravel()
    mid = mid[mid > 0]
    if not len(mid):
        return None
    blob = (labels == np.bincount(mid).argmax()).astype(np.uint8)
    contours, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    hull = cv2.convexHull(max(contours, key=cv2.contourArea))
    area = np.zeros_like(blob)
    cv2.fillConvexPoly(area, hull, 1)
    area = cv2.erode(area, np.ones((ERODE, ERODE), np.uint8)).astype(bool)
    return area if area.sum() >= FACE * FACE // 8 else None


def _unit(x: np.ndarray, where: np.ndarray) -> np.ndarray:
    v = x[where].astype(np.float32)
    v -= v.mean()
    return v / (float(np.linalg.norm(v)) + 1e-6)


def faces_from_shot(
    gray: np.ndarray, corners: Iterable[tuple[str, Sequence[float]]]
) -> dict[str, np.ndarray]:
    """Face pictures of the cards of one enrolment frame from its named corners ``(card, centre
    px)``: every card named at exactly two corners (one deck: a card's two indices) lying the
    frame's usual corner spacing apart (within ``SPACING_TOL`` of the median: two corners of
    different cards named alike by a rank misread give no face)."""
    by: dict[str, list[Sequence[float]]] = {}
    for card, centre in corners:
        by.setdefault(card, []).append(centre)
    pairs = {c: pts for c, pts in by.items() if len(pts) == 2}
    gaps = {c: float(np.hypot(*np.subtract(pts[0], pts[1]))) for c, pts in pairs.items()}
    if not gaps:
        return {}
    usual = float(np.median(list(gaps.values())))
    return {
        c: face_between(gray, pts[0], pts[1])
        for c, pts in pairs.items()
        if gaps[c] >= 8 and abs(gaps[c] - usual) <= SPACING_TOL * usual
    }


@dataclass
class PairFaces:
    """Enrolled face pictures (card -> ``FACE`` px grey square) and what run time needs."""

    pictures: dict[str, np.ndarray] = field(default_factory=dict)
    _pairs: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)

    def __bool__(self) -> bool:
        return bool(self.pictures)

    def _pair(self, a: str, b: str) -> Any:
        """Per way up: the common area and the two standardised faces (None: not comparable)."""
        key = (a, b)
        if key not in self._pairs:
            got = None
            pa, pb = self.pictures.get(a), self.pictures.get(b)
            if pa is not None and pb is not None:
                ma, mb = card_area(pa), card_area(pb)
                if ma is not None and mb is not None and (ma & mb).sum() >= FACE * FACE // 8:
                    got = []
                    for k in (0, 2):
                        m = np.rot90(ma & mb, k)
                        ua, ub = _unit(np.rot90(pa, k), m), _unit(np.rot90(pb, k), m)
                        mean = ua + ub
                        mean /= float(np.linalg.norm(mean)) + 1e-6
                        got.append((m, ua, ub, mean))
            self._pairs[key] = got
        return self._pairs[key]

    def evidence(self, face: np.ndarray, a: str, b: str) -> tuple[float, float] | None:
        """How much a run-time face (``face_between`` with margin ``SHIFT``) is card ``a``
        rather than ``b``: the projection (+0.5: ``a``'s face, -0.5: ``b``'s) and the likeness
        (normalised correlation with the two faces' mean, at the best shift and way up). None
        when the profile lacks either face."""
        pair = self._pair(a, b)
        if not pair:
            return None
        best: tuple[float, float] | None = None
        for m, ua, ub, mean in pair:
            for dy in range(2 * SHIFT + 1):
                for dx in range(2 * SHIFT + 1):
                    f = _unit(face[dy : dy + FACE, dx : dx + FACE], m)
                    like = float(f @ mean)
                    if best is None or like > best[1]:
                        w = ua - ub
                        e = float((f - (ua + ub) / 2) @ w / (float(w @ w) + 1e-9))
                        best = (e, like)
        return best

    def to_json(self) -> dict[str, Any]:
        out = {}
        for card, pic in self.pictures.items():
            ok, png = cv2.imencode(".png", np.ascontiguousarray(pic, np.uint8))
            if not ok:  # pragma: no cover - OpenCV encodes any uint8 square
                raise PairFaceError(f"face picture of {card}: cannot be encoded")
            out[card] = base64.b64encode(png.tobytes()).decode()
        return {"size": FACE, "half": HALF, "pictures": out}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> PairFaces:
        if int(raw.get("size", 0)) != FACE or float(raw.get("half", 0)) != HALF:
            raise PairFaceError(
                f"face pictures of size {raw.get('size')!r}, {FACE} needed; enrol the deck again"
            )
        pics = {}
        for card, text in dict(raw["pictures"]).items():
            buf = np.frombuffer(base64.b64decode(text), np.uint8)
            pic = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE) if buf.size else None
            if pic is None or pic.shape != (FACE, FACE):
                raise PairFaceError(f"face picture of {card} is damaged; enrol the deck again")
            pics[str(card)] = pic
        return cls(pics)
