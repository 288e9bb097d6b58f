"""``guandan synth video``: a simulated match rendered as an overhead table video.

``guandan synth video --seed S --out game.mp4 [--deals N] [--profile P] [--deck NAME]
[--fps F] [--size WxH] [--mischief RATE]`` writes the video plus ``game.mp4.truth.jsonl``
(its observation stream, video times), ``game.mp4.oracle.jsonl.gz`` (the corner labels a perfect
detector would give) and ``game.mp4.calibration.json``. See vision/synth/video.py.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["register"]


def register(subparsers: Any) -> None:
    synth = subparsers.add_parser(
        "synth",
        help="synthetic footage: rendered games",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = synth.add_subparsers(dest="synth_command", metavar="VERB")
    verbs.required = True
    v = verbs.add_parser(
        "video",
        help="render a simulated match as an overhead video with its ground truth",
        description="Simulate a match and film it from above (vision/synth/video.py): cards slid "
        "into the zones, hands and arms, tricks cleared, lamps for passes and deals, lighting "
        "changes and camera noise. Writes VIDEO, VIDEO.truth.jsonl, VIDEO.oracle.jsonl.gz and "
        "VIDEO.calibration.json.",
    )
    v.add_argument("--seed", type=int, required=True, help="simulation and rendering seed")
    v.add_argument("--out", required=True, help="video file to write (.mp4)")
    v.add_argument("--deals", type=int, default=1, help="deals to play (default 1)")
    v.add_argument("--profile", default="standard", help="rule profile (default standard)")
    v.add_argument(
        "--deck",
        default=None,
        help="deck design (default tigullio, held out of detector training; also plastic, "
        "guyenne-classic, paris, proc-serif, any aisleriot or kde-* design, or cv-plain, a drawn "
        "test face). Rendered on first use into datasets/generated/decks ($GUANDAN_DECKS_DIR); "
        "when this machine lacks what that needs, it stops and says what to install",
    )
    v.add_argument("--fps", type=float, default=10.0, help="frames per second (default 10)")
    v.add_argument(
        "--size",
        default="1280x720",
        metavar="WxH",
        help="frame size (default 1280x720); 2304x1296 films the Raspberry Pi Camera Module 3's "
        "full view, the table drawn at that resolution (2028x1520: the HQ camera's)",
    )
    v.add_argument(
        "--mischief", type=float, default=0.0, help="foul rate of the simulator (0..1, default 0)"
    )
    v.add_argument("--noise", type=float, default=3.0, help="camera noise sigma (default 3)")
    v.set_defaults(handler=_video)

    en = verbs.add_parser(
        "enrolment",
        help="render a deck's enrolment frames (for guandan vision enrol)",
        description="Film one deck laid out under the table camera, suit by suit and then the "
        "jokers, the cards apart (vision/synth/video.py render_enrolment), and write one PNG per "
        "shot: enrol-S.png, enrol-H.png, enrol-C.png, enrol-D.png, enrol-J.png. With --courts, "
        "the court frames of a deck whose J, Q and K print no index instead: "
        "enrol-court-S.png .. enrol-court-D.png (each suit's J, Q, K in one row, J on the left).",
    )
    en.add_argument("--seed", type=int, required=True, help="table, camera and light seed")
    en.add_argument("--out", required=True, metavar="DIR", help="folder to write the frames in")
    en.add_argument("--deck", default="tigullio", help="deck design (default tigullio)")
    en.add_argument(
        "--size", default="1280x720", metavar="WxH", help="frame size (default 1280x720)"
    )
    en.add_argument(
        "--courts",
        action="store_true",
        help="render the court frames (guandan vision enrol --court-spades ...) instead",
    )
    en.set_defaults(handler=_enrolment)


def _size(text: str) -> tuple[int, int]:
    """--size WxH (vision/framesize.py): a bad one is a ValueError, the CLI's exit 2."""
    from vision.framesize import parse_frame_size

    return parse_frame_size(text, "--size")


def _video(args: argparse.Namespace) -> int:
    from engine.profiles import load_profile
    from vision.synth.video import DEFAULT_DECK, render_game

    if not 0.0 <= args.mischief <= 1.0:
        raise ValueError(f"--mischief must be a rate from 0 to 1, got {args.mischief}")
    if args.deals < 1 or args.deals > 200:
        raise ValueError(f"--deals must be 1..200, got {args.deals}")
    profile = load_profile(args.profile)
    # the named deck (default tigullio), rendered on first use; never another one instead: a
    # deck that cannot be rendered here stops with what to install (DeckUnavailable, exit 1)
    info = render_game(
        profile,
        seed=args.seed,
        deals=args.deals,
        out=args.out,
        fps=args.fps,
        size=_size(args.size),
        deck=args.deck or DEFAULT_DECK,
        mischief=args.mischief,
        noise=args.noise,
    )
    print(
        json.dumps(
            {
                "video": str(info.out),
                "truth": str(info.truth),
                "oracle": str(info.oracle),
                "calibration": str(info.calibration),
                "frames": info.frames,
                "fps": info.fps,
                "duration_s": round(info.duration_s, 2),
                "deck": info.deck,
                "observations": len(info.observations),
            }
        )
    )
    return 0


def _enrolment(args: argparse.Namespace) -> int:
    from pathlib import Path

    from vision.synth.video import render_enrolment

    out = Path(args.out)
    if not out.parent.resolve().exists():
        raise ValueError(f"--out {out}: the folder {out.parent} does not exist")
    shots = render_enrolment(
        out, seed=args.seed, deck=args.deck, size=_size(args.size), courts=args.courts
    )
    print(json.dumps({"deck": args.deck, "frames": {kind: str(p) for p, kind in shots}}))
    return 0
