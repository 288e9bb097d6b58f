"""``guandan train ...``: the detector's training recipe (needs the ``train`` extra).

Steps: ``decks`` (render card faces), ``data`` (synthetic scenes + crops), ``detector``,
``classifier``, ``export`` (ONNX into models/; the corner detector quantised to int8 when the
config's ``[export] quantize`` is true); ``all`` runs these in order; ``quantize`` makes only
the int8 copy from the float export (with ``quantize`` false: from the exported file, into the
detector run folder as ``card-corners-int8.onnx``, to measure); ``eval`` measures. Every step
is resumable: rerunning continues where it stopped.

``real-data``, ``real-detector``, ``real-classifier`` and ``real-export`` fine-tune both shipped
models on real photographs beside the synthetic scenes (vision/train/real.py, the ``[real]``
sections of the config); ``real-score`` fits the photo pair's score model on the real train
split and chooses its floor on valid (vision/train/score.py); ``real`` runs the five in order
(after ``data``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

STEPS = (
    "decks",
    "data",
    "detector",
    "classifier",
    "export",
    "quantize",
    "eval",
    "all",
    "real-data",
    "real-detector",
    "real-classifier",
    "real-export",
    "real-score",
    "real",
)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("train", help="train the card detector (needs the train extra)")
    p.add_argument("step", choices=STEPS, help="which step (all = every step in order)")
    p.add_argument(
        "--config", default="models/train.toml", help="recipe TOML (default models/train.toml)"
    )
    p.add_argument("--root", default=".", help="base for relative paths in the config (default .)")
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="eval only: at most N held-out scenes and N real photos (a quick look; the model "
        "card's figures use them all)",
    )
    p.add_argument(
        "--device",
        default=None,
        help="real-* steps: train on this torch device (cuda, cuda:1; default the config's, "
        "cpu); on a GPU the [real.gpu.*] tables of the config apply (a longer, larger run)",
    )
    p.set_defaults(handler=_train)


def _train(args: argparse.Namespace) -> int:
    try:
        import torch  # noqa: F401
    except ImportError:
        raise ValueError("training needs the train extra: pip install -e '.[train]'") from None
    from vision.crops import CROP_EXPAND
    from vision.synth.dataset import generate, split_decks
    from vision.train.classifier import train_classifier
    from vision.train.config import load_config
    from vision.train.detector import train_detector
    from vision.train.export import export_classifier, export_detector

    if args.device is not None and not args.step.startswith("real"):
        raise ValueError(f"--device {args.device}: only the real-* steps take a device")
    if args.limit is not None and (args.step != "eval" or args.limit < 1):
        raise ValueError(f"--limit {args.limit}: a number >= 1, and only with the eval step")
    cfg = load_config(Path(args.config), Path(args.root).resolve())
    data = cfg.section("data")
    step = args.step
    include = data.get("decks_include")  # None = every usable deck
    expand = float(data.get("crop_expand", CROP_EXPAND))  # classifier crop: box side x this
    if step in ("decks", "all"):
        split = split_decks(cfg.path("data", "decks"), include)
        print(f"decks: {len(split['train'])} for training, {len(split['val'])} held out")
    if step in ("data", "all"):
        generate(
            cfg.path("data", "scenes"),
            cfg.path("data", "decks"),
            int(data["n_train"]),
            int(data["n_val"]),
            int(data.get("size", 416)),
            int(data.get("workers", 2)),
            include,
            expand,
        )
        from vision.synth.corners import generate_corners
        from vision.synth.decks import KDE_DECKS

        workers = int(data.get("workers", 2))
        # corner mini-scenes: of the training decks, of the randomised drawn decks, of the KDE
        # decks (each when its count is set)
        corner_sets: list[tuple[str, str, dict[str, Any]]] = [
            ("n_corners", "corners_train.npz", {"include": include}),
            (
                "n_corners_random",
                "corners_random.npz",
                {
                    "seed_base": int(data.get("random_seed_base", 4_000_000)),
                    "random_decks": int(data.get("random_decks", 40)),
                },
            ),
            (
                "n_corners_kde",
                "corners_kde.npz",
                {
                    "seed_base": int(data.get("kde_seed_base", 6_000_000)),
                    "kde_decks": tuple(data.get("kde_decks", KDE_DECKS)),
                },
            ),
        ]
        for count_key, name, extra in corner_sets:
            n = int(data.get(count_key, 0))
            if n:
                generate_corners(
                    cfg.path("data", "scenes") / name,
                    cfg.path("data", "decks"),
                    n,
                    workers=workers,
                    expand=expand,
                    **extra,
                )
        print(f"data: {cfg.path('data', 'scenes')}")
    if step in ("detector", "all"):
        train_detector(cfg)
    if step in ("classifier", "all"):
        train_classifier(cfg)
    if step in ("export", "all"):
        exp = cfg.path("export", "dir")
        det_w = cfg.path("detector", "run_dir") / "weights" / "best.pt"
        cls_w = cfg.path("classifier", "run_dir") / "best.pt"
        for w in (det_w, cls_w):
            if not w.exists():
                raise FileNotFoundError(f"{w} missing: run the detector and classifier steps first")
        det_out = exp / str(cfg.section("export")["detector"])
        export_detector(cfg, det_w, _float_detector(cfg) if _quantizes(cfg) else det_out)
        export_classifier(cfg, cls_w, exp / str(cfg.section("export")["classifier"]))
    if step == "quantize" or (step in ("export", "all") and _quantizes(cfg)):
        from vision.train.quantize import calibration_images, quantize_detector

        n = int(cfg.section("export").get("calibration_scenes", 256))
        if n < 1:
            raise ValueError(f"[export] calibration_scenes = {n}: at least 1 scene expected")
        shipped = cfg.path("export", "dir") / str(cfg.section("export")["detector"])
        # quantize on: the int8 copy is what ships; off: it is made beside the run, to measure
        src, dst = (
            (_float_detector(cfg), shipped)
            if _quantizes(cfg)
            else (shipped, cfg.path("detector", "run_dir") / "card-corners-int8.onnx")
        )
        quantize_detector(src, dst, calibration_images(cfg.path("data", "scenes"), n))
    if step.startswith("real"):
        return _real(cfg, step, args.device)
    if step == "eval":
        import json

        from vision.detector import Detector
        from vision.train.evaluate import REAL_DIR, eval_real, eval_synthetic_counts

        exp = cfg.path("export", "dir")
        det = Detector(exp / str(cfg.section("export")["detector"]))
        # one detector pass, two ways of counting: the index-less court cards left out, and
        # counted as corners to find and name (as scenes were labelled before 2026-11-30), so
        # older figures stay comparable
        both = eval_synthetic_counts(det, cfg.path("data", "scenes"), args.limit)
        syn, old = both[False], both[True]
        print(json.dumps({"eval": "synthetic_held_out_decks", **syn}))
        if old["corners"] != syn["corners"]:
            print(json.dumps({"eval": "synthetic_held_out_decks_no_index_counted", **old}))
        if (REAL_DIR / "train_labels.csv").exists():
            print(json.dumps({"eval": "real_edje", **eval_real(det, limit=args.limit)}))
    return 0


def _real(cfg: Any, step: str, device: str | None = None) -> int:
    """The real-photo fine-tune (vision/train/real.py): prepare, train, export."""
    from vision.train.export import export_classifier, export_detector
    from vision.train.real import _sub, prepare, train_real_classifier, train_real_detector

    if "real" not in cfg.raw:
        raise ValueError("the training config has no [real] section (see models/train.toml)")
    if device:
        import torch

        if device.startswith("cuda") and not torch.cuda.is_available():
            raise ValueError(f"--device {device}: torch sees no CUDA device on this machine")
        cfg.raw["real"]["device"] = device
    if step in ("real-data", "real"):
        prepare(cfg)
    if step in ("real-detector", "real"):
        train_real_detector(cfg)
    if step in ("real-classifier", "real"):
        train_real_classifier(cfg)
    if step in ("real-export", "real"):
        # the photo pair (vision.detector.PHOTO_MODEL), beside the table pipeline's models
        exp = Path(cfg.root) / str(cfg.raw["real"].get("export_dir", "models/photo"))
        det_dir = Path(cfg.root) / str(_sub(cfg, "detector").get("run_dir", "runs/real-detector"))
        cls_dir = Path(cfg.root) / str(
            _sub(cfg, "classifier").get("run_dir", "runs/real-classifier")
        )
        det_w = det_dir / "weights" / "last.pt"
        cls_w = cls_dir / "best.pt"
        # which of the pair this round exports (a round may train only the classifier, and
        # the photo detector already in export_dir stays)
        which = cfg.raw["real"].get("export_models", ["detector", "classifier"])
        if not which or not set(which) <= {"detector", "classifier"}:
            raise ValueError(
                f"[real] export_models = {which!r}: a list of 'detector' and/or 'classifier'"
            )
        weights = {"detector": det_w, "classifier": cls_w}
        for kind in which:
            if not weights[kind].exists():
                raise FileNotFoundError(
                    f"{weights[kind]} missing: run guandan train real-{kind} first"
                )
        if "detector" in which:
            imgsz = int(_sub(cfg, "detector").get("imgsz", 384))
            export_detector(cfg, det_w, exp / str(cfg.section("export")["detector"]), imgsz=imgsz)
        if "classifier" in which:
            export_classifier(cfg, cls_w, exp / str(cfg.section("export")["classifier"]))
    if step in ("real-score", "real"):
        from vision.train.score import fit_real_score

        fit_real_score(cfg)
    return 0


def _quantizes(cfg: Any) -> bool:
    """Whether the recipe ships the corner detector quantised (``[export] quantize``, default
    false; models/README.md has the figures of both)."""
    q = cfg.section("export").get("quantize", False)
    if not isinstance(q, bool):
        raise ValueError(f"[export] quantize = {q!r}: true or false expected")
    return q


def _float_detector(cfg: Any) -> Path:
    """Where the float corner detector is exported when the shipped one is its int8 copy."""
    return cfg.path("detector", "run_dir") / "card-corners-fp32.onnx"
