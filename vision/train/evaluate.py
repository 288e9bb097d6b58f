"""Evaluation of the shipped models (``guandan train eval``): numpy + OpenCV + onnxruntime.

- synthetic: held-out-deck validation scenes. Corner mAP50 (one class, 101-point AP), and card
  identity: per corner (box IoU >= 0.5 and the right card) and per image (set of distinct cards).
  Partly covered corners (25-70 % visible, unlabelled; stored in the scene's meta file) are
  "ignore" regions: a detection there is neither right nor wrong.
- real: the real-edje photos (validation only). For each labelled whole-card box, is there a
  detected corner whose centre lies inside it and whose rank is right; and how many detections
  inside a box carry a wrong rank.
"""

from __future__ import annotations

import csv
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from vision.detector import Detector, read_image

REAL_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "real-edje"
RANK_OF = {"nine": "9", "ten": "T", "jack": "J", "queen": "Q", "king": "K", "ace": "A"}


def _iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if len(a) == 0 or len(b) == 0:
        return np.zeros((len(a), len(b)))
    x1 = np.maximum(a[:, None, 0], b[None, :, 0])
    y1 = np.maximum(a[:, None, 1], b[None, :, 1])
    x2 = np.minimum(a[:, None, 2], b[None, :, 2])
    y2 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = (x2 - x1).clip(0) * (y2 - y1).clip(0)
    aa = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    bb = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return np.asarray(inter / np.maximum(aa[:, None] + bb[None, :] - inter, 1e-9))


def _match(
    pred: np.ndarray, gt: np.ndarray, ign: np.ndarray, thr: float = 0.5
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Greedy matching of score-sorted predictions. Returns per prediction: matched gt index
    (-1 none), ignored flag; and the gt-matched mask."""
    iou = _iou_matrix(pred, gt)
    iou_ign = _iou_matrix(pred, ign)
    used = np.zeros(len(gt), bool)
    match = np.full(len(pred), -1)
    ignored = np.zeros(len(pred), bool)
    for i in range(len(pred)):
        if len(gt):
            cand = np.where(~used, iou[i], -1)
            j = int(np.argmax(cand))
            if cand[j] >= thr:
                used[j] = True
                match[i] = j
                continue
        if len(ign) and iou_ign[i].max() >= thr:
            ignored[i] = True
    return match, ignored, used


def average_precision(tp: np.ndarray, scores: np.ndarray, n_gt: int) -> float:
    if n_gt == 0:
        return float("nan")
    order = np.argsort(-scores)
    tpc = np.cumsum(tp[order])
    fpc = np.cumsum(1 - tp[order])
    recall = tpc / n_gt
    precision = tpc / np.maximum(tpc + fpc, 1e-9)
    # precision envelope, 101-point interpolation (COCO / ultralytics style)
    mpre = np.concatenate([[1.0], precision, [0.0]])
    mrec = np.concatenate([[0.0], recall, [1.0]])
    mpre = np.flip(np.maximum.accumulate(np.flip(mpre)))
    x = np.linspace(0, 1, 101)
    return float(np.trapezoid(np.interp(x, mrec, mpre), x))


def eval_synthetic(
    det: Detector, scenes: Path, limit: int | None = None, count_no_index: bool = False
) -> dict[str, Any]:
    """Held-out-deck validation scenes (labels and ignore regions from their meta files).

    Cards whose design prints no corner index (``vision.synth.decks.NO_INDEX``) are ignore
    regions; ``count_no_index`` counts them as labelled corners instead (how scenes rendered
    before 2026-11-30 were labelled), for comparison with older figures."""
    return eval_synthetic_counts(det, scenes, limit, (count_no_index,))[count_no_index]


def eval_synthetic_counts(
    det: Detector,
    scenes: Path,
    limit: int | None = None,
    counts: tuple[bool, ...] = (False, True),
) -> dict[bool, dict[str, Any]]:
    """:func:`eval_synthetic`'s figures for each way of counting in ``counts`` (False: the
    index-less court cards left out, True: counted), from one detector pass over the scenes."""
    metas = sorted((scenes / "meta" / "val").glob("*.json"))[:limit]
    tallies = {c: _Tally() for c in counts}
    for mp in metas:
        meta = json.loads(mp.read_text())
        img = read_image(scenes / "images" / "val" / (mp.stem + ".jpg"))
        # corners (class-agnostic) at a low threshold for AP; at most 300 per image
        conf = det.conf
        det.conf = 0.001
        boxes, scores = det.corners(img)
        det.conf = conf
        boxes, scores = boxes[:300], scores[:300]
        # identity at the working threshold, from the same corners
        work = scores >= conf
        found = det.label(img, boxes[work], scores[work])
        for c, tally in tallies.items():
            tally.add(meta, boxes, scores, found, c)
    return {c: t.figures(len(metas)) for c, t in tallies.items()}


class _Tally:
    """:func:`eval_synthetic_counts`' running counts for one way of counting."""

    def __init__(self) -> None:
        self.all_tp: list[np.ndarray] = []
        self.all_sc: list[np.ndarray] = []
        self.n_gt = 0
        self.id_tp = self.id_fp = self.id_fn = 0
        self.set_tp = self.set_fp = self.set_fn = 0
        self.perfect = 0
        self.by_deck: dict[str, Counter[str]] = {}

    def add(
        self,
        meta: dict[str, Any],
        boxes: np.ndarray,
        scores: np.ndarray,
        found: list[Any],
        count_no_index: bool,
    ) -> None:
        gt = list(meta["corners"])
        ign = list(meta.get("ignored", []))
        if count_no_index:
            extra = meta.get("no_index", [])
            gt += extra
            boxes_extra = {tuple(c["box"]) for c in extra}
            ign = [b for b in ign if tuple(b) not in boxes_extra]
        gtb = np.array([c["box"] for c in gt], float).reshape(-1, 4)
        igb = np.array(ign, float).reshape(-1, 4)
        match, ignored, _ = _match(boxes, gtb, igb)
        self.all_tp.append((match[~ignored] >= 0).astype(float))
        self.all_sc.append(scores[~ignored])
        self.n_gt += len(gt)
        pb = np.array([d.box for d in found]).reshape(-1, 4)
        match, ignored, used = _match(pb, gtb, igb)
        ok = 0
        pred: set[str] = set()
        by_deck = self.by_deck
        for d, m, ig in zip(found, match, ignored, strict=True):
            if m >= 0 and d.card == gt[m]["card"]:
                ok += 1
                by_deck.setdefault(gt[m].get("deck", "?"), Counter())["right"] += 1
            elif m >= 0 or not ig:
                self.id_fp += 1
            if not ig:
                pred.add(d.card)
        for c, hit in zip(gt, used, strict=True):
            tally = by_deck.setdefault(c.get("deck", "?"), Counter())
            tally["corners"] += 1
            tally["found"] += int(hit)
        self.id_tp += ok
        self.id_fn += len(gt) - ok
        truth = {c["card"] for c in gt}
        self.set_tp += len(pred & truth)
        self.set_fn += len(truth - pred)
        self.set_fp += len(pred - truth)
        self.perfect += int(pred == truth)

    def figures(self, images: int) -> dict[str, Any]:
        tp = np.concatenate(self.all_tp) if self.all_tp else np.zeros(0)
        sc = np.concatenate(self.all_sc) if self.all_sc else np.zeros(0)
        id_tp, set_tp = self.id_tp, self.set_tp
        return {
            "images": images,
            "corners": self.n_gt,
            "corner_map50": round(average_precision(tp, sc, self.n_gt), 4),
            "corner_id_precision": round(id_tp / max(1, id_tp + self.id_fp), 4),
            "corner_id_recall": round(id_tp / max(1, id_tp + self.id_fn), 4),
            "image_card_precision": round(set_tp / max(1, set_tp + self.set_fp), 4),
            "image_card_recall": round(set_tp / max(1, set_tp + self.set_fn), 4),
            "images_all_right": round(self.perfect / max(1, images), 4),
            # per design, at the working threshold: labelled corners, the share found (IoU >=
            # 0.5) and the share found and named right
            "by_deck": {
                deck: {
                    "corners": t["corners"],
                    "found": round(t["found"] / max(1, t["corners"]), 4),
                    "named_right": round(t["right"] / max(1, t["corners"]), 4),
                }
                for deck, t in sorted(self.by_deck.items())
            },
        }


def eval_real(det: Detector, real_dir: Path = REAL_DIR, limit: int | None = None) -> dict[str, Any]:
    rows: dict[str, list[dict[str, str]]] = {}
    for name in ("train_labels.csv", "test_labels.csv"):
        with open(real_dir / name, newline="") as f:
            for r in csv.DictReader(f):
                rows.setdefault(r["filename"], []).append(r)
    hits = any_corner = total = wrong = only_wrong = 0
    per_rank: Counter[str] = Counter()
    per_rank_hit: Counter[str] = Counter()
    t0 = time.time()
    for fname, labels in sorted(rows.items())[:limit]:
        found = det.detect_file(real_dir / "images" / fname)
        centres = [((d.box[0] + d.box[2]) / 2, (d.box[1] + d.box[3]) / 2, d.card) for d in found]
        for r in labels:
            rank = RANK_OF[r["class"]]
            x1, y1, x2, y2 = (float(r[k]) for k in ("xmin", "ymin", "xmax", "ymax"))
            inside = [c for (cx, cy, c) in centres if x1 <= cx <= x2 and y1 <= cy <= y2]
            total += 1
            per_rank[rank] += 1
            any_corner += bool(inside)
            if any(c[1] == rank for c in inside):
                hits += 1
                per_rank_hit[rank] += 1
            wrong += sum(1 for c in inside if c[1] != rank)
            only_wrong += bool(inside) and not any(c[1] == rank for c in inside)
    return {
        "images": len(rows) if limit is None else min(limit, len(rows)),
        "card_boxes": total,
        "rank_recall": round(hits / max(1, total), 4),
        "any_corner_recall": round(any_corner / max(1, total), 4),
        "wrong_rank_detections": wrong,  # includes corners of overlapping neighbour cards
        "boxes_only_wrong_rank": only_wrong,
        "per_rank_recall": {k: round(per_rank_hit[k] / per_rank[k], 3) for k in sorted(per_rank)},
        "seconds": round(time.time() - t0, 1),
    }
