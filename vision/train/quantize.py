"""Static int8 quantisation of the exported corner detector (train extra: needs ``onnx``).

The corner detector's float pass is most of a frame's detection time on a 2-core machine (and
on a Pi). Quantised statically (onnxruntime ``quantize_static``: QDQ, per-channel int8 weights,
uint8 activations, MinMax ranges over training-deck scenes) it keeps the held-out figures and
runs 1.2-2x faster per pass, depending on the CPU, but its boxes are less exact; the recipe does
not ship it (``[export] quantize``; models/README.md, 2026-12-02). The detection head's non-Conv
nodes (``/model.23/``: box decoding, the concat of boxes and scores, the sigmoid) stay in
float: quantised, the box coordinates (hundreds of pixels) and the scores (0-1) share one uint8
scale and no corner is found (held-out mAP50 0.50, measured 2026-12-02). So does the DFL
convolution (``/model.23/dfl/``: a box side as the expectation over 16 bins), which costs
little and quantised moved boxes most (IoU with the float model's boxes 0.917 with it
quantised, 0.947 without).

Calibration images are the recipe's own training scenes (``images/train`` of the scenes folder,
the first ``n`` by name), fed as the model sees a 416-px scene: RGB, CHW, 0-1. Held-out decks
never take part.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

#: node-name prefix of the YOLO detection head (ultralytics' ``model.23`` for yolo11n)
HEAD_PREFIX = "/model.23/"
#: the head's DFL convolution (kept float with the head's non-Conv nodes)
DFL_PREFIX = HEAD_PREFIX + "dfl/"
#: metadata key that says how a detector file was quantised (absent: float)
QUANT_META = "quantization"


class QuantizeError(ValueError):
    """A detector file or calibration set that cannot be quantised."""


def is_quantized(path: Path) -> bool:
    """True when the ONNX file already holds quantised (QDQ or integer) nodes."""
    import onnx

    return _has_quantized_nodes(onnx.load(str(path), load_external_data=False))


def _has_quantized_nodes(model: Any) -> bool:
    return any(
        n.op_type in ("QuantizeLinear", "DequantizeLinear", "QLinearConv", "ConvInteger")
        for n in model.graph.node
    )


def calibration_images(scenes: Path, n: int) -> list[Path]:
    """The first ``n`` training scenes of a scenes folder (sorted by name)."""
    found = sorted((scenes / "images" / "train").glob("*.jpg"))
    if not found:
        raise QuantizeError(
            f"{scenes / 'images' / 'train'}: no training scenes to calibrate on "
            "(run `guandan train data` first)"
        )
    return found[:n]


class _Reader:
    """onnxruntime CalibrationDataReader over image files (duck-typed: ``get_next``)."""

    def __init__(self, input_name: str, images: Sequence[Path]) -> None:
        self.input_name = input_name
        self._it: Iterator[Path] = iter(images)

    def get_next(self) -> dict[str, np.ndarray] | None:
        path = next(self._it, None)
        if path is None:
            return None
        img = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if img is None:
            raise QuantizeError(f"{path}: not a readable image (calibration scene)")
        h, w = img.shape[:2]
        if h % 32 or w % 32:  # the detector takes sides in multiples of its stride
            img = cv2.copyMakeBorder(
                img, 0, -h % 32, 0, -w % 32, cv2.BORDER_CONSTANT, value=(114, 114, 114)
            )
        blob = cv2.cvtColor(img, cv2.COLOR_BGR2RGB).transpose(2, 0, 1)[None]
        return {self.input_name: blob.astype(np.float32) / 255.0}


def quantize_detector(fp32: Path, out: Path, images: Sequence[Path], log: Any = print) -> Path:
    """Write the int8 copy of the float corner detector ``fp32`` to ``out`` (metadata kept)."""
    import onnx
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    if not fp32.exists():
        raise QuantizeError(f"{fp32}: no float detector to quantise (run `guandan train export`)")
    src = onnx.load(str(fp32))
    if _has_quantized_nodes(src):
        raise QuantizeError(
            f"{fp32}: already quantised; quantise the float export instead "
            "(the detector run folder's card-corners-fp32.onnx)"
        )
    if not images:
        raise QuantizeError("no calibration images given")
    head = [
        n.name
        for n in src.graph.node
        if n.name.startswith(HEAD_PREFIX) and (n.op_type != "Conv" or n.name.startswith(DFL_PREFIX))
    ]
    if not head:
        raise QuantizeError(
            f"{fp32}: no detection-head nodes named {HEAD_PREFIX}* (not a yolo11n export?); "
            "quantising the head's decoding loses every corner"
        )
    input_name = src.graph.input[0].name
    with tempfile.TemporaryDirectory(prefix="quant-") as tmp:
        pre = Path(tmp) / "pre.onnx"
        q = Path(tmp) / "int8.onnx"
        quant_pre_process(str(fp32), str(pre), skip_symbolic_shape=True)
        quantize_static(
            str(pre),
            str(q),
            _Reader(input_name, images),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            nodes_to_exclude=head,
        )
        model = onnx.load(str(q))
        del model.metadata_props[:]
        for p in src.metadata_props:
            model.metadata_props.add(key=p.key, value=p.value)
        model.metadata_props.add(
            key=QUANT_META,
            value=(
                f"int8 static QDQ per-channel, MinMax over {len(images)} training scenes; "
                f"{len(head)} {HEAD_PREFIX} nodes in float (decoding and DFL)"
            ),
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp_out = out.with_suffix(".onnx.tmp")
        onnx.save(model, str(tmp_out))
        shutil.move(str(tmp_out), str(out))
    log(
        f"quantize: {fp32.name} -> {out} ({out.stat().st_size / 1e6:.1f} MB, "
        f"{len(images)} calibration scenes, {len(head)} head nodes in float)"
    )
    return out
