"""The photo detector's score model (vision/scoremodel.py): the reported score is a fitted
probability that the reading is right, with the floors chosen with it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from kiosk.cli import main
from vision.detector import (
    PHOTO_MODEL,
    PHOTO_SCORE_MODEL,
    Detector,
    photo_detector,
    photo_score_model,
    read_image,
)
from vision.scoremodel import FEATURES, ScoreModel, ScoreModelError, features, fit

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = sorted((ROOT / "datasets" / "samples").glob("*.jpg"))[0]


def _product_model(**kw: float) -> ScoreModel:
    """sigmoid(ln corner + ln prob) = x / (1 + x) with x = corner x prob: a model whose score
    is known exactly from the plain one."""
    return ScoreModel((1.0, 1.0), 0.0, (0.0, 0.0), (1.0, 1.0), **kw)


def test_the_detector_reports_the_models_probability_and_floors_on_it() -> None:
    image = read_image(SAMPLE)
    plain = Detector(min_score=0.0).detect(image)
    assert plain
    modelled = Detector(min_score=0.0, score_model=_product_model(conf=0.3, min_score=0)).detect(
        image
    )
    assert [(d.card, d.box) for d in modelled] == [(d.card, d.box) for d in plain]
    for a, b in zip(modelled, plain, strict=True):
        assert a.score == pytest.approx(b.score / (1 + b.score), abs=1e-6)
    floor = 0.4  # x / (1 + x) >= 0.4 <=> x >= 2/3
    kept = Detector(min_score=floor, score_model=_product_model(conf=0.3, min_score=0)).detect(
        image
    )
    assert {d.box for d in kept} == {d.box for d in plain if d.score >= 2 / 3 - 1e-6}
    assert len(kept) < len(plain)


def test_fit_learns_which_evidence_tells_a_right_name() -> None:
    """Rows where only the class probability tells right from wrong (as on real photos, where
    the corner score says little about the name): the fit weighs it and not the other."""
    rng = np.random.default_rng(4)
    n = 2000
    corner, prob = rng.uniform(0.15, 1, n), rng.uniform(0.2, 1, n)
    right = rng.uniform(0, 1, n) < 1 / (1 + np.exp(-(np.log(prob) - np.log(0.5)) * 6))
    w, b, mean, scale = fit(features(corner, prob), right)
    assert w[FEATURES.index("ln_prob")] > 1.0 and abs(w[FEATURES.index("ln_corner")]) < 0.3
    m = ScoreModel(w, b, mean, scale, conf=0.1, min_score=0.5)
    unsure, sure = m.score(np.array([0.9, 0.2]), np.array([0.3, 0.95]))
    assert unsure < 0.3 < 0.8 < sure


def test_fit_refuses_rows_it_cannot_learn_from() -> None:
    x = features(np.ones(30), np.ones(30))
    with pytest.raises(ScoreModelError, match="all one kind"):
        fit(x, np.ones(30))
    with pytest.raises(ScoreModelError, match="too few"):
        fit(x[:5], np.array([1, 0, 1, 0, 1]))


def test_a_model_file_round_trips_and_bad_files_say_what_is_wrong(tmp_path: Path) -> None:
    m = _product_model(conf=0.15, min_score=0.8)
    path = tmp_path / "score.json"
    m.save(path)
    assert ScoreModel.load(path) == m
    with pytest.raises(ScoreModelError, match="no such score model file"):
        ScoreModel.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json", "utf-8")
    with pytest.raises(ScoreModelError, match="not a readable score model"):
        ScoreModel.load(tmp_path / "bad.json")
    row = json.loads(path.read_text("utf-8"))
    (tmp_path / "other.json").write_text(json.dumps(dict(row, features=["a"])), "utf-8")
    with pytest.raises(ScoreModelError, match="guandan train real-score"):
        ScoreModel.load(tmp_path / "other.json")
    (tmp_path / "floor.json").write_text(json.dumps(dict(row, min_score=3)), "utf-8")
    with pytest.raises(ScoreModelError, match="between 0 and 1"):
        ScoreModel.load(tmp_path / "floor.json")
    with pytest.raises(ScoreModelError, match="finite"):
        ScoreModel((math.nan, 1.0), 0.0, (0.0,) * 2, (1.0,) * 2, conf=0.1, min_score=0.5)


@pytest.mark.skipif(not PHOTO_SCORE_MODEL.exists(), reason="no shipped score model")
def test_the_photo_pair_reads_with_its_score_model_and_its_floors() -> None:
    shipped = ScoreModel.load(PHOTO_SCORE_MODEL)
    det = photo_detector()
    assert det.score_model == shipped
    assert (det.conf, det.min_score) == (shipped.conf, shipped.min_score)
    assert shipped.info["floor_chosen_on"] == "real-cardcounter valid"
    # another pair was not what it was fitted on; an explicit choice wins
    assert photo_score_model(ROOT / "models" / "card-corners.onnx") is None
    assert photo_score_model(PHOTO_MODEL) == shipped
    assert photo_detector(score_model=None).score_model is None


def test_detect_cli_score_model_none_and_a_bad_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["vision", "detect", str(SAMPLE), "--min-score", "0", "--conf", "0.3"]
    assert main([*base, "--score-model", "none"]) == 0
    plain = json.loads(capsys.readouterr().out.splitlines()[0])["cards"]
    path = tmp_path / "score.json"
    _product_model(conf=0.3, min_score=0).save(path)
    assert main([*base, "--score-model", str(path)]) == 0
    modelled = json.loads(capsys.readouterr().out.splitlines()[0])["cards"]
    assert [c["card"] for c in modelled] == [c["card"] for c in plain]
    assert all(m["score"] < p["score"] for m, p in zip(modelled, plain, strict=True))
    (tmp_path / "broken.json").write_text("[]", "utf-8")
    assert main([*base, "--score-model", str(tmp_path / "broken.json")]) == 2
    assert "--score-model" in capsys.readouterr().err
