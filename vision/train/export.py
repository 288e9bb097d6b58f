"""Export the trained detector and classifier to ONNX with the metadata vision.detector reads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from vision.crops import CLS_SIZE, CROP_EXPAND, CROP_SIZE
from vision.detector import META_KIND, META_VERSION
from vision.train.config import TrainConfig


def _stamp(path: Path, props: dict[str, str]) -> None:
    import onnx

    model = onnx.load(str(path))
    existing = {p.key: p for p in model.metadata_props}
    for k, v in props.items():
        if k in existing:
            existing[k].value = v
        else:
            entry = model.metadata_props.add()
            entry.key, entry.value = k, v
    onnx.save(model, str(path))


def export_detector(
    cfg: TrainConfig, weights: Path, out: Path, log: Any = print, imgsz: int | None = None
) -> Path:
    from vision.train.detector import offline_env

    det = cfg.section("detector")
    offline_env(cfg.path("detector", "run_dir").parent / "yolo-config")
    from ultralytics import YOLO

    imgsz = imgsz or int(det.get("imgsz", 416))
    model = YOLO(str(weights))
    onnx_path = Path(
        model.export(
            format="onnx", imgsz=imgsz, dynamic=True, simplify=False, opset=17, device="cpu"
        )
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(onnx_path, out)
    _stamp(
        out,
        {
            "guandan_kind": META_KIND["detector"],
            "guandan_version": cfg.version,
            "guandan_format": META_VERSION,
            "class_names": json.dumps(["corner"]),
            "input_size": json.dumps([imgsz, imgsz]),
            "stride": "32",
        },
    )
    log(f"export: detector -> {out} ({out.stat().st_size / 1e6:.1f} MB)")
    return out


def export_classifier(cfg: TrainConfig, weights: Path, out: Path, log: Any = print) -> Path:
    import torch

    from vision.train.classifier import CLASS_NAMES, build_model

    model = build_model()
    ck = torch.load(weights, map_location="cpu", weights_only=False)
    model.load_state_dict(ck["model"])
    model.eval()

    class WithSoftmax(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            f = self.inner.features(x)
            # the model gives log-probabilities; the embedding is what deck enrolment
            # (vision/enrol.py) compares
            return torch.exp(self.inner.from_features(f)), f

    out.parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, 3, CLS_SIZE, CLS_SIZE)
    torch.onnx.export(
        WithSoftmax(model),
        (dummy,),
        str(out),
        input_names=["crops"],
        output_names=["probs", "features"],
        dynamic_axes={"crops": {0: "n"}, "probs": {0: "n"}, "features": {0: "n"}},
        opset_version=17,
        dynamo=False,
    )
    _stamp(
        out,
        {
            "guandan_kind": META_KIND["classifier"],
            "guandan_version": cfg.version,
            "guandan_format": META_VERSION,
            "class_names": json.dumps(list(CLASS_NAMES)),
            "input_size": json.dumps([CLS_SIZE, CLS_SIZE]),
            "crop_size": str(CROP_SIZE),
            "crop_expand": str(float(cfg.section("data").get("crop_expand", CROP_EXPAND))),
            "val_acc": f"{float(ck.get('val_acc', float('nan'))):.4f}",
        },
    )
    log(f"export: classifier -> {out} ({out.stat().st_size / 1e6:.2f} MB)")
    return out


def add_features_output(path: Path, log: Any = print) -> bool:
    """Give a classifier exported before 2026-11-30 its ``features`` output (the 160-d embedding
    the two heads read; deck enrolment compares it), without retraining: the tensor that feeds
    the rank head's Gemm becomes a second graph output. Returns False if it already has one."""
    import onnx

    model = onnx.load(str(path))
    if any(o.name == "features" for o in model.graph.output):
        return False
    feeds = [n.input[0] for n in model.graph.node if n.op_type == "Gemm" and "rank" in n.input[1]]
    if len(feeds) != 1:
        raise ValueError(f"{path}: no single rank-head Gemm found; export it again instead")
    model.graph.node.append(onnx.helper.make_node("Identity", [feeds[0]], ["features"]))
    model.graph.output.append(
        onnx.helper.make_tensor_value_info("features", onnx.TensorProto.FLOAT, ["n", None])
    )
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    log(f"export: {path} now also gives 'features'")
    return True
