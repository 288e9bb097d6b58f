"""The training config: a second round names only what it changes (``extends``), and the
classifier's augmentation stretches crops only when asked."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.train.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[2]


def test_the_photo_second_round_extends_the_shipped_config() -> None:
    cfg = load_config(ROOT / "models" / "train-photo2.toml", ROOT)
    base = load_config(ROOT / "models" / "train.toml", ROOT)
    real = cfg.section("real")
    assert real["base_classifier"] == "models/photo/card-classes.onnx"
    assert real["classifier"]["aug_aspect"] == 0.25
    # everything not named is the base config's, tables merged key by key
    assert real["classifier"]["batch"] == base.section("real")["classifier"]["batch"]
    assert real["export_dir"] == base.section("real")["export_dir"]
    assert cfg.section("data") == base.section("data")
    assert real["gpu"] == base.section("real")["gpu"]


def test_extends_errors_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('extends = "b.toml"\n')
    (tmp_path / "b.toml").write_text('extends = "a.toml"\n')
    with pytest.raises(ConfigError, match="loop"):
        load_config(tmp_path / "a.toml")
    (tmp_path / "c.toml").write_text('extends = "missing.toml"\n')
    with pytest.raises(ConfigError, match=r"missing\.toml: no such training config \(extended by"):
        load_config(tmp_path / "c.toml")
    (tmp_path / "d.toml").write_text("extends = 3\n")
    with pytest.raises(ConfigError, match="path of another config"):
        load_config(tmp_path / "d.toml")


def test_augment_stretches_only_when_asked() -> None:
    torch = pytest.importorskip("torch")
    from vision.train.classifier import _augment

    yy, xx = np.mgrid[:48, :48]
    disk = torch.from_numpy(((yy - 23.5) ** 2 + (xx - 23.5) ** 2 < 81).astype(np.float32))
    x = disk.expand(64, 3, 48, 48).clone()  # a disk: turns and sizes keep it round
    a = _augment(x.clone(), torch.Generator().manual_seed(3))
    b = _augment(x.clone(), torch.Generator().manual_seed(3), 0.1, 0.0)
    assert torch.equal(a, b)  # the defaults are the old draws
    c = _augment(x.clone(), torch.Generator().manual_seed(3), 0.1, 0.4)
    assert not torch.allclose(a, c)

    # rotation and size keep the disk round; a stretch makes it an ellipse
    def ratios(t: object) -> np.ndarray:
        out = []
        for img in np.asarray(t).mean(1):  # type: ignore[call-overload]
            ys, xs = np.nonzero(img > (img.min() + img.max()) / 2)
            ev = np.linalg.eigvalsh(np.cov(np.stack([xs, ys]).astype(float)))
            out.append(np.sqrt(ev[1] / ev[0]))
        return np.asarray(out)

    plain = ratios(_augment(x.clone(), torch.Generator().manual_seed(4)))
    assert np.median(ratios(a)) < 1.05 and np.median(plain) < 1.05
    assert np.median(ratios(c)) > 1.1


def test_dark_deck_and_speckles_only_on_their_share() -> None:
    torch = pytest.importorskip("torch")
    from vision.train.real import _darken, _speckle

    x = torch.full((32, 3, 48, 48), 0.9)  # white paper (BGR)
    x[:, :, 10:20, 10:20] = 0.05  # black ink
    x[:, 0:2, 30:40, 30:40] = 0.1  # red ink: blue and green low
    x[:, 2, 30:40, 30:40] = 0.85
    assert torch.equal(_darken(x, torch.Generator().manual_seed(0), 0.0), x)
    d = _darken(x, torch.Generator().manual_seed(0), 1.0)
    paper, black, red = d[:, :, 2, 2], d[:, :, 15, 15], d[:, :, 35, 35]
    assert (paper.mean(1) < 0.2).all()  # the paper goes dark
    assert (black.mean(1) > 0.6).all()  # black ink silver
    # red ink gold: red over green over blue, and light
    assert (red[:, 2] > red[:, 1]).all() and (red[:, 1] > red[:, 0]).all()
    assert (red.mean(1) > 0.4).all()
    half = _darken(x, torch.Generator().manual_seed(0), 0.5)
    changed = (half - x).abs().flatten(1).max(1).values > 0.1
    assert 5 < int(changed.sum()) < 27
    s = _speckle(x, torch.Generator().manual_seed(0), 1.0)
    hits = ((s - x).abs() > 0.05).any(1).float().mean((1, 2))
    assert float(hits.max()) <= 0.03 and float(hits.mean()) > 0.002
    assert torch.equal(_speckle(x, torch.Generator().manual_seed(0), 0.0), x)


def test_grey_copies_only_on_their_share() -> None:
    torch = pytest.importorskip("torch")
    from vision.train.real import _grey

    x = torch.full((64, 3, 48, 48), 0.9)
    x[:, 0:2, 30:40, 30:40] = 0.1  # red ink (BGR)
    x[:, 2, 30:40, 30:40] = 0.85
    assert torch.equal(_grey(x, torch.Generator().manual_seed(0), 0.0), x)
    g = _grey(x, torch.Generator().manual_seed(0), 1.0)
    assert torch.allclose(g[:, 0], g[:, 1]) and torch.allclose(g[:, 1], g[:, 2])
    red = g[:, :, 35, 35]  # the red ink's luminance: 0.114 * 0.1 + 0.587 * 0.1 + 0.299 * 0.85
    assert torch.allclose(red, torch.full_like(red, 0.114 * 0.1 + 0.587 * 0.1 + 0.299 * 0.85))
    half = _grey(x, torch.Generator().manual_seed(0), 0.5)
    changed = (half - x).abs().flatten(1).max(1).values > 0.1
    assert 16 < int(changed.sum()) < 48


def test_the_third_round_exports_only_its_classifier(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """train-photo3.toml trains and exports the classifier alone (``[real] export_models``);
    a missing checkpoint names the step to run, a bad list is named."""
    pytest.importorskip("torch")
    from kiosk.cli import main

    cfg = load_config(ROOT / "models" / "train-photo3.toml", ROOT)
    assert cfg.section("real")["export_models"] == ["classifier"]
    assert cfg.section("real")["classifier"]["suit_weight"] == 1.0
    assert cfg.section("real")["classifier"]["dark_share"] == 0.25  # the second round's
    (tmp_path / "r.toml").write_text(
        f'extends = "{ROOT / "models" / "train-photo3.toml"}"\n'
        '[real]\nexport_dir = "out"\n[real.classifier]\nrun_dir = "nothing-here"\n'
    )
    args = ["train", "real-export", "--config", str(tmp_path / "r.toml"), "--root", str(tmp_path)]
    assert main(args) == 1  # a missing file
    err = capsys.readouterr().err
    assert "nothing-here/best.pt missing: run guandan train real-classifier" in err
    assert "real-detector" not in err  # the detector is not this round's
    (tmp_path / "s.toml").write_text(
        f'extends = "{ROOT / "models" / "train-photo3.toml"}"\n[real]\nexport_models = ["yolo"]\n'
    )
    args[3] = str(tmp_path / "s.toml")
    assert main(args) == 2
    assert "export_models" in capsys.readouterr().err
