"""A camera's errors put into the simulator's observations, for the decoder's regression harness
(bench/decoder_harness.py) and tests: what the table pipeline does to a game it reads.

Every ``played`` becomes a camera reading (``doubts``: each card with a runner-up at a cost of
2-6 nats, as the classifier gives), and at small rates, each drawn from the game's own seed:

* a card read as its runner-up (another suit, or the next rank), the truth named at 0.3-2.5;
* a card of a play of two or more not seen (with or without a ``doubts`` entry naming it);
* a ghost card seen beside a play (its doubt: no card there, at 0.5-1.5);
* a play reported 0.5-4 s late, after the next seat's pass (its cards settle late);
* a single joker seen only as a ``glimpse`` (no play);
* a pass not seen (its lamp missed);
* a card of a play of three or more found 0.2 s late (``amends``).

The errors are what the decoder's looks were written for (engine/decoder.py), at rates above a
real camera's, so a harness of a few dozen games exercises each of them many times.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace

from engine.cards import BIG_JOKER, DISTINCT, SMALL_JOKER, Card
from engine.observations import Observation
from engine.profiles import load_profile
from engine.sim import simulate

RANKS = "23456789TJQKA"
PROFILES = ("standard", "huaian", "national", "club-531")


def _runner_up(card: Card, rng: random.Random) -> Card:
    """A plausible misreading of ``card``: another suit of its rank, or a neighbouring rank."""
    if card.is_joker:
        return BIG_JOKER if card == SMALL_JOKER else SMALL_JOKER
    if rng.random() < 0.6:
        return rng.choice([c for c in DISTINCT if c.rank == card.rank and c != card])
    i = RANKS.index(card.rank)
    j = i + rng.choice((-1, 1)) if 0 < i < 12 else (1 if i == 0 else 11)
    return next(c for c in DISTINCT if c.rank == RANKS[j] and c.suit == card.suit)


def _doubt(
    card: Card, rng: random.Random
) -> tuple[Card | None, tuple[tuple[Card | None, float], ...]]:
    return (card, ((_runner_up(card, rng), round(rng.uniform(2.0, 6.0), 2)),))


def noisy(observations: list[Observation], seed: int, rate: float = 1.0) -> list[Observation]:
    """``observations`` as a camera with errors reads them (see the module's docstring);
    ``rate`` scales every error's rate."""
    rng = random.Random(seed)
    obs = list(observations)
    out: list[tuple[float, int, Observation]] = []  # (time, order, observation)
    n = 0

    def put(t: float, o: Observation) -> None:
        nonlocal n
        out.append((t, n, o))
        n += 1

    for i, o in enumerate(obs):
        if o.type == "pass" and rng.random() < 0.01 * rate:
            continue  # a pass lamp not seen
        if o.type != "played" or o.seat is None:
            put(o.t, o)
            continue
        cards = list(o.cards)
        doubts = [_doubt(c, rng) for c in cards]
        nxt = obs[i + 1] if i + 1 < len(obs) else None
        r = rng.random() / rate
        t = o.t
        late: Observation | None = None
        if len(cards) == 1 and cards[0].is_joker and r < 0.01:
            put(t, Observation(t, "glimpse", seat=o.seat, cards=tuple(cards)))
            continue
        if r < 0.04:  # a runner-up slip
            j = rng.randrange(len(cards))
            true = cards[j]
            cards[j] = _runner_up(true, rng)
            doubts[j] = (cards[j], ((true, round(rng.uniform(0.3, 2.5), 2)),))
        elif r < 0.06 and len(cards) >= 2:  # a card not seen
            j = rng.randrange(len(cards))
            true = cards.pop(j)
            del doubts[j]
            if rng.random() < 0.5:
                doubts.append((None, ((true, round(rng.uniform(0.5, 2.5), 2)),)))
        elif r < 0.07:  # a ghost card beside the play
            ghost = rng.choice(DISTINCT)
            cards.append(ghost)
            doubts.append((ghost, ((None, round(rng.uniform(0.5, 1.5), 2)),)))
        elif r < 0.08 and len(cards) >= 3 and nxt is not None and nxt.t - t > 0.3:
            j = rng.randrange(len(cards))
            true = cards.pop(j)
            del doubts[j]
            late = Observation(
                round(t + 0.2, 3),
                "played",
                seat=o.seat,
                cards=(true,),
                doubts=(_doubt(true, rng),),
                extra={"amends": t},
            )
        elif r < 0.14 and nxt is not None and nxt.type == "pass" and nxt.seat != o.seat:
            # reported after the next seat's pass, before anything but plays and passes
            m = i + 1
            while m < len(obs) and obs[m].type in ("played", "pass"):
                m += 1
            limit = obs[m].t - 0.05 if m < len(obs) else float("inf")
            at = min(nxt.t + rng.uniform(0.5, 4.0), limit)
            if at - nxt.t >= 0.5:
                t = round(at, 3)
        cam = replace(o, t=t, cards=tuple(cards), doubts=tuple(doubts))
        put(t, cam)
        if late is not None:
            put(late.t, late)
    out.sort(key=lambda x: (x[0], x[1]))
    return [o for _, _, o in out]


def noisy_games(
    count: int, deals: int = 3, first_seed: int = 7100
) -> Iterator[tuple[str, str, list[Observation], list[Observation]]]:
    """``count`` simulated games (profiles in turn, mischief 0.02), each as (name, profile,
    truth, camera)."""
    for k in range(count):
        seed = first_seed + k
        name = PROFILES[k % len(PROFILES)]
        truth = simulate(load_profile(name), deals=deals, seed=seed, mischief=0.02).observations
        yield f"sim-{name}-{seed}", name, truth, noisy(truth, seed)
