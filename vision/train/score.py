"""``guandan train real-score``: fit the photo pair's score model (vision/scoremodel.py).

1. Read the real-cardcounter **train** photos with the photo pair (the photo settings, the
   corner floor ``conf`` of ``[real.score]``, no score floor) and keep every detection whose
   centre lies in a labelled corner box: features (corner score, class probability) and
   whether its name is the box's card.
2. Fit the logistic model on those rows (numpy).
3. Read the **valid** photos with the fitted model and choose the score floor: the highest
   recall whose precision (scored as `vision evaluate` scores) reaches ``precision``.
4. Write the model with both floors and the figures behind them (``out``).

The test split is never read. Config ``[real.score]`` (defaults in brackets): ``conf`` [0.15],
``precision`` [0.98], ``out`` [``score.json`` in the photo pair's folder]; the photo pair read is
the config's ``[real] export_dir`` [models/photo], and the photos are those of ``[real]
datasets`` [../shared/datasets], the same sets the fine-tune was prepared from.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from vision.crops import NONE_CLASS
from vision.detector import DEFAULT_CLASSIFIER_NAME, photo_detector, read_image
from vision.realphotos import BACK, Score, photos, score_photo
from vision.scoremodel import ScoreModel, features, fit
from vision.train.config import TrainConfig


def _rows(det: Any, root: Path | None, log: Any) -> tuple[np.ndarray, np.ndarray]:
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    none = det.class_names.index(NONE_CLASS) if NONE_CLASS in det.class_names else -1
    train = photos("real-cardcounter", "train", root)
    for n, ph in enumerate(train, 1):
        img = read_image(ph.path)
        boxes, corner = det.corners(img)
        if not len(boxes):
            continue
        probs = det.classify(img, boxes)  # no deck profile: how sure = the top probability
        k, how = probs.argmax(axis=1), probs.max(axis=1)
        cx, cy = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
        for i in range(len(boxes)):
            if k[i] == none:
                continue
            cards = [b.card for b in ph.boxes if b.card != BACK and b.holds(cx[i], cy[i])]
            if not cards:
                continue  # outside every labelled box: not counted either way
            xs.append(features(corner[i : i + 1], how[i : i + 1])[0])
            ys.append(np.array(det.class_names[int(k[i])] in cards))
        if n % 50 == 0:
            log(f"real-score: {n}/{len(train)} train photos, {len(ys)} detections in boxes")
    return np.array(xs), np.array(ys, np.float64)


def fit_real_score(cfg: TrainConfig, log: Any = print, root: Path | None = None) -> Path:
    """Fit, choose the floor on valid, write the score model; returns its path."""
    sc = dict(cfg.raw.get("real", {}).get("score", {}))
    conf = float(sc.get("conf", 0.15))
    target = float(sc.get("precision", 0.98))
    pair = Path(cfg.root) / str(cfg.raw.get("real", {}).get("export_dir", "models/photo"))
    # written beside the pair it scores unless the config says otherwise: a recipe whose pair
    # lives elsewhere (a smoke run's temporary folder) never overwrites the shipped model
    out = Path(cfg.root) / str(sc["out"]) if "out" in sc else pair / "score.json"
    if root is None and cfg.raw.get("real", {}).get("datasets"):
        root = cfg.path("real", "datasets")
    model, classifier = pair / "card-corners.onnx", pair / DEFAULT_CLASSIFIER_NAME
    t0 = time.time()
    det = photo_detector(model, classifier, score_model=None, conf=conf, min_score=0.0)
    x, y = _rows(det, root, log)
    weights, bias, mean, scale = fit(x, y)
    log(f"real-score: fitted on {len(y)} detections ({int(y.sum())} right), weights {weights}")
    trial = ScoreModel(weights, bias, mean, scale, conf=conf, min_score=0.0)
    read = photo_detector(model, classifier, score_model=trial, min_score=0.0)
    valid = [
        (ph, read.detect(read_image(ph.path))) for ph in photos("real-cardcounter", "valid", root)
    ]
    plain = photo_detector(model, classifier, score_model=None)
    base = Score()
    for ph, _found in valid:
        base.add(score_photo(ph, plain.detect(read_image(ph.path))))
    best: tuple[float, dict[str, Any]] | None = None
    for floor in np.round(np.arange(0.5, 0.991, 0.01), 3):
        total = Score()
        for ph, found in valid:
            total.add(score_photo(ph, [d for d in found if d.score >= floor]))
        fig = total.figures()
        if fig["precision"] >= target and (best is None or fig["recall"] > best[1]["recall"]):
            best = (float(floor), fig)
    if best is None:
        raise ValueError(
            f"real-score: no floor reaches precision {target} on real-cardcounter valid; "
            "lower [real.score] precision or train the classifier further"
        )
    floor, fig = best
    info = {
        "fitted_on": "real-cardcounter train (CC BY 4.0, datasets/README.md): detections "
        "inside labelled corner boxes",
        "rows": int(len(y)),
        "right": int(y.sum()),
        "floor_chosen_on": "real-cardcounter valid",
        "precision_target": target,
        "valid": {"recall": fig["recall"], "precision": fig["precision"]},
        "valid_without": {k: base.figures()[k] for k in ("recall", "precision")},
        "pair": str(cfg.raw.get("real", {}).get("export_dir", "models/photo")),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "seconds": round(time.time() - t0),
    }
    model_ = ScoreModel(weights, bias, mean, scale, conf=conf, min_score=floor, info=info)
    out.parent.mkdir(parents=True, exist_ok=True)
    model_.save(out)
    log(
        f"real-score: floor {floor} -> valid recall {fig['recall']} precision "
        f"{fig['precision']} (without: {info['valid_without']}); wrote {out}"
    )
    return out
