"""Checks on enrolment frames (``vision.enrol.enrol``): bad input gets a message that names the
frame and the cards, instead of a profile taught the wrong cards.

* **Markers**: every frame must show the table's four corner markers (the kiosk's frames do; the
  court faces and the deck's faces are cut with the table homography). A frame without them is
  refused, naming the markers missing.
* **Blur**: the markers' printed edges are the frame's sharpness gauge: the width of an edge
  (its contrast over its steepest gradient), in millimetres on the table. A sharp frame of the
  kiosk's camera at 1280x720 gives about 2 px = 2.7 mm, at 2304x1296 about 1.5 mm; measured on
  synthetic enrolment frames (tigullio, 2026-12-04) Gaussian blur of sigma 1 / 1.5 / 2 px at
  1280x720 gives 3.1 / 4.1 / 5.0 px (4.2 / 5.6 / 6.8 mm), and the classifier's mean top
  probability on the spades frame falls 0.90 -> 0.83 -> 0.55 -> 0.26, the ranks read wrong from
  sigma 1.5. ``MAX_EDGE_MM`` sits between sigma 1 and 1.5.
* **Wrong suit**: the classifier's reading of the frame's corners, summed per suit. A frame
  given as a black suit whose corners read red (or the other way round), a suit frame that reads
  as jokers or a jokers frame that reads as a suit, is refused. Within a colour the classifier
  alone cannot be trusted (it reads plastic's clubs as spades), so a frame read as the other
  suit of its colour is refused only when that suit's own frame reads as this one (the two
  frames swapped).
* **The same frame twice**, given as two suits: refused.
* **Two decks mixed**: Guandan is played with two decks, and a frame with both decks' copies of
  a card shows its corner index four times where one deck's card shows it twice; a card read
  surely (rank probability over ``SURE``, in the frame's colour) at ``2 x copies`` corners or
  more is refused, named. Only the frame's colour counts: a second deck's card of the suit
  reads in that colour (a suit within it may be misread), while a corner box found on a court
  card's picture beside its index may read as a rank of the other colour (paris's hearts at
  2304x1296, enrolment seed 549102: boxes on the queen's and jack's pictures read C4 at 0.61
  and 0.48 beside the two H4 corners, and a good frame was refused as both decks').
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "FrameReading",
    "frame_digest",
    "MAX_EDGE_MM",
    "SURE",
    "blur_problem",
    "cross_frame_problem",
    "edge_width_mm",
    "frame_problem",
    "marker_problem",
]

RANKS = "23456789TJQKA"
SUIT_NAMES = {"S": "spades", "H": "hearts", "C": "clubs", "D": "diamonds", "J": "jokers"}
COLOUR = {"S": "black", "C": "black", "H": "red", "D": "red"}
#: widest marker edge (mm on the table) a frame may show: sharper reads its corners well
MAX_EDGE_MM = 5.0
#: a corner's rank (its probability summed over the suits) counts as read when at least this
SURE = 0.5
#: a frame reads as a suit (or the jokers) when this share of its corners' probability is there
DECISIVE = 0.7


@dataclass
class FrameReading:
    """What the classifier read in one frame: ``probs`` (corners x classes) over ``names``."""

    where: str  # "frame 2 (hearts, H.png)"
    kind: str  # S H C D J
    probs: np.ndarray
    names: Sequence[str]
    digest: str = ""  # of the frame's pixels (the same frame given twice)

    def shares(self) -> dict[str, float]:
        """Per suit (and ``J``), the mean share of a corner's card probability it holds."""
        names = list(self.names)
        cols = {s: [names.index(s + r) for r in RANKS] for s in "SHCD"}
        cols["J"] = [names.index("SB"), names.index("HR")]
        if len(self.probs) == 0:
            return dict.fromkeys(cols, 0.0)
        mass = {s: self.probs[:, c].sum(axis=1) for s, c in cols.items()}
        total = np.maximum(sum(mass.values()), 1e-9)
        return {s: float((m / total).mean()) for s, m in mass.items()}

    def read_as(self) -> str | None:
        """The suit (or ``J``) the corners read as, when decisively one (``DECISIVE``)."""
        shares = self.shares()
        best = max(shares, key=lambda s: shares[s])
        return best if shares[best] >= DECISIVE else None

    def rank_probs(self, colour: str | None = None) -> np.ndarray:
        """Per corner, each rank's probability summed over the four suits (corners x 13): the
        reading enrolment goes by (``assign_ranks``), whatever suit the classifier read. With
        ``colour`` (``"red"`` or ``"black"``) summed over that colour's two suits only."""
        names = list(self.names)
        suits = [s for s in "SHCD" if colour is None or COLOUR[s] == colour]
        cols = [[names.index(s + r) for s in suits] for r in RANKS]
        if len(self.probs) == 0:
            return np.zeros((0, len(RANKS)))
        return np.stack([self.probs[:, c].sum(axis=1) for c in cols], axis=1)

    def unsure_cards(self) -> list[str]:
        """The frame's own cards that no corner was read as with probability ``SURE`` (a suit
        frame: by rank, whatever suit was read)."""
        if self.kind == "J":
            names = list(self.names)
            p = self.probs[:, [names.index("SB"), names.index("HR")]]
            return [c for j, c in enumerate(("SB", "HR")) if not (p[:, j] >= SURE).any()]
        rp = self.rank_probs()
        sure = set(rp.argmax(axis=1)[rp.max(axis=1) >= SURE].tolist())
        return [self.kind + r for i, r in enumerate(RANKS) if i not in sure]

    def cards_read(self, suit: str) -> list[str]:
        """The cards of ``suit`` the corners were read as (each once, in rank order)."""
        names = list(self.names)
        top = {names[int(i)] for i in self.probs.argmax(axis=1)} if len(self.probs) else set()
        if suit == "J":
            return [c for c in ("SB", "HR") if c in top]
        return [suit + r for r in RANKS if suit + r in top]


def edge_width_mm(image: np.ndarray, sightings: Sequence[object], marker_mm: float) -> float:
    """The median width (mm) of the markers' edges: per marker, its contrast (5th to 95th
    percentile of the grey levels around it) over its steepest gradients (99th percentile)."""
    import cv2

    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    grey = grey.astype(np.float32)
    widths = []
    for s in sightings:
        quad = np.asarray(s.corners, np.float32).reshape(-1, 2)  # type: ignore[attr-defined]
        side = float(s.side_px)  # type: ignore[attr-defined]
        if side < 8:
            continue
        c = quad.mean(axis=0)
        x1, y1 = np.maximum((c - side * 0.75).astype(int), 0)
        x2, y2 = (c + side * 0.75).astype(int)
        region = grey[y1:y2, x1:x2]
        if region.size < 64:
            continue
        lo, hi = np.percentile(region, 5), np.percentile(region, 95)
        gy, gx = np.gradient(region)
        steep = float(np.percentile(np.hypot(gx, gy), 99))
        widths.append((hi - lo) / max(steep, 1e-3) * marker_mm / side)
    return float(np.median(widths)) if widths else float("nan")


def marker_problem(image: np.ndarray, where: str) -> tuple[str | None, float]:
    """``(message or None, edge width in mm)``: the frame must show the four corner markers."""
    from vision.table import TableGeometry, detect_markers

    found = detect_markers(image)
    if found.missing:
        seen = ", ".join(str(i) for i in found.visible) or "none"
        lost = ", ".join(str(i) for i in found.missing)
        return (
            f"{where}: the table's corner markers are not all in view (seen: {seen}; missing: "
            f"{lost}); every enrolment frame is taken by the table camera with the four markers "
            "in view (they measure the cards and the frame's sharpness)",
            float("nan"),
        )
    return None, edge_width_mm(image, list(found.corners.values()), TableGeometry().marker_mm)


def blur_problem(where: str, width_mm: float, unsure: Sequence[str] | None) -> str | None:
    """A frame blurred past ``MAX_EDGE_MM``: the message names the cards read unsure or not at
    all (``unsure``; their corners are what a blurred frame spoils)."""
    if not width_mm > MAX_EDGE_MM:
        return None
    if unsure is None:
        cards = ""
    else:
        cards = f"; cards not read surely: {' '.join(unsure)}" if unsure else "; cards still read"
    return (
        f"{where}: the frame is blurred (the markers' edges are {width_mm:.1f} mm wide, sharp "
        f"frames {MAX_EDGE_MM:g} mm at most{cards}); hold the camera still and in focus and "
        "take the frame again"
    )


def frame_problem(reading: FrameReading, copies: int) -> str | None:
    """Wrong colour, jokers for a suit (or a suit for the jokers), or a card shown by both
    decks; None when the frame looks right."""
    kind, shares = reading.kind, reading.shares()
    given = f"given as {SUIT_NAMES[kind]}"
    read = reading.read_as()
    if read is not None and read != kind and (kind == "J" or read == "J"):
        cards = " ".join(reading.cards_read(read))
        return (
            f"{reading.where}: {given}, but its cards read as {SUIT_NAMES[read]} ({cards}); "
            f"give this frame as --{SUIT_NAMES[read]}, or take a frame of the {SUIT_NAMES[kind]}"
        )
    if kind != "J":
        colour = COLOUR[kind]
        mine = sum(v for s, v in shares.items() if COLOUR.get(s) == colour)
        other = sum(v for s, v in shares.items() if s != "J" and COLOUR[s] != colour)
        if other >= DECISIVE and mine < 1 - DECISIVE:
            suit = max((s for s in "SHCD" if COLOUR[s] != colour), key=lambda s: shares[s])
            cards = " ".join(reading.cards_read(suit))
            return (
                f"{reading.where}: {given}, but its cards are {COLOUR[suit]}: they read as "
                f"{SUIT_NAMES[suit]} ({cards}); give each suit's frame under its own flag "
                f"(--{SUIT_NAMES[suit]} for this one)"
            )
    if len(reading.probs) == 0:
        return None
    # a second deck's copy reads in the frame's colour; art beside an index may read as any
    rank_p = reading.rank_probs(COLOUR.get(kind))
    best = rank_p.argmax(axis=1)
    sure = rank_p.max(axis=1) >= SURE
    counts = np.bincount(best[sure], minlength=len(RANKS))
    twice = [RANKS[i] for i in range(len(RANKS)) if counts[i] >= 2 * copies]
    if kind != "J" and twice:
        cards = " ".join(kind + r for r in twice)
        n = " / ".join(str(int(counts[RANKS.index(r)])) for r in twice)
        return (
            f"{reading.where}: {cards} seen more than once ({n} corner indices, one card shows "
            f"{copies}): the frame holds cards of both decks; lay out the 13 "
            f"{SUIT_NAMES[kind]} of one deck only"
        )
    return None


def cross_frame_problem(readings: Sequence[FrameReading]) -> str | None:
    """The same frame given twice, or two frames of one colour swapped."""
    seen: dict[str, FrameReading] = {}
    for r in readings:
        if r.digest and r.digest in seen and seen[r.digest].kind != r.kind:
            first = seen[r.digest]
            return (
                f"{r.where} is the same picture as {first.where}: one frame per suit, each "
                "showing that suit's cards"
            )
        seen.setdefault(r.digest, r)
    by_kind = {r.kind: r for r in readings}
    for a, b in (("S", "C"), ("H", "D")):
        ra, rb = by_kind.get(a), by_kind.get(b)
        if ra is None or rb is None:
            continue
        if ra.read_as() == b and rb.read_as() == a:
            return (
                f"{ra.where} reads as {SUIT_NAMES[b]} ({' '.join(ra.cards_read(b))}) and "
                f"{rb.where} as {SUIT_NAMES[a]} ({' '.join(rb.cards_read(a))}): the two frames "
                f"are swapped; give them as --{SUIT_NAMES[b]} and --{SUIT_NAMES[a]}"
            )
    return None


def frame_digest(image: np.ndarray) -> str:
    """A digest of a frame's pixels (``FrameReading.digest``: the same frame given twice)."""
    return hashlib.sha1(np.ascontiguousarray(image).tobytes()).hexdigest()
