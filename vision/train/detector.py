"""One-class corner-index detector: YOLO11n built from its YAML, trained offline, resumable."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from vision.train.config import TrainConfig

_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def offline_env(config_dir: Path) -> None:
    """Make ultralytics work with no network: no DNS probe, no settings in $HOME, no pip, no
    font download (a local TTF stands in for Arial). Must run before ``import ultralytics``."""
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ["YOLO_AUTOINSTALL"] = "false"
    os.environ["YOLO_CONFIG_DIR"] = str(config_dir)
    os.environ.setdefault("YOLO_VERBOSE", "true")
    fonts = config_dir / "Ultralytics"
    fonts.mkdir(parents=True, exist_ok=True)
    for name in ("Arial.ttf", "Arial.Unicode.ttf"):
        dst = fonts / name
        if not dst.exists():
            src = _FONT if _FONT.exists() else _any_ttf()
            if src is None:
                raise RuntimeError("no TTF font on this machine: apt-get install fonts-dejavu-core")
            shutil.copyfile(src, dst)


def _any_ttf() -> Path | None:
    for base in (Path("/usr/share/fonts"), Path("/usr/local/share/fonts")):
        for f in base.rglob("*.ttf"):
            return f
    try:
        import matplotlib

        return next(Path(matplotlib.__file__).parent.rglob("DejaVuSans.ttf"))
    except (ImportError, StopIteration):
        return None


def _finished(ckpt: Path) -> bool:
    import torch

    data = torch.load(ckpt, map_location="cpu", weights_only=False)
    return int(data.get("epoch", -1)) == -1


def train_detector(cfg: TrainConfig, log: Any = print) -> Path:
    """Train (or continue) the corner detector; returns the best checkpoint."""
    det = cfg.section("detector")
    run_dir = cfg.path("detector", "run_dir")
    offline_env(run_dir.parent / "yolo-config")
    import torch
    from ultralytics import YOLO

    threads = int(det.get("threads", 2))
    data_yaml = cfg.path("data", "scenes") / "data.yaml"
    if not data_yaml.exists():
        raise FileNotFoundError(f"{data_yaml} missing: run `guandan train data` first")
    weights = run_dir / "weights"
    last, best = weights / "last.pt", weights / "best.pt"

    def set_threads(trainer: Any) -> None:  # ultralytics drops torch to 1 thread on 2 cores
        torch.set_num_threads(threads)

    t0 = time.time()
    if last.exists() and _finished(last):
        log(f"detector: {run_dir} already finished, keeping {best}")
        return best if best.exists() else last
    if last.exists():
        log(f"detector: resuming {last}")
        model = YOLO(str(last))
        model.add_callback("on_pretrain_routine_end", set_threads)
        extra: dict[str, Any] = {"val": bool(det.get("val_each_epoch", True))}
        if det.get("time_hours"):
            extra["time"] = float(det["time_hours"])
        model.train(resume=True, **extra)
    else:
        torch.manual_seed(0)
        model = YOLO(str(det.get("arch", "yolo11n.yaml")))
        model.add_callback("on_pretrain_routine_end", set_threads)
        model.train(
            data=str(data_yaml),
            imgsz=int(det.get("imgsz", 416)),
            epochs=int(det.get("epochs", 24)),
            batch=int(det.get("batch", 16)),
            workers=int(cfg.section("data").get("workers", 2)),
            device="cpu",
            project=str(run_dir.parent),
            name=run_dir.name,
            exist_ok=True,
            pretrained=False,
            seed=0,
            deterministic=False,
            amp=False,
            plots=False,
            single_cls=True,
            degrees=0.0,
            fliplr=0.0,
            flipud=0.0,
            mosaic=float(det.get("mosaic", 0.5)),
            scale=float(det.get("scale", 0.3)),
            close_mosaic=int(det.get("close_mosaic", 4)),
            patience=int(det.get("patience", 100)),
            hsv_h=0.01,
            val=bool(det.get("val_each_epoch", True)),
            verbose=True,
            **({"time": float(det["time_hours"])} if det.get("time_hours") else {}),
        )
    log(f"detector: trained in {time.time() - t0:.0f} s -> {best}")
    return best if best.exists() else last
