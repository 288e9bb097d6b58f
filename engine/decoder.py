"""What the camera may have misread: the decoder between the table pipeline and the rules.

The referee (engine/referee.py) judges rules: given readings (plays, passes, tribute cards) it
emits the events of CONTRACT.md. The decoder decides *which* readings, as a noisy-channel decoder
in speech recognition does (DESIGN.md, "Decoders in recognition"): the camera's readings and their
costs are the acoustic scores, the rules and the table's continuation the language model. It is
in three parts:

* **the channel** (engine/channel.py): the camera's readings, what it may have misread and what
  each misreading costs, every cost and window a row of ``COSTS`` with its reason; a play illegal
  as read is replaced as it comes by its cheapest legal reading within ``REREAD_BUDGET``
  (``reread``);
* **the edits** (engine/edits.py): alternative histories of the log (:class:`Alt`), each a
  re-read, an insert, a move or cards moved, proposed where a kind of camera error may lie;
* **the search** (this module): when to look again, which alternative wins, and publishing it.

**The search.** After each observation the referee calls :meth:`Decoder._second_look`. When it
clashes with the log (``_clash``: a foul the table did not act on, a pass out of turn, a play after
the deal ended by the count), repeats a card a third time, or the table ends a deal the referee has
open, the alternatives go to :meth:`Decoder._search`, which runs the rules again over each one's
continuation and scores it: its edits' cost plus the rules' cost of its continuation over the log's
(``_rules_cost``: ``CLASH_COST``, ``THIRD_COPY_COST``). One is admitted only when it removes at
least its ``gain`` of clashes (``HINDSIGHT_GAIN`` for a look back: a real foul clashes either way;
none for a choice the camera itself gave). The least score wins, the earliest change within
``TIE_COST`` (a later clash may echo an earlier misread), published as one ``correction``
(``_publish_alt``, through the referee's ``_rewrite``). Two looks are the search's own: a seat
taken as gone out that plays on is read as before (``_undo_gone``), and cards the camera reports
late move to the play they belong to when the continuation fits them better (``_late_cards``).

**The commit window.** Only suspects are looked at again (``_window``: camera plays illegal as
read, out of turn, a top not beaten, re-read as they came), the latest ``_HINDSIGHT_SUSPECTS``
with at most ``HINDSIGHT_WINDOW`` turns after them; ``REORDER_SPAN`` observations for the order,
``GONE_WINDOW`` plays and passes back for a seat gone out unseen. Before the window the log is
final: no later evidence changes it.

Not yet one search: an alternative edits one place, not a beam over the window's readings, and
only suspects are re-read (all camera plays in the window, tried 2026-12-04: mixed results at 1.6
times the CPU). Check a change with bench/decoder_harness.py (recorded and simulated camera
readings; issue 41).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from itertools import chain
from typing import TYPE_CHECKING, Any, Final

from engine.cards import parse_card
from engine.channel import (
    _HINDSIGHT_SUSPECTS,
    CLASH_COST,
    COSTS,
    HINDSIGHT_WINDOW,
    REORDER_S,
    REREAD_BUDGET,
    REREAD_BUDGET_IMPOSSIBLE,
    THIRD_COPY_COST,
    TIE_COST,
    UNSEEN_COST,
    Cost,
    Window,
    _text,
    reread,
)
from engine.edits import (
    Alt,
    Edits,
    RulesCore,
    _clash,
    _deal_over_signal,
    _foul,
    _miscount,
    _strain,
)
from engine.events import Event
from engine.observations import Observation, amended, dump_observation, reread_of

__all__ = ["COSTS", "Cost", "Window", "Decoder", "RulesCore", "reread"]
__all__ += ["REREAD_BUDGET", "REREAD_BUDGET_IMPOSSIBLE", "HINDSIGHT_WINDOW"]


#: events that end a deal or the match
_END: Final = frozenset({"deal_ended", "match_ended"})


def _rules_cost(events: Iterable[tuple[str, Mapping[str, Any]]]) -> float:
    """``CLASH_COST`` a clash, ``THIRD_COPY_COST`` a card seen a third time."""
    return sum(
        CLASH_COST if _clash(t, d) else THIRD_COPY_COST if _strain(t, d) else 0.0 for t, d in events
    )


class Decoder(Edits):
    """The search over the edits (engine/edits.py ``Edits``), mixed into
    :class:`engine.referee.Referee`, whose log they read and whose ``_rewrite`` publishes what
    they change (the module's docstring)."""

    if TYPE_CHECKING:

        def _notice(self, t: float, detail: str) -> list[Event]: ...
        def _rewrite(
            self, t: float, new_obs: list[Observation], k: int, first_k: int, extra: Any
        ) -> list[Event]: ...

    # -- the search ----------------------------------------------------------------------------

    def _second_look(self, obs: Observation, idx: int, out: list[Event]) -> list[Event]:
        """The alternatives that observation ``idx``'s events ``out`` call for, to ``_search``."""
        undone = self._undo_gone(obs, out) if self._gone_fixes else None
        if undone is not None:
            return undone
        alts: list[Iterable[Alt]] = []
        if obs.type in ("played", "pass"):
            alts.append(self._reorder(idx))
        if any(_clash(e.type, e.data) for e in out):
            alts += [  # the oldest suspect first: later ones may be its echoes
                self._put_in(k, self._obs[k].seat, self._obs[k].t)
                if why == "unseen"
                else self._reread_at(k, why)
                for k, why in self._window(idx)
            ]
            alts += [self._late_in_trick(idx, out), self._unseen(idx), self._gone()]
            now = self._core._live_deal()
            if obs.type == "played" and now is not None and now.counts.get(obs.seat or "") == 0:
                alts.append(self._count_off(idx))  # it played after going out by the count
        if any(_deal_over_signal(e.type, e.data) for e in out):
            # the seat on turn went out unseen: its last camera play emptied its hand, or it
            # played what the camera glimpsed (tigullio 48831: W's last card, a picture joker)
            alts += [self._gone(idx), self._put_in(idx, None, obs.t, _deal_over_signal, 1)]
        if obs.type == "count_report" and any(_miscount(e.type, e.data) for e in out):
            alts.append(self._count_off(idx))
        if any(e.type == "notice" and e.data.get("outside") for e in out):  # played on after
            ends = (k for e, k in zip(self._effective, self._origin, strict=True) if e.type in _END)
            end = next(reversed([*ends]), None)  # a count report's foul ended the deal or match?
            if end is not None and self._obs[end].type == "count_report":
                alts.append(self._count_off(end))
        # a third copy is re-read as it comes (``camera``) or flagged: which reading is wrong?
        third = any(
            (e.type == "play" and "camera" in e.data) or _foul(e, "duplicate_card") for e in out
        )
        if third and obs.type == "played" and obs.doubts and obs.seat is not None:
            alts.append(self._third_copy(idx))
        return self._search(chain.from_iterable(alts), obs.t) or []

    def _window(self, before: int) -> list[tuple[int, str]]:
        """The suspects before ``before`` at most ``HINDSIGHT_WINDOW`` turns back, the latest
        ``_HINDSIGHT_SUSPECTS`` oldest first: camera plays illegal as read ("illegal"; and the top
        they did not beat if shorter or maybe missing a card: "top", 9408), out of turn
        ("unseen"), re-read as they came ("as read")."""
        out: list[tuple[int, str]] = []
        later, j = 0, len(self._obs) - 1
        for i in range(len(self._effective) - 1, -1, -1):
            e, k = self._effective[i], self._origin[i]
            while j > k:
                later += self._obs[j].type in ("played", "pass")
                j -= 1
            if later > HINDSIGHT_WINDOW or e.deal != self.state.deal_no:
                break
            if k >= before or not self._obs[k].doubts:
                continue
            if e.type == "play" and e.data.get("legal") is False:
                out.append((k, "illegal"))
                eff = self._effective
                beat = str(e.data.get("reason", "")).startswith("does not beat")
                tops = (p for p in (range(i - 1, -1, -1) if beat else ()) if eff[p].type == "play")
                q = next((p for p in tops if eff[p].data.get("legal")), None)
                if q is not None and eff[q].deal == e.deal:
                    short = len(eff[q].data["cards"]) < len(e.data["cards"])
                    missed = any(c is None for c, _ in self._obs[self._origin[q]].doubts)
                    last = self._last_camera_play(eff[q].data["seat"], e.deal, k)
                    if (short or missed) and last == q:
                        out.append((self._origin[q], "top"))
            elif _foul(e, "out_of_turn"):
                out.append((k, "unseen"))
            elif e.type == "play" and "camera" in e.data and "reread" not in self._obs[k].extra:
                out.append((k, "as read"))
        first = [x for n, x in enumerate(out) if all(x[0] != y[0] for y in out[n + 1 :])]
        return first[::-1][-_HINDSIGHT_SUSPECTS:]

    def _search(self, alts: Iterable[Alt], t: float) -> list[Event] | None:
        """The one search: each of ``alts`` whose continuation (the rules run again from ``k``)
        has ``gain`` fewer clashes is admitted, scored by its cost plus the rules' over the log's;
        the earliest within ``TIE_COST`` of the least is published at ``t``. None if none is."""
        admitted: list[tuple[float, Alt, int, int]] = []
        cores: dict[int, RulesCore] = {}
        for a in alts:
            log = self._log_since(a.k)
            now = sum(1 for e in log if a.counts(*e))
            if now < a.gain:
                continue
            if a.k not in cores:
                cores[a.k] = self._core_before(a.k)
            core = self._copy_core(cores[a.k])
            run = [
                (pl.type, pl.data)
                for i in range(a.k, len(self._obs))
                for oi in a.fixes.get(i, (self._obs[i],))
                for pl in core.feed(oi, i)
            ]
            left = sum(1 for e in run if a.counts(*e))
            if left <= now - a.gain:
                admitted.append((a.cost + _rules_cost(run) - _rules_cost(log), a, now, left))
        if not admitted:
            return None
        least = min(x[0] for x in admitted)
        _, a, now, left = min(
            (x for x in admitted if x[0] < least + TIE_COST), key=lambda x: (x[1].k, x[0])
        )
        return self._publish_alt(a, t, now, left)

    def _publish_alt(self, a: Alt, t: float, now: int = 0, left: int = 0) -> list[Event]:
        """The history ``a`` made the log: one correction at ``t`` from its first change."""
        if a.then is not None:
            a.then()
        k = next((i for i in sorted(a.fixes) if list(a.fixes[i]) != [self._obs[i]]), min(a.fixes))
        new_obs = [x for i, o in enumerate(self._obs) for x in a.fixes.get(i, (o,))]
        pos = self._pos(k)
        pos = self._pos(k, None) if pos is None else pos
        data: dict[str, Any] = {
            "target": None if pos is None else self._effective[pos].id,
            "observation": [dump_observation(o) for i in sorted(a.fixes) for o in a.fixes[i]],
            "reason": a.why + (f" ({now} clashes since as seen, {left} so)" if a.gain else ""),
        }
        first = next((i for i, origin in enumerate(self._origin) if origin >= k), 0)
        return self._rewrite(t, new_obs, k, first, data)

    def _undo_gone(self, obs: Observation, out: Sequence[Event]) -> list[Event] | None:
        """A seat taken as gone out unseen plays or passes again (``obs``), or the table plays on
        (``out``) in a deal ended at a clearing: those plays are read as before (and never taken
        as last again), each turn of the seat's that went by since a pass the camera missed (as
        ``_put_in``'s, which ``_gone`` took back), through one correction; None if none is."""
        outside = any(e.type == "notice" and e.data.get("outside") for e in out)
        turn = obs.type in ("played", "pass")
        undo = [
            f for f in self._gone_fixes if (turn and obs.seat == f[1].seat) or (outside and f[2])
        ]
        if not undo:
            return None
        self._gone_fixes = [f for f in self._gone_fixes if f not in undo]
        ks = [next((i for i, o in enumerate(self._obs) if o is fix), None) for fix, _, _ in undo]
        fixes = {
            k: [replace(orig, extra={**orig.extra, "not_last": True})]
            for k, (_, orig, _) in zip(ks, undo, strict=True)
            if k is not None and self._pos(k) is not None
        }
        if not fixes:
            return []
        why = "; ".join(f"{f[0].seat} played on: it had not gone out" for f in fixes.values())
        # without them the others' turns since are out of turn (tests/referee/test_gone_undone.py)
        seats, trial = {f[1].seat for f in undo}, self._core_before(min(fixes))
        put: list[tuple[int, Observation]] = []
        for j in range(min(fixes), len(self._obs)):
            for o in fixes.get(j, [self._obs[j]]):
                d = trial._live_deal()
                s = None if d is None or d.top is None else d.turn
                if s in seats and o.type in ("played", "pass", "trick_cleared") and o.seat != s:
                    put.append((j, Observation(o.t, "pass", seat=s, extra={"unseen": True})))
                    trial.feed(put[-1][1], j)
                trial.feed(o, j)
        # its play within ``REORDER_S`` of its last such turn may be that turn reported late: left
        # to ``_reorder`` (a pass put in there lost plays on sims 8100, 8140, 9601, 9616, 9645)
        late = obs.type == "played" and bool(put) and put[-1][1].seat == obs.seat
        put = put[:-1] if late and obs.t - put[-1][1].t <= REORDER_S else put
        for j, p in put:  # (only the changed observations: the correction lists them)
            fixes[j] = [p, *fixes.get(j, [self._obs[j]])]
            why += f"; {p.seat} passed unseen before t={p.t:g}"
        cost = UNSEEN_COST * len(put)
        return self._publish_alt(Alt(min(fixes), fixes, cost, why, gain=0), obs.t)

    def _late_cards(self, obs: Observation) -> list[Event]:
        """Cards of a judged play the camera reports late: found in the seat's zone with no hand
        near (``amends``, 9910) or read anew (``was``). They move to that play (``_to_earlier``)
        if the continuation clashes no more (read anew: fewer clashes or third copies), and an
        earlier play re-read with the new card goes back to the camera's reading (9406).
        Otherwise a notice says why, and cards read anew are kept as a glimpse of the seat's
        play: a card laid over one of its own of the same rank looks the same (``_put_in``)."""
        seat = obs.seat
        assert seat is not None  # a ``played`` has a seat (parse_observation)
        old = [parse_card(c) for c in obs.extra.get("was", ())]
        text = f"{_text(old)} in {seat}'s play zone read again as {_text(obs.cards)}"
        k = reread_of(self._obs, obs) if old else amended(self._obs, obs)
        pos = None if k is None else self._pos(k)
        e = None if pos is None else self._effective[pos]
        if old:
            head = f"{text}; the first reading stands: "
            why = f"no play of {seat}'s this trick holds {_text(old)}"
            moved = f"{text} at t={obs.t:.1f}"
        else:
            at = obs.extra["amends"]
            head = f"{_text(obs.cards)} found late in {seat}'s play zone, not added: "
            why = f"no play by {seat} observed at t={at} is in effect"
            saw = f"its play of {'' if e is None else _text(e.data['cards'])}"
            if e is not None and "camera" in e.data:
                saw += f" (the camera saw {_text(e.data['camera'])})"
            moved = f"{_text(obs.cards)} found in {seat}'s play zone with no hand near, "
            moved += f"{obs.t - at:.1f} s after {saw}"
        alts: list[Alt] = []
        if k is not None and e is not None and e.deal != self.state.deal_no:
            why = "that play belongs to an earlier deal"
        elif k is not None and pos is not None and e is not None:
            alts = list(
                self._to_earlier(k, obs, [(obs.cards, moved)], None, old, int(bool(old)), _strain)
            )
            why = "the table's continuation would fit it no better"
            for eq, kq in self._back(pos, e.deal) if alts and old else ():
                cam, swaps = eq.data.get("camera"), list(zip(old, obs.cards, strict=True))
                if eq.type != "play" or not cam:
                    continue  # the latest play that bet on a copy the camera read anew
                have = Counter(map(parse_card, eq.data["cards"]))
                seen = Counter(map(parse_card, cam))
                if any(have[b] > seen[b] and seen[a] > have[a] for a, b in swaps):
                    back = f"as the camera read it ({text} at t={obs.t:.1f})"
                    fix = self._fix(self._obs[kq], map(parse_card, cam), back, cam)
                    a = alts[0]
                    alts.insert(0, a._replace(k=kq, fixes={kq: [fix], **a.fixes}, gain=0))
                    break
        fixed = self._search(alts, obs.t)
        if fixed is None and old:  # a card laid over one of the seat's own of its rank looks
            # the same (plastic 49087: S's single S8 over its pair C8 C8, covering one C8, then
            # taken as passing): a glimpse of the seat's play, for a turn the table played on as
            # taken (``_put_in``)
            self._glimpses.append(Observation(obs.t, "glimpse", seat=seat, cards=obs.cards))
        return self._notice(obs.t, head + why) if fixed is None else fixed
