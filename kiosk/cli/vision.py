"""``guandan vision detect IMAGE... [--model PATH]``: one JSON line per image (CONTRACT.md)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("vision", help="card detection on images")
    subs = p.add_subparsers(dest="vision_command", metavar="VERB")
    subs.required = True
    d = subs.add_parser(
        "detect",
        help="detect cards; one JSON line per image",
        description="Print {image, cards:[{card, box:[x1,y1,x2,y2], score}]} per image; boxes "
        "are in pixels of the input image, one per visible corner index.",
    )
    d.add_argument("images", nargs="+", metavar="IMAGE")
    d.add_argument("--model", help="detector ONNX (default: models/card-corners.onnx)")
    d.add_argument(
        "--classifier", help="classifier ONNX (default: card-classes.onnx beside --model)"
    )
    d.add_argument("--conf", type=float, default=0.3, help="corner score threshold (default 0.3)")
    d.add_argument(
        "--max-side", type=int, default=960, help="shrink frames to this long side (default 960)"
    )
    d.add_argument(
        "--tile", type=int, default=1024, help="tile size for large frames (default 1024)"
    )
    d.add_argument(
        "--pyramid",
        default="1,0.5",
        help="detector passes as scale factors of the working size, merged by NMS (default "
        "1,0.5: the half-size pass finds cards too large for the first, as in close-ups)",
    )
    d.set_defaults(handler=_detect)


def _detect(args: argparse.Namespace) -> int:
    from vision.detector import Detector, ImageError

    if not 0.0 <= args.conf <= 1.0:
        raise ValueError(f"--conf {args.conf}: must lie between 0 and 1")
    if args.max_side < 32 or args.tile < 64:
        raise ValueError("--max-side must be >= 32 and --tile >= 64")
    try:
        pyramid = tuple(float(f) for f in args.pyramid.split(","))
    except ValueError:
        raise ValueError(
            f"--pyramid {args.pyramid!r}: give scale factors separated by commas, e.g. 1,0.5"
        ) from None
    det = Detector(
        args.model,
        args.classifier,
        conf=args.conf,
        max_side=args.max_side,
        tile=args.tile,
        pyramid=pyramid,
    )
    failed = 0
    for path in args.images:
        try:
            found = det.detect_file(path)
        except ImageError as exc:
            print(f"guandan vision detect: {exc}", file=sys.stderr)
            failed += 1
            continue
        line = {"image": path, "cards": [d.to_json() for d in found]}
        print(json.dumps(line, ensure_ascii=False), flush=True)
    return 2 if failed else 0
