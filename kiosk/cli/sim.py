"""``guandan sim`` and ``guandan referee`` (CONTRACT.md): the simulator and the referee alone.

All file I/O lives here; ``engine`` stays pure. ``guandan referee`` on the observations that
``guandan sim`` wrote gives byte-identical events (ids are UUID5s of table and seq; ``t`` comes
from the observations).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = ["register"]


def register(subs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sp = subs.add_parser(
        "sim",
        help="simulate a match with seeded bots and referee it",
        description="Seeded bots play N deals under a rule profile; the observation stream goes "
        "through the referee. Writes event JSON lines (and optionally the observations).",
    )
    sp.add_argument("--profile", required=True, help="profile name or path to a .toml file")
    sp.add_argument("--deals", type=int, required=True, help="number of deals to play")
    sp.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    sp.add_argument("--out", required=True, help="events JSONL file ('-' for stdout)")
    sp.add_argument("--observations", help="also write the observation stream (JSONL) here")
    sp.add_argument(
        "--mischief",
        type=float,
        default=0.0,
        help="rate (0..1) at which each chance injects a foul; the truth is in the observations",
    )
    sp.add_argument("--table", default="t1", help="table id stamped on the events (default t1)")
    sp.set_defaults(handler=_sim)

    rp = subs.add_parser(
        "referee",
        help="run the referee on an observation stream",
        description="Reads observation JSON lines and writes the referee's event JSON lines.",
    )
    rp.add_argument("--profile", required=True, help="profile name or path to a .toml file")
    rp.add_argument("observations", help="observations JSONL file ('-' for stdin)")
    rp.add_argument("--out", help="events JSONL file (default: stdout)")
    rp.add_argument("--table", default="t1", help="table id stamped on the events (default t1)")
    rp.set_defaults(handler=_referee)


@contextmanager
def _writer(path: str | None) -> Iterator[IO[str]]:
    """stdout for None/'-'; otherwise write a temporary file and rename it when complete, so a
    failed run never leaves a half-written log."""
    if path is None or path == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    target = Path(path)
    tmp = target.with_name(target.name + ".part")
    with tmp.open("w", encoding="utf-8", newline="\n") as fh:
        yield fh
    tmp.replace(target)


def _sim(args: argparse.Namespace) -> int:
    from engine.events import dump_event
    from engine.observations import dump_observation
    from engine.profiles import load_profile
    from engine.sim import simulate

    if args.deals < 0:
        raise ValueError(f"--deals must be 0 or more, got {args.deals}")
    if not 0.0 <= args.mischief <= 1.0:
        raise ValueError(f"--mischief must be a rate from 0 to 1, got {args.mischief}")
    profile = load_profile(args.profile)
    result = simulate(
        profile, deals=args.deals, seed=args.seed, mischief=args.mischief, table=args.table
    )
    with _writer(args.out) as fh:
        for ev in result.events:
            fh.write(dump_event(ev) + "\n")
    if args.observations:
        with _writer(args.observations) as fh:
            for obs in result.observations:
                fh.write(dump_observation(obs) + "\n")
    return 0


def _referee(args: argparse.Namespace) -> int:
    from engine.events import dump_event
    from engine.observations import parse_observation
    from engine.profiles import load_profile
    from engine.referee import Referee

    profile = load_profile(args.profile)
    name = args.observations
    if name == "-":
        lines = sys.stdin.read().splitlines()
        label = "<stdin>"
    else:
        path = Path(name)
        if not path.is_file():
            raise ValueError(f"observation file {name!r} not found")
        lines = path.read_text(encoding="utf-8").splitlines()
        label = path.name
    # parse everything first: a malformed line is reported (exit 2) before any output is written
    observations = [
        parse_observation(line, where=f"{label} line {n}")
        for n, line in enumerate(lines, 1)
        if line.strip()
    ]
    ref = Referee(profile, table=args.table)
    for obs in observations:
        ref.feed(obs)
    with _writer(args.out) as fh:
        for ev in ref.events:
            fh.write(dump_event(ev) + "\n")
    return 0
