"""Court cards read by their whole face, for decks whose J, Q and K print no rank index.

Some designs (guyenne-classic: a full-bleed figure and a suit sign, no letter) give the corner
detector nothing to find on their court cards, so a play of them is never seen. Such a deck is
shown to the kiosk once, at enrolment: one *court frame* per suit, that suit's J, Q and K laid
apart in one row, J to K from left to right as the camera sees them, the table's markers in
view. ``faces_from_frame`` cuts each card out of the table's top-down view (the calibration
from the same frame) as an upright picture; ``CourtFaces.find`` looks for those pictures, at any
angle, in a top-down view of a zone (normalised cross-correlation over the whole face). A card
whose face lies fully or mostly in view is found whole; the lower cards of a fan under it by
the strip of each that shows beside it, and so are those under a number card seen whole (its two
corner indices give its place and angle: ``find(tops=...)``). A strip no face fits surely is a
card that *may* lie there (``FaceMatch.maybe``), for the referee to add only to a play that is
illegal without it.

Jokers the same way: a deck whose jokers print no usable corner index (only a picture, or a word
down the side) gives the corner detector nothing there either. ``jokers_from_frame`` cuts both
from the enrolment's jokers frame; the big joker (HR) is told from the small one (SB) by colour
(``colourful``: a small joker is often printed in black ink, the big one in colour, the same
drawing), else by where they lie (SB on the camera's left). Their pictures join the court
faces: one search, one set of pictures (``CourtFaces``), whatever cards they are. A picture in
black ink makes dark ink count where ``find`` decides to look (``CourtFaces.dark_ink``). Two
pictures of one drawing in two colours (*colour twins*, ``CourtFaces.twin_of``: jokers often are)
correlate nearly alike in a narrow strip, so between twins the colours seen decide, a face's
or a strip's (``CourtFaces._by_colour``); pictures of different drawings are not affected.
Figures: models/README.md ("Court cards by their whole face"), bench/court_faces.py.

Pure OpenCV + numpy, no model.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np

__all__ = [
    "COURT_RANKS",
    "JOKERS",
    "FACE_PX_PER_MM",
    "CourtFaces",
    "FaceError",
    "FaceMatch",
    "colourful",
    "faces_from_frame",
    "jokers_from_frame",
    "table_view",
]

COURT_RANKS = "JQK"
#: the small and the big joker (CONTRACT notation); a deck whose jokers print no usable corner
#: index (only a picture, or a word down the side) has them read by their face too
JOKERS = ("SB", "HR")
SUITS = {"S": "spades", "H": "hearts", "C": "clubs", "D": "diamonds"}
#: the top-down view faces are kept and looked for in (a camera over a table sees a card ~45-70
#: px wide, 0.7-1.1 px/mm; 0.5 keeps the figure's large shapes and costs a quarter of 1 px/mm)
FACE_PX_PER_MM = 0.5
#: angles tried (degrees): every 15
ANGLES = tuple(range(0, 360, 15))
#: a face is taken when its correlation reaches this (guyenne-classic frames of rendered games,
#: 2026-12-01: the card in view 0.53-0.93; other court faces at the same spot up to 0.40 with
#: the deck's own pictures; zones of number cards up to 0.23)
MIN_SCORE = 0.45
#: the best face at a spot must beat every other card's there by this much (the 12 pictures of
#: one deck share a style; two about as good mean neither is sure)
MARGIN = 0.06
#: a group of cards is looked at only when ink (saturation >= ``INK_SAT``) covers this share of
#: one card's face in it: a court figure is mostly ink, a number card white with a few pips
INK_SAT = 90
INK_SHARE = 0.15
#: ... or, for a deck with a picture drawn in black (a small joker printed in one ink), dark ink
#: too (value under ``INK_DARK``): counted only when one of the deck's pictures is such a one
#: (``CourtFaces.dark_ink``), so a deck of colourful court figures is searched as before
INK_DARK = 80
#: ... and a group must hold at least this share of the least-inked picture's own ink, when
#: that is less than ``INK_SHARE`` (the small joker of proc-serif-picjokers: 0.2 of its face
#: dark ink as enrolled, 0.14 of a card's area in a zone view of a rendered game, seed 5)
INK_SELF = 0.5
#: angles tried around a group's outline (degrees either side)
ANGLE_SLACK = 16.0
#: ... and, where none of them finds a face, every angle in a group this many cards' faces
#: large (cards touching at other angles)
TWO_CARDS = 1.3
#: searches remembered, and how alike (mean grey difference of 12 x 12 thumbnails) a part of
#: the table must look to reuse one
MEMO = 32
MEMO_DIFF = 4.0
#: a fan's lower card: its strip is looked for where something lies 10-130 mm beyond a side of
#: a face found whole (a fan of eight cards 17 mm apart reaches 119 mm; at 40 mm a five-card
#: bomb was read as three, seed 9608; a strip under 10 mm shows too little of a figure, and one
#: that would leave a sliver under 10 mm beyond it is not tried), and taken at this correlation
#: (measured on the guyenne bench games)
STRIP_MIN_MM = 10.0
STRIP_MAX_MM = 130.0
STRIP_SCORE = 0.5
#: ... or down to ``STRIP_FLOOR`` when no other card comes within ``STRIP_MARGIN`` (a green
#: figure on a green felt shows less of itself)
STRIP_FLOOR = 0.4
STRIP_MARGIN = 0.1
STRIP_STEP = 2.0  # a sliver this narrow (px of the view) beyond a strip is none
#: strip widths tried, px of the view apart (2 mm: at 4 mm apart, the stacked SB SB of game
#: 48015, tigullio, its lower joker's strip 17 mm wide, fitted 0.16 at 14 mm and was no card;
#: 0.78-0.87 at 16-18 mm)
STRIP_WIDTH_STEP = 1.0
#: ... up to this far (mm) past where something is seen beyond the side: the strip's far edge is
#: blurred, and the table test there takes it 1-2 mm short (48015's 17 mm strip ran 16 mm)
STRIP_PAST = 3.0
#: a fan's lower card lies under the same band as the card above it: its strip must be this
#: much card, not table (a group of number cards touching the fan from aside covers 0.64-0.78
#: of the strips it would give, a fan's own strips 0.99-1.0; seed 9603, 2026-12-01)
STRIP_COVER = 0.9
#: a strip that is no sure card but fits some face at least this well is a card that *may* lie
#: there (``FaceMatch.maybe``): the referee adds it only to make an illegal play legal, at
#: ``MAYBE_COST`` nats for the face that fits best (more for the others, ``STRIP_NATS`` per unit
#: of correlation below it). Two such strips (a five-card bomb read as three) fit the referee's
#: re-reading budget (3 nats).
MAYBE_FLOOR = 0.3
MAYBE_COST = 1.0
#: a strip's runner-ups for the referee: nats per unit of correlation below the best, kept up
#: to ``ALT_NATS`` (a camera reading that is no legal play is read again with them)
STRIP_NATS = 20.0
ALT_NATS = 4.0
#: a number card's corner index lies this far (mm, its middle) inside the card's long edge
#: (guyenne-classic, seed 9408: 4.8 mm): a fan's lower number card showing its index ends there
INDEX_INSET_MM = 5.0
#: a strip no face fits surely, before a number card's index, is that number card's strip unless
#: its ground is a figure's: a number card's long side shows white card with a few pips, a court
#: card's its figure. The strip is a court card's when its share of white (``_white``) exceeds
#: that of the best face's picture laid there by at most this (guyenne-classic 49223, 1280x720:
#: HK's strip under a fan, 28 view-px before a 9's index, 0.17 white against its picture's 0.14,
#: +0.03; the unsure strips passed over in 49223 and 49228, number cards' among them, +0.10 to
#: +0.74; measured 2026-12-07 on those two development games)
STRIP_GROUND_GAP = 0.06
#: two pictures alike in grey or in ink at least this much (normalised cross-correlation of
#: their grey versions, or of their ink levels ``_ink_level``, either way up, shifted up to
#: ``TWIN_SHIFT`` px) are *colour twins*: one drawing printed in two colours (the small joker in
#: black, the big one in colour). Measured 2026-12-05 at 0.5 px/mm: proc-serif-picjokers' SB and
#: HR as enrolled on two tables 0.86 and 0.94 (the grey of red and yellow is not that of black
#: and white), tigullio's 0.77 and 0.90; guyenne-classic's 12 court faces at most 0.68 (CQ, HQ,
#: one table). Between twins the colour decides (``CourtFaces._by_colour``): tigullio's HR seen
#: whole fitted 0.72, its SB 0.67 at the same spot, under the 0.06 margin (seed 48010).
#: 2026-12-06: tigullio's jokers enrolled at 2304x1296 for game 48651 came to 0.74 in grey and
#: were no twins, so W's SB lying on a card was under the margin and never seen; in ink 0.77.
#: Guyenne-classic's jokers 0.85-0.87 in ink, its court faces at most 0.71 (DQ, SQ). Not
#: enough alone: tigullio's as enrolled for game 48701 at 2304x1296 came to 0.73 in grey and
#: 0.69 in ink (two jokers alike are kept as one with a doubt: ``_sure``)
TWIN_GREY = 0.75
TWIN_SHIFT = 3
#: ... when the two pictures' chroma (max - min of B, G, R) differs from what is seen by this
#: much more for one twin than the other (mean over the face or strip where they differ, 0-255)
COLOUR_GAP = 6.0
#: ... measured where the two pictures' chroma differs by this much (tigullio's jokers: a small
#: hat on a white card, over the whole face HR 11.8 and SB 17.2 from an HR seen, seed 48010)
COLOUR_PART = 40.0
#: share of a face's area that must be card (not the bare table) where it is taken
MIN_COVER = 0.85
#: a pixel is not the bare table when a colour differs from the table's by this much (0-255)
LIFT = 40


def _ncc(a: np.ndarray, b: np.ndarray) -> float:
    """Normalised cross-correlation of two same-shaped pictures (all colours together)."""
    a = a.reshape(-1) - a.mean()
    b = b.reshape(-1) - b.mean()
    den = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / den) if den > 1e-6 else -1.0


def _white(bgr: np.ndarray, ref: float) -> float:
    """The share of ``bgr`` (float, H x W x 3) that is white card: at least 0.8 of ``ref`` (the
    white of the picture it comes from) in every colour, and grey to 0.15 of ``ref``."""
    lo = bgr.min(axis=-1)
    return float(((lo > 0.8 * ref) & (bgr.max(axis=-1) - lo < 0.15 * ref)).mean())


def _ink(hsv: np.ndarray, dark: bool) -> np.ndarray:
    """A picture's ink: saturated colour (``INK_SAT``), and with ``dark`` dark ink as well."""
    out = (hsv[:, :, 1] >= INK_SAT) & (hsv[:, :, 2] >= 60)
    return out | (hsv[:, :, 2] < INK_DARK) if dark else out


def colourful(picture: np.ndarray) -> float:
    """The share of a picture in saturated colour (a big joker is printed in colour, a small
    one often in black alone), inside a rim of a tenth of its size (a card cut from a frame
    may show a sliver of felt at its edge: tigullio's black joker 0.05 of it in colour with
    the rim, its red one 0.10)."""
    h, w = picture.shape[:2]
    dy, dx = h // 10, w // 10
    hsv = cv2.cvtColor(picture[dy : h - dy, dx : w - dx], cv2.COLOR_BGR2HSV)
    return float(_ink(hsv, False).mean())


def _alike(a: np.ndarray, b: np.ndarray, shift: int = TWIN_SHIFT) -> float:
    """The best normalised cross-correlation of two same-sized grey pictures, one shifted up
    to ``shift`` px either way (two cards cut from frames lie a pixel or two apart)."""
    padded = cv2.copyMakeBorder(np.ascontiguousarray(b), shift, shift, shift, shift,
                                cv2.BORDER_REPLICATE)  # fmt: skip
    r = cv2.matchTemplate(padded, np.ascontiguousarray(a), cv2.TM_CCOEFF_NORMED)
    return float(np.nan_to_num(r, nan=-1.0).max())


def _grey(picture: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(picture, cv2.COLOR_BGR2GRAY).astype(np.float32)


def _ink_level(picture: np.ndarray) -> np.ndarray:
    """How much ink each pixel holds, whatever its colour: darkness or saturation, whichever is
    more (a black line and a red, yellow or blue one alike; white paper none)."""
    hsv = cv2.cvtColor(picture, cv2.COLOR_BGR2HSV).astype(np.float32)
    return np.maximum(255.0 - hsv[:, :, 2], hsv[:, :, 1])


def _not_table(view: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Pixels that are not the bare table (colour ``table``): brighter or another hue; a shadow
    (the table darker, each colour by about the same ratio) is table."""
    level = np.clip(np.round(table), 0, 255).astype(np.uint8)
    diff = cv2.absdiff(view, np.full_like(view, level)).max(axis=2)
    fg = (diff > LIFT).astype(np.uint8)
    ys, xs = np.nonzero(fg)  # the shadow test only where it matters (most of a view is table)
    ratio = view[ys, xs].astype(np.float32) / np.maximum(table.astype(np.float32), 1.0)
    hi, lo = ratio.max(axis=1), ratio.min(axis=1)
    shadow = (hi < 0.95) & (hi - lo < 0.12)
    fg[ys[shadow], xs[shadow]] = 0
    # a figure's dark parts look like the felt: close small gaps, then fill what fg surrounds
    fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    # (a rim of table around the view, so the fill reaches all the table even with a card in a
    # corner of the view)
    filled = cv2.copyMakeBorder(fg, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
    mask = np.zeros((filled.shape[0] + 2, filled.shape[1] + 2), np.uint8)
    cv2.floodFill(filled, mask, (0, 0), 1)  # the table, reached from outside
    holes = filled[1:-1, 1:-1] == 0
    return (fg > 0) | holes


def _along_across(
    point_mm: Sequence[float], x: float, y: float, ux: float, uy: float
) -> tuple[float, float]:
    """A table point from ``(x, y)``: along the unit vector ``(ux, uy)`` and across it."""
    dx, dy = float(point_mm[0]) - x, float(point_mm[1]) - y
    return dx * ux + dy * uy, -dx * uy + dy * ux


class FaceError(ValueError):
    """A court frame the faces cannot be cut from (named with what to do)."""


@dataclass
class FaceMatch:
    card: str
    score: float
    centre_mm: tuple[float, float]  # in the table's mm, the face's middle
    angle: float  # degrees
    #: the runner-up readings ``(card or "none", cost in nats)`` of a card seen by a strip
    alts: tuple[tuple[str, float], ...] = ()
    #: a fan's lower card: the strip of it in view, ``(x, y, ux, uy, half width, half height)``
    #: in table mm (its middle, its width axis pointing away from the card above it, its half
    #: sizes)
    strip: tuple[float, float, float, float, float, float] | None = None
    #: a card that may lie there (a strip no face fits surely): ``card`` is the likeliest and
    #: ``alts`` every card it may be, with what adding it costs (nats), that one first
    maybe: bool = False

    def covers(self, point_mm: Sequence[float], card_mm: Sequence[float]) -> bool:
        """Whether a table point lies on this card where it is in view: its strip, or (a face
        found whole) its face, ``card_mm`` the deck's card size."""
        if self.strip is not None:
            x, y, ux, uy, hw, hh = self.strip
        else:
            a = math.radians(self.angle)
            x, y, ux, uy = self.centre_mm[0], self.centre_mm[1], math.cos(a), -math.sin(a)
            hw, hh = card_mm[0] / 2, card_mm[1] / 2
        along, across = _along_across(point_mm, x, y, ux, uy)
        return abs(along) <= hw and abs(across) <= hh

    def shows_index(self, point_mm: Sequence[float], slack: float = 2.0) -> bool:
        """Whether a corner index at this table point is this strip's own card's: one lying on
        the strip's outer half (away from the card above it). A fanned card's visible index lies
        by its free edge, and the walk along a fan takes a strip a few mm narrower or wider than
        it shows, so an index by the near edge is the neighbouring card's: seed 9808, W's CQ DQ
        DQ H5 under a D5, where the H5's index lay 1 mm inside the second DQ's strip, on its
        near side, and that DQ was dropped as a number card."""
        if self.strip is None:
            return False
        x, y, ux, uy, hw, hh = self.strip
        along, across = _along_across(point_mm, x, y, ux, uy)
        return -slack <= along <= hw + slack and abs(across) <= hh + slack


def table_view(
    image: np.ndarray, calibration: Any, box_mm: Sequence[float], px_per_mm: float
) -> np.ndarray:
    """The part ``[x0, y0, x1, y1]`` (table mm) of the table seen from above at ``px_per_mm``."""
    x0, y0, x1, y1 = (float(v) for v in box_mm)
    w = max(1, int(round((x1 - x0) * px_per_mm)))
    h = max(1, int(round((y1 - y0) * px_per_mm)))
    # view px -> table mm -> image px
    to_mm = np.array([[1 / px_per_mm, 0, x0], [0, 1 / px_per_mm, y0], [0, 0, 1]], np.float64)
    m = np.asarray(calibration.inverse, np.float64) @ to_mm
    return cv2.warpPerspective(
        image,
        m,
        (w, h),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_REPLICATE,
    )


def _angles(rect: Any) -> set[float]:
    """The angles (of ``ANGLES``) within ``ANGLE_SLACK`` of the sides of a group of cards'
    outline (``cv2.minAreaRect``): cards laid together lie about alike, a fan's outline along
    its cards; each of the four ways round, as a card lies either way up."""
    base = float(rect[2]) % 90.0
    out = set()
    for a in ANGLES:
        off = abs(((-a - base) % 90.0 + 45.0) % 90.0 - 45.0)  # cv2 turns counter-clockwise
        if off <= ANGLE_SLACK:
            out.add(a)
    return out


def _along_outline(labels: np.ndarray, c: np.ndarray, angle: float, slack: float = 8.0) -> float:
    """``angle`` turned onto the nearest side of the outline (``cv2.minAreaRect``) of the group
    of cards at view point ``c`` (``labels``: the view's groups, 0 the table), when one lies
    within ``slack`` degrees (a card's angle from its two corner indices is a few degrees off;
    a fan's outline runs along its cards)."""
    x, y = int(round(c[0])), int(round(c[1]))
    if not (0 <= x < labels.shape[1] and 0 <= y < labels.shape[0]) or not labels[y, x]:
        return angle
    ys, xs = np.nonzero(labels == labels[y, x])
    pts = np.column_stack([xs, ys]).astype(np.float32)
    base = float(cv2.minAreaRect(pts)[2])
    # cv2 turns counter-clockwise in a y-down view: a side at ``-base`` (mod 90) in our angles
    off = ((-base - angle) % 90.0 + 45.0) % 90.0 - 45.0
    return angle + off if abs(off) <= slack else angle


def _turned(face: np.ndarray, angle: float) -> tuple[np.ndarray, np.ndarray]:
    h, w = face.shape[:2]
    d = int(math.ceil(math.hypot(h, w)))
    m = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    m[0, 2] += (d - w) / 2
    m[1, 2] += (d - h) / 2
    pic = cv2.warpAffine(face, m, (d, d), flags=cv2.INTER_LINEAR)
    mask = cv2.warpAffine(np.full((h, w), 255, np.uint8), m, (d, d), flags=cv2.INTER_NEAREST)
    mask = cv2.erode(mask, np.ones((3, 3), np.uint8))  # no blended rim
    return pic, mask


@dataclass
class CourtFaces:
    """Upright pictures (BGR, ``FACE_PX_PER_MM``) of a deck's court cards, by card."""

    pictures: dict[str, np.ndarray] = field(default_factory=dict)
    card_mm: tuple[float, float] = (63.0, 88.0)  # measured from the court frames
    min_score: float = MIN_SCORE
    _turns: dict[str, list[tuple[float, np.ndarray, np.ndarray]]] = field(
        default_factory=dict, repr=False
    )
    #: the latest searches: (where, crop shape, 12 x 12 grey thumbnail, faces found); the
    #: pipeline looks at a zone every frame while its change settles
    _memo: list[tuple[tuple[float, float], tuple[int, ...], np.ndarray, list[FaceMatch]]] = field(
        default_factory=list, repr=False
    )
    #: (the pictures it was measured on, dark ink counts, the ink share a group needs)
    _gate: tuple[tuple[tuple[str, int], ...], bool, float] | None = field(default=None, repr=False)
    #: (the pictures it was measured on, each card's colour twin)
    _twins: tuple[tuple[tuple[str, int], ...], dict[str, tuple[str, float]]] | None = field(
        default=None, repr=False
    )

    def _recall(
        self, where: tuple[float, float], shape: tuple[int, ...], small: np.ndarray
    ) -> list[FaceMatch] | None:
        for w, sh, sm, got in reversed(self._memo):
            if (
                sh == shape
                and math.dist(w, where) < 1.0
                and float(np.abs(sm - small).mean()) < MEMO_DIFF
            ):
                return got
        return None

    def __bool__(self) -> bool:
        return bool(self.pictures)

    @property
    def dark_ink(self) -> bool:
        """Whether a picture is drawn mostly in dark ink, not colour (a small joker printed
        black on white): then dark ink counts in ``find``'s test of where to look."""
        return self._ink_gate()[0]

    def ink_share(self) -> float:
        """How much of a card's face must be ink for ``find`` to look at a group of cards:
        ``INK_SHARE``, or less for a deck with a picture of less ink (``INK_SELF`` of its own
        share, a small joker drawn in black lines on white)."""
        return self._ink_gate()[1]

    def _ink_gate(self) -> tuple[bool, float]:
        key = tuple(sorted((c, id(p)) for c, p in self.pictures.items()))
        if self._gate is None or self._gate[0] != key:
            dark, share = False, INK_SHARE
            for pic in self.pictures.values():
                hsv = cv2.cvtColor(pic, cv2.COLOR_BGR2HSV)
                colour, inked = float(_ink(hsv, False).mean()), float(_ink(hsv, True).mean())
                if colour < INK_SHARE:  # a picture in black ink: dark ink counts
                    dark = True
                    share = min(share, INK_SELF * inked)
            self._gate = (key, dark, share)
        return self._gate[1], self._gate[2]

    def turns(self, card: str) -> list[tuple[float, np.ndarray, np.ndarray]]:
        got = self._turns.get(card)
        if got is None:
            got = self._turns[card] = [(a, *_turned(self.pictures[card], a)) for a in ANGLES]
        return got

    def find(
        self,
        view: np.ndarray,
        origin_mm: Sequence[float] = (0.0, 0.0),
        tops: Sequence[tuple[Sequence[float], float]] = (),
        indices: Sequence[Sequence[float]] = (),
    ) -> list[FaceMatch]:
        """The court faces in a top-down ``view`` (``FACE_PX_PER_MM``; its top-left corner at
        ``origin_mm`` on the table; mostly bare table, whose colour is the view's median): best
        first, each spot once. Only where something lies on the table is looked at, and a face
        counts only where what lies under it is card, not table (a red figure correlates with
        a brown felt beside a white card edge).

        ``tops``: other cards seen whole (a number card by its two corner indices): ``(middle
        in table mm, angle in degrees of its width axis as ``FaceMatch.angle``)``; the court
        cards of a fan under one are found by their strips as under a face.

        ``indices``: where number cards' corner indices lie (table mm): a fan's lower number
        card shows its index by its strip's free edge, so a strip there is no court card's,
        and the court strips beside it end where it begins (``_under``)."""
        if not self.pictures:
            return []
        table = np.median(view.reshape(-1, 3), axis=0)
        blur = cv2.GaussianBlur(view, (3, 3), 0)
        fg = _not_table(blur, table)
        n, labels, stats, _ = cv2.connectedComponentsWithStats(fg.astype(np.uint8), connectivity=8)
        hsv = cv2.cvtColor(view, cv2.COLOR_BGR2HSV)
        dark, share = self._ink_gate()
        inked = _ink(hsv, dark)
        w_px = self.card_mm[0] * FACE_PX_PER_MM
        h_px = self.card_mm[1] * FACE_PX_PER_MM
        d = int(math.ceil(math.hypot(w_px, h_px))) + 2
        found: list[FaceMatch] = []
        for i in range(1, n):
            if stats[i, cv2.CC_STAT_AREA] < 0.4 * w_px * h_px:
                continue  # less than a card's face in view
            part = labels == i
            if np.count_nonzero(inked & part) < share * w_px * h_px:
                continue  # white cards with a few pips: no figure here
            x, y, w, h = (int(v) for v in stats[i, :4])
            x0, y0 = max(0, x - d // 4), max(0, y - d // 4)
            x1, y1 = min(view.shape[1], x + w + d // 4), min(view.shape[0], y + h + d // 4)
            crop = view[y0:y1, x0:x1]
            small = cv2.resize(cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY), (12, 12)).astype(np.int16)
            where = (origin_mm[0] + x0 / FACE_PX_PER_MM, origin_mm[1] + y0 / FACE_PX_PER_MM)
            got = self._recall(where, crop.shape, small)
            if got is None:
                pts = np.column_stack(np.nonzero(part)[::-1]).astype(np.float32)
                cfg = fg[y0:y1, x0:x1]
                got = self._sure(
                    self._find_in(crop, cfg, where, _angles(cv2.minAreaRect(pts))), crop, where
                )
                if not got and stats[i, cv2.CC_STAT_AREA] > TWO_CARDS * w_px * h_px:
                    # cards touching at other angles: their outline says nothing of a card's
                    # angle (seed 48004: a joker at 270 degrees against a king's corner)
                    got = self._sure(self._find_in(crop, cfg, where), crop, where)
                for m in list(got):
                    got += self._under(crop, cfg, where, m, indices=indices)
                self._memo.append((where, crop.shape, small, got))
                del self._memo[:-MEMO]
            found += got
        near = self.card_mm[0] / 2
        for centre, angle in tops:
            if any(math.dist(centre, m.centre_mm) < near for m in found):
                continue  # a face lies there (a court card's corner read as a number)
            pseudo = FaceMatch("", 0.0, (float(centre[0]), float(centre[1])), float(angle))
            found += self._under(view, fg, origin_mm, pseudo, labels, indices)
        # each group of cards is sure on its own; across groups, a card lies where no surer one
        # was found: a figure found whole at a slant across a fan's strips, and a strip beside
        # it, are no cards (seed 23's W fan DQ HQ CQ D3 H3 gave two ghost HQs that way)
        kept: list[FaceMatch] = []
        for m in sorted(found, key=lambda m: -m.score):
            at = m.centre_mm if m.strip is None else m.strip[:2]
            if not any(k.covers(at, self.card_mm) for k in kept):
                kept.append(m)
        return kept

    def twin_of(self, card: str) -> str | None:
        """The picture alike in grey to ``card``'s (``TWIN_GREY``): the same drawing in another
        colour, or None."""
        got = self._twin(card)
        return None if got is None else got[0]

    def _twin(self, card: str) -> tuple[str, float] | None:
        """``card``'s colour twin and how far it is turned against ``card``'s picture (0 or 180
        degrees: a card is cut upright from the frame, either way up)."""
        key = tuple(sorted((c, id(p)) for c, p in self.pictures.items()))
        if self._twins is None or self._twins[0] != key:
            looks = {c: (_grey(p), _ink_level(p)) for c, p in self.pictures.items()}
            twins: dict[str, tuple[str, float]] = {}
            cards = sorted(looks)
            for i, a in enumerate(cards):
                for b in cards[i + 1 :]:
                    same = turned = -1.0
                    for pa, pb in zip(looks[a], looks[b], strict=True):  # in grey, in ink
                        if pb.shape != pa.shape:
                            pb = cv2.resize(pb, pa.shape[::-1], interpolation=cv2.INTER_AREA)
                        same = max(same, _alike(pa, pb))
                        turned = max(turned, _alike(pa, pb[::-1, ::-1]))
                    if max(same, turned) >= TWIN_GREY:
                        flip = 0.0 if same >= turned else 180.0
                        twins[a], twins[b] = (b, flip), (a, flip)
            self._twins = (key, twins)
        return self._twins[1].get(card)

    def _by_colour(
        self, seen: np.ndarray, wants: dict[str, np.ndarray], mask: np.ndarray | None = None
    ) -> str | None:
        """Of two colour twins, the one whose picture's chroma (``wants``: each laid where
        ``seen`` was seen, BGR) is nearer what is seen (mean over ``mask``), when nearer by
        ``COLOUR_GAP``; else None."""

        def chroma(x: np.ndarray) -> np.ndarray:
            x = x.astype(np.float32)
            return np.asarray(x.max(axis=-1) - x.min(axis=-1))

        c = chroma(seen)
        m = np.ones(c.shape, bool) if mask is None else mask > 0
        # only where the two pictures differ in colour (the rest of a card is alike in both)
        a, b = (chroma(w) for w in wants.values())
        m &= np.abs(a - b) >= COLOUR_PART
        if np.count_nonzero(m) < 4:
            return None
        gaps = {k: float(np.abs(c - chroma(w))[m].mean()) for k, w in wants.items()}
        (a, da), (_, db) = sorted(gaps.items(), key=lambda kv: kv[1])
        return a if db - da >= COLOUR_GAP else None

    def _twin_at(self, view: np.ndarray, origin_mm: Sequence[float], m: FaceMatch) -> str | None:
        """For a face found whole: which of it and its colour twin its colours say it is."""
        got = self._twin(m.card)
        if got is None:
            return None
        twin, flip = got
        cx = (m.centre_mm[0] - origin_mm[0]) * FACE_PX_PER_MM
        cy = (m.centre_mm[1] - origin_mm[1]) * FACE_PX_PER_MM
        wants: dict[str, np.ndarray] = {}
        mask: np.ndarray | None = None
        for card, turn in ((m.card, 0.0), (twin, flip)):
            pic, mk = _turned(self.pictures[card], m.angle + turn)
            if mask is not None and mk.shape != mask.shape:
                return None
            wants[card], mask = pic, mk
        assert mask is not None
        d = mask.shape[0]
        x0, y0 = int(round(cx - d / 2)), int(round(cy - d / 2))
        if x0 < 0 or y0 < 0 or x0 + d > view.shape[1] or y0 + d > view.shape[0]:
            return None
        return self._by_colour(view[y0 : y0 + d, x0 : x0 + d], wants, mask)

    def _sure(
        self,
        found: list[FaceMatch],
        view: np.ndarray | None = None,
        origin_mm: Sequence[float] = (0.0, 0.0),
    ) -> list[FaceMatch]:
        """Best first, one face a spot, and only where no other card's face fits about as
        well (a colour twin's face, where the colours tell them apart, does not count:
        ``view`` is where they were found, its top-left corner at ``origin_mm``)."""
        found = sorted(found, key=lambda m: -m.score)
        keep: list[FaceMatch] = []
        near = self.card_mm[0] / 2
        for k, m in enumerate(found):
            if any(math.dist(m.centre_mm, o.centre_mm) < near for o in found[:k]):
                continue  # a better match lies here
            rivals: dict[str, float] = {}
            for o in found[k + 1 :]:
                if o.card != m.card and math.dist(m.centre_mm, o.centre_mm) < near:
                    rivals[o.card] = max(rivals.get(o.card, -1.0), o.score)
            twin = self.twin_of(m.card)
            if view is not None and twin is not None and twin in rivals:
                pick = self._twin_at(view, origin_mm, m)
                if pick == twin:  # the same drawing, the other one's colours
                    m = replace(m, card=twin, score=rivals.pop(twin))
                elif pick == m.card:
                    rivals.pop(twin)
            # the two jokers alike and nothing else as good: a joker for sure, which one a
            # doubt the referee weighs (tigullio's as enrolled at 2304x1296 for game 48701, no
            # colour twins in grey, 0.73, or ink, 0.69: W's HR lying on a card never seen)
            close = {c for c, x in rivals.items() if m.score - x < MARGIN}
            joker = m.card in JOKERS and close == set(JOKERS) - {m.card}
            rival = max((x for c, x in rivals.items() if not joker or c not in close), default=-1)
            if m.score - rival >= MARGIN:  # another face fits about as well: not sure
                # runner-ups for the referee (a camera reading: a play that is no legal play
                # is read again, with a card more or less); "none": the weaker, the likelier
                alts = sorted(
                    (
                        (c, round((m.score - x) * STRIP_NATS, 2))
                        for c, x in rivals.items()
                        if (m.score - x) * STRIP_NATS <= ALT_NATS
                    ),
                    key=lambda kv: kv[1],
                )
                none = round(max(0.5, (m.score - self.min_score) * STRIP_NATS), 2)
                keep.append(replace(m, alts=(*alts, ("none", none))))
        return keep

    def _refine(
        self, view: np.ndarray, card: str, angle: float, c: np.ndarray
    ) -> tuple[float, np.ndarray]:
        """The angle (2-degree steps within 7 of ``angle``) and middle (view px, to a pixel)
        where ``card``'s picture fits best around ``c``."""
        best = (-2.0, angle, c)
        for da in range(-6, 7, 2):
            pic, mask = _turned(self.pictures[card], angle + da)
            d = pic.shape[0]
            x0 = int(round(c[0] - d / 2)) - 2
            y0 = int(round(c[1] - d / 2)) - 2
            if x0 < 0 or y0 < 0 or x0 + d + 4 > view.shape[1] or y0 + d + 4 > view.shape[0]:
                continue
            r = cv2.matchTemplate(view[y0 : y0 + d + 4, x0 : x0 + d + 4], pic,
                                  cv2.TM_CCOEFF_NORMED, mask=mask)  # fmt: skip
            r = np.nan_to_num(r, nan=-1.0, posinf=-1.0, neginf=-1.0)
            y, x = np.unravel_index(int(np.argmax(r)), r.shape)
            if r[y, x] > best[0]:
                best = (float(r[y, x]), angle + da, np.array([x0 + x + d / 2, y0 + y + d / 2]))
        return best[1], best[2]

    def _under(
        self,
        view: np.ndarray,
        fg: np.ndarray,
        origin_mm: Sequence[float],
        top: FaceMatch,
        labels: np.ndarray | None = None,
        indices: Sequence[Sequence[float]] = (),
    ) -> list[FaceMatch]:
        """The court cards fanned under a face found whole: a fan's lower cards show a strip
        along one long side of the card above. Where something lies beyond a side of ``top``
        (not the table), each strip is matched against every court picture's edge, either way
        up, at each width the strip could have; the best is taken when it is sure
        (``STRIP_SCORE``, ``MARGIN`` over the best other card). ``labels``: ``fg``'s groups
        (``cv2.connectedComponents``), when the caller has them.

        ``indices`` (table mm): number cards' corner indices. One beyond a side marks a number
        card's strip ending ``INDEX_INSET_MM`` past it: a court strip before it must fit before
        that strip, surely, or the number card's strip comes next and is passed over. Without
        that, the walk took a number card's strip, which fits no face, together with the two
        court strips after it as one wide unsure strip (seed 9408: W's DQ HQ CQ D3 under an H3,
        read as one DQ and one card that may lie there)."""
        p = FACE_PX_PER_MM
        w, h = self.card_mm[0] * p, self.card_mm[1] * p
        c = np.array([(top.centre_mm[0] - origin_mm[0]) * p, (top.centre_mm[1] - origin_mm[1]) * p])
        # the top card's angle and place to a finer step than the search's (15 degrees, 2 mm):
        # the strips beside it are a few pixels wide; a card with no picture (a number card
        # seen by its corner indices) lies along its group's outline
        if top.card in self.pictures:
            angle, c = self._refine(view, top.card, top.angle, c)
        else:
            if labels is None:
                _, labels = cv2.connectedComponents(fg.astype(np.uint8), connectivity=8)
            angle = _along_outline(labels, c, top.angle)
        a = math.radians(angle)
        u = np.array([math.cos(a), -math.sin(a)])  # the picture's x axis in the view
        v = np.array([math.sin(a), math.cos(a)])  # its y axis
        heights = np.arange(-0.42 * h, 0.42 * h + 0.5, 1.0)
        out: list[FaceMatch] = []
        viewf = view.astype(np.float32)
        for side in (-1.0, 1.0):
            # how far something lies beyond this side (most of the height not table)
            run = 0
            for t in range(1, int(STRIP_MAX_MM * p) + 1):
                pts = c + side * (w / 2 + t) * u + heights[::4, None] * v
                xs, ys = np.round(pts[:, 0]).astype(int), np.round(pts[:, 1]).astype(int)
                inside = (xs >= 0) & (ys >= 0) & (xs < fg.shape[1]) & (ys < fg.shape[0])
                if inside.mean() < 0.9 or fg[ys[inside], xs[inside]].mean() < 0.6:
                    break
                run = t
            # where the strips of number cards showing an index end (px beyond this side)
            ends = []
            for q in indices:
                r = np.array([(q[0] - origin_mm[0]) * p, (q[1] - origin_mm[1]) * p]) - c
                beyond = side * float(r @ u) - w / 2
                if 0.0 < beyond <= run and abs(float(r @ v)) <= h / 2:
                    ends.append(min(beyond + INDEX_INSET_MM * p, float(run)))
            ends.sort()
            edge = 0.0  # how far beyond the side the strips found so far reach (px)
            while run - edge >= STRIP_MIN_MM * p:
                best: tuple[float, str, float, float] | None = None  # score, card, width, angle
                by_card: dict[str, float] = {}
                left = run - edge
                # the next number card's strip ends here: a court strip must fit before it
                number = next((e for e in ends if e > edge + STRIP_STEP), None)
                room = left if number is None else number - edge - STRIP_MIN_MM * p
                # the card may reach up to ``STRIP_PAST`` beyond where the run ends (its blurred
                # edge); only the part in view is compared
                past = STRIP_PAST * p if number is None else 0.0
                for width in np.arange(STRIP_MIN_MM * p, room + past + 0.5, STRIP_WIDTH_STEP):
                    if number is None and STRIP_STEP < left - width < STRIP_MIN_MM * p:
                        continue  # what would be left beyond it is too narrow for a card
                    ts = np.arange(edge + 0.5, edge + min(width, left), 1.0)
                    grid = (
                        c[None, None, :]
                        + side * (w / 2 + ts)[None, :, None] * u
                        + heights[:, None, None] * v
                    )  # (H, T, 2) view px
                    seen = cv2.remap(
                        viewf,
                        grid[..., 0].astype(np.float32),
                        grid[..., 1].astype(np.float32),
                        cv2.INTER_LINEAR,
                    )
                    # the lower card's middle, and where these pixels lie on its picture
                    mid = c + side * (edge + width) * u
                    rel = grid - mid
                    for flip in (0.0, 180.0):
                        b = math.radians(angle + flip)
                        ub = np.array([math.cos(b), -math.sin(b)])
                        vb = np.array([math.sin(b), math.cos(b)])
                        px = rel @ ub + w / 2
                        py = rel @ vb + h / 2
                        for card, pic in self.pictures.items():
                            ph, pw = pic.shape[:2]
                            want = cv2.remap(
                                pic.astype(np.float32),
                                (px * pw / w).astype(np.float32),
                                (py * ph / h).astype(np.float32),
                                cv2.INTER_LINEAR,
                            )
                            score = _ncc(seen, want)
                            by_card[card] = max(by_card.get(card, -1.0), score)
                            if best is None or score > best[0]:
                                best = (score, card, float(width), angle + flip)
                                best_grid = grid
                if best is None and number is None:
                    break
                if best is None:
                    edge = number  # only the number card's strip before its index: no face
                    continue
                score, card, width, ang = best
                got = self._twin(card)
                twin, flip = got if got is not None else (None, 0.0)
                if twin is not None and twin in by_card:
                    # the same drawing in two colours: the strip's colours decide
                    seen = cv2.remap(
                        viewf,
                        best_grid[..., 0].astype(np.float32),
                        best_grid[..., 1].astype(np.float32),
                        cv2.INTER_LINEAR,
                    )
                    rel = best_grid - (c + side * (edge + width) * u)
                    wants = {
                        card: self._strip_picture(card, rel, ang, w, h),
                        twin: self._strip_picture(twin, rel, ang + flip, w, h),
                    }
                    pick = self._by_colour(seen, wants)
                    if pick is not None:
                        pair = (card, twin)
                        if pick == twin:
                            score, card = by_card[twin], twin
                        # the other twin is no rival
                        by_card = {k: x for k, x in by_card.items() if k not in pair}
                        by_card[card] = score
                cover = float(
                    cv2.remap(
                        fg.astype(np.float32),
                        best_grid[..., 0].astype(np.float32),
                        best_grid[..., 1].astype(np.float32),
                        cv2.INTER_NEAREST,
                    ).mean()
                )
                rival = max((x for k, x in by_card.items() if k != card), default=-1.0)
                sure = score >= STRIP_FLOOR and (
                    score - rival >= STRIP_MARGIN
                    or (score >= STRIP_SCORE and score - rival >= MARGIN)
                )
                # (the ground is judged by the face as it fitted, ``best[1]`` at ``ang``, before
                # any colour twin was picked)
                rel = best_grid - (c + side * (edge + width) * u)
                if (
                    number is not None
                    and not sure
                    and not self._court_ground(viewf, best_grid, best[1], rel, ang, w, h)
                ):
                    edge = number  # the number card's strip comes first: no face
                    continue
                if cover < STRIP_COVER or (not sure and score < MAYBE_FLOOR):
                    break  # not a lower card of this fan (another group beside it), or no face
                mid = c + side * (edge + width) * u
                centre = (origin_mm[0] + mid[0] / p, origin_mm[1] + mid[1] / p)
                shown = min(width, left)  # the part in view
                sm = c + side * (w / 2 + edge + shown / 2) * u
                strip = (
                    origin_mm[0] + sm[0] / p,
                    origin_mm[1] + sm[1] / p,
                    float(side * u[0]),
                    float(side * u[1]),
                    shown / 2 / p,
                    0.5 * self.card_mm[1],
                )
                others = sorted(
                    [
                        (k, round((score - x) * STRIP_NATS, 2))
                        for k, x in by_card.items()
                        if k != card and (score - x) * STRIP_NATS <= ALT_NATS
                    ],
                    key=lambda kv: kv[1],
                )
                if sure:
                    none = ("none", round(max(0.5, (score - STRIP_FLOOR) * STRIP_NATS), 2))
                    alts = (*others[:3], none)
                else:  # the cards it may be, with what adding each costs
                    alts = ((card, MAYBE_COST),) + tuple(
                        (k, round(MAYBE_COST + v, 2)) for k, v in others[:3]
                    )
                out.append(FaceMatch(card, score, centre, ang % 360.0, alts, strip, not sure))
                edge += width
        return out

    def _court_ground(
        self,
        viewf: np.ndarray,
        grid: np.ndarray,
        card: str,
        rel: np.ndarray,
        angle: float,
        w: float,
        h: float,
    ) -> bool:
        """Whether the strip seen at ``grid`` shows a figure's ground, not a number card's white:
        its share of white at most ``STRIP_GROUND_GAP`` over that of ``card``'s picture laid
        there (``rel``, ``angle``, ``w`` x ``h``: as :meth:`_strip_picture`). The view's white
        is its brightest card (98th percentile), the picture's its own."""
        seen = cv2.remap(
            viewf, grid[..., 0].astype(np.float32), grid[..., 1].astype(np.float32),
            cv2.INTER_LINEAR,
        )  # fmt: skip
        want = self._strip_picture(card, rel, angle, w, h)
        pic = self.pictures[card].astype(np.float32)
        ref_seen = float(np.percentile(viewf.min(axis=-1), 98))
        ref_want = float(np.percentile(pic.min(axis=-1), 98))
        return _white(seen, ref_seen) - _white(want, ref_want) <= STRIP_GROUND_GAP

    def _strip_picture(
        self, card: str, rel: np.ndarray, angle: float, w: float, h: float
    ) -> np.ndarray:
        """``card``'s picture at the view points ``rel`` (from the card's middle, view px), the
        card turned ``angle`` degrees and ``w`` x ``h`` view px (as ``_under`` lays it)."""
        b = math.radians(angle)
        ub = np.array([math.cos(b), -math.sin(b)])
        vb = np.array([math.sin(b), math.cos(b)])
        pic = self.pictures[card]
        ph, pw = pic.shape[:2]
        px = (rel @ ub + w / 2) * pw / w
        py = (rel @ vb + h / 2) * ph / h
        return cv2.remap(
            pic.astype(np.float32), px.astype(np.float32), py.astype(np.float32), cv2.INTER_LINEAR
        )

    def _find_in(
        self,
        view: np.ndarray,
        fg: np.ndarray,
        origin_mm: tuple[float, float],
        angles: Collection[float] = ANGLES,
    ) -> list[FaceMatch]:
        fgf = fg.astype(np.float32)
        # (angle, face size) -> share of card under the turned face (the faces of a deck's
        # J, Q and K may differ by a pixel in size: bench game 9808 crashed on a cover map of
        # another face's size)
        cover: dict[tuple[float, tuple[int, ...]], np.ndarray] = {}
        out: list[FaceMatch] = []
        for card in sorted(self.pictures):
            best: np.ndarray | None = None
            ang: np.ndarray | None = None
            for a, pic, mask in self.turns(card):
                if a not in angles:
                    continue
                if pic.shape[0] > view.shape[0] or pic.shape[1] > view.shape[1]:
                    continue
                c = cover.get((a, mask.shape))
                if c is None:
                    m = (mask > 0).astype(np.float32)
                    c = cv2.matchTemplate(fgf, m, cv2.TM_CCORR) / float(m.sum())
                    cover[(a, mask.shape)] = c
                r = cv2.matchTemplate(view, pic, cv2.TM_CCOEFF_NORMED, mask=mask)
                r = np.nan_to_num(r, nan=-1.0, posinf=-1.0, neginf=-1.0)
                r[c < MIN_COVER] = -1.0
                if best is None:
                    best, ang = r, np.full(r.shape, a, np.float32)
                else:
                    up = r > best
                    best = np.where(up, r, best)
                    ang = np.where(up, a, ang)
            if best is None or ang is None:
                continue
            d = self.turns(card)[0][1].shape[0]
            sep = max(2, int(self.card_mm[0] * FACE_PX_PER_MM / 2))
            while True:
                y, x = np.unravel_index(int(np.argmax(best)), best.shape)
                s = float(best[y, x])
                if s < self.min_score:
                    break
                cx = origin_mm[0] + (x + d / 2) / FACE_PX_PER_MM
                cy = origin_mm[1] + (y + d / 2) / FACE_PX_PER_MM
                out.append(FaceMatch(card, s, (cx, cy), float(ang[y, x])))
                best[max(0, y - sep) : y + sep + 1, max(0, x - sep) : x + sep + 1] = -1.0
        return out

    # ---- storage -----------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "px_per_mm": FACE_PX_PER_MM,
            "card_mm": [round(v, 1) for v in self.card_mm],
            "min_score": self.min_score,
            "pictures": {},
        }
        for card, pic in sorted(self.pictures.items()):
            ok, png = cv2.imencode(".png", pic)
            if not ok:
                raise FaceError(f"court face {card}: cannot be encoded")
            out["pictures"][card] = base64.b64encode(png.tobytes()).decode("ascii")
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> CourtFaces:
        if float(raw.get("px_per_mm", -1)) != FACE_PX_PER_MM:
            raise FaceError(
                f"court faces kept at {raw.get('px_per_mm')} px/mm, this kiosk reads them at "
                f"{FACE_PX_PER_MM}: enrol the deck again"
            )
        pics = {}
        for card, text in raw.get("pictures", {}).items():
            buf = np.frombuffer(base64.b64decode(text), np.uint8)
            pic = cv2.imdecode(buf, cv2.IMREAD_COLOR)
            if pic is None:
                raise FaceError(f"court face {card}: not a picture; enrol the deck again")
            pics[str(card)] = pic
        w, h = (float(v) for v in raw.get("card_mm", (63.0, 88.0)))
        return cls(pics, (w, h), float(raw.get("min_score", MIN_SCORE)))


def _cut_cards(
    image: np.ndarray, calibration: Any
) -> list[tuple[float, np.ndarray, tuple[float, float]]]:
    """The cards lying apart in an enrolment frame, cut from the table's top-down view (the
    calibration from the same frame) as upright pictures at ``FACE_PX_PER_MM``: ``(image x of
    the card's middle, picture, its size in mm (width, height))``, left to right as the camera
    sees them."""
    g = calibration.geometry
    view = table_view(image, calibration, (0.0, 0.0, g.width_mm, g.height_mm), 1.0)
    blur = cv2.GaussianBlur(view, (5, 5), 0)
    table = np.median(blur.reshape(-1, 3), axis=0)
    fg = _not_table(blur, table).astype(np.uint8)
    fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, np.ones((9, 9), np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(fg, connectivity=8)
    cards: list[tuple[float, np.ndarray, tuple[float, float]]] = []
    for i in range(1, n):
        area = stats[i, cv2.CC_STAT_AREA]
        if not 2500 <= area <= 9000:  # a card is 55-65 x 85-95 mm; markers are 3,600 but square
            continue
        pts = np.column_stack(np.nonzero(labels == i)[::-1]).astype(np.float32)
        (cx, cy), (w, h), ang = cv2.minAreaRect(pts)
        if w > h:
            w, h, ang = h, w, ang + 90.0
        if not 1.25 <= h / max(w, 1.0) <= 1.6:
            continue
        # the card turned upright, cut at FACE_PX_PER_MM
        m = cv2.getRotationMatrix2D((cx, cy), ang, FACE_PX_PER_MM)
        fw, fh = int(round(w * FACE_PX_PER_MM)), int(round(h * FACE_PX_PER_MM))
        m[0, 2] += fw / 2 - cx
        m[1, 2] += fh / 2 - cy
        pic = cv2.warpAffine(view, m, (fw, fh), flags=cv2.INTER_AREA)
        ix = float(calibration.to_image([(cx, cy)])[0][0])
        cards.append((ix, pic, (float(w), float(h))))
    cards.sort(key=lambda c: c[0])
    return cards


def _same_size(
    cards: Sequence[tuple[float, np.ndarray, tuple[float, float]]], names: Sequence[str]
) -> tuple[dict[str, np.ndarray], tuple[float, float]]:
    """The cut pictures by name, brought to their median size (mm, returned too)."""
    size = (
        float(np.median([c[2][0] for c in cards])),
        float(np.median([c[2][1] for c in cards])),
    )
    shape = (int(round(size[0] * FACE_PX_PER_MM)), int(round(size[1] * FACE_PX_PER_MM)))
    pics = {
        name: cv2.resize(pic, shape, interpolation=cv2.INTER_AREA)
        for name, (_, pic, _) in zip(names, cards, strict=True)
    }
    return pics, size


def faces_from_frame(
    image: np.ndarray, calibration: Any, suit: str
) -> tuple[dict[str, np.ndarray], tuple[float, float]]:
    """The J, Q and K of ``suit`` cut from a court frame: three cards laid apart in one row,
    J to K from left to right as the camera sees them. Returns upright pictures (BGR at
    ``FACE_PX_PER_MM``) by card, and the cards' measured size in mm (width, height)."""
    if suit not in SUITS:
        raise FaceError(f"court frame: suit {suit!r}: one of S H C D")
    cards = _cut_cards(image, calibration)
    if len(cards) != 3:
        name = SUITS.get(suit, suit)
        raise FaceError(
            f"court frame ({name}): found {len(cards)} cards, not 3; lay the {name}' J, Q and K "
            "apart in one row (J left, K right as the camera sees them), face up, the table's "
            "markers in view"
        )
    return _same_size(cards, [f"{suit}{r}" for r in COURT_RANKS])


#: the big joker is told from the small one by colour when their shares of saturated colour
#: (``colourful``) differ by at least this (the small joker printed black, the big one in
#: colour); else by where they lie, the small one on the camera's left
JOKER_COLOUR_GAP = 0.05


def jokers_from_frame(
    image: np.ndarray, calibration: Any
) -> tuple[dict[str, np.ndarray], tuple[float, float], str]:
    """The two jokers cut from a jokers frame (the two cards apart, face up, the table's markers
    in view), for a deck whose jokers print no corner index. Which is the big joker (HR): the
    colourful one, when one is clearly more colourful (``JOKER_COLOUR_GAP``); else the one on
    the camera's right, the small joker (SB) on its left. Returns the pictures by card, the
    cards' size in mm and how they were told apart (for the enrolment log)."""
    cards = _cut_cards(image, calibration)
    if len(cards) != 2:
        raise FaceError(
            f"found {len(cards)} card{'' if len(cards) == 1 else 's'} where the small and "
            "the big joker (SB, HR) should lie "
            "apart; lay the two jokers of one deck face up and apart, the table's markers in view"
        )
    colour = [colourful(pic) for _, pic, _ in cards]
    if abs(colour[1] - colour[0]) >= JOKER_COLOUR_GAP:
        if colour[0] > colour[1]:
            cards = [cards[1], cards[0]]
        how = f"HR the colourful one ({max(colour):.2f} of it in colour against {min(colour):.2f})"
    else:
        how = (
            f"alike in colour ({colour[0]:.2f}, {colour[1]:.2f}): SB the one on the camera's "
            "left, HR on its right"
        )
    pics, size = _same_size(cards, JOKERS)
    return pics, size, how
