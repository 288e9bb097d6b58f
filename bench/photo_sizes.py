"""Clear, isolated cards at every size a photo may show them (issue 40), read as `vision detect`.

Issue 40 asks that cards from about 30 to 600 px wide be read, under tinted light and camera
noise, and that a clear isolated card never be read in the other colour. The real photo sets
hold few isolated cards of a known design at known sizes, so this draws them: each card face of
a held-out design (vision/synth/decks.py HELD_OUT, never trained on), upright and alone on a
green cloth, scaled to each width, under a warm or a cool light, with sensor noise, written as
JPEG (quality 85) and read back. Each image is read by `vision detect`'s photo settings
(vision.detector.photo_detector). Per design and width, one JSON line:

* ``cards``: images (one card each); ``read``: the card among the detections;
* ``wrong_colour``: images with a detection of a suited card of the other colour (the card's
  other corner read right or not); ``other_card``: images with any detection of another card;
* ``misses`` / ``colour_errors``: which, as ``card->read``.

Then one line for all. Not a timed test: a figure to keep in models/README.md.

    python bench/photo_sizes.py [--decks tigullio,plastic] [--widths 30,60,150,600]
        [--cards 13] [--seed 0] [--model M] [--classifier C]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WIDTHS = (30, 45, 60, 90, 150, 300, 450, 600)
#: warm (tungsten) and cool (daylight LED) light as BGR gains
LIGHTS = ((0.85, 1.0, 1.15), (1.12, 1.0, 0.88))


def _colour(card: str) -> str:
    return "red" if card[0] in "HD" else "black"


def scene(face: np.ndarray, width: int, rng: np.random.Generator, light: tuple[float, ...]) -> Any:
    """One card face ``width`` px wide, upright on a green cloth, tinted and noisy, as JPEG."""
    h = max(1, round(face.shape[0] * width / face.shape[1]))
    card = cv2.resize(face, (width, h), interpolation=cv2.INTER_AREA)
    H, W = max(240, int(h * 1.6)), max(320, int(width * 1.8))
    img = np.empty((H, W, 3), np.float32)
    img[:] = (60, 110, 40)
    y, x = (H - h) // 2, (W - width) // 2
    img[y : y + h, x : x + width] = card
    img = img * np.asarray(light, np.float32) + rng.normal(0, 6, img.shape)
    ok, buf = cv2.imencode(
        ".jpg", np.clip(img, 0, 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 85]
    )
    assert ok
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def main(argv: list[str] | None = None) -> int:
    from vision.detector import photo_detector
    from vision.synth.decks import CARD_NAMES, HELD_OUT, ensure_deck

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--decks", default=",".join(HELD_OUT), help="held-out designs, comma-separated")
    ap.add_argument("--widths", default=",".join(map(str, WIDTHS)), help="card widths in px")
    ap.add_argument("--cards", type=int, default=13, help="cards per design (spread over suits)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--decks-dir", default=str(ROOT / "datasets" / "generated" / "decks"))
    ap.add_argument("--model", default=None, help="detector ONNX (default: vision detect's)")
    ap.add_argument("--classifier", default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--no-score-model",
        action="store_true",
        help="score corner x class probability with the PHOTO_* floors, as before the score "
        "model (vision/scoremodel.py), to compare",
    )
    args = ap.parse_args(argv)
    widths = [int(w) for w in args.widths.split(",")]
    plain = {"score_model": None} if args.no_score_model else {}
    det = photo_detector(args.model, args.classifier, threads=args.threads, **plain)
    rng = np.random.default_rng(args.seed)
    suited = [c for c in CARD_NAMES if c not in ("SB", "HR")]
    total = {"cards": 0, "read": 0, "wrong_colour": 0, "other_card": 0}
    t0 = time.time()
    for name in args.decks.split(","):
        deck = ensure_deck(name, Path(args.decks_dir))
        mine = [c for c in suited if deck.has_index(c)]  # guyenne-classic's courts have none
        picks = [mine[i] for i in rng.choice(len(mine), min(args.cards, len(mine)), replace=False)]
        for width in widths:
            row: dict[str, Any] = {"deck": name, "width": width, "cards": 0, "read": 0}
            row.update(wrong_colour=0, other_card=0, misses=[], colour_errors=[])
            for i, card in enumerate(picks):
                face = cv2.imread(str(deck.path / f"{card}.png"), cv2.IMREAD_COLOR)
                if face is None:
                    raise FileNotFoundError(f"{deck.path / card}.png: no such card face")
                img = scene(face, width, rng, LIGHTS[i % 2])
                found = [d.card for d in det.detect(img)]
                row["cards"] += 1
                if card in found:
                    row["read"] += 1
                else:
                    row["misses"].append(f"{card}->{'/'.join(found) or '-'}")
                other = [f for f in found if f != card]
                row["other_card"] += bool(other)
                bad = [f for f in other if f not in ("SB", "HR") and _colour(f) != _colour(card)]
                if bad:
                    row["wrong_colour"] += 1
                    row["colour_errors"].append(f"{card}->{'/'.join(bad)}")
            for k in total:
                total[k] += row[k]
            print(json.dumps(row), flush=True)
    total_row = {
        "deck": "all",
        **total,
        "read_share": round(total["read"] / max(1, total["cards"]), 4),
    }
    total_row["seconds"] = round(time.time() - t0, 1)
    print(json.dumps(total_row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
