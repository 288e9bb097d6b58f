"""Simulated deals per second with full refereeing (issue 3; target >= 50 deals/s).

Seeded bots play whole matches; every observation goes through the live Referee (turn order,
legality via engine.combos, tribute, fouls, match scoring). Prints one JSON line per figure:
clean games per profile, games with mischief, and a fold of the whole log.

    .venv/bin/python bench/sim.py [--deals 200]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

# bench/engine.py would shadow the engine package: import from the repository root
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from engine.deal import fold  # noqa: E402
from engine.profiles import load_profile  # noqa: E402
from engine.referee import Referee  # noqa: E402
from engine.sim import simulate  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    total_deals = 0
    total_s = 0.0
    total_cpu = 0.0
    for name, rate in (("huaian", 0.0), ("standard", 0.0), ("national", 0.0), ("standard", 0.02)):
        p = load_profile(name)
        t0, c0 = time.perf_counter(), time.process_time()
        r = simulate(p, deals=args.deals, seed=args.seed, mischief=rate)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        total_deals += args.deals
        total_s += dt
        total_cpu += cpu
        t2 = time.perf_counter()
        ref = Referee(p)
        ref.feed_all(r.observations)
        rt = time.perf_counter() - t2
        assert [e.id for e in ref.events] == [e.id for e in r.events]
        t1 = time.perf_counter()
        st = fold(r.events, p)
        ft = time.perf_counter() - t1
        assert st == r.referee.state
        print(
            json.dumps(
                {
                    "bench": "sim",
                    "profile": name,
                    "mischief": rate,
                    "deals": args.deals,
                    "events": len(r.events),
                    "observations": len(r.observations),
                    "deals_per_s": round(args.deals / dt, 1),
                    "deals_per_cpu_s": round(args.deals / cpu, 1),
                    "referee_only_deals_per_s": round(args.deals / rt, 1),
                    "fold_events_per_s": round(len(r.events) / ft),
                }
            )
        )
    print(
        json.dumps(
            {
                "bench": "sim",
                "figure": "deals_per_s_overall",
                "value": round(total_deals / total_s, 1),
                "per_cpu_s": round(total_deals / total_cpu, 1),
                "target": 50,
                "python": platform.python_version(),
                "machine": platform.machine(),
            }
        )
    )


if __name__ == "__main__":
    main()
