"""Speed of ``vision.Detector`` on a 1280x720 frame (onnxruntime, 2 threads by default).

Prints one JSON line per figure. The frame is a real-edje webcam photo (960x540) scaled to
1280x720 when ../shared is there, else a synthetic frame with card-like rectangles.
Usage: python bench/detector.py [--model models/card-corners.onnx] [--runs 30] [--threads 2]
       [--max-side 960] [--pyramid 1.25,1,0.5] [--rotations 4] [--min-score 0.2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vision.detector import (  # noqa: E402
    DEFAULT_MIN_SCORE,
    DEFAULT_MODEL,
    DEFAULT_PYRAMID,
    DEFAULT_ROTATIONS,
    Detector,
)

REAL = ROOT.parent / "shared" / "datasets" / "real-edje" / "images"


def frame() -> tuple[np.ndarray, str]:
    if REAL.exists():
        for p in sorted(REAL.glob("*.jpg")):
            img = cv2.imread(str(p))
            if img is not None and img.shape[1] == 960:
                return cv2.resize(img, (1280, 720)), f"real-edje {p.name} scaled to 1280x720"
    rng = np.random.default_rng(0)
    img = np.full((720, 1280, 3), (40, 110, 30), np.uint8)
    for _ in range(20):
        x, y = int(rng.integers(0, 1200)), int(rng.integers(0, 640))
        cv2.rectangle(img, (x, y), (x + 60, y + 84), (250, 250, 250), -1)
        cv2.putText(img, "A", (x + 3, y + 18), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 200), 2)
    return img, "synthetic 1280x720"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=str(DEFAULT_MODEL))
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-side", type=int, default=960)
    ap.add_argument(
        "--pyramid",
        default=",".join(f"{f:g}" for f in DEFAULT_PYRAMID),
        help="detector passes (vision detect's default; the 1.25 pass runs only while the "
        "enlarged frame fits 1024 px, so not on a 1280x720 frame)",
    )
    ap.add_argument("--rotations", type=int, default=DEFAULT_ROTATIONS, choices=(1, 2, 4))
    ap.add_argument("--min-score", type=float, default=DEFAULT_MIN_SCORE)
    args = ap.parse_args()
    pyramid = tuple(float(f) for f in args.pyramid.split(","))
    det = Detector(
        args.model,
        threads=args.threads,
        max_side=args.max_side,
        pyramid=pyramid,
        rotations=args.rotations,
        min_score=args.min_score,
    )
    img, source = frame()
    for _ in range(3):
        det.detect(img)
    full, stage1, cpu = [], [], []
    n_found = 0
    for _ in range(args.runs):
        t0 = time.perf_counter()
        boxes, _ = det.corners(img)
        t1 = time.perf_counter()
        c1 = time.process_time()
        found = det.detect(img)
        cpu.append((time.process_time() - c1) * 1000)
        t2 = time.perf_counter()
        stage1.append((t1 - t0) * 1000)
        full.append((t2 - t1) * 1000)
        n_found = len(found)
    common = {
        "frame": "1280x720",
        "source": source,
        "threads": args.threads,
        "max_side": args.max_side,
        "pyramid": list(pyramid),
        "rotations": args.rotations,
        "min_score": args.min_score,
        "runs": args.runs,
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "date": time.strftime("%Y-%m-%d"),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    print(
        json.dumps(
            {
                "figure": "detect_ms_median",
                "value": round(statistics.median(full), 1),
                "p90": round(sorted(full)[int(0.9 * len(full)) - 1], 1),
                "cards": n_found,
                **common,
            }
        )
    )
    print(
        json.dumps(
            {
                "figure": "detect_cpu_ms_median",  # CPU time of all threads: steadier under load
                "value": round(statistics.median(cpu), 1),
                **common,
            }
        )
    )
    print(
        json.dumps(
            {
                "figure": "corner_stage_ms_median",
                "value": round(statistics.median(stage1), 1),
                **common,
            }
        )
    )


if __name__ == "__main__":
    main()
