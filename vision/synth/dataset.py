"""Write synthetic scene datasets: YOLO layout for the one-class corner detector, and corner
crops (npz) for the card classifier. Seeded: scene ``i`` of split ``s`` uses seed ``base[s] + i``.
"""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.crops import CROP_EXPAND, crop_square
from vision.synth.decks import CARD_NAMES, HELD_OUT, Deck, build_all
from vision.synth.scenes import IGNORE_BELOW, MIN_VISIBLE, render_scene

SEED_BASE = {"train": 1_000_000, "val": 2_000_000}
BG_CLASS = len(CARD_NAMES)  # classifier class 54 = "not a corner index"
#: Corner boxes whose long side is below this (scene pixels) give no classifier crops.
MIN_CROP_SIDE = 12.0


def split_decks(root: Path, include: list[str] | None = None) -> dict[str, list[Deck]]:
    decks = build_all(root, include)
    return {
        "train": [d for d in decks if d.name not in HELD_OUT],
        "val": [d for d in decks if d.name in HELD_OUT],
    }


def _jitter(rng: np.random.Generator, box: tuple[float, ...]) -> tuple[float, float, float, float]:
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    dx, dy = rng.normal(0, 0.08, 2) * (w, h)
    sw, sh = np.exp(rng.normal(0, 0.1, 2))
    cx, cy = (x1 + x2) / 2 + dx, (y1 + y2) / 2 + dy
    return (cx - w * sw / 2, cy - h * sh / 2, cx + w * sw / 2, cy + h * sh / 2)


def _one(args: tuple[str, int, str, Path, int, list[str] | None]) -> None:
    """Render scene ``i`` of ``split`` and write image, YOLO label and meta (written last)."""
    split, i, deck_root, out, size, include = args
    decks = split_decks(Path(deck_root), include)[split]
    seed = SEED_BASE[split] + i
    scene = render_scene(decks, seed, size)
    name = f"{split}_{i:06d}"
    cv2.imwrite(
        str(out / "images" / split / f"{name}.jpg"), scene.image, [cv2.IMWRITE_JPEG_QUALITY, 92]
    )
    lines, meta, ignored, no_index = [], [], [], []
    for c in scene.corners:
        if not c.has_index:  # no index printed there: neither a corner to find nor background
            if c.visible >= IGNORE_BELOW:
                ignored.append([round(v, 2) for v in c.box])
            if c.visible >= MIN_VISIBLE:  # kept apart, so the old way of counting can be rerun
                no_index.append(
                    {"card": c.card, "box": [round(v, 2) for v in c.box], "deck": c.deck}
                )
            continue
        if c.visible < MIN_VISIBLE:
            if c.visible >= IGNORE_BELOW:
                ignored.append([round(v, 2) for v in c.box])
            continue
        x1, y1, x2, y2 = c.box
        lines.append(
            f"0 {(x1 + x2) / 2 / size:.6f} {(y1 + y2) / 2 / size:.6f} "
            f"{(x2 - x1) / size:.6f} {(y2 - y1) / size:.6f}"
        )
        meta.append(
            {"card": c.card, "box": [round(v, 2) for v in c.box], "deck": c.deck, "n": c.instance}
        )
    (out / "labels" / split / f"{name}.txt").write_text("\n".join(lines) + ("\n" if lines else ""))
    record = {
        "seed": seed,
        "corners": meta,
        "ignored": ignored,
        "no_index": no_index,
        "distractors": [[round(v, 2) for v in b] for b in scene.distractors],
    }
    (out / "meta" / split / f"{name}.json").write_text(json.dumps(record))


def _crops_of(
    image: np.ndarray, record: dict[str, Any], rng: np.random.Generator, expand: float = CROP_EXPAND
) -> tuple[list[np.ndarray], list[int]]:
    """Each labelled corner twice with detector-like box noise, plus up to 4 background boxes
    (on pips, art, backs and table; never on a labelled or partly covered index)."""
    crops, labels = [], []
    for c in record["corners"]:
        x1, y1, x2, y2 = c["box"]
        if max(x2 - x1, y2 - y1) < MIN_CROP_SIDE:
            continue  # too small to read: would only teach the classifier to guess
        for _ in range(2):
            crops.append(crop_square(image, _jitter(rng, tuple(c["box"])), expand=expand))
            labels.append(CARD_NAMES.index(c["card"]))
    taken = [tuple(c["box"]) for c in record["corners"]] + [
        tuple(b) for b in record.get("ignored", [])
    ]
    boxes = [tuple(b) for b in record.get("distractors", [])[:4]]
    if record["corners"]:  # plus random index-sized boxes anywhere (table, art, pips, hands)
        sizes = np.array([c["box"] for c in record["corners"]], float)
        bw = float(np.median(sizes[:, 2] - sizes[:, 0]))
        bh = float(np.median(sizes[:, 3] - sizes[:, 1]))
        h, w = image.shape[:2]
        for _ in range(3):
            x, y = rng.uniform(0, max(1.0, w - bw)), rng.uniform(0, max(1.0, h - bh))
            boxes.append((x, y, x + bw, y + bh))
    for box in boxes:
        if all(_overlap(box, t) < 0.1 and _overlap(t, box) < 0.1 for t in taken):
            crops.append(crop_square(image, _jitter(rng, box), expand=expand))
            labels.append(BG_CLASS)
    return crops, labels


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    area = (a[2] - a[0]) * (a[3] - a[1])
    return ix * iy / area if area > 0 else 0.0


def generate(
    out: Path,
    deck_root: Path,
    n_train: int,
    n_val: int,
    size: int = 416,
    workers: int = 2,
    include: list[str] | None = None,
    expand: float = CROP_EXPAND,
) -> None:
    """Render ``n_train`` + ``n_val`` scenes; a rerun renders only the missing ones (a scene is
    done when its meta file exists), then cuts the classifier crops from the images on disk
    (squares ``expand`` x the corner box, ``vision.crops.crop_square``)."""
    decks = split_decks(deck_root, include)  # render the decks once, before the workers start
    if not decks["train"] or not decks["val"]:
        raise ValueError(f"decks under {deck_root}: need training and held-out decks, got {decks}")
    for split in ("train", "val"):
        for sub in ("images", "labels", "meta"):
            (out / sub / split).mkdir(parents=True, exist_ok=True)
    for split, n in (("train", n_train), ("val", n_val)):
        todo = [
            (split, i, str(deck_root), out, size, include)
            for i in range(n)
            if not (out / "meta" / split / f"{split}_{i:06d}.json").exists()
        ]
        if todo:
            with ProcessPoolExecutor(max_workers=workers) as ex:
                list(ex.map(_one, todo, chunksize=4))
        crops_file = out / f"crops_{split}.npz"
        stamp = f"{split} n={n} expand={expand}"
        if crops_file.exists() and not todo:
            with np.load(crops_file) as old:
                if str(old["stamp"]) == stamp:
                    continue
        xs: list[np.ndarray] = []
        ys: list[int] = []
        for i in range(n):
            name = f"{split}_{i:06d}"
            record = json.loads((out / "meta" / split / f"{name}.json").read_text())
            image = cv2.imread(str(out / "images" / split / f"{name}.jpg"))
            rng = np.random.default_rng(record["seed"] + 7)
            crops, labels = _crops_of(image, record, rng, expand)
            xs.extend(crops)
            ys.extend(labels)
        np.savez(crops_file, x=np.stack(xs), y=np.array(ys, np.int16), stamp=np.array(stamp))
    (out / "data.yaml").write_text(
        f"path: {out.resolve()}\ntrain: images/train\nval: images/val\nnames:\n  0: corner\n"
    )
