"""Event formats besides Swiss: round robin and single elimination (knockout). Pure.

Sources (../shared/RULES.md "Deal points, matches and events", seeds):

- ``swiss``: as ``standings.swiss_pairings`` (002 竞赛细则).
- ``round_robin``: 000 篇2 "本次比赛采用五轮大循环积大小分的赛制" — every pair meets every
  other once (five rounds: six pairs), ranked by 大分 then 小分. The text names the two scores
  and nothing more; read as the scoreboard's two scores of a match: 大分 (big points) = the
  profile's match points (win / draw / loss), 小分 (small points) = 级差分, the level
  difference (RULES.md "Match results"). Further ties: the chain of ``standings.py`` (fouls,
  latest rounds, lots; 对手分 adds nothing when everyone meets everyone). The schedule is the
  circle method on the pairs of round 1 in draw-number order; an odd number of pairs gives
  each pair one bye. A pair withdrawn later leaves its opponents a bye in its rounds.
- ``knockout``: 002 第三篇 "采取淘汰制 … 采用抽簽方式決定對手 … 按1號與2號、3號與4號……
  勝者比賽進行第二輪" and "每場比賽先打到A取勝": the draw numbers (抽签号) are the draw; round 1
  pairs adjacent numbers, each later round the winners of adjacent matches (the earlier match's
  winner listed first, East-West). A number of pairs that is not a power of two gets byes in
  round 1 (lowest numbers first, spread between the games) so that round 2 is a full bracket.
  "敗者進入三四名競爭": after two semi-finals the last round is the final and the match for
  3rd/4th place. Every knockout match needs a winner (a draw, void or double loss is refused
  when the next round is made, naming the match and the ruling to set). Standings: champion,
  runner-up, 3rd, 4th, then by the round a pair went out (later first), ties by the chain of
  ``standings.py``.
- ``knockout_bo3``: the same, each meeting best of 3 (004 篇一/篇七 "比賽采用淘汰制 …
  采用三局兩勝制"): a round is one game of each meeting still undecided (same seats), the next
  bracket round is made once every meeting has a pair with two wins.
- ``knockout_bo3_sf``: one game a meeting, best of 3 from the semi-finals on (the final and
  the match for 3rd place too): 002 第三篇 "每輪比賽采用一局決勝制，進入半決賽采取三局二勝制".
  A bracket round of two meetings or fewer counts as the semi-finals.

Fixed-deal point matches (003, 000 篇6) are a deal-points profile in any of these formats
(``service.deal_points``). Not here (see the module's README): the repechage (附加赛) of 002
第三篇, 003's new draw before each round, group stage then knockout (000 篇11).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kiosk.scoreboard.standings import Pairing, Standing

FORMATS = ("swiss", "round_robin", "knockout", "knockout_bo3", "knockout_bo3_sf")
FORMAT_TEXT = {
    "swiss": "Swiss 瑞士移位",
    "round_robin": "Round robin, big/small points 大循环积大小分",
    "knockout": "Single elimination 淘汰制",
    "knockout_bo3": "Single elimination, best of 3 淘汰制三局两胜",
    "knockout_bo3_sf": (
        "Single elimination, best of 3 from the semi-finals 淘汰制（半决赛起三局两胜）"
    ),
}
#: games a knockout meeting is played over (the first to win more than half goes through):
#: one number for every round, or (before the semi-finals, from the semi-finals on)
BestOf = int | tuple[int, int]
BEST_OF: dict[str, BestOf] = {"knockout": 1, "knockout_bo3": 3, "knockout_bo3_sf": (1, 3)}


def round_best_of(best_of: BestOf, meetings: int) -> int:
    """Games a meeting of a bracket round of ``meetings`` meetings is played over: from the
    semi-finals on (two meetings or fewer) the second number of a pair."""
    if isinstance(best_of, tuple):
        return best_of[0] if meetings > 2 else best_of[1]
    return best_of


class FormatError(ValueError):
    """A round that cannot be made; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# ----------------------------------------------------------------------------- round robin


def round_robin_schedule(numbers: Sequence[int]) -> list[list[Pairing]]:
    """All rounds of a single round robin of ``numbers`` (draw-number order): the circle
    method, the first number fixed, the others turning; an odd count gives a bye a round
    (``Pairing(x, None)``, listed last). Seats alternate so no pair sits one way throughout."""
    order = sorted(numbers)
    if len(set(order)) != len(order):
        raise FormatError(422, "a pair appears twice in the round robin")
    if len(order) < 2:
        raise FormatError(422, "a round robin needs at least two pairs: add pairs first")
    slots: list[int | None] = list(order)
    if len(slots) % 2:
        slots.append(None)
    m = len(slots)
    rounds: list[list[Pairing]] = []
    for r in range(m - 1):
        games: list[Pairing] = []
        bye: list[Pairing] = []
        for i in range(m // 2):
            a, b = slots[i], slots[m - 1 - i]
            if i == 0 and r % 2:
                a, b = b, a
            elif i > 0 and i % 2:
                a, b = b, a
            if a is None or b is None:
                bye.append(Pairing(int(a if a is not None else b), None))  # type: ignore[arg-type]
            else:
                games.append(Pairing(a, b))
        rounds.append(games + bye)
        slots = [slots[0], slots[-1], *slots[1:-1]]
    return rounds


# ----------------------------------------------------------------------------- knockout


def first_knockout_round(numbers: Sequence[int]) -> list[Pairing]:
    """Round 1 of a knockout: ``2**k - n`` byes (lowest numbers first, alternating with the
    games while both remain) and adjacent numbers paired, so round 2 is a full bracket."""
    order = sorted(numbers)
    n = len(order)
    if n < 2:
        raise FormatError(422, "a knockout needs at least two pairs: add pairs first")
    size = 1
    while size < n:
        size *= 2
    slots = size // 2
    byes = size - n
    games = slots - byes
    out: list[Pairing] = []
    it = iter(order)
    for i in range(slots):
        if byes and (games == 0 or i % 2 == 0):
            out.append(Pairing(next(it), None))
            byes -= 1
        else:
            out.append(Pairing(next(it), next(it)))
            games -= 1
    return out


@dataclass(frozen=True)
class KoMatch:
    """A match (one game) of a knockout round as the format sees it: ``result`` as the
    standings count it (``standings.decision``: EW, NS, draw, both lost, both no-show, void,
    bye or None); ``round``: the scoreboard round it was played in."""

    match: int
    table: str | None
    ew: int
    ns: int | None
    result: str | None
    round: int = 0
    status: str | None = None


@dataclass
class Tie:
    """A meeting of two pairs in a bracket round: one game, or up to three (best of 3, the
    first to two wins goes through); a bye has no ``ns`` and no game to play."""

    ew: int
    ns: int | None
    games: list[KoMatch] = field(default_factory=list)
    #: games the meeting is played over (1 or 3)
    best_of: int = 1

    def pairs(self) -> frozenset[int | None]:
        return frozenset((self.ew, self.ns))

    def wins(self) -> dict[int, int]:
        out = {self.ew: 0}
        if self.ns is not None:
            out[self.ns] = 0
        for g in self.games:
            w = g.ew if g.result == "EW" else g.ns if g.result == "NS" else None
            if w in out:
                out[w] += 1
        return out


def _no_winner(m: KoMatch) -> FormatError:
    where = f"match {m.match} (round {m.round}, table {m.table}, pairs {m.ew} v {m.ns})"
    if m.result is None:
        return FormatError(
            409,
            f"{where} has no result yet: a knockout round is made from the winners of the "
            f"last one; let it finish, or set a ruling (ew / ns) on the admin page or POST "
            f"/api/v1/matches/{m.match}/override (第 {m.round} 轮未决出胜负)",
        )
    return FormatError(
        409,
        f"{where} ended '{m.result}', but a knockout match needs a winner (002 第三篇 "
        f"'每場比賽先打到A取勝'): set a ruling (ew / ns) on the admin page or POST "
        f"/api/v1/matches/{m.match}/override",
    )


def tie_outcome(tie: Tie) -> tuple[str, int | None, int | None]:
    """``("won", winner, loser)``, ``("more", None, None)`` (best of 3 at 1:0 or 1:1: another
    game), or ``("blocked", None, None)`` (a game without a winner: see ``blocking_game``)."""
    if tie.ns is None:
        return "won", tie.ew, None
    if blocking_game(tie) is not None:
        return "blocked", None, None
    need = tie.best_of // 2 + 1
    wins = tie.wins()
    for p, n in wins.items():
        if n >= need:
            return "won", p, tie.ns if p == tie.ew else tie.ew
    return "more", None, None


def blocking_game(tie: Tie) -> KoMatch | None:
    return next((g for g in tie.games if g.result not in ("EW", "NS")), None)


def group_ties(rounds: Sequence[Sequence[KoMatch]], best_of: BestOf = 1) -> list[list[Tie]]:
    """The bracket rounds: each scoreboard round starts a bracket round, except that with best
    of 3 a scoreboard round made only of the meetings left undecided (another game) continues
    the last one."""
    out: list[list[Tie]] = []
    for matches in rounds:
        if out and matches:
            open_ties = {t.pairs(): t for t in out[-1] if tie_outcome(t)[0] == "more"}
            keys = [frozenset((m.ew, m.ns)) for m in matches]
            if open_ties and all(k in open_ties for k in keys):
                for m, k in zip(matches, keys, strict=True):
                    open_ties[k].games.append(m)
                continue
        bo = round_best_of(best_of, len(matches))
        out.append([Tie(m.ew, m.ns, [m], bo) for m in matches])
    return out


@dataclass
class Bracket:
    """The state of a knockout after its rounds so far (bracket rounds, counted from 1)."""

    ties: list[list[Tie]] = field(default_factory=list)
    #: pairs still in, in bracket order (after the last decided round)
    alive: list[int] = field(default_factory=list)
    #: pair -> the bracket round it went out in
    out_in: dict[int, int] = field(default_factory=dict)
    #: final places once known (1..4)
    places: dict[int, int] = field(default_factory=dict)
    #: the bracket round that is the final (its 2nd meeting the one for 3rd place), if made
    final_round: int | None = None
    done: bool = False


def bracket_state(
    rounds: Sequence[Sequence[KoMatch]], best_of: BestOf = 1, strict: bool = True
) -> Bracket:
    """Replay the rounds in order. ``strict``: a game without a winner is a FormatError
    (making the next round); otherwise the replay stops there (standings, the bracket view)."""
    b = Bracket(ties=group_ties(rounds, best_of))
    semis = 0
    for idx, ties in enumerate(b.ties, start=1):
        is_final = idx > 1 and semis == 2 and len(ties) == 2 and len(b.alive) == 2
        if is_final:
            b.final_round = idx
        outcome = [tie_outcome(t) for t in ties]
        if strict:
            for t, (state, _w, _l) in zip(ties, outcome, strict=True):
                game = blocking_game(t) if state == "blocked" else None
                if game is not None:
                    raise _no_winner(game)
        if any(state != "won" for state, _w, _l in outcome):
            # what is known so far: the losers of decided meetings are out
            for state, _w, loser in outcome:
                if state == "won" and loser is not None and not is_final:
                    b.out_in[loser] = idx
            b.alive = [p for t in ties for p in (t.ew, t.ns) if p is not None]
            b.alive = [p for p in b.alive if p not in b.out_in]
            return b
        if is_final:
            (_s, champ, second), (_s2, third, fourth) = outcome
            assert champ is not None and third is not None
            b.places = {champ: 1}
            if second is not None:
                b.places[second] = 2
            b.places[third] = 3
            if fourth is not None:
                b.places[fourth] = 4
            for p in b.places:
                b.out_in.setdefault(p, idx)
            b.alive = [champ]
            b.done = True
            return b
        winners: list[int] = []
        for _s, w, loser in outcome:
            assert w is not None
            winners.append(w)
            if loser is not None:
                b.out_in[loser] = idx
        semis = sum(1 for t in ties if t.ns is not None) if len(ties) == 2 else 0
        b.alive = winners
        if len(winners) == 1:
            b.places = {winners[0]: 1}
            last = ties[0]
            if last.ns is not None:
                b.places[last.ns if winners[0] == last.ew else last.ew] = 2
            b.done = True
            return b
    return b


def next_knockout_round(rounds: Sequence[Sequence[KoMatch]], best_of: BestOf = 1) -> list[Pairing]:
    """The next round's pairings from the rounds so far: with best of 3, the next game of
    each meeting still undecided; else the winners of adjacent meetings (after the 2
    semi-finals: the final and the match for 3rd place)."""
    b = bracket_state(rounds, best_of, strict=True)
    if b.done:
        champ = next(p for p, place in b.places.items() if place == 1)
        raise FormatError(
            409, f"the knockout is decided: pair {champ} won the final (淘汰赛已决出冠军)"
        )
    last = b.ties[-1]
    more = [t for t in last if tie_outcome(t)[0] == "more"]
    if more:  # best of 3: the next game, the same seats
        return [Pairing(t.ew, t.ns) for t in more]
    alive = b.alive
    if len(alive) == 2 and len(last) == 2 and all(t.ns is not None for t in last):
        losers = [tie_outcome(t)[2] for t in last]
        return [Pairing(alive[0], alive[1]), Pairing(int(losers[0]), losers[1])]  # type: ignore[arg-type]
    if len(alive) % 2:
        # only after typed pairings: the last pair in bracket order has the bye
        return [Pairing(alive[i], alive[i + 1]) for i in range(0, len(alive) - 1, 2)] + [
            Pairing(alive[-1], None)
        ]
    return [Pairing(alive[i], alive[i + 1]) for i in range(0, len(alive), 2)]


def knockout_standings(
    base: list[Standing], rounds: Sequence[Sequence[KoMatch]], best_of: BestOf = 1
) -> list[Standing]:
    """Reorder ``base`` (the chain of ``standings.py``): final places first, then pairs still
    in, then by the round a pair went out (later first)."""
    b = bracket_state(rounds, best_of, strict=False)
    order = {s.pair: i for i, s in enumerate(base)}
    current = len(b.ties) + 1

    def key(s: Standing) -> tuple[int, int, int]:
        place = b.places.get(s.pair, 99)
        reached = b.out_in.get(s.pair, current if rounds else 0)
        return (place, -reached, order[s.pair])

    out = sorted(base, key=key)
    for i, s in enumerate(out, start=1):
        s.rank = i
    return out
