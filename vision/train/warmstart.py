"""Start training from the shipped ONNX models instead of from scratch (``train`` extra).

The training runs that made the shipped files are not kept (``runs/`` is git-ignored), but the
ONNX files hold every weight. Their exports folded each batch norm into the convolution before it
(W' = gamma / sigma x W, b' = beta - gamma x mu / sigma), so a fine-tune needs the batch norms
back. They are rebuilt from data: on a calibration batch the folded convolution's output W'x has
per-channel mean m and variance v; a batch norm with running mean m, running variance v, weight
sqrt(v + eps) and bias m + b' then computes exactly W'x + b' in eval mode, and, in training mode,
normalises by the batch's own statistics to the same scale the layer had when it was trained. So
the rebuilt model gives the ONNX model's outputs (checked by :func:`max_difference`) and trains
like the original did, with working batch norms.

Used by ``guandan train real`` (vision/train/real.py) for both models.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def onnx_weights(path: Path) -> dict[str, np.ndarray]:
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    return {i.name: numpy_helper.to_array(i).copy() for i in model.graph.initializer}


def _conv_bn_pairs(model: Any) -> list[tuple[Any, Any]]:
    """(conv, batch norm) pairs in forward order: each Conv2d directly followed by a
    BatchNorm2d in the same Sequential, or an ultralytics ``Conv`` block's ``conv`` and ``bn``."""
    import torch.nn as nn

    pairs = []
    for module in model.modules():
        if isinstance(getattr(module, "conv", None), nn.Conv2d) and isinstance(
            getattr(module, "bn", None), nn.BatchNorm2d
        ):
            pairs.append((module.conv, module.bn))
        if isinstance(module, nn.Sequential):
            kids = list(module)
            for a, b in zip(kids, kids[1:], strict=False):
                if isinstance(a, nn.Conv2d) and isinstance(b, nn.BatchNorm2d):
                    pairs.append((a, b))
    return pairs


def _unfold(model: Any, folded: list[tuple[Any, Any, np.ndarray, np.ndarray]], batch: Any) -> None:
    """Give each (conv, bn) its folded weight W' and bias b', then batch-norm statistics from
    ``batch`` (the module docstring)."""
    import torch

    stats: dict[int, tuple[Any, Any]] = {}
    hooks = []
    with torch.no_grad():
        for conv, bn, w, b in folded:
            conv.weight.copy_(torch.from_numpy(w))
            bn.weight.fill_(1.0)
            bn.bias.copy_(torch.from_numpy(b))
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)

            def hook(mod: Any, inp: Any, out: Any, key: int = id(conv)) -> None:
                stats[key] = (out.mean((0, 2, 3)), out.var((0, 2, 3), unbiased=False))

            hooks.append(conv.register_forward_hook(hook))
        model.eval()
        model(batch)
        for h in hooks:
            h.remove()
        for conv, bn, _, b in folded:
            m, v = stats[id(conv)]
            v = v.clamp_min(1e-6)
            bn.running_mean.copy_(m)
            bn.running_var.copy_(v)
            bn.weight.copy_(torch.sqrt(v + bn.eps))
            bn.bias.copy_(m + torch.from_numpy(b))


def classifier_from_onnx(path: Path, batch: Any) -> Any:
    """The card classifier (vision/train/classifier.py ``build_model``) with the weights of the
    ONNX file at ``path``; ``batch``: N x 3 x 48 x 48 float crops for the batch-norm statistics."""
    import torch

    from vision.train.classifier import build_model

    init = onnx_weights(path)
    model = build_model()
    convs = [
        v for k, v in init.items() if not k.startswith("inner.") and v.ndim == 4
    ]  # folded conv weights, in graph order
    biases = [v for k, v in init.items() if not k.startswith("inner.") and v.ndim == 1]
    pairs = _conv_bn_pairs(model.features)
    if len(pairs) != len(convs) or len(biases) != len(convs):
        raise ValueError(
            f"{path}: {len(convs)} folded convolutions, the classifier has {len(pairs)}: "
            "not this architecture"
        )
    for (conv, _), w in zip(pairs, convs, strict=True):
        if tuple(conv.weight.shape) != w.shape:
            raise ValueError(f"{path}: weight {w.shape} for a conv of {tuple(conv.weight.shape)}")
    with torch.no_grad():
        for head in ("rank", "suit"):
            getattr(model, head).weight.copy_(torch.from_numpy(init[f"inner.{head}.weight"]))
            getattr(model, head).bias.copy_(torch.from_numpy(init[f"inner.{head}.bias"]))
    _unfold(
        model, [(c, bn, w, b) for (c, bn), w, b in zip(pairs, convs, biases, strict=True)], batch
    )
    return model


def detector_from_onnx(path: Path, batch: Any, arch: str = "yolo11n.yaml") -> Any:
    """An ultralytics DetectionModel (one class) with the weights of the exported detector at
    ``path``; ``batch``: N x 3 x H x W float images in 0..1 (RGB) for the batch-norm statistics."""
    import torch
    from ultralytics.nn.tasks import DetectionModel

    init = onnx_weights(path)
    model = DetectionModel(arch, nc=1, verbose=False)
    folded = []
    used: set[str] = set()
    for name, module in model.named_modules():
        conv, bn = getattr(module, "conv", None), getattr(module, "bn", None)
        if isinstance(conv, torch.nn.Conv2d) and isinstance(bn, torch.nn.BatchNorm2d):
            w, b = init[f"{name}.conv.weight"], init[f"{name}.conv.bias"]
            if tuple(conv.weight.shape) != w.shape:
                raise ValueError(f"{path}: {name}: weight {w.shape}, model {conv.weight.shape}")
            folded.append((conv, bn, w, b))
            used |= {f"{name}.conv.weight", f"{name}.conv.bias"}
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name in init and name not in used:  # the head's plain convolutions
                p.copy_(torch.from_numpy(init[name]))
                used.add(name)
    left = [k for k in init if k.startswith("model.") and k not in used and "dfl" not in k]
    if left:
        raise ValueError(f"{path}: weights with no place in {arch}: {left[:5]}")
    _unfold(model, folded, batch)
    return model
