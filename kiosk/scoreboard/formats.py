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

- ``knockout_redraw``: 003 "本次比赛实行淘汰赛赛制进行，比赛前抽签决定每组人员以及各组赛程，
  每轮比赛结束后，重新抽签决定下轮对手 … 差额小组自动轮空进入下轮抽签": round 1 pairs adjacent
  draw numbers; before every later round the pairs still in are drawn anew (``draw_order``:
  lots from the tournament's ``lots_seed`` and the round number, so the draw can be checked
  again); an odd number gives the last pair drawn a bye into the next round's draw (a pair
  that had no bye yet, where there is one). The text is silent on a match for 3rd place: after
  two semi-finals the scoreboard still adds it, as in ``knockout``; its standings are as
  ``knockout``. With ``six-deal-points`` this is 003 whole (6 deals at level 2, 3/2/1 points).
- ``knockout_repechage``: 002 第三篇 as its text gives it: "共計44對 … 第一輪淘汰22對，剩下22對
  選手按1號與2號、3號與4號……勝者比賽進行第二輪淘汰賽，第二輪淘汰11對，剩下11對重新抽簽進行第三
  輪比賽（本次1對輪空進入附加賽），第三輪比賽勝者5對進入復賽，敗者5對與輪空1對抽簽進入附加賽，
  勝者3對進入復賽" then "取初賽的前8組參加復賽 … 單局淘汰制，從而選出4強" and "半決賽採取三局二
  勝制 … 決賽採取三局二勝制". No byes in round 1: while the number of pairs still in is even
  and not a power of two, adjacent pairs meet (1 v 2, 3 v 4, … the winners of adjacent matches
  next). At an odd number n the pairs are drawn anew, the last drawn sits the round out into the
  repechage (附加賽, no match and no points: it has not won anything), and after the round the
  losers and that pair are drawn into the repechage, which sends on the number of pairs that
  makes the winners up to the largest power of two <= n (44 pairs: 11 -> 5 winners + 3 from a
  repechage of 6 = 8). Where the repechage has more pairs than twice the places it gives
  (another n than 11), it takes more than one round, each playing only as many matches as
  pairs must still go out, the others sitting that round out. From the power of two on (the
  復賽, drawn anew) it is ``knockout_bo3_sf``: one game a meeting, best of 3 from the
  semi-finals, the final and the match for 3rd place ("敗者進入三四名競爭"). A field that is a
  power of two from the start has no repechage. Standings as ``knockout``; a pair that lost in
  the repechage went out in the repechage's round. The text is silent on a pair that withdraws
  (退赛) while it sits out into the repechage or waits in it for its match: withdrawn, it would
  drop out unrecorded and the repechage would be made for one pair fewer, so the scoreboard
  refuses the withdrawal (409, naming the pair) and says to record its next match as its
  no-show, which gives its opponent the place; a withdrawn pair drawn to sit a round out, or
  found in the repechage (withdrawn by an older version), is refused when the round is made.
- ``groups_knockout``: group stage then knockout, 000 篇11 (万科 "比赛分为初赛、复赛、决赛三个
  阶段" — "小组赛对手均由初赛前抽签决定", "取初赛的前32组参加复赛", "按照淘汰制确定冠、亚、季
  军"). The text's numbers do not agree with each other: 128 players = 64 pairs play the 初赛
  "共2场，每场32组"; "取初赛的前32组参加复赛 … 经过两轮的竞争从而选出4强", but then "取复赛胜出
  的16名（共8组）参加决赛" and "经过两轮的竞争，按照淘汰制确定冠、亚、季军以及10位优胜奖选手",
  with prizes for "其他8强选手". Two knockout rounds from 32 pairs leave 8, not 4, and 8 pairs
  are what every later figure counts (16 players, 3 placed pairs + 10 优胜奖 players = 8
  pairs, "8强"), so "4强" is read as a slip for the last 8; two knockout rounds from 8 pairs
  cannot give a champion, a runner-up and a 3rd, so the knockout runs on to a final and a
  match for 3rd place as ``knockout`` (the 决赛's "两轮" is not followed). The 初赛 of 32
  pairs a session is read as the groups (``groups``, 2 by default, one a session), and "the
  top of the groups" as the same number from each group (``advance`` a group; 16 gives the
  text's 32). The text names 混战赛 for the groups and no way of ranking; a group plays the
  round robin of ``round_robin`` (each group's own circle schedule, the groups' round r in
  the scoreboard's round r) ranked by its 大分/小分 chain (000 篇2), which is the format's
  reading, not the text's. Groups by draw number (抽签号, the draw before the 初赛), in
  blocks: the first ceil(n/groups) numbers group A, and so on. The knockout is drawn by lots
  ("第三次抽签（桌号）定对手"; byes, when groups x advance is not a power of two, to the pairs
  placed highest in their groups), then it is ``knockout`` (one game a meeting, winners of
  adjacent matches), except for the fourth draw below. Standings: the knockout's places and
  rounds for the pairs that went through, then the others by their place in their group, then
  the chain.

  The fourth draw (附件 比赛详细规则 of 篇11, 000_d764c4aed33b9b6c.txt): "第一次抽签（序号）定
  对家，接着进行第二次抽签（桌号）定对手。同时开展初赛 … 第三次抽签（桌号）定对手。同时开展复赛
  … 第四次抽签（桌号）定对手。开展决赛", where a table-number draw is "由打对家中的一名选手按
  “桌号”抽定对手，桌号依次为1号、2号、3号…" (the two pairs that draw the same table number meet
  at that table). The 决赛 is the last 8 pairs ("取复赛胜出的16名（共8组）参加决赛"; "其他8强
  选手"), so the fourth draw is made when the knockout is down to 8 pairs (``FINAL_STAGE_PAIRS``)
  in a bracket round after its first: those 8 are drawn anew by lots (``fourth_draw``:
  ``draw_order`` of the tournament's ``lots_seed``, salt "fourth draw", so the draw can be
  checked again) and the 1st and 2nd drawn take table number 1 (the tournament's first table
  in use), the 3rd and 4th table number 2, and so on; the first drawn of a table is listed
  first (East-West on the sheet; the text seats them at the table by a card, "摸到小牌坐南北，
  大牌坐东西", which the scoreboard does not see). The first draw makes the pairs (序号定对家,
  before the scoreboard), the second the 初赛's opponents (the draw numbers, above), the third
  the knockout's first round (above).
  The text holds one draw for the 决赛, so its later rounds (semi-finals, the final and the
  match for 3rd place) pair the winners of adjacent matches of the drawn round, as ``knockout``.
  Our choices where the text is silent: the 决赛 is the round of the last 8 whatever the field
  (a knockout of 16 pairs has one round before it, the text's 32 two, "经过两轮的竞争"), not
  "two rounds after the knockout began"; a knockout of 8 pairs or fewer has no 复赛 and so no
  fourth draw (its one draw, the third, is the 决赛's). ``group_knockout_draws`` says which
  bracket round each draw made and whether the round stands as drawn (pairings typed by hand
  may differ); the bracket API, the board and export.json show it.

Fixed-deal point matches (003, 000 篇6) are a deal-points profile in any of these formats
(``service.deal_points``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kiosk.scoreboard.standings import Pairing, Standing

FORMATS = (
    "swiss",
    "round_robin",
    "knockout",
    "knockout_bo3",
    "knockout_bo3_sf",
    "knockout_redraw",
    "knockout_repechage",
    "groups_knockout",
)
FORMAT_TEXT = {
    "swiss": "Swiss 瑞士移位",
    "round_robin": "Round robin, big/small points 大循环积大小分",
    "knockout": "Single elimination 淘汰制",
    "knockout_bo3": "Single elimination, best of 3 淘汰制三局两胜",
    "knockout_bo3_sf": (
        "Single elimination, best of 3 from the semi-finals 淘汰制（半决赛起三局两胜）"
    ),
    "knockout_redraw": "Single elimination, drawn anew each round 淘汰制（每轮重新抽签）",
    "knockout_repechage": (
        "Single elimination with repechage, best of 3 from the semi-finals 淘汰制（附加赛，"
        "半决赛起三局两胜）"
    ),
    "groups_knockout": "Group stage (round robin) then knockout 小组循环赛后淘汰赛",
}
#: games a knockout meeting is played over (the first to win more than half goes through):
#: one number for every round, or (before the semi-finals, from the semi-finals on)
BestOf = int | tuple[int, int]
BEST_OF: dict[str, BestOf] = {
    "knockout": 1,
    "knockout_bo3": 3,
    "knockout_bo3_sf": (1, 3),
    "knockout_redraw": 1,
    "knockout_repechage": (1, 3),
    "groups_knockout": 1,
}
#: formats with a group stage before their bracket (its best of: ``BEST_OF``)
GROUP_FORMATS = ("groups_knockout",)
#: a group stage's defaults (000 篇11: two 初赛 sessions; see the module docstring)
DEFAULT_GROUPS = 2
DEFAULT_ADVANCE = 2


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
    #: bracket rounds before the plain bracket: round -> "repechage" (附加赛) or "round" (a
    #: round that halves the field before the repechage)
    stage_of: dict[int, str] = field(default_factory=dict)
    #: pairs that sat a bracket round out into the repechage (002 第三篇 "輪空進入附加賽")
    waiting: dict[int, list[int]] = field(default_factory=dict)


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


def next_knockout_round(
    rounds: Sequence[Sequence[KoMatch]], best_of: BestOf = 1, redraw_seed: int | None = None
) -> list[Pairing]:
    """The next round's pairings from the rounds so far: with best of 3, the next game of
    each meeting still undecided; else the winners of adjacent meetings (after the 2
    semi-finals: the final and the match for 3rd place). ``redraw_seed``: the winners are
    drawn anew first (003, ``knockout_redraw``), an odd one out has a bye."""
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
    if redraw_seed is not None:
        had_bye = {t.ew for ties in b.ties for t in ties if t.ns is None}
        return redraw(alive, redraw_seed, f"round {len(rounds) + 1}", had_bye)
    if len(alive) % 2:
        # only after typed pairings: the last pair in bracket order has the bye
        return [Pairing(alive[i], alive[i + 1]) for i in range(0, len(alive) - 1, 2)] + [
            Pairing(alive[-1], None)
        ]
    return [Pairing(alive[i], alive[i + 1]) for i in range(0, len(alive), 2)]


def knockout_standings(
    base: list[Standing],
    rounds: Sequence[Sequence[KoMatch]],
    best_of: BestOf = 1,
    bracket: Bracket | None = None,
    below: dict[int, int] | None = None,
) -> list[Standing]:
    """Reorder ``base`` (the chain of ``standings.py``): final places first, then pairs still
    in, then by the round a pair went out (later first). ``bracket``: the replay already made
    (else ``bracket_state`` of ``rounds``); ``below``: pairs not in the bracket (a group
    stage's others), ranked after every pair in it by the number given (their group place)."""
    b = bracket if bracket is not None else bracket_state(rounds, best_of, strict=False)
    order = {s.pair: i for i, s in enumerate(base)}
    current = len(b.ties) + 1
    below = below or {}

    def key(s: Standing) -> tuple[int, int, int, int]:
        if s.pair in below:
            return (1, below[s.pair], 0, order[s.pair])
        place = b.places.get(s.pair, 99)
        reached = b.out_in.get(s.pair, current if b.ties else 0)
        return (0, place, -reached, order[s.pair])

    out = sorted(base, key=key)
    for i, s in enumerate(out, start=1):
        s.rank = i
    return out


# ----------------------------------------------------------------------------- draws


def draw_order(seed: int, salt: str, pairs: Iterable[int]) -> list[int]:
    """A drawing of lots: ``pairs`` in the order of a hash of (seed, salt, pair), so a draw
    is the same however often it is asked for and can be checked from the tournament's
    ``lots_seed`` (``salt`` names the draw: a round, the repechage, ...)."""

    return sorted(pairs, key=lambda p: _lot_key(seed, salt, p))


def adjacent(order: Sequence[int]) -> list[Pairing]:
    """1st v 2nd, 3rd v 4th, ... of ``order``; an odd one out (the last) has a bye."""
    out = [Pairing(order[i], order[i + 1]) for i in range(0, len(order) - 1, 2)]
    if len(order) % 2:
        out.append(Pairing(order[-1], None))
    return out


def redraw(
    alive: Sequence[int], seed: int, salt: str, had_bye: set[int] | frozenset[int] = frozenset()
) -> list[Pairing]:
    """003 "每轮比赛结束后，重新抽签决定下轮对手 … 差额小组自动轮空进入下轮抽签": the pairs drawn
    anew and paired in the order drawn; with an odd number the bye goes to the last drawn of
    the pairs that had none yet (all of them had one: the last drawn)."""
    order = draw_order(seed, salt, alive)
    if len(order) % 2:
        fresh = [p for p in order if p not in had_bye] or order
        order.remove(fresh[-1])
        order.append(fresh[-1])
    return adjacent(order)


def first_redraw_round(numbers: Sequence[int]) -> list[Pairing]:
    """Round 1 of ``knockout_redraw``: adjacent draw numbers (the draw made before the event,
    003 "比赛前抽签决定每组人员以及各组赛程"), the highest number a bye if the count is odd."""
    order = sorted(numbers)
    if len(set(order)) != len(order):
        raise FormatError(422, "a pair appears twice in the knockout")
    if len(order) < 2:
        raise FormatError(422, "a knockout needs at least two pairs: add pairs first")
    return adjacent(order)


# ----------------------------------------------------------------------------- repechage


def _pow2(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def largest_power_of_two(n: int) -> int:
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


@dataclass
class Repechage:
    """Where a ``knockout_repechage`` stands (``repechage_state``)."""

    bracket: Bracket
    #: "main": rounds that halve the field; "repechage": the 附加赛 is on; "bracket": the
    #: field is a power of two and the knockout of ``knockout_bo3_sf`` runs
    phase: str
    #: main phase: the pairs still in, in order; bracket phase: the pairs that entered it
    alive: list[int]
    #: repechage phase: the pairs still in it, the places it gives, the winners waiting
    pool: list[int] = field(default_factory=list)
    places: int = 0
    through: list[int] = field(default_factory=list)
    #: scoreboard rounds before the bracket phase
    before: int = 0
    #: whether a repechage was played (the bracket's first round is then drawn anew)
    had_repechage: bool = False
    #: the rounds' replay stopped early (a round without a winner, or out of the format)
    stopped: bool = False


def _misfit(idx: int, what: str) -> FormatError:
    return FormatError(
        409,
        f"round {idx} does not fit a knockout with repechage: {what}; make the rounds by the "
        "format (POST .../rounds without pairings) or reopen the round and pair it again "
        "(002 第三篇)",
    )


def repechage_state(
    rounds: Sequence[Sequence[KoMatch]],
    field_: Iterable[int],
    best_of: BestOf = (1, 3),
    strict: bool = True,
) -> Repechage:
    """Replay a knockout with repechage (module docstring, 002 第三篇) from its field (the
    pairs of round 1, draw numbers) and its rounds. ``strict``: a game without a winner, or a
    round that does not fit the format, is a FormatError; else the replay stops there."""
    b = Bracket()
    alive = sorted(field_)
    if len(alive) < 2:
        raise FormatError(422, "a knockout needs at least two pairs: add pairs first")
    st = Repechage(bracket=b, phase="main", alive=alive)
    j = 0
    while j < len(rounds) and (st.phase == "repechage" or not _pow2(len(st.alive))):
        idx = j + 1
        matches = rounds[j]
        games = [m for m in matches if m.ns is not None]
        byes = [m for m in matches if m.ns is None]
        players = [p for m in games for p in (m.ew, m.ns)]
        group = st.alive if st.phase == "main" else st.pool
        sitting = [p for p in group if p not in players]
        stray = sorted(set(players) - set(group))
        if st.phase == "main":
            want = len(group) // 2
        else:
            want = min(len(group) - st.places, len(group) // 2)
        problem = None
        if byes:
            problem = f"pair {byes[0].ew} has a bye (this format has none: one pair sits out)"
        elif stray:
            problem = f"pair(s) {', '.join(map(str, stray))} are not in it at this stage"
        elif len(games) != want or len(set(players)) != len(players):
            problem = f"it has {len(games)} match(es), the format plays {want}"
        if problem is not None:
            if idx == 1 and len(sitting) > len(group) % 2:
                problem += (
                    f"; pair(s) {', '.join(map(str, sitting))} have no match in round 1 (one "
                    "pair at most sits out, into the repechage): withdraw a pair that joined "
                    "after round 1"
                )
            if strict:
                raise _misfit(idx, problem)
            st.stopped = True
            return st
        ties = [Tie(m.ew, m.ns, [m], 1) for m in games]
        outcome = [tie_outcome(t) for t in ties]
        blocked = next((t for t, o in zip(ties, outcome, strict=True) if o[0] != "won"), None)
        b.ties.append(ties)
        b.stage_of[idx] = "repechage" if st.phase == "repechage" else "round"
        if st.phase == "main" and len(group) % 2:
            b.waiting[idx] = sitting
        if blocked is not None:
            game = blocking_game(blocked)
            if strict and game is not None:
                raise _no_winner(game)
            st.stopped = True
            return st
        winners = [int(w) for _s, w, _l in outcome if w is not None]
        losers = [int(lo) for _s, _w, lo in outcome if lo is not None]
        if st.phase == "main":
            if len(group) % 2 == 0:
                for p in losers:
                    b.out_in[p] = idx
                st.alive = winners
            else:  # 輪空進入附加賽: the losers and the pair that sat out
                st.phase = "repechage"
                st.through = winners
                st.pool = losers + sitting
                st.places = largest_power_of_two(len(group)) - len(winners)
                st.had_repechage = True
        else:
            for p in losers:
                b.out_in[p] = idx
            st.pool = winners + sitting
            if len(st.pool) == st.places:
                st.alive = st.through + st.pool
                st.phase = "main"
                st.through, st.pool, st.places = [], [], 0
        j += 1
    if st.phase == "repechage" or not _pow2(len(st.alive)):
        b.alive = list(st.through + st.pool) if st.phase == "repechage" else list(st.alive)
        st.before = j
        return st
    st.phase = "bracket"
    st.before = j
    b.alive = list(st.alive)
    if len(rounds) > j:
        tail = bracket_state(rounds[j:], best_of, strict=strict)
        b.ties.extend(tail.ties)
        b.out_in.update({p: r + j for p, r in tail.out_in.items()})
        b.places = tail.places
        b.final_round = tail.final_round + j if tail.final_round is not None else None
        b.done = tail.done
        b.alive = tail.alive
    return st


def next_repechage_round(
    rounds: Sequence[Sequence[KoMatch]], field_: Iterable[int], seed: int, best_of: BestOf = (1, 3)
) -> list[Pairing]:
    """The next round of a knockout with repechage (``repechage_state``): the pairs that sit a
    round out, into the repechage or through it, have no pairing (nor a match)."""
    st = repechage_state(rounds, field_, best_of, strict=True)
    n = len(rounds) + 1
    if st.phase == "repechage":
        pool = st.pool
        if st.bracket.stage_of.get(n - 1) != "repechage":  # the first repechage round: drawn
            pool = draw_order(seed, f"repechage {n}", pool)
        games = min(len(pool) - st.places, len(pool) // 2)
        return adjacent(pool[: 2 * games])
    if st.phase == "main":
        alive = st.alive
        if len(alive) % 2 == 0:
            return adjacent(alive)
        # 剩下11對重新抽簽 … 1對輪空進入附加賽: drawn anew (round 1: the draw numbers), the
        # last drawn sits out
        order = alive if not rounds else draw_order(seed, f"round {n}", alive)
        return adjacent(order[:-1])
    tail = rounds[st.before :]
    if not tail:
        order = st.alive
        if st.had_repechage:  # 取初賽的前8組參加復賽，採用抽簽方式決定對手
            order = draw_order(seed, f"round {n}", order)
        return adjacent(order)
    return next_knockout_round(tail, best_of)


# ----------------------------------------------------------------------------- groups


def group_name(i: int) -> str:
    """A, B, ..., Z, then A2, B2, ..."""
    return chr(ord("A") + i % 26) + (str(i // 26 + 1) if i >= 26 else "")


def assign_groups(field_: Iterable[int], groups: int) -> dict[str, list[int]]:
    """The groups by draw number in blocks (module docstring): the first ceil(n/groups)
    numbers group A, and so on (sizes differ by one at most, larger groups first)."""
    order = sorted(field_)
    if len(set(order)) != len(order):
        raise FormatError(422, "a pair appears twice in the group stage")
    if groups < 1:
        raise FormatError(422, "a group stage needs at least one group")
    if len(order) < 2 * groups:
        raise FormatError(
            422,
            f"{len(order)} pairs cannot make {groups} groups of at least two: add pairs or "
            "make fewer groups",
        )
    base, extra = divmod(len(order), groups)
    out: dict[str, list[int]] = {}
    at = 0
    for i in range(groups):
        size = base + (1 if i < extra else 0)
        out[group_name(i)] = order[at : at + size]
        at += size
    return out


def group_schedule(groups: dict[str, list[int]]) -> list[list[tuple[str, Pairing]]]:
    """The group stage's rounds: round r of every group's round robin (``round_robin_schedule``)
    in the scoreboard's round r, games first (group by group), byes last. A smaller group has
    played all its rounds before a larger one."""
    per = {g: round_robin_schedule(nums) for g, nums in groups.items()}
    total = max(len(x) for x in per.values())
    out: list[list[tuple[str, Pairing]]] = []
    for r in range(total):
        games = [(g, p) for g, x in per.items() if r < len(x) for p in x[r] if p.ns is not None]
        byes = [(g, p) for g, x in per.items() if r < len(x) for p in x[r] if p.ns is None]
        out.append(games + byes)
    return out


def check_advance(groups: dict[str, list[int]], advance: int) -> None:
    smallest = min(len(v) for v in groups.values())
    if advance < 1 or advance >= smallest:
        raise FormatError(
            422,
            f"advance {advance} from each group: it must be at least 1 and less than the "
            f"smallest group ({smallest} pairs)",
        )
    if advance * len(groups) < 2:
        raise FormatError(422, "the knockout needs at least two pairs from the groups")


def knockout_draw(qualified: Sequence[Sequence[int]], seed: int) -> list[Pairing]:
    """The knockout's first round from the groups (``qualified``: each group's pairs that go
    through, best first): drawn by lots (000 篇11 "第三次抽签（桌号）定对手"); when their number
    is not a power of two, the byes go to the pairs placed highest in their groups (group
    winners first, by lot among equals), spread between the games as in
    ``first_knockout_round``."""
    flat = [p for g in qualified for p in g]
    n = len(flat)
    if n < 2:
        raise FormatError(422, "the knockout needs at least two pairs from the groups")
    size = 1
    while size < n:
        size *= 2
    nbyes = size - n
    place = {p: i for g in qualified for i, p in enumerate(g)}
    by_place = sorted(flat, key=lambda p: (place[p], _lot_key(seed, "byes", p)))
    bye_pairs = by_place[:nbyes]
    drawn = draw_order(seed, "knockout", [p for p in flat if p not in bye_pairs])
    slots = size // 2
    games = slots - nbyes
    out: list[Pairing] = []
    b_it, d_it = iter(bye_pairs), iter(drawn)
    left = nbyes
    for i in range(slots):
        if left and (games == 0 or i % 2 == 0):
            out.append(Pairing(next(b_it), None))
            left -= 1
        else:
            out.append(Pairing(next(d_it), next(d_it)))
            games -= 1
    return out


#: 000 篇11 "取复赛胜出的16名（共8组）参加决赛": the 决赛's pairs, drawn anew by the fourth draw
FINAL_STAGE_PAIRS = 8
#: the draws of the knockout (000 篇11), as the text names them
DRAW_TEXT = {3: "第三次抽签（桌号）定对手", 4: "第四次抽签（桌号）定对手"}
FOURTH_DRAW_SALT = "fourth draw"


def fourth_draw(pairs: Iterable[int], seed: int) -> list[Pairing]:
    """000 篇11 "第四次抽签（桌号）定对手。开展决赛" (module docstring): the pairs of the 决赛
    drawn by lots; the 1st and 2nd drawn meet at table number 1, the 3rd and 4th at table
    number 2, ... (the pairings in table-number order, the first drawn listed first)."""
    order = draw_order(seed, FOURTH_DRAW_SALT, pairs)
    if len(order) != FINAL_STAGE_PAIRS:
        raise FormatError(
            409,
            f"the fourth draw (决赛) is made for {FINAL_STAGE_PAIRS} pairs, not {len(order)} "
            "(000 篇11 '取复赛胜出的16名（共8组）参加决赛')",
        )
    return adjacent(order)


def fourth_draw_due(b: Bracket) -> bool:
    """Whether the next round of a group stage's knockout (``b``: its replay) is the 决赛's
    fourth draw: the last bracket round after the first is decided and left 8 pairs in."""
    if b.done or len(b.ties) < 1:
        return False
    if any(tie_outcome(t)[0] != "won" for t in b.ties[-1]):
        return False
    return len(b.alive) == FINAL_STAGE_PAIRS


def next_group_knockout_round(
    ko_rounds: Sequence[Sequence[KoMatch]], seed: int, best_of: BestOf = 1
) -> list[Pairing]:
    """The next round of a group stage's knockout after its first (``ko_rounds``: its rounds
    so far): the fourth draw when it is down to the 决赛's 8 pairs, else as ``knockout``."""
    b = bracket_state(ko_rounds, best_of, strict=True)
    if fourth_draw_due(b):
        return fourth_draw(b.alive, seed)
    return next_knockout_round(ko_rounds, best_of)


def group_knockout_draws(b: Bracket, seed: int) -> dict[int, dict[str, object]]:
    """The draws the knockout of ``groups_knockout`` was made by, by bracket round: round 1 is
    the third draw; the round that the last 8 pairs played after the first (if any) is the
    fourth, with its lots (each pair's table number) and ``as_drawn`` (the round's pairings
    are the draw's, in its table-number order: false where they were typed otherwise)."""
    out: dict[int, dict[str, object]] = {}
    if not b.ties:
        return out
    out[1] = {"number": 3, "text": DRAW_TEXT[3]}
    for idx, ties in enumerate(b.ties[1:], start=2):
        pairs = [p for t in ties for p in (t.ew, t.ns) if p is not None]
        if len(pairs) != FINAL_STAGE_PAIRS:
            continue
        order = draw_order(seed, FOURTH_DRAW_SALT, pairs)
        drawn = adjacent(order)
        out[idx] = {
            "number": 4,
            "text": DRAW_TEXT[4],
            "salt": FOURTH_DRAW_SALT,
            "order": order,
            "lots": [{"pair": p, "table_number": i // 2 + 1} for i, p in enumerate(order)],
            "as_drawn": [(t.ew, t.ns) for t in ties] == [(x.ew, x.ns) for x in drawn],
        }
        break
    return out


def _lot_key(seed: int, salt: str, p: int) -> str:
    return hashlib.sha256(f"guandan-draw:{seed}:{salt}:{p}".encode()).hexdigest()
