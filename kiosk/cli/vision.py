"""``guandan vision detect IMAGE... [--model PATH]``: one JSON line per image (CONTRACT.md);
``guandan vision enrol --spades IMG ... --out deck.json``: teach the kiosk a deck design
(vision/enrol.py)."""

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
    d.add_argument(
        "--model",
        help="detector ONNX (default: models/photo/card-corners.onnx, the pair fine-tuned on "
        "real photos; the table pipeline's is models/card-corners.onnx)",
    )
    d.add_argument(
        "--classifier", help="classifier ONNX (default: card-classes.onnx beside --model)"
    )
    d.add_argument(
        "--conf",
        type=float,
        default=None,
        help="corner score threshold (default: the score model's, else 0.3)",
    )
    d.add_argument(
        "--max-side", type=int, default=960, help="shrink frames to this long side (default 960)"
    )
    d.add_argument(
        "--tile", type=int, default=1024, help="tile size for large frames (default 1024)"
    )
    d.add_argument(
        "--pyramid",
        default="1.25,1,0.5,0.25",
        help="detector passes as scale factors of the working size, merged by NMS (default "
        "1.25,1,0.5,0.25: the half- and quarter-size passes find cards too large for the first, "
        "as in close-ups; the enlarged one small indices, in images small enough, see "
        "--zoom-limit)",
    )
    d.add_argument(
        "--invert",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also look for corners in the negative image (light ink on a dark deck; default "
        "on, --no-invert halves the corner stage's cost)",
    )
    d.add_argument(
        "--rotations",
        type=int,
        choices=(1, 2, 4),
        default=4,
        help="classify each corner at this many turns and average (default 4; 1 is 4x cheaper)",
    )
    d.add_argument(
        "--zoom-limit",
        type=int,
        default=1024,
        help="an enlarging pass (factor above 1) runs only while the enlarged image's long side "
        "is at most this many pixels; 0: always (default 1024, one tile)",
    )
    d.add_argument(
        "--min-score",
        type=float,
        default=None,
        help="report a corner only when its score is at least this (default: the score "
        "model's floor, else 0.3; 0 reports every corner over --conf). The score is the score "
        "model's probability that the reading is right, else corner score x the classifier's "
        "probability of its card",
    )
    d.add_argument(
        "--score-model",
        default=None,
        metavar="FILE|none",
        help="score model (vision/scoremodel.py; default: models/photo/score.json when "
        "reading with the photo pair; none: corner score x class probability)",
    )
    d.add_argument(
        "--crop-scales",
        default="0.75,0.85,1",
        help="classify each corner from crops at these sizes (x the classifier's own crop) and "
        "average (default 0.75,0.85,1, chosen on real photos; 1 is 3x cheaper)",
    )
    d.add_argument(
        "--contain",
        type=float,
        default=0.5,
        help="drop a corner whose centre lies inside a better one's box and whose area is under "
        "this share of it: a suit pip or rank glyph found alone (default 0.5; 0 keeps all)",
    )
    d.set_defaults(handler=_detect)

    e = subs.add_parser(
        "enrol",
        help="teach the kiosk the table's deck design from a few camera frames",
        description="Lay each suit of one deck face up under the table camera, the cards apart "
        "so both corner indices show (any order, any angle), take a frame (guandan hardware "
        "camera --save DIR), and the same for the two jokers. The classifier's embedding of "
        "every corner becomes a per-card prototype; `guandan table replay/run --deck FILE` then "
        "reads with them. How much they count is chosen from the frames themselves "
        "(leave-one-out): 0 when the classifier already reads the deck as well. A deck whose "
        "J, Q and K print no index (only a figure): add one court frame per suit "
        "(--court-spades ...), read by their whole face (vision/faces.py).",
    )

    def frames(flag: str, what: str) -> None:
        e.add_argument(flag, nargs="+", action="extend", default=[], metavar="IMAGE", help=what)

    suits = ("spades", "hearts", "clubs", "diamonds")
    for name in suits:
        frames(f"--{name}", f"frame(s) showing the 13 {name} of one deck")
    frames(
        "--jokers",
        "frame(s) showing the two jokers (jokers that print no corner index, only a picture: "
        "laid apart, the table's markers in view; read by their whole face, the big joker "
        "told from the small one by colour, else lying on the camera's right)",
    )
    for name in suits:
        frames(
            f"--court-{name}",
            f"a deck whose J, Q and K print no index: a frame of the {name}' J, Q and K apart "
            "in one row, J on the camera's left, K on its right, the table's markers in view",
        )
    e.add_argument("--out", required=True, help="deck profile to write (JSON)")
    e.add_argument("--name", default=None, help="the design's name (default: the file's stem)")
    e.add_argument("--model", help="detector ONNX (default: models/card-corners.onnx)")
    e.add_argument(
        "--classifier", help="classifier ONNX (default: card-classes.onnx beside --model)"
    )
    e.set_defaults(handler=_enrol)

    v = subs.add_parser(
        "evaluate",
        help="read every real-photo split and the synthetic held-out designs; one table",
        description="Runs the detector as `vision detect` does over the labelled real photos in "
        "../shared/datasets (real-cardcounter: corner boxes; real-poker-cards: whole-card "
        "boxes; real-edje: rank only) and the synthetic held-out-design scenes of `guandan "
        "train data` when they are there. A labelled box is read when a detection of its card "
        "has its centre inside it (recall); precision is over the detections whose centre lies "
        "in some labelled box. Prints one JSON line per split, then the table (models/README.md "
        "keeps it).",
    )
    v.add_argument(
        "--model",
        help="detector ONNX (default: models/photo/card-corners.onnx, as vision detect)",
    )
    v.add_argument(
        "--classifier", help="classifier ONNX (default: card-classes.onnx beside --model)"
    )
    v.add_argument(
        "--datasets",
        default=None,
        help="folder holding the real-photo sets (default ../shared/"
        "datasets beside the repository)",
    )
    v.add_argument(
        "--splits",
        default="valid,test",
        help="real splits to read, comma-separated, of train, valid, test (default valid,test)",
    )
    v.add_argument(
        "--scenes",
        default="datasets/generated/scenes416",
        help="synthetic scenes folder of `guandan train data` (its held-out 'val' split); "
        "skipped with a note when absent",
    )
    v.add_argument("--limit", type=int, default=None, help="at most N images per split")
    v.set_defaults(handler=_evaluate)

    a = subs.add_parser(
        "adapt",
        help="fine-tune the card classifier on the event's deck (needs the train extra)",
        description="Render corner crops and table scenes of exactly this deck (a deck folder: "
        "54 faces <CARD>.png and deck.json, as the synthetic renderer's; from enrolment frames: "
        "guandan vision deckfaces), fine-tune the shipped classifier on them on the CPU, and "
        "write the adapted classifier beside the deck profile (deck.json -> "
        "deck.classes.onnx), which `guandan table replay/run --deck deck.json` then reads "
        "with. Resumable: run the same command again after an interruption. Safe: when the "
        "adapted model reads its own validation crops worse than the base model it is written "
        "as *.rejected.onnx, not used, and the command exits 1.",
    )
    a.add_argument("deck_dir", metavar="DECK_DIR", help="the deck folder (faces + deck.json)")
    where = a.add_mutually_exclusive_group(required=True)
    where.add_argument("--profile", help="the deck profile (guandan vision enrol) to adapt for")
    where.add_argument("--out", help="the adapted classifier to write (.onnx), without a profile")
    a.add_argument("--base", help="classifier to start from (default: models/card-classes.onnx)")
    a.add_argument(
        "--minutes", type=float, default=20.0, help="time for the whole run (default 20)"
    )
    a.add_argument(
        "--corners", type=int, default=5000, help="corner mini-scenes to train on (default 5000)"
    )
    a.add_argument("--scenes", type=int, default=250, help="table scenes to train on (default 250)")
    a.add_argument(
        "--val-scenes", type=int, default=60, help="validation table scenes (default 60)"
    )
    a.add_argument(
        "--small-share",
        type=float,
        default=0.0,
        help="share of training crops with the cards drawn small, 40-70 px wide, where suits "
        "are hardest to tell (default 0: the recipe's whole range of widths only)",
    )
    a.add_argument("--seed", type=int, default=0, help="data seed offset (default 0)")
    a.add_argument("--threads", type=int, default=2, help="torch and data workers (default 2)")
    a.add_argument("--work", help="data and checkpoint folder (default: beside the output)")
    a.set_defaults(handler=_adapt)

    f = subs.add_parser(
        "deckfaces",
        help="cut the deck's 54 faces from the enrolment frames (for guandan vision adapt)",
        description="From the frames of `guandan vision enrol` (each suit's 13 cards apart, "
        "face up, and the two jokers; the table's markers in view) find each card's outline, "
        "cut it upright through the table's homography, name it by its corner indices, and "
        "write the deck folder (54 faces <CARD>.png and deck.json) that `guandan vision adapt` "
        "renders scenes of. A deck whose J, Q and K print no index: add one court frame per "
        "suit (--court-spades ...). A card missing, doubled, cut off or unreadable is named, "
        "with its frame, and nothing is written.",
    )

    def face_frames(flag: str, what: str) -> None:
        f.add_argument(flag, nargs="+", action="extend", default=[], metavar="IMAGE", help=what)

    for name in suits:
        face_frames(f"--{name}", f"frame(s) showing the 13 {name} of one deck")
    face_frames("--jokers", "frame(s) showing the two jokers")
    for name in suits:
        face_frames(
            f"--court-{name}",
            f"a deck whose J, Q and K print no index: a frame of the {name}' J, Q and K apart "
            "in one row, J on the camera's left, K on its right (as for guandan vision enrol); "
            "they are named by their place",
        )
    f.add_argument("--out", required=True, help="deck folder to write")
    f.add_argument("--name", default=None, help="the design's name (default: the folder's name)")
    f.add_argument("--model", help="detector ONNX (default: models/card-corners.onnx)")
    f.add_argument(
        "--classifier", help="classifier ONNX (default: card-classes.onnx beside --model)"
    )
    f.set_defaults(handler=_deckfaces)


def _detect(args: argparse.Namespace) -> int:
    from vision.detector import (
        PHOTO_CONF,
        PHOTO_MIN_SCORE,
        Detector,
        ImageError,
        photo_model,
        photo_score_model,
    )
    from vision.scoremodel import ScoreModel, ScoreModelError

    if args.score_model is None:
        score_model = photo_score_model(args.model, args.classifier)
    elif args.score_model.lower() == "none":
        score_model = None
    else:
        try:
            score_model = ScoreModel.load(args.score_model)
        except ScoreModelError as exc:
            raise ValueError(f"--score-model: {exc}") from None
    if args.conf is None:
        args.conf = score_model.conf if score_model else PHOTO_CONF
    if args.min_score is None:
        args.min_score = score_model.min_score if score_model else PHOTO_MIN_SCORE
    if not 0.0 <= args.conf <= 1.0:
        raise ValueError(f"--conf {args.conf}: must lie between 0 and 1")
    if not 0.0 <= args.min_score <= 1.0:
        raise ValueError(f"--min-score {args.min_score}: must lie between 0 and 1")
    if args.max_side < 32 or args.tile < 64:
        raise ValueError("--max-side must be >= 32 and --tile >= 64")
    if args.zoom_limit != 0 and args.zoom_limit < 32:
        raise ValueError(f"--zoom-limit {args.zoom_limit}: give at least 32 (pixels), or 0")
    try:
        pyramid = tuple(float(f) for f in args.pyramid.split(","))
    except ValueError:
        raise ValueError(
            f"--pyramid {args.pyramid!r}: give scale factors separated by commas, e.g. 1,0.5"
        ) from None
    try:
        crop_scales = tuple(float(f) for f in args.crop_scales.split(","))
    except ValueError:
        raise ValueError(
            f"--crop-scales {args.crop_scales!r}: give size factors separated by commas, "
            "e.g. 0.85,1"
        ) from None
    if not 0.0 <= args.contain <= 1.0:
        raise ValueError(f"--contain {args.contain}: an area share from 0 (off) to 1")
    det = Detector(
        args.model or photo_model(),
        args.classifier,
        crop_scales=crop_scales,
        contain=args.contain or None,
        conf=args.conf,
        max_side=args.max_side,
        tile=args.tile,
        pyramid=pyramid,
        zoom_limit=args.zoom_limit or None,
        rotations=args.rotations,
        min_score=args.min_score,
        invert=args.invert,
        score_model=score_model,
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


def _evaluate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from vision.detector import photo_detector
    from vision.realphotos import SHARED, evaluate_set, iter_splits
    from vision.train.evaluate import eval_real, eval_synthetic

    splits = [s.strip() for s in args.splits.split(",") if s.strip()]
    bad = [s for s in splits if s not in ("train", "valid", "test")]
    if bad or not splits:
        raise ValueError(
            f"--splits {args.splits!r}: give train, valid and/or test, comma-separated"
        )
    if args.limit is not None and args.limit < 1:
        raise ValueError(f"--limit {args.limit}: a number >= 1")
    root = Path(args.datasets) if args.datasets else SHARED
    if not root.is_dir():
        raise ValueError(f"--datasets {root}: no such folder (the real-photo sets live there)")
    # `vision detect`'s defaults (vision/detector.py PHOTO_*), so the figures mean what a user sees
    det = photo_detector(args.model, args.classifier)
    rows: list[dict[str, Any]] = []
    names = [n for n in ("real-cardcounter", "real-poker-cards") if (root / n).is_dir()]
    for name, split in iter_splits(names, root):
        if split in splits:
            row = evaluate_set(det, name, split, root, args.limit)
            rows.append(row)
            print(json.dumps(row), flush=True)
    edje = root / "real-edje"
    if (edje / "train_labels.csv").exists():
        row = {"set": "real-edje", "split": "all", **eval_real(det, edje, args.limit)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    scenes = Path(args.scenes)
    if (scenes / "meta" / "val").is_dir():
        row = {
            "set": "synthetic-held-out",
            "split": "val",
            **eval_synthetic(det, scenes, args.limit),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    else:
        print(
            f"guandan vision evaluate: {scenes}: no synthetic scenes (make them with "
            "`guandan train data`); that row is left out",
            file=sys.stderr,
        )
    print(_table(rows))
    return 0


def _table(rows: list[dict[str, Any]]) -> str:
    """The evaluation rows as one Markdown table (models/README.md keeps it)."""
    out = [
        "| set | split | images | labelled | recall | precision | other colour |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["set"] == "real-edje":
            out.append(
                f"| real-edje (rank in card box) | all | {r['images']} | {r['card_boxes']} | "
                f"{r['rank_recall']:.4f} | ({r['wrong_rank_detections']} wrong-rank in boxes) "
                "| |"
            )
        elif r["set"] == "synthetic-held-out":
            out.append(
                f"| synthetic held-out designs (cards per image) | val | {r['images']} | "
                f"{r['corners']} corners | {r['image_card_recall']:.4f} | "
                f"{r['image_card_precision']:.4f} | |"
            )
        else:
            out.append(
                f"| {r['set']} ({r['boxes_are']} boxes) | {r['split']} | {r['images']} | "
                f"{r['boxes']} | {r['recall']:.4f} | {r['precision']:.4f} | {r['wrong_colour']} |"
            )
    return "\n".join(out)


def _enrol(args: argparse.Namespace) -> int:
    from pathlib import Path

    from vision.detector import enrolment_detector, read_image
    from vision.enrol import (
        COURT_KINDS,
        SHOT_KINDS,
        closest_pair,
        enrol,
        missing_cards,
    )

    out = Path(args.out)
    if not out.resolve().parent.exists():
        raise ValueError(f"--out {out}: the folder {out.parent} does not exist")
    listed = [
        (path, kind)
        for kind, name in {**SHOT_KINDS, **COURT_KINDS}.items()
        for path in getattr(args, name)
    ]
    if not listed:
        raise ValueError(
            "no frames given: pass --spades IMG --hearts IMG --clubs IMG --diamonds IMG "
            "[--jokers IMG]"
        )
    shots = [(read_image(path), kind) for path, kind in listed]  # a bad file stops here
    from vision.pipeline import ReducedDetector

    # frames over 1280x720 (a camera capturing at 2304x1296) read as the table pipeline does:
    # corners on a reduced copy, cards named from the frame (read whole, tigullio's jokers
    # gave no corner at 2304x1296: bench/RESULTS.md); at 1280x720 nothing changes
    det = ReducedDetector(enrolment_detector(args.model, args.classifier))
    # bad frames (markers out of view, blurred, the wrong suit, both decks' cards) stop here,
    # named; the profile is written (a temp file renamed) only once the whole enrolment worked
    prof = enrol(
        det,
        shots,
        name=args.name or out.stem,
        log=lambda m: print(m, file=sys.stderr),
        frames=[str(path) for path, _ in listed],
    )
    prof.save(out)
    a, b, cos = closest_pair(prof)
    lacking = missing_cards(prof)
    faces = sorted(prof.faces.pictures) if prof.faces else []
    print(
        json.dumps(
            {
                "deck": prof.name,
                "out": str(out),
                "cards": len(prof.cards),
                "missing": lacking,
                "faces": faces,
                "weight": "inf" if prof.weight == float("inf") else prof.weight,
                "closest": [a, b, cos],
            }
        )
    )
    jokers = [c for c in faces if c in ("SB", "HR")]
    courts_read = [c for c in faces if c not in jokers]
    if courts_read:
        print(
            f"guandan vision enrol: {len(courts_read)} court cards read by their face: "
            f"{' '.join(courts_read)}",
            file=sys.stderr,
        )
    if jokers:
        print(
            f"guandan vision enrol: the jokers print no corner index; read by their face: "
            f"{' '.join(jokers)}",
            file=sys.stderr,
        )
    if lacking:
        print(
            f"guandan vision enrol: warning: {len(lacking)} cards not enrolled "
            f"({' '.join(lacking)}); they keep the classifier's own reading",
            file=sys.stderr,
        )
        courts = [c for c in lacking if c[1] in "JQK"]
        if len(courts) >= 3:
            # guyenne-classic: its J, Q and K show a suit sign and a picture, no rank index
            print(
                f"guandan vision enrol: warning: {len(courts)} of the 12 court cards were not "
                "read as cards. If this deck's J, Q and K carry no rank index in the corner "
                "(only a picture), enrol them by their faces: add --court-spades IMG (the "
                "spades' J, Q and K apart in one row, J on the camera's left, K on its right, "
                "the table's markers in view) and the same for --court-hearts, --court-clubs "
                "and --court-diamonds",
                file=sys.stderr,
            )
    return 0


def _adapt(args: argparse.Namespace) -> int:
    from pathlib import Path

    from vision.adapt import AdaptSizes, adapt, adapted_beside

    if args.profile:
        from vision.enrol import DeckProfile

        DeckProfile.load(args.profile)  # a bad profile stops here, before any work
        out = adapted_beside(args.profile)
    else:
        out = Path(args.out)
    for flag in ("corners", "scenes", "val_scenes", "threads"):
        if getattr(args, flag) < 1:
            raise ValueError(f"--{flag.replace('_', '-')} must be at least 1")
    if not args.minutes > 0:
        raise ValueError("--minutes must be positive")
    if not 0.0 <= args.small_share <= 1.0:
        raise ValueError(f"--small-share must be between 0 and 1 (got {args.small_share})")
    sizes = AdaptSizes(
        corners=args.corners,
        scenes=args.scenes,
        val_scenes=args.val_scenes,
        minutes=args.minutes,
        seed=args.seed,
        threads=args.threads,
        workers=args.threads,
        small_share=args.small_share,
    )
    res = adapt(args.deck_dir, out, base=args.base, sizes=sizes, work=args.work)
    print(
        json.dumps(
            {
                "out": str(res.out),
                "accepted": res.accepted,
                "base_acc": round(res.base_acc, 4),
                "adapted_acc": round(res.adapted_acc, 4),
                "val_crops": res.val_crops,
                "train_crops": res.train_crops,
                "steps": res.steps,
                "seconds": round(res.seconds, 1),
            }
        )
    )
    if not res.accepted:
        print(
            f"guandan vision adapt: the adapted classifier reads its validation crops worse "
            f"than the base model ({res.adapted_acc:.4f} vs {res.base_acc:.4f}); it is kept as "
            f"{res.out} for a look and is not used",
            file=sys.stderr,
        )
        return 1
    return 0


def _deckfaces(args: argparse.Namespace) -> int:
    from pathlib import Path

    from vision.deckfaces import deck_from_enrolment, write_deck
    from vision.detector import enrolment_detector, read_image
    from vision.enrol import COURT_KINDS, SHOT_KINDS

    out = Path(args.out)
    if not out.resolve().parent.exists():
        raise ValueError(f"--out {out}: the folder {out.parent} does not exist")
    kinds = {**SHOT_KINDS, **COURT_KINDS}
    listed = [(path, kind) for kind, name in kinds.items() for path in getattr(args, name)]
    if not listed:
        raise ValueError(
            "no frames given: pass --spades IMG --hearts IMG --clubs IMG --diamonds IMG "
            "--jokers IMG"
        )
    shots = [(read_image(path), kind) for path, kind in listed]  # a bad file stops here
    from vision.pipeline import ReducedDetector

    reader = ReducedDetector(enrolment_detector(args.model, args.classifier))  # as enrol's
    faces = deck_from_enrolment(
        reader,
        shots,
        frames=[str(p) for p, _ in listed],
        log=lambda m: print(m, file=sys.stderr),
    )
    written = write_deck(faces, out, args.name or out.name)
    meta = json.loads((written / "deck.json").read_text())
    print(json.dumps({"out": str(written), "cards": len(faces.faces), **meta}))
    return 0
