"""Card detector at run time: onnxruntime + OpenCV + numpy only (no torch).

Two shipped models (models/README.md): a one-class detector that finds every visible corner index
(rank + suit) and a classifier that names the card from a square crop around each corner. A
frame is shrunk so its long side is at most ``max_side`` (never enlarged), cut into overlapping
tiles when it is still larger than ``tile``, and each tile goes through the detector at its own
size (rounded up to a multiple of 32). The detector was trained on cards about 30-130 px wide, so
by default a second, half-size pass finds cards too large for the first (a close-up photo: cards
200+ px wide); the passes are merged by NMS. Boxes are in pixels of the input image.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.crops import CROP_EXPAND, CROP_SIZE, NONE_CLASS, classifier_input, crop_square
from vision.enrol import DeckProfile, EnrolError, classifier_id, grey_picture
from vision.scoremodel import ScoreModel
from vision.suits import SuitBalance

#: ``guandan_kind`` metadata of our two model files, and the metadata format version.
META_KIND = {"detector": "guandan-card-corners", "classifier": "guandan-card-classes"}
META_VERSION = "1"
MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
DEFAULT_MODEL = MODELS_DIR / "card-corners.onnx"
DEFAULT_CLASSIFIER_NAME = "card-classes.onnx"
#: The detector passes of ``vision detect`` and ``guandan train eval`` (scale factors of the
#: working size, merged by NMS). 1: the working size. 0.5: cards too large for the trained range
#: (close-ups: the webcam photos of real-edje, cards ~170 px wide at 960 px). 1.25: an enlarged
#: pass for small indices (cards ~40 px wide), run only while the enlarged image's long side is
#: at most ``DEFAULT_ZOOM_LIMIT`` (one detector tile), so a 1280x720 frame (960 px after
#: ``max_side``) costs what it did; it keeps only boxes whose long side at the working size is
#: under ``DEFAULT_ZOOM_BOX`` px (the larger ones the working pass finds: kept, they added false
#: corners). Chosen on the first 150 held-out synthetic scenes (models/README.md, 2026-12-01):
#: corner mAP50 0.954 -> 0.970 there.
DEFAULT_PYRAMID = (1.25, 1.0, 0.5)
DEFAULT_ZOOM_LIMIT = 1024
DEFAULT_ZOOM_BOX = 24.0
#: Classifier passes per corner by default (the crop at each quarter turn, log-probabilities
#: averaged). Since 2026-12-01 also for ``vision detect`` and ``train eval`` (the table pipeline
#: and enrolment used it already): held-out scenes 0-149, card identity per image P / R 0.797 /
#: 0.845 -> 0.815 / 0.858 (models/README.md).
DEFAULT_ROTATIONS = 4
#: A corner whose reported score (corner score x the classifier's probability of its card) is
#: under this is not reported by default. Since 2026-12-01: on the held-out scenes, the wrong
#: readings (a suit or rank misread, a box in a card's art) score low far more often than the
#: right ones; 0.2 chosen on scenes 0-149 (models/README.md). The table pipeline and enrolment
#: set 0: the tracker has its own floors and hysteresis.
DEFAULT_MIN_SCORE = 0.2
#: What ``vision detect`` and ``vision evaluate`` use on photographs (issue 40): a quarter-size
#: pass as well (close-ups: cards 300-600 px wide), the negative-image pass (``invert``: a black
#: deck's light ink), and a floor of 0.3. Chosen 2026-12-04 on the real ``valid`` splits only
#: (models/README.md, "Real photographs"): real-cardcounter corners R / P 0.747 / 0.906 -> 0.754
#: / 0.925 and the other colour 6 -> 2, real-poker-cards 0.995 / 0.990 -> 0.990 / 0.988, at
#: about twice the corner stage's cost. The table pipeline keeps its one pass (its camera sees
#: cards 50-90 px wide on a known deck) and its tracker's floors.
#: The photo pair: both models fine-tuned on real photographs (`guandan train real`), in
#: models/photo/. Not the table pipeline's: on the kiosk's own rendered games its corner
#: detector read a plastic-deck game worse (bench 9402: 63 -> 53-55 of 63 plays), so the
#: kiosk keeps models/card-*.onnx (models/README.md, "Real photographs").
PHOTO_MODEL = MODELS_DIR / "photo" / "card-corners.onnx"
PHOTO_PYRAMID = (1.25, 1.0, 0.5, 0.25)
PHOTO_INVERT = True
PHOTO_MIN_SCORE = 0.3
PHOTO_CONF = 0.3
#: Photographs: crops at 0.75, 0.85 and 1 x the classifier's crop size, log-probabilities
#: averaged (``crop_scales``), and a detection whose centre lies in a better one's box and
#: whose box is under half its area dropped (``contain``: a suit pip or a rank glyph found on
#: its own inside an index). Chosen 2026-12-04 (session 4) on real-cardcounter **valid** only
#: (models/README.md, "Third round"): the photo pair read the labelled boxes best at a
#: tighter crop than it was trained on (R / P 0.807 / 0.955 -> 0.843 / 0.972 at the 0.3 floors
#: with the second round's classifier), and most detections named wrong inside a labelled box
#: were such parts at lower floors (floors 0.2: P 0.940 -> 0.970, the same recall). With the
#: third round's classifier, valid 0.854 / 0.979; the test split's third reading 0.845 / 0.981.
PHOTO_CROP_SCALES = (0.75, 0.85, 1.0)
PHOTO_CONTAIN = 0.5
#: Photographs: the reported score is the probability that the reading is right, from the
#: corner score and the class probability (vision/scoremodel.py), with the
#: floors it was chosen with (``conf``, ``min_score``) in place of PHOTO_CONF and
#: PHOTO_MIN_SCORE. Fitted on real-cardcounter **train**, floors chosen on **valid**
#: (``guandan train real-score``; models/README.md, "Fourth round"). Read only with the photo
#: pair it was fitted for.
PHOTO_SCORE_MODEL = MODELS_DIR / "photo" / "score.json"
_JOKERS = frozenset({"SB", "HR"})
#: runner-up readings kept per corner (Detection.alts): at most this many ...
ALT_MAX = 3
#: ... each at most this much less likely than the first, in nats (e^5 ~ 150 times)
ALT_COST = 5.0


#: the smallest image side ``read_image`` takes: a card's corner index is ~5 px tall at the
#: smallest card the detector reads (30 px wide), so an image under this holds no card
MIN_IMAGE_SIDE = 16


class ModelError(ValueError):
    """A model file that is missing, unreadable, not ours, or lacks our metadata."""


class ImageError(ValueError):
    """An image file that is missing, unreadable or not an image."""


@dataclass(frozen=True)
class Detection:
    """One visible corner index: the card (CONTRACT notation), its box and a score in [0, 1]."""

    card: str
    box: tuple[float, float, float, float]  # x1, y1, x2, y2 in input-image pixels
    score: float
    #: the classifier's runner-up readings of this corner, ``(card or "none", cost)`` with cost
    #: = ln(p(card) / p(runner-up)) >= 0, cheapest first (at most ``ALT_MAX`` within
    #: ``ALT_COST``); the table pipeline passes them to the referee (engine/referee.py: a
    #: camera reading that is not a legal play is re-read with them)
    alts: tuple[tuple[str, float], ...] = ()
    #: a joker corner kept under the corner floor (``Detector.joker_conf``) because the
    #: classifier named it surely: the table tracker counts it only with its second corner
    weak: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "card": self.card,
            "box": [round(v, 1) for v in self.box],
            "score": round(self.score, 3),
        }


def _session(path: Path, kind: str, threads: int) -> tuple[Any, dict[str, str]]:
    import onnxruntime as ort

    if not path.exists():
        raise ModelError(f"{path}: model file not found (the shipped one is {DEFAULT_MODEL})")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    try:
        sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types
        first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
        raise ModelError(f"{path}: not a readable ONNX model ({first})") from None
    meta = dict(sess.get_modelmeta().custom_metadata_map)
    if meta.get("guandan_kind") != META_KIND[kind]:
        raise ModelError(
            f"{path}: not a guandan {kind} model (metadata guandan_kind="
            f"{meta.get('guandan_kind')!r}, expected {META_KIND[kind]!r}); "
            "pass a model exported by `guandan train export`"
        )
    for key in ("class_names", "input_size", "guandan_version"):
        if key not in meta:
            raise ModelError(f"{path}: model metadata lacks {key!r}; re-export it")
    return sess, meta


def nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> list[int]:
    """Greedy non-maximum suppression; returns kept indices, best first."""
    order = np.argsort(-scores)
    keep: list[int] = []
    areas = (boxes[:, 2] - boxes[:, 0]).clip(0) * (boxes[:, 3] - boxes[:, 1]).clip(0)
    while order.size:
        i = int(order[0])
        keep.append(i)
        rest = order[1:]
        xx1 = np.maximum(boxes[i, 0], boxes[rest, 0])
        yy1 = np.maximum(boxes[i, 1], boxes[rest, 1])
        xx2 = np.minimum(boxes[i, 2], boxes[rest, 2])
        yy2 = np.minimum(boxes[i, 3], boxes[rest, 3])
        inter = (xx2 - xx1).clip(0) * (yy2 - yy1).clip(0)
        union = areas[i] + areas[rest] - inter
        order = rest[inter / np.maximum(union, 1e-9) <= iou]
    return keep


def _tiles(length: int, tile: int, overlap: int) -> list[int]:
    if length <= tile:
        return [0]
    n = math.ceil((length - overlap) / (tile - overlap))
    step = (length - tile) / max(1, n - 1)
    return [int(round(i * step)) for i in range(n)]


def read_image(path: str | Path) -> np.ndarray:
    """BGR image from a file; ImageError naming the file when it cannot be used."""
    p = Path(path)
    if not p.exists():
        raise ImageError(f"{p}: no such image file")
    if p.is_dir():
        raise ImageError(f"{p}: is a directory, not an image")
    data = np.fromfile(str(p), np.uint8)
    img = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if img is None:
        raise ImageError(f"{p}: not a readable image (JPEG, PNG, BMP, TIFF or WebP expected)")
    h, w = img.shape[:2]
    if min(h, w) < MIN_IMAGE_SIDE:
        raise ImageError(
            f"{p}: {w}x{h} px is too small to show a card (at least {MIN_IMAGE_SIDE} px a side)"
        )
    return img


def as_bgr(image: np.ndarray) -> np.ndarray:
    """A grey or BGRA image as BGR (a BGR one as it is)."""
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    return image


class Detector:
    """Corner-index detection plus card classification.

    ``model`` is the detector ONNX; its classifier is ``classifier`` or, by default,
    ``card-classes.onnx`` next to it.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        classifier: str | Path | None = None,
        *,
        conf: float = 0.3,
        iou: float = 0.45,
        max_side: int = 960,
        tile: int = 1024,
        threads: int = 2,
        pyramid: Sequence[float] = DEFAULT_PYRAMID,
        zoom_limit: int | None = DEFAULT_ZOOM_LIMIT,
        zoom_box: float | None = DEFAULT_ZOOM_BOX,
        rotations: int = DEFAULT_ROTATIONS,
        min_score: float = DEFAULT_MIN_SCORE,
        joker_conf: float | None = None,
        joker_power: float = 1.0,
        joker_weak_below: float | None = None,
        suit_balance: bool = False,
        deck: DeckProfile | str | Path | None = None,
        invert: bool = False,
        crop_scales: Sequence[float] = (1.0,),
        contain: float | None = None,
        score_model: ScoreModel | None = None,
    ) -> None:
        self.model_path = Path(model) if model else DEFAULT_MODEL
        self.det, self.det_meta = _session(self.model_path, "detector", threads)
        cls_path = (
            Path(classifier) if classifier else self.model_path.parent / DEFAULT_CLASSIFIER_NAME
        )
        self.cls, self.cls_meta = _session(cls_path, "classifier", threads)
        self.classifier_path = cls_path
        self.class_names: list[str] = json.loads(self.cls_meta["class_names"])
        self.crop_size = int(self.cls_meta.get("crop_size", CROP_SIZE))
        try:
            self.crop_expand = float(self.cls_meta.get("crop_expand", CROP_EXPAND))
        except ValueError:
            self.crop_expand = math.nan
        if not 1.0 <= self.crop_expand <= 8.0:
            raise ModelError(
                f"{cls_path}: metadata crop_expand {self.cls_meta.get('crop_expand')!r} is not a "
                "number from 1 to 8 (export the classifier again: guandan train export)"
            )
        self.cls_size = int(json.loads(self.cls_meta.get("input_size", "[40, 40]"))[0])
        self.conf, self.iou = conf, iou
        self.max_side, self.tile = max_side, tile
        if not pyramid or any(not 0.05 <= f <= 2.0 for f in pyramid):
            raise ValueError(f"pyramid {tuple(pyramid)}: scale factors in 0.05..2 expected")
        #: relative scales of the detector passes (1.0: the working size; above 1 enlarges, for
        #: small cards such as the kiosk camera's); a shrinking pass whose image would have a long
        #: side under 160 px is skipped, and so is an enlarging one whose image would have a long
        #: side over ``zoom_limit`` (None: no limit); a single pass always runs. With more than
        #: one pass, an enlarging pass keeps only boxes whose long side at the working size is
        #: under ``zoom_box`` px (None: all); small indices are what it is for
        self.pyramid = tuple(float(f) for f in pyramid)
        if zoom_limit is not None and zoom_limit < 32:
            raise ValueError(f"zoom_limit {zoom_limit}: at least 32 px (or None) expected")
        if zoom_box is not None and not zoom_box > 0:
            raise ValueError(f"zoom_box {zoom_box}: a positive size in pixels (or None) expected")
        self.zoom_limit, self.zoom_box = zoom_limit, zoom_box
        #: also look for corners in the negative image (light ink on dark card: a black deck
        #: with silver and gold indices reads there as a white one with dark indices); the
        #: classifier still names them from the image itself. Doubles the corner stage's cost,
        #: so `vision detect` turns it on and the table pipeline leaves it off (models/README.md)
        self.invert = invert
        if rotations not in (1, 2, 4):
            raise ValueError(f"rotations {rotations}: 1, 2 or 4 expected")
        #: classifier test-time augmentation: the crop also turned by 180 (2) or by each quarter
        #: turn (4), log-probabilities averaged (+1.2 points of held-out crop accuracy at 4)
        self.rotations = rotations
        if not crop_scales or any(not 0.3 <= f <= 3.0 for f in crop_scales):
            raise ValueError(f"crop_scales {tuple(crop_scales)}: factors in 0.3..3 expected")
        #: the classifier's crop at each of these x its trained size (``crop_expand``),
        #: log-probabilities and embeddings averaged with the turns' (photos: PHOTO_CROP_SCALES)
        self.crop_scales = tuple(float(f) for f in crop_scales)
        if contain is not None and not 0.0 < contain <= 1.0:
            raise ValueError(f"contain {contain}: an area share in (0, 1] (or None) expected")
        #: drop a detection whose centre lies in a better-scored one's box and whose area is
        #: under this share of it (None: keep all; photos: PHOTO_CONTAIN). Not for the table
        #: pipeline, whose tracker weighs every corner itself
        self.contain = contain
        #: photos: the reported score is this model's probability that the reading is right
        #: (vision/scoremodel.py) instead of corner score x class probability
        self.score_model = score_model
        if not 0.0 <= min_score <= 1.0:
            raise ValueError(f"min_score {min_score}: a score from 0 to 1 expected")
        #: detections whose reported score (corner x class probability) is under this are
        #: dropped (``DEFAULT_MIN_SCORE``; 0 keeps every corner over ``conf``)
        self.min_score = min_score
        if not 0.0 < joker_power <= 1.0:
            raise ValueError(f"joker_power {joker_power}: 0 < p <= 1 expected")
        #: Jokers: their indices differ most between deck designs (a star, a word, a figure), so
        #: the corner stage scores an unseen design's low (tigullio: 0.03-0.11) while the
        #: classifier names it surely (SB 0.92-0.96). A corner under ``conf`` that the
        #: classifier calls a joker is kept from ``joker_conf`` (default: ``conf``, i.e. never),
        #: marked ``weak``, and scores corner ** ``joker_power`` x class probability.
        self.joker_conf = conf if joker_conf is None else min(conf, joker_conf)
        self.joker_power = joker_power
        #: a joker corner scored under this (default ``conf``) is ``weak``: a corner score
        #: just over ``conf`` would otherwise score lower (corner x probability) than a weak one
        self.joker_weak_below = conf if joker_weak_below is None else max(conf, joker_weak_below)
        #: per-table suit calibration (vision/suits.py): on, the suit probabilities of every
        #: reading are reweighted so that the four suits come out equally often over the
        #: corners this detector has read (a table plays two full decks)
        self.suits = SuitBalance(self.class_names) if suit_balance else None
        self.det_input = self.det.get_inputs()[0].name
        self.cls_input = self.cls.get_inputs()[0].name
        #: the classifier's embedding output (exported since 2026-11-30; older files get it with
        #: ``vision.train.export.add_features_output``): what deck enrolment compares
        self.has_features = any(o.name == "features" for o in self.cls.get_outputs())
        #: an enrolled deck design (vision/enrol.py): corners are named by their similarity to
        #: its prototypes within the probability the classifier gives the enrolled cards
        self.deck: DeckProfile | None = None
        if deck is not None:
            self.use_deck(deck)
        shape = self.det.get_inputs()[0].shape
        self.fixed_hw: tuple[int, int] | None = (
            (int(shape[2]), int(shape[3])) if all(isinstance(s, int) for s in shape[2:]) else None
        )
        self.version = self.det_meta["guandan_version"]

    # -- detector stage --------------------------------------------------------------------
    def _run_det(self, img: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Corner boxes (x1, y1, x2, y2) and scores on one image (or tile), in its pixels."""
        h, w = img.shape[:2]
        if self.fixed_hw:
            th, tw = self.fixed_hw
            r = min(th / h, tw / w)
        else:
            r = 1.0
            th, tw = (math.ceil(h / 32) * 32, math.ceil(w / 32) * 32)
        nh, nw = int(round(h * r)), int(round(w * r))
        resized = img if (nh, nw) == (h, w) else cv2.resize(img, (nw, nh))
        canvas = np.full((th, tw, 3), 114, np.uint8)
        top, left = (th - nh) // 2, (tw - nw) // 2
        canvas[top : top + nh, left : left + nw] = resized
        blob = cv2.cvtColor(canvas, cv2.COLOR_BGR2RGB).transpose(2, 0, 1)[None]
        out = self.det.run(None, {self.det_input: blob.astype(np.float32) / 255.0})[0][0]
        scores = out[4]
        # the floor read now: ``conf`` may have been lowered since (train eval's AP at 0.001)
        keep = scores >= min(self.conf, self.joker_conf)
        if keep.sum() > 3000:  # an untrained or confused model: bound the NMS work
            keep &= scores >= np.sort(scores)[-3000]
        cx, cy, bw, bh = out[0][keep], out[1][keep], out[2][keep], out[3][keep]
        boxes = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], axis=1)
        boxes = (boxes - [left, top, left, top]) / r
        return boxes.reshape(-1, 4), scores[keep]

    def corners(self, image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All corner boxes in input-image pixels after scaling, tiling and NMS."""
        h, w = image.shape[:2]
        base = min(1.0, self.max_side / max(h, w))
        all_boxes, all_scores = [], []
        scales = self._scales(max(h, w), base)
        passes = [(s, False) for s in scales] + ([(s, True) for s in scales] if self.invert else [])
        for s, negative in passes:
            work = (
                image
                if s == 1.0
                else cv2.resize(
                    image,
                    None,
                    fx=s,
                    fy=s,
                    interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_CUBIC,
                )
            )
            if negative:
                work = 255 - work
            wh, ww = work.shape[:2]
            overlap = 96
            for y0 in _tiles(wh, self.tile, overlap):
                for x0 in _tiles(ww, self.tile, overlap):
                    part = work[y0 : y0 + self.tile, x0 : x0 + self.tile]
                    b, sc = self._run_det(part)
                    if len(scales) > 1 and s > base and self.zoom_box is not None:
                        # at the working size a box is (s / base) times smaller
                        small = (b[:, 2:] - b[:, :2]).max(axis=1) * base / s < self.zoom_box
                        b, sc = b[small], sc[small]
                    all_boxes.append((b + [x0, y0, x0, y0]) / s)
                    all_scores.append(sc)
        boxes = np.concatenate(all_boxes)
        scores = np.concatenate(all_scores)
        boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, w)
        boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, h)
        keep = nms(boxes, scores, self.iou) if len(scores) else []
        return boxes[keep], scores[keep]

    def _scales(self, side: int, base: float) -> list[float]:
        """The passes' scales for an image whose long side is ``side`` (``base``: the working
        size's scale): shrinking passes under 160 px and enlarging passes over ``zoom_limit``
        are left out, unless that leaves none (then the first factor runs)."""
        run = [
            base * f
            for f in self.pyramid
            if not (f < 1 and side * base * f < 160)
            and not (f > 1 and self.zoom_limit is not None and side * base * f > self.zoom_limit)
        ]
        return run or [base * self.pyramid[0]]

    @functools.cached_property
    def classifier_id(self) -> str:
        """Fingerprint of the classifier file (vision.enrol.classifier_id), hashed on first use
        (enrolment, a deck profile), not at start-up."""
        return classifier_id(self.classifier_path)

    def use_deck(self, deck: DeckProfile | str | Path | None) -> None:
        """Read with this enrolled deck design from now on (None: without one)."""
        if deck is None:
            self.deck = None
            return
        where = ""
        if not isinstance(deck, DeckProfile):
            where = str(deck)
            deck = DeckProfile.load(deck)
        if not self.has_features:
            raise ModelError(
                f"{self.classifier_path}: this classifier has no 'features' output, which a deck "
                "profile needs; export it again (guandan train export) or add the output with "
                "vision.train.export.add_features_output"
            )
        deck.check(self.classifier_id, self._feature_dims() or deck.prototypes.shape[1], where)
        unknown = [c for c in deck.cards if c not in self.class_names]
        if unknown:
            raise EnrolError(f"{where or deck.name}: cards {unknown} are not this model's classes")
        self.deck = deck

    # -- classifier stage ------------------------------------------------------------------
    def _feature_dims(self) -> int:
        out = next(o for o in self.cls.get_outputs() if o.name == "features")
        return int(out.shape[1]) if isinstance(out.shape[1], int) else 0

    def _run_classifier(
        self, image: np.ndarray, boxes: np.ndarray, rotations: int, features: bool
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Probabilities (and, with ``features``, unit embeddings) of the crops around
        ``boxes``; over 1, 2 or 4 quarter turns, log-probabilities and embeddings averaged."""
        x = np.concatenate(
            [
                classifier_input(
                    np.stack(
                        [crop_square(image, b, self.crop_size, self.crop_expand * f) for b in boxes]
                    ),
                    self.cls_size,
                )
                for f in self.crop_scales
            ]
        )
        turns = (0,) if rotations == 1 else (0, 2) if rotations == 2 else (0, 1, 2, 3)
        batch = x if rotations == 1 else np.concatenate([np.rot90(x, k, (2, 3)) for k in turns])
        names = [self.cls.get_outputs()[0].name] + (["features"] if features else [])
        outs = self.cls.run(names, {self.cls_input: np.ascontiguousarray(batch)})
        probs: np.ndarray = outs[0]
        n = len(boxes)
        views = len(turns) * len(self.crop_scales)
        if views != 1:
            logp = np.log(probs.reshape(views, n, -1) + 1e-9).mean(axis=0)
            p = np.exp(logp)
            probs = np.asarray(p / p.sum(axis=1, keepdims=True), np.float32)
        if not features:
            return probs, None
        f = outs[1].reshape(views, n, -1)
        f = (f / (np.linalg.norm(f, axis=2, keepdims=True) + 1e-9)).mean(axis=0)
        f /= np.linalg.norm(f, axis=1, keepdims=True) + 1e-9
        return probs, f.astype(np.float32)

    def classify_with_features(
        self, image: np.ndarray, boxes: np.ndarray, rotations: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The classifier's own probabilities and its embedding (unit rows, averaged over the
        quarter turns like the log-probabilities) of the crops around ``boxes``."""
        if not self.has_features:
            raise ModelError(f"{self.classifier_path}: this classifier has no 'features' output")
        if len(boxes) == 0:
            empty = np.zeros((0, len(self.class_names)), np.float32)
            return empty, np.zeros((0, self._feature_dims()), np.float32)
        probs, feats = self._run_classifier(
            image, boxes, self.rotations if rotations is None else rotations, True
        )
        assert feats is not None
        return probs, feats

    def classify(self, image: np.ndarray, boxes: np.ndarray) -> np.ndarray:
        """Class probabilities (N x len(class_names)) of the crops around ``boxes``; with an
        enrolled deck (``use_deck``), as its prototypes share them out."""
        return self._classify(image, boxes)[0]

    def _classify(self, image: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`classify`'s probabilities, and per crop how sure the classifier itself is of
        its card: the probability of its likeliest card (with a deck profile, before the
        prototypes share the enrolled cards' probability out)."""
        if len(boxes) == 0:
            return np.zeros((0, len(self.class_names)), np.float32), np.zeros(0, np.float32)
        if self.deck is not None:
            probs, feats = self.classify_with_features(image, boxes)
            read = self.deck.reweigh(probs, feats, self.class_names)
            suits = self.deck.suits
            if suits is not None and suits.on():  # suits by their shape (vision/enrol.py)
                expand = self.crop_expand

                def cut(i: int) -> np.ndarray:
                    return grey_picture(image, boxes[i], expand)

                read = suits.adjust(read, cut, self.class_names)
            return read, probs.max(axis=1)
        probs = self._run_classifier(image, boxes, self.rotations, False)[0]
        return probs, probs.max(axis=1)

    def detect(self, image: np.ndarray) -> list[Detection]:
        """Every visible corner index in a BGR (or grey, or BGRA) image, best first."""
        image = as_bgr(image)
        boxes, scores = self.corners(image)
        return self.label(image, boxes, scores)

    def label(self, image: np.ndarray, boxes: np.ndarray, scores: np.ndarray) -> list[Detection]:
        """Name the cards of the given corner boxes; corners classified ``none`` are dropped.

        A corner's score is its corner score x how sure the classifier is of its card. With a
        deck profile the prototypes decide *which* card, not how sure (vision/enrol.py): where
        they split a card's probability between two suits (plastic's C4 and S4), the score is
        still the classifier's own (seed 9602 enrolled: three 4s of a full house fell under
        the tracker's floor at 0.15-0.22, and the play lost two cards)."""
        probs, how_sure = self._classify(image, boxes)
        if self.suits is not None and len(probs):
            sure = np.asarray(scores) >= self.conf
            self.suits.observe(probs[sure], np.asarray(boxes)[sure])
            probs = self.suits.adjust(probs)
            how_sure = probs.max(axis=1)
        none_idx = self.class_names.index(NONE_CLASS) if NONE_CLASS in self.class_names else None
        right: np.ndarray | None = None
        if self.score_model is not None and len(probs):
            right = self.score_model.score(np.asarray(scores), np.asarray(how_sure))
        result = []
        names = self.class_names
        for i, (b, sc, p, how) in enumerate(zip(boxes, scores, probs, how_sure, strict=True)):
            order = np.argsort(-p)
            k = int(order[0])
            if none_idx is not None and k == none_idx:
                continue
            weak = bool(sc < self.conf)
            if weak and (names[k] not in _JOKERS or sc < self.joker_conf):
                continue
            if names[k] in _JOKERS and sc < self.joker_weak_below:
                weak = True
            score = float(sc) ** (self.joker_power if weak else 1.0) * float(how)
            if right is not None:
                score = float(right[i])
            if score < self.min_score:
                continue
            top = math.log(max(float(p[k]), 1e-12))
            alts = []
            for j in order[1 : 1 + ALT_MAX]:
                cost = top - math.log(max(float(p[j]), 1e-12))
                if cost > ALT_COST:
                    break
                alts.append((names[int(j)], round(cost, 3)))
            result.append(
                Detection(
                    names[k],
                    (float(b[0]), float(b[1]), float(b[2]), float(b[3])),
                    score,
                    tuple(alts),
                    weak,
                )
            )
        result.sort(key=lambda d: -d.score)
        if self.contain is not None:
            result = self._drop_contained(result, self.contain)
        return result

    @staticmethod
    def _drop_contained(found: list[Detection], share: float) -> list[Detection]:
        """``found`` (best first) without each detection whose centre lies inside the box of a
        better one kept and whose area is under ``share`` of that box's: NMS by overlap keeps
        a small box inside a big one (IoU <= its area share), and on photos such a box is a
        part of the index (the suit pip, the rank glyph) found on its own and named wrong."""
        kept: list[Detection] = []
        for d in found:
            x1, y1, x2, y2 = d.box
            cx, cy, area = (x1 + x2) / 2, (y1 + y2) / 2, (x2 - x1) * (y2 - y1)
            if not any(
                k.box[0] <= cx <= k.box[2]
                and k.box[1] <= cy <= k.box[3]
                and area < share * (k.box[2] - k.box[0]) * (k.box[3] - k.box[1])
                for k in kept
            ):
                kept.append(d)
        return kept

    def detect_file(self, path: str | Path) -> list[Detection]:
        return self.detect(read_image(path))

    def detect_many(self, paths: Sequence[str | Path]) -> list[list[Detection] | ImageError]:
        out: list[list[Detection] | ImageError] = []
        for p in paths:
            try:
                out.append(self.detect_file(p))
            except ImageError as exc:
                out.append(exc)
        return out


def photo_model() -> Path:
    """The photo pair's detector (``PHOTO_MODEL``), else the table pipeline's."""
    return PHOTO_MODEL if PHOTO_MODEL.exists() else DEFAULT_MODEL


def photo_detector(
    model: str | Path | None = None, classifier: str | Path | None = None, **settings: Any
) -> Detector:
    """A detector with the photo settings (``PHOTO_*``): the photo pair (the table pipeline's
    where models/photo is absent), what ``vision detect`` reads with by default and ``vision
    evaluate`` measures; ``settings`` override single ones. The photo pair reads with its
    score model (``PHOTO_SCORE_MODEL``) and that model's floors, unless ``score_model`` is
    given (None: corner score x class probability, floors PHOTO_CONF / PHOTO_MIN_SCORE)."""
    kw: dict[str, Any] = {
        "conf": PHOTO_CONF,
        "pyramid": PHOTO_PYRAMID,
        "invert": PHOTO_INVERT,
        "min_score": PHOTO_MIN_SCORE,
        "crop_scales": PHOTO_CROP_SCALES,
        "contain": PHOTO_CONTAIN,
    }
    if "score_model" not in settings:
        sm = photo_score_model(model, classifier)
        if sm is not None:
            kw.update(score_model=sm, conf=sm.conf, min_score=sm.min_score)
    elif settings["score_model"] is not None:
        kw.update(conf=settings["score_model"].conf, min_score=settings["score_model"].min_score)
    kw.update(settings)
    return Detector(model or photo_model(), classifier, **kw)


def photo_score_model(
    model: str | Path | None = None, classifier: str | Path | None = None
) -> ScoreModel | None:
    """The photo pair's score model, when reading with that pair (a model and classifier of
    one's own were not what it was fitted on) and the file is there."""
    if model is not None and Path(model).resolve() != PHOTO_MODEL.resolve():
        return None
    if (
        classifier is not None
        and Path(classifier).resolve() != (PHOTO_MODEL.parent / DEFAULT_CLASSIFIER_NAME).resolve()
    ):
        return None
    if not PHOTO_MODEL.exists() or not PHOTO_SCORE_MODEL.exists():
        return None
    return ScoreModel.load(PHOTO_SCORE_MODEL)


def enrolment_detector(
    model: str | Path | None = None, classifier: str | Path | None = None
) -> Detector:
    """The detector enrolment (``vision.enrol.enrol``) reads its frames with: both detector
    scales the kiosk's cards need (1 and 1.5; the enlarged pass whatever the frame's size and its
    boxes' sizes) and the four quarter turns for steadier embeddings."""
    return Detector(
        model,
        classifier,
        pyramid=(1.0, 1.5),
        zoom_limit=None,
        zoom_box=None,
        rotations=4,
        min_score=0.0,
    )
