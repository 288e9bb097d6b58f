"""Warm start from the ONNX files (vision/train/warmstart.py): the rebuilt torch models give the
shipped files' outputs, with working batch norms; needs the train extra."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs the train extra")
pytest.importorskip("ultralytics", reason="needs the train extra")

MODELS = Path(__file__).resolve().parents[2] / "models"


def _onnx(path: Path, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    out: np.ndarray = sess.run(None, {sess.get_inputs()[0].name: x})[0]
    return out


def test_classifier_from_onnx_reads_as_the_shipped_file() -> None:
    from vision.train.warmstart import classifier_from_onnx

    rng = np.random.default_rng(0)
    x = rng.random((24, 3, 48, 48), dtype=np.float32)
    model = classifier_from_onnx(MODELS / "card-classes.onnx", torch.from_numpy(x[:16]))
    model.eval()
    with torch.no_grad():
        got = torch.exp(model(torch.from_numpy(x))).numpy()
    assert np.abs(got - _onnx(MODELS / "card-classes.onnx", x)).max() < 1e-4
    # batch norms are real again: their statistics came from the batch, not identity
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    assert len(bns) == 7 and all(float(b.running_var.mean()) != 1.0 for b in bns)
    # and a training step moves it (nothing frozen)
    model.train()
    before = [p.detach().clone() for p in model.parameters()]
    loss = -model(torch.from_numpy(x))[:, 0].mean()
    loss.backward()
    torch.optim.SGD(model.parameters(), lr=0.1).step()
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


def test_detector_from_onnx_reads_as_the_shipped_file() -> None:
    from vision.train.warmstart import detector_from_onnx

    rng = np.random.default_rng(1)
    x = rng.random((4, 3, 128, 128), dtype=np.float32)
    model = detector_from_onnx(MODELS / "card-corners.onnx", torch.from_numpy(x))
    model.eval()
    with torch.no_grad():
        got = model(torch.from_numpy(x[:2]))
    got = (got[0] if isinstance(got, (tuple, list)) else got).numpy()
    want = _onnx(MODELS / "card-corners.onnx", x[:2])
    assert got.shape == want.shape
    assert np.abs(got[:, 4] - want[:, 4]).max() < 1e-3  # corner scores
    assert np.abs(got[:, :4] - want[:, :4]).max() < 0.05  # boxes, in pixels


def test_a_file_of_another_architecture_is_refused(tmp_path: Path) -> None:
    from vision.train.warmstart import classifier_from_onnx

    with pytest.raises(ValueError, match="not this architecture"):
        classifier_from_onnx(MODELS / "card-corners.onnx", torch.zeros(2, 3, 48, 48))
