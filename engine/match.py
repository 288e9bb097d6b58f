"""Match scoring: levels, passing and failing A, deal points, forfeits and time-called results.

``MatchState`` is an immutable value (CONTRACT.md): every ``after_*`` method returns a new
state. Rules decisions (seed file names as in RULES.md):

- The deal is played at the level of the team that won the previous deal, the *declarer*
  (打家); the first deal at ``2`` with no declarer.
- Only the declarer can pass A, in a deal played at its own level A (000 篇3 "如果打到A，打家
  必须有一家是上游"): a team at A that wins a deal played at the opponents' level stays at A.
- Every deal the declarer plays at its own level A and does not pass is a failed attempt,
  whoever wins it. A declarer at A that wins without meeting the condition (e.g. 1-4) stays
  at A: it gains no levels and, with ``overflow_penalises``, takes nothing off the opponents
  (the texts say it must "play A again", 002 第一篇 "否则需再打A"). After ``pass_a.attempts``
  failures it drops to ``pass_a.reset_to`` and the count restarts.
- ``overflow_penalises`` (000 篇3, 002 第五篇): levels beyond A are taken off the opponents,
  down to 2; passing A also takes ``pass_a_penalty_double_down`` / ``_single_down`` off them.
  A team already at A that wins a deal played at the opponents' level gains nothing, so all
  its steps are overflow.
- Streak bonus (000 篇7): after the same player (or team) is first ``deals`` times in a row the
  team gains ``levels`` extra levels that deal; the run then starts again.
- Deal-point profiles (003, 000 篇6): no promotion; the winners score 3/2/1 by partner place;
  after ``deals.count`` deals the higher total wins, a tie is one more deal (or a draw).
- Random level per deal (000 篇6): the engine does no I/O and holds no hidden randomness. The
  level of deal ``k`` is drawn by cutting a 108-card deck with ``random.Random`` seeded from
  ``(seed, k)`` (``MatchState.new(profile, seed=...)``), or given explicitly as the cut card's
  rank (``next_level=`` / ``first_level=``). A joker drawn means no level card and no wilds
  that deal: ``deal_level`` is then ``None`` (000 篇6 "抽到大小王不带").
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from engine.profiles import Profile

__all__ = [
    "MatchState",
    "Series",
    "DealRecord",
    "TimeResult",
    "SEATS",
    "TEAMS",
    "team_of",
    "draw_level",
]

SEATS: Final = ("N", "E", "S", "W")
TEAMS: Final = ("NS", "EW")
LEVELS: Final = "23456789TJQKA"
_A: Final = len(LEVELS) - 1
_RESET_INDEX: Final = {"2": 0, "T": LEVELS.index("T"), "J": LEVELS.index("J")}
_NO_LEVEL: Final = object()  # sentinel: argument not given
#: The 108 cards as ranks for the cut (None = joker): 8 of each rank, 4 jokers.
_CUT_DECK: Final[tuple[str | None, ...]] = tuple(r for r in LEVELS for _ in range(8)) + (None,) * 4


def team_of(seat: str) -> str:
    """``NS`` for N and S, ``EW`` for E and W."""
    if seat in ("N", "S"):
        return "NS"
    if seat in ("E", "W"):
        return "EW"
    raise ValueError(f"unknown seat {seat!r}: seats are N, E, S, W")


def _other(team: str) -> str:
    return "EW" if team == "NS" else "NS"


def _ti(team: str) -> int:
    return 0 if team == "NS" else 1


def draw_level(rng: random.Random) -> str | None:
    """Cut a two-deck pack: the rank of the card drawn, or None for a joker (no wilds)."""
    return rng.choice(_CUT_DECK)


def _seeded_level(seed: int, deal_number: int) -> str | None:
    return draw_level(random.Random(f"guandan-level:{seed}:{deal_number}"))


def _check_level(value: object, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a level 2..A (or None for a joker), got {value!r}")
    v = value.strip().upper()
    v = "T" if v == "10" else v
    if len(v) != 1 or v not in LEVELS:
        raise ValueError(
            f"{what} = {value!r} is not a level: use 2..9, 10 or T, J, Q, K, A (None for a joker)"
        )
    return v


def _check_order(order: Sequence[str] | str) -> tuple[str, str, str, str]:
    if isinstance(order, str):
        items = [c for c in order if not c.isspace() and c != ","]
    else:
        items = list(order)
    seats: list[str] = []
    for s in items:
        if not isinstance(s, str) or s.strip().upper() not in SEATS:
            raise ValueError(
                f"finishing order {list(items)!r}: {s!r} is not a seat; give the four seats "
                "N, E, S, W first to last, e.g. ['S', 'E', 'N', 'W']"
            )
        seats.append(s.strip().upper())
    if len(seats) != 4 or len(set(seats)) != 4:
        raise ValueError(
            f"finishing order {list(items)!r} must name each of N, E, S, W exactly once, "
            "first to last"
        )
    return (seats[0], seats[1], seats[2], seats[3])


@dataclass(frozen=True, slots=True)
class DealRecord:
    """One scored deal (or a forfeit) in ``MatchState.history``."""

    number: int
    #: finishing order, first to last; empty for a forfeit
    order: tuple[str, ...]
    level: str | None
    declarer: str | None
    winner: str
    #: where the winner's partner finished: 2, 3 or 4 (0 for a forfeit)
    partner_place: int
    #: levels gained by the winner (after the A cap, before overflow) and streak bonus in it
    gained: int
    bonus: int
    #: levels taken off the loser (overflow_penalises)
    penalty: int
    points: int
    #: the declarer's A attempt in this deal: None, "passed", "failed" or "reset"
    a_attempt: str | None
    levels: tuple[str, str]
    forfeit: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "order": list(self.order),
            "level": self.level,
            "declarer": self.declarer,
            "winner": self.winner,
            "partner_place": self.partner_place,
            "gained": self.gained,
            "bonus": self.bonus,
            "penalty": self.penalty,
            "points": self.points,
            "a_attempt": self.a_attempt,
            "levels": {"NS": self.levels[0], "EW": self.levels[1]},
            "forfeit": self.forfeit,
        }


@dataclass(frozen=True, slots=True)
class TimeResult:
    """The outcome when time is called (after the deal in progress is finished)."""

    #: "NS", "EW" or None (draw, or one more deal needed)
    winner: str | None
    #: level, passed_a, deal_points, reached_first, last_deal_winner, draw, extra_deal, forfeit
    decided_by: str
    needs_extra_deal: bool
    match_points: dict[str, int]
    #: 级差分: level difference (index steps) per team, a forfeit's as the profile says
    level_difference: dict[str, int]


@dataclass(frozen=True, slots=True)
class MatchState:
    """The score of one match (one table) under a profile. Immutable; see the module doc."""

    profile: Profile
    level_pair: tuple[str, str] = ("2", "2")
    winner: str | None = None
    #: the match is over (``winner`` None with ``over`` True is a draw)
    over: bool = False
    failures: tuple[int, int] = (0, 0)
    #: level of the deal about to be played (None: a joker was cut, no level card, no wilds)
    deal_level: str | None = "2"
    #: team whose level is played next (the previous deal's winner); None before the first deal
    declarer: str | None = None
    points: tuple[int, int] = (0, 0)
    deals_played: int = 0
    history: tuple[DealRecord, ...] = ()
    #: deal number (0 = start) when each team reached its current level
    reached: tuple[int, int] = (0, 0)
    #: streak of firsts: (seat or team, count)
    streak: tuple[str | None, int] = (None, 0)
    seed: int = 0
    forfeited_by: str | None = None
    #: how the match ended: passed_a, deal_points, forfeit, draw, or a time rule
    #: (level, reached_first, last_deal_winner, draw)
    decided_by: str | None = None
    #: time was called (``after_time_called``) and the match went on for an extra deal
    time_called: bool = False

    # ------------------------------------------------------------------ construction
    @classmethod
    def new(cls, profile: Profile, *, seed: int = 0, first_level: object = _NO_LEVEL) -> MatchState:
        """A match at 2-2. For a random-level profile the first deal's level is ``first_level``
        (the cut card's rank; None = joker) or drawn from ``seed``."""
        if not isinstance(profile, Profile):
            raise ValueError(f"MatchState.new needs a Profile (load_profile(...)), got {profile!r}")
        level: str | None
        if profile.deals.level == "fixed":
            level = profile.deals.fixed_level
        elif profile.deals.level == "random":
            if first_level is _NO_LEVEL:
                level = _seeded_level(seed, 1)
            else:
                level = _check_level(first_level, "first_level")
        else:
            level = "2"
        if first_level is not _NO_LEVEL and profile.deals.level != "random":
            raise ValueError(
                f"first_level is only for random-level profiles; profile {profile.name!r} "
                f"plays deals.level = {profile.deals.level!r}"
            )
        return cls(profile=profile, deal_level=level, seed=seed)

    # ------------------------------------------------------------------ views
    @property
    def levels(self) -> dict[str, str]:
        """Current level per team, e.g. ``{"NS": "2", "EW": "2"}`` (a fresh dict)."""
        return {"NS": self.level_pair[0], "EW": self.level_pair[1]}

    @property
    def a_failures(self) -> dict[str, int]:
        """Failed attempts at A since the last reset, per team."""
        return {"NS": self.failures[0], "EW": self.failures[1]}

    @property
    def deal_points(self) -> dict[str, int]:
        """Deal points (3/2/1) per team; counted under every profile with ``deals.points``."""
        return {"NS": self.points[0], "EW": self.points[1]}

    @property
    def wilds(self) -> bool:
        """Whether the deal about to be played has wilds (False when a joker was cut)."""
        return self.deal_level is not None

    @property
    def next_deal(self) -> int:
        return self.deals_played + 1

    def is_a_attempt(self) -> bool:
        """The next deal is the declarer's attempt to pass A."""
        return (
            self.profile.promotes
            and self.declarer is not None
            and self.level_pair[_ti(self.declarer)] == "A"
            and self.deal_level == "A"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile.name,
            "levels": self.levels,
            "winner": self.winner,
            "over": self.over,
            "a_failures": self.a_failures,
            "deal_level": self.deal_level,
            "declarer": self.declarer,
            "deal_points": self.deal_points,
            "deals_played": self.deals_played,
            "history": [d.to_json() for d in self.history],
        }

    # ------------------------------------------------------------------ transitions
    def _require_open(self) -> None:
        if self.over:
            who = self.winner or "nobody (draw)"
            raise ValueError(f"the match is over ({who} won); start a new MatchState")

    def _passes(self, partner_place: int) -> bool:
        cond = self.profile.pass_a.condition
        if cond == "double_down_only":
            return partner_place == 2
        # partner_not_last and first_with_second_or_third (000 篇11) are the same test
        return partner_place in (2, 3)

    def after_deal(
        self, order: Sequence[str] | str, *, next_level: object = _NO_LEVEL
    ) -> MatchState:
        """The state after a deal with this finishing order (seats first to last).

        ``next_level`` is for random-level profiles only: the rank cut for the next deal (None
        for a joker); without it the level is drawn from the state's seed.
        """
        self._require_open()
        seats = _check_order(order)
        p = self.profile
        if next_level is not _NO_LEVEL and p.deals.level != "random":
            raise ValueError(
                f"next_level is only for random-level profiles; profile {p.name!r} plays "
                f"deals.level = {p.deals.level!r}"
            )
        first = seats[0]
        win = team_of(first)
        wi, li = _ti(win), 1 - _ti(win)
        partner_place = next(i + 1 for i, s in enumerate(seats) if s != first and team_of(s) == win)
        number = self.deals_played + 1

        table = p.deals.point_table
        pts = table[partner_place - 2] if table else 0
        points = list(self.points)
        points[wi] += pts

        # streak of firsts (000 篇7)
        key = first if p.streak_bonus.by == "player" else win
        run = self.streak[1] + 1 if self.streak[0] == key else 1
        bonus = 0
        if p.streak_bonus.enabled and run >= p.streak_bonus.deals:
            bonus = p.streak_bonus.levels
            run = 0
        streak: tuple[str | None, int] = (key, run)

        levels = [LEVELS.index(x) for x in self.level_pair]
        failures = list(self.failures)
        reached = list(self.reached)
        gained = penalty = 0
        a_attempt: str | None = None
        winner: str | None = None
        over = False
        decided: str | None = None

        if p.promotes:
            steps_table = p.promotion.steps
            assert steps_table is not None
            steps = steps_table[partner_place - 2] + bonus
            decl = self.declarer
            attempt = decl is not None and self.deal_level == "A" and levels[_ti(decl)] == _A
            if attempt and decl == win and self._passes(partner_place):
                a_attempt = "passed"
                winner, over, decided = win, True, "passed_a"
                if p.promotion.overflow_penalises:
                    penalty = (
                        p.promotion.pass_a_penalty_double_down
                        if partner_place == 2
                        else p.promotion.pass_a_penalty_single_down
                    )
            elif attempt and decl is not None:
                di = _ti(decl)
                failures[di] += 1
                a_attempt = "failed"
                if failures[di] >= p.pass_a.attempts:
                    failures[di] = 0
                    if p.pass_a.reset_to != "never":
                        a_attempt = "reset"
                        levels[di] = _RESET_INDEX[p.pass_a.reset_to]
                        reached[di] = number
                if decl != win:
                    gained, penalty = self._promote(levels, wi, steps)
            else:
                gained, penalty = self._promote(levels, wi, steps)
            if penalty:
                levels[li] = max(0, levels[li] - penalty)
                reached[li] = number
            if gained:
                reached[wi] = number
        elif p.deals.count and number >= p.deals.count and points[0] != points[1]:
            winner, over, decided = ("NS" if points[0] > points[1] else "EW"), True, "deal_points"
        elif p.deals.count and number >= p.deals.count and p.deals.tie == "draw":
            over, decided = True, "draw"

        new_levels = (LEVELS[levels[0]], LEVELS[levels[1]])
        record = DealRecord(
            number=number,
            order=seats,
            level=self.deal_level,
            declarer=self.declarer,
            winner=win,
            partner_place=partner_place,
            gained=gained,
            bonus=bonus,
            penalty=penalty,
            points=pts,
            a_attempt=a_attempt,
            levels=new_levels,
        )
        deal_level: str | None
        if p.deals.level == "fixed":
            deal_level = p.deals.fixed_level
        elif p.deals.level == "random":
            if next_level is _NO_LEVEL:
                deal_level = _seeded_level(self.seed, number + 1)
            else:
                deal_level = _check_level(next_level, "next_level")
        else:
            deal_level = new_levels[wi]
        return replace(
            self,
            level_pair=new_levels,
            winner=winner,
            over=over,
            decided_by=decided,
            failures=(failures[0], failures[1]),
            deal_level=deal_level,
            declarer=win,
            points=(points[0], points[1]),
            deals_played=number,
            history=self.history + (record,),
            reached=(reached[0], reached[1]),
            streak=streak,
        )

    def _promote(self, levels: list[int], wi: int, steps: int) -> tuple[int, int]:
        """Raise the winner by ``steps`` capped at A; return (gained, overflow penalty)."""
        target = levels[wi] + steps
        gained = min(target, _A) - levels[wi]
        levels[wi] = min(target, _A)
        overflow = max(0, target - _A)
        return gained, overflow if self.profile.promotion.overflow_penalises else 0

    def after_forfeit(self, losing_team: str) -> MatchState:
        """Three fouls by a pair (or a late pair): scored as ``profile.fouls.penalty`` says.

        ``match_lost`` (002): the match ends, the opponents win; ``TimeResult`` / ``result()``
        record the profile's level difference (3, or 10:-10 in Swiss). ``deal_lost``: the deal
        in progress is scored as a ``forfeit_levels`` win for the opponents (no A pass, no deal
        points beyond 3) and the match goes on, the opponents declaring next.
        """
        self._require_open()
        if losing_team not in TEAMS:
            raise ValueError(f"losing_team {losing_team!r} must be 'NS' or 'EW'")
        win = _other(losing_team)
        wi = _ti(win)
        p = self.profile
        number = self.deals_played + 1
        if p.fouls.penalty == "match_lost":
            record = DealRecord(
                number=number,
                order=(),
                level=self.deal_level,
                declarer=self.declarer,
                winner=win,
                partner_place=0,
                gained=0,
                bonus=0,
                penalty=0,
                points=0,
                a_attempt=None,
                levels=self.level_pair,
                forfeit=True,
            )
            return replace(
                self,
                winner=win,
                over=True,
                forfeited_by=losing_team,
                decided_by="forfeit",
                history=self.history + (record,),
            )
        levels = [LEVELS.index(x) for x in self.level_pair]
        gained = penalty = 0
        if p.promotes:
            gained, penalty = self._promote(levels, wi, p.fouls.forfeit_levels)
            levels[1 - wi] = max(0, levels[1 - wi] - penalty)
        table = p.deals.point_table
        pts = table[0] if table else 0
        points = list(self.points)
        points[wi] += pts
        new_levels = (LEVELS[levels[0]], LEVELS[levels[1]])
        reached = list(self.reached)
        if gained:
            reached[wi] = number
        if penalty:
            reached[1 - wi] = number
        record = DealRecord(
            number=number,
            order=(),
            level=self.deal_level,
            declarer=self.declarer,
            winner=win,
            partner_place=0,
            gained=gained,
            bonus=0,
            penalty=penalty,
            points=pts,
            a_attempt=None,
            levels=new_levels,
            forfeit=True,
        )
        state = replace(
            self,
            level_pair=new_levels,
            points=(points[0], points[1]),
            deals_played=number,
            history=self.history + (record,),
            reached=(reached[0], reached[1]),
            streak=(None, 0),
        )
        if p.deals.level == "promotion":
            state = replace(state, declarer=win, deal_level=new_levels[wi])
        elif p.deals.level == "random":
            state = replace(state, declarer=win, deal_level=_seeded_level(self.seed, number + 1))
        else:
            state = replace(state, declarer=win)
        if not p.promotes and p.deals.count and number >= p.deals.count and points[0] != points[1]:
            state = replace(
                state,
                winner="NS" if points[0] > points[1] else "EW",
                over=True,
                decided_by="deal_points",
            )
        return state

    # ------------------------------------------------------------------ results
    def _points_for(self, winner: str | None) -> dict[str, int]:
        m = self.profile.match
        if winner is None:
            return {"NS": m.draw_points, "EW": m.draw_points}
        return {winner: m.win_points, _other(winner): m.loss_points}

    def _level_diff(self) -> dict[str, int]:
        if self.forfeited_by is not None:
            d = self.profile.fouls.level_difference
            return {_other(self.forfeited_by): d, self.forfeited_by: -d}
        a, b = (LEVELS.index(x) for x in self.level_pair)
        return {"NS": a - b, "EW": b - a}

    def result_at_time(self, *, extra_deals_played: int = 0) -> TimeResult:
        """Who wins when time is called and the deal in progress has been scored.

        Higher level wins (deal points for deal-point profiles); equal -> ``time.tie``:
        ``reached_first`` (000 篇1: the team that reached the level in an earlier deal),
        ``last_deal_winner`` (002 第五篇: the last deal's 上游), ``draw`` (002 细则), or
        ``extra_deal`` (004 篇二: play one more deal, then call this again with
        ``extra_deals_played=1``; still equal then -> the last deal's winner).
        """
        lvl = self._level_diff()
        if self.over:
            by = self.decided_by or ("draw" if self.winner is None else "level")
            return TimeResult(self.winner, by, False, self._points_for(self.winner), lvl)
        if self.profile.promotes:
            a, b = (LEVELS.index(x) for x in self.level_pair)
            by = "level"
        else:
            a, b = self.points
            by = "deal_points"
        if a != b:
            w = "NS" if a > b else "EW"
            return TimeResult(w, by, False, self._points_for(w), lvl)
        tie = self.profile.time.tie
        if not self.profile.promotes:
            tie = "extra_deal" if self.profile.deals.tie == "extra_deal" else "draw"
        last = self.history[-1].winner if self.history else None
        if tie == "reached_first" and self.reached[0] != self.reached[1]:
            w = "NS" if self.reached[0] < self.reached[1] else "EW"
            return TimeResult(w, "reached_first", False, self._points_for(w), lvl)
        if tie == "extra_deal" and extra_deals_played == 0:
            return TimeResult(None, "extra_deal", True, {"NS": 0, "EW": 0}, lvl)
        if tie == "draw":
            return TimeResult(None, "draw", False, self._points_for(None), lvl)
        # last_deal_winner; extra_deal already played; reached_first with both teams reaching
        # their level in the same deal (an overflow penalty): the last deal's 上游 decides
        if last is not None:
            return TimeResult(last, "last_deal_winner", False, self._points_for(last), lvl)
        # no deal played at all: a draw
        return TimeResult(None, "draw", False, self._points_for(None), lvl)

    def after_time_called(self, *, extra_deals_played: int = 0) -> MatchState:
        """Time is called and the deal in progress has been scored: end the match by
        :meth:`result_at_time`. When the tie rule asks for one more deal the match stays open
        (``time_called`` set); call this again after that deal and it is settled."""
        self._require_open()
        extra = extra_deals_played or (1 if self.time_called else 0)
        r = self.result_at_time(extra_deals_played=extra)
        if r.needs_extra_deal:
            return replace(self, time_called=True)
        return replace(self, over=True, winner=r.winner, decided_by=r.decided_by, time_called=True)

    @property
    def last_order(self) -> tuple[str, ...] | None:
        """The previous deal's finishing order (decides the tribute), None before any deal or
        after a forfeit."""
        if not self.history or not self.history[-1].order:
            return None
        return self.history[-1].order

    def result(self) -> TimeResult:
        """The final result of a finished match (winner, match points, level difference)."""
        if not self.over:
            raise ValueError("the match is not over; use result_at_time() when time is called")
        return self.result_at_time()


@dataclass(frozen=True, slots=True)
class Series:
    """A best-of-N match (004: best of 3; ``profile.match.best_of``): games of ``MatchState``.

    Each game starts at 2-2 (random levels seeded with ``seed + game index``). A forfeit under
    ``fouls.penalty = "match_lost"`` loses the whole round (the series), as 002 scores it.
    """

    profile: Profile
    games: tuple[MatchState, ...] = ()
    current: MatchState | None = None
    seed: int = 0
    forfeited_by: str | None = None

    @classmethod
    def new(cls, profile: Profile, *, seed: int = 0) -> Series:
        return cls(profile=profile, current=MatchState.new(profile, seed=seed), seed=seed)

    @property
    def wins(self) -> dict[str, int]:
        out = {"NS": 0, "EW": 0}
        for g in self.games:
            if g.winner is not None:
                out[g.winner] += 1
        return out

    @property
    def winner(self) -> str | None:
        if self.forfeited_by is not None:
            return _other(self.forfeited_by)
        need = self.profile.match.best_of // 2 + 1
        for team, n in self.wins.items():
            if n >= need:
                return team
        return None

    @property
    def over(self) -> bool:
        return self.current is None

    def _game(self) -> MatchState:
        if self.current is None:
            raise ValueError(f"the series is over ({self.winner} won); start a new Series")
        return self.current

    def _settle(self, game: MatchState) -> Series:
        if not game.over:
            return replace(self, current=game)
        done = replace(self, games=self.games + (game,), current=None)
        if done.winner is not None:
            return done
        if len(done.games) >= self.profile.match.best_of:
            return done  # only drawn games left no winner
        nxt = MatchState.new(self.profile, seed=self.seed + len(done.games))
        return replace(done, current=nxt)

    def after_deal(self, order: Sequence[str] | str, *, next_level: object = _NO_LEVEL) -> Series:
        return self._settle(self._game().after_deal(order, next_level=next_level))

    def after_time_called(self, *, extra_deals_played: int = 0) -> Series:
        return self._settle(self._game().after_time_called(extra_deals_played=extra_deals_played))

    def after_forfeit(self, losing_team: str) -> Series:
        game = self._game().after_forfeit(losing_team)
        if game.forfeited_by is not None:
            return replace(self, games=self.games + (game,), current=None, forfeited_by=losing_team)
        return self._settle(game)
