"""Regression harness for the decoder (issue 41): the referee alone on recorded observation
streams, so a change to engine/decoder.py is checked in seconds, without rendering.

Two kinds of stream, each with its ground truth (the simulator's observations of the game):

* ``capture SEED...``: bench games read by the whole pipeline once (render, enrol, the shipped
  models; the options of bench/table_accuracy.py's recorded sets: ``--detector model --enrol``,
  one deal, mischief 0.02, the standard profile, the deck by the seed's place in its set of
  ten), their camera observations written to ``DIR/real/g{seed}.json``. Minutes per game.
* the simulator's games with camera noise put in by :mod:`tests.referee.camera_noise` (runner-up
  slips, cards missed and ghost cards, plays reported late, plays glimpsed only, cards found
  late), made afresh from their seeds (``--sim N``).

``run [--save FILE] [--against FILE]`` feeds every stream to a fresh referee and prints one JSON
line per changed or real stream (plays in effect matched to the truth's, deals with a wrong
finishing order, corrections, fouls; for a real game the referee's CPU ms per ``played``
observation, decoder included) and a summary; ``--save`` keeps each stream's outcome (plays,
passes, seats out, orders, levels, fouls) and ``--against`` compares with a saved one, naming
each stream whose outcome changed and whether it got better or worse by the truth, and each
stream whose events differ at all (a digest of every event, corrections and reasons included:
the check for a refactor that must not change behaviour).

    python bench/decoder_harness.py capture 9401 9403 9802 [--dir logs/harness]
        [--adapted deck.classes.onnx] [--size 2304x1296]
    python bench/decoder_harness.py run [--sim 40] [--save logs/harness/base.json]
        [--against logs/harness/base.json] [--perturb]
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.cards import BIG_JOKER, DISTINCT, SMALL_JOKER  # noqa: E402
from engine.deal import effective_events  # noqa: E402
from engine.events import Event, dump_event  # noqa: E402
from engine.observations import Observation, dump_observation, parse_observation  # noqa: E402
from engine.profiles import load_profile  # noqa: E402
from engine.referee import Referee  # noqa: E402


def emit(**kw: object) -> None:
    print(json.dumps(kw), flush=True)


def capture(
    seeds: Sequence[int],
    folder: Path,
    adapted: str | None = None,
    size: tuple[int, int] | None = None,
) -> None:
    """Read each bench game through the whole pipeline and keep its observations; ``adapted``:
    with this classifier adapted to the games' deck (``guandan vision adapt``, as
    bench/table_accuracy.py's ``--adapted``), ``size``: rendered and read at this frame size."""
    from bench.table_accuracy import DEFAULT_SIZE, enrol_deck, kept_render
    from kiosk.replay import replay
    from vision.synth.video import EVAL_DECKS

    size = size or DEFAULT_SIZE

    prof = load_profile("standard")
    (folder / "real").mkdir(parents=True, exist_ok=True)
    renders = folder / "renders"
    renders.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        deck = EVAL_DECKS[(seed - 1) % 10 % len(EVAL_DECKS)]
        t0 = time.perf_counter()
        video, info = kept_render(prof, seed, 1, deck, 0.02, renders, size)
        deck_profile: object = enrol_deck(info.deck, seed, renders, size)  # type: ignore[attr-defined]
        if adapted:
            from vision.adapt import with_adapted

            deck_profile = with_adapted(deck_profile, Path(adapted))  # type: ignore[arg-type]
        res = replay(video, profile=prof, detector="model", deck=deck_profile)
        out = folder / "real" / f"g{seed}.json"
        out.write_text(
            json.dumps(
                {
                    "seed": seed,
                    "deck": deck,
                    "profile": "standard",
                    "truth": [dump_observation(o) for o in info.observations],  # type: ignore[attr-defined]
                    "camera": [dump_observation(o) for o in res.observations],
                }
            )
        )
        emit(captured=seed, deck=deck, s=round(time.perf_counter() - t0, 1), fps=res.report.fps)


def outcome(events: Sequence[Event]) -> list[list[Any]]:
    """What the table did, from the events in effect (times left out)."""
    out: list[list[Any]] = []
    for e in effective_events(events):
        d = e.data
        if e.type == "play":
            out.append(["play", d["seat"], sorted(d["cards"]), d["legal"]])
        elif e.type == "pass":
            out.append(["pass", d["seat"]])
        elif e.type == "seat_out":
            out.append(["seat_out", d["seat"], d["place"]])
        elif e.type == "foul":
            out.append(["foul", d.get("seat"), d["kind"]])
        elif e.type == "deal_ended":
            out.append(["deal_ended", d["order"], sorted(d["levels"].items())])
        elif e.type == "match_ended":
            out.append(["match_ended", d["winner"], d.get("reason")])
    return out


def perturbed(cam: Sequence[Observation], seed: int) -> list[Observation]:
    """``cam`` with camera errors that tests/referee/camera_noise.py does not make, for the
    decoder's rarer alternatives (``--perturb``; a check that a change leaves them as they were,
    not a model of a camera): the last card of a camera play seen only with the seat's next play
    of the trick (1 play of 2+ cards in 7), a play seen only as a ``glimpse`` then reported
    after the next two observations (7 in 10), and a card of a camera play read anew just
    after it (``was``; 1 play in 8: its runner-up of the same rank 4 times in 5, else another
    suit)."""
    rng = random.Random(seed)
    obs = list(cam)
    for i, o in enumerate(obs):
        if o.type != "played" or len(o.cards) < 2 or o.extra or rng.random() > 0.15:
            continue
        for j in range(i + 1, min(len(obs), i + 12)):
            q = obs[j]
            if q.type in ("trick_cleared", "deal_start"):
                break
            if q.type == "played" and q.seat == o.seat and not q.extra:
                c = o.cards[-1]
                dd = [x for x in o.doubts if x[0] == c][:1]
                obs[i] = replace(
                    o, cards=o.cards[:-1], doubts=tuple(x for x in o.doubts if x not in dd)
                )
                obs[j] = replace(q, cards=(*q.cards, c), doubts=(*q.doubts, *dd))
                break
    out: list[Observation] = []
    for i, o in enumerate(obs):
        out.append(o)
        nxt = obs[i + 1] if i + 1 < len(obs) else None
        if o.type == "glimpse" and i + 3 < len(obs) and rng.random() < 0.7:
            other = {SMALL_JOKER: BIG_JOKER, BIG_JOKER: SMALL_JOKER}
            doubts = tuple((c, ((other.get(c, c), 4.9),)) for c in o.cards)
            t = round(obs[i + 3].t - 0.01, 3)
            out.append(replace(o, type="played", t=t, doubts=doubts))
        elif o.type == "played" and o.seat and o.cards and not o.extra and nxt is not None:
            x = rng.choice(o.cards)
            if rng.random() < 0.12 and not x.is_joker:
                ups = [a for c, alts in o.doubts if c == x for a, _ in alts]
                ups = [a for a in ups if a is not None and a.rank == x.rank and a != x]
                y = ups[0] if ups and rng.random() < 0.8 else None
                y = y or rng.choice([c for c in DISTINCT if c.rank == x.rank and c != x])
                t = round(min(o.t + 0.1, (o.t + nxt.t) / 2), 3)
                out.append(replace(o, t=t, cards=(y,), doubts=(), extra={"was": [str(x)]}))
    return sorted(out, key=lambda o: o.t)


def streams(
    folder: Path, sims: int, first_seed: int = 7100, perturb: bool = False
) -> list[tuple[str, str, list[Observation], list[Observation]]]:
    """(name, profile, truth, camera) for every kept real game and ``sims`` noisy simulations
    (with ``perturb``, each also :func:`perturbed`)."""
    from tests.referee.camera_noise import noisy_games

    got = []
    for path in sorted((folder / "real").glob("g*.json")):
        data = json.loads(path.read_text())
        truth = [parse_observation(x) for x in data["truth"]]
        cam = [parse_observation(x) for x in data["camera"]]
        got.append((f"real-{data['seed']}", data["profile"], truth, cam))
    for name, profile, truth, cam in noisy_games(sims, first_seed=first_seed):
        got.append((name, profile, truth, cam))
        if perturb:
            seed = int(name.rsplit("-", 1)[1])
            got.append((f"{name}-perturbed", profile, truth, perturbed(cam, seed)))
    return got


def judge(profile: str, truth: list[Observation], cam: list[Observation]) -> dict[str, Any]:
    """The referee on ``cam`` against the referee on ``truth``."""
    prof = load_profile(profile)
    ref_t = Referee(prof)
    ref_t.feed_all(truth)
    ref = Referee(prof)
    per_play: list[float] = []
    for o in cam:
        t0 = time.process_time()  # CPU time: the box is shared, wall time says little
        ref.feed(o)
        if o.type == "played":
            per_play.append((time.process_time() - t0) * 1000)
    tev, pev = effective_events(ref_t.events), effective_events(ref.events)

    def pk(e: Event) -> tuple[str, tuple[str, ...]]:
        return (e.data["seat"], tuple(sorted(e.data["cards"])))

    tp = [pk(e) for e in tev if e.type == "play"]
    pp = [pk(e) for e in pev if e.type == "play"]
    sm = difflib.SequenceMatcher(a=tp, b=pp, autojunk=False)
    matched = sum(b.size for b in sm.get_matching_blocks())
    tords = {e.deal: e.data["order"] for e in tev if e.type == "deal_ended"}
    pords = {e.deal: e.data["order"] for e in pev if e.type == "deal_ended"}
    wrong = sum(1 for d, o in tords.items() if pords.get(d) != o)
    fouls = sum(1 for e in pev if e.type == "foul")
    tfouls = sum(1 for e in tev if e.type == "foul")
    tf = [(e.data.get("seat"), e.data["kind"]) for e in tev if e.type == "foul"]
    pf = [(e.data.get("seat"), e.data["kind"]) for e in pev if e.type == "foul"]
    fm = difflib.SequenceMatcher(a=tf, b=pf, autojunk=False)
    fouls_matched = sum(b.size for b in fm.get_matching_blocks())
    return {
        "plays": len(tp),
        "matched": matched,
        "deals": len(tords),
        "wrong_orders": wrong,
        "fouls": fouls,
        "truth_fouls": tfouls,
        "truth_fouls_found": fouls_matched,
        "corrections": sum(1 for e in ref.events if e.type == "correction"),
        "ms": per_play,
        "outcome": json.loads(json.dumps(outcome(ref.events))),
        "events": hashlib.sha256("\n".join(dump_event(e) for e in ref.events).encode()).hexdigest()[
            :16
        ],
    }


def _stats(ms: list[float]) -> dict[str, Any]:
    """Mean, p95 and worst of ``ms``, and how many."""
    got = sorted(ms)
    if not got:
        return {"n": 0}
    p95 = got[int(0.95 * (len(got) - 1))]
    return {
        "mean": round(statistics.fmean(got), 3),
        "p95": round(p95, 3),
        "worst": round(got[-1], 3),
        "n": len(got),
    }


def run(args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    base = json.loads(Path(args.against).read_text()) if args.against else None
    saved: dict[str, Any] = {}
    all_ms: list[float] = []
    tot = dict.fromkeys(
        ("plays", "matched", "wrong_orders", "deals", "fouls", "truth_fouls", "truth_fouls_found"),
        0,
    )
    changed = better = worse = events_changed = 0
    for name, profile, truth, cam in streams(folder, args.sim, args.sim_seed, args.perturb):
        r = judge(profile, truth, cam)
        ms = r.pop("ms")
        all_ms += ms
        for k in tot:
            tot[k] += r[k]
        saved[name] = r
        line: dict[str, Any] = {"stream": name, **{k: v for k, v in r.items() if k != "outcome"}}
        if name.startswith("real-"):
            line["cpu_ms_per_play"] = _stats(ms)
        if base is not None and name in base:
            b = base[name]
            if "events" in b and b["events"] != r["events"]:
                events_changed += 1
                line["events_changed"] = True
            if b["outcome"] != r["outcome"]:
                changed += 1
                d = (r["matched"] - b["matched"], b["wrong_orders"] - r["wrong_orders"])
                line["changed"] = {"matched": d[0], "orders_fixed": d[1]}
                better += d > (0, 0) and min(d) >= 0
                worse += min(d) < 0
        if (
            args.verbose
            or "changed" in line
            or "events_changed" in line
            or name.startswith("real-")
        ):
            emit(**line)
    emit(
        summary=True,
        streams=len(saved),
        **tot,
        cpu_ms_per_play=_stats(all_ms),
        changed=changed if base is not None else None,
        better=better if base is not None else None,
        worse=worse if base is not None else None,
        events_changed=events_changed if base is not None else None,
    )
    if args.save:
        Path(args.save).parent.mkdir(parents=True, exist_ok=True)
        Path(args.save).write_text(json.dumps(saved))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="logs/harness")
    sub = ap.add_subparsers(dest="cmd", required=True)
    cap = sub.add_parser("capture")
    cap.add_argument("seeds", type=int, nargs="+")
    cap.add_argument("--adapted", help="read with this classifier adapted to the games' deck")
    cap.add_argument("--size", help="render and read at this frame size, e.g. 2304x1296")
    r = sub.add_parser("run")
    r.add_argument("--sim", type=int, default=40, help="noisy simulated games")
    r.add_argument("--sim-seed", type=int, default=7100, help="the first one's seed")
    r.add_argument("--save")
    r.add_argument("--against")
    r.add_argument("--verbose", action="store_true")
    r.add_argument("--perturb", action="store_true", help="each simulated game also perturbed()")
    args = ap.parse_args()
    if args.cmd == "capture":
        from vision.framesize import FrameSizeError, parse_frame_size

        try:
            size = parse_frame_size(args.size, "--size") if args.size else None
        except FrameSizeError as exc:
            raise SystemExit(f"decoder_harness.py: {exc}") from None
        if args.adapted and not Path(args.adapted).is_file():
            raise SystemExit(f"--adapted {args.adapted}: no such file (guandan vision adapt)")
        capture(args.seeds, Path(args.dir), args.adapted, size)
        return 0
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
