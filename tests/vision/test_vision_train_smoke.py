"""Smoke training of the whole recipe (tiny data, 1 epoch) so it cannot rot; needs the train extra.

Runs ``guandan train all`` in a subprocess (ultralytics sets process-wide state), offline,
then loads the exported ONNX files with the runtime detector and reruns a step to show a
finished run is kept (resumable).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs the train extra")
pytest.importorskip("ultralytics", reason="needs the train extra")

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "datasets"


def _tiny_real(dst: Path) -> Path:
    """Train and two valid photos of each labelled real set (../shared/datasets): six train
    photos of real-cardcounter (the score model's fit needs 20 detections, right and wrong),
    three of real-poker-cards."""
    for name, n_train in (("real-cardcounter", 6), ("real-poker-cards", 3)):
        src = SHARED / name
        (dst / name / "images").mkdir(parents=True)
        rows = [json.loads(x) for x in (src / "labels.jsonl").read_text().splitlines() if x]
        keep = [r for r in rows if r["split"] == "train"][:n_train]
        keep += [r for r in rows if r["split"] == "valid"][:2]
        for r in keep:
            (dst / name / r["image"]).write_bytes((src / r["image"]).read_bytes())
        (dst / name / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in keep))
    return dst


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/datasets (real photos)")
def test_smoke_training_exports_loadable_models(tmp_path: Path) -> None:
    cfg = tmp_path / "smoke.toml"
    cfg.write_text(
        f"""
version = "smoke"
[data]
decks = "{tmp_path / "decks"}"
scenes = "{tmp_path / "scenes"}"
decks_include = ["proc-sans", "proc-serif"]
n_train = 6
n_val = 2
n_corners_random = 40
random_decks = 2
n_corners_kde = 30
kde_decks = ["standard"]
size = 192
workers = 1
[detector]
arch = "yolo11n.yaml"
imgsz = 192
epochs = 1
batch = 3
run_dir = "{tmp_path / "runs" / "detector"}"
[classifier]
epochs = 1
batch = 32
run_dir = "{tmp_path / "runs" / "classifier"}"
[export]
dir = "{tmp_path / "models"}"
detector = "card-corners.onnx"
classifier = "card-classes.onnx"
quantize = true
[real]
dir = "{tmp_path / "real"}"
export_dir = "{tmp_path / "models" / "photo"}"
datasets = "{_tiny_real(tmp_path / "shared")}"
base_detector = "{ROOT / "models" / "card-corners.onnx"}"
base_classifier = "{ROOT / "models" / "card-classes.onnx"}"
crop_jitter = 2
synthetic_scenes = 4
[real.detector]
run_dir = "{tmp_path / "runs" / "real-detector"}"
imgsz = 192
time_hours = 0.0005
epochs = 1
batch = 4
[real.classifier]
run_dir = "{tmp_path / "runs" / "real-classifier"}"
time_hours = 0.002
steps_per_epoch = 3
batch = 16
[real.gpu.classifier]
batch = 999
[real.score]
precision = 0.0
conf = 0.01
"""
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("YOLO_")}
    env["YOLO_OFFLINE"] = "1"
    entry = "import sys; from kiosk.cli import main; sys.exit(main())"
    cmd = [sys.executable, "-c", entry, "train", "all", "--config", str(cfg)]
    run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    models = tmp_path / "models"
    assert (models / "card-corners.onnx").stat().st_size > 1_000_000
    # with quantize on, the corner detector written is the int8 copy of the float export,
    # calibrated on the smoke's own training scenes (vision/train/quantize.py)
    from vision.train.quantize import is_quantized

    fp32 = tmp_path / "runs" / "detector" / "card-corners-fp32.onnx"
    assert is_quantized(models / "card-corners.onnx") and not is_quantized(fp32)
    assert "quantize: card-corners-fp32.onnx" in run.stdout
    assert (tmp_path / "runs" / "detector" / "weights" / "last.pt").exists()
    assert (tmp_path / "runs" / "classifier" / "last.pt").exists()
    with np.load(tmp_path / "scenes" / "corners_random.npz") as rand:  # randomised decks
        assert rand["x"].shape[0] == 40 and len(set(rand["y"].tolist())) > 10
    assert (tmp_path / "decks" / "rand-001" / "deck.json").exists()
    with np.load(tmp_path / "scenes" / "corners_kde.npz") as kde:  # a KDE deck design
        assert kde["x"].shape[0] == 30 and str(kde["stamp"]).endswith("kde=standard")
    assert (tmp_path / "decks" / "kde-standard" / "deck.json").exists()
    # nothing was written to the user's home by ultralytics: its config lives in the run folder
    assert (tmp_path / "runs" / "yolo-config" / "Ultralytics" / "Arial.ttf").exists()

    from vision.detector import Detector, read_image

    det = Detector(models / "card-corners.onnx")
    assert det.version == "smoke"
    img = read_image(next((tmp_path / "scenes" / "images" / "val").glob("*.jpg")))
    assert isinstance(det.detect(img), list)

    def step(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*cmd[:4], *args, "--config", str(cfg)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    # rerun: finished runs are kept, not retrained
    again = step("detector")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "already finished" in again.stdout

    # the evaluation step reads the exported files and the held-out scenes (one detector pass
    # for both ways of counting the index-less court cards); --limit keeps it short (an
    # untrained model finds hundreds of "corners" in each real photo)
    ev = step("eval", "--limit", "2")
    assert ev.returncode == 0, ev.stderr[-2000:]
    lines = [json.loads(x) for x in ev.stdout.splitlines() if x.startswith("{")]
    syn = next(x for x in lines if x["eval"] == "synthetic_held_out_decks")
    assert syn["images"] == 2 and syn["corners"] > 0 and 0.0 <= syn["corner_map50"] <= 1.0
    real = [x for x in lines if x["eval"] == "real_edje"]
    assert all(x["images"] == 2 for x in real)

    # the real-photo fine-tune (vision/train/real.py): prepared from the train splits, both
    # models warm-started from the shipped files, exported; a rerun keeps the finished parts
    shipped_score = (ROOT / "models" / "photo" / "score.json").read_bytes()
    real = step("real")
    assert real.returncode == 0, real.stdout[-2000:] + real.stderr[-2000:]
    # the score model is fitted on the config's (tiny) sets and written beside the pair it
    # scores, never over the shipped one (a CI run once read every real train photo here)
    score = json.loads((models / "photo" / "score.json").read_text())
    assert score["info"]["rows"] > 0 and "real-score: fitted on" in real.stdout
    assert (ROOT / "models" / "photo" / "score.json").read_bytes() == shipped_score
    prepared = json.loads((tmp_path / "real" / "prepared.json").read_text())
    labels = (tmp_path / "shared" / "real-poker-cards" / "labels.jsonl").read_text().splitlines()
    rows = [json.loads(x) for x in labels]
    sources = {r["source"] for r in rows if r["split"] == "train"}  # its copies are one photo
    assert prepared["poker_photos"] == len(sources) and prepared["train_crops"] > 20
    assert "real classifier: start (shipped model)" in real.stdout
    det = Detector(models / "photo" / "card-corners.onnx")  # the photo pair, loadable
    assert isinstance(det.detect(img), list)
    again = step("real-data")
    assert again.returncode == 0 and "already prepared" in again.stdout
    gpu = step("real-classifier", "--device", "cuda:7")
    assert gpu.returncode == 2 and "--device cuda:7" in gpu.stderr
    other = step("data", "--device", "cuda")
    assert other.returncode == 2 and "only the real-* steps" in other.stderr
