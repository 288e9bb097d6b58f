"""Engine benchmark (issue 2): legal_moves for a lead and for an answer, classify throughput.

Over N (default 1,000) seeded random 27-card hands drawn from the 108-card deck, each at a random
level: the time of ``legal_moves(hand, None, level)`` (lead) and of ``legal_moves(hand, trick,
level)`` where the trick is a random legal lead of another random 27-card hand (answer); then
``classify`` over every lead play found (Card tuples, the referee's case). Prints one JSON line
per figure. Run: ``.venv/bin/python bench/engine.py [--hands N] [--seed S] [--profile]``.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import platform
import pstats
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import classify, legal_moves  # noqa: E402
from engine.cards import DECK, RANKS, Card  # noqa: E402


def _quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def _emit(figure: str, **kw: object) -> None:
    print(json.dumps({"bench": "engine", "figure": figure, **kw}), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hands", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--profile", action="store_true", help="print a cProfile of the lead loop")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    cases: list[tuple[list[Card], str, list[Card]]] = []
    for _ in range(args.hands):
        level = rng.choice(RANKS)
        deck = list(DECK)
        rng.shuffle(deck)
        cases.append((deck[:27], level, deck[27:54]))
    # warm-up (sub-multiset tables are cached per suit pattern)
    for hand, level, _ in cases[:50]:
        legal_moves(hand, None, level)

    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        for hand, level, _ in cases:
            legal_moves(hand, None, level)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)

    clock = time.perf_counter
    cpu_clock = time.thread_time
    lead_cpu: list[float] = []
    answer_cpu: list[float] = []
    lead_t: list[float] = []
    answer_t: list[float] = []
    lead_n: list[int] = []
    answer_n: list[int] = []
    plays: list[tuple[tuple[Card, ...], str]] = []
    for hand, level, other in cases:
        c0 = cpu_clock()
        t0 = clock()
        moves = legal_moves(hand, None, level)
        t1 = clock()
        lead_cpu.append(cpu_clock() - c0)
        lead_t.append(t1 - t0)
        lead_n.append(len(moves))
        trick = rng.choice(legal_moves(other, None, level))
        c0 = cpu_clock()
        t0 = clock()
        answers = legal_moves(hand, trick, level)
        t1 = clock()
        answer_cpu.append(cpu_clock() - c0)
        answer_t.append(t1 - t0)
        answer_n.append(len(answers))

    for hand, level, _ in cases:
        if len(plays) >= 200_000:
            break
        plays.extend((m.cards, level) for m in legal_moves(hand, None, level))
    cond = {
        "hands": args.hands,
        "seed": args.seed,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "loadavg_1m": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
    }
    for name, ts, cs, ns in (
        ("lead", lead_t, lead_cpu, lead_n),
        ("answer", answer_t, answer_cpu, answer_n),
    ):
        _emit(
            f"legal_moves_{name}",
            median_ms=round(statistics.median(ts) * 1e3, 4),
            p99_ms=round(_quantile(ts, 0.99) * 1e3, 4),
            median_cpu_ms=round(statistics.median(cs) * 1e3, 4),
            p99_cpu_ms=round(_quantile(cs, 0.99) * 1e3, 4),
            max_ms=round(max(ts) * 1e3, 3),
            median_moves=statistics.median(ns),
            p99_moves=_quantile([float(n) for n in ns], 0.99),
            **cond,
        )
    sample = plays[:200_000]
    # The 200k sample plays are the benchmark's own data: move them out of the collector's way
    # so a full collection does not rescan them (a live frame loop never holds that many).
    gc.collect()
    gc.freeze()
    cpu0 = time.process_time()
    t0 = clock()
    for cards, level in sample:
        classify(cards, level)
    dt = clock() - t0
    cpu = time.process_time() - cpu0
    _emit(
        "classify_throughput",
        plays_per_s=round(len(sample) / dt),
        plays_per_cpu_s=round(len(sample) / cpu),
        plays=len(sample),
        mean_cards=round(sum(len(c) for c, _ in sample) / len(sample), 2),
        **cond,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
