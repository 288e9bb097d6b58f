"""The event's deck as faces, cut from the enrolment frames (issue 44).

The frames of ``guandan vision enrol`` (each suit's 13 cards laid apart, face up, and the two
jokers; vision/enrol.py) show every card of the deck whole. :func:`deck_from_enrolment` turns
them into the synthetic renderer's deck folder (``<CARD>.png`` for the 54 cards, BGRA, and
``deck.json`` with the corner-index box; vision/synth/decks.py ``load_deck``), which
``guandan vision adapt`` (vision/adapt.py) renders scenes of to fine-tune the classifier.

Per frame: the table's markers give the homography (vision/table.py ``calibrate``); the table
is seen from above at ``PX_PER_MM``; every card-sized region that is not the bare table
(vision/faces.py's test) is a card, its outline the smallest rectangle around it, cut upright
(``FACE_W`` px wide), white-balanced (its paper at ``PAPER``, white) and sharpened by what the
camera blurred (``SHARPEN_SIGMA_PX`` of its pixels). Which card each is comes from
the corner reader (the shipped detector and classifier): every corner index found inside the
outline votes with the classifier's probabilities for the cards the frame may show (the rank
counts whatever suit it read, as enrolment does), and the cards are named surest first. The two
jokers, when their corners say nothing (a picture joker), are told apart by colour: the big
joker (HR) is the colourful one.

A deck whose J, Q and K print no index (guyenne-classic: a figure alone) gives the corner reader
nothing to name them by, so its suits' frames cannot name them: as for ``guandan vision enrol``,
the referee adds one *court frame* per suit (kinds ``court-S`` .. ``court-D``: that suit's J, Q
and K apart in one row, J on the camera's left). Those three are named by their place in the
row; in the suit's own frame a card whose picture is one of them (``COURT_LIKE``, normalised
correlation either way up) is left out, and the rest are named from the ranks 2-10 and A.

What goes wrong is said per frame and card: a card *missing* (no outline named it), *doubled*
(two outlines read as it), *cut off* (an outline at the view's edge or of a part of a card) or
*unreadable* (an outline no corner named); nothing is written unless all 54 faces are there.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

__all__ = ["DeckFacesError", "DeckFaces", "cut_cards", "deck_from_enrolment", "write_deck"]

#: the top-down view the cards are cut from (a kiosk camera gives ~0.8-1 px/mm: finer only
#: interpolates, and keeps the cut from losing what there is)
PX_PER_MM = 3.0
#: width of a written face (px; the renderer resizes faces to the size it draws)
FACE_W = 180
#: the paper's brightness after white balance: white, as the renderer's own deck faces have it
#: (its light is applied on top); 240 until 2026-12-05 left every cut face 6 % darker than the
#: design's own (plastic: paper 237-240 against 255)
PAPER = 255.0
#: the camera's blur, undone in part: an unsharp mask of this many of the frame's pixels
#: (sigma, at the card) and this amount. A face is cut from a card ~46 px wide (1280x720) and
#: drawn again by adapt's renderer, which blurs it once more; the design's own faces are sharp.
#: Measured on plastic (seed 544100) against its own faces, in corner crops drawn alike: the
#: crops' sharpness (variance of the Laplacian) 0.50 of the design's without, 0.96 with.
SHARPEN_SIGMA_PX = 0.5
SHARPEN_AMOUNT = 1.5
#: a card's area on the table, mm^2 (63 x 88 = 5,544; a marker is 3,600 but square)
CARD_AREA = (3800.0, 7500.0)
#: a region of at least this much of a card's area that is not a whole card is a cut-off card
PART_AREA = 1200.0
RANKS = "23456789TJQKA"
COURTS = "JQK"
#: a card of a suit's frame is one of the suit's court cards (given by a court frame) when its
#: picture correlates at least this well with one of theirs (grey, ``LIKE_SIZE``, either way
#: up). guyenne-classic, enrolment seed 544203: its court cards in the suit frames 0.80-0.93
#: against their court frame's pictures, its number cards at most 0.17
COURT_LIKE = 0.6
LIKE_SIZE = (36, 50)
#: cut this far inside the card's outline (mm)
RIM_MM = 1.0


class DeckFacesError(ValueError):
    """Enrolment frames that do not give a whole deck (the message names frames and cards)."""


@dataclass
class CardCut:
    picture: np.ndarray  # BGR, upright, FACE_W wide
    outline_mm: np.ndarray  # 4 x 2, table mm
    cut_off: bool = False
    source_px: float = 0.0  # the card's width in the frame's pixels


@dataclass
class DeckFaces:
    faces: dict[str, np.ndarray] = field(default_factory=dict)  # card -> BGR upright face
    problems: list[str] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)

    def missing(self) -> list[str]:
        from vision.synth.decks import CARD_NAMES

        return [c for c in CARD_NAMES if c not in self.faces]


def _white_balance(face: np.ndarray, sharpen_px: float = 0.0) -> np.ndarray:
    """Scale each colour so the paper (the median of the brightest 40 % of the face) is
    ``PAPER``; then, with ``sharpen_px`` (face pixels per frame pixel x ``SHARPEN_SIGMA_PX``),
    an unsharp mask of that sigma (``SHARPEN_AMOUNT``)."""
    f = face.astype(np.float32)
    grey = f.mean(axis=2)
    paper = grey >= np.quantile(grey, 0.6)
    level = np.median(f[paper], axis=0)
    f = f * (PAPER / np.maximum(level, 1.0))
    if sharpen_px > 0:
        f = f + SHARPEN_AMOUNT * (f - cv2.GaussianBlur(f, (0, 0), sharpen_px))
    return np.clip(f, 0, 255).astype(np.uint8)


def cut_cards(image: np.ndarray, calibration: Any) -> tuple[list[CardCut], list[str]]:
    """The cards lying apart in one frame: upright faces and outlines; and a note for each
    region that looks like part of a card (cut off by the view, or covered)."""
    from vision.faces import _not_table, table_view

    g = calibration.geometry
    view = table_view(image, calibration, (0.0, 0.0, g.width_mm, g.height_mm), PX_PER_MM)
    # in view px: the image's own border, so a card running out of the camera's view is cut off
    h_img, w_img = image.shape[:2]
    inside = np.full(image.shape[:2], 255, np.uint8)
    inside = table_view(inside, calibration, (0.0, 0.0, g.width_mm, g.height_mm), PX_PER_MM)
    small = cv2.resize(view, None, fx=1 / PX_PER_MM, fy=1 / PX_PER_MM, interpolation=cv2.INTER_AREA)
    blur = cv2.GaussianBlur(small, (5, 5), 0)
    table = np.median(blur.reshape(-1, 3), axis=0)
    fg = _not_table(blur, table).astype(np.uint8)
    fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, np.ones((9, 9), np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(fg, connectivity=8)
    cuts: list[CardCut] = []
    notes: list[str] = []
    hv, wv = fg.shape
    for i in range(1, n):
        x, y, bw, bh, area = (int(v) for v in stats[i])
        if area < PART_AREA:
            continue
        pts = np.column_stack(np.nonzero(labels == i)[::-1]).astype(np.float32)
        (cx, cy), (w, h), ang = cv2.minAreaRect(pts)
        if w > h:
            w, h, ang = h, w, ang + 90.0
        aspect = h / max(w, 1.0)
        if aspect <= 1.15 and area >= 0.8 * w * h:  # a filled square: a marker, never a card
            continue
        at_edge = x <= 1 or y <= 1 or x + bw >= wv - 1 or y + bh >= hv - 1
        whole = CARD_AREA[0] <= area <= CARD_AREA[1] and 1.25 <= aspect <= 1.6
        if not whole:
            what = "touching cards" if area > CARD_AREA[1] else "part of a card"
            notes.append(f"{what} at {cx:.0f}, {cy:.0f} mm on the table ({area:.0f} mm^2)")
            continue
        # the outline less a rim (the felt's colour bleeds into the card's edge pixels)
        box = cv2.boxPoints(((cx, cy), (w - 2 * RIM_MM, h - 2 * RIM_MM), ang))
        # upright: the corner with the smallest x + y of the rotated frame first
        rect = _order(box)
        fh = int(round(FACE_W * (h - 2 * RIM_MM) / (w - 2 * RIM_MM)))
        dst = np.float32([[0, 0], [FACE_W - 1, 0], [FACE_W - 1, fh - 1], [0, fh - 1]])
        m = cv2.getPerspectiveTransform(np.float32(rect * PX_PER_MM), dst)
        pic = cv2.warpPerspective(view, m, (FACE_W, fh), flags=cv2.INTER_AREA)
        seen = cv2.warpPerspective(inside, m, (FACE_W, fh), flags=cv2.INTER_NEAREST)
        cut = at_edge or float((seen > 0).mean()) < 0.98
        # the card's width in the frame's own pixels: how much the cut was enlarged
        ends = calibration.to_image(np.asarray(rect[:2], np.float64))
        src_w = max(float(np.linalg.norm(ends[1] - ends[0])), 1.0)
        sharpen = SHARPEN_SIGMA_PX * FACE_W / src_w
        cuts.append(CardCut(_white_balance(pic, sharpen), rect, cut, src_w))
    del h_img, w_img
    return cuts, notes


def _order(box: np.ndarray) -> np.ndarray:
    """A rectangle's corners as top-left, top-right, bottom-right, bottom-left of the card held
    upright (portrait): the long sides are the card's sides; of the two ways up, the one whose
    top-left corner is nearest the view's top-left (a face turned half-way looks the same)."""
    pts = np.asarray(box, np.float64)
    best: np.ndarray | None = None
    for k in range(4):
        r = np.roll(pts, -k, axis=0)
        top = np.linalg.norm(r[1] - r[0])
        side = np.linalg.norm(r[3] - r[0])
        if side < top:  # not portrait this way
            continue
        # clockwise in image coordinates (y down): tl -> tr goes right of tl -> bl
        v1, v2 = r[1] - r[0], r[3] - r[0]
        if v1[0] * v2[1] - v1[1] * v2[0] < 0:
            r = r[[0, 3, 2, 1]]
        if best is None or r[0].sum() < best[0].sum():
            best = r
    assert best is not None
    return best


def _candidates(kind: str, ranks: str = RANKS) -> list[str]:
    return ["SB", "HR"] if kind == "J" else [kind + r for r in ranks]


def _grey(face: np.ndarray) -> np.ndarray:
    g = cv2.cvtColor(face, cv2.COLOR_BGR2GRAY)
    g = cv2.resize(g, LIKE_SIZE, interpolation=cv2.INTER_AREA).astype(np.float32)
    g -= g.mean()
    return g / (float(np.linalg.norm(g)) + 1e-6)


def court_likeness(face: np.ndarray, courts: Sequence[np.ndarray]) -> float:
    """How alike ``face`` is to the nearest of ``courts`` (pictures of court cards): the best
    normalised correlation of their grey pictures, either way up."""
    g = _grey(face)
    best = -1.0
    for c in courts:
        h = _grey(c)
        best = max(best, float((g * h).sum()), float((g * h[::-1, ::-1]).sum()))
    return best


def _court_row(
    cal: Any, cuts: list[CardCut], suit: str, where: str
) -> tuple[dict[str, np.ndarray], list[str]]:
    """A court frame's three cards named J, Q, K by their place, left to right as the camera
    sees them; or the frame's problems."""
    from vision.enrol import SHOT_KINDS

    name = SHOT_KINDS[suit]
    if len(cuts) != 3:
        return {}, [
            f"{where}: found {len(cuts)} whole card{'' if len(cuts) == 1 else 's'}, not 3; lay "
            f"the {name}' J, Q and K apart in one row (J on the camera's left, K on its right), "
            "face up, the table's markers in view"
        ]
    xs = [
        float(cal.to_image(np.asarray([c.outline_mm.mean(axis=0)], np.float64))[0][0]) for c in cuts
    ]
    row = [cuts[k] for k in np.argsort(xs)]
    problems = [
        f"{where}: {suit}{r} is cut off (not wholly in the camera's view)"
        for r, c in zip(COURTS, row, strict=True)
        if c.cut_off
    ]
    if problems:
        return {}, problems
    return {suit + r: c.picture for r, c in zip(COURTS, row, strict=True)}, []


def _read(reader: Any, image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The corner boxes of a frame and the classifier's probabilities (its sure "none"
    corners dropped), as enrolment reads them: one box per corner index (``one_per_corner``;
    without it a paris clubs frame, seed 548400, 2026-12-05, gave one C4 index two boxes and
    the other two overlapping ones, four where one card shows two, and was refused as both
    decks' cards, a frame `vision enrol` took)."""
    from vision.crops import NONE_CLASS
    from vision.enrol import one_per_corner

    names = list(reader.class_names)
    boxes, scores = reader.corners(image)
    sure = scores >= reader.conf
    boxes, scores = boxes[sure], scores[sure]
    boxes = boxes[one_per_corner(boxes, scores)]
    if not len(boxes):
        return boxes, np.zeros((0, len(names)), np.float32)
    probs, _ = reader.classify_with_features(image, boxes, rotations=4)
    if NONE_CLASS in names:
        keep = probs[:, names.index(NONE_CLASS)] < 0.5
        boxes, probs = boxes[keep], probs[keep]
    return boxes, probs


def _votes(
    names: Sequence[str],
    boxes: np.ndarray,
    probs: np.ndarray,
    calibration: Any,
    cuts: list[CardCut],
    kind: str,
    ranks: str = RANKS,
) -> np.ndarray:
    """Per cut card, the log-probability of each candidate card from the corners inside it
    (of ``ranks`` only: without the court cards when a court frame gives them)."""
    names = list(names)
    cands = _candidates(kind, ranks)
    if kind == "J":
        cols = [[names.index("SB")], [names.index("HR")]]
    else:
        cols = [[names.index(s + r) for s in "SHCD"] for r in ranks]
    votes = np.zeros((len(cuts), len(cands)))
    if not len(boxes) or not cuts:
        return votes
    centres = np.column_stack([(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2])
    mm = calibration.to_table(centres)
    for p, at in zip(probs, mm, strict=True):
        q = np.array([p[c].sum() for c in cols])
        q = q / max(float(q.sum()), 1e-12)
        for k, cut in enumerate(cuts):
            poly = cut.outline_mm.astype(np.float32).reshape(-1, 1, 2)
            if cv2.pointPolygonTest(poly, (float(at[0]), float(at[1])), False) >= 0:
                votes[k] += np.log(q + 1e-3)
                break
    return votes


def _colourful(face: np.ndarray) -> float:
    hsv = cv2.cvtColor(face, cv2.COLOR_BGR2HSV)
    return float((hsv[..., 1] > 90).mean())


def _name(
    votes: np.ndarray, cuts: list[CardCut], kind: str, where: str, ranks: str = RANKS
) -> tuple[dict[str, np.ndarray], list[str]]:
    """Each cut card its candidate, surest first; the problems of the frame."""
    cands = _candidates(kind, ranks)
    problems: list[str] = []
    named: dict[str, np.ndarray] = {}
    read = np.abs(votes).sum(axis=1) > 0  # at least one corner voted
    if kind == "J" and len(cuts) == 2 and not read.all():
        # a picture joker: the big joker (HR) is the colourful one
        order = sorted(range(2), key=lambda k: _colourful(cuts[k].picture))
        votes = votes.copy()
        for k, card in zip(order, ("SB", "HR"), strict=True):
            if not read[k]:
                votes[k, cands.index(card)] = -0.01
                votes[k, 1 - cands.index(card)] = -5.0
        read[:] = True
    p = np.exp(votes - votes.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    taken: dict[str, int] = {}
    pairs = sorted(
        ((float(p[k, j]), k, j) for k in range(len(cuts)) if read[k] for j in range(len(cands))),
        reverse=True,
    )
    done: set[int] = set()
    for pr, k, j in pairs:
        if k in done or cands[j] in taken:
            continue
        if pr < 0.05:
            break
        taken[cands[j]] = k
        done.add(k)
    for k, cut in enumerate(cuts):
        if not read[k]:
            problems.append(f"{where}: a card no corner index could be read on is unreadable")
            continue
        best = cands[int(np.argmax(p[k]))]
        if k not in done:
            problems.append(f"{where}: {best} is doubled (two cards read as {best})")
            continue
        card = next(c for c, kk in taken.items() if kk == k)
        if cut.cut_off:
            problems.append(f"{where}: {card} is cut off (not wholly in the camera's view)")
            continue
        named[card] = cut.picture
    return named, problems


def deck_from_enrolment(
    reader: Any,
    shots: Sequence[tuple[np.ndarray, str]],
    frames: Sequence[str] | None = None,
    log: Any = None,
    check: bool = True,
) -> DeckFaces:
    """The deck's faces from enrolment ``(frame, kind)`` shots (kind ``S H C D J``), read with
    ``reader`` (vision.detector.enrolment_detector()). Problems are collected, not raised;
    ``check``: also enrolment's own checks of each frame (vision/enrolcheck.py: markers out of
    view, blurred, the wrong suit, both decks' cards, the same frame twice)."""
    from vision.enrol import COURT_KINDS, SHOT_KINDS
    from vision.enrolcheck import (
        FrameReading,
        blur_problem,
        cross_frame_problem,
        frame_digest,
        frame_problem,
        marker_problem,
    )
    from vision.table import TableError, calibrate

    out = DeckFaces(frames=[str(f) for f in frames] if frames else [])
    readings = []
    what = {**SHOT_KINDS, **{c: f"court cards, {SHOT_KINDS[c[-1]]}" for c in COURT_KINDS}}
    # the court frames first: a suit frame leaves out the cards that look like their pictures
    order = sorted(range(len(shots)), key=lambda k: shots[k][1] not in COURT_KINDS)
    courts: dict[str, list[np.ndarray]] = {}
    for k in order:
        image, kind = shots[k]
        named = f", {frames[k]}" if frames is not None and k < len(frames) else ""
        where = f"frame {k + 1} ({what.get(kind, kind)}{named})"
        if kind not in SHOT_KINDS and kind not in COURT_KINDS:
            out.problems.append(
                f"{where}: kind {kind!r} is not a suit frame, the jokers or a court frame"
            )
            continue
        width = 0.0
        if check:
            problem, width = marker_problem(image, where)
            if problem:
                out.problems.append(problem)
                continue
        try:
            cal = calibrate(image)
        except TableError as exc:
            out.problems.append(f"{where}: the table's markers: {exc}")
            continue
        if kind in COURT_KINDS:
            cuts, notes = cut_cards(image, cal)
            out.problems += [f"{where}: {n}" for n in notes]
            faces, problems = _court_row(cal, cuts, kind[-1], where)
            out.problems += problems
            for card, face in faces.items():
                if card in out.faces:
                    out.problems.append(f"{where}: {card} is doubled (also in an earlier frame)")
                out.faces[card] = face
            courts[kind[-1]] = list(faces.values())
            if log:
                log(f"{where}: {len(cuts)} cards cut, named by place: {' '.join(faces)}")
            continue
        boxes, probs = _read(reader, image)
        if check:
            reading = FrameReading(where, kind, probs, reader.class_names, frame_digest(image))
            problem = blur_problem(where, width, reading.unsure_cards())
            problem = problem or frame_problem(reading, 2)
            if problem:
                out.problems.append(problem)
                continue
            readings.append(reading)
        cuts, notes = cut_cards(image, cal)
        out.problems += [f"{where}: {n}" for n in notes]
        ranks = RANKS
        if kind in courts:
            # the suit's court cards come from its court frame: their cards here are left out
            like = [court_likeness(c.picture, courts[kind]) for c in cuts]
            figures = [c for c, v in zip(cuts, like, strict=True) if v >= COURT_LIKE]
            if len(figures) != len(COURTS):
                out.problems.append(
                    f"{where}: {len(figures)} cards look like the court frame's J, Q, K, not "
                    f"3 (the same deck in both frames?)"
                )
            cuts = [c for c, v in zip(cuts, like, strict=True) if v < COURT_LIKE]
            ranks = "".join(r for r in RANKS if r not in COURTS)
            if log:
                log(f"{where}: {len(figures)} court cards left out (their court frame gives them)")
        votes = _votes(reader.class_names, boxes, probs, cal, cuts, kind, ranks)
        faces, problems = _name(votes, cuts, kind, where, ranks)
        out.problems += problems
        for card, face in faces.items():
            if card in out.faces:
                out.problems.append(f"{where}: {card} is doubled (also in an earlier frame)")
            out.faces[card] = face
        if log:
            log(f"{where}: {len(cuts)} cards cut, {len(faces)} named: {' '.join(sorted(faces))}")
    problem = cross_frame_problem(readings) if check else None
    if problem:
        out.problems.append(problem)
    return out


def write_deck(faces: DeckFaces, out: str | Path, name: str) -> Path:
    """Write the deck folder (54 faces + deck.json) to ``out``, whole or not at all: a card
    missing, or any problem, raises DeckFacesError naming them all."""
    from vision.synth.decks import measure_index_box

    out = Path(out)
    missing = faces.missing()
    problems = list(faces.problems)
    if missing:
        problems.append(f"missing: {' '.join(missing)} (no frame showed them whole and read)")
    if problems:
        raise DeckFacesError(
            "the deck's faces are not complete, nothing written: " + "; ".join(problems)
        )
    if not out.parent.is_dir():
        raise DeckFacesError(f"{out}: the folder {out.parent} does not exist")
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    bgra = {}
    for card, face in faces.faces.items():
        a = np.dstack([face, np.full(face.shape[:2], 255, np.uint8)])
        bgra[card] = a
        cv2.imwrite(str(tmp / f"{card}.png"), a)
    meta = {
        "name": name,
        "index_box": [round(v, 4) for v in measure_index_box(bgra)],
        "source": "enrolment frames",
        "frames": faces.frames,
    }
    (tmp / "deck.json").write_text(json.dumps(meta, indent=1))
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    return out
