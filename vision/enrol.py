"""Deck enrolment: teach the kiosk the card design it is about to read, from a few frames.

The classifier was trained on 19 deck designs and names most others well, but not all: on
``plastic`` it reads nearly every club as a spade (models/README.md). An event plays every table
with one design, and the referee sets each table up anyway (markers, calibration), so the kiosk
can be shown the deck once: each suit of one deck laid out face up under the camera, the cards
apart so both corner indices show (any order, any angle), one suit per frame, and the jokers.

``enrol(detector, shots)`` reads every corner of each frame, gives each one a card of the suit it
was shown as (the classifier's rank reading decides which, whatever suit it read; each card at
most ``copies`` times, the surest corners first), and keeps, per card, the mean of the
classifier's 160-d embedding of those corners (its ``features`` output, averaged over the four
quarter turns). ``DeckProfile`` is that table of prototypes. ``Detector(deck=profile)`` then
names a corner by ``p(card) x q(card) ** weight`` (q: softmax of ``beta`` x the cosine to each
prototype) within the probability the classifier gives to the enrolled cards, and keeps the
classifier's own ``none`` and not-enrolled cards (vision/detector.py). ``weight`` is chosen at
enrolment by leave-one-out on the enrolment corners (``choose_weight``): 0 for a deck the
classifier reads as well without. Measured: models/README.md, bench/RESULTS.md.

Suits by their shape (``SuitTemplates``): on ``plastic`` even the prototypes cannot tell a club
from a spade of the same rank (S7 and C7: cosine 0.994), yet the pixels can. Each enrolled corner
is also kept as a small grey picture; a corner read as a black (red) card is then matched, at
every angle and small shift, against the enrolled pictures of that card and of the same rank in
the other black (red) suit, and the difference of the best normalised correlations moves the
probability between the two suits (``alpha`` x the difference, added to their log-ratio).
``alpha`` is set per colour at enrolment (``choose_suit_alpha``): on only where the prototypes
of a rank's two suits of that colour are nearly the same vector, i.e. where the classifier
cannot tell them apart.

Court cards without an index (``vision/faces.py``): a design whose J, Q and K print only a
figure and a suit sign (guyenne-classic) gives the corner detector nothing to read there. The
referee then adds one *court frame* per suit (that suit's J, Q and K apart in one row, J on the
camera's left, K on its right; shot kinds ``court-S`` ..): each card is cut out of the table's
top-down view as a picture and kept in the profile (``DeckProfile.faces``); the table pipeline
reads those 12 cards by their whole face alone (a corner read as one of them, in the suit
frames or in play, is a guess on a figure and is dropped).

Jokers without an index the same way: a jokers frame that shows neither joker by a corner index
read as a joker (a picture joker: its corners, if any, are guesses on the picture) has both cut
out as pictures (``vision.faces.jokers_from_frame``: the big joker is the colourful one, else
the one on the camera's right) and read by their face alone, beside any court faces.

The profile is a small JSON file (``guandan vision enrol ... --out deck.json``), tied to the
classifier it was made with (an embedding means nothing to another model): loading it with
another classifier is refused with an error naming both.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np

from vision.faces import CourtFaces, FaceError, faces_from_frame
from vision.pairfaces import PairFaceError, PairFaces, faces_from_shot


class CornerReader(Protocol):
    """What enrolment reads frames with (``vision.detector.Detector``, made for it by
    ``vision.detector.enrolment_detector``); a protocol, so this module needs no detector."""

    class_names: list[str]
    conf: float
    crop_expand: float

    @property
    def classifier_id(self) -> str: ...

    def corners(self, image: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def classify_with_features(
        self, image: np.ndarray, boxes: np.ndarray, rotations: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]: ...


__all__ = [
    "DeckProfile",
    "EnrolError",
    "CornerReader",
    "COURT_KINDS",
    "SHOT_KINDS",
    "SuitTemplates",
    "WeightChoice",
    "assign_ranks",
    "choose_weight",
    "classifier_id",
    "closest_pair",
    "court_faces",
    "enrol",
    "missing_cards",
]

FORMAT = 1
RANKS = "23456789TJQKA"
#: what one enrolment frame may show: a suit's cards, or the jokers
SHOT_KINDS = {"S": "spades", "H": "hearts", "C": "clubs", "D": "diamonds", "J": "jokers"}
#: court frames of a deck whose J, Q and K print no index (vision/faces.py)
COURT_KINDS = {
    "court-S": "court_spades",
    "court-H": "court_hearts",
    "court-C": "court_clubs",
    "court-D": "court_diamonds",
}
#: cosine-similarity temperature: at 40 the mean top probability on held-out corners is close to
#: the accuracy (plastic: 0.80 vs 0.85; guyenne-classic 0.87 vs 0.91), 20 is far too flat
BETA = 40.0


# -- suits by their shape -------------------------------------------------------------------
#: side of a corner's grey picture: the square ``crop_expand`` x the corner box (as the
#: classifier's crop; ~23 px of a 1280x720 frame at the kiosk's scale, where an index box is ~17
#: px long). Black corners of seed 9402 right at 24 / 32 / 48 px (one scale, the renderer's
#: boxes): 0.794 / 0.875 / 0.845
TEMPLATE_SIZE = 32
#: the centre of an enrolled picture matched at every shift inside a corner's picture (+-7 px)
PATCH = 18
#: the enrolled pictures are turned in steps of this many degrees (a corner lies at any angle)
ANGLE_STEP = 8
#: the enrolled pictures are also matched this much larger and smaller: a picture is cut at the
#: detector's box, whose size varies by 10-20 % from corner to corner (seed 9402, plastic, 761
#: black corners at the detector's boxes: card right 0.736 with the prototypes, 0.790 with
#: pictures at one scale, 0.859 at these three)
SCALES = (1 / 1.15, 1.0, 1.15)
#: the suit of the same colour a corner may be confused with
SUIT_PAIR = {"S": "C", "C": "S", "H": "D", "D": "H"}
COLOURS = {"S": "black", "C": "black", "H": "red", "D": "red"}
#: a colour's suits are told apart by shape when the median cosine between the prototypes of
#: the same rank in its two suits is at least this (2026-11-30, enrolled as the bench does:
#: plastic's black suits 0.979-0.982 on three tables; every other design and colour 0.81-0.89,
#: no single rank above 0.92)
SUIT_ALIKE = 0.95
#: how much one unit of correlation difference counts, in nats (an experiment on the black
#: corners of two plastic games, 9402 and 9602, the renderer's boxes, four pictures per card:
#: alpha 10, 20, 40 -> suit right 0.85/0.95, 0.93/0.96, 0.96/0.97, against 0.67/0.76 without)
SUIT_ALPHA = 40.0


def grey_picture(image: np.ndarray, box: Sequence[float] | np.ndarray, expand: float) -> np.ndarray:
    """A corner's grey picture (``TEMPLATE_SIZE`` square, uint8), cut as the classifier's crop."""
    import cv2

    from vision.crops import crop_square

    crop = crop_square(image, np.asarray(box, np.float64), TEMPLATE_SIZE, expand)
    if crop.ndim == 3:
        crop = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    return np.asarray(crop, np.uint8)


def _grey(image: np.ndarray) -> np.ndarray:
    import cv2

    return image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


def _unit_rows(x: np.ndarray) -> np.ndarray:
    x = x.reshape(len(x), -1).astype(np.float32)
    x = x - x.mean(axis=1, keepdims=True)
    return np.asarray(x / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-6), np.float32)


def _turned_patches(picture: np.ndarray) -> np.ndarray:
    """The centre ``PATCH`` square of ``picture`` at every ``ANGLE_STEP``: unit rows."""
    import cv2

    c = TEMPLATE_SIZE / 2 - 0.5
    lo = (TEMPLATE_SIZE - PATCH) // 2
    out = []
    for scale in SCALES:
        for a in range(0, 360, ANGLE_STEP):
            m = cv2.getRotationMatrix2D((c, c), float(a), scale)
            turned = cv2.warpAffine(picture, m, (TEMPLATE_SIZE, TEMPLATE_SIZE), borderValue=114)
            out.append(turned[lo : lo + PATCH, lo : lo + PATCH])
    return _unit_rows(np.stack(out))


def _windows(picture: np.ndarray) -> np.ndarray:
    """Every ``PATCH`` square of a corner's picture: unit columns (contiguous, so that the
    product with the turned patches is one fast matrix product)."""
    from numpy.lib.stride_tricks import sliding_window_view

    w = sliding_window_view(np.asarray(picture, np.float32), (PATCH, PATCH))
    return np.ascontiguousarray(_unit_rows(w.reshape(-1, PATCH * PATCH)).T)


@dataclass
class SuitTemplates:
    """The enrolled corners' grey pictures, per card, and the per-colour ``alpha``."""

    pictures: dict[str, list[np.ndarray]] = field(default_factory=dict)
    alpha: dict[str, float] = field(default_factory=dict)  # "black" / "red" -> alpha
    _turned: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def turned(self, card: str) -> np.ndarray | None:
        """All of a card's pictures at every angle (unit rows), or None without pictures."""
        got = self._turned.get(card)
        if got is None and self.pictures.get(card):
            got = self._turned[card] = np.concatenate(
                [_turned_patches(p) for p in self.pictures[card]]
            )
        return got

    def likeness(self, windows: np.ndarray, card: str) -> float:
        """The best normalised correlation of a corner's picture (its ``_windows``) with the
        card's pictures at any angle and shift (nan without pictures)."""
        rows = self.turned(card)
        if rows is None:
            return math.nan
        return float((rows @ windows).max())

    def on(self) -> bool:
        return any(a > 0 for a in self.alpha.values())

    def adjust(
        self,
        probs: np.ndarray,
        picture_of: Callable[[int], np.ndarray],
        names: Sequence[str],
    ) -> np.ndarray:
        """Move probability between each corner's likeliest card and the same rank in the other
        suit of its colour, by how much better its picture matches one than the other.
        ``picture_of(i)``: corner i's grey picture (asked only for the corners checked)."""
        out = np.array(probs, np.float32, copy=True)
        index = {c: k for k, c in enumerate(names)}
        for i in range(len(out)):
            card = names[int(np.argmax(out[i]))]
            if card[0] not in SUIT_PAIR or card[1] not in RANKS:
                continue
            alpha = self.alpha.get(COLOURS[card[0]], 0.0)
            other = SUIT_PAIR[card[0]] + card[1]
            if alpha <= 0 or other not in index:
                continue
            wins = _windows(picture_of(i))
            d = self.likeness(wins, card) - self.likeness(wins, other)
            if not math.isfinite(d):
                continue
            a, b = index[card], index[other]
            total = float(out[i, a] + out[i, b])
            ratio = math.log(float(out[i, a]) + 1e-9) - math.log(float(out[i, b]) + 1e-9)
            z = ratio + alpha * d
            share = 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0
            out[i, a], out[i, b] = total * share, total * (1.0 - share)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "size": TEMPLATE_SIZE,
            "alpha": dict(self.alpha),
            "pictures": {
                c: [
                    base64.b64encode(np.ascontiguousarray(p, np.uint8).tobytes()).decode()
                    for p in ps
                ]
                for c, ps in self.pictures.items()
            },
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> SuitTemplates:
        if int(raw.get("size", 0)) != TEMPLATE_SIZE:
            raise ValueError(f"suit pictures of size {raw.get('size')!r}, {TEMPLATE_SIZE} needed")
        pics = {}
        for c, ps in dict(raw["pictures"]).items():
            arrs = [np.frombuffer(base64.b64decode(p), np.uint8) for p in ps]
            if any(a.size != TEMPLATE_SIZE * TEMPLATE_SIZE for a in arrs):
                raise ValueError(f"suit picture of {c} has the wrong size")
            pics[str(c)] = [a.reshape(TEMPLATE_SIZE, TEMPLATE_SIZE).copy() for a in arrs]
        alpha = {str(k): float(v) for k, v in dict(raw.get("alpha", {})).items()}
        if any(not (math.isfinite(v) and v >= 0) for v in alpha.values()):
            raise ValueError("suit alpha must be a number >= 0")
        return cls(pics, alpha)


def choose_suit_alpha(profile: DeckProfile) -> dict[str, float]:
    """Suits by shape for a colour whose two suits the classifier's embedding cannot tell apart:
    the median cosine between the prototypes of the same rank in its two suits at least
    ``SUIT_ALIKE`` -> ``SUIT_ALPHA``, else 0. Sets ``profile.suits.alpha``; returns the medians.

    Not a leave-one-out as ``choose_weight``: a card's one other enrolment corner (turned 180
    degrees) is too weak a picture to judge by, while at run time both are used."""
    vec = dict(zip(profile.cards, profile.prototypes, strict=True))
    medians: dict[str, float] = {}
    for colour, (a, b) in (("black", "SC"), ("red", "HD")):
        cos = [float(vec[a + r] @ vec[b + r]) for r in RANKS if a + r in vec and b + r in vec]
        if not cos:
            continue
        medians[colour] = float(np.median(cos))
        if profile.suits is not None:
            alike = medians[colour] >= SUIT_ALIKE
            profile.suits.alpha[colour] = SUIT_ALPHA if alike else 0.0
    return medians


class EnrolError(ValueError):
    """A deck profile or enrolment input that cannot be used (the message says what to do)."""


def classifier_id(path: Path) -> str:
    """A short fingerprint of a classifier file (its bytes): a profile only fits its own model."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


@dataclass
class DeckProfile:
    """Per-card prototypes (unit vectors in the classifier's embedding) of one deck design."""

    name: str
    classifier: str  # classifier_id of the model the embeddings come from
    cards: list[str]
    prototypes: np.ndarray  # len(cards) x D, unit rows
    counts: list[int]  # corners behind each prototype
    beta: float = BETA
    #: how much the prototypes count against the classifier's own reading (the exponent of their
    #: softmax; 0: not at all, inf: alone), chosen at enrolment by leave-one-out (``choose_weight``)
    weight: float = 1.0
    #: the enrolled corners' grey pictures and per-colour alpha (None: a profile without them)
    suits: SuitTemplates | None = None
    #: whole-face pictures of court cards that print no index (None: the corners read them)
    faces: CourtFaces | None = None
    #: each card's face between its two corner indices, from the suit frames (vision/pairfaces.py:
    #: the suits of a colour the corners cannot tell apart, by the card's body pips; None: a
    #: profile made before 2026-12-03, read without them)
    pair_faces: PairFaces | None = None

    def __post_init__(self) -> None:
        self.prototypes = np.asarray(self.prototypes, np.float32).reshape(len(self.cards), -1)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "kind": "guandan-deck-profile",
            "name": self.name,
            "classifier": self.classifier,
            "beta": self.beta,
            "weight": "inf" if math.isinf(self.weight) else self.weight,
            "cards": {
                c: {"n": n, "v": [round(float(x), 5) for x in v]}
                for c, n, v in zip(self.cards, self.counts, self.prototypes, strict=True)
            },
            **({"suits": self.suits.to_json()} if self.suits is not None else {}),
            **({"faces": self.faces.to_json()} if self.faces else {}),
            **({"pair_faces": self.pair_faces.to_json()} if self.pair_faces else {}),
        }

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        if not path.parent.exists():
            raise EnrolError(f"{path}: the folder {path.parent} does not exist")
        import os
        import tempfile

        tmp: Path | None = None
        try:  # a temp file of its own, renamed over ``path`` once whole: nothing half-written
            fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            tmp = Path(name)
            os.fchmod(fd, 0o644)  # as a plain write would leave it (mkstemp makes it 0600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(self.to_json()))
            tmp.replace(path)
        except OSError as exc:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
            raise EnrolError(f"{path}: cannot write the deck profile ({exc.strerror})") from None
        return path

    @classmethod
    def load(cls, path: str | Path) -> DeckProfile:
        path = Path(path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise EnrolError(
                f"{path}: deck profile not found (make one: guandan vision enrol)"
            ) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise EnrolError(f"{path}: not a deck profile ({exc})") from None
        if not isinstance(raw, dict) or raw.get("kind") != "guandan-deck-profile":
            raise EnrolError(f"{path}: not a deck profile (made by guandan vision enrol)")
        if raw.get("format") != FORMAT:
            raise EnrolError(f"{path}: deck profile format {raw.get('format')!r}, {FORMAT} needed")
        try:
            items = raw["cards"]
            cards = list(items)
            vecs = np.array([items[c]["v"] for c in cards], np.float32)
            counts = [int(items[c]["n"]) for c in cards]
            beta = float(raw.get("beta", BETA))
            weight = float(raw.get("weight", 1.0))
            suits = SuitTemplates.from_json(raw["suits"]) if "suits" in raw else None
            faces = CourtFaces.from_json(raw["faces"]) if "faces" in raw else None
            pairs = PairFaces.from_json(raw["pair_faces"]) if "pair_faces" in raw else None
            prof = cls(
                str(raw["name"]),
                str(raw["classifier"]),
                cards,
                vecs,
                counts,
                beta,
                weight,
                suits,
                faces,
                pairs,
            )
        except (FaceError, PairFaceError) as exc:
            raise EnrolError(f"{path}: {exc}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise EnrolError(f"{path}: deck profile is damaged ({exc!r}); enrol again") from None
        bad = not cards or vecs.ndim != 2 or not np.isfinite(vecs).all()
        if bad or not beta > 0 or not weight >= 0:
            raise EnrolError(f"{path}: deck profile is damaged (no cards or bad numbers)")
        return prof

    def check(self, classifier: str, dims: int, where: str = "") -> None:
        """Refuse a profile made with another classifier or of the wrong size."""
        src = f"{where}: " if where else ""
        if self.classifier != classifier:
            raise EnrolError(
                f"{src}deck profile {self.name!r} was made with classifier {self.classifier}, "
                f"this detector's is {classifier}; enrol the deck again with this model"
            )
        if self.prototypes.shape[1] != dims:
            raise EnrolError(
                f"{src}deck profile has {self.prototypes.shape[1]}-d prototypes, "
                f"the classifier gives {dims}"
            )

    def reweigh(self, probs: np.ndarray, feats: np.ndarray, names: Sequence[str]) -> np.ndarray:
        """The classifier's probabilities (N x classes) with the mass it gives to the enrolled
        cards shared out among them by ``p(card)`` x ``q(card) ** weight``, q the softmax of the
        similarities to their prototypes; ``none`` and cards not enrolled keep the classifier's
        own probability. The prototypes decide which card, not how sure: no card ends up more
        probable than the classifier's surest enrolled card was (a corner found in a card's
        art, its mass spread over many cards, would otherwise become one sure card: seed 9402
        with plastic enrolled read C9 as C9 S3). So the rows may sum to less than 1."""
        if len(probs) == 0 or self.weight == 0:
            return probs
        idx = [list(names).index(c) for c in self.cards]
        out = np.array(probs, np.float32, copy=True)
        mine = out[:, idx]
        mass = mine.sum(axis=1, keepdims=True)
        z = _mix(np.log(mine + 1e-12), self.similarity(feats), self.beta, self.weight)
        z -= z.max(axis=1, keepdims=True)
        q = np.exp(z)
        new = mass * q / q.sum(axis=1, keepdims=True)
        top = mine.max(axis=1, keepdims=True)
        out[:, idx] = new * np.minimum(1.0, top / np.maximum(new.max(axis=1, keepdims=True), 1e-12))
        return out

    def similarity(self, feats: np.ndarray) -> np.ndarray:
        """Cosine similarity of each embedding (N x D) to each prototype (N x cards)."""
        f = feats / (np.linalg.norm(feats, axis=1, keepdims=True) + 1e-9)
        return np.asarray(f @ self.prototypes.T)


def _mix(logp: np.ndarray, sim: np.ndarray, beta: float, weight: float) -> np.ndarray:
    """Unnormalised log-scores: the classifier's log-probabilities plus ``weight`` x the
    prototypes' log-softmax (only the latter when weight is infinite)."""
    lq = _log_softmax(beta * sim)
    return lq if math.isinf(weight) else logp + weight * lq


def _log_softmax(x: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax."""
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


#: the weights ``choose_weight`` tries (0: the classifier alone)
WEIGHTS = (0.0, 0.5, 1.0, 2.0, 4.0, math.inf)
#: how much likelier (mean log-probability of each enrolment corner's right card, leave-one-out,
#: in nats) the prototypes must make the right cards before they count at all. A count of
#: corners named right was the test until 2026-12-02 (at least 5 % more): with ~100 corners it
#: flipped on a few of them (plastic table 9807 got weight 0 at a gain of 4 corners, and 9802
#: read with an int8 detector at a gain of 2, losing 12 of 50 plays), while the likelihood
#: parts the decks widely: on the 30 bench tables the classifier alone gave plastic's right
#: cards -0.93 to -1.01 and the prototypes 0.59 to 0.66 more; every other table had -0.08 to
#: -0.28 alone and 0.03 to 0.22 to gain (sharper, not other readings; weight 2 on proc-serif
#: lost 7 of 52 plays on seed 9410, 2026-11-30). The floor sits midway.
MIN_LL_GAIN = 0.4
#: log-probability floor per corner in that mean (one corner the classifier is sure is another
#: card must not outweigh the rest)
LL_FLOOR = math.log(1e-3)


class WeightChoice(NamedTuple):
    """What ``choose_weight`` found: the weight, and per weight tried the leave-one-out share of
    corners named right and the mean log-probability of their right cards (what decides)."""

    weight: float
    right: dict[float, float]
    loglik: dict[float, float]

    def gain(self) -> float:
        """How much likelier (nats) the best weight made the right cards than the classifier
        alone (nan when no corner could be scored)."""
        if not self.loglik:
            return math.nan
        return max(self.loglik.values()) - self.loglik[0.0]

    def describe(self) -> str:
        """One line for the enrolment log: per weight, right share and likelihood; the gain."""
        if not self.loglik:
            return f"no card seen twice, nothing to leave out -> weight {self.weight:g}"
        tried = ", ".join(f"{w:g}: {self.right[w]:.3f} / {self.loglik[w]:.2f}" for w in self.right)
        return (
            f"leave-one-out right / mean log-likelihood of the right card ({tried}); the "
            f"prototypes gain {self.gain():.2f} nats (they count from {MIN_LL_GAIN:g}) -> "
            f"weight {self.weight:g}"
        )


def choose_weight(
    logp: np.ndarray, feats: np.ndarray, labels: np.ndarray, beta: float = BETA
) -> WeightChoice:
    """Leave-one-out on the enrolment corners: each corner is named with the prototypes made
    without it (its card's prototype from the card's other corners; corners of a card seen once
    are not scored) at each weight in ``WEIGHTS``. The weight is the one under which the right
    cards are likeliest (mean log-probability, each corner's floored at ``LL_FLOOR``; the
    smallest weight on a tie), and 0 unless that beats the classifier alone by
    ``MIN_LL_GAIN``. ``logp``: the classifier's log-probabilities of the enrolled cards (N x k),
    ``labels``: each corner's card index in 0..k-1. Returns the weight and, per weight, the
    share of corners named right and the likelihood (:class:`WeightChoice`)."""
    k = logp.shape[1]
    f = feats / (np.linalg.norm(feats, axis=1, keepdims=True) + 1e-9)
    sums = np.zeros((k, f.shape[1]))
    np.add.at(sums, labels, f)
    n = np.bincount(labels, minlength=k)
    scored = n[labels] > 1
    if not scored.any():
        return WeightChoice(1.0, {}, {})
    rows = np.flatnonzero(scored)
    sims = np.empty((len(rows), k))
    unit = sums / (np.linalg.norm(sums, axis=1, keepdims=True) + 1e-9)
    for r, i in enumerate(rows):
        own = sums[labels[i]] - f[i]
        protos = unit.copy()
        protos[labels[i]] = own / (np.linalg.norm(own) + 1e-9)
        sims[r] = protos @ f[i]
    acc, ll = {}, {}
    for w in WEIGHTS:
        score = _mix(logp[rows], sims, beta, w)
        acc[w] = float((score.argmax(axis=1) == labels[rows]).mean())
        right = _log_softmax(score)[np.arange(len(rows)), labels[rows]]
        ll[w] = float(np.maximum(right, LL_FLOOR).mean())
    best = max(WEIGHTS, key=lambda w: (round(ll[w], 9), -w))
    return WeightChoice(best if ll[best] >= ll[0.0] + MIN_LL_GAIN else 0.0, acc, ll)


def assign_ranks(
    probs: np.ndarray, kind: str, names: Sequence[str], copies: int = 2
) -> list[str | None]:
    """The card each corner of a ``kind`` shot shows (None: left out): per corner the
    probability of each card of that suit, whatever suit the classifier read (a club read as a
    spade still has the right rank), then, surest first, each corner its most likely card that
    is not yet taken ``copies`` times."""
    if kind not in SHOT_KINDS:
        raise EnrolError(f"shot kind {kind!r}: one of {', '.join(SHOT_KINDS)} expected")
    names = list(names)
    if kind == "J":
        cards = ["SB", "HR"]
        cols = [[names.index("SB")], [names.index("HR")]]
    else:
        cards = [kind + r for r in RANKS]
        cols = [[names.index(s + r) for s in "SHCD"] for r in RANKS]
    p = (
        np.stack([probs[:, c].sum(axis=1) for c in cols], axis=1)
        if len(probs)
        else np.zeros((0, len(cards)))
    )
    p = p / np.maximum(p.sum(axis=1, keepdims=True), 1e-12)
    taken = dict.fromkeys(cards, 0)
    out: list[str | None] = [None] * len(p)
    pairs = sorted(
        ((float(p[i, j]), i, j) for i in range(len(p)) for j in range(len(cards))), reverse=True
    )
    for pr, i, j in pairs:
        if out[i] is not None or taken[cards[j]] >= copies or pr < 0.05:
            continue
        out[i] = cards[j]
        taken[cards[j]] += 1
    return out


def one_per_corner(boxes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Indices of ``boxes`` (x1, y1, x2, y2) to keep, best first: a box whose centre lies inside
    a better box already kept is the same corner index found again. Enrolment reads its frames
    at two scales, and a thin index found at both can overlap itself under the NMS's IoU (seed
    9806's clubs frame: one CJ corner at IoU 0.44, read as a second CJ, and the frame refused
    as two decks' cards). In an enrolment frame the cards lie apart, so two indices never hold
    each other's centre; in a game's fan they may, which is why this is enrolment's only."""
    kept: list[int] = []
    for i in np.argsort(-np.asarray(scores), kind="stable"):
        cx, cy = (boxes[i, 0] + boxes[i, 2]) / 2, (boxes[i, 1] + boxes[i, 3]) / 2
        if any(boxes[k, 0] <= cx <= boxes[k, 2] and boxes[k, 1] <= cy <= boxes[k, 3] for k in kept):
            continue
        kept.append(int(i))
    return np.asarray(kept, dtype=int)


def enrol(
    detector: CornerReader,
    shots: Sequence[tuple[np.ndarray, str]],
    name: str = "deck",
    copies: int = 2,
    log: Any = None,
    frames: Sequence[str] | None = None,
    check: bool = True,
) -> DeckProfile:
    """A deck profile from ``(frame, kind)`` shots (kind: ``S H C D`` or ``J`` for jokers, or a
    court frame ``court-S`` .. ``court-D``, see ``court_faces``).
    ``copies``: corners one card may give in one shot (2: one deck's cards, each corner index
    of a card once; a shot with both decks' cards would need 4). ``frames``: each shot's name
    for the messages (its file). ``check``: refuse bad frames (vision/enrolcheck.py: markers
    out of view, blurred, the wrong suit, the same frame twice, two decks' cards in one frame),
    each with an EnrolError naming the frame and the cards."""
    from vision.crops import NONE_CLASS
    from vision.enrolcheck import (
        FrameReading,
        blur_problem,
        cross_frame_problem,
        frame_digest,
        frame_problem,
        marker_problem,
    )

    if not shots:
        raise EnrolError("no enrolment frames: give one frame per suit (and one of the jokers)")
    what = {**SHOT_KINDS, **{c: f"court cards, {SHOT_KINDS[c[-1]]}" for c in COURT_KINDS}}

    def where(k: int, kind: str) -> str:
        named = f", {frames[k]}" if frames is not None and k < len(frames) else ""
        return f"frame {k + 1} ({what.get(kind, kind)}{named})"

    widths: dict[int, float] = {}  # frame -> the markers' edge width (mm)
    for k, (image, kind) in enumerate(shots):
        if kind not in what:
            raise EnrolError(f"frame {k + 1}: kind {kind!r}: one of {', '.join(what)}")
        if check:
            problem, widths[k] = marker_problem(image, where(k, kind))
            if problem is None and kind in COURT_KINDS:
                court = [kind[-1] + r for r in "JQK"]
                problem = blur_problem(where(k, kind), widths[k], court)
            if problem:
                raise EnrolError(problem)
    courts = [(k, image, kind) for k, (image, kind) in enumerate(shots) if kind in COURT_KINDS]
    suit_shots = [(k, image, kind) for k, (image, kind) in enumerate(shots) if kind in SHOT_KINDS]
    if not suit_shots:
        raise EnrolError("court frames alone: give one frame per suit as well (and the jokers)")
    readings: list[FrameReading] = []
    names = detector.class_names
    corners: list[tuple[str, np.ndarray, np.ndarray]] = []  # card, probs, unit embedding
    pictures: list[np.ndarray] = []  # each corner's grey picture (suits by their shape)
    pair_faces = PairFaces()  # each card's face between its two corners (vision/pairfaces.py)
    jokers: list[tuple[dict[str, np.ndarray], tuple[float, float]]] = []  # read by face
    for k, image, kind in suit_shots:
        boxes, scores = detector.corners(image)
        sure = scores >= detector.conf
        boxes, scores = boxes[sure], scores[sure]
        boxes = boxes[one_per_corner(boxes, scores)]
        probs, feats = detector.classify_with_features(image, boxes, rotations=4)
        if NONE_CLASS in names:  # the classifier's sure "not an index" (a pip, the art)
            keep = probs[:, names.index(NONE_CLASS)] < 0.5
            probs, feats = probs[keep], feats[keep]
            boxes = boxes[keep]
        labels = assign_ranks(probs, kind, names, copies)
        if kind == "J" and not _jokers_read(probs, labels, names):
            # jokers that print no corner index (a picture, a word down the side): whatever
            # corners the frame gave are guesses on a picture (no reading of the frame to
            # check), and both jokers are read by face
            problem = blur_problem(where(k, kind), widths[k], ["SB", "HR"]) if check else None
            if check and problem is None and len(probs) >= 3:
                # a suit's frame given as the jokers: its many corners read as that suit
                reading = FrameReading(where(k, kind), kind, probs, names, frame_digest(image))
                if reading.read_as() not in (None, "J"):
                    problem = frame_problem(reading, copies)
            if problem:
                raise EnrolError(problem)
            jokers.append(_joker_faces(image, where(k, kind), log))
            continue
        if check:
            reading = FrameReading(where(k, kind), kind, probs, names, frame_digest(image))
            problem = blur_problem(reading.where, widths[k], reading.unsure_cards())
            if problem is None:
                problem = frame_problem(reading, copies)
            if problem:
                raise EnrolError(problem)
            readings.append(reading)
        got = 0
        centres: list[tuple[str, tuple[float, float]]] = []
        for lab, p, f, b in zip(labels, probs, feats, boxes, strict=True):
            if lab is not None:
                corners.append((lab, p, f / (np.linalg.norm(f) + 1e-9)))
                pictures.append(grey_picture(image, b, detector.crop_expand))
                centres.append((lab, ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)))
                got += 1
        if kind != "J":
            pair_faces.pictures.update(faces_from_shot(_grey(image), centres))
        if log:
            log(f"{where(k, kind)}: {got} of {len(boxes)} corners enrolled")
        if got == 0:
            raise EnrolError(
                f"{where(k, kind)}: no card corner found; lay the cards "
                "face up, fanned or apart, inside the camera's view"
            )
    problem = cross_frame_problem(readings) if check else None
    if problem:
        raise EnrolError(problem)
    named = {lab for lab, _, _ in corners}
    if not named:
        raise EnrolError("no card corner found in any frame: give one frame per suit")
    cards = [c for c in names if c in named]
    labels = np.array([cards.index(c) for c, _, _ in corners])
    feats = np.stack([f for _, _, f in corners])
    sums = np.zeros((len(cards), feats.shape[1]))
    np.add.at(sums, labels, feats)
    protos = sums / (np.linalg.norm(sums, axis=1, keepdims=True) + 1e-9)
    cols = [names.index(c) for c in cards]
    logp = np.log(np.stack([p[cols] for _, p, _ in corners]) + 1e-12)
    choice = choose_weight(logp, feats, labels)
    weight = choice.weight
    if log:
        log(f"{len(corners)} corners of {len(cards)} cards; {choice.describe()}")
    suits = SuitTemplates()
    for (card, _, _), pic in zip(corners, pictures, strict=True):
        suits.pictures.setdefault(card, []).append(pic)
    profile = DeckProfile(
        name,
        detector.classifier_id,
        cards,
        protos,
        [int(n) for n in np.bincount(labels, minlength=len(cards))],
        weight=weight,
        suits=suits,
        pair_faces=pair_faces or None,
    )
    cos = choose_suit_alpha(profile)
    if log:
        log(f"faces between the two corners: {len(pair_faces.pictures)} cards")
    if log:
        for colour, c in cos.items():
            a = suits.alpha[colour]
            log(f"{colour} suits: prototypes of a rank's two suits alike {c:.3f} -> alpha {a:g}")
    # court frames are for a deck whose J, Q and K print no index, a jokers frame without
    # joker corners for jokers that print none: those cards are read by face alone. A corner
    # the frames read as one of them was a guess on a picture (guyenne-classic: the club court
    # cards' corners read as CJ CQ CK, once or twice each)
    faces = court_faces(courts, log) if courts else None
    if jokers:
        faces = faces or CourtFaces()
        sizes = [s for _, s in jokers]
        if courts:  # the court frames' size, and the jokers'
            sizes += [faces.card_mm] * len(courts)
        for pics, _ in jokers:
            faces.pictures.update(pics)
        faces.card_mm = (
            float(np.median([w for w, _ in sizes])),
            float(np.median([h for _, h in sizes])),
        )
    if faces:
        profile.faces = faces
        keep = [k for k, c in enumerate(profile.cards) if c not in faces.pictures]
        profile.cards = [profile.cards[k] for k in keep]
        profile.prototypes = profile.prototypes[keep]
        profile.counts = [profile.counts[k] for k in keep]
    return profile


#: a corner counts as a joker's index when the classifier gives the jokers together at least
#: this probability (a corner found in a joker's picture reads as some number card, or as a
#: joker unsurely)
JOKER_SURE = 0.5


def _jokers_read(probs: np.ndarray, labels: Sequence[str | None], names: Sequence[str]) -> bool:
    """Whether a jokers frame shows both jokers by a corner index each: a corner given to the
    joker (``assign_ranks``) that the classifier reads as a joker (``JOKER_SURE``). Seen on
    picture jokers (proc-serif-picjokers, seed 48001): a corner in the small joker's picture
    read S7 0.23, one in the big one's HR 0.78; neither joker has an index."""
    if not len(probs):
        return False
    names = list(names)
    joker = probs[:, names.index("SB")] + probs[:, names.index("HR")]
    read = {lab for lab, p in zip(labels, joker, strict=True) if lab and p >= JOKER_SURE}
    return read == {"SB", "HR"}


def _joker_faces(
    image: np.ndarray, where: str, log: Any = None
) -> tuple[dict[str, np.ndarray], tuple[float, float]]:
    """The two jokers of a jokers frame cut as pictures (``vision.faces.jokers_from_frame``),
    for a deck whose jokers print no corner index; ``where`` names the frame."""
    from vision.faces import jokers_from_frame
    from vision.table import TableError, calibrate

    try:
        pics, size, how = jokers_from_frame(image, calibrate(image))
    except TableError as exc:
        raise EnrolError(
            f"{where}: no corner index of the jokers (SB, HR) read, and their faces cannot be "
            f"cut: {exc}; the jokers frame needs the table's markers in view"
        ) from None
    except FaceError as exc:
        raise EnrolError(f"{where}: no corner index of the jokers read, and {exc}") from None
    if log:
        log(f"{where}: no joker's corner index read; SB and HR read by their faces ({how})")
    return pics, size


def court_faces(
    courts: Sequence[tuple[int, np.ndarray, str]], log: Any = None
) -> CourtFaces | None:
    """Whole-face pictures of the court cards from court frames ``(frame number, image,
    kind)``."""
    from vision.table import TableError, calibrate

    faces = CourtFaces()
    sizes = []
    for k, image, kind in courts:
        suit = kind[-1]
        try:
            pics, size = faces_from_frame(image, calibrate(image), suit)
        except TableError as exc:
            raise EnrolError(
                f"frame {k + 1} (court cards, {SHOT_KINDS[suit]}): {exc}; the court frames need "
                "the table's markers in view"
            ) from None
        except FaceError as exc:
            raise EnrolError(f"frame {k + 1}: {exc}") from None
        if log:
            log(f"frame {k + 1} (court cards, {SHOT_KINDS[suit]}): {' '.join(pics)} by their faces")
        faces.pictures.update(pics)
        sizes.append(size)
    if not faces.pictures:
        return None
    faces.card_mm = (
        float(np.median([w for w, _ in sizes])),
        float(np.median([h for _, h in sizes])),
    )
    return faces


def missing_cards(profile: DeckProfile) -> list[str]:
    """Of the 54 cards, those the profile has neither a prototype nor a face picture for (they
    keep the classifier's reading)."""
    every = [s + r for s in "SHCD" for r in RANKS] + ["SB", "HR"]
    faces = profile.faces.pictures if profile.faces else {}
    return [c for c in every if c not in profile.cards and c not in faces]


def closest_pair(profile: DeckProfile) -> tuple[str, str, float]:
    """The two cards whose prototypes are most alike, and their cosine (a diagnostic: near 1,
    the model cannot tell them apart on this deck even with enrolment)."""
    if len(profile.cards) < 2:
        return ("", "", math.nan)
    s = profile.prototypes @ profile.prototypes.T
    np.fill_diagonal(s, -1.0)
    i, j = np.unravel_index(int(np.argmax(s)), s.shape)
    return (profile.cards[int(i)], profile.cards[int(j)], round(float(s[i, j]), 3))
