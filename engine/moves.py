"""``legal_moves``: every distinct legal play of a hand, as a lead or as an answer to a trick.

"Distinct" follows CONTRACT.md: two plays are the same when they have the same kind, key, size
and multiset of physical cards. So a straight 3-7 made of ♠3 or of ♣3 is two plays (different
cards), the straight flush 3-7 and the straight 3-7 on the same cards are two plays (different
kind), and ♥2 ♠4 ♠5 ♠6 ♠7 at level 2 gives four (straight flush and straight, each with key 3
and 4). Two copies of the same card are the same card: holding ♠3 twice gives one single ♠3.
Every way of using the wilds is listed: a wild may stand for any non-joker card or be itself
(see engine.combos), so a lone wild is a single of every rank and two wilds are a pair of every
rank. With ``level`` None (a deal without a level: a joker cut, 000 篇6) there are no wilds and
no level rank: the moves are those of the natural cards in natural order (see engine.combos).

Order: a lead lists the kinds in the order of ``engine.combos.KINDS`` (non-bombs first, each in
ascending value), then the bombs from weakest to strongest (4 cards, 5 cards, straight flushes,
6..10 cards, the joker bomb). An answer lists the plays of the trick's kind that beat it, weakest
first, then every bomb that beats it, weakest first.

The generator works on rank counts: for each shape (kind and key) it decides how many wilds each
rank takes and combines the distinct natural sub-multisets of each rank (tables cached per suit
pattern), so no card subset is ever enumerated and no duplicate is ever produced.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from typing import Final

from engine._tables import CARDS, HR_IX, NO_LEVEL, RANK_CHAR, SB_IX, order_of_ranks, wild_index
from engine.cards import Card, CardError
from engine.combos import (
    DEFAULT_RULES,
    JOKER_BOMB_POWER,
    SF_POWER,
    Combo,
    ComboRules,
    bomb_power,
    indices,
    level_number,
    read_trick,
)

__all__ = ["legal_moves", "lead_moves"]

_new = tuple.__new__

_SB: Final = CARDS[SB_IX]
_HR: Final = CARDS[HR_IX]

Part = tuple[Card, ...]
#: (rank, suit counts S H C D) -> sub-multisets of that rank's cards by size k (canonical order).
_SUBS_CACHE: dict[tuple[int, int, int, int, int], list[list[Part]]] = {}
_EMPTY_SUBS: Final[list[list[Part]]] = [[()]]
#: Stand-in for the wild of a hand without wilds (no level): never placed, since ``w`` is 0.
_NO_WILD: Final = Card("H", "-")


def _subs(r: int, counts: tuple[int, int, int, int]) -> list[list[Part]]:
    key = (r, *counts)
    got = _SUBS_CACHE.get(key)
    if got is not None:
        return got
    base = (r - 2) * 4
    total = sum(counts)
    by_k: list[list[Part]] = [[] for _ in range(total + 1)]
    ranges = [range(c + 1) for c in counts]
    for pick in product(*ranges):
        part: list[Card] = []
        for s, m in enumerate(pick):
            part.extend([CARDS[base + s]] * m)
        by_k[len(part)].append(tuple(part))
    _SUBS_CACHE[key] = by_k
    return by_k


class _Hand:
    """A hand analysed for one level: natural sub-multisets per rank, wilds, jokers.
    ``lvn`` NO_LEVEL (``lv`` None): no wilds (``w`` 0), natural rank order."""

    __slots__ = (
        "lv",
        "lvn",
        "wix",
        "wild",
        "w",
        "sb",
        "hr",
        "cnt",
        "subs",
        "single",
        "rorder",
        "rules",
        "wilds",
    )

    def __init__(self, ixs: list[int], lv: str | None, lvn: int, rules: ComboRules) -> None:
        self.lv = lv
        self.lvn = lvn
        self.rules = rules
        cnt = [0] * 54
        for ix in ixs:
            cnt[ix] += 1
        if lvn != NO_LEVEL:
            wix = wild_index(lvn)
            self.wild = CARDS[wix]
            self.w = cnt[wix]
            cnt[wix] = 0
        else:
            wix = -1
            self.wild = _NO_WILD
            self.w = 0
        self.wix = wix
        self.wilds: tuple[Part, Part, Part] = ((), (self.wild,), (self.wild, self.wild))
        self.sb = cnt[SB_IX]
        self.hr = cnt[HR_IX]
        self.cnt = cnt
        subs: list[list[list[Part]]] = [_EMPTY_SUBS] * 15
        single: list[list[Card]] = [[] for _ in range(15)]
        for r in range(2, 15):
            b = (r - 2) * 4
            cs = (cnt[b], cnt[b + 1], cnt[b + 2], cnt[b + 3])
            if cs != (0, 0, 0, 0):
                subs[r] = _subs(r, cs)
                single[r] = [CARDS[b + s] for s in range(4) if cs[s]]
        self.subs = subs
        self.single = single
        self.rorder = order_of_ranks(lvn)

    def val(self, r: int) -> int:
        return 15 if r == self.lvn else r

    def ins(self, part: Part, r: int, ws: Part) -> Part:
        """Cards of one rank plus wilds, in canonical order."""
        if r < self.lvn:
            return part + ws
        if r > self.lvn:
            return ws + part
        k = 0
        while k < len(part) and part[k].suit == "S":
            k += 1
        return part[:k] + ws + part[k:]

    def before(self, part: Part, r: int) -> int:
        """How many cards of ``part`` (all of rank r) sort before the wild."""
        if r < self.lvn:
            return len(part)
        if r > self.lvn:
            return 0
        k = 0
        while k < len(part) and part[k].suit == "S":
            k += 1
        return k

    def slots(self, rl: list[tuple[int, list[Card]]], nw: int) -> list[list[list[Card]]]:
        """Option lists (one card per rank, ranks in canonical order) with ``nw`` one-card wild
        slots put where the wild sorts; the product of each gives canonical card tuples."""
        wl = [[self.wild]] * nw
        lvn = self.lvn
        lo = [li for r, li in rl if r < lvn]
        hi = [li for r, li in rl if r > lvn]
        mid = [li for r, li in rl if r == lvn]
        if not mid:
            return [lo + wl + hi]
        out: list[list[list[Card]]] = []
        spades = [c for c in mid[0] if c.suit == "S"]
        others = [c for c in mid[0] if c.suit != "S"]
        if spades:
            out.append(lo + [spades] + wl + hi)
        if others:
            out.append(lo + wl + [others] + hi)
        return out


def legal_moves(
    hand: str | Sequence[Card | str],
    trick: Combo | str | Sequence[Card | str] | None,
    level: str | int | None,
    *,
    rules: ComboRules | None = None,
) -> list[Combo]:
    """Every distinct legal play of ``hand`` at ``level``: a lead when ``trick`` is None,
    otherwise every play that beats the trick (a Combo, or cards read as their strongest
    reading). ``level`` None: a deal without a level (joker cut): natural order, no wilds.
    See the module doc for what "distinct" means and for the order."""
    rules = rules or DEFAULT_RULES
    lv, lvn = level_number(level)
    ixs = indices(hand, "the hand")
    if trick is None:
        return _generate(_Hand(ixs, lv, lvn, rules), None)
    t = read_trick(trick, lv, rules=rules)
    tix = indices(t.cards, "the trick")
    both = sorted(ixs + tix)
    for i in range(2, len(both)):
        if both[i] == both[i - 2]:
            raise CardError(
                f"card {CARDS[both[i]]} is in the hand and the trick more than twice in all; "
                "two decks hold only two of each card"
            )
    return _generate(_Hand(ixs, lv, lvn, rules), t)


def lead_moves(hand: str | Sequence[Card | str], level: str | int | None) -> list[Combo]:
    """Shorthand for ``legal_moves(hand, None, level)``."""
    return legal_moves(hand, None, level)


def _generate(h: _Hand, trick: Combo | None) -> list[Combo]:
    out: list[Combo] = []
    maxn = h.rules.max_cards_per_play
    big = 10 if maxn is None else maxn
    if trick is None:
        _singles(h, out, 0)
        if big >= 2:
            _pairs(h, out, 0)
        if big >= 3:
            _triples(h, out, 0)
        if big >= 5:
            _full_houses(h, out, 0)
            _straights(h, out, 0)
        if big >= 6:
            _consecutive_pairs(h, out, 0)
            _consecutive_triples(h, out, 0)
        _bombs(h, out, 0, 0, big)
        return out
    kind = trick.kind
    if trick.power == 0:
        v = trick.value
        if kind == "single":
            _singles(h, out, v)
        elif kind == "pair":
            _pairs(h, out, v)
        elif kind == "triple":
            _triples(h, out, v)
        elif kind == "full_house" and big >= 5:
            _full_houses(h, out, v)
        elif kind == "straight" and big >= 5:
            _straights(h, out, v)
        elif kind == "consecutive_pairs" and big >= 6:
            _consecutive_pairs(h, out, v)
        elif kind == "consecutive_triples" and big >= 6:
            _consecutive_triples(h, out, v)
    _bombs(h, out, trick.power, trick.value, big)
    return out


def _singles(h: _Hand, out: list[Combo], minv: int) -> None:
    lv = h.lv
    w = h.w
    wt = (h.wild,)
    for r in h.rorder:
        v = h.val(r)
        if v <= minv:
            continue
        key = RANK_CHAR[r]
        for c in h.single[r]:
            out.append(_new(Combo, ("single", key, 1, (c,), v, 0, lv)))
        if w:
            out.append(_new(Combo, ("single", key, 1, wt, v, 0, lv)))
    if h.sb and minv < 16:
        out.append(_new(Combo, ("single", "SB", 1, (_SB,), 16, 0, lv)))
    if h.hr and minv < 17:
        out.append(_new(Combo, ("single", "HR", 1, (_HR,), 17, 0, lv)))


def _pairs(h: _Hand, out: list[Combo], minv: int) -> None:
    lv = h.lv
    w = h.w
    w1 = (h.wild,)
    for r in h.rorder:
        v = h.val(r)
        if v <= minv:
            continue
        key = RANK_CHAR[r]
        subs = h.subs[r]
        if len(subs) > 2:
            for part in subs[2]:
                out.append(_new(Combo, ("pair", key, 2, part, v, 0, lv)))
        if w and len(subs) > 1:
            for part in subs[1]:
                out.append(_new(Combo, ("pair", key, 2, h.ins(part, r, w1), v, 0, lv)))
        if w == 2:
            out.append(_new(Combo, ("pair", key, 2, w1 + w1, v, 0, lv)))
    if h.sb == 2 and minv < 16:
        out.append(_new(Combo, ("pair", "SB", 2, (_SB, _SB), 16, 0, lv)))
    if h.hr == 2 and minv < 17:
        out.append(_new(Combo, ("pair", "HR", 2, (_HR, _HR), 17, 0, lv)))


def _triples(h: _Hand, out: list[Combo], minv: int) -> None:
    lv = h.lv
    w = h.w
    w1 = (h.wild,)
    for r in h.rorder:
        v = h.val(r)
        if v <= minv:
            continue
        key = RANK_CHAR[r]
        subs = h.subs[r]
        n = len(subs) - 1
        if n >= 3:
            for part in subs[3]:
                out.append(_new(Combo, ("triple", key, 3, part, v, 0, lv)))
        if w and n >= 2:
            for part in subs[2]:
                out.append(_new(Combo, ("triple", key, 3, h.ins(part, r, w1), v, 0, lv)))
        if w == 2 and n >= 1:
            for part in subs[1]:
                out.append(_new(Combo, ("triple", key, 3, h.ins(part, r, w1 + w1), v, 0, lv)))


def _full_houses(h: _Hand, out: list[Combo], minv: int) -> None:
    lv = h.lv
    lvn = h.lvn
    w = h.w
    subs = h.subs
    # pair options: (rank, natural part, wilds used, cards before the wild's canonical place)
    pairs: list[tuple[int, Part, int, int]] = []
    for p in range(2, 15):
        sp = subs[p]
        if len(sp) > 2:
            pairs.extend((p, part, 0, h.before(part, p)) for part in sp[2])
        if w and len(sp) > 1:
            pairs.extend((p, part, 1, h.before(part, p)) for part in sp[1])
    if h.rules.full_house_joker_pair:
        if h.sb == 2:
            pairs.append((16, (_SB, _SB), 0, 0))
        if h.hr == 2:
            pairs.append((17, (_HR, _HR), 0, 0))
    ws = h.wilds
    for t in h.rorder:
        v = 15 if t == lvn else t
        if v <= minv:
            continue
        st = subs[t]
        n = len(st) - 1
        if n == 0:
            continue
        key = RANK_CHAR[t]
        if not w:
            if n < 3:
                continue
            lo = [pp for p, pp, _, _ in pairs if p < t]
            hi = [pp for p, pp, _, _ in pairs if p > t]
            for tp in st[3]:
                out.extend([_new(Combo, ("full_house", key, 5, pp + tp, v, 0, lv)) for pp in lo])
                out.extend([_new(Combo, ("full_house", key, 5, tp + pp, v, 0, lv)) for pp in hi])
            continue
        triples: list[tuple[Part, int]] = []
        if n >= 3:
            triples.extend((part, 0) for part in st[3])
        if n >= 2:
            triples.extend((part, 1) for part in st[2])
        if w == 2:
            triples.extend((part, 2) for part in st[1])
        for tpart, tw in triples:
            tb = h.before(tpart, t)
            for p, ppart, pw, pb in pairs:
                nw = tw + pw
                if p == t or nw > w:
                    continue
                nat = tpart + ppart if t < p else ppart + tpart
                if nw:
                    k = tb + pb
                    nat = nat[:k] + ws[nw] + nat[k:]
                out.append(_new(Combo, ("full_house", key, 5, nat, v, 0, lv)))
            if tw == 0 and w == 2:
                # the pair is the two wilds (any rank): one play
                out.append(_new(Combo, ("full_house", key, 5, h.ins(tpart, t, ws[2]), v, 0, lv)))


def _make_window_ranks(s: int, length: int) -> list[int]:
    """Natural ranks of a run starting at position s (1 = A low), in canonical card order."""
    if s == 1:
        return list(range(2, length + 1)) + [14]
    return list(range(s, s + length))


_WINDOW_RANKS: Final = {
    (s, n): _make_window_ranks(s, n) for n in (2, 3, 5) for s in range(1, 16 - n)
}


def _window_ranks(s: int, length: int) -> list[int]:
    return _WINDOW_RANKS[(s, length)]


#: Sets of positions (bit masks) of a 5-card run that wilds may take, by the number of wilds held.
_WMASKS: Final = {
    1: [1 << i for i in range(5)],
    2: [1 << i for i in range(5)]
    + [(1 << i) | (1 << j) for i in range(5) for j in range(i + 1, 5)],
}


def _straights(h: _Hand, out: list[Combo], minv: int) -> None:
    lv = h.lv
    w = h.w
    single = h.single
    for s in range(max(1, minv + 1), 11):
        key = RANK_CHAR[s]
        ranks = _window_ranks(s, 5)
        lists = [single[r] for r in ranks]
        missing = 0
        for i, li in enumerate(lists):
            if not li:
                missing |= 1 << i
        if not missing:
            out.extend([_new(Combo, ("straight", key, 5, c, s, 0, lv)) for c in product(*lists)])
        if not w:
            continue
        for mask in _WMASKS[w]:
            if missing & ~mask:
                continue
            nw = mask.bit_count()
            rl = [(r, lists[i]) for i, r in enumerate(ranks) if not mask >> i & 1]
            for ls in h.slots(rl, nw):
                out.extend([_new(Combo, ("straight", key, 5, c, s, 0, lv)) for c in product(*ls)])


def _straight_flushes(h: _Hand, out: list[Combo], minv: int) -> None:
    """Straight flushes with value > minv, ascending (value, then suit)."""
    lv = h.lv
    w = h.w
    cnt = h.cnt
    # per suit, a bit for each position held (1 = A low, 2..14)
    held = []
    for suit in range(4):
        m = 0
        for r in range(2, 15):
            if cnt[(r - 2) * 4 + suit]:
                m |= 1 << r
        if m >> 14 & 1:
            m |= 2
        held.append(m)
    for s in range(max(1, minv + 1), 11):
        key = RANK_CHAR[s]
        ranks = _window_ranks(s, 5)
        window = 0b11111 << s
        for suit in range(4):
            if 5 - (held[suit] & window).bit_count() > w:
                continue
            missing = 0
            cards: list[Card] = []
            for i, r in enumerate(ranks):
                ix = (r - 2) * 4 + suit
                if cnt[ix]:
                    cards.append(CARDS[ix])
                else:
                    cards.append(h.wild)
                    missing |= 1 << i
            if missing.bit_count() > w:
                continue
            if not missing:
                out.append(_new(Combo, ("straight_flush", key, 5, tuple(cards), s, SF_POWER, lv)))
            if not w:
                continue
            for mask in _WMASKS[w]:
                if missing & ~mask:
                    continue
                nw = mask.bit_count()
                rl = [(r, [cards[i]]) for i, r in enumerate(ranks) if not mask >> i & 1]
                for ls in h.slots(rl, nw):
                    for c in product(*ls):
                        out.append(_new(Combo, ("straight_flush", key, 5, c, s, SF_POWER, lv)))


def _consecutive_pairs(h: _Hand, out: list[Combo], minv: int) -> None:
    _runs(h, out, minv, "consecutive_pairs", 3, 2)


def _consecutive_triples(h: _Hand, out: list[Combo], minv: int) -> None:
    _runs(h, out, minv, "consecutive_triples", 2, 3)


def _runs(h: _Hand, out: list[Combo], minv: int, kind: str, length: int, need: int) -> None:
    lv = h.lv
    w = h.w
    subs = h.subs
    ws = h.wilds
    for s in range(max(1, minv + 1), 16 - length):
        key = RANK_CHAR[s]
        ranks = _window_ranks(s, length)
        if not w:
            lists = [subs[r][need] if len(subs[r]) > need else [] for r in ranks]
            if not all(lists):
                continue
            if length == 3:
                out.extend(
                    [
                        _new(Combo, (kind, key, 6, a + b + c, s, 0, lv))
                        for a, b, c in product(*lists)
                    ]
                )
            else:
                out.extend(
                    [_new(Combo, (kind, key, 6, a + b, s, 0, lv)) for a, b in product(*lists)]
                )
            continue
        opt_lists: list[list[tuple[Part, int, int]]] = []
        for r in ranks:
            sr = subs[r]
            opts: list[tuple[Part, int, int]] = []
            for k in range(need, max(0, need - w) - 1, -1):
                if k < len(sr) and (k > 0 or need <= w):
                    opts.extend((part, need - k, h.before(part, r)) for part in sr[k])
            if not opts:
                break
            opt_lists.append(opts)
        else:
            if length == 3:
                for (a, ua, ba), (b, ub, bb), (c, uc, bc) in product(*opt_lists):
                    nw = ua + ub + uc
                    if nw > w:
                        continue
                    nat = a + b + c
                    if nw:
                        k = ba + bb + bc
                        nat = nat[:k] + ws[nw] + nat[k:]
                    out.append(_new(Combo, (kind, key, 6, nat, s, 0, lv)))
                continue
            for (a, ua, ba), (b, ub, bb) in product(*opt_lists):
                nw = ua + ub
                if nw > w:
                    continue
                nat = a + b
                if nw:
                    k = ba + bb
                    nat = nat[:k] + ws[nw] + nat[k:]
                out.append(_new(Combo, (kind, key, 6, nat, s, 0, lv)))


def _bombs(h: _Hand, out: list[Combo], tpower: int, tvalue: int, big: int) -> None:
    """Bombs that beat (tpower, tvalue), weakest first; at most ``big`` cards."""
    for n in (4, 5):
        if n <= big:
            _bombs_of(h, out, n, tpower, tvalue)
    if big >= 5 and (tpower < SF_POWER or (tpower == SF_POWER and tvalue < 10)):
        _straight_flushes(h, out, tvalue if tpower == SF_POWER else 0)
    for n in range(6, min(10, big) + 1):
        _bombs_of(h, out, n, tpower, tvalue)
    if big >= 4 and h.sb == 2 and h.hr == 2 and tpower < JOKER_BOMB_POWER:
        out.append(
            _new(Combo, ("joker_bomb", "HR", 4, (_SB, _SB, _HR, _HR), 17, JOKER_BOMB_POWER, h.lv))
        )


def _bombs_of(h: _Hand, out: list[Combo], n: int, tpower: int, tvalue: int) -> None:
    power = bomb_power(n)
    if power < tpower:
        return
    lv = h.lv
    w = h.w
    w1 = (h.wild,)
    for r in h.rorder:
        v = h.val(r)
        if power == tpower and v <= tvalue:
            continue
        subs = h.subs[r]
        have = len(subs) - 1
        if have + w < n or have == 0:
            continue
        key = RANK_CHAR[r]
        for nw in range(0, w + 1):
            k = n - nw
            if k < 1 or k > have:
                continue
            ws = w1 * nw
            for part in subs[k]:
                out.append(
                    _new(Combo, ("bomb", key, n, h.ins(part, r, ws) if nw else part, v, power, lv))
                )
