"""The deal referee: observations in, events out (CONTRACT.md), never seeing a hand.

:class:`Referee` reads what the table pipeline saw - cards played by a seat, passes, tribute
cards, shown and exposed cards, spoken counts, corrections - and emits the event log. The state
(:class:`engine.deal.TableState`) changes only by applying the emitted events, so
``fold(referee.events, profile) == referee.state`` holds at every step.

What it infers from plays alone: whose turn it is, whether each play is a combo that beats the
trick (the reading: strongest first, but the smaller full house when undeclared - 000 "否则只当小
牌用"), how many cards each seat still holds (27 at the start; tribute swaps one for one), who
went out in what place, when the deal ends (a team with both players out), the tribute and who
leads (engine/tribute.py), and the fouls of CONTRACT.md with the profile's penalty:

* ``out_of_turn``: a seat plays while another is on turn (or after it has gone out). The play is
  taken back and never moves the turn; the offender loses the trick (002 十一 3).
* ``illegal_play``: not a combo, or does not beat the trick, or the leader passes. It is flagged
  and never blocks the feed: the cards stay out (000 line 449), the trick is unchanged, the
  offender loses the trick.
* ``exposed_card``: cards seen outside a play; the offender loses the trick (002 十一 2).
* ``slow_play``: from the observation times, profile ``slow_play`` (002 第一篇 十二: 30 s normal,
  a warning, 15 s later a foul; 000 篇3: first play 40 s; returns within 40 s).
* ``card_count``: a spoken count (``count_report`` observation) that is wrong; the first
  ``fouls.count_report_warnings`` per seat are warnings (002 "第一次警告，第二次则记犯规").
  ``count_alert`` events say when a seat reaches the report threshold (报牌).
* ``wrong_tribute``: a wild as tribute, a return above the limit, or a tribute that was not the
  payer's highest card (seen when the payer plays a higher non-wild card it did not receive).
* ``duplicate_card``: a card seen a third time in a deal (two decks hold two): copies played,
  plus copies known to be in another hand (tribute, return, shown, exposed), plus this one. A
  probable misread: flagged for review, not counted against the pair.

Camera readings: which of the camera's readings of a play to judge is the decoder's job
(engine/decoder.py, mixed into :class:`Referee`): a ``played`` observation may carry runner-up
readings (``doubts``); a play illegal as read is re-read (``reread``: the cheapest legal reading
within ``REREAD_BUDGET``), and the play event then says so (``camera``: the cards as read,
``reread``: what changed and its cost). What the decoder decides later, in hindsight, reaches the
log as ``correction`` events. An honest illegal play stays one unless the camera doubted it.

A foul judged on a camera's reading (an observation with ``doubts`` or marked ``source:
camera`` by the table pipeline: an illegal or out-of-turn play, cards exposed, a slow play, a
wrong tribute; or a pass by "the leader" in a deal whose plays the camera reads: who leads is
the camera's reading of the trick before) keeps its penalty in the trick but is flagged
``review`` and does not count towards the pair's limit, nor voids a hand, until the referee
marks it (a ``foul`` observation): no foul inferred from the camera alone ends a deal or a
match.

Three counted fouls by a pair (``fouls.limit``): ``match_lost`` ends the match for the opponents,
``deal_lost`` scores the deal as a forfeit (``MatchState.after_forfeit``).

Corrections (``correction`` observations) replace or void the observation behind an earlier
event; the referee re-runs the corrected observations, appends a ``correction`` event
(``replaces``: the first event that changes; ``by``: the first event of the new continuation or
null) and then the corrected continuation. Nothing is deleted; :func:`engine.deal.fold` gives the
same state.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, NamedTuple

from engine.cards import BIG_JOKER, Card
from engine.channel import joker_colours
from engine.combos import Combo, ComboRules, classify
from engine.deal import (
    BARRING_FOULS,
    SEATS,
    TEAMS,
    DealState,
    TableState,
    apply_event,
    combo_json,
    play_level,
    third_copies,
)
from engine.decoder import (
    HINDSIGHT_WINDOW,
    REREAD_BUDGET,
    REREAD_BUDGET_IMPOSSIBLE,
    Decoder,
    reread,
)
from engine.events import Event, event_id
from engine.match import MatchState, team_of
from engine.observations import Observation, dump_observation, is_camera
from engine.profiles import Profile
from engine.tribute import (
    TributePlan,
    anti_tribute_holds,
    assign_double,
    higher_than_tribute,
    partner,
    plan_tribute,
    return_problem,
    tribute_problem,
)

__all__ = [
    "Referee",
    "referee_events",
    "choose_reading",
    "combo_json",
    "reread",
    "REREAD_BUDGET",
    "REREAD_BUDGET_IMPOSSIBLE",
    "CAMERA_REVIEW_FOULS",
    "HINDSIGHT_WINDOW",
]

#: Fouls judged on a camera's reading (an observation with ``doubts``, or one the table pipeline
#: marked ``source: camera``): flagged with ``review`` and counted towards the pair's limit only
#: when the referee marks them (a ``foul`` observation), since no foul inferred from the camera
#: alone may end a deal or a match (``fouls.limit``, a hand voided by a wrong tribute): it waits
#: for the floor referee. Its penalty in the trick (taken back, the trick lost) stands.
CAMERA_REVIEW_FOULS: Final = frozenset(
    {"illegal_play", "out_of_turn", "exposed_card", "slow_play", "wrong_tribute"}
)
_OTHER: Final = {"NS": "EW", "EW": "NS"}


class _Payload(NamedTuple):
    type: str
    t: float
    deal: int
    data: dict[str, Any]
    origin: int


@dataclass
class _Phase:
    """Tribute observations held until the leader is known (then emitted in order)."""

    plan: TributePlan
    t0: float
    origin: int
    base: dict[str, Any]
    level: str | None
    items: list[tuple[Observation, int]] = field(default_factory=list)
    paid: dict[str, Card] = field(default_factory=dict)
    shown: dict[str, list[Card]] = field(default_factory=dict)
    chosen: str | None = None


@dataclass
class _Ctx:
    """The tribute of the deal in progress, for returns."""

    payer_of: dict[str, str] = field(default_factory=dict)  # receiver -> payer
    tribute_t: dict[str, float] = field(default_factory=dict)  # receiver -> when it received
    returned: set[str] = field(default_factory=set)
    emitted: set[str] = field(default_factory=set)  # payers whose tribute event is out
    anti: bool = False
    anti_emitted: bool = False


def choose_reading(
    cards: Sequence[Card],
    top: Combo | None,
    level: str | None,
    profile: Profile,
    rules: ComboRules | None = None,
) -> tuple[Combo | None, str]:
    """The reading of a play against the trick ``top`` (None: a lead), or (None, why not).

    Strongest reading that qualifies; for a full house the smallest one, since an undeclared
    full house counts as the smaller (000: "出牌时要说明当何牌，否则只当小牌用")."""
    readings = classify(cards, level, rules=rules or profile.combo_rules)
    if not readings:
        mx = profile.combos.max_cards_per_play
        if mx is not None and len(cards) > mx:
            return None, f"{len(cards)} cards in one play; this profile allows at most {mx}"
        return None, "not a combo"
    if top is None:
        cand = readings
    else:
        cand = [r for r in readings if r.beats(top)]
        if not cand:
            return None, f"does not beat the trick ({top.kind} {top.key})"
    best = cand[0]
    if best.kind == "full_house":
        best = [r for r in cand if r.kind == "full_house"][-1]
    return best, ""


def _lead_banned(d: DealState, seat: str, combo: Combo) -> bool:
    """Whether leading ``combo`` is banned for ``seat`` this trick (``profile.fouls
    .partner_lead_ban``: the partner played out of turn)."""
    ban = d.lead_ban
    return (
        d.top is None
        and ban is not None
        and ban[0] == seat
        and ban[2] == d.tricks
        and combo.kind == ban[1]
    )


class _Core:
    """The deterministic machine: observation -> event payloads, applied to ``st`` as emitted."""

    def __init__(self, profile: Profile) -> None:
        self.p = profile
        self.rules = profile.combo_rules
        self.st = TableState.new(profile)
        self.out: list[_Payload] = []
        self.origin = 0
        self.phase: _Phase | None = None
        self.ctx = _Ctx()
        #: the observation being fed is a camera's reading of cards (it has doubts)
        self.camera = False
        #: flag CAMERA_REVIEW_FOULS on camera readings for review (Referee review_camera_fouls)
        self.review = True
        #: the deal in progress has camera readings of plays: who is on turn, and who leads,
        #: rests on them (a play the camera missed makes a leader of a seat that was answering)
        self.camera_deal = False
        #: seats barred from the trick by a foul on the camera's reading (``review``), whose
        #: barring lapses when the table sweeps (``_trick_cleared``); emptied (``emit``) once
        #: no seat is barred
        self.camera_barred: set[str] = set()
        #: plays and passes seen since the table's last clearing or the deal's start, but for
        #: plays out of turn (taken back): a sweep with none sweeps no trick (``_trick_cleared``)
        self.turns_since_clear = 0

    # ------------------------------------------------------------------ emit
    def emit(self, etype: str, t: float, data: dict[str, Any], combo: Combo | None = None) -> None:
        apply_event(self.st, etype, t, data, combo)
        self.out.append(_Payload(etype, t, self.st.deal_no, data, self.origin))
        if self.camera_barred and (self.st.deal is None or not self.st.deal.barred):
            self.camera_barred.clear()

    def notice(self, t: float, detail: str, **extra: Any) -> None:
        data: dict[str, Any] = {"detail": detail}
        data.update(extra)
        self.emit("notice", t, data)

    def foul(self, t: float, seat: str | None, kind: str, detail: str, **extra: Any) -> None:
        if kind == "duplicate_card":
            penalty = "review: probable misread, not counted"
        elif kind in ("out_of_turn", "exposed_card", "illegal_play") and seat is not None:
            penalty = (
                "loses the trick" if getattr(self.p.fouls, kind) == "lose_trick" else "foul only"
            )
            if kind == "out_of_turn":
                penalty = "taken back; " + penalty
        elif kind == "wrong_tribute" and extra.get("void"):
            penalty = "hand void (treated as last)"
        else:
            penalty = "foul"
        data: dict[str, Any] = {"seat": seat, "kind": kind, "detail": detail, "penalty": penalty}
        if self.review and self.camera and kind in CAMERA_REVIEW_FOULS and not extra.get("ruled"):
            # judged on the camera's reading of the cards: flagged for the floor referee, and
            # counted towards the pair's limit only when the referee marks it
            data["review"] = True
            data["penalty"] = f"{penalty}; camera reading: counts when the referee marks it"
        data.update(extra)
        self.emit("foul", t, data)
        if data.get("review") and kind in BARRING_FOULS and seat is not None:
            self.camera_barred.add(seat)

    # ------------------------------------------------------------------ feed
    def feed(self, obs: Observation, origin: int) -> list[_Payload]:
        self.out = []
        self.origin = origin
        self.camera = is_camera(obs)
        ty = obs.type
        if ty == "deal_start":
            self.camera_deal, self.turns_since_clear = False, 0
        elif ty == "played" and self.camera:
            self.camera_deal = True
        if self.phase is not None and ty in (
            "tribute",
            "tribute_return",
            "shown",
            "exposed",
            "count_report",
            "trick_cleared",
        ):
            self._phase_add(obs)
        else:
            if self.phase is not None:
                self._resolve(obs.t, complete=False)
            if ty == "deal_start":
                self._deal_start(obs)
            elif ty == "played":
                self._played(obs)
            elif ty == "pass":
                self._pass(obs)
            elif ty == "tribute_return":
                self._return(obs)
            elif ty == "exposed":
                self._exposed(obs)
            elif ty == "count_report":
                self._count_report(obs)
            elif ty == "trick_cleared":
                self._trick_cleared(obs)
            elif ty == "foul":
                self._ruled_foul(obs)
            elif ty == "deal_result":
                self._ruled_result(obs)
            elif ty in ("tribute", "shown"):
                self.notice(obs.t, f"{ty} by {obs.seat} outside the tribute: ignored")
            else:  # a correction reaching the core: the Referee handles those
                self.notice(obs.t, f"{ty} observation not handled here: ignored")
        taken_back = any(x.type == "foul" and x.data["kind"] == "out_of_turn" for x in self.out)
        if ty == "pass" or (ty == "played" and not taken_back):
            self.turns_since_clear += 1
        self._after(obs.t)
        return self.out

    def _live_deal(self) -> DealState | None:
        d = self.st.deal
        if d is None or d.over or self.st.match_over:
            return None
        return d

    # ------------------------------------------------------------------ deal start and tribute
    def _deal_start(self, obs: Observation) -> None:
        st, p = self.st, self.p
        d = st.deal
        if d is not None and not d.over and not st.match_over:
            self.notice(
                obs.t,
                f"deal {d.number} abandoned: a new deal started before it ended (no result)",
                abandoned=True,
            )
        new_match = st.match_over
        if new_match:
            match_no = st.match_no + 1
            game = 1 if (p.match.best_of == 1 or st.series_over) else st.game + 1
            match = MatchState.new(p)
            prev: tuple[str, ...] | None = None
        else:
            match_no, game, match, prev = st.match_no, st.game, st.match, st.prev_order
        level = match.deal_level
        if p.deals.level == "random" and obs.level != "":
            level = obs.level
        base: dict[str, Any] = {
            "level": level,
            "leader": None,
            "match": match_no,
            "game": game,
            "declarer": match.declarer,
            "levels": match.levels,
        }
        plan = plan_tribute(prev, p.tribute.enabled)
        self.ctx = _Ctx()
        if plan.kind == "none":
            if plan.first is None:
                leader = obs.first_leader
                base["lead_by"] = "first_leader" if leader else "unknown"
            elif p.tribute.no_tribute_leader == "previous_last":
                leader = plan.order[3]
                base["lead_by"] = "previous_last"
            else:
                leader = plan.first
                base["lead_by"] = "previous_first"
            base["leader"] = leader
            self.emit("deal_started", obs.t, base)
            return
        self.phase = _Phase(plan, obs.t, self.origin, base, level)

    def _phase_add(self, obs: Observation) -> None:
        ph = self.phase
        assert ph is not None
        ph.items.append((obs, self.origin))
        seat = obs.seat
        if obs.type == "tribute" and seat in ph.plan.payers and seat not in ph.paid:
            ph.paid[seat] = obs.card
            if obs.to is not None and obs.to == ph.plan.first:
                ph.chosen = seat
        elif obs.type == "shown" and seat in ph.plan.payers:
            ph.shown.setdefault(seat, []).extend(obs.cards)
        anti = self.p.tribute.anti_tribute and anti_tribute_holds(ph.plan, ph.shown)
        if anti or len(ph.paid) == len(ph.plan.payers):
            self._resolve(obs.t, complete=True)

    def _resolve(self, t: float, complete: bool) -> None:
        ph = self.phase
        assert ph is not None
        self.phase = None
        p, plan = self.p, ph.plan
        lv = play_level(ph.level)
        anti = p.tribute.anti_tribute and anti_tribute_holds(plan, ph.shown)
        ctx = self.ctx = _Ctx(anti=anti)
        how: str
        leader: str | None
        if anti:
            leader = (
                plan.first if p.tribute.no_tribute_leader == "previous_first" else plan.order[3]
            )
            how = "anti_tribute"
        elif plan.kind == "single":
            payer = plan.payers[0]
            ctx.payer_of[plan.receivers[0]] = payer
            leader, how = payer, "single_down"
        elif len(ph.paid) == 2:
            assign, leader, how = assign_double(
                plan, ph.paid, lv, p.tribute.double_tie, p.play.seat_order, ph.chosen
            )
            for payer, recv in assign.items():
                ctx.payer_of[recv] = payer
            how = "double_down_" + how
        else:
            # incomplete double tribute: the seen card goes to 上游, its giver leads
            seen = [s for s in plan.payers if s in ph.paid]
            if seen:
                ctx.payer_of[plan.receivers[0]] = seen[0]
                other = next(s for s in plan.payers if s != seen[0])
                ctx.payer_of[plan.receivers[1]] = other
                leader = seen[0]
            else:
                ctx.payer_of[plan.receivers[0]] = plan.payers[1]
                ctx.payer_of[plan.receivers[1]] = plan.payers[0]
                leader = None
            how = "double_down_incomplete"
        base = dict(ph.base)
        base["leader"] = leader
        base["lead_by"] = how
        base["tribute"] = plan.kind
        here = self.origin
        self.origin = ph.origin
        self.emit("deal_started", ph.t0, base)
        shown: dict[str, list[Card]] = {}
        for o, org in ph.items:
            self.origin = org
            self.camera = is_camera(o)
            if o.type == "tribute":
                self._tribute(o)
            elif o.type == "shown":
                if o.seat in plan.payers:
                    shown.setdefault(o.seat, []).extend(o.cards)
                if anti and not ctx.anti_emitted and anti_tribute_holds(plan, shown):
                    seats = [s for s in plan.payers if BIG_JOKER in shown.get(s, [])]
                    cards = {s: [str(c) for c in shown[s] if c == BIG_JOKER] for s in seats}
                    self.emit(
                        "anti_tribute", o.t, {"seats": seats, "leader": leader, "shown": cards}
                    )
                    ctx.anti_emitted = True
                elif not anti or o.seat not in plan.payers:
                    self.notice(o.t, f"cards shown by {o.seat}: not an anti-tribute")
            elif o.type == "tribute_return":
                self._return(o)
            elif o.type == "exposed":
                self._exposed(o)
            elif o.type == "count_report":
                self._count_report(o)
            else:
                self._trick_cleared(o)
        self.origin = here
        if not complete and not anti:
            missing = [s for s in plan.payers if s not in ph.paid]
            if missing:
                self.notice(t, "tribute not seen from " + ", ".join(missing), missing=missing)

    def _tribute(self, o: Observation) -> None:
        ctx, seat = self.ctx, o.seat
        assert seat is not None
        recv = next((r for r, pay in ctx.payer_of.items() if pay == seat), None)
        if ctx.anti or recv is None or seat in ctx.emitted:
            self.notice(o.t, f"tribute {o.card} by {seat} not expected: ignored")
            return
        ctx.emitted.add(seat)
        ctx.tribute_t[recv] = o.t
        self.emit("tribute", o.t, {"from": seat, "to": recv, "card": str(o.card)})
        if o.to is not None and o.to != recv:
            self.notice(
                o.t, f"tribute {o.card} by {seat} went to {o.to}; the rules give it to {recv}"
            )
        d = self.st.deal
        why = tribute_problem(o.card, d.level if d is not None else None)
        if why:
            self.foul(o.t, seat, "wrong_tribute", why, cards=[str(o.card)])

    def _return(self, o: Observation) -> None:
        ctx, seat, p = self.ctx, o.seat, self.p
        assert seat is not None
        d = self._live_deal()
        payer = ctx.payer_of.get(seat)
        if d is None or payer is None or seat in ctx.returned or seat not in ctx.tribute_t:
            self.notice(o.t, f"return {o.card} by {seat} not expected: ignored")
            return
        ctx.returned.add(seat)
        self.emit("tribute_returned", o.t, {"from": seat, "to": payer, "card": str(o.card)})
        if o.to is not None and o.to != payer:
            self.notice(o.t, f"return {o.card} by {seat} went to {o.to}; it is owed to {payer}")
        why = return_problem(
            o.card, seat, payer, d.level, p.tribute.return_limit, p.tribute.return_fallback
        )
        if why:
            self.foul(o.t, seat, "wrong_tribute", why, cards=[str(o.card)])
        waited = o.t - ctx.tribute_t[seat]
        if waited > p.slow_play.tribute_seconds:
            self.foul(
                o.t,
                seat,
                "slow_play",
                f"returned after {waited:.1f} s; the limit is {p.slow_play.tribute_seconds} s",
            )

    # ------------------------------------------------------------------ play
    def _slow(self, t: float, seat: str, d: DealState) -> None:
        sp = self.p.slow_play
        limit = sp.first_play_seconds if d.plays == 0 and d.top is None else sp.play_seconds
        waited = t - d.clock
        if waited <= limit:
            return
        foul_at = max(sp.warning_seconds, limit + sp.grace_seconds) if sp.warning else limit
        if waited > foul_at:
            self.foul(t, seat, "slow_play", f"took {waited:.1f} s; foul after {foul_at} s")
        else:
            self.emit(
                "warning",
                t,
                {"seat": seat, "kind": "slow_play", "detail": f"took {waited:.1f} s (> {limit} s)"},
            )

    def _played(self, obs: Observation) -> None:
        seat = obs.seat
        assert seat is not None
        cards = list(obs.cards)
        text = [str(c) for c in cards]
        d = self._live_deal()
        if d is None:
            self.notice(
                obs.t, f"play {' '.join(text)} by {seat} outside a deal: ignored", outside=True
            )
            return
        if d.counts[seat] == 0:
            self.foul(obs.t, seat, "out_of_turn", f"{seat} has gone out", cards=text)
            return
        seen: dict[Card, int] = {}
        for c in cards:
            seen[c] = seen.get(c, 0) + 1
        if d.turn is not None and seat != d.turn:
            extra: dict[str, Any] = {"cards": text}
            if self.p.fouls.partner_lead_ban and max(seen.values()) <= 2:
                readings = classify(cards, play_level(d.level), rules=self.rules)
                if readings:
                    extra["lead_ban"] = {"seat": partner(seat), "kind": readings[0].kind}
            self.foul(obs.t, seat, "out_of_turn", f"{d.turn} was on turn", **extra)
            return
        self._slow(obs.t, seat, d)
        reread_data: dict[str, Any] = {}
        if "reread" in obs.extra and "camera" in obs.extra:  # a second look's reading
            reread_data = {"camera": obs.extra["camera"], "reread": obs.extra["reread"]}
        elif obs.doubts and not self._legal(d, seat, cards):
            # three copies of a card in one play cannot be: the camera is wrong for sure, so
            # any of its runner-ups may be the truth; nor a play both illegal as a combination
            # and a third copy in the deal, which as a foul would need an earlier play misread
            # too (plastic 48947: N's SB read SB SB, "no card" at 3.27 and 4.19 nats, after an
            # SB played: a pair on a single). A third copy alone is weighed against the earlier
            # readings (``_third_copy``); otherwise an illegal play may be real
            three = max(seen.values()) > 2
            third = not three and bool(third_copies(d, seat, cards))
            impossible = three or (third and not self._fits(d, seat, cards))
            found = reread(
                cards,
                obs.doubts,
                lambda cs: self._legal(d, seat, cs),
                REREAD_BUDGET_IMPOSSIBLE if impossible else REREAD_BUDGET,
            )
            if found is not None:
                camera = text
                cards = found[0]
                text = [str(c) for c in cards]
                why_read = "more than two copies of a card" if three else "not a legal play"
                if impossible and not three:
                    why_read += ", and a card seen a third time this deal"
                reread_data = {
                    "camera": camera,
                    "reread": (
                        f"camera read {' '.join(camera)}: {why_read}; re-read as "
                        f"{' '.join(text)} ({', '.join(found[2])}; cost {found[1]:.2f})"
                    ),
                }
                seen = dict(Counter(cards))
        dup = [str(c) for c in third_copies(d, seat, cards)]
        if dup:
            self.foul(
                obs.t,
                seat,
                "duplicate_card",
                f"{', '.join(dup)} seen a third time this deal: probable misread",
                cards=dup,
            )
        if len(cards) > d.counts[seat]:
            self.notice(
                obs.t, f"{seat} played {len(cards)} cards but should hold only {d.counts[seat]}"
            )
        if any(n > 2 for n in seen.values()):
            combo, why = None, "not a combo: more than two copies of a card in one play"
        else:
            combo, why = choose_reading(cards, d.top, play_level(d.level), self.p, self.rules)
        if combo is not None and _lead_banned(d, seat, combo):
            kind = combo.kind
            combo = None
            why = (
                f"may not lead a {kind} this trick: the partner played out of turn (national 2022)"
            )
        # a second look's reading "this play emptied the hand": the cards the seat still held
        # by the referee's count went down unseen (in plays the camera missed or read short)
        unseen = max(0, d.counts[seat] - len(cards)) if obs.extra.get("rest_unseen") else 0
        if unseen:
            reread_data = {**reread_data, "unseen": unseen}
        left = max(0, d.counts[seat] - len(cards) - unseen)
        hi: Card | None = None
        if seat in d.paid and seat not in d.tribute_flagged:
            hi = higher_than_tribute(d.paid[seat], cards, list(d.received.get(seat, ())), d.level)
        if combo is None:
            self.emit(
                "play",
                obs.t,
                {
                    "seat": seat,
                    "cards": text,
                    "combo": None,
                    "legal": False,
                    "reason": why,
                    "left": left,
                    **reread_data,  # a second look's reading may be an illegal play too
                },
            )
            self.foul(obs.t, seat, "illegal_play", why, cards=text)
        else:
            self.emit(
                "play",
                obs.t,
                {
                    "seat": seat,
                    "cards": text,
                    "combo": combo_json(combo),
                    "legal": True,
                    "left": left,
                    **reread_data,
                },
                combo,
            )
        if hi is not None:
            # a wrong tribute seen by the camera voids no hand until the referee marks it
            pending = self.review and self.camera
            void = self.p.tribute.wrong_tribute == "hand_void" and left > 0 and not pending
            self.foul(
                obs.t,
                seat,
                "wrong_tribute",
                f"paid {d.paid[seat]} as tribute but held the higher {hi}",
                cards=[str(d.paid[seat]), str(hi)],
                void=void,
            )
            if void:
                self._check_end(obs.t, d)
                if d.over:
                    return
        n = self.p.report.card_count
        if 0 < left <= n and seat not in d.alerted:
            self.emit("count_alert", obs.t, {"seat": seat, "count": left, "threshold": n})
        if left == 0:
            self._seat_out(obs.t, seat, d)

    def _legal(self, d: DealState, seat: str, cards: list[Card]) -> bool:
        """Whether ``cards`` by ``seat`` (on turn) would be a legal play, with no card more than
        twice in the play and no third copy in the deal."""
        return not third_copies(d, seat, cards) and self._fits(d, seat, cards)

    def _fits(self, d: DealState, seat: str, cards: list[Card]) -> bool:
        """:meth:`_legal` but for the copies played before: a combination that may be played."""
        if max(Counter(cards).values()) > 2 or len(cards) > d.counts[seat]:
            return False
        combo, _ = choose_reading(cards, d.top, play_level(d.level), self.p, self.rules)
        return combo is not None and not _lead_banned(d, seat, combo)

    def _seat_out(self, t: float, seat: str, d: DealState) -> None:
        self.emit("seat_out", t, {"seat": seat, "place": len(d.order) + 1})
        self._check_end(t, d)

    def _check_end(self, t: float, d: DealState) -> None:
        """The deal ends when a team has both players out, or - with a void hand (national) -
        when at most one seat still plays; void hands finish last."""
        if d.over:
            return
        live = [s for s in SEATS if s not in d.order and s not in d.void]
        both_out = any(all(s in d.order for s in tm) for tm in TEAMS)
        if not both_out and not (d.void and len(live) <= 1):
            return
        order = self.st.seat_order
        turn = d.turn
        start = order.index(turn) if turn is not None else 0
        live.sort(key=lambda s: (d.counts[s], (order.index(s) - start) % 4))
        final = list(d.order) + live + sorted(d.void, key=order.index)
        new = self.st.match.after_deal(final)
        self.emit(
            "deal_ended",
            t,
            {
                "order": final,
                "levels": new.levels,
                "winner": team_of(final[0]),
                "deal_points": new.deal_points,
                "a_failures": new.a_failures,
                "a_attempt": new.history[-1].a_attempt,
            },
        )
        self._match_check(t)

    def _match_check(self, t: float) -> None:
        st, p = self.st, self.p
        m = st.match
        if m.over:
            by = "passed_a" if p.promotes else "deal_points"
            if m.winner is None:
                by = "draw"
            self._end_match(t, m.winner, by)
            return
        limit = p.time.limit_minutes * 60
        if limit and t - st.match_started >= limit and not st.time_called:
            self.emit("time_called", t, {"elapsed": round(t - st.match_started, 3)})
        if st.time_called and st.deals_after_time > 0:
            r = m.result_at_time(extra_deals_played=st.deals_after_time - 1)
            if r.needs_extra_deal:
                self.notice(t, "time called with the levels equal: one more deal")
            else:
                self._end_match(t, r.winner, r.decided_by)

    def _end_match(self, t: float, winner: str | None, reason: str, **extra: Any) -> None:
        st, p = self.st, self.p
        data: dict[str, Any] = {"winner": winner, "reason": reason}
        data.update(extra)
        m = st.match
        if "forfeit" in extra and not m.over:
            m = m.after_forfeit(extra["forfeit"])
        data["levels"] = m.levels
        data["deal_points"] = m.deal_points
        data["match"] = st.match_no
        data["game"] = st.game
        self.emit("match_ended", t, data)
        if p.match.best_of > 1:
            need = p.match.best_of // 2 + 1
            lead = next((tm for tm in TEAMS if st.series[tm] >= need), None)
            if lead is not None:
                self.emit("series_ended", t, {"winner": lead, "wins": dict(st.series)})

    def _pass(self, obs: Observation) -> None:
        seat = obs.seat
        assert seat is not None
        d = self._live_deal()
        if d is None:
            self.notice(obs.t, f"pass by {seat} outside a deal: ignored", outside=True)
            return
        if d.turn is None or seat != d.turn:
            who = d.turn if d.turn is not None else "the first leader"
            self.notice(
                obs.t, f"pass by {seat} while {who} is on turn: ignored", ignored="pass_out_of_turn"
            )
            return
        if d.top is None:
            # in a deal the camera reads, "the leader" is the camera's idea of who won the trick
            self.camera = self.camera_deal
            self.foul(obs.t, seat, "illegal_play", "the leader must play, not pass")
            return
        self._slow(obs.t, seat, d)
        self.emit("pass", obs.t, {"seat": seat})

    def _exposed(self, obs: Observation) -> None:
        text = [str(c) for c in obs.cards]
        if self._live_deal() is None:
            self.notice(obs.t, f"cards {' '.join(text)} exposed outside a deal")
            return
        d = self._live_deal()
        assert d is not None
        dup = third_copies(d, obs.seat, obs.cards)
        if dup:
            self.foul(
                obs.t,
                obs.seat,
                "duplicate_card",
                f"{', '.join(map(str, dup))} exposed but two copies are already accounted for: "
                "probable misread",
                cards=[str(c) for c in dup],
            )
        who = obs.seat if obs.seat is not None else "an unknown seat"
        self.foul(obs.t, obs.seat, "exposed_card", f"{' '.join(text)} exposed by {who}", cards=text)

    def _ruled_foul(self, obs: Observation) -> None:
        """A foul the referee marked by hand: recorded with the profile's penalty, like a foul
        the referee saw itself (it counts towards the pair's limit; a barring kind bars)."""
        kind = str(obs.extra["kind"])
        if self._live_deal() is None:
            self.notice(obs.t, f"{kind} foul by {obs.seat} marked outside a deal: ignored")
            return
        detail = str(obs.extra.get("detail") or "")
        text = "marked by the referee" + (f": {detail}" if detail else "")
        confirms = obs.extra.get("confirms")
        if isinstance(confirms, str) and confirms:
            # the referee confirms a camera foul flagged for review: it now counts; its penalty
            # (the trick lost) was applied when it was flagged
            self.emit(
                "foul",
                obs.t,
                {
                    "seat": obs.seat,
                    "kind": kind,
                    "detail": text,
                    "penalty": "counted: the referee confirmed the camera's foul",
                    "ruled": True,
                    "confirms": confirms,
                },
            )
            return
        self.foul(obs.t, obs.seat, kind, text, ruled=True)

    def _ruled_result(self, obs: Observation) -> None:
        """The referee ends the deal in progress with a finishing order (a conceded or disputed
        deal); seats already out keep their places. Scored as any deal (``MatchState``)."""
        d = self._live_deal()
        order = [str(s) for s in obs.extra["order"]]
        if d is None:
            self.notice(obs.t, f"deal result {' '.join(order)} ruled outside a deal: ignored")
            return
        if order[: len(d.order)] != d.order:
            self.notice(
                obs.t,
                f"deal result {' '.join(order)} ruled, but {' '.join(d.order)} are already out in "
                "that order: ignored (void or correct the plays instead)",
            )
            return
        new = self.st.match.after_deal(order)
        data: dict[str, Any] = {
            "order": order,
            "levels": new.levels,
            "winner": team_of(order[0]),
            "deal_points": new.deal_points,
            "a_failures": new.a_failures,
            "a_attempt": new.history[-1].a_attempt,
            "ruled": True,
        }
        if obs.extra.get("detail"):
            data["detail"] = str(obs.extra["detail"])
        self.emit("deal_ended", obs.t, data)
        self._match_check(obs.t)

    def _count_report(self, obs: Observation) -> None:
        seat = obs.seat
        assert seat is not None
        d = self._live_deal()
        if d is None:
            return
        actual = d.counts[seat]
        if obs.count == actual:
            return
        detail = f"{seat} reported {obs.count} cards but holds {actual}"
        if self.st.count_warnings[seat] < self.p.fouls.count_report_warnings:
            self.emit("warning", obs.t, {"seat": seat, "kind": "card_count", "detail": detail})
        else:
            self.foul(obs.t, seat, "card_count", detail)

    def _trick_cleared(self, obs: Observation) -> None:
        """The table swept a trick. One the referee still has open is a clash (the decoder
        looks again). One it had already closed by the turns, with a seat barred since by a
        foul on the camera's reading: by the table, the trick that seat lost is the one swept,
        so it plays again (game 47307, 2026-12-05: E's out-of-turn play came after the
        referee, misled by a misread bomb, had closed the trick, and E stayed barred in every
        trick after: four plays judged out of turn). Not where no turn was seen since the
        table's last clearing: nothing was swept but the cards taken back (proc-serif 48890 with
        the renderer's labels: E's ST out of turn, taken back from the empty table, seen as a
        clearing; E played again at once, and six plays were judged out of turn). A foul the
        referee marked keeps its penalty: a seat that played out of turn after the last pass
        loses the next trick."""
        d = self._live_deal()
        swept, self.turns_since_clear = self.turns_since_clear > 0, 0
        if d is not None and d.top is not None:
            self.notice(
                obs.t,
                f"trick cleared while the referee still has {d.owner}'s {d.top.kind} open, "
                f"{d.turn} to play",
                cleared_open=True,
            )
        elif d is not None and d.barred & self.camera_barred and swept:
            seats = sorted(d.barred & self.camera_barred)
            self.camera_barred.difference_update(seats)
            self.notice(
                obs.t,
                f"trick cleared: {', '.join(seats)} lost the trick swept and may play again",
                barring_lapses=seats,
            )

    # ------------------------------------------------------------------ after each observation
    def _after(self, t: float) -> None:
        st, p = self.st, self.p
        if st.match_over:
            return
        limit = p.time.limit_minutes * 60
        if limit and not st.time_called and t - st.match_started >= limit:
            self.emit("time_called", t, {"elapsed": round(t - st.match_started, 3)})
        d = self._live_deal()
        for team in TEAMS:
            if st.team_fouls[team] < p.fouls.limit or st.match_over:
                continue
            if p.fouls.penalty == "match_lost":
                self._end_match(t, _OTHER[team], "fouls", forfeit=team)
            elif d is not None:
                new = st.match.after_forfeit(team)
                self.emit(
                    "deal_ended",
                    t,
                    {
                        "order": [],
                        "levels": new.levels,
                        "winner": _OTHER[team],
                        "forfeit": team,
                        "deal_points": new.deal_points,
                    },
                )
                self._match_check(t)
                d = None


class Referee(Decoder):
    """Feed observations, get events. ``state`` is the live :class:`TableState`;
    ``events`` the whole log (corrections included)."""

    _core: _Core

    def __init__(
        self,
        profile: Profile,
        *,
        table: str = "t1",
        hindsight: bool = True,
        review_camera_fouls: bool = True,
    ) -> None:
        self.profile = profile
        self.table = table
        #: CAMERA_REVIEW_FOULS flagged for review (False: they count at once, as any foul)
        self.review_camera_fouls = review_camera_fouls
        self._core = self._new_core()
        self._obs: list[Observation] = []
        self._log: list[Event] = []
        self._effective: list[Event] = []
        self._origin: list[int] = []
        #: second look at camera plays judged illegal or out of turn (HINDSIGHT_WINDOW)
        self.hindsight = hindsight
        #: (observation index, core before it) of the current deal's deal_start
        self._deal_snap: tuple[int, _Core] | None = None
        #: the snapshot of the deal before (the table ending a deal by starting the next one
        #: sends the referee back into it: ``_gone`` at a deal's end)
        self._prev_snap: tuple[int, _Core] | None = None
        #: plays taken as a seat's last this deal (``_gone``, also at a clearing that ends it):
        #: (the reading put in, the one before, at the deal's end); undone when the seat plays
        #: or passes again, or (at the end) the table plays on in that deal
        self._gone_fixes: list[tuple[Observation, Observation, bool]] = []
        #: this deal's ``glimpse`` observations: cards seen too faintly to count, kept for
        #: hindsight alone (``_put_in``)
        self._glimpses: list[Observation] = []

    @property
    def state(self) -> TableState:
        return self._core.st

    @property
    def events(self) -> list[Event]:
        return list(self._log)

    @property
    def observations(self) -> list[Observation]:
        """The effective observations (corrections applied)."""
        return list(self._obs)

    def feed(self, obs: Observation) -> list[Event]:
        """Process one observation; return the events it produced (possibly none)."""
        if obs.type == "played" and is_camera(obs) and any(c.is_joker for c in obs.cards):
            obs = replace(obs, doubts=joker_colours(obs.cards, obs.doubts))
        if obs.type == "correction":
            self._gone_fixes = []
            self._deal_snap = None  # an earlier deal may have changed
            self._prev_snap = None
            return self._correct(obs)
        if obs.type == "played" and ("amends" in obs.extra or "was" in obs.extra):
            return self._late_cards(obs)
        if obs.type == "glimpse":  # no play: kept for hindsight (``_put_in``)
            self._glimpses.append(obs)
            return []
        idx = len(self._obs)
        if obs.type == "deal_start" and self.hindsight:
            self._prev_snap = self._deal_snap
            self._deal_snap = (idx, self._copy_core(self._core))
            self._gone_fixes = []
        self._obs.append(obs)
        out = self._publish(self._core.feed(obs, idx))
        if self.hindsight:
            out += self._second_look(obs, idx, out)
        if obs.type == "deal_start":  # after the look at the deal it ends (``_put_in``)
            self._glimpses = []
        return out

    def _notice(self, t: float, detail: str) -> list[Event]:
        """A notice at ``t`` that comes from no observation in the log (a correction or late
        cards that could not be applied)."""
        pl = _Payload("notice", t, self.state.deal_no, {"detail": detail}, len(self._obs))
        apply_event(self._core.st, pl.type, pl.t, pl.data)
        return self._publish([pl])

    def _new_core(self) -> _Core:
        core = _Core(self.profile)
        core.review = self.review_camera_fouls
        return core

    def _copy_core(self, core: _Core) -> _Core:
        return copy.deepcopy(core, {id(self.profile): self.profile})

    def _core_before(self, k: int) -> _Core:
        """A core that has seen the effective observations before index ``k``."""
        snap = next(
            (sn for sn in (self._deal_snap, self._prev_snap) if sn is not None and sn[0] <= k), None
        )
        if snap is not None:
            start, core = snap[0], self._copy_core(snap[1])
        else:
            start, core = 0, self._new_core()
        for i in range(start, k):
            core.feed(self._obs[i], i)
        return core

    def feed_all(self, observations: Iterable[Observation]) -> list[Event]:
        out: list[Event] = []
        for o in observations:
            out.extend(self.feed(o))
        return out

    def _publish(self, payloads: Sequence[_Payload], effective: bool = True) -> list[Event]:
        out: list[Event] = []
        for pl in payloads:
            seq = len(self._log) + 1
            ev = Event(
                type=pl.type,
                table=self.table,
                deal=pl.deal,
                seq=seq,
                t=pl.t,
                data=pl.data,
                id=event_id(self.table, seq),
            )
            self._log.append(ev)
            if effective:
                self._effective.append(ev)
                self._origin.append(pl.origin)
            out.append(ev)
        return out

    def _correct(self, obs: Observation) -> list[Event]:
        pos = next((i for i, e in enumerate(self._effective) if e.id == obs.replaces), None)
        if pos is None:
            return self._notice(
                obs.t, f"correction of {obs.replaces!r}: no such event in effect; ignored"
            )
        k = self._origin[pos]
        new_obs = self._obs[:k] + list(obs.replacement) + self._obs[k + 1 :]
        first_k = self._origin.index(k) if k in self._origin else pos
        data: dict[str, Any] = {
            "target": obs.replaces,
            "observation": (
                [dump_observation(o) for o in obs.replacement] if obs.replacement else None
            ),
        }
        if "reason" in obs.extra:
            data["reason"] = obs.extra["reason"]
        return self._rewrite(obs.t, new_obs, k, first_k, data)

    def _rewrite(
        self,
        t: float,
        new_obs: list[Observation],
        k: int,
        first_k: int,
        extra: Mapping[str, Any],
    ) -> list[Event]:
        """The effective observations become ``new_obs`` (the same as before up to index
        ``k``): a fresh core runs them, and a ``correction`` event at ``t`` replaces the first
        effective event (at or after position ``first_k`` at the latest) that then differs,
        followed by the new continuation. ``extra``: the correction's fields besides
        ``replaces``, ``by`` and ``voids``."""
        core = self._new_core()
        payloads: list[_Payload] = []
        for i, o in enumerate(new_obs):
            payloads.extend(core.feed(o, i))
        i = 0
        while (
            i < first_k
            and i < len(payloads)
            and _same(self._effective[i], payloads[i])
            and self._origin[i] == payloads[i].origin
        ):
            i += 1
        tail = payloads[i:]
        seq = len(self._log) + 1
        data: dict[str, Any] = {
            "replaces": self._effective[i].id,
            "by": event_id(self.table, seq + 1) if tail else None,
            "target": extra.get("target"),
            "voids": len(self._effective) - i,
        }
        data.update({x: v for x, v in extra.items() if x != "target"})
        corrections = self._core.st.corrections + 1
        core.st.corrections = corrections
        corr = _Payload("correction", t, core.st.deal_no, data, k)
        del self._effective[i:]
        del self._origin[i:]
        out = self._publish([corr], effective=False)
        out += self._publish(tail)
        self._core = core
        self._obs = new_obs
        # snapshots taken after the corrected observation no longer hold: take them again
        if self._prev_snap is not None and k < self._prev_snap[0]:
            self._prev_snap = None
        if self._deal_snap is not None and k < self._deal_snap[0]:
            at = max(i for i, o in enumerate(new_obs) if o.type == "deal_start")
            self._deal_snap = None
            self._deal_snap = (at, self._core_before(at))
        return out


def _same(ev: Event, pl: _Payload) -> bool:
    return ev.type == pl.type and ev.t == pl.t and ev.deal == pl.deal and ev.data == pl.data


def referee_events(
    profile: Profile, observations: Iterable[Observation], *, table: str = "t1"
) -> list[Event]:
    """Run a fresh referee over observations; the full event log."""
    ref = Referee(profile, table=table)
    ref.feed_all(observations)
    return ref.events
