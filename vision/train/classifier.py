"""Card classifier on corner crops (55 classes: the 54 cards + "not an index"), plain torch.

Trained on crops cut from the synthetic scenes (``crops_train.npz``), with random quarter turns
and small photometric changes; checkpoints every epoch (``last.pt``), so a rerun continues.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from vision.crops import classifier_input
from vision.synth.decks import CARD_NAMES
from vision.train.config import TrainConfig

CLASS_NAMES = (*CARD_NAMES, "none")


#: Factorised heads: rank (13 ranks, "joker", "none") x suit (S H C D). A joker's suit head reads
#: its colour: black (S/C) -> SB, red (H/D) -> HR, as in CONTRACT notation (SB, HR).
RANK_HEAD = (*"23456789TJQKA", "joker", "none")
SUIT_HEAD = tuple("SHCD")


def _targets(y: Any) -> tuple[Any, Any]:
    """55-class labels -> (rank, suit) head labels."""
    import torch

    rank = torch.where(y < 52, y % 13, torch.where(y < 54, 13, 14))
    suit = torch.where(y < 52, y // 13, torch.where(y == 52, 0, 1))  # SB black, HR red
    suit = torch.where(y == 54, -100, suit)  # "none" has no suit: ignored by the suit loss
    return rank, suit


def build_model(n_classes: int = len(CLASS_NAMES)) -> Any:
    """CNN on 3 x 48 x 48 crops (0.54 M parameters); forward gives log-probabilities of the 55
    classes. Full 48 px input: the index glyphs of a 50 px card are only a few pixels tall."""
    import torch
    import torch.nn as nn

    def block(cin: int, cout: int, stride: int = 1) -> list[nn.Module]:
        return [
            nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(True),
        ]

    class CardNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(
                *block(3, 24),
                *block(24, 32, 2),  # 24
                *block(32, 64),
                nn.MaxPool2d(2),  # 12
                *block(64, 96),
                *block(96, 96),
                nn.MaxPool2d(2),  # 6
                *block(96, 160),
                *block(160, 160),
                nn.AdaptiveAvgPool2d(1),
                nn.Flatten(),
                nn.Dropout(0.1),
            )
            self.rank = nn.Linear(160, len(RANK_HEAD))
            self.suit = nn.Linear(160, len(SUIT_HEAD))

        def heads(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            f = self.features(x)
            return self.rank(f), self.suit(f)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.from_features(self.features(x))

        def from_features(self, f: torch.Tensor) -> torch.Tensor:
            """Log-probabilities of the 55 classes from the 160-d embedding (``features``)."""
            r, s = self.rank(f), self.suit(f)
            lr, ls = torch.log_softmax(r, 1), torch.log_softmax(s, 1)
            # suit-major, like CARD_NAMES
            cards = (ls[:, :, None] + lr[:, None, :13]).reshape(-1, 52)
            black = torch.logsumexp(ls[:, [0, 2]], 1, keepdim=True)
            red = torch.logsumexp(ls[:, [1, 3]], 1, keepdim=True)
            sb = lr[:, 13:14] + black
            hr = lr[:, 13:14] + red
            return torch.cat([cards, sb, hr, lr[:, 14:15]], 1)

    assert n_classes == len(CLASS_NAMES)
    return CardNet()


def _augment(xf: Any, gen: Any, scale: float = 0.1, aspect: float = 0.0) -> Any:
    """Any rotation, +-``scale`` size (10 %), a small shift (the detector's box is never
    exact), brightness, contrast and colour gains on a float NCHW batch in [0, 1]. With
    ``aspect`` > 0 the crop is also stretched along a random direction by up to that share
    (a photo's index seen at a slant, or an image stretched to a square as the real-photo
    exports are); 0 leaves the draws, and so older runs, exactly as they were."""
    import math

    import torch
    import torch.nn.functional as F

    n = xf.shape[0]
    ang = torch.rand(n, generator=gen) * 2 * math.pi
    sc = 1 + scale * (torch.rand(n, generator=gen) * 2 - 1)
    sh = 0.06 * (torch.rand(n, 2, generator=gen) * 2 - 1)
    cos, sin = torch.cos(ang) * sc, torch.sin(ang) * sc
    theta = torch.stack(
        [torch.stack([cos, -sin, sh[:, 0]], 1), torch.stack([sin, cos, sh[:, 1]], 1)], 1
    )
    if aspect > 0:
        # stretch by s along direction phi: R(phi) diag(s, 1) R(-phi), applied after the turn
        phi = torch.rand(n, generator=gen) * math.pi
        s = 1 + aspect * (torch.rand(n, generator=gen) * 2 - 1)
        c, si = torch.cos(phi), torch.sin(phi)
        a = c * c * s + si * si
        b = c * si * (s - 1)
        d = si * si * s + c * c
        stretch = torch.stack([torch.stack([a, b], 1), torch.stack([b, d], 1)], 1)
        theta = torch.cat([stretch @ theta[:, :, :2], theta[:, :, 2:]], 2)
    grid = F.affine_grid(theta, list(xf.shape), align_corners=False)
    # outside the crop: the runtime's grey padding
    xf = F.grid_sample(xf - 114 / 255, grid, align_corners=False, padding_mode="zeros") + 114 / 255
    gain = 1 + 0.3 * (torch.rand(n, 1, 1, 1, generator=gen) * 2 - 1)
    chan = 1 + 0.08 * (torch.rand(n, 3, 1, 1, generator=gen) * 2 - 1)
    bias = 0.1 * (torch.rand(n, 1, 1, 1, generator=gen) * 2 - 1)
    mean = xf.mean((1, 2, 3), keepdim=True)
    return ((xf - mean) * gain * chan + mean + bias).clamp(0, 1)


def _lr_at(progress: float, max_lr: float, warmup: float = 0.05) -> float:
    """Warm-up then cosine decay over the run's progress (0..1, by time or by steps)."""
    import math

    if progress < warmup:
        return max_lr * (0.1 + 0.9 * progress / warmup)
    p = min(1.0, (progress - warmup) / (1 - warmup))
    return max_lr * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * p)))


def evaluate(model: Any, x: np.ndarray, y: np.ndarray, batch: int = 512) -> float:
    import torch

    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            xb = torch.from_numpy(classifier_input(x[i : i + batch]))
            correct += int((model(xb).argmax(1).numpy() == y[i : i + batch]).sum())
    return correct / max(1, len(x))


def train_classifier(cfg: TrainConfig, log: Any = print) -> Path:
    """Train (or continue) the classifier. The run is budgeted in wall-clock ``time_hours``
    (the learning-rate schedule follows the fraction of the budget used; the CPU this runs on
    sets the number of steps) or, without it, ``epochs`` x ``samples_per_epoch``. A checkpoint
    after every epoch holds the time used, so a rerun continues where it stopped."""
    import torch
    import torch.nn.functional as F

    c = cfg.section("classifier")
    torch.set_num_threads(int(c.get("threads", 2)))
    run_dir = cfg.path("classifier", "run_dir")
    run_dir.mkdir(parents=True, exist_ok=True)
    scenes = cfg.path("data", "scenes")
    tr = np.load(scenes / "crops_train.npz")
    va = np.load(scenes / "crops_val.npz")
    xs, ys = [tr["x"]], [tr["y"]]
    # corner mini-scenes (vision.synth.corners) of the training decks and of the randomised
    # drawn decks (vision.synth.randdecks) and of the KDE decks (vision.synth.decks), when the
    # config asks for them (files of another recipe's data step may lie there too)
    data = cfg.section("data")
    extras = ["corners_train.npz"]
    extras += ["corners_random.npz"] if int(data.get("n_corners_random", 0)) else []
    extras += ["corners_kde.npz"] if int(data.get("n_corners_kde", 0)) else []
    for extra in (scenes / e for e in extras):
        if extra.exists():
            with np.load(extra) as more:
                xs.append(more["x"])
                ys.append(more["y"])
    xtr, ytr = np.concatenate(xs), np.concatenate(ys).astype(np.int64)
    log(f"classifier: {len(xtr)} training crops, {len(va['x'])} held-out-deck crops")
    xva, yva = va["x"], va["y"].astype(np.int64)
    per_epoch = min(len(xtr), int(c.get("samples_per_epoch", len(xtr))))
    epochs, bs, max_lr = int(c.get("epochs", 8)), int(c.get("batch", 64)), float(c.get("lr", 0.003))
    budget_s = float(c.get("time_hours", 0)) * 3600
    seed = int(c.get("seed", 0))
    torch.manual_seed(seed)
    model = build_model()
    opt = torch.optim.AdamW(model.parameters(), lr=max_lr, weight_decay=5e-4)
    steps_per_epoch = (per_epoch + bs - 1) // bs
    last, best = run_dir / "last.pt", run_dir / "best.pt"
    start, best_acc, used_s = 0, -1.0, 0.0
    if last.exists():
        ck = torch.load(last, map_location="cpu", weights_only=False)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        start, best_acc = int(ck["epoch"]) + 1, float(ck["best_acc"])
        used_s = float(ck.get("used_s", 0.0))
        log(f"classifier: resuming after epoch {start} (best val acc {best_acc:.4f})")

    def progress(epoch: int, step: int, now_s: float) -> float:
        if budget_s > 0:
            return now_s / budget_s
        return (epoch * steps_per_epoch + step) / max(1, epochs * steps_per_epoch)

    gen = torch.Generator().manual_seed(seed)
    epoch = start
    while (budget_s > 0 and used_s < budget_s) or (budget_s <= 0 and epoch < epochs):
        t0 = time.time()
        model.train()
        gen.manual_seed(seed * 1000 + epoch)
        perm = torch.randperm(len(xtr), generator=gen).numpy()[:per_epoch]
        total, loss_sum = 0, 0.0
        for k, i in enumerate(range(0, len(perm), bs)):
            p = progress(epoch, k, used_s + time.time() - t0)
            if budget_s > 0 and p >= 1.0:
                break
            for group in opt.param_groups:
                group["lr"] = _lr_at(p, max_lr)
            idx = np.sort(perm[i : i + bs])
            xb = _augment(torch.from_numpy(classifier_input(xtr[idx])), gen)
            yb = torch.from_numpy(ytr[idx])
            r_logits, s_logits = model.heads(xb)
            r_t, s_t = _targets(yb)
            loss = F.cross_entropy(r_logits, r_t, label_smoothing=0.05) + 0.5 * F.cross_entropy(
                s_logits, s_t, label_smoothing=0.05
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_sum += loss.item() * len(idx)
            total += len(idx)
        used_s += time.time() - t0
        acc = evaluate(model, xva, yva)
        log(
            f"classifier: epoch {epoch + 1} ({total} crops) loss {loss_sum / max(1, total):.4f} "
            f"val acc (held-out decks) {acc:.4f} ({time.time() - t0:.0f} s, "
            f"{used_s / 60:.1f} min used)"
        )
        if acc > best_acc:
            best_acc = acc
            torch.save({"model": model.state_dict(), "epoch": epoch, "val_acc": acc}, best)
        torch.save(
            {
                "model": model.state_dict(),
                "opt": opt.state_dict(),
                "epoch": epoch,
                "best_acc": best_acc,
                "used_s": used_s,
            },
            last,
        )
        epoch += 1
    return best
