"""Fine-tune both models on real photographs beside the synthetic scenes (issue 40).

``guandan train real-data`` prepares, ``real-detector`` and ``real-classifier`` train (each
resumable, each warm-started from the shipped ONNX files: vision/train/warmstart.py), and
``real-export`` writes the ONNX files. Config: the ``[real]`` sections of models/train.toml.

What is used, from ../shared/datasets (their READMEs hold the licences; models/README.md and
datasets/README.md say what was trained on):

- ``real-cardcounter`` **train** (CC BY 4.0): every labelled corner index is a detector box and
  gives classifier crops (``crop_jitter`` copies with the detector's box noise); squares of the
  same sizes away from every box are ``none`` crops (the labels miss a few corners: a few of
  those are corners, a known, small noise).
- ``real-poker-cards`` **train** (CC BY 4.0): whole-card boxes only, and 2-3 copies of each
  photo, some mirrored. One copy per photo; its corners are the shipped detector's (pseudo
  labels), each named by the card box that holds it (when several boxes hold it, the card the
  shipped classifier finds likeliest among them). A copy is used the way round whose corners the
  classifier reads as their boxes' cards more surely than in its mirror image: a mirrored
  index is no real card. Squares in the middle of each card (pips, figures) are ``none``.
- The synthetic training scenes and corner crops of ``guandan train data`` (so that what the
  models knew is kept).

The ``valid`` splits are for choosing (the classifier's best epoch is chosen on real-cardcounter
``valid`` crops together with the synthetic held-out crops); ``test`` is never read here.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.crops import CROP_EXPAND, crop_square
from vision.synth.decks import CARD_NAMES
from vision.train.config import TrainConfig

NONE_CLASS = len(CARD_NAMES)
_INDEX = {c: i for i, c in enumerate(CARD_NAMES)}


def _jitter(rng: np.random.Generator, box: tuple[float, ...]) -> tuple[float, float, float, float]:
    """The detector's box noise: centre +-8 %, size +-10 % (as vision/synth/dataset.py)."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    dx, dy = rng.normal(0, 0.08, 2) * (w, h)
    sw, sh = np.exp(rng.normal(0, 0.1, 2))
    cx, cy = (x1 + x2) / 2 + dx, (y1 + y2) / 2 + dy
    return (cx - w * sw / 2, cy - h * sh / 2, cx + w * sw / 2, cy + h * sh / 2)


def _free_square(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    side: float,
    avoid: list[tuple[float, float, float, float]],
    inside: tuple[float, float, float, float] | None = None,
) -> tuple[float, float, float, float] | None:
    """A square of ``side`` px that overlaps no box of ``avoid`` (within ``inside`` if given)."""
    h, w = shape[:2]
    for _ in range(20):
        if inside is None:
            x = rng.uniform(0, max(1.0, w - side))
            y = rng.uniform(0, max(1.0, h - side))
        else:
            bx1, by1, bx2, by2 = inside
            cx = rng.uniform(bx1 + 0.3 * (bx2 - bx1), bx2 - 0.3 * (bx2 - bx1))
            cy = rng.uniform(by1 + 0.3 * (by2 - by1), by2 - 0.3 * (by2 - by1))
            x, y = cx - side / 2, cy - side / 2
        sq = (x, y, x + side, y + side)
        if all(sq[2] < a[0] or sq[0] > a[2] or sq[3] < a[1] or sq[1] > a[3] for a in avoid):
            return sq
    return None


def _poker_corners(det: Any, img: np.ndarray, boxes: list[Any]) -> tuple[list[Any], float]:
    """Pseudo corner labels of one poker photo: (box, card) per shipped-detector corner inside a
    card box, and how surely the classifier reads them as those cards (mean log-probability)."""
    corners, scores = det.corners(img)
    keep = scores >= det.conf
    corners = corners[keep]
    if not len(corners):
        return [], -99.0
    probs = det.classify(img, corners)
    out, logp = [], []
    for c, p in zip(corners, probs, strict=True):
        cx, cy = (c[0] + c[2]) / 2, (c[1] + c[3]) / 2
        holding = [b for b in boxes if b.holds(cx, cy) and b.card in _INDEX]
        if not holding:
            continue
        best = max(holding, key=lambda b: p[_INDEX[b.card]])
        if p[NONE_CLASS] > 0.9:  # a pip or a figure the classifier is sure of: not a corner
            continue
        out.append((tuple(float(v) for v in c), best.card))
        logp.append(float(np.log(p[_INDEX[best.card]] + 1e-9)))
    return out, (float(np.mean(logp)) if logp else -99.0)


def _mirror_boxes(boxes: list[Any], w: int) -> list[Any]:
    from vision.realphotos import Box

    return [Box(b.card, w - b.x2, b.y1, w - b.x1, b.y2) for b in boxes]


def prepare(cfg: TrainConfig, log: Any = print) -> Path:
    """Write the detector's real images and labels (YOLO layout), the classifier's real crops
    (``crops_real_train.npz``, ``crops_real_val.npz``) and ``data.yaml`` under ``[real] dir``.
    Resumable: a finished step (its marker file) is kept."""
    from vision.detector import Detector
    from vision.realphotos import photos

    real = cfg.section("real")
    out = cfg.path("real", "dir")
    root = cfg.path("real", "datasets")
    expand = float(cfg.section("data").get("crop_expand", CROP_EXPAND))
    jitter = int(real.get("crop_jitter", 6))
    rng = np.random.default_rng(int(real.get("seed", 0)))
    for sub in ("images/train", "labels/train", "images/val", "labels/val"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    done = out / "prepared.json"
    if done.exists():
        log(f"real data: {out} already prepared")
        return out
    t0 = time.time()
    xs: list[np.ndarray] = []
    ys: list[int] = []
    counts: dict[str, int] = {}

    def crops(img: np.ndarray, box: tuple[float, ...], label: int, n: int) -> None:
        for k in range(n):
            b = box if k == 0 else _jitter(rng, box)
            xs.append(crop_square(img, b, 48, expand))
            ys.append(label)

    def write_yolo(split: str, name: str, img: np.ndarray, boxes: list[tuple[float, ...]]) -> None:
        h, w = img.shape[:2]
        cv2.imwrite(
            str(out / "images" / split / f"{name}.jpg"), img, [cv2.IMWRITE_JPEG_QUALITY, 95]
        )
        lines = []
        for x1, y1, x2, y2 in boxes:
            x1, x2 = max(0.0, x1), min(float(w), x2)
            y1, y2 = max(0.0, y1), min(float(h), y2)
            if x2 - x1 < 2 or y2 - y1 < 2:
                continue
            cx, cy, bw, bh = (x1 + x2) / 2 / w, (y1 + y2) / 2 / h, (x2 - x1) / w, (y2 - y1) / h
            lines.append(f"0 {cx:.6f} {cy:.6f} {bw:.6f} {bh:.6f}")
        (out / "labels" / split / f"{name}.txt").write_text("\n".join(lines) + "\n")

    # real-cardcounter: corner boxes
    for split, yolo in (("train", "train"), ("valid", "val")):
        for i, ph in enumerate(photos("real-cardcounter", split, root)):
            img = cv2.imread(str(ph.path))
            corners = [(b.x1, b.y1, b.x2, b.y2) for b in ph.boxes if b.card != "back"]
            write_yolo(yolo, f"cc_{split}_{i:04d}", img, corners)
            if split != "train":
                continue
            for b in ph.boxes:
                if b.card in _INDEX:
                    crops(img, (b.x1, b.y1, b.x2, b.y2), _INDEX[b.card], jitter)
            avoid = [(b.x1, b.y1, b.x2, b.y2) for b in ph.boxes]
            sides = [max(b.x2 - b.x1, b.y2 - b.y1) for b in ph.boxes] or [40.0]
            for _ in range(3 * max(1, len(ph.boxes))):
                sq = _free_square(rng, img.shape, float(rng.choice(sides)), avoid)
                if sq is not None:
                    crops(img, sq, NONE_CLASS, 1)
    counts["cardcounter_crops"] = len(xs)
    log(f"real data: real-cardcounter done, {len(xs)} crops ({time.time() - t0:.0f} s)")

    # real-poker-cards: one copy per photo, the right way round, corners from the shipped models
    det = Detector(
        cfg.path("real", "base_detector"), threads=int(real.get("threads", 1)), min_score=0.0
    )
    by_source: dict[str, list[Any]] = {}
    for ph in photos("real-poker-cards", "train", root):
        by_source.setdefault(ph.source, []).append(ph)
    mirrored = pseudo = 0
    for i, (_source, copies) in enumerate(sorted(by_source.items())):
        ph = copies[0]
        img = cv2.imread(str(ph.path))
        boxes = list(ph.boxes)
        found, sure = _poker_corners(det, img, boxes)
        flip = cv2.flip(img, 1)
        fboxes = _mirror_boxes(boxes, img.shape[1])
        ffound, fsure = _poker_corners(det, flip, fboxes)
        if fsure > sure:
            img, boxes, found = flip, fboxes, ffound
            mirrored += 1
        write_yolo("train", f"pk_{i:04d}", img, [c for c, _ in found])
        for c, card in found:
            crops(img, c, _INDEX[card], 3)
            pseudo += 1
        for b in boxes:
            side = 0.18 * max(b.x2 - b.x1, b.y2 - b.y1)
            sq = _free_square(rng, img.shape, side, [c for c, _ in found], (b.x1, b.y1, b.x2, b.y2))
            if sq is not None:
                crops(img, sq, NONE_CLASS, 1)
    counts.update(poker_photos=len(by_source), poker_mirrored=mirrored, poker_corners=pseudo)
    log(
        f"real data: real-poker-cards {len(by_source)} photos ({mirrored} used mirrored back), "
        f"{pseudo} pseudo-labelled corners ({time.time() - t0:.0f} s)"
    )
    x = np.stack(xs).astype(np.uint8)
    y = np.asarray(ys, np.int16)
    np.savez_compressed(out / "crops_real_train.npz", x=x, y=y)
    # validation crops: real-cardcounter valid, at the labelled boxes
    vx, vy = [], []
    for ph in photos("real-cardcounter", "valid", root):
        img = cv2.imread(str(ph.path))
        for b in ph.boxes:
            if b.card in _INDEX:
                vx.append(crop_square(img, (b.x1, b.y1, b.x2, b.y2), 48, expand))
                vy.append(_INDEX[b.card])
    np.savez_compressed(
        out / "crops_real_val.npz", x=np.stack(vx).astype(np.uint8), y=np.asarray(vy, np.int16)
    )
    counts.update(train_crops=len(y), val_crops=len(vy))
    _write_data_yaml(cfg, out)
    done.write_text(json.dumps({**counts, "seconds": round(time.time() - t0)}, indent=1))
    log(f"real data: {out} ({counts})")
    return out


def _write_data_yaml(cfg: TrainConfig, out: Path) -> None:
    """The detector's training list: the real images ``real_repeat`` times each, then the first
    ``synthetic_scenes`` synthetic training scenes; validation: real-cardcounter valid."""
    real = cfg.section("real")
    scenes = cfg.path("data", "scenes") / "images" / "train"
    synth = sorted(scenes.glob("*.jpg"))[: int(real.get("synthetic_scenes", 1500))]
    mine = sorted((out / "images" / "train").glob("*.jpg"))
    lines = [str(p) for p in mine] * int(real.get("real_repeat", 2)) + [str(p) for p in synth]
    (out / "train.txt").write_text("\n".join(lines) + "\n")
    (out / "data.yaml").write_text(
        f"path: {out}\ntrain: {out / 'train.txt'}\nval: {out / 'images' / 'val'}\n"
        "names:\n  0: corner\n"
    )


def _calibration_crops(out: Path, n: int = 512) -> Any:
    import torch

    from vision.crops import classifier_input

    with np.load(out / "crops_real_train.npz") as d:
        x = d["x"]
    idx = np.random.default_rng(0).choice(len(x), min(n, len(x)), replace=False)
    return torch.from_numpy(classifier_input(x[np.sort(idx)]))


def warm_detector_checkpoint(cfg: TrainConfig) -> Path:
    """The shipped detector as an ultralytics checkpoint (vision/train/warmstart.py), batch
    norms rebuilt on real and synthetic training images; written once."""
    import torch

    from vision.train.detector import offline_env
    from vision.train.warmstart import detector_from_onnx

    sec = _sub(cfg, "detector")
    run_dir = Path(cfg.root) / str(sec.get("run_dir", "runs/real-detector"))
    ckpt = run_dir.parent / f"{run_dir.name}-start.pt"
    if ckpt.exists():
        return ckpt
    offline_env(run_dir.parent / "yolo-config")
    out = cfg.path("real", "dir")
    imgsz = int(sec.get("imgsz", 384))
    paths = (out / "train.txt").read_text().split()
    rng = np.random.default_rng(1)
    pick = [paths[int(i)] for i in rng.choice(len(paths), min(32, len(paths)), replace=False)]
    imgs = []
    for p in pick:
        im = cv2.resize(cv2.imread(p), (imgsz, imgsz))
        imgs.append(cv2.cvtColor(im, cv2.COLOR_BGR2RGB).transpose(2, 0, 1))
    batch = torch.from_numpy(np.stack(imgs).astype(np.float32) / 255.0)
    model = detector_from_onnx(cfg.path("real", "base_detector"), batch)
    model.names = {0: "corner"}
    model.args = {"imgsz": imgsz}
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    torch.save(
        {"model": model, "epoch": -1, "date": time.strftime("%Y-%m-%d"), "train_args": {}},
        ckpt,
    )
    return ckpt


def _sub(cfg: TrainConfig, name: str) -> dict[str, Any]:
    """``[real.NAME]`` of the config (TOML nests it under ``real``); on a GPU (``[real] device``
    set to ``cuda``, as ``guandan train --device cuda`` does) with ``[real.gpu.NAME]`` over it."""
    real = cfg.section("real")
    sec = real.get(name, {})
    if not isinstance(sec, dict):
        raise ValueError(f"training config: [real.{name}] must be a table")
    device = str(real.get("device", "cpu"))
    if device != "cpu":
        gpu = real.get("gpu", {}).get(name, {})
        sec = {**sec, **gpu, "device": device}
    return sec


def train_real_detector(cfg: TrainConfig, log: Any = print) -> Path:
    """Fine-tune the corner detector from the shipped one on real + synthetic images
    (ultralytics, resumable: its ``last.pt``)."""
    import torch

    from vision.train.detector import _finished, offline_env

    sec = _sub(cfg, "detector")
    run_dir = Path(cfg.root) / str(sec.get("run_dir", "runs/real-detector"))
    offline_env(run_dir.parent / "yolo-config")
    from ultralytics import YOLO

    threads = int(sec.get("threads", 1))
    last, best = run_dir / "weights" / "last.pt", run_dir / "weights" / "best.pt"

    def set_threads(trainer: Any) -> None:
        torch.set_num_threads(threads)

    if last.exists() and _finished(last):
        log(f"real detector: {run_dir} already finished")
        return best if best.exists() else last
    t0 = time.time()
    if last.exists():
        log(f"real detector: resuming {last}")
        model = YOLO(str(last))
        model.add_callback("on_pretrain_routine_end", set_threads)
        model.train(resume=True, time=float(sec.get("time_hours", 1.0)), val=False)
    else:
        start = warm_detector_checkpoint(cfg)
        torch.manual_seed(0)
        model = YOLO(str(start))
        model.add_callback("on_pretrain_routine_end", set_threads)
        model.train(
            data=str(cfg.path("real", "dir") / "data.yaml"),
            imgsz=int(sec.get("imgsz", 384)),
            epochs=int(sec.get("epochs", 30)),
            time=float(sec.get("time_hours", 1.0)),
            batch=int(sec.get("batch", 16)),
            workers=int(sec.get("workers", 1)),
            device=_yolo_device(str(sec.get("device", "cpu"))),
            project=str(run_dir.parent),
            name=run_dir.name,
            exist_ok=True,
            pretrained=True,
            optimizer="AdamW",
            lr0=float(sec.get("lr0", 0.0005)),
            lrf=0.1,
            warmup_epochs=float(sec.get("warmup_epochs", 0.5)),
            warmup_bias_lr=0.0,
            seed=0,
            deterministic=False,
            amp=str(sec.get("device", "cpu")) != "cpu",
            plots=False,
            single_cls=True,
            degrees=float(sec.get("degrees", 10.0)),
            fliplr=0.0,
            flipud=0.0,
            mosaic=float(sec.get("mosaic", 0.5)),
            scale=float(sec.get("scale", 0.5)),
            close_mosaic=int(sec.get("close_mosaic", 2)),
            hsv_h=float(sec.get("hsv_h", 0.05)),
            hsv_s=0.7,
            hsv_v=0.4,
            patience=100,
            val=False,
            verbose=True,
        )
    log(f"real detector: trained in {time.time() - t0:.0f} s -> {run_dir}")
    return best if best.exists() else last


def _yolo_device(device: str) -> str:
    """A torch device name as ultralytics takes it: cpu, or the CUDA index (cuda:1 -> 1)."""
    if device == "cpu":
        return device
    return device.split(":", 1)[1] if ":" in device else "0"


def _recolour(xf: Any, gen: Any, p: float = 0.35) -> Any:
    """Red and orange ink turned gold or orange (decks print red suits in either), and tinted
    light, on a float NCHW BGR batch: green is pulled towards red where red stands above the
    other two channels (so black, white and grey stay as they are), by a random share."""
    import torch

    n = xf.shape[0]
    b, g, r = xf[:, 0:1], xf[:, 1:2], xf[:, 2:3]
    redness = (r - torch.maximum(b, g)).clamp(0, 1)
    share = torch.rand(n, 1, 1, 1, generator=gen) * 0.75
    on = (torch.rand(n, 1, 1, 1, generator=gen) < p).float()
    g = g + on * share * redness * 1.6
    out = torch.cat([b, g, r], 1)
    tint = 1 + 0.25 * (torch.rand(n, 3, 1, 1, generator=gen) * 2 - 1)
    tint_on = (torch.rand(n, 1, 1, 1, generator=gen) < p).float()
    out = out * (1 + tint_on * (tint - 1))
    return out.clamp(0, 1)


def _darken(xf: Any, gen: Any, p: float) -> Any:
    """A share ``p`` of a float NCHW BGR batch turned into a dark deck: the light paper goes
    near-black and the ink light, black ink silver or white, red ink gold, as in the
    black-and-gold deck of real-cardcounter (its ``IMG_7xxx`` photos, 0.78 of its valid
    corners named right at the labelled boxes by the first photo classifier against 0.95 for
    the other decks, 2026-12-04). General for any light-ink-on-dark design: the ink is what
    is darker than the crop's paper, its colour comes from how red it was."""
    import torch

    n = xf.shape[0]
    on = torch.rand(n, generator=gen) < p
    if not bool(on.any()):
        return xf
    x = xf[on]
    m = x.shape[0]
    grey = x.mean(1, keepdim=True)
    paper = torch.quantile(grey.reshape(m, -1), 0.9, dim=1).reshape(m, 1, 1, 1).clamp(min=0.2)
    b, g, r = x[:, 0:1], x[:, 1:2], x[:, 2:3]
    red = ((r - torch.maximum(b, g)) * 3).clamp(0, 1)
    ink = torch.maximum((1 - grey / paper) * 1.4, red).clamp(0, 1)

    def rand(*shape: int) -> Any:
        return torch.rand(m, *shape, 1, 1, generator=gen)

    silver = (0.7 + 0.3 * rand(1)) * (1 + 0.06 * (rand(3) * 2 - 1))
    gold = torch.stack([0.15 + 0.2 * rand(), 0.5 + 0.2 * rand(), 0.75 + 0.2 * rand()], 1)
    colour = silver * (1 - red) + gold.reshape(m, 3, 1, 1) * red
    ground = (0.02 + 0.13 * rand(1)) * (1 + 0.2 * (rand(3) * 2 - 1))
    out = xf.clone()
    out[on] = (ground * (1 - ink) + colour * ink).clamp(0, 1)
    return out


def _speckle(xf: Any, gen: Any, p: float) -> Any:
    """On a share ``p`` of the batch, up to 2 % of the pixels set white or black (the
    compression and sensor speckles of real-cardcounter's exports)."""
    import torch

    n, _, h, w = xf.shape
    on = (torch.rand(n, 1, 1, 1, generator=gen) < p).float()
    rate = torch.rand(n, 1, 1, 1, generator=gen) * 0.02 * on
    hit = (torch.rand(n, 1, h, w, generator=gen) < rate).float()
    white = (torch.rand(n, 1, h, w, generator=gen) < 0.7).float()
    return xf * (1 - hit) + white * hit


def _grey(xf: Any, gen: Any, p: float) -> Any:
    """A share ``p`` of a float NCHW BGR batch turned grey (every channel its luminance):
    real-cardcounter's export holds photos turned grey, where only the suit's shape tells a
    heart from a spade (valid, 2026-12-04: four of six readings in the other colour were an H8
    in two grey photos). General: any monochrome camera or grey copy."""
    import torch

    n = xf.shape[0]
    on = (torch.rand(n, 1, 1, 1, generator=gen) < p).float()
    grey = (0.114 * xf[:, 0:1] + 0.587 * xf[:, 1:2] + 0.299 * xf[:, 2:3]).expand_as(xf)
    return xf * (1 - on) + grey * on


def train_real_classifier(cfg: TrainConfig, log: Any = print) -> Path:
    """Fine-tune the classifier from the shipped one: each batch ``real_share`` real crops, the
    rest synthetic; the run is budgeted in ``time_hours`` (cosine schedule over the time);
    checkpoint every epoch (resumable); the best epoch by the mean of the real-cardcounter
    ``valid`` crop accuracy and the synthetic held-out crop accuracy is kept."""
    import torch
    import torch.nn.functional as F

    from vision.crops import classifier_input
    from vision.train.classifier import _augment, _lr_at, _targets
    from vision.train.warmstart import classifier_from_onnx

    sec = _sub(cfg, "classifier")
    torch.set_num_threads(int(sec.get("threads", 1)))
    device = torch.device(str(sec.get("device", "cpu")))
    run_dir = Path(cfg.root) / str(sec.get("run_dir", "runs/real-classifier"))
    run_dir.mkdir(parents=True, exist_ok=True)
    out = cfg.path("real", "dir")
    scenes = cfg.path("data", "scenes")
    with np.load(out / "crops_real_train.npz") as d:
        xr, yr = d["x"], d["y"].astype(np.int64)
    with np.load(out / "crops_real_val.npz") as d:
        xrv, yrv = d["x"], d["y"].astype(np.int64)
    sx, sy = [], []
    for name in ("crops_train.npz", "corners_train.npz"):
        if (scenes / name).exists():
            with np.load(scenes / name) as d:
                sx.append(d["x"])
                sy.append(d["y"])
    if not sx:
        raise FileNotFoundError(f"{scenes}: no synthetic crops; run `guandan train data` first")
    xs, ys = np.concatenate(sx), np.concatenate(sy).astype(np.int64)
    with np.load(scenes / "crops_val.npz") as d:
        xsv, ysv = d["x"], d["y"].astype(np.int64)
    log(
        f"real classifier: {len(xr)} real + {len(xs)} synthetic crops; val {len(xrv)} real, "
        f"{len(xsv)} synthetic held-out"
    )
    bs = int(sec.get("batch", 64))
    share = float(sec.get("real_share", 0.5))
    n_real = max(1, int(round(bs * share)))
    max_lr = float(sec.get("lr", 0.001))
    budget_s = float(sec.get("time_hours", 0.75)) * 3600
    steps_per_epoch = int(sec.get("steps_per_epoch", 400))
    seed = int(sec.get("seed", 0))
    #: size and stretch of the crops' augmentation (vision/train/classifier.py ``_augment``)
    aug_scale = float(sec.get("aug_scale", 0.1))
    aug_aspect = float(sec.get("aug_aspect", 0.0))
    #: shares of the batch drawn as a dark deck (synthetic crops only) and speckled; 0: off
    dark = float(sec.get("dark_share", 0.0))
    speckle = float(sec.get("speckle", 0.0))
    grey = float(sec.get("grey_share", 0.0))
    #: weight of the suit head's loss beside the rank head's (0.5 in the first two rounds);
    #: the misreadings left on real photos are mostly suits within a colour (C <-> S)
    suit_weight = float(sec.get("suit_weight", 0.5))
    last, best = run_dir / "last.pt", run_dir / "best.pt"
    if last.exists():
        ck = torch.load(last, map_location="cpu", weights_only=False)
        from vision.train.classifier import build_model

        model = build_model()
        model.load_state_dict(ck["model"])
        epoch, best_score, used_s = int(ck["epoch"]) + 1, float(ck["best"]), float(ck["used_s"])
        opt = torch.optim.AdamW(model.parameters(), lr=max_lr, weight_decay=5e-4)
        opt.load_state_dict(ck["opt"])
        log(f"real classifier: resuming after epoch {epoch} ({used_s / 60:.1f} min used)")
    else:
        model = classifier_from_onnx(cfg.path("real", "base_classifier"), _calibration_crops(out))
        model.to(device)
        opt = torch.optim.AdamW(model.parameters(), lr=max_lr, weight_decay=5e-4)
        epoch, best_score, used_s = 0, -1.0, 0.0
        acc_r, acc_s = _accuracy(model, xrv, yrv, device), _accuracy(model, xsv, ysv, device)
        log(f"real classifier: start (shipped model) real val {acc_r:.4f}, synthetic {acc_s:.4f}")
    model.to(device)
    for state in opt.state.values():  # a resumed optimiser's moments, where the model is
        for k, v in state.items():
            if torch.is_tensor(v):
                state[k] = v.to(device)
    gen = torch.Generator().manual_seed(seed)
    while used_s < budget_s:
        t0 = time.time()
        model.train()
        gen.manual_seed(seed * 1000 + epoch)
        rng = np.random.default_rng(seed * 1000 + epoch)
        loss_sum, total = 0.0, 0
        for _ in range(steps_per_epoch):
            p = (used_s + time.time() - t0) / budget_s
            if p >= 1.0:
                break
            for group in opt.param_groups:
                group["lr"] = _lr_at(p, max_lr, warmup=0.03)
            ir = np.sort(rng.integers(0, len(xr), n_real))
            js = np.sort(rng.integers(0, len(xs), bs - n_real))
            xb = np.concatenate([xr[ir], xs[js]])
            yb = torch.from_numpy(np.concatenate([yr[ir], ys[js]]))
            x = _augment(torch.from_numpy(classifier_input(xb)), gen, aug_scale, aug_aspect)
            x = _recolour(x, gen)
            if dark > 0:  # synthetic crops only: the real ones are what they are
                x[n_real:] = _darken(x[n_real:], gen, dark)
            if speckle > 0:
                x = _speckle(x, gen, speckle)
            if grey > 0:
                x = _grey(x, gen, grey)
            x = x.to(device)
            r_logits, s_logits = model.heads(x)
            r_t, s_t = (t.to(device) for t in _targets(yb))
            loss = F.cross_entropy(
                r_logits, r_t, label_smoothing=0.05
            ) + suit_weight * F.cross_entropy(s_logits, s_t, label_smoothing=0.05)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_sum += loss.item() * len(yb)
            total += len(yb)
        used_s += time.time() - t0
        acc_r, acc_s = _accuracy(model, xrv, yrv, device), _accuracy(model, xsv, ysv, device)
        score = (acc_r + acc_s) / 2
        log(
            f"real classifier: epoch {epoch + 1} ({total} crops) loss "
            f"{loss_sum / max(1, total):.4f} real val {acc_r:.4f} synthetic held-out "
            f"{acc_s:.4f} ({used_s / 60:.1f} min used)"
        )
        if score > best_score:
            best_score = score
            torch.save(
                {"model": _cpu(model), "epoch": epoch, "val_acc": acc_s, "real_acc": acc_r},
                best,
            )
        torch.save(
            {
                "model": _cpu(model),
                "opt": opt.state_dict(),
                "epoch": epoch,
                "best": best_score,
                "used_s": used_s,
            },
            last,
        )
        epoch += 1
    return best


def _cpu(model: Any) -> dict[str, Any]:
    return {k: v.detach().cpu() for k, v in model.state_dict().items()}


def _accuracy(model: Any, x: np.ndarray, y: np.ndarray, device: Any, batch: int = 512) -> float:
    """Share of crops whose likeliest class is their label (the model in eval mode)."""
    import torch

    from vision.crops import classifier_input

    model.eval()
    right = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            xb = torch.from_numpy(classifier_input(x[i : i + batch])).to(device)
            right += int((model(xb).argmax(1).cpu().numpy() == y[i : i + batch]).sum())
    return right / max(1, len(x))
