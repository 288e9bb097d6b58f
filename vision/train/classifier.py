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
    """Small CNN on 3 x 40 x 40 crops; forward gives log-probabilities of the 55 classes."""
    import torch
    import torch.nn as nn

    def block(cin: int, cout: int) -> list[nn.Module]:
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True)]

    class CardNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(
                *block(3, 24),
                nn.MaxPool2d(2),  # 20
                *block(24, 48),
                *block(48, 48),
                nn.MaxPool2d(2),  # 10
                *block(48, 96),
                nn.MaxPool2d(2),  # 5
                *block(96, 128),
                nn.AdaptiveAvgPool2d(1),
                nn.Flatten(),
                nn.Dropout(0.1),
            )
            self.rank = nn.Linear(128, len(RANK_HEAD))
            self.suit = nn.Linear(128, len(SUIT_HEAD))

        def heads(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            f = self.features(x)
            return self.rank(f), self.suit(f)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            r, s = self.heads(x)
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


def _augment(xf: Any, gen: Any) -> Any:
    """Random quarter turns, brightness and colour gains on a float NCHW batch in [0, 1]."""
    import torch

    k = int(torch.randint(0, 4, (1,), generator=gen))
    xf = torch.rot90(xf, k, (2, 3))
    n = xf.shape[0]
    gain = 1 + 0.25 * (torch.rand(n, 1, 1, 1, generator=gen) - 0.5) * 2
    chan = 1 + 0.08 * (torch.rand(n, 3, 1, 1, generator=gen) - 0.5) * 2
    bias = 0.1 * (torch.rand(n, 1, 1, 1, generator=gen) - 0.5) * 2
    return (xf * gain * chan + bias).clamp(0, 1)


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
    extra = scenes / "corners_train.npz"  # corner mini-scenes (vision.synth.corners), if made
    if extra.exists():
        with np.load(extra) as more:
            xs.append(more["x"])
            ys.append(more["y"])
    xtr, ytr = classifier_input(np.concatenate(xs)), np.concatenate(ys).astype(np.int64)
    log(f"classifier: {len(xtr)} training crops, {len(va['x'])} held-out-deck crops")
    xva, yva = va["x"], va["y"].astype(np.int64)
    per_epoch = min(len(xtr), int(c.get("samples_per_epoch", len(xtr))))
    epochs, bs, lr = int(c.get("epochs", 8)), int(c.get("batch", 256)), float(c.get("lr", 0.004))
    seed = int(c.get("seed", 0))
    torch.manual_seed(seed)
    model = build_model()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    steps = epochs * ((per_epoch + bs - 1) // bs)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=lr, total_steps=max(steps, 1), pct_start=0.15
    )
    last, best = run_dir / "last.pt", run_dir / "best.pt"
    start, best_acc = 0, -1.0
    if last.exists():
        ck = torch.load(last, map_location="cpu", weights_only=False)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        sched.load_state_dict(ck["sched"])
        start, best_acc = int(ck["epoch"]) + 1, float(ck["best_acc"])
        log(f"classifier: resuming after epoch {start} (best val acc {best_acc:.4f})")
    gen = torch.Generator().manual_seed(seed)
    for epoch in range(start, epochs):
        t0 = time.time()
        model.train()
        gen.manual_seed(seed * 1000 + epoch)
        perm = torch.randperm(len(xtr), generator=gen).numpy()[:per_epoch]
        total, loss_sum = 0, 0.0
        for i in range(0, len(perm), bs):
            idx = perm[i : i + bs]
            xb = _augment(torch.from_numpy(xtr[idx]), gen)
            yb = torch.from_numpy(ytr[idx])
            r_logits, s_logits = model.heads(xb)
            r_t, s_t = _targets(yb)
            loss = F.cross_entropy(r_logits, r_t, label_smoothing=0.05) + 0.5 * F.cross_entropy(
                s_logits, s_t, label_smoothing=0.05
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            loss_sum += loss.item() * len(idx)
            total += len(idx)
        acc = evaluate(model, xva, yva)
        log(
            f"classifier: epoch {epoch + 1}/{epochs} loss {loss_sum / max(1, total):.4f} "
            f"val acc (held-out decks) {acc:.4f} ({time.time() - t0:.0f} s)"
        )
        if acc > best_acc:
            best_acc = acc
            torch.save({"model": model.state_dict(), "epoch": epoch, "val_acc": acc}, best)
        torch.save(
            {
                "model": model.state_dict(),
                "opt": opt.state_dict(),
                "sched": sched.state_dict(),
                "epoch": epoch,
                "best_acc": best_acc,
            },
            last,
        )
    return best
