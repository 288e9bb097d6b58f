"""Classifiers adapted to one design, read on crops of the design's *own* faces (issue 44).

``guandan vision adapt`` validates on crops rendered from the faces it was given: for an event,
faces cut from the enrolment frames (vision/deckfaces.py). Two adaptations from two sets of cut
faces (enrolment frames of two sizes, say) therefore each grade themselves on their own faces,
and their figures cannot be compared. This reads every classifier given on one common set: table
scenes rendered from the design's own faces (the renderer's deck, ``ensure_deck``; seeds from
``SEED`` on, which no adaptation uses: adapt's own are 7e6, 8e6 and 9e6 + 100,000 x its seed),
cut as the classifier recipe cuts them (vision/adapt.py ``_scene_crops``). Per classifier one
JSON line: crops read right, and the wrong ones by kind (bench/corner_names.py ``error_kind``:
``suit`` within its colour, ``colour``, ``rank``, ``none``, ``joker``).

    python bench/adapt_check.py --deck proc-serif [--scenes 30] A.onnx B.onnx ...

The crops are kept in ``--cache`` (default ``datasets/generated/adapt-check``, named by the
design, the scenes and vision/crops.py's digest), so a second reading of the same design with
the same crop code costs no rendering. Not the kiosk's conditions (those are
bench/corner_names.py's, in rendered games): a check of the faces and the fine-tuning alone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

SEED = 8_050_000


def crops(deck_name: str, scenes: int, cache: Path) -> tuple[np.ndarray, np.ndarray]:
    """The common crops of ``deck_name`` (rendered once, then read from ``cache``)."""
    from vision.crops import CROP_EXPAND

    # the crop code is in the name: crops kept from another version of it are not read
    code = hashlib.sha256((ROOT / "vision" / "crops.py").read_bytes()).hexdigest()[:10]
    f = cache / f"{deck_name}-{SEED}-{scenes}-{code}.npz"
    if f.exists():
        with np.load(f) as d:
            return d["x"], d["y"]
    from vision.adapt import _scene_crops
    from vision.synth.decks import ensure_deck

    deck = ensure_deck(deck_name, ROOT / "datasets" / "generated" / "decks")
    xs: list[np.ndarray] = []
    ys: list[int] = []
    for s in range(SEED, SEED + scenes):
        x, y = _scene_crops(deck, s, 416, CROP_EXPAND)
        xs += x
        ys += y
    x_all, y_all = np.stack(xs), np.array(ys, np.int64)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = f.with_name(f.stem + ".tmp.npz")
    np.savez(tmp, x=x_all, y=y_all)
    tmp.replace(f)
    return x_all, y_all


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deck", required=True, help="the design whose own faces are rendered")
    ap.add_argument("--scenes", type=int, default=30)
    ap.add_argument("--cache", default=str(ROOT / "datasets" / "generated" / "adapt-check"))
    ap.add_argument("models", nargs="+", help="classifier ONNX files to read with")
    args = ap.parse_args()
    missing = [m for m in args.models if not Path(m).is_file()]
    if missing:
        raise SystemExit(f"adapt_check.py: no such classifier: {' '.join(missing)}")
    from corner_names import error_kind

    from vision.adapt import read_classes
    from vision.synth.decks import DeckUnavailable, UnknownDeck

    try:
        x, y = crops(args.deck, args.scenes, Path(args.cache))
    except (DeckUnavailable, UnknownDeck) as exc:
        raise SystemExit(f"adapt_check.py: {exc}") from None
    for m in args.models:
        names, pred = read_classes(m, x)
        kinds = Counter(
            error_kind(names[int(t)], names[int(p)]) for t, p in zip(y, pred, strict=True)
        )
        right = kinds.pop(None, 0)
        print(
            json.dumps(
                {
                    "figure": "adapt_check",
                    "deck": args.deck,
                    "model": m,
                    "crops": int(len(y)),
                    "right": right,
                    "acc": round(right / max(1, len(y)), 4),
                    "errors": dict(sorted(kinds.items())),
                }
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
