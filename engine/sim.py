"""Match simulator: seeded bots play whole matches; the ground-truth observation stream goes
through a live :class:`engine.referee.Referee`, which gives the event log.

The bots follow a simple, sensible strategy (lowest group first on the lead, the cheapest answer
that beats the trick, no beating the partner, a bomb now and then or when an opponent runs low)
and play only what the engine reads as legal: every choice is checked with
``engine.referee.choose_reading`` before it is played. They pay the highest non-wild card as
tribute, return the smallest card that every return limit allows, and show both big jokers for
anti-tribute.

``mischief`` injects fouls: at every chance (each turn, each tribute and return) with
probability ``mischief`` one foul of a kind that can happen there, drawn uniformly:
``out_of_turn`` (another seat plays a single out of turn, taken back), ``exposed_card`` (a seat
shows a card), ``illegal_play`` (the seat on turn plays two unrelated cards; they stay out),
``slow_play`` (the seat on turn waits past the foul limit), ``card_count`` (a seat reports a
wrong count: a warning first, as the profile says), ``wrong_tribute`` (a wild as tribute, a lower
card than the highest - detectable only once the payer plays the higher card - or a return
above the limit), ``duplicate_card`` (a single misread as a card already played twice). The
truth is recorded in :attr:`SimResult.truth` and in each injected observation's ``mischief``
field.

Pure: no I/O; all randomness comes from ``random.Random(seed)``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from engine.cards import BIG_JOKER, DECK, Card, is_wild, natural_rank, order_value, parse_card
from engine.combos import Combo, ComboRules
from engine.deal import SEATS, play_level
from engine.events import Event
from engine.match import MatchState, draw_level
from engine.observations import Observation
from engine.profiles import Profile
from engine.referee import Referee, choose_reading
from engine.tribute import assign_double, partner, plan_tribute

__all__ = ["Mischief", "SimResult", "simulate", "bot_move"]

_MAX_ACTIONS: Final = 3000


@dataclass(frozen=True, slots=True)
class Mischief:
    """One injected foul: what the referee must flag (``outcome``: ``foul`` or ``warning``)."""

    kind: str
    seat: str
    deal: int
    obs: int
    outcome: str = "foul"
    detail: str = ""


@dataclass
class SimResult:
    observations: list[Observation]
    events: list[Event]
    truth: list[Mischief]
    referee: Referee
    deals: int
    #: the cards each seat was dealt, per deal (for property tests)
    hands: list[dict[str, list[Card]]] = field(default_factory=list)


# ------------------------------------------------------------------------------- bot strategy
_ORDER: dict[str | None, dict[str, int]] = {}


def _groups(hand: Sequence[Card], level: str | None) -> dict[int, list[Card]]:
    """Cards by single-card order value (it depends on the rank alone)."""
    table = _ORDER.get(level)
    if table is None:
        table = _ORDER[level] = {c.rank: order_value(c, level) for c in DECK}
    g: dict[int, list[Card]] = {}
    for c in hand:
        g.setdefault(table[c.rank], []).append(c)
    return g


def _by_natural(hand: Sequence[Card]) -> dict[int, list[Card]]:
    g: dict[int, list[Card]] = {}
    for c in hand:
        if c.is_joker:
            continue
        n = natural_rank(c)
        g.setdefault(n, []).append(c)
        if n == 14:
            g.setdefault(1, []).append(c)
    return g


def _sequence(hand: Sequence[Card], width: int, each: int, above: int) -> list[Card] | None:
    """Lowest run of ``width`` consecutive natural ranks with ``each`` cards per rank, starting
    above ``above`` (A-low = 1)."""
    nat = _by_natural(hand)
    for start in range(max(1, above + 1), 15 - width + 1):
        run: list[Card] = []
        for r in range(start, start + width):
            cs = nat.get(r, [])
            if len(cs) < each:
                break
            run.extend(cs[:each])
        else:
            if len(set(map(id, run))) == len(run):
                return run
    return None


_RULES: dict[int, tuple[Profile, ComboRules]] = {}


def _ok(cards: list[Card], top: Combo | None, level: str | None, p: Profile) -> bool:
    hit = _RULES.get(id(p))
    if hit is None or hit[0] is not p:
        hit = _RULES[id(p)] = (p, p.combo_rules)
    return choose_reading(cards, top, level, p, hit[1])[0] is not None


def bot_move(
    hand: Sequence[Card],
    top: Combo | None,
    level: str | None,
    profile: Profile,
    rng: random.Random,
    *,
    partner_owns: bool = False,
    opponent_low: bool = False,
) -> list[Card] | None:
    """The bot's play (None = pass). Every play returned is legal (checked with the engine)."""
    groups = _groups(hand, level)
    values = sorted(groups)
    mx = profile.combos.max_cards_per_play or 27
    if top is None:
        if rng.random() < 0.2:
            run = _sequence(hand, 5, 1, 0)
            if run is not None and _ok(run, None, level, profile):
                return run
        if rng.random() < 0.1:
            run = _sequence(hand, 3, 2, 0)
            if run is not None and _ok(run, None, level, profile):
                return run
        v = values[0]
        cards = list(groups[v])
        if len(cards) == 3:
            pair = next((groups[w] for w in values if w != v and len(groups[w]) == 2), None)
            if pair is not None and _ok(cards + pair, None, level, profile):
                return cards + pair
        if len(cards) > mx:
            cards = cards[: max(4, min(mx, len(cards)))]
        if _ok(cards, None, level, profile):
            return cards
        return [cards[0]]
    if partner_owns and not (len(hand) <= 4 and _ok(list(hand), top, level, profile)):
        return None
    kind = top.kind
    cand: list[Card] | None = None
    if kind in ("single", "pair", "triple"):
        n = {"single": 1, "pair": 2, "triple": 3}[kind]
        for v in values:
            if v > top.value and n <= len(groups[v]) < 4:
                cand = groups[v][:n]
                break
    elif kind == "full_house":
        for v in values:
            if v > top.value and len(groups[v]) == 3:
                pair = next((groups[w] for w in values if w != v and len(groups[w]) == 2), None)
                if pair is not None:
                    cand = groups[v] + pair
                break
    elif kind == "straight":
        cand = _sequence(hand, 5, 1, top.value)
    elif kind == "consecutive_pairs":
        cand = _sequence(hand, 3, 2, top.value)
    elif kind == "consecutive_triples":
        cand = _sequence(hand, 2, 3, top.value)
    if cand is not None and _ok(cand, top, level, profile):
        return cand
    if top.power or rng.random() < 0.25 or opponent_low:
        bombs = [groups[v] for v in values if len(groups[v]) >= 4]
        jokers = [c for c in hand if c.is_joker]
        if len(jokers) == 4:
            bombs.append(jokers)
        for b in sorted(bombs, key=len):
            b = b[: min(len(b), mx)]
            if _ok(b, top, level, profile):
                return b
    return None


# ------------------------------------------------------------------------------- the simulator
class _Sim:
    def __init__(self, profile: Profile, seed: int, mischief: float, table: str) -> None:
        self.p = profile
        self.rng = random.Random(seed)
        self.rate = mischief
        self.ref = Referee(profile, table=table)
        self.obs: list[Observation] = []
        self.truth: list[Mischief] = []
        self.t = 0.0
        self.hands: dict[str, list[Card]] = {}
        self.deal_no = 0
        self.wrong_reports: dict[str, int] = dict.fromkeys(SEATS, 0)
        self.match_no = 0
        self.true_played: dict[Card, int] = {}
        self.seat_plays: dict[str, list[Card]] = {}
        self.received: dict[str, list[Card]] = {}
        self.history: list[dict[str, list[Card]]] = []
        self.tribute_t: dict[str, float] = {}
        self.seen_played: dict[Card, int] = {}

    # -------------------------------------------------------------- helpers
    def tick(self, lo: float = 0.8, hi: float = 9.0) -> float:
        self.t = round(self.t + self.rng.uniform(lo, hi), 3)
        return self.t

    def observe(self, obs: Observation) -> None:
        if obs.type == "played" and obs.extra.get("mischief") != "out_of_turn":
            for c in obs.cards:
                self.seen_played[c] = self.seen_played.get(c, 0) + 1
        self.obs.append(obs)
        self.ref.feed(obs)

    def inject(self) -> bool:
        return self.rate > 0 and self.rng.random() < self.rate

    def record(
        self, kind: str, seat: str, outcome: str = "foul", detail: str = ""
    ) -> dict[str, str]:
        self.truth.append(Mischief(kind, seat, self.deal_no, len(self.obs), outcome, detail))
        return {"mischief": kind}

    # -------------------------------------------------------------- one deal
    def deal(self) -> None:
        p, rng, ref = self.p, self.rng, self.ref
        st = ref.state
        new_match = st.match_over
        if new_match:
            self.match_no += 1
            self.wrong_reports = dict.fromkeys(SEATS, 0)
            prev = None
            level: str | None = MatchState.new(p).deal_level
        else:
            prev = st.prev_order
            level = st.match.deal_level
        cut: str | None | bool = False
        if p.deals.level == "random":
            level = draw_level(rng)
            cut = level
        deck = list(DECK)
        rng.shuffle(deck)
        self.hands = {s: deck[i * 27 : (i + 1) * 27] for i, s in enumerate(SEATS)}
        self.history.append({s: list(h) for s, h in self.hands.items()})
        self.true_played = {}
        self.seen_played = {}
        self.seat_plays = {s: [] for s in SEATS}
        self.received = {s: [] for s in SEATS}
        self.deal_no = st.deal_no + 1
        self._tribute_extra = {}
        self._lower = {}
        lv = play_level(level)
        first_leader: str | None = None
        true_leader: str | None = None
        if prev is None:
            holder = SEATS[rng.randrange(108) // 27]
            true_leader = holder
            first_leader = holder if rng.random() < 0.85 else None
        self.observe(
            Observation(
                self.tick(),
                "deal_start",
                first_leader=first_leader,
                level=(level if cut is not False else ""),
            )
        )
        plan = plan_tribute(prev, p.tribute.enabled)
        paid: dict[str, Card] = {}
        if plan.kind != "none":
            hrs = {s: [c for c in self.hands[s] if c == BIG_JOKER] for s in plan.payers}
            if p.tribute.anti_tribute and sum(len(v) for v in hrs.values()) >= 2:
                for s in plan.payers:
                    if hrs[s]:
                        self.observe(Observation(self.tick(), "shown", seat=s, cards=tuple(hrs[s])))
            else:
                paid = self.tribute(plan.payers, lv, level)
                if len(plan.payers) == 2:
                    chosen = rng.choice(plan.payers)
                    assign, _, _ = assign_double(
                        plan, paid, lv, p.tribute.double_tie, p.play.seat_order, chosen
                    )
                else:
                    assign = {plan.payers[0]: plan.receivers[0]}
                for payer in plan.payers:
                    card, extra = paid[payer], self._tribute_extra.get(payer, {})
                    to = assign[payer]
                    self.observe(
                        Observation(
                            self.tick(), "tribute", seat=payer, cards=(card,), to=to, extra=extra
                        )
                    )
                    self.hands[payer].remove(card)
                    self.hands[to].append(card)
                    self.tribute_t[to] = self.t
                for payer in plan.payers:
                    d = ref.state.deal
                    if ref.state.match_over or d is None or d.over:
                        break  # a third foul during the tribute ended the match
                    self.give_back(assign[payer], payer, level)
        self.play(true_leader)
        # a lower tribute shows only when the payer played a higher card it did not receive
        for payer, (card, obs_ix) in self._lower.items():
            got = list(self.received[payer])
            hi = None
            for c in self.seat_plays[payer]:
                if level is not None and is_wild(c, level):
                    continue
                if order_value(c, lv) > order_value(card, lv):
                    if c in got:
                        got.remove(c)
                        continue
                    hi = c
                    break
            if hi is not None:
                self.truth.append(
                    Mischief("wrong_tribute", payer, self.deal_no, obs_ix, "foul", "lower tribute")
                )

    _tribute_extra: dict[str, dict[str, str]]
    _lower: dict[str, tuple[Card, int]]

    def tribute(self, payers: Sequence[str], lv: str | None, level: str | None) -> dict[str, Card]:
        self._tribute_extra = {}
        self._lower = {}
        out: dict[str, Card] = {}
        for s in payers:
            hand = self.hands[s]
            natural = [c for c in hand if level is None or not is_wild(c, level)]
            best = max(natural, key=lambda c: order_value(c, lv))
            out[s] = best
            if self.inject():
                wilds = [c for c in hand if level is not None and is_wild(c, level)]
                lower = [c for c in natural if order_value(c, lv) < order_value(best, lv)]
                if wilds:
                    out[s] = wilds[0]
                    self._tribute_extra[s] = self.record("wrong_tribute", s, detail="wild")
                elif lower:
                    out[s] = max(lower, key=lambda c: order_value(c, lv))
                    self._tribute_extra[s] = {"mischief": "wrong_tribute"}
                    self._lower[s] = (out[s], len(self.obs))
        return out

    def give_back(self, receiver: str, payer: str, level: str | None) -> None:
        p = self.p
        hand = self.hands[receiver]
        ok = [
            c
            for c in hand
            if not c.is_joker and natural_rank(c) <= 10 and (level is None or c.rank != level)
        ]
        card = min(ok or hand, key=lambda c: (natural_rank(c), c.suit))
        extra: dict[str, str] = {}
        limited = p.tribute.return_limit != "any" and not (
            p.tribute.return_limit == "max_ten_to_partner" and partner(receiver) != payer
        )
        if limited and self.inject():
            high = [c for c in hand if not c.is_joker and natural_rank(c) > 10]
            if high:
                card = high[0]
                extra = self.record("wrong_tribute", receiver, detail="return above the limit")
        slow = self.rng.uniform(2.0, 12.0)
        if self.inject():
            slow = p.slow_play.tribute_seconds + self.rng.uniform(2.0, 15.0)
        self.t = round(self.t + slow, 3)
        if self.t - self.tribute_t[receiver] > p.slow_play.tribute_seconds:
            # injected, or held up by an injected slow return before it: a foul either way
            extra = self.record("slow_play", receiver, detail="slow return") | extra
        self.observe(
            Observation(
                self.t, "tribute_return", seat=receiver, cards=(card,), to=payer, extra=extra
            )
        )
        hand.remove(card)
        self.hands[payer].append(card)
        self.received[payer].append(card)

    # -------------------------------------------------------------- play loop
    def play(self, true_leader: str | None) -> None:
        p, rng, ref = self.p, self.rng, self.ref
        sp = p.slow_play
        for _ in range(_MAX_ACTIONS):
            st = ref.state
            d = st.deal
            if d is None or d.over or st.match_over:
                return
            seat = d.turn if d.turn is not None else true_leader
            if seat is None:
                seat = next(s for s in SEATS if self.hands[s])
            level = play_level(d.level)
            tricks = d.tricks
            if d.turn is not None and self.inject():
                if self.side_mischief(seat):
                    continue
            hand = self.hands[seat]
            top = d.top
            owner = d.owner
            opp_low = any(
                d.counts[s] <= 5 and d.counts[s] > 0
                for s in SEATS
                if s not in (seat, partner(seat))
            )
            move = bot_move(
                hand,
                top,
                level,
                p,
                rng,
                partner_owns=owner is not None and owner == partner(seat),
                opponent_low=opp_low,
            )
            ban = d.lead_ban
            banned = False
            if move is not None and top is None and ban is not None:
                if ban[0] == seat and ban[2] == d.tricks:
                    move, banned = self._avoid(hand, level, ban[1], move)
            extra: dict[str, str] = {}
            lo, hi = 0.8, 9.0
            kind = None
            if self.inject():
                kinds = ["slow_play"]
                if len(hand) >= 4:
                    kinds.append("illegal_play")
                if move is not None and len(move) == 1 and self._misread(move[0], seat, d.level):
                    kinds.append("duplicate_card")
                kind = rng.choice(kinds)
            if kind == "slow_play":
                first = d.plays == 0 and d.top is None
                limit = sp.first_play_seconds if first else sp.play_seconds
                foul_at = max(sp.warning_seconds, limit + sp.grace_seconds) if sp.warning else limit
                lo, hi = foul_at + 2.0, foul_at + 20.0
                extra = self.record("slow_play", seat)
            t = self.tick(lo, hi)
            if kind == "illegal_play":
                bad = self._illegal(hand, top, level)
                if bad is not None:
                    extra = self.record("illegal_play", seat)
                    self.observe(Observation(t, "played", seat=seat, cards=tuple(bad), extra=extra))
                    for c in bad:
                        hand.remove(c)
                        self.true_played[c] = self.true_played.get(c, 0) + 1
                    self.seat_plays[seat].extend(bad)
                    continue
            if move is None:
                self.observe(Observation(t, "pass", seat=seat, extra=extra))
            else:
                shown = list(move)
                if kind == "duplicate_card":
                    alt = self._misread(move[0], seat, d.level)
                    assert alt is not None
                    shown = [alt]
                    extra = self.record("duplicate_card", seat)
                if banned:
                    extra = self.record("illegal_play", seat, detail="banned lead") | extra
                self.observe(Observation(t, "played", seat=seat, cards=tuple(shown), extra=extra))
                for c in move:
                    hand.remove(c)
                    self.true_played[c] = self.true_played.get(c, 0) + 1
                self.seat_plays[seat].extend(move)
            d2 = ref.state.deal
            if d2 is not None and not d2.over and d2.tricks != tricks:
                self.observe(Observation(self.tick(0.2, 1.0), "trick_cleared"))
            n = p.report.card_count
            if d2 is not None and 0 < len(hand) <= n and rng.random() < 0.05:
                self.observe(
                    Observation(self.tick(0.2, 1.0), "count_report", seat=seat, count=len(hand))
                )
        raise RuntimeError("simulated deal did not finish; this is a bug in the simulator")

    def _avoid(
        self, hand: list[Card], level: str | None, kind: str, move: list[Card]
    ) -> tuple[list[Card], bool]:
        """A lead of another kind than ``kind`` (national: the partner of an out-of-turn player
        may not lead that kind next trick); when there is none the lead is a foul, recorded."""
        first = choose_reading(move, None, level, self.p)[0]
        if first is None or first.kind != kind:
            return move, False
        groups = _groups(hand, level)
        options = [groups[v] for v in sorted(groups)]
        options += [r for r in (_sequence(hand, 5, 1, 0), _sequence(hand, 3, 2, 0)) if r]
        for cards in options:
            reading = choose_reading(cards, None, level, self.p)[0]
            if reading is not None and reading.kind != kind:
                return list(cards), False
        return move, True

    def _misread(self, card: Card, seat: str, level: str | None) -> Card | None:
        if card.is_joker or (level is not None and is_wild(card, level)):
            return None
        if card in self.received[seat]:
            return None
        for s in "SHCD":
            alt = parse_card(s + card.rank)
            if s == card.suit or (level is not None and is_wild(alt, level)):
                continue
            if self.true_played.get(alt, 0) >= 2 and self.seen_played.get(alt, 0) >= 2:
                return alt
        return None

    def _illegal(self, hand: list[Card], top: Combo | None, level: str | None) -> list[Card] | None:
        for _ in range(20):
            a, b = self.rng.sample(hand, 2)
            if _ok([a, b], top, level, self.p):
                continue
            return [a, b]
        return None

    def side_mischief(self, turn: str) -> bool:
        """Out of turn, exposed card or a wrong count, before the seat on turn acts."""
        rng = self.rng
        kind = rng.choice(("out_of_turn", "exposed_card", "card_count"))
        active = [s for s in SEATS if self.hands[s]]
        if kind == "out_of_turn":
            others = [s for s in active if s != turn]
            if not others:
                return False
            s = rng.choice(others)
            card = rng.choice(self.hands[s])
            extra = self.record("out_of_turn", s)
            self.observe(
                Observation(self.tick(0.3, 2.0), "played", seat=s, cards=(card,), extra=extra)
            )
            return True
        s = rng.choice(active)
        if kind == "exposed_card":
            card = rng.choice(self.hands[s])
            extra = self.record("exposed_card", s)
            self.observe(
                Observation(self.tick(0.3, 2.0), "exposed", seat=s, cards=(card,), extra=extra)
            )
            return True
        true = len(self.hands[s])
        wrong = min(27, max(0, true + rng.choice((-2, -1, 1, 2))))
        if wrong == true:
            return False
        outcome = (
            "warning" if self.wrong_reports[s] < self.p.fouls.count_report_warnings else "foul"
        )
        self.wrong_reports[s] += 1
        extra = self.record("card_count", s, outcome=outcome)
        self.observe(
            Observation(self.tick(0.3, 2.0), "count_report", seat=s, count=wrong, extra=extra)
        )
        return True


def simulate(
    profile: Profile,
    *,
    deals: int,
    seed: int = 0,
    mischief: float = 0.0,
    table: str = "t1",
) -> SimResult:
    """Play ``deals`` deals (new matches start when one ends) and referee them live."""
    if deals < 0:
        raise ValueError(f"deals must be >= 0, got {deals}")
    if not 0.0 <= mischief <= 1.0:
        raise ValueError(f"mischief must be a rate between 0 and 1, got {mischief}")
    sim = _Sim(profile, seed, mischief, table)
    for _ in range(deals):
        sim.deal()
    return SimResult(
        observations=sim.obs,
        events=sim.ref.events,
        truth=sim.truth,
        referee=sim.ref,
        deals=deals,
        hands=sim.history,
    )
