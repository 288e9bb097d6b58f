"""Court cards found by their whole face (vision/faces.py) in rendered games of an index-less deck.

guyenne-classic's J, Q and K print no index; the corner detector misses them. Each seed is played
as bench/table_accuracy.py plays it, one deal, with guyenne-classic (a render kept there by
--keep is reused: ``kept_render``); the court faces are cut from court frames filmed on the
enrolment table (seed + 500,000) and looked for in the playing seat's zone 0.6 s after each play
settles. Figures (one JSON line per game, then a total):

* ``court_plays`` / ``top_found``: plays holding a J, Q or K, and those where at least one of
  their court cards was found (a fan's top card lies fully in view);
* ``court_cards`` / ``cards_found``: the court cards of those plays, and how many were found
  (a fan's lower cards by the strip of each beside a face found whole);
* ``false``: faces found that are no card lying in that zone (this trick's cards), over ``looks``
  zone views;
* ``find_ms``: the search time per zone view (median, p90), one thread.

This measures the faces alone; the table pipeline uses them on a table enrolled with court
frames (bench/table_accuracy.py --enrol gives the plays).

    python bench/court_faces.py [--games 10] [--seed 9401] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DECK = "guyenne-classic"
ENROL_SEED_OFFSET = 500_000  # as bench/table_accuracy.py: the enrolment table's own seed


def one_game(seed: int, tmp: Path, mischief: float) -> dict[str, object]:
    import cv2

    from bench.table_accuracy import kept_render
    from engine.profiles import load_profile
    from vision.faces import FACE_PX_PER_MM, CourtFaces, faces_from_frame, table_view
    from vision.synth.video import render_enrolment
    from vision.table import Calibration, calibrate

    prof = load_profile("standard")
    # a render kept by bench/table_accuracy.py --keep is reused
    out, info = kept_render(prof, seed, 1, DECK, mischief, tmp)
    faces = CourtFaces()
    shots = render_enrolment(
        tmp / f"courts-{seed}", seed=seed + ENROL_SEED_OFFSET, deck=DECK, courts=True
    )
    for png, kind in shots:
        image = cv2.imread(str(png))
        pics, size = faces_from_frame(image, calibrate(image), kind[-1])
        faces.pictures.update(pics)
        faces.card_mm = size
    kept = Path(str(out) + ".calibration.json")  # the replay's own, when one ran
    cal = Calibration.load(kept) if kept.exists() else None
    cap = cv2.VideoCapture(str(out))
    row = dict(court_plays=0, top_found=0, court_cards=0, cards_found=0, false=0, looks=0)
    times: list[float] = []
    on_zone: dict[str, list[str]] = {s: [] for s in "NESW"}
    try:
        for o in info.observations:
            if o.type in ("trick_cleared", "deal_start"):
                on_zone = {s: [] for s in "NESW"}
            if o.type != "played" or o.seat is None:
                continue
            on_zone[o.seat] += [str(c) for c in o.cards]
            cap.set(cv2.CAP_PROP_POS_FRAMES, int(round((o.t + 0.6) * info.fps)))
            ok, frame = cap.read()
            if not ok:
                continue
            if cal is None:
                cal = calibrate(frame)
            poly = cal.zones[o.seat]
            (x0, y0), (x1, y1) = poly.min(axis=0), poly.max(axis=0)
            view = table_view(frame, cal, (x0, y0, x1, y1), FACE_PX_PER_MM)
            t0 = time.perf_counter()
            # (a card that may lie there, FaceMatch.maybe, is no reading: the referee adds it
            # only to make an illegal play legal)
            got = [m.card for m in faces.find(view, (x0, y0)) if not m.maybe]
            times.append(time.perf_counter() - t0)
            row["looks"] += 1
            row["false"] += sum(1 for c in got if c not in on_zone[o.seat])
            courts = [str(c) for c in o.cards if str(c)[1] in "JQK"]
            if courts:
                row["court_plays"] += 1
                row["court_cards"] += len(courts)
                row["top_found"] += any(c in courts for c in got)
                left = list(got)
                for c in courts:
                    if c in left:
                        left.remove(c)
                        row["cards_found"] += 1
    finally:
        cap.release()
    row["times"] = times
    return row


def main() -> int:
    from vision.synth.video import EVAL_DECKS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--seed", type=int, default=9401)
    ap.add_argument("--mischief", type=float, default=0.02)
    ap.add_argument("--keep", help="renders kept by bench/table_accuracy.py --keep (reused)")
    args = ap.parse_args()
    import cv2

    cv2.setNumThreads(1)
    rows = []
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(args.keep) if args.keep else Path(td)
        tmp.mkdir(parents=True, exist_ok=True)
        for i in range(args.games):
            if EVAL_DECKS[i % len(EVAL_DECKS)] != DECK:
                continue
            row = one_game(args.seed + i, tmp, args.mischief)
            t = row.pop("times")
            assert isinstance(t, list)
            row["find_ms_median"] = round(1000 * statistics.median(t), 1) if t else None
            print(json.dumps({"figure": "game", "seed": args.seed + i, **row}), flush=True)
            rows.append((row, t))
    every = [x for _, t in rows for x in t]
    total = {
        k: sum(int(r[k]) for r, _ in rows)  # type: ignore[call-overload]
        for k in ("court_plays", "top_found", "court_cards", "cards_found", "false", "looks")
    }
    print(
        json.dumps(
            {
                "figure": "court_faces",
                "deck": DECK,
                "games": len(rows),
                **total,
                "find_ms": {
                    "median": round(1000 * statistics.median(every), 1) if every else None,
                    "p90": round(1000 * statistics.quantiles(every, n=10)[-1], 1)
                    if len(every) > 1
                    else None,
                },
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
