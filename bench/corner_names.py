"""Card naming at the renderer's own corner boxes, in rendered games (the classifier alone).

bench/table_accuracy.py measures the whole pipeline; when a play is lost there, it does not say
whether the corner stage missed an index or the classifier misnamed one. This isolates the naming:
every ``--every`` seconds of each bench game (the seeds and renders of bench/table_accuracy.py; a
render kept there with ``--keep`` is reused), every corner index the renderer labelled (at least
70 % uncovered; not the court cards of a design that prints no index, which vision/faces.py
reads) is cut from the frame at its true box and named by the shipped classifier as the table
pipeline runs it (four quarter turns), and again with the game's deck enrolled (``--enrol``: its
shots on a table of their own, seed + 500,000, as bench/table_accuracy.py does). So the figures
are the kiosk's own conditions: its camera scale, video compression, fans, hands and light.
Per game one JSON line, then a total per deck:

* ``corners``: labelled corner indices named (jokers included);
* ``right`` / ``right_enrolled``: named as the card they are (the likeliest of the 54 cards and
  ``none``);
* ``errors`` / ``errors_enrolled``: the wrong namings by kind: ``suit`` (the other suit of the
  same colour and rank: a club read as a spade), ``colour`` (same rank, the other colour),
  ``rank``, ``none`` (called no card), ``joker``;
* ``black_suit_right`` (``black_right`` of ``black_corners``): of the black number and court
  cards, the share whose club-or-spade is right when only those two are compared (the
  pipeline's hardest call on ``plastic``);
* with ``--detect``, the corner stage too, as the table pipeline runs it (the reader's own
  ``detect``: corner boxes, then naming at the boxes it found; the adapted reader where one is
  given, else the enrolled, else the plain): ``found`` (a detection's centre inside the
  labelled box), ``kept`` (found at the tracker's floor, ``TRACKER_FLOOR``) and ``kept_right``
  (kept and named as the card it is); ``lost`` lists the five commonest cards not kept. So a
  play lost in bench/table_accuracy.py can be put down to the corner stage (an index not found
  or found too weakly) or the naming.

    python bench/corner_names.py [--games 10] [--seed 9401] [--decks plastic] [--keep DIR]
        [--enrol] [--adapted deck.classes.onnx] [--detect]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

RANKS = "23456789TJQKA"
OTHER_SUIT = {"S": "C", "C": "S", "H": "D", "D": "H"}
#: the table tracker's floor on a detection's score (vision/track.py ``CardTracker`` min_score)
TRACKER_FLOOR = 0.25


def error_kind(truth: str, got: str) -> str | None:
    """How ``got`` misnames ``truth`` (None: right)."""
    if got == truth:
        return None
    if got == "none":
        return "none"
    if truth[1] not in RANKS or got[1] not in RANKS:
        return "joker"
    if got[1] != truth[1]:
        return "rank"
    return "suit" if got[0] == OTHER_SUIT[truth[0]] else "colour"


def read_game(
    video: Path,
    plain: Any,
    enrolled: Any | None,
    every: float,
    deck: str = "",
    adapted: Any | None = None,
    detect: bool = False,
) -> dict[str, Any]:
    import cv2
    import numpy as np

    from vision.synth.decks import NO_INDEX

    no_index = NO_INDEX.get(deck, "")

    labels = {}
    with gzip.open(f"{video}.oracle.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            labels[int(row["i"])] = row["c"]
    cap = cv2.VideoCapture(str(video))
    fps = cap.get(cv2.CAP_PROP_FPS) or 10.0
    step = max(1, round(every * fps))
    names = list(plain.class_names)
    row: dict[str, Any] = {"corners": 0, "right": 0, "right_enrolled": 0}
    errs: Counter[str] = Counter()
    errs_enrolled: Counter[str] = Counter()
    errs_adapted: Counter[str] = Counter()
    if adapted is not None:
        row["right_adapted"] = 0
    finder = adapted or enrolled or plain
    lost: Counter[str] = Counter()
    if detect:
        row |= {"found": 0, "kept": 0, "kept_right": 0}
    black = black_ok = 0
    #: per reader, which card was read as which (the five commonest go in the row)
    misread: dict[str, Counter[str]] = {
        k: Counter() for k in ("right", "right_enrolled", "right_adapted")
    }
    i = 0
    try:
        while True:
            ok, image = cap.read()
            if not ok:
                break
            got = labels.get(i) if i % step == 0 else None
            i += 1
            # a design's cards that print no index are read by their faces (vision/faces.py)
            got = [c for c in got or () if str(c[0])[1:] not in no_index]
            if not got:
                continue
            truth = [str(c[0]) for c in got]
            boxes = np.array([c[1:5] for c in got], np.float64)
            readers = [(plain, errs, "right")]
            if enrolled is not None:
                readers.append((enrolled, errs_enrolled, "right_enrolled"))
            if adapted is not None:
                readers.append((adapted, errs_adapted, "right_adapted"))
            for det, counter, key in readers:
                probs = det.classify(image, boxes)
                for card, p in zip(truth, probs, strict=True):
                    read = names[int(np.argmax(p))]
                    kind = error_kind(card, read)
                    if kind is None:
                        row[key] += 1
                    else:
                        counter[kind] += 1
                        misread[key][f"{card} read {read}"] += 1
                    if det is (enrolled or plain) and card[0] in "CS" and card[1] in RANKS:
                        other = OTHER_SUIT[card[0]] + card[1]
                        black += 1
                        black_ok += bool(p[names.index(card)] > p[names.index(other)])
            row["corners"] += len(truth)
            if detect:
                _detected(finder.detect(image), truth, boxes, row, lost)
    finally:
        cap.release()
    row["errors"] = dict(errs)
    if enrolled is not None:
        row["errors_enrolled"] = dict(errs_enrolled)
    else:
        row.pop("right_enrolled")
    if adapted is not None:
        row["errors_adapted"] = dict(errs_adapted)
    for key, what in misread.items():
        if key in row and what:
            row["misread" + key.removeprefix("right")] = dict(what.most_common(5))
    if detect:
        row["lost"] = dict(lost.most_common(5))
    row["black_corners"], row["black_right"] = black, black_ok
    row["black_suit_right"] = round(black_ok / black, 4) if black else None
    return row


def _detected(
    dets: Any, truth: list[str], boxes: Any, row: dict[str, Any], lost: Counter[str]
) -> None:
    """Count each labelled corner (``truth``, ``boxes``) found, kept and kept right by the
    detections ``dets`` (``--detect``); the ones not kept go to ``lost``."""
    import numpy as np

    centres = np.array([[(d.box[0] + d.box[2]) / 2, (d.box[1] + d.box[3]) / 2] for d in dets])
    for card, (x1, y1, x2, y2) in zip(truth, boxes, strict=True):
        inside = (
            [
                d
                for d, (cx, cy) in zip(dets, centres, strict=True)
                if x1 <= cx <= x2 and y1 <= cy <= y2
            ]
            if len(dets)
            else []
        )
        kept = [d for d in inside if d.score >= TRACKER_FLOOR]
        row["found"] += bool(inside)
        row["kept"] += bool(kept)
        row["kept_right"] += any(d.card == card for d in kept)
        if not any(d.card == card for d in kept):
            lost[card if inside else f"{card} not found"] += 1


def main() -> int:
    from engine.profiles import load_profile
    from vision.detector import DEFAULT_MODEL
    from vision.pipeline import resolve_detector
    from vision.synth.video import EVAL_DECKS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--seed", type=int, default=9401)
    ap.add_argument("--profile", default="standard")
    ap.add_argument("--mischief", type=float, default=0.02)
    ap.add_argument("--decks", help="only the games of these designs (comma-separated)")
    ap.add_argument("--every", type=float, default=2.0, help="seconds of video between frames")
    ap.add_argument("--enrol", action="store_true", help="also read with the deck enrolled")
    ap.add_argument("--keep", help="the renders' folder (bench/table_accuracy.py --keep)")
    ap.add_argument(
        "--adapted",
        metavar="FILE",
        help="also read with this classifier adapted to the games' deck (guandan vision adapt; "
        "its deck picked with --decks), alone: right_adapted",
    )
    ap.add_argument(
        "--crop-scales",
        metavar="F,F",
        help="the adapted reader's crop scales, log-probabilities averaged (vision/detector.py "
        "crop_scales; default the pipeline's 1.0): a trial of reading each corner at more "
        "than one crop size",
    )
    ap.add_argument(
        "--detect",
        action="store_true",
        help="also run the corner stage on each frame: found, kept and kept_right",
    )
    args = ap.parse_args()
    if not DEFAULT_MODEL.exists():
        print(json.dumps({"figure": "skipped", "reason": f"{DEFAULT_MODEL} not shipped yet"}))
        return 0
    only = set(args.decks.split(",")) if args.decks else None
    if only and not only <= set(EVAL_DECKS):
        raise SystemExit(f"--decks: choose from {', '.join(EVAL_DECKS)}")
    from bench import table_accuracy as bench  # its game renders and deck enrolment

    prof = load_profile(args.profile)
    totals: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(args.keep) if args.keep else Path(td)
        tmp.mkdir(parents=True, exist_ok=True)
        for k in range(args.games):
            seed, deck = args.seed + k, EVAL_DECKS[k % len(EVAL_DECKS)]
            if only and deck not in only:
                continue
            video, _ = bench.kept_render(prof, seed, 1, deck, args.mischief, tmp)
            plain = resolve_detector("model", video)
            enrolled = None
            if args.enrol:
                enrolled = resolve_detector("model", video, bench.enrol_deck(deck, seed, tmp))
            adapted = None
            if args.adapted:
                from vision.adapt import deck_reader

                adapted = resolve_detector("model", video, deck_reader(args.adapted))
                if args.crop_scales:
                    adapted.crop_scales = tuple(float(f) for f in args.crop_scales.split(","))
            row = read_game(video, plain, enrolled, args.every, deck, adapted, args.detect)
            print(json.dumps({"figure": "game", "seed": seed, "deck": deck, **row}), flush=True)
            t = totals.setdefault(deck, Counter())
            keys = ("corners", "right", "right_enrolled", "right_adapted", "found", "kept")
            keys += ("kept_right",)
            for key in (*keys, "black_corners", "black_right"):
                t[key] += int(row.get(key) or 0)
    for deck, t in totals.items():
        out: dict[str, Any] = {"figure": "deck", "deck": deck, "corners": t["corners"]}
        out["right"] = round(t["right"] / max(t["corners"], 1), 4)
        if args.enrol:
            out["right_enrolled"] = round(t["right_enrolled"] / max(t["corners"], 1), 4)
        if args.adapted:
            out["right_adapted"] = round(t["right_adapted"] / max(t["corners"], 1), 4)
        if args.detect:
            for key in ("found", "kept", "kept_right"):
                out[key] = round(t[key] / max(t["corners"], 1), 4)
        if t["black_corners"]:
            out["black_suit_right"] = round(t["black_right"] / t["black_corners"], 4)
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
