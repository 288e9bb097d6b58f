"""Real photographs of cards (../shared/datasets): loading and scoring what the detector reads.

Three sets, each with its own README there (licence, attribution, splits, quirks):

- ``real-cardcounter``: a box on every printed corner index, labelled with the card (``back``:
  a whole card back). Splits ``train`` / ``valid`` / ``test`` by source photo.
- ``real-poker-cards``: a box around each whole card, labelled with the card. ``valid`` as
  photographed; ``train`` holds 2-3 copies of each photo, some mirrored (:mod:`vision.train.real`
  sorts them out before training).
- ``real-edje``: whole-card boxes, rank only (``vision.train.evaluate.eval_real``).

Scoring, one rule for both labelled sets (issue 40): a labelled box is **read** when a detection
of the right card has its centre inside it (recall); **precision** is over the detections whose
centre falls inside some labelled box, right when one of the boxes holding it has its card (the
labels miss a few corners, so a detection outside every box counts neither way). Card backs are
not cards to read: a detection inside a ``back`` box and no other box counts as wrong, a back box
is never a miss.

numpy + OpenCV only: ``guandan vision evaluate`` runs on the kiosk's runtime install.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vision.detector import Detection, Detector, read_image

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
#: the sets of whole-card or corner boxes this module reads, by name
LABELLED = {"real-cardcounter": "corner", "real-poker-cards": "card"}
BACK = "back"


class DatasetError(ValueError):
    """A real-photo set that is missing or whose labels cannot be read."""


@dataclass(frozen=True)
class Box:
    card: str
    x1: float
    y1: float
    x2: float
    y2: float

    def holds(self, x: float, y: float) -> bool:
        return self.x1 <= x <= self.x2 and self.y1 <= y <= self.y2


@dataclass(frozen=True)
class Photo:
    path: Path
    source: str
    split: str
    width: int
    height: int
    boxes: tuple[Box, ...]


def dataset_dir(name: str, root: Path | None = None) -> Path:
    base = root if root is not None else SHARED
    d = base / name
    if not (d / "labels.jsonl").exists():
        raise DatasetError(
            f"{d}: no labels.jsonl (the real-photo sets live in ../shared/datasets beside the "
            "repository; pass --datasets DIR if they are elsewhere)"
        )
    return d


def photos(name: str, split: str | None = None, root: Path | None = None) -> list[Photo]:
    """The labelled photos of one set (``split`` None: all), boxes in pixels. The exports are
    640 x 640; the size is read from the label file's image when it says nothing."""
    d = dataset_dir(name, root)
    out: list[Photo] = []
    with open(d / "labels.jsonl", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if split is not None and row["split"] != split:
                    continue
                w = int(row.get("width", 640))
                h = int(row.get("height", 640))
                boxes = tuple(
                    Box(
                        str(b["card"]),
                        (float(b["cx"]) - float(b["w"]) / 2) * w,
                        (float(b["cy"]) - float(b["h"]) / 2) * h,
                        (float(b["cx"]) + float(b["w"]) / 2) * w,
                        (float(b["cy"]) + float(b["h"]) / 2) * h,
                    )
                    for b in row["boxes"]
                )
                out.append(Photo(d / row["image"], str(row["source"]), row["split"], w, h, boxes))
            except (KeyError, TypeError, ValueError) as exc:
                raise DatasetError(
                    f"{d / 'labels.jsonl'} line {n}: not a label line ({exc})"
                ) from None
    return out


@dataclass
class Score:
    """Running counts of :func:`score_photo` over a split."""

    boxes: int = 0
    read: int = 0
    inside: int = 0
    right: int = 0
    outside: int = 0
    images: int = 0
    wrong_colour: int = 0
    missed: Counter[str] | None = None
    misread: Counter[str] | None = None

    def add(self, other: Score) -> None:
        self.boxes += other.boxes
        self.read += other.read
        self.inside += other.inside
        self.right += other.right
        self.outside += other.outside
        self.images += other.images
        self.wrong_colour += other.wrong_colour
        for name in ("missed", "misread"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if theirs:
                if mine is None:
                    setattr(self, name, Counter(theirs))
                else:
                    mine.update(theirs)

    def figures(self) -> dict[str, Any]:
        return {
            "images": self.images,
            "boxes": self.boxes,
            "recall": round(self.read / max(1, self.boxes), 4),
            "precision": round(self.right / max(1, self.inside), 4),
            "detections_in_boxes": self.inside,
            "detections_outside": self.outside,
            "wrong_colour": self.wrong_colour,
            "top_misreads": [f"{k} {v}" for k, v in (self.misread or Counter()).most_common(8)],
        }


def _colour(card: str) -> str:
    return "red" if card[0] in "HD" else "black"


def score_photo(photo: Photo, found: Iterable[Detection]) -> Score:
    """One photo's counts: labelled boxes read, detections inside boxes and right."""
    s = Score(images=1, missed=Counter(), misread=Counter())
    assert s.missed is not None and s.misread is not None
    found = list(found)
    centres = [((d.box[0] + d.box[2]) / 2, (d.box[1] + d.box[3]) / 2, d.card) for d in found]
    for b in photo.boxes:
        if b.card == BACK:
            continue
        s.boxes += 1
        if any(c == b.card and b.holds(x, y) for x, y, c in centres):
            s.read += 1
        else:
            s.missed[b.card] += 1
    for x, y, c in centres:
        holding = [b for b in photo.boxes if b.holds(x, y)]
        if not holding:
            s.outside += 1
            continue
        s.inside += 1
        if any(b.card == c for b in holding):
            s.right += 1
            continue
        cards = [b.card for b in holding if b.card != BACK]
        if cards:
            s.misread[f"{cards[0]}->{c}"] += 1
            # a card read in the other colour although no box around it has that colour
            if all(_colour(k) != _colour(c) for k in cards if k not in ("SB", "HR")):
                s.wrong_colour += 1
        else:
            s.misread[f"back->{c}"] += 1
    return s


def evaluate_set(
    det: Detector,
    name: str,
    split: str,
    root: Path | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Figures of one split of one labelled set (:func:`score_photo` summed)."""
    t0 = time.time()
    total = Score(missed=Counter(), misread=Counter())
    for photo in photos(name, split, root)[:limit]:
        total.add(score_photo(photo, det.detect(read_image(photo.path))))
    return {
        "set": name,
        "split": split,
        "boxes_are": LABELLED.get(name, "?"),
        **total.figures(),
        "seconds": round(time.time() - t0, 1),
    }


def iter_splits(names: Iterable[str], root: Path | None = None) -> Iterator[tuple[str, str]]:
    """(set, split) pairs present, in a fixed order."""
    for name in names:
        present = {p.split for p in photos(name, None, root)}
        for split in ("train", "valid", "test"):
            if split in present:
                yield name, split
