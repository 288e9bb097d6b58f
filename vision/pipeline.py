"""The table pipeline: video/camera frames -> detections -> tracker -> observations -> referee.

:class:`TablePipeline` is the frame loop (``process(index, t, image)`` -> observations), fed
by whatever reads the frames: ``kiosk/replay.py`` reads a video file through
``hardware.camera`` and feeds the observations to the referee (``guandan table replay``, the
kiosk's video source). Per frame it costs one downscale to 320 px: frame differencing says which
zones have something moving over them (hands), a skin-colour count says whether a hand rests
there (a skin-toned blob no larger than a card and ringed by card paper is a card's picture, not
a hand: a big joker printed as one large picture), and a comparison with each zone's last
confirmed look says which zones changed. Only zones that changed and have gone quiet are
re-detected (each in its own fixed crop), and only until the tracker has confirmed what lies
there (vision/track.py); a full-frame detection runs at the start, after a gap and every
``refresh_s``. The lamps (vision/track.py ``LAMPS``) are
read from a few pixels each frame. The camera is checked against the corner markers every
``watch_every`` frames (``vision.table.CameraWatch``: a moved camera is recalibrated, covered
markers only warned about).

Frame size: any. A frame larger than 1280x720 (its short side over ``DETECT_SHORT_SIDE``: the Pi
Camera Module 3's 2304x1296) is detected on a copy reduced to that size, the size the
detector's settings were chosen at, and its cards are named from crops cut from the frame
itself, so the classifier sees each corner index with all the pixels the camera gave it. The
calibration, zones and the tracker work in table millimetres; a calibration made at another
size of the same view is scaled to the frames.

A pipeline started while cards lie on the table (the kiosk restarted mid-trick) is told what
lies there first (:meth:`TablePipeline.resume` with a ``vision.track.TableState``, which the
kiosk folds from its event log): the tracker starts with those cards committed, so seeing them
again is no new ``played``, cards added on top still are, and clearing the table is still a
``trick_cleared``.

Detectors: ``vision.Detector`` (models/card-corners.onnx + card-classes.onnx) or
:class:`OracleDetector`, which serves the labels vision/synth/video.py wrote beside a rendered
video (``<video>.oracle.jsonl.gz``): what a perfect detector would see, so the tracker and the
rest of the pipeline can be measured apart from the model.

Layering (DESIGN.md): vision imports nothing of ``hardware`` or ``kiosk``; of ``engine`` only
the card and observation value types. Reading files and refereeing live in ``kiosk/replay.py``.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine.cards import parse_card
from engine.observations import Observation
from vision.detector import ALT_COST, ALT_MAX
from vision.enrol import COLOURS, RANKS
from vision.faces import FACE_PX_PER_MM, table_view
from vision.pairfaces import SHIFT as FACE_SHIFT
from vision.pairfaces import face_between
from vision.table import CENTRE, SEATS, Calibration, CameraWatch, TableError, calibrate
from vision.track import LAMPS, MAYBE, Interpreter, TableState, Tracker, lamp_positions

__all__ = [
    "Det",
    "OracleDetector",
    "PipelineError",
    "ReducedDetector",
    "ReplayReport",
    "TablePipeline",
    "resolve_detector",
    "CENTRE",
    "SEATS",
]

SMALL_W = 320
#: The detector sees a frame (or a zone's crop) reduced so that the frame's short side is at
#: most this many pixels: the size its settings (``PIPELINE_DETECTOR``) were chosen at, 1280x720.
#: A larger capture (the Pi Camera Module 3's 2304x1296, the HQ camera's 2028x1520) is detected on
#: a reduced copy, its corner boxes mapped back to the frame, and the classifier's crops are cut
#: from the frame itself, at its full resolution (``TablePipeline._detect_reduced``).
DETECT_SHORT_SIDE = 720
#: a big skin-coloured blob is a card's picture, not a hand, when at least this share of the
#: ring around it is card paper (``TablePipeline._card_art``)
ART_PAPER = 0.6
#: ... and when it is no larger than a card's face (63 x 88 mm); a hand with its fingers is
#: larger (the renderer's palm alone ~80 x 96 mm)
ART_MAX_MM2 = 63.0 * 88.0


#: a card's suit by its face between its corners (``TablePipeline._pair_faces``): nats per unit
#: of the face's projection, the likeness range over which the face comes to count fully, and
#: how far from the table's corner spacing two corners may lie to be one card's (mm)
PAIR_FACE_GAIN = 12.0
PAIR_FACE_LIKE = (0.6, 0.75)
PAIR_FACE_TOL_MM = 12.0
_SUITS_OF = {"black": "CS", "red": "HD"}
#: A face found whole within this far (mm) of the middle of a card seen by both its corner
#: indices, turned as that card within ``SAME_CARD_DEG``, is that card, not a card on it
#: (``TablePipeline._faces``)
SAME_CARD_MM = 8.0
SAME_CARD_DEG = 15.0
#: the log-ratio a reading without the other suit among its runner-ups stands for
_NO_RUNNER_UP = 5.0
#: the dearest the other suit is kept as a runner-up (nats)
OTHER_SUIT_MAX = 9.0


def _log_ratio(d: Any, first: str, second: str) -> float:
    """ln p(first) - ln p(second) of a detection named one of them (its runner-ups' costs)."""
    costs = dict(getattr(d, "alts", ()))
    if d.card == first:
        return float(costs.get(second, _NO_RUNNER_UP))
    return -float(costs.get(first, _NO_RUNNER_UP))


def _named(d: Any, first: str, second: str, z: float) -> Any:
    """Detection ``d`` (named ``first`` or ``second``) named by the log-ratio ``z`` of the two:
    the other of them its runner-up at ``|z|``; other runner-ups keep their probability, so
    their costs move with the named card's."""
    costs = dict(getattr(d, "alts", ()))
    costs.pop(first, None)
    costs.pop(second, None)
    # probabilities relative to the old reading (1): the pair's total is kept
    old = _log_ratio(d, first, second)
    p_first, p_second = (1.0, math.exp(-old)) if d.card == first else (math.exp(old), 1.0)
    total = p_first + p_second
    share = 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))
    p = {first: total * share, second: total * (1.0 - share)}
    top = max(p.values())
    card = first if p[first] >= p[second] else second
    other = second if card == first else first
    alts = [(c, math.log(top) + cost) for c, cost in costs.items()]
    # the other suit stays a runner-up however dear: the referee may still need it (a third
    # copy of a card re-reads the earlier play whose runner-up is cheapest, engine/referee.py)
    alts = [(c, v) for c, v in alts if v <= ALT_COST]
    alts.append((other, min(math.log(top / max(p[other], 1e-300)), OTHER_SUIT_MAX)))
    kept = sorted(((c, round(v, 3)) for c, v in alts), key=lambda x: x[1])
    weak, whole = getattr(d, "weak", False), getattr(d, "whole", False)
    return Det(card, tuple(d.box), d.score, tuple(kept[:ALT_MAX]), weak, whole)


def detect_scale(width: int, height: int, side: int | None = DETECT_SHORT_SIDE) -> float:
    """The scale of the copy a frame of this size is detected on (1: the frame itself)."""
    short = min(width, height)
    return 1.0 if side is None or short <= side else side / short


def reduced_corners(det: Any, image: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """``det.corners`` (vision.Detector) run on a copy of ``image`` reduced by ``scale``
    (INTER_AREA), the boxes mapped back to ``image``'s pixels: name them from ``image`` itself
    (``det.label``, ``det.classify_with_features``)."""
    if scale >= 1.0:
        return det.corners(image)  # type: ignore[no-any-return]
    h, w = image.shape[:2]
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    boxes, scores = det.corners(small)
    # a pixel edge x of the copy lies at x / scale in the image (each axis by its own ratio,
    # which rounding makes differ from scale by a hair)
    back = np.array([w / size[0], h / size[1], w / size[0], h / size[1]], np.float64)
    return np.asarray(boxes, np.float64).reshape(-1, 4) * back, scores


class ReducedDetector:
    """A two-stage detector (``vision.Detector``: ``corners``, ``label``) reading frames larger
    than 1280x720 as the table pipeline does: corners found on a copy reduced to
    ``DETECT_SHORT_SIDE`` (``reduced_corners``), cards named from the frame itself. Everything
    else is the detector's own. For the stills of a camera capturing at 2304x1296: deck
    enrolment's frames (vision/enrol.py calls ``corners`` and ``classify_with_features``) are
    then read at the detector's trained scale with their full-resolution crops."""

    def __init__(self, detector: Any, side: int | None = DETECT_SHORT_SIDE) -> None:
        self.detector = detector
        self.side = side

    def __getattr__(self, name: str) -> Any:
        return getattr(self.detector, name)

    def corners(self, image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        h, w = image.shape[:2]
        return reduced_corners(self.detector, image, detect_scale(w, h, self.side))

    def detect(self, image: np.ndarray) -> list[Any]:
        from vision.detector import as_bgr

        image = as_bgr(image)
        boxes, scores = self.corners(image)
        return list(self.detector.label(image, boxes, scores))


class PipelineError(ValueError):
    """Bad input to the pipeline (no detector, an oracle file that does not fit, ...)."""


@dataclass(frozen=True)
class Det:
    card: str
    box: tuple[float, float, float, float]
    score: float = 1.0
    alts: tuple[tuple[str, float], ...] = ()  # runner-up readings (vision.detector.Detection)
    weak: bool = False  # a joker under the corner floor (vision.detector.Detection.weak)
    whole: bool = False  # a card read whole (vision/faces.py), not by a corner index


class OracleDetector:
    """Per-frame corner labels written by the renderer; ``detect_frame(index, image, roi)``."""

    name = "oracle"

    def __init__(self, path: str | Path) -> None:
        p = Path(path)
        if not p.exists():
            raise PipelineError(f"oracle labels {p} not found (written by `guandan synth video`)")
        self.path = p
        self.frames: dict[int, list[Det]] = {}
        n = 0
        try:
            with gzip.open(p, "rt", encoding="utf-8") as fh:
                for line in fh:
                    n += 1
                    row = json.loads(line)
                    self.frames[int(row["i"])] = [
                        Det(str(c[0]), (float(c[1]), float(c[2]), float(c[3]), float(c[4])))
                        for c in row["c"]
                    ]
        except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise PipelineError(f"oracle labels {p}: unreadable near line {n}: {exc}") from None

    def detect_frame(
        self, index: int, image: Any, roi: tuple[int, int, int, int] | None = None
    ) -> list[Det]:
        dets = self.frames.get(index, [])
        if roi is None:
            return list(dets)
        x0, y0, x1, y1 = roi
        out = []
        for d in dets:
            cx, cy = (d.box[0] + d.box[2]) / 2, (d.box[1] + d.box[3]) / 2
            if x0 <= cx < x1 and y0 <= cy < y1:
                out.append(d)
        return out


#: The pipeline's detector settings. The kiosk camera sees cards 50-90 px wide (the trained
#: range is 40-170), but the indices of tightly fanned cards are partly covered: one pass on the
#: image enlarged 1.5 times, with a corner score floor of 0.15, found 99.9 % of the renderer's
#: corner labels against 91.2 % at (1.0, 0.3) on sampled frames of two held-out-deck games, and
#: lifted the played observations right on the 10 bench games (bench/RESULTS.md, 2026-11-29).
#: The tracker keeps its own floor (corner score x class probability >= 0.25); the classifier
#: averages four quarter turns. Jokers whose index the corner stage scores low (unseen designs:
#: a star, a word) are kept from a corner score of 0.02 when the classifier names them, scored
#: corner^0.25 x probability and counted only with both corners (vision/track.py ``weak``).
#: So are those scored under 0.3 (``joker_weak_below``): of a tigullio red joker's two corners,
#: the one whose corner score was over the floor scored 0.18 (corner x p), under the tracker's
#: 0.25, while the weaker one scored 0.56 (corner^0.25 x p); the card went unseen (seed 9601,
#: 2026-11-30).
#: Not on: the per-table suit balance (vision/suits.py, ``suit_balance``): measured on the four
#: plastic bench games it lost 6 plays in all (bench/RESULTS.md, 2026-11-30).
PIPELINE_DETECTOR: dict[str, Any] = {
    "pyramid": (1.5,),
    "zoom_limit": None,
    "zoom_box": None,
    "min_score": 0.0,
    "conf": 0.15,
    "rotations": 4,
    "joker_conf": 0.02,
    "joker_power": 0.25,
    "joker_weak_below": 0.3,
}


def resolve_detector(detector: Any, video: str | Path | None = None, deck: Any = None) -> Any:
    """``None``/"auto": the shipped model when models/ has it, else the video's oracle labels;
    "model"; "oracle"; a path to a ``.onnx`` or an ``.oracle.jsonl.gz``; or a detector object.
    ``deck``: an enrolled deck design (vision/enrol.py: a profile or its JSON path) for a model
    detector to read with; an oracle (which reads nothing) refuses it. A profile with a
    classifier adapted to its deck beside it (``guandan vision adapt``; or that adapted ``.onnx``
    itself) reads with that classifier (vision/adapt.py ``deck_reader``)."""
    reader = None
    if deck is not None:
        from vision.adapt import deck_reader

        reader = deck_reader(deck)
        deck = reader.profile
    if reader is not None and reader.classifier is not None:
        det = _with_classifier(detector, video, reader.classifier)
    else:
        det = _resolve_detector(detector, video)
    if deck is not None:
        if not hasattr(det, "use_deck"):
            raise PipelineError(
                f"a deck profile ({deck}) needs the model detector, not {type(det).__name__}"
            )
        det.use_deck(deck)
    return det


def _with_classifier(detector: Any, video: str | Path | None, classifier: Path) -> Any:
    """The model detector (``detector``: auto, model or a detector .onnx) with the adapted
    ``classifier`` in place of the one beside it."""
    from vision.detector import Detector

    if detector is None or detector == "auto" or detector == "model":
        return Detector(None, classifier, **PIPELINE_DETECTOR)
    if isinstance(detector, str | Path) and not str(detector).endswith(".oracle.jsonl.gz"):
        return Detector(Path(detector), classifier, **PIPELINE_DETECTOR)
    raise PipelineError(
        f"an adapted classifier ({classifier}) needs the model detector, not {detector}"
    )


def auto_detector(video: str | Path | None = None) -> str:
    """What ``--detector auto`` reads a video with: "model" when models/ has the shipped model,
    else "oracle" when the video has its corner labels beside it (PipelineError otherwise)."""
    from vision.detector import DEFAULT_MODEL

    oracle_path = Path(f"{video}.oracle.jsonl.gz") if video is not None else None
    if DEFAULT_MODEL.exists():
        return "model"
    if oracle_path is not None and oracle_path.exists():
        return "oracle"
    raise PipelineError(
        f"no card detector: {DEFAULT_MODEL} is not there (train it: models/README.md) and "
        f"the video has no oracle labels ({oracle_path}); pass --detector MODEL.onnx"
    )


def _resolve_detector(detector: Any, video: str | Path | None = None) -> Any:
    oracle_path = Path(f"{video}.oracle.jsonl.gz") if video is not None else None
    if detector is None or detector == "auto":
        detector = auto_detector(video)
    if detector == "model":
        from vision.detector import Detector

        return Detector(**PIPELINE_DETECTOR)
    if detector == "oracle":
        if oracle_path is None:
            raise PipelineError("the oracle detector needs the video path")
        return OracleDetector(oracle_path)
    if isinstance(detector, str | Path):
        p = Path(detector)
        if p.name.endswith(".oracle.jsonl.gz"):
            return OracleDetector(p)
        from vision.detector import Detector

        return Detector(p, **PIPELINE_DETECTOR)
    return detector


@dataclass
class ReplayReport:
    frames: int = 0
    seconds: float = 0.0
    video_seconds: float = 0.0
    detector: str = ""
    detector_calls: int = 0
    #: zone views searched for court faces (a deck profile with faces; vision/faces.py)
    face_looks: int = 0
    pair_faces: int = 0  # corner pairs whose suit was checked by their face (``_pair_faces``)
    calibration: str = ""
    gaps: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: the detector's per-table suit weights (vision/suits.py), when it balances suits: far
    #: from 1 means the deck's suits are hard for the classifier (plastic: clubs x30)
    suit_weights: dict[str, float] = field(default_factory=dict)
    #: the frames' size (width, height) and the scale the detector saw them at (1: the frame
    #: itself; under 1: a reduced copy, ``DETECT_SHORT_SIDE``)
    frame_size: tuple[int, int] | None = None
    detect_scale: float = 1.0

    @property
    def fps(self) -> float:
        return self.frames / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "frames": self.frames,
            "seconds": round(self.seconds, 2),
            "video_seconds": round(self.video_seconds, 2),
            "fps": round(self.fps, 1),
            "detector": self.detector,
            "detector_calls": self.detector_calls,
            "face_looks": self.face_looks,
            "pair_faces": self.pair_faces,
            "calibration": self.calibration,
            "gaps": self.gaps,
            "warnings": self.warnings,
            "suit_weights": self.suit_weights,
            "frame_size": list(self.frame_size) if self.frame_size else None,
            "detect_scale": round(self.detect_scale, 4),
        }


# ------------------------------------------------------------------------------ frame loop
_LAMP_HUE = {"pass": (45, 80), "lead": (18, 40), "deal": (95, 125)}


def _lamp_state(hsv: np.ndarray) -> str | None:
    h, s, v = (float(x) for x in hsv)
    if v < 200 or s < 120:
        return None
    for state, (lo, hi) in _LAMP_HUE.items():
        if lo <= h <= hi:
            return state
    return None


def _same_card(m: Any, at: Sequence[float], deg: float) -> bool:
    """Whether face match ``m`` lies as the card seen by both corners at ``at`` (table mm),
    turned ``deg``: its middle within ``SAME_CARD_MM``, its angle within ``SAME_CARD_DEG`` (either
    way up). A card laid across another at its middle shows the lower card's indices and counts
    as two; one laid square on it hides them."""
    turn = abs((float(m.angle) - deg + 90.0) % 180.0 - 90.0)
    return math.dist(m.centre_mm, at) <= SAME_CARD_MM and turn <= SAME_CARD_DEG


class TablePipeline:
    """Frames in, observations out (see the module doc)."""

    def __init__(
        self,
        detector: Any,
        calibration: Calibration | None = None,
        *,
        report: ReplayReport | None = None,
        refresh_s: float = 10.0,
        watch_every: int = 25,
        motion_level: float = 14.0,
        motion_px: int = 6,
        changed_level: float = 22.0,
        changed_px: int = 8,
        hand_mm2: float = 1200.0,
        roi_margin: float = 80.0,
        tracker_options: dict[str, Any] | None = None,
        detect_side: int | None = DETECT_SHORT_SIDE,
    ) -> None:
        self.detector = detector
        self.report = report or ReplayReport()
        self.report.detector = getattr(detector, "name", type(detector).__name__)
        self.refresh_s = refresh_s
        self.watch_every = watch_every
        self.motion_level, self.motion_px = motion_level, motion_px
        self.changed_level, self.changed_px = changed_level, changed_px
        self.hand_mm2 = hand_mm2
        self.roi_margin = roi_margin
        if detect_side is not None and detect_side < 120:
            raise PipelineError(f"detect_side {detect_side}: at least 120 px (or None) expected")
        #: frames whose short side is larger are detected on a reduced copy (None: never)
        self.detect_side = detect_side
        #: the scale of that copy for the frames now coming in (1: the frame itself)
        self.detect_scale = 1.0
        self.tracker_options = tracker_options or {}
        self.interpreter = Interpreter()
        self.calibration: Calibration | None = None
        self.tracker: Tracker | None = None
        self.watch: CameraWatch | None = None
        self._given = calibration
        self._no_markers: tuple[float, float, str] | None = None
        self._prev: np.ndarray | None = None
        self._ref: np.ndarray | None = None
        self._bg: np.ndarray | None = None
        self._table_level = 0.0
        self._detecting: set[str] = set()
        self._last_full = -math.inf
        self._lamp_raw: dict[str, str | None] = {}
        self._lamp_count: dict[str, int] = {}
        self._lamp_on: dict[str, str | None] = dict.fromkeys(LAMPS)
        self._size: tuple[int, int] | None = None
        self._frame_size: tuple[int, int] | None = None
        self.last_roi: tuple[int, int, int, int] | None = None
        self.t = 0.0
        self._resume: TableState | None = None

    # ---------------------------------------------------------------- calibration
    def _setup(self, cal: Calibration, image: np.ndarray) -> None:
        h, w = image.shape[:2]
        if cal.image_size != (w, h):
            cal = cal.for_image_size(w, h)
        self.calibration = cal
        if self.tracker is None:
            self.tracker = Tracker(cal, **self.tracker_options)
            if self._resume is not None:
                self._seed(self.tracker, self._resume)
        else:
            self.tracker.calibration = cal
        self.watch = CameraWatch(cal)
        self._frame_size = (w, h)
        self.detect_scale = detect_scale(w, h, self.detect_side)
        self.report.frame_size = (w, h)
        self.report.detect_scale = self.detect_scale
        sh = round(h * SMALL_W / w)
        self._small_size = (SMALL_W, sh)
        scale = SMALL_W / w
        self._masks: dict[str, np.ndarray] = {}
        self._rois: dict[str, tuple[int, int, int, int]] = {}
        for z in cal.zones:
            poly = cal.zone_polygon_px(z)
            m = np.zeros((sh, SMALL_W), np.uint8)
            cv2.fillPoly(m, [np.round(poly * scale).astype(np.int32)], 1)
            self._masks[z] = m.astype(bool)
            # the zone's crop: its bounding box and a margin, so that the cards lying in the zone
            # are seen whole with room round their corners (``roi_margin`` pixels of a 1280-wide
            # frame: 40 cut the classifier's crop of a joker's corner lying at the zone's edge,
            # so the card went unseen; seed 9606, 2026-11-30)
            pad = int(round(self.roi_margin * w / 1280))
            x0, y0 = np.floor(poly.min(0)).astype(int) - pad
            x1, y1 = np.ceil(poly.max(0)).astype(int) + pad
            self._rois[z] = (max(0, x0), max(0, y0), min(w, x1), min(h, y1))
        g = cal.geometry
        table_px = cv2.contourArea(
            np.asarray(cal.to_image([(0, 0), (g.width_mm, 0), (g.width_mm, g.height_mm),
                                     (0, g.height_mm)]) * scale, np.float32)
        )  # fmt: skip
        self._kernel = np.ones((3, 3), np.uint8)
        self._hand_px = max(6.0, 0.3 * self.hand_mm2 * table_px / (g.width_mm * g.height_mm))
        self._small_px_per_mm2 = table_px / (g.width_mm * g.height_mm)
        pos = lamp_positions(g.width_mm, g.height_mm)
        pts = cal.to_image(np.array(list(pos.values()), np.float64))
        self._lamp_px = {
            k: (int(round(p[0])), int(round(p[1]))) for k, p in zip(pos, pts, strict=True)
        }
        # lamps are neither cards nor hands: leave them out of the zone masks
        lamp_r = max(2, int(round(25.0 * math.sqrt(table_px / (g.width_mm * g.height_mm)))))
        for x, y in self._lamp_px.values():
            for m in self._masks.values():
                cv2.circle(m.view(np.uint8), (round(x * scale), round(y * scale)), lamp_r, 0, -1)
        self._prev = None
        self._ref = None
        self._bg = None
        self._detecting = set(cal.zones)
        self._last_full = -math.inf

    def _try_calibrate(self, t: float, image: np.ndarray) -> bool:
        if self._given is not None:
            from vision.table import check_camera

            h, w = image.shape[:2]
            given = self._given
            check = check_camera(image, given)
            if check.status in ("moved", "marker_moved"):
                self.report.warnings.append(
                    f"t={t:.2f}s: the calibration file does not fit this video ({check.message}); "
                    "calibrating from the video instead"
                )
                self._given = None
                return self._try_calibrate(t, image)
            self._setup(given, image)
            self.report.calibration = "file"
            return True
        try:
            cal = calibrate(image)
        except TableError as exc:
            if self._no_markers is None:
                self._no_markers = (t, t, str(exc))
            else:
                self._no_markers = (self._no_markers[0], t, self._no_markers[2])
            return False
        if self._no_markers is not None:
            a, b, why = self._no_markers
            self.report.warnings.append(
                f"{a:.2f}s-{b:.2f}s: no calibration yet, frames skipped ({why})"
            )
            self._no_markers = None
        self._setup(cal, image)
        self.report.calibration = f"from the video at t={t:.2f}s"
        return True

    # ---------------------------------------------------------------- resuming
    def resume(self, state: TableState | Mapping[str, Iterable[Any]]) -> None:
        """Go on from a table that is not empty: ``state`` (a ``vision.track.TableState``, or
        just region -> cards, e.g. ``{"S": ["S3", "H3"], "E": ["D4"]}``) is what the
        observations so far say lies there (``vision.track.table_state``). Call it before the
        first frame; the tracker is seeded when the calibration makes it (or at once)."""
        if not isinstance(state, TableState):
            state = TableState.of(state)
        self._resume = state
        self.interpreter.resume(state)
        for lamp, on in state.lamps.items():
            if lamp in self._lamp_on:
                self._lamp_on[lamp] = on
        if self.tracker is not None:
            self._seed(self.tracker, state)

    def _seed(self, tracker: Tracker, state: TableState) -> None:
        known = set(tracker.committed)
        dropped = sorted(r for r in state.on_table if r not in known)
        if dropped:
            self.report.warnings.append(
                f"resuming: regions {dropped} are not in this calibration; their cards are "
                "not carried over"
            )
        tracker.seed({r: cs for r, cs in state.on_table.items() if r in known})

    # ---------------------------------------------------------------- per frame
    def reset(self) -> None:
        """After a gap in the video: forget motion history, look at everything again."""
        self._prev = None
        if self.calibration is not None:
            self._detecting = set(self.calibration.zones)
        self._last_full = -math.inf

    def _card_art(self, image: np.ndarray, stat: np.ndarray, not_table: np.ndarray) -> bool:
        """Whether a big skin-coloured blob (``stat``: its box in the small image) is a card's
        picture, not a hand: seen in the full frame, the skin-coloured pixels there lie inside
        card paper, which rings them (``ART_PAPER`` of the ring 2-3 px out at 1280x720 is
        bright, unsaturated and not the bare table). A hand is ringed by the table, its sleeve,
        cards it lies over only in part. A big joker printed as one large skin-toned picture
        (no index) became a hand resting in the zone for as long as it lay there, so its play
        was never committed (issue 44)."""
        sx = image.shape[1] / self._small_size[0]
        sy = image.shape[0] / self._small_size[1]
        x, y, w, h = (int(v) for v in stat[:4])
        pad = 3
        x0, y0 = max(0, int((x - pad) * sx)), max(0, int((y - pad) * sy))
        x1 = min(image.shape[1], int((x + w + pad) * sx))
        y1 = min(image.shape[0], int((y + h + pad) * sy))
        if x1 - x0 < 8 or y1 - y0 < 8:
            return False
        hsv = cv2.cvtColor(image[y0:y1, x0:x1], cv2.COLOR_BGR2HSV)
        skin = (hsv[:, :, 0] <= 25) & (hsv[:, :, 1] >= 50) & (hsv[:, :, 1] <= 200)
        skin &= hsv[:, :, 2] >= 90
        n, labels, st, _ = cv2.connectedComponentsWithStats(skin.astype(np.uint8), connectivity=8)
        if n < 2:
            return False
        big = 1 + int(np.argmax(st[1:, cv2.CC_STAT_AREA]))
        if st[big, cv2.CC_STAT_AREA] > ART_MAX_MM2 * self._small_px_per_mm2 * sx * sy:
            return False  # larger than a card's face: a hand (and forearm)
        blob = (labels == big).astype(np.uint8)
        # the ring 2-3 px out (at 1280x720 a card's paper margin round its picture is ~5 px)
        r = max(1, int(round(sx / 4)))
        inner = cv2.dilate(blob, np.ones((2 * r + 1, 2 * r + 1), np.uint8))
        outer = cv2.dilate(blob, np.ones((6 * r + 1, 6 * r + 1), np.uint8))
        ring = (outer > 0) & (inner == 0)
        if not ring.any():
            return False
        # the bare table, seen in the small image, brought to the crop's pixels
        sx0, sy0 = max(0, x - pad), max(0, y - pad)
        sx1 = min(not_table.shape[1], x + w + pad)
        sy1 = min(not_table.shape[0], y + h + pad)
        off = cv2.resize(
            not_table[sy0:sy1, sx0:sx1].astype(np.uint8),
            (x1 - x0, y1 - y0),
            interpolation=cv2.INTER_NEAREST,
        )
        paper = (hsv[:, :, 1] <= 60) & (hsv[:, :, 2] >= 140) & (off > 0)
        return float(paper[ring].mean()) >= ART_PAPER

    def process(self, index: int, t: float, image: np.ndarray) -> list[Observation]:
        t = round(t, 3)
        self.t = t
        self.report.frames += 1
        if self.calibration is None:
            if index % 3 and self._given is None:
                return []
            if not self._try_calibrate(t, image):
                return []
        h, w = image.shape[:2]
        if (w, h) != self._frame_size:  # a camera reopened in another mode
            if not self._resize(t, image):
                return []
        cal, tracker = self.calibration, self.tracker
        assert cal is not None and tracker is not None and self.watch is not None
        out: list[Observation] = []
        if index % self.watch_every == 0:
            check = self.watch.update(image)
            if self.watch.calibration is not cal:
                self.report.warnings.append(f"t={t:.2f}s: {check.message}")
                self._setup(self.watch.calibration, image)
                return out
            if check.status in ("moved", "marker_moved"):
                self.report.warnings.append(f"t={t:.2f}s: {check.message}")
        small = cv2.resize(image, self._small_size, interpolation=cv2.INTER_AREA)
        gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY).astype(np.int16)
        hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
        skin = (hsv[:, :, 0] <= 25) & (hsv[:, :, 1] >= 50) & (hsv[:, :, 1] <= 200)
        skin &= hsv[:, :, 2] >= 90
        moving = (
            np.abs(gray - self._prev) > self.motion_level
            if self._prev is not None
            else np.ones(gray.shape, bool)
        )
        if self._ref is None or self._bg is None:
            self._ref = gray.copy()
            self._bg = gray.copy()  # the table as first seen (empty, normally)
            # the bare table's grey level (most of the table is bare when first seen)
            table = np.logical_or.reduce(list(self._masks.values()))
            self._table_level = float(np.median(gray[table]))
        changed = np.abs(gray - self._ref) > self.changed_level
        not_table = np.abs(gray - self._bg) > self.changed_level
        # a hand: one big skin-coloured blob that was not there when the zone was last confirmed
        # and is not the bare table (skin-coloured felt or wood; skin tones in card art are
        # small pieces)
        # (eroded first: the thin light-brown rim of a white card on a brown table goes away)
        solid = cv2.erode((skin & changed & not_table).astype(np.uint8), self._kernel)
        n, labels, stats, _ = cv2.connectedComponentsWithStats(solid, connectivity=4)
        big = [
            i
            for i in range(1, n)
            if stats[i, cv2.CC_STAT_AREA] >= self._hand_px
            and not self._card_art(image, stats[i], not_table)
        ]
        hands = np.isin(labels, big) if big else None
        busy: set[str] = set()
        for z, m in self._masks.items():
            if self._prev is None or np.count_nonzero(moving & m) > self.motion_px:
                busy.add(z)
            elif hands is not None and np.count_nonzero(hands & m):
                busy.add(z)  # a hand resting over the zone
            elif np.count_nonzero(changed & m) > self.changed_px:
                self._detecting.add(z)
        self._prev = gray
        tracker.touch(busy)
        out += self._lamps(t, image)
        full = t - self._last_full >= self.refresh_s
        todo = set(cal.zones) if full else (self._detecting - busy)
        if todo:
            if full:
                dets = self._pair_faces(image, self._detect(index, image, None))
                dets = self._faces(image, [z for z in cal.zones if z not in busy], dets)
                self._last_full = t
                changes = tracker.update(t, dets, zones=None, busy=busy)
            else:
                # each zone in its own fixed crop: a zone seen through a crop that changes with
                # the other zones being looked at gets different detections of the same cards
                # (a corner at score 0.38 in one crop, under the floor in the next)
                changes = []
                for z in sorted(todo):
                    dets = self._pair_faces(image, self._detect(index, image, self._rois[z]))
                    dets = self._faces(image, [z], dets)
                    changes += tracker.update(t, dets, zones={z}, busy=busy)
            if changes:
                out += self.interpreter.changes(t, changes)
            # jokers glimpsed by one faint corner: no play, hindsight for the referee
            for gt, seat, card in tracker.glimpses:
                out.append(Observation(gt, "glimpse", seat=seat, cards=(parse_card(card),)))
            tracker.glimpses.clear()
            for z in list(todo):
                if z not in busy and not tracker.pending([z]):
                    self._detecting.discard(z)
                    m = self._masks[z]
                    self._ref[m] = gray[m]
                    if not any(tracker.committed[r] for r in tracker.regions_of([z])):
                        # the zone holds no card: its look becomes the bare table, except
                        # what does not look like the table (close to the bare table seen
                        # before, or to the table's grey level). Cards the detector cannot read
                        # lie there too (guyenne's court cards): taken into the bare table,
                        # once they were taken away the table where they lay differed from
                        # "the bare table" and, on a skin-coloured table, was a hand resting
                        # there for good, so the zone was never looked at again (seed 9403:
                        # E's cleared trick and 8 later plays lost)
                        level = self.changed_level
                        bare = m & (
                            (np.abs(gray - self._bg) <= level)
                            | (np.abs(gray - self._table_level) <= level)
                        )
                        self._bg[bare] = gray[bare]
        for ch in self.interpreter.rereads:
            self.report.warnings.append(
                f"t={ch.t:.2f}s: zone {ch.region} read again with no hand near: "
                f"+{' '.join(ch.added) or '-'} -{' '.join(ch.removed) or '-'} (not a play)"
            )
        self.interpreter.rereads.clear()
        for ch in self.interpreter.late:
            self.report.warnings.append(
                f"t={ch.t:.2f}s: zone {ch.region}: +{' '.join(ch.added)} found with no hand near "
                "soon after its play: sent to the referee as part of that play"
            )
        self.interpreter.late.clear()
        for ch in self.interpreter.relabels:
            self.report.warnings.append(
                f"t={ch.t:.2f}s: zone {ch.region}: {' '.join(ch.removed)} read again as "
                f"{' '.join(ch.added)}: sent to the referee as a re-reading, not a play"
            )
        self.interpreter.relabels.clear()
        out += self.interpreter.flush(t)
        return out

    def _resize(self, t: float, image: np.ndarray) -> bool:
        """Frames of another size than before (a live camera reopened in another mode): the
        calibration scaled to them; when it cannot be (another aspect ratio: another view), the
        pipeline calibrates again from the markers. False when no frame may be read now."""
        h, w = image.shape[:2]
        was = self._frame_size
        assert self.calibration is not None and was is not None
        try:
            self._setup(self.calibration, image)
        except TableError as exc:
            self.report.warnings.append(
                f"t={t:.2f}s: the frames are now {w}x{h} (were {was[0]}x{was[1]}): {exc}; "
                "calibrating from the markers"
            )
            self.calibration = None
            self._given = None
            return self._try_calibrate(t, image)
        self.report.warnings.append(
            f"t={t:.2f}s: the frames are now {w}x{h} (were {was[0]}x{was[1]}): calibration "
            "scaled to them"
        )
        return True

    def _detect(
        self, index: int, image: np.ndarray, roi: tuple[int, int, int, int] | None
    ) -> list[Any]:
        self.report.detector_calls += 1
        det = self.detector
        if hasattr(det, "detect_frame"):
            return list(det.detect_frame(index, image, roi))
        if roi is None:
            self.last_roi = (0, 0, image.shape[1], image.shape[0])
            whole = self._detect_reduced(det, image)
            self._note_suits(det)
            return whole
        x0, y0, x1, y1 = roi
        self.last_roi = roi  # where the detector looked (for overlays and tests)
        found = self._detect_reduced(det, np.ascontiguousarray(image[y0:y1, x0:x1]))
        self._note_suits(det)
        return [
            Det(
                d.card,
                (d.box[0] + x0, d.box[1] + y0, d.box[2] + x0, d.box[3] + y0),
                d.score,
                getattr(d, "alts", ()),
                getattr(d, "weak", False),
            )
            for d in found
        ]

    def _detect_reduced(self, det: Any, image: np.ndarray) -> list[Any]:
        """``det.detect(image)``, and for a frame larger than the detector's size
        (``detect_scale`` under 1) with a detector that finds corners and names them apart
        (``vision.Detector``'s ``corners`` and ``label``): the corners found on a copy reduced by
        ``detect_scale``, their boxes mapped back to ``image``'s pixels, and the cards named
        from crops cut from ``image`` itself, at its full resolution."""
        r = self.detect_scale
        if r >= 1.0 or not (hasattr(det, "corners") and hasattr(det, "label")):
            return list(det.detect(image))
        boxes, scores = reduced_corners(det, image, r)
        return list(det.label(image, boxes, scores))

    def _pair_faces(self, image: np.ndarray, dets: list[Any]) -> list[Any]:
        """``dets`` with the suit of each card seen by both its corners checked against its face
        between them (vision/pairfaces.py), on a table whose deck profile has face pictures and
        whose suits of a colour look alike at the corners (``SuitTemplates.alpha``: plastic's
        clubs and spades). Two detections of one rank in that colour lying the table's corner
        spacing apart are one card: the face adds ``PAIR_FACE_GAIN`` nats per unit of its
        projection (+-0.5 for a face like one enrolled card's) to the two suits' log-ratio
        averaged over both corners, as far as the face looks like the enrolled pair at all
        (likeness ``PAIR_FACE_LIKE``), and both corners are named by the sum, the other suit
        their runner-up at its cost (kept up to ``OTHER_SUIT_MAX`` nats, ``_named``). Scores
        stay the classifier's own. On the four plastic bench games (2026-12-03, bench/RESULTS.md)
        the played observations right went from 196 to 200 of 226."""
        deck = getattr(self.detector, "deck", None)
        faces = getattr(deck, "pair_faces", None)
        suits = getattr(deck, "suits", None)
        cal, tracker = self.calibration, self.tracker
        if not faces or suits is None or cal is None or tracker is None:
            return dets
        colours = [_SUITS_OF[c] for c in _SUITS_OF if suits.alpha.get(c, 0.0) > 0]
        if not colours:
            return dets
        cand = [
            k
            for k, d in enumerate(dets)
            if len(d.card) == 2
            and d.card[1] in RANKS
            and any(d.card[0] in c for c in colours)
            and not getattr(d, "weak", False)
            and not getattr(d, "whole", False)
            and d.score >= tracker.min_score
        ]
        if len(cand) < 2:
            return dets
        px = np.array(
            [
                [(dets[k].box[0] + dets[k].box[2]) / 2, (dets[k].box[1] + dets[k].box[3]) / 2]
                for k in cand
            ]
        )
        mm = cal.to_table(px)
        spacing = tracker.spacing or tracker.pair_mm
        options = []
        for a in range(len(cand)):
            for b in range(a + 1, len(cand)):
                da, db = dets[cand[a]], dets[cand[b]]
                if da.card[1] != db.card[1] or COLOURS[da.card[0]] != COLOURS[db.card[0]]:
                    continue
                off = abs(float(np.hypot(*(mm[a] - mm[b]))) - spacing)
                if off <= PAIR_FACE_TOL_MM:
                    options.append((off, a, b))
        if not options:
            return dets
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        out = list(dets)
        used: set[int] = set()
        for _, a, b in sorted(options):
            if a in used or b in used:
                continue
            used |= {a, b}
            da, db = dets[cand[a]], dets[cand[b]]
            rank = da.card[1]
            first, second = (s + rank for s in _SUITS_OF[COLOURS[da.card[0]]])
            face = face_between(gray, px[a], px[b], margin=FACE_SHIFT)
            got = faces.evidence(face, first, second)
            self.report.pair_faces += 1
            if got is None:
                continue
            e, like = got
            w = min(
                1.0, max(0.0, (like - PAIR_FACE_LIKE[0]) / (PAIR_FACE_LIKE[1] - PAIR_FACE_LIKE[0]))
            )
            z = (_log_ratio(da, first, second) + _log_ratio(db, first, second)) / 2
            z += PAIR_FACE_GAIN * e * w
            for k in (cand[a], cand[b]):
                out[k] = _named(out[k], first, second, z)
        return out

    def _faces(self, image: np.ndarray, zones: Iterable[str], dets: list[Any]) -> list[Any]:
        """``dets`` with the court cards found by their whole face (vision/faces.py) in these
        zones, when the table's deck profile has face pictures (a deck whose J, Q and K print no
        index, or whose jokers print none): one detection at each face's middle, which the
        tracker counts as one card.
        Such cards are read by face alone: a corner read as one is a guess on a figure (and
        the card would count twice)."""
        faces = getattr(getattr(self.detector, "deck", None), "faces", None)
        cal = self.calibration
        if not faces or cal is None:
            return dets
        g = cal.geometry
        pad = max(faces.card_mm) / 2  # a card lying in the zone may reach past its edge
        out = [d for d in dets if d.card not in faces.pictures]
        # corner indices the tracker would count: they show a strip is a number card's (a ghost
        # joker scored 0.1 in a jack's figure hid that jack, seed 9603) and where it ends, and a
        # number card seen by both its corners may lie on a fan's court cards (their strips
        # beside it)
        tracker = self.tracker
        floor = tracker.min_score if tracker is not None else 0.0
        sure = [d for d in out if d.score >= floor and not getattr(d, "weak", False)]
        boxes = np.array([d.box for d in sure], np.float64).reshape(-1, 4)
        corners = cal.to_table((boxes[:, :2] + boxes[:, 2:]) / 2) if len(sure) else []
        tops: list[tuple[tuple[float, float], float]] = []
        if tracker is not None and sure:
            for c in tracker.cards_in(sure, learn=False):
                if c.corners == 2 and c.axes is not None and c.card != MAYBE:
                    (ux, uy), _ = c.axes  # its width axis, as FaceMatch.angle
                    tops.append(((c.x_mm, c.y_mm), math.degrees(math.atan2(-uy, ux))))
        found: list[Any] = []
        for z in zones:
            poly = cal.zones[z]
            x0, y0 = np.maximum(poly.min(0) - pad, 0.0)
            x1, y1 = np.minimum(poly.max(0) + pad, (g.width_mm, g.height_mm))
            view = table_view(image, cal, (x0, y0, x1, y1), FACE_PX_PER_MM)
            self.report.face_looks += 1
            here = [tp for tp in tops if cal.zone_at_mm(tp[0]) == z]
            for m in faces.find(view, (float(x0), float(y0)), here, corners):
                if cal.zone_at_mm(m.centre_mm) == z:  # not another zone's card in the margin
                    found.append(m)
        for m in found:
            if any(m.shows_index(q) for q in corners):
                continue  # the card under shows a corner index: it is no court face
            if m.strip is None and any(_same_card(m, at, deg) for at, deg in tops):
                # a card seen by both its corners, its face read as a picture: the word jokers'
                # HR (a corner word over a jester) found on a black king's face at 0.47, the
                # king counted twice (game 47702, proc-serif-wordjokers, 2026-12-05)
                continue
            # a fan's lower card where it shows: its middle lies under the card on top, where
            # the tracker takes a one-point card for one read in that card's picture
            at = m.centre_mm if m.strip is None else m.strip[:2]
            cx, cy = cal.to_image([at])[0]
            label = MAYBE if m.maybe else m.card  # a card that may be there: a doubt, no card
            box = (cx - 4.0, cy - 4.0, cx + 4.0, cy + 4.0)
            out.append(Det(label, box, m.score, m.alts, whole=True))
        return out

    def _note_suits(self, det: Any) -> None:
        suits = getattr(det, "suits", None)
        if suits is not None:
            self.report.suit_weights = suits.weights()

    def _lamps(self, t: float, image: np.ndarray) -> list[Observation]:
        h, w = image.shape[:2]
        for name, (x, y) in self._lamp_px.items():
            if not (2 <= x < w - 2 and 2 <= y < h - 2):
                continue
            patch = image[y - 2 : y + 3, x - 2 : x + 3].reshape(-1, 1, 3)
            mean = patch.mean(axis=0).astype(np.uint8).reshape(1, 1, 3)
            state = _lamp_state(cv2.cvtColor(mean, cv2.COLOR_BGR2HSV)[0, 0])
            if state == self._lamp_raw.get(name):
                self._lamp_count[name] = self._lamp_count.get(name, 0) + 1
            else:
                self._lamp_raw[name] = state
                self._lamp_count[name] = 1
            if self._lamp_count[name] >= 2:
                self._lamp_on[name] = state
        return self.interpreter.lamps(t, self._lamp_on)

    def finish(self) -> list[Observation]:
        out = self.interpreter.flush(self.t + 60.0)
        if self._no_markers is not None:
            a, b, why = self._no_markers
            self.report.warnings.append(
                f"{a:.2f}s-{b:.2f}s: no calibration, frames skipped ({why})"
            )
            self._no_markers = None
        return out
