"""How likely a photo detection is to be named right, from its own evidence (issue 40).

A detection's plain score is corner score x the classifier's probability of its card, and one
floor on it (with a corner floor of 0.3 before it) decides what `vision detect` reports. On
real photographs that ranks the readings poorly: the corner score says little about whether
the *name* is right, so a floor on the product drops corners named right that the corner stage
scored low, and a corner floor of 0.3 drops them before they are named. So the photo settings
carry a small logistic model, fitted on the real **train** split's detections that fall inside
a labelled box (right name = 1, wrong name = 0):

    score = sigmoid(w . [ln corner score, ln class probability] + b)

It is the probability that the reading is right; the fit weighs the class probability about
seven times as much as the corner score, and the corner stage looks lower (``conf``) without
reporting more wrong names. The index's size in pixels was tried as a third feature
(2026-12-05): no better on real valid, and with it the synthetic held-out scenes (416 px,
small indices) read 0.68 per-image recall against 0.80 before, so it is left out.

The model file (models/photo/score.json) holds the weights, the floors chosen on the
**valid** split for a precision target, and how it was fitted; ``guandan train
real-score`` makes it (vision/train/score.py). The table pipeline does not use it: its tracker
weighs every corner itself.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: the features, in order (names as the model file stores them)
FEATURES = ("ln_corner", "ln_prob")


class ScoreModelError(ValueError):
    """A score model file that is missing, unreadable or not a score model."""


def features(corner: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """N x 2 features of N detections (corner score, class probability)."""
    c = np.log(np.clip(np.asarray(corner, np.float64), 1e-6, 1.0))
    p = np.log(np.clip(np.asarray(prob, np.float64), 1e-9, 1.0))
    return np.stack([c, p], axis=1)


@dataclass(frozen=True)
class ScoreModel:
    """A logistic model of "this reading is right" and the floors chosen with it."""

    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    #: the corner stage's floor to read with (the fit saw corners from this score up)
    conf: float
    #: the floor on this model's score: a detection is reported from here up
    min_score: float
    #: how it was fitted and chosen (data, counts, figures, date): for the model card
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(FEATURES)
        if not (len(self.weights) == len(self.mean) == len(self.scale) == n):
            raise ScoreModelError(f"a score model has {n} weights, means and scales ({FEATURES})")
        if not all(math.isfinite(v) for v in (*self.weights, *self.mean, *self.scale, self.bias)):
            raise ScoreModelError("a score model's numbers must be finite")
        if any(s <= 0 for s in self.scale):
            raise ScoreModelError("a score model's scales must be positive")
        if not (0.0 <= self.conf <= 1.0 and 0.0 <= self.min_score <= 1.0):
            raise ScoreModelError(
                f"a score model's floors conf {self.conf} and min_score {self.min_score} must "
                "lie between 0 and 1"
            )

    def score(self, corner: np.ndarray, prob: np.ndarray) -> np.ndarray:
        """The probability that each reading is right."""
        z = (features(corner, prob) - np.asarray(self.mean)) / np.asarray(self.scale)
        logit = z @ np.asarray(self.weights) + self.bias
        return np.asarray(1.0 / (1.0 + np.exp(-np.clip(logit, -50, 50))))

    def save(self, path: str | Path) -> None:
        row = asdict(self)
        row["features"] = list(FEATURES)
        Path(path).write_text(json.dumps(row, indent=1, ensure_ascii=False) + "\n", "utf-8")

    @classmethod
    def load(cls, path: str | Path) -> ScoreModel:
        p = Path(path)
        try:
            row = json.loads(p.read_text("utf-8"))
        except FileNotFoundError:
            raise ScoreModelError(f"{p}: no such score model file") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ScoreModelError(f"{p}: not a readable score model ({exc})") from None
        if not isinstance(row, dict) or row.get("features") != list(FEATURES):
            raise ScoreModelError(
                f"{p}: not a score model of features {list(FEATURES)} (make one with "
                "`guandan train real-score`)"
            )
        try:
            return cls(
                weights=tuple(float(v) for v in row["weights"]),
                bias=float(row["bias"]),
                mean=tuple(float(v) for v in row["mean"]),
                scale=tuple(float(v) for v in row["scale"]),
                conf=float(row["conf"]),
                min_score=float(row["min_score"]),
                info=dict(row.get("info", {})),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ScoreModelError(f"{p}: a score model field is missing or wrong ({exc})") from None


def fit(
    x: np.ndarray, right: np.ndarray, l2: float = 0.01, steps: int = 3000, lr: float = 0.5
) -> tuple[tuple[float, ...], float, tuple[float, ...], tuple[float, ...]]:
    """Logistic regression by gradient descent on standardised features (numpy; a few thousand
    rows): weights, bias, means, scales."""
    x = np.asarray(x, np.float64)
    y = np.asarray(right, np.float64)
    if len(x) < 20 or y.min() == y.max():
        raise ScoreModelError(
            f"{len(x)} detections, {int(y.sum())} right: too few, or all one kind, to fit a "
            "score model (does the split have labelled boxes the detector finds?)"
        )
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(z @ w)))
        grad = z.T @ (p - y) / len(y) + l2 * np.r_[w[:-1], 0.0]
        w -= lr * grad
    return (
        tuple(float(v) for v in w[:-1]),
        float(w[-1]),
        tuple(float(v) for v in mean),
        tuple(float(v) for v in scale),
    )
