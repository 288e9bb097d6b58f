"""Match points, standings with tie-breaks, the drawing of lots and Swiss pairing. Pure.

Sources (../shared/RULES.md, seeds):
- Match points come from the profile's ``[match]`` (``engine.profiles``): win 2 / draw 1 /
  loss 0 (002 竞赛细则 "勝者記2分，負者記0分，打平則雙方各記1分"); ``national``: win 3 / draw 2 /
  loss 1, no-show 0, bye 3 (2022 national rules, RULES.md).
- Order: points, then 级差分 (level difference), 对手分 (sum of the opponents' points), fouls
  (fewer first), then "比較前一輪成績，以此類推" — the last round's points, then the round
  before, and so on — and finally lots (抽簽決定名次) (002 竞赛细则 二).
- ``fouls.limit`` fouls by one pair in a round (three in every shipped profile): with
  ``fouls.penalty = "match_lost"`` the round is lost and the opponents get the win and a level
  difference of ``fouls.level_difference`` (10:-10 in Swiss, 002; RULES.md "Fouls"). With
  ``deal_lost`` the fouls only forfeit a deal, which the events already score. A no-show, or an
  admin ruling for one side, records the same level difference.
- Swiss: first round adjacent numbers 1-2, 3-4, ... (002 细则 "首輪配對採用臨近配對"), later
  rounds by standing without rematches; the pair listed first sits East-West (002
  "對陣表上排前者就座東西方位").
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from engine.cards import RANKS
from engine.profiles import FoulRules, MatchRules, Profile, list_profiles, load_profile

#: The named rule profiles the engine ships (RULES.md). The scoreboard accepts exactly these.
PROFILES = tuple(list_profiles())
LEVEL_VALUE = {r: i + 2 for i, r in enumerate(RANKS)}
_DEFAULT_FOULS = FoulRules()
_DEFAULT_MATCH = MatchRules()


class StandingsError(ValueError):
    """Bad input to standings or pairing (unknown profile, impossible pairing)."""


@dataclass(frozen=True)
class MatchPoints:
    """What a round's result is worth under one rule profile (its ``[match]`` and ``[fouls]``)."""

    win: int = _DEFAULT_MATCH.win_points
    draw: int = _DEFAULT_MATCH.draw_points
    loss: int = _DEFAULT_MATCH.loss_points
    no_show: int = _DEFAULT_MATCH.no_show_points
    bye: int = _DEFAULT_MATCH.bye_points
    bye_level_diff: int = 0
    #: fouls by one pair in a round that lose it (``fouls.limit``).
    foul_limit: int = _DEFAULT_FOULS.limit
    #: ``fouls.penalty == "match_lost"``: reaching the limit loses the round. ``deal_lost``: it
    #: only forfeits a deal, scored by the events, so the standings ignore the count.
    fouls_lose_round: bool = True
    #: 级差分 recorded for a forfeit, a no-show or a ruling (``fouls.level_difference``).
    forfeit_level_diff: int = _DEFAULT_FOULS.level_difference

    @classmethod
    def from_profile(cls, p: Profile) -> MatchPoints:
        m, f = p.match, p.fouls
        return cls(
            win=m.win_points,
            draw=m.draw_points,
            loss=m.loss_points,
            no_show=m.no_show_points,
            bye=m.bye_points,
            foul_limit=f.limit,
            fouls_lose_round=f.penalty == "match_lost",
            forfeit_level_diff=f.level_difference,
        )


@lru_cache(maxsize=64)
def _named(profile: str) -> MatchPoints:
    return MatchPoints.from_profile(load_profile(profile))


def match_points(profile: str | Profile) -> MatchPoints:
    """The scoring of a shipped profile (by name, as a tournament records it) or of a loaded
    :class:`engine.profiles.Profile`."""
    if isinstance(profile, Profile):
        return MatchPoints.from_profile(profile)
    if profile not in PROFILES:
        raise StandingsError(f"unknown profile {profile!r}: use one of {', '.join(PROFILES)}")
    return _named(profile)


@dataclass(frozen=True)
class MatchInput:
    """A match as the standings see it. ``ns`` is None for a bye."""

    round: int
    ew: int
    ns: int | None
    #: NS / EW / draw from the events (None while unfinished).
    winner: str | None = None
    level_ew: str = "2"
    level_ns: str = "2"
    fouls_ew: int = 0
    fouls_ns: int = 0
    #: Admin override: ew, ns, draw, ew_no_show, ns_no_show, both_no_show.
    override: str | None = None
    #: The organiser's final decision on a match left unfinished: ``as_played`` (``winner`` and
    #: the levels are then those of the events stored when decided), ``forfeit_ew`` /
    #: ``forfeit_ns`` (that side forfeits: scored like a foul forfeit), ``void`` (no result).
    decision: str | None = None
    #: deal points (3/2/1 a deal, 003 and 000 篇6) of each side under a deal-points profile:
    #: then the 级差分 of a played match is their difference (levels stay at 2)
    points_ew: int | None = None
    points_ns: int | None = None


@dataclass(frozen=True)
class PairResult:
    """One pair's line for one round."""

    round: int
    pair: int
    opponent: int | None
    outcome: str  # win, draw, loss, no_show, bye
    points: int
    level_diff: int
    fouls: int


def resolve(match: MatchInput, mp: MatchPoints) -> list[PairResult]:
    """The result lines of a match, or [] while it is undecided."""
    if match.ns is None:
        return [PairResult(match.round, match.ew, None, "bye", mp.bye, mp.bye_level_diff, 0)]
    ew, ns = match.ew, match.ns
    fe, fn = match.fouls_ew, match.fouls_ns

    def pair_lines(out_ew: str, out_ns: str, diff_ew: int) -> list[PairResult]:
        pts = {"win": mp.win, "draw": mp.draw, "loss": mp.loss, "no_show": mp.no_show}
        return [
            PairResult(match.round, ew, ns, out_ew, pts[out_ew], diff_ew, fe),
            PairResult(match.round, ns, ew, out_ns, pts[out_ns], -diff_ew, fn),
        ]

    forfeit = mp.forfeit_level_diff
    ov = match.override
    if ov == "ew":
        return pair_lines("win", "loss", forfeit)
    if ov == "ns":
        return pair_lines("loss", "win", -forfeit)
    if ov == "draw":
        return pair_lines("draw", "draw", 0)
    if ov == "ew_no_show":
        return pair_lines("no_show", "win", -forfeit)
    if ov == "ns_no_show":
        return pair_lines("win", "no_show", forfeit)
    if ov == "both_no_show":
        return pair_lines("no_show", "no_show", 0)
    if ov is None and match.decision == "void":
        return []
    if ov is None and match.decision == "forfeit_ew":
        return pair_lines("loss", "win", -forfeit)
    if ov is None and match.decision == "forfeit_ns":
        return pair_lines("win", "loss", forfeit)
    # ``fouls.limit`` fouls in a round lose it (002: three); both over the limit: both lose.
    if mp.fouls_lose_round:
        out_e, out_n = fe >= mp.foul_limit, fn >= mp.foul_limit
        if out_e and out_n:
            return pair_lines("loss", "loss", 0)
        if out_e:
            return pair_lines("loss", "win", -forfeit)
        if out_n:
            return pair_lines("win", "loss", forfeit)
    if match.winner is None:
        return []
    diff = LEVEL_VALUE.get(match.level_ew, 2) - LEVEL_VALUE.get(match.level_ns, 2)
    if match.points_ew is not None and match.points_ns is not None:
        diff = match.points_ew - match.points_ns
    if match.winner == "EW":
        return pair_lines("win", "loss", diff)
    if match.winner == "NS":
        return pair_lines("loss", "win", diff)
    return pair_lines("draw", "draw", diff)


def decision(match: MatchInput, mp: MatchPoints) -> tuple[str | None, str | None]:
    """How the standings count a match, for the pages and exports: (result, decided_by).

    result: ``EW``, ``NS``, ``draw``, ``both lost``, ``both no-show``, ``bye``, ``void`` or None
    while undecided; decided_by: ``override`` (an admin ruling or no-show), ``decision`` (the
    organiser's decision on an unfinished match), ``fouls`` (the profile's foul limit),
    ``events`` (the play) or ``bye``. Read from :func:`resolve`, so a page can never
    show a winner the standings do not count (three fouls lose a round the pair won at the table).
    """
    lines = resolve(match, mp)
    if not lines:
        if match.override is None and match.decision == "void":
            return "void", "decision"
        return None, None
    if lines[0].outcome == "bye":
        return "bye", "bye"
    ew, ns = lines[0].outcome, lines[1].outcome
    if ew == ns:
        result = {"draw": "draw", "loss": "both lost", "no_show": "both no-show"}[ew]
    else:
        result = "EW" if ew == "win" else "NS"
    if match.override is not None:
        return result, "override"
    if match.decision in ("forfeit_ew", "forfeit_ns"):
        return result, "decision"
    over = max(match.fouls_ew, match.fouls_ns) >= mp.foul_limit
    if mp.fouls_lose_round and over:
        return result, "fouls"
    return result, "decision" if match.decision == "as_played" else "events"


def lot(seed: int, pair_number: int) -> int:
    """The pair's lot in the seeded draw: a fixed number per (seed, pair), lower ranks first."""
    digest = hashlib.sha256(f"guandan-lots:{seed}:{pair_number}".encode()).hexdigest()
    return int(digest[:8], 16)


@dataclass
class Standing:
    rank: int
    pair: int
    name: str
    played: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    points: int = 0
    level_diff: int = 0
    opponents_points: int = 0
    fouls: int = 0
    lot: int = 0
    #: points per round, round 1 first (None where the pair has no result in that round).
    by_round: list[int | None] = field(default_factory=list)
    opponents: list[int] = field(default_factory=list)
    byes: int = 0

    def to_json(self) -> dict[str, object]:
        return {
            "rank": self.rank,
            "pair": self.pair,
            "name": self.name,
            "played": self.played,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "points": self.points,
            "level_diff": self.level_diff,
            "opponents_points": self.opponents_points,
            "fouls": self.fouls,
            "by_round": list(self.by_round),
            "lot": self.lot,
        }


CSV_COLUMNS = (
    "rank",
    "pair",
    "name",
    "played",
    "wins",
    "draws",
    "losses",
    "points",
    "level_diff",
    "opponents_points",
    "fouls",
    "lot",
)


def standings(
    profile: str | Profile,
    pairs: Iterable[tuple[int, str]],
    matches: Iterable[MatchInput],
    lots_seed: int,
) -> list[Standing]:
    """Rank pairs ``(number, name)`` by the tie-break chain of the module docstring."""
    mp = match_points(profile)
    table = {num: Standing(rank=0, pair=num, name=name) for num, name in pairs}
    lines: list[PairResult] = []
    rounds = 0
    for m in matches:
        rounds = max(rounds, m.round)
        lines.extend(resolve(m, mp))
    for s in table.values():
        s.by_round = [None] * rounds
        s.lot = lot(lots_seed, s.pair)
    for ln in lines:
        if ln.pair not in table:
            continue
        s = table[ln.pair]
        s.points += ln.points
        s.level_diff += ln.level_diff
        s.fouls += ln.fouls
        s.by_round[ln.round - 1] = (s.by_round[ln.round - 1] or 0) + ln.points
        if ln.outcome == "bye":
            s.byes += 1
            s.wins += 1
            continue
        s.played += 1
        if ln.outcome == "win":
            s.wins += 1
        elif ln.outcome == "draw":
            s.draws += 1
        else:
            s.losses += 1
        if ln.opponent is not None:
            s.opponents.append(ln.opponent)
    for s in table.values():
        s.opponents_points = sum(table[o].points for o in s.opponents if o in table)

    def key(s: Standing) -> tuple[object, ...]:
        latest_first = tuple(-(p or 0) for p in reversed(s.by_round))
        return (-s.points, -s.level_diff, -s.opponents_points, s.fouls, latest_first, s.lot)

    ordered = sorted(table.values(), key=key)
    for i, s in enumerate(ordered, start=1):
        s.rank = i
    return ordered


@dataclass(frozen=True)
class Pairing:
    ew: int
    ns: int | None  # None: bye


def swiss_pairings(
    ranked: Sequence[int],
    played: Iterable[tuple[int, int]],
    had_bye: Iterable[int],
    first_round: bool,
) -> list[Pairing]:
    """Pairings for the next round.

    ``ranked``: pair numbers best first (for round 1, any order: pairs go by number).
    ``played``: pairs of pair numbers that met already (no rematch). ``had_bye``: pairs that
    already had a bye (the bye goes to the lowest-ranked pair without one).
    """
    if len(set(ranked)) != len(ranked):
        raise StandingsError("a pair appears twice in the ranking")
    if len(ranked) < 2:
        raise StandingsError("need at least two pairs to pair a round")
    order = sorted(ranked) if first_round else list(ranked)
    met = {frozenset(p) for p in played}
    byes = set(had_bye)
    bye_pair: int | None = None
    if len(order) % 2:
        candidates = [p for p in reversed(order) if p not in byes] or [order[-1]]
        bye_pair = candidates[0]
        order.remove(bye_pair)
    if first_round:
        result = [Pairing(order[i], order[i + 1]) for i in range(0, len(order), 2)]
    else:
        found = _pair_no_rematch(order, met)
        if found is None:
            raise StandingsError(
                "no pairing without a rematch exists for this round: pair it by hand"
            )
        result = found
    if bye_pair is not None:
        result.append(Pairing(bye_pair, None))
    return result


def _pair_no_rematch(order: list[int], met: set[frozenset[int]]) -> list[Pairing] | None:
    # Depth-first: the best unpaired pair meets the next best it has not met; backtrack when
    # the rest cannot be paired. Bounded so a pathological case fails instead of hanging.
    budget = [200_000]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 2 * len(order) + 200))

    def go(rest: list[int]) -> list[Pairing] | None:
        if not rest:
            return []
        budget[0] -= 1
        if budget[0] < 0:
            return None
        top = rest[0]
        for j in range(1, len(rest)):
            other = rest[j]
            if frozenset((top, other)) in met:
                continue
            tail = go(rest[1:j] + rest[j + 1 :])
            if tail is not None:
                return [Pairing(top, other), *tail]
        return None

    return go(order)
