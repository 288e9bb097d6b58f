"""Per-table suit balance: the classifier's suit calibration, learned from the table's own deck.

A deck design the classifier never saw can bias it towards one suit: on the held-out ``plastic``
deck every black card is read as a spade (the clubs' fat round lobes look like spades at 5 px),
yet the clubs still score a little higher for "club" than the spades do. A game is played with
two full decks, so the four suits are equally common at every table. ``SuitBalance`` collects the
classifier's suit probabilities of the corners a table's camera reads and finds one weight per
suit such that the reweighted probabilities are balanced over the table's cards (a fixed point in
the manner of prior adjustment, Saerens et al. 2002, with the prior known: a quarter each). The
weights then multiply every later reading's suit probabilities, and the runner-ups the referee
re-reads with follow.

On a deck the classifier reads well the weights stay close to 1 and nothing changes; the
weights are bounded (``MAX_LOG``), start at 1 and are shrunk towards 1 while the readings are
few (``PRIOR_COUNT``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np

SUITS = "SHCD"
#: the weights that balance the readings are shrunk by n / (n + PRIOR_COUNT) for n readings,
#: so that the first few cards cannot swing them
PRIOR_COUNT = 40.0
#: the largest suit weight, as a log (e^5 = 150 times: plastic's clubs score e^-2.4 to e^-4.8
#: of their spade reading)
MAX_LOG = 5.0
#: readings kept (the latest)
KEEP = 3000
#: a reading counts only when its card mass (not ``none``, not a joker) is at least this
MIN_CARD_MASS = 0.5
#: a corner read again within this many pixels of where the same class was read counts once
SAME_PX = 6.0


class SuitBalance:
    """Suit weights for one table's deck, learned online from its corner readings."""

    def __init__(self, class_names: Sequence[str]) -> None:
        self.names = list(class_names)
        #: class index -> suit index (0..3), -1 for jokers and ``none``
        self.suit_of = np.full(len(self.names), -1, np.int64)
        for i, n in enumerate(self.names):
            if len(n) == 2 and n not in ("SB", "HR") and n[0] in SUITS:
                self.suit_of[i] = SUITS.index(n[0])
        if (self.suit_of >= 0).sum() != 52:
            raise ValueError("suit balance needs the 52 suited cards among the class names")
        self._onehot = np.zeros((len(self.names), 4), np.float64)
        for i, s in enumerate(self.suit_of):
            if s >= 0:
                self._onehot[i, s] = 1.0
        self.samples: deque[np.ndarray] = deque(maxlen=KEEP)
        #: (top class, box centre in SAME_PX cells) of the readings counted (insertion order)
        self._seen: dict[tuple[int, int, int], None] = {}
        self.log_w = np.zeros(4)
        self._fitted = np.zeros(4)

    @property
    def readings(self) -> int:
        return len(self.samples)

    def weights(self) -> dict[str, float]:
        return {s: round(float(np.exp(v)), 3) for s, v in zip(SUITS, self.log_w, strict=True)}

    def observe(self, probs: np.ndarray, boxes: np.ndarray | None = None) -> None:
        """Add the raw class probabilities (N x classes) of corners read as suited cards.

        ``boxes`` (N x 4, x1 y1 x2 y2): a corner read again where it was read before with the
        same top class (the same card lying there, seen in another frame) counts once, so the
        balance weighs the table's cards, not how long they lay in view."""
        if len(probs) == 0:
            return
        mass = probs @ self._onehot  # N x 4
        total = mass.sum(axis=1)
        top_class = np.argmax(probs, axis=1)
        top = self.suit_of[top_class]
        for i, (m, t, k) in enumerate(zip(mass, total, top, strict=True)):
            if k < 0 or t < MIN_CARD_MASS:
                continue
            if boxes is not None:
                x1, y1, x2, y2 = (float(v) for v in boxes[i])
                key = (
                    int(top_class[i]),
                    round((x1 + x2) / 2 / SAME_PX),
                    round((y1 + y2) / 2 / SAME_PX),
                )
                if key in self._seen:
                    continue
                self._seen[key] = None
                while len(self._seen) > KEEP * 2:
                    self._seen.pop(next(iter(self._seen)))
            self.samples.append(m / t)
        self._fit()

    def _fit(self, rounds: int = 40) -> None:
        if not self.samples:
            return
        x = np.asarray(self.samples)  # n x 4 suit posteriors
        log_w = self._fitted.copy()
        for _ in range(rounds):
            adj = x * np.exp(log_w)
            adj /= adj.sum(axis=1, keepdims=True)
            step = np.log(0.25 / np.maximum(adj.mean(axis=0), 1e-6))
            log_w = np.clip(log_w + step, -MAX_LOG, MAX_LOG)
            log_w -= log_w.mean()
            if np.abs(step).max() < 1e-3:
                break
        self._fitted = log_w
        # shrunk towards no change while the readings are few
        self.log_w = log_w * len(x) / (len(x) + PRIOR_COUNT)

    def adjust(self, probs: np.ndarray) -> np.ndarray:
        """``probs`` with each suited card's probability times its suit's weight, renormalised
        (jokers and ``none`` keep theirs, so a corner's card mass is unchanged)."""
        if len(probs) == 0 or not self.log_w.any():
            return probs
        w = np.ones(len(self.names))
        suited = self.suit_of >= 0
        w[suited] = np.exp(self.log_w[self.suit_of[suited]])
        out = probs * w
        card_before = (probs * suited).sum(axis=1, keepdims=True)
        card_after = (out * suited).sum(axis=1, keepdims=True)
        scale = np.where(card_after > 0, card_before / np.maximum(card_after, 1e-12), 1.0)
        out = np.where(suited, out * scale, probs)
        return np.asarray(out, np.float32)
