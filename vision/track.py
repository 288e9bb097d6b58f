"""Tracking: card detections -> per-region card multisets over time -> observations.

Two stages, both pure (no I/O, no camera), so they are tested with synthetic detections:

:class:`Tracker` turns the corner detections of a frame (image boxes with a card label, one per
visible corner index) into card instances in table millimetres and keeps, per *region*, the
multiset of cards lying there. A region's change is **committed** only after the same multiset
was seen in ``stable_frames`` consecutive observations of that region while no hand was over its
zone (``busy``). Per label, over the last observations of the region (consecutive ones: a
region not observed for ``max_gap_s`` starts afresh), a count goes up only when ``confirm`` of
the last ``window`` see it (a ghost detection in one frame is no card) and goes down only when
none of the last ``drop_window`` does (a corner missed in one frame costs nothing).

Counting: the two corner indices of one card are ``pair_mm`` apart (from the card size and the
index position, ~80 mm for a 63 x 88 mm card), so two corners of the same label at about that
distance are one card; corners of the same label much closer than that are different cards (the
two decks hold two of each card; a fanned pair shows two top-left indices ~15-30 mm apart).
Detections of the same corner closer than ``same_mm`` (8) are merged (tile overlaps, double
boxes: the two boxes of one joker's corner lay 6.4 mm apart and counted two cards, seed 9406;
at 10 the top-left indices of two red jokers fanned ~10 mm apart merged, seed 9208);
detections scoring under ``min_score`` (corner score x class probability) are ignored, unless
over ``keep_score`` where the same label scored over ``min_score`` a moment ago (hysteresis);
the other detections over ``keep_score`` count only as the second corner of a card whose first
corner counts (a joker's corner named with less confidence than its twin). Two corners of one
label both under the floor (one of them down to ``faint_score``) are one card only where they
lie the table's learnt corner spacing apart within ``LOW_PAIR_MM`` and the classifier is sure
of both (``LOW_PAIR_SURE``): plastic's court indices score low at the corner stage.
Two corner pairs of one label with one centre are one card (a card with an index in all four
corners, like plastic's jokers, shows two diagonals); two whose centres lie a little further
apart (``PRINT_DOUBLE_MM``) may be one card's long printed word boxed in pieces and paired
twice, so the less sure one carries "no card there" (:func:`_print_doubles`); four corners of
one label lying as one card's four corners are paired along its diagonals only (its long sides
lie as near the corner spacing), and keep both diagonals whatever the learnt spacing says. Once
the table's corner spacing is learnt (below), no pair lies further off it than ``PAIR_FAR_MM``,
and a pair of two sure corners off it by more than ``PAIR_OFF_MM`` is not taken where one of
them has a weak partner on it (two identical cards fanned tightly: the upper card's own index
under the floor).
A corner under the floor left single, scoring at least ``KIN_MIN_SCORE``, counts as a card when
a sure corner index of its own rank lies a fan's step from it (``KIN_STEP_MM``) and none nearer:
the half-covered index of a pair's, a bomb's or a full house's lower card. It carries "no card
there" among its runner-ups (``KIN_NONE_COST``), and a change's doubt for an added copy of a
label is the instance least sure to be there, so the referee drops it cheaply where the play is
illegal with it. A weak joker corner left single counts so, from a step of a counted joker's
index, chained along the fan (``_joker_kin``): a fanned joker bomb's lower jokers.
A corner index nearer than a fan's step to two others, between them on their line, is no
card's own index (each of the two would cover it): a box the corner stage put astride two
fanned indices. It counts as a card that may lie there (``MAYBE``, below) and pairs with no
corner (``_straddlers``).
Two one-corner cards read differently are one card when they lie the table's own corner spacing
apart (``Tracker.spacing``: the median distance of the one-label pairs seen so far; plastic's
indices sit ~75 mm apart) within ``fuse_mm`` (5), and both readings together name one card for
at most ``fuse_cost`` nats (:func:`_fused`): a card whose corners were read in two suits (S9
and C9, plastic read with a deck profile) counts once, named from both corners. A fan's
neighbours lie ~12 mm further apart than one card's corners, so they stay two cards; so does an
index inside a fan's row (a fan's step from another on either side): its far corner lies under
the cards on top of it.
A ``weak`` detection (a joker the corner stage scored under its floor, ``vision.detector``)
counts only paired with the card's other corner: a ghost joker in a court card's picture seldom
comes with a second one a card's diagonal away. A detection marked ``whole`` (a court card read
by its picture, vision/faces.py) is one card by itself, never a corner of a pair.
A weak joker corner, or any corner under the floor, left single and counted by no rule above,
is no card; seen in a seat's play zone for ``GLIMPSE_LOOKS`` looks in a row it is told as a
``glimpse`` (``Tracker.glimpses``), which the decoder uses only for a turn the table played on as
taken.

Doubts: each detection carries the classifier's runner-up readings (``vision.detector``
``Detection.alts``); a card seen by one corner index also gets "no card there" as a runner-up
when it lies inside a card seen whole or where a card of its own label seen whole has its
other two corners (an index in all four corners), or when it lies a card's corner-to-corner
distance from a card whose label is its own runner-up (one card, one corner misread). So does
an added copy of a label that the looks confirmed but the committing frame does not show
(``ABSENT_COST``). An added card that
left the same zone earlier with no hand near (a label read anew there), or left a seat's play
zone at all while other cards stayed (covered by the seat's next play: a trick's cards stay
until it is cleared), may be that card read back, not a new one: "no card" joins its runner-ups
(``FADED_COST``; read back in another suit, at the cost of that runner-up). The added cards'
runner-ups travel to the ``played`` observation as ``doubts``, which the referee uses only when
the play is illegal as read (engine/referee.py ``reread``). A ``MAYBE`` detection (a card that
may lie there: a fan's lower court card no face fits surely) is counted apart and never played;
its readings join the cards added beside it as a doubt with no card, which the referee may add.

Touched: cards do not move by themselves. A region's change committed while no hand or motion
came near its zone since its last commit (``Change.touched`` false; the pipeline reports every
frame's busy zones through :meth:`Tracker.touch`) is the detector reading the same cards
differently (a label flickering, a corner found late); in a play zone it is no ``played``
observation (:attr:`Interpreter.rereads`; the pipeline lists them in its report), except cards
only added within ``Interpreter.late_s`` of the seat's play: that play's cards found late, sent
as a ``played`` that ``amends`` it (:attr:`Interpreter.late`; the referee adds them when the
play stays legal). A touched change of a play zone that only reads cards lying there in other
suits (the same ranks, one for one, nothing else added or taken away) is no play either: a hand
passed and the cards were seen anew, so it goes to the referee as a ``played`` with ``was``
(the earlier readings; :attr:`Interpreter.relabels`), who takes the new reading where it fits
the table better. A hand's change that adds other cards too is split where a card of the same
rank is seen on the very spot (``same_mm``) where the earlier one lay: the re-reading first,
then the play of the rest (``Tracker._read_anew``). Untouched, such a change is a label
flickering on the same pixels, which tells nothing the first reading did not (on the bench
games all three were wrong: 9409's SK read CK, 9802's S2 read C2, 9807's C2 read S2), and stays
a reading of the zone.

Regions (derived from the calibration's zones):

* ``N E S W``: the seat's play zone (its trapezoid, further than ``band_mm`` from its edge);
* ``N.band`` ...: the strip along the seat's own table edge (``band_mm`` deep) where the player's
  hands rest: a face-up card lying there has been *exposed*, not played;
* ``centre.N`` ...: the centre square split into four triangles by the nearest side; tribute
  and return cards are passed through the centre (the giver lays the card on its side, the
  receiver pulls it across to its own side and takes it), anti-tribute jokers are shown there;
* ``outside``: in view but in no zone (off the table): exposed, seat unknown.

:class:`Interpreter` turns committed changes and the table lamps into CONTRACT observations:
``played`` (cards added to a seat's play zone), ``trick_cleared`` (the play zones become empty),
``exposed`` (cards in a band or outside), ``tribute`` / ``tribute_return`` (a card crossing the
centre from one side to another; a return is the one going back to a seat that gave a tribute
this deal), ``shown`` (big jokers laid in the centre and withdrawn by the same seat; any other
card shown there and withdrawn is ``exposed``), ``pass``
and ``deal_start`` from the lamps (see :data:`LAMPS` and vision/synth/video.py: the kiosk's
seat buttons light a lamp at the seat's edge, so recorded footage carries the passes).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from engine.cards import Card, parse_card, sort_cards
from engine.observations import Observation

__all__ = [
    "MAYBE",
    "SEATS",
    "LAMPS",
    "LAMP_STATES",
    "Box",
    "CardBox",
    "SeenCard",
    "Change",
    "TableState",
    "Tracker",
    "Interpreter",
    "table_state",
    "lamp_positions",
    "region_zone",
]

SEATS: tuple[str, ...] = ("N", "E", "S", "W")
OUTSIDE = "outside"
#: Lamps on the table: one per seat at its edge plus the deal lamp (see lamp_positions).
LAMPS: tuple[str, ...] = ("N", "E", "S", "W", "deal")
#: What a lit lamp means. Seat lamp: ``pass`` (green: the seat's pass button was pressed) or
#: ``lead`` (yellow, only while the deal lamp is lit: this seat drew the face-up card and leads
#: the first deal). Deal lamp: ``deal`` (blue: the dealer pressed "new deal").
LAMP_STATES: tuple[str, ...] = ("pass", "lead", "deal")

Box = tuple[float, float, float, float]
#: A detection's runner-up readings: ``(card or "none", cost)``, cost = ln(p(first) / p(this))
Alts = tuple[tuple[str, float], ...]
#: What a missing runner-up costs when two corners of one card are combined (the detector keeps
#: runner-ups up to vision.detector.ALT_COST)
_ALT_CAP = 5.0
#: What the distance of two corners fitting one card takes off the cost of "this corner is the
#: misread second corner of that card" (Tracker._pair_doubts), in nats
PAIR_BONUS = 0.5
#: Cost of "no card there" for a one-corner detection inside a card seen whole (Tracker). Other
#: one-corner cards get no such runner-up: tried at 2.0 on the bench games (2026-11-30), it
#: turned real illegal plays (two unrelated cards, fanned: one shows one corner) into legal
#: singles about as often as it removed a corner read in card art.
INSIDE_COST = 0.5
#: The label of a card the detector may have missed (vision/faces.py: a fan's lower court card
#: whose strip it could not name surely): counted apart from the cards, never played as one;
#: its runner-ups (the cards it may be, with what adding each costs) travel with the cards
#: added beside it as a doubt with no card (engine.observations "doubts", ``"card": null``)
MAYBE = "?"
#: Corner pairs of one label the tracker must have seen before it learns the deck's spacing of a
#: card's two corner indices (``Tracker.spacing``) and pairs corners read differently
SPACING_MIN = 20
#: How many of the latest one-label corner pairs the spacing is the median of
SPACING_KEEP = 200
#: A pair of two sure corners of one label off the learnt spacing by more than this (mm) is
#: not taken when one of them has a weak partner within ``PAIR_ON_MM`` of it (``_fitting_pairs``)
PAIR_OFF_MM = 8.0
PAIR_ON_MM = 4.0
#: Once the spacing is learnt, no corner pair lies further off it than this (mm)
PAIR_FAR_MM = 15.0
#: two corners of one label, both under the floor, count one card only when they lie the table's
#: learnt corner spacing apart within this (mm): see ``Tracker.faint_score``
LOW_PAIR_MM = 4.0
#: ... and when the classifier is sure of both (each corner's likeliest other reading, ``none``
#: included, at least this many nats dearer), neither a weak joker: a weak SB at 0.17 (``none``
#: 0.9 nats dearer) and an SB at 0.12 (S7 0.6) on a guyenne king's picture made a ghost joker
#: (seed 9603). At 1.5 a fanned CK CK lost its second king again (corners at 0.17 and 0.06, the
#: latter DK 1.4 nats dearer; seed 9802, of the unseen bench set), so 1.0: e times likelier.
LOW_PAIR_SURE = 1.0
#: Two corners of one label are no card's two corners when at least ``FAN_BETWEEN`` corner
#: indices of other labels lie on the line between them (within ``FAN_LINE_MM`` of it, past its
#: first and last tenth): a card's diagonal runs under its own face, so an index on it is a card's
#: lying on top, and several in a row are a fan's. The top-left indices of two C6 four steps
#: apart in the fan C6 H6 S6 S6 C6 H6 lay 69 mm apart, on plastic's 75 mm spacing, with H6 S6 S6
#: between, and counted one card: a six-card bomb read as five, with the detector and with the
#: renderer's own labels (seed 9407)
FAN_BETWEEN = 2
FAN_LINE_MM = 4.0
#: A corner under the floor left single counts as a card when a sure corner index of its own
#: rank lies this far (mm, from..to) from it, and none nearer, and it scored at least
#: ``KIN_MIN_SCORE`` (corner x class probability; the floor is 0.25): a fan's or
#: a stack's lower card of a pair, a bomb, a full house (``Tracker._next_of_kin``). Seen on the
#: bench games (2026-12-03): the fanned five-card bomb CT CT HT HT DT read as four (the second
#: CT's index at 0.22, 16 mm from the first; seed 9406), the full house CT ST HT D3 H3 read
#: without its ST (0.11-0.13, 18 mm from CT and HT; 9808) and the pair S7 S7 stacked 16 mm
#: apart read as one S7 (0.24; 9408)
KIN_STEP_MM = (12.0, 24.0)
KIN_MIN_SCORE = 0.1
#: ... with "no card there" among its runner-ups at this cost (nats)
KIN_NONE_COST = 1.0
#: A weak joker corner counted as a fan's lower joker (``Tracker._joker_kin``) lies at least
#: this much (mm) further from the centre of each joker counted by two corners than that joker's
#: own indices do
JOKER_KIN_OUT_MM = 3.0
#: ... and the classifier names no other card within this many nats of the joker: a weak SB at
#: 0.16, SK its runner-up at 0.0, 20 mm from a single HR's index on an earlier trick's cards
#: (game 47603, guyenne-classic) is no lower joker; 47201's lower jokers' runner-ups lay 0.9-2.0
#: nats dearer
JOKER_KIN_SURE = 0.5
#: A corner under the floor in a fan's row, not counted, may be a card (``Tracker._fan_maybes``):
#: adding it costs this (nats) plus ln(floor / its score)
FAN_MAYBE_COST = 1.0
#: the cost, in nats, of a card held before and after a seat's new play, lying among its cards,
#: read as a second copy the play holds (``Tracker._copies_held``): the referee adds it only to
#: make a play illegal as read legal
NEAR_SECOND_COST = 2.0
#: Four corners of one label lie as one card's four indices (``_four_index_cards``) when the
#: two diagonals differ by at most this (mm) and no side is shorter than ``RECT_SIDE_MM``
RECT_DIAG_MM = 8.0
RECT_SIDE_MM = 30.0


class CardBox(Protocol):
    """What the tracker needs of a detection (``vision.detector.Detection`` fits)."""

    @property
    def card(self) -> str: ...

    @property
    def box(self) -> Box: ...

    @property
    def score(self) -> float: ...


class _Calibration(Protocol):
    @property
    def zones(self) -> Mapping[str, Any]: ...

    def to_table(self, points_px: Any) -> Any: ...

    def zone_at_mm(self, point_mm: Sequence[float]) -> str | None: ...

    @property
    def geometry(self) -> Any: ...


def lamp_positions(
    width_mm: float = 900.0, height_mm: float = 900.0
) -> dict[str, tuple[float, float]]:
    """Table-mm centres of the lamps: each seat's lamp 45 mm in from its edge, right of the
    seat's centre as the player sees it; the deal lamp on the north edge, left of N's lamp."""
    w, h, e = width_mm, height_mm, 45.0
    return {
        "N": (0.28 * w, e),
        "E": (w - e, 0.28 * h),
        "S": (0.72 * w, h - e),
        "W": (e, 0.72 * h),
        "deal": (0.15 * w, e),
    }


def region_zone(region: str) -> str:
    """The calibration zone of a region (``N.band`` -> ``N``, ``centre.E`` -> ``centre``)."""
    return region.split(".", 1)[0]


@dataclass(frozen=True)
class SeenCard:
    """One card instance found in a frame: its label, where it lies (table mm), its region."""

    card: str
    x_mm: float
    y_mm: float
    region: str
    corners: int  # 1 or 2 corner indices seen
    #: runner-up readings ``(card or "none", cost in nats)``, cheapest first (see Alts)
    alts: Alts = ()
    #: seen by both corners: unit vectors along its short and long sides (table mm)
    axes: tuple[tuple[float, float], ...] | None = None


@dataclass(frozen=True)
class Change:
    """A committed change of one region: cards added and removed, and what lies there now."""

    t: float
    region: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    contents: tuple[str, ...]
    #: runner-up readings of added cards the detector was not sure of: ``(card, alts)``, one
    #: per card instance (engine.observations "doubts")
    doubts: tuple[tuple[str, Alts], ...] = ()
    #: whether a hand or motion was over the region's zone since its last commit; cards do
    #: not move by themselves, so an untouched change is the detector reading differently
    touched: bool = True


def _counter_tuple(c: Mapping[str, int]) -> tuple[str, ...]:
    return tuple(sorted(k for k, n in c.items() for _ in range(n)))


@dataclass(frozen=True)
class TableState:
    """What lies on the table, and what the interpreter must remember, at some moment of a
    session: where a pipeline started afresh (a kiosk restarted mid-trick) goes on from, so the
    cards it sees again are no new observations (:meth:`Tracker.seed`,
    :meth:`Interpreter.resume`, ``vision.pipeline.TablePipeline.resume``).
    :func:`table_state` folds it from the observations made so far.

    ``on_table``: region -> card labels (``N`` ... play zones, ``N.band`` ..., ``centre.N``
    ..., ``outside``; see :class:`Tracker`). ``tributes``: receiver -> payer of this deal's
    tributes; ``returned``: the seats that have returned a card. ``lamps``: lamp -> state of
    the lamps that may still be lit from the last observation (a pass): still lit when the
    pipeline starts, they are not a new press."""

    on_table: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    tributes: Mapping[str, str] = field(default_factory=dict)
    returned: frozenset[str] = frozenset()
    lamps: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, on_table: Mapping[str, Iterable[Any]]) -> TableState:
        """Cards on the table only (``Card`` objects or labels)."""
        return cls(on_table={r: tuple(sorted(str(c) for c in cs)) for r, cs in on_table.items()})

    def to_json(self) -> dict[str, Any]:
        return {
            "on_table": {r: list(cs) for r, cs in self.on_table.items()},
            "tributes": dict(self.tributes),
            "returned": sorted(self.returned),
            "lamps": dict(self.lamps),
        }


def table_state(observations: Iterable[Observation]) -> TableState:
    """Fold observations of the table (in order, as :class:`Interpreter` made them) into what
    lies there now: a ``deal_start`` begins afresh (the table is empty when cards are dealt);
    ``played`` cards lie in the seat's play zone until ``trick_cleared`` empties the four play
    zones (one with ``was`` reads cards lying there anew: they lie there as read now);
    ``exposed`` cards lie in the seat's band (no seat: ``outside``); a ``tribute`` or
    ``tribute_return`` card lies on the receiver's side of the centre (``to``). Cards taken
    away without an observation (an exposed card picked up, a tribute taken into the hand) may
    be listed although gone: a pipeline seeded with them sees them go, which is no observation.
    A ``pass`` as the last observation leaves that seat's lamp possibly lit."""
    zones: dict[str, Counter[str]] = {}
    tributes: dict[str, str] = {}
    returned: set[str] = set()
    last: Observation | None = None
    for o in observations:
        if o.type != "glimpse":  # (no card: nothing lies there for it)
            last = o
        ty = o.type
        cards = [str(c) for c in o.cards]
        if ty == "deal_start":
            zones.clear()
            tributes.clear()
            returned.clear()
        elif ty == "trick_cleared":
            for s in SEATS:
                zones.pop(s, None)
        elif ty == "played" and o.seat in SEATS:
            zone = zones.setdefault(o.seat, Counter())
            zone.subtract(str(c) for c in o.extra.get("was", ()))  # read anew: the same cards
            zone.update(cards)
            zones[o.seat] = +zone
        elif ty == "exposed":
            region = f"{o.seat}.band" if o.seat in SEATS else OUTSIDE
            zones.setdefault(region, Counter()).update(cards)
        elif ty in ("tribute", "tribute_return") and o.seat in SEATS:
            if o.to in SEATS:
                zones.setdefault(f"centre.{o.to}", Counter()).update(cards)
                if ty == "tribute":
                    tributes[o.to] = o.seat
            if ty == "tribute_return":
                returned.add(o.seat)
    lamps: dict[str, str] = {}
    if last is not None and last.type == "pass" and last.seat in SEATS:
        lamps[last.seat] = "pass"
    return TableState(
        on_table={r: _counter_tuple(c) for r, c in zones.items() if c},
        tributes=tributes,
        returned=frozenset(returned),
        lamps=lamps,
    )


def _pair_alts(a: Alts, b: Alts) -> Alts:
    """Runner-ups of a card seen at both corners: the mean cost of the two readings (a
    runner-up one corner did not keep costs ``_ALT_CAP`` there), cheapest first."""
    da, db = dict(a), dict(b)
    out = [(k, round((da.get(k, _ALT_CAP) + db.get(k, _ALT_CAP)) / 2, 3)) for k in {*da, *db}]
    return tuple(sorted(out, key=lambda kv: (kv[1], kv[0]))[:3])


def _fused(a: SeenCard, b: SeenCard) -> tuple[str, float, Alts] | None:
    """One card seen at two corners read differently (``a`` and ``b``, one corner each): the
    reading both corners together make cheapest, its cost (the two corners' costs of it added,
    a reading a corner did not keep costing ``_ALT_CAP`` there) and the other readings as
    runner-ups (the mean of the two costs, less the chosen one's, as :func:`_pair_alts`)."""
    da = {**dict(a.alts), a.card: 0.0}
    db = {**dict(b.alts), b.card: 0.0}
    both = {k: da.get(k, _ALT_CAP) + db.get(k, _ALT_CAP) for k in {*da, *db} if k != "none"}
    if not both:
        return None
    label = min(both, key=lambda k: (both[k], k))
    cost = both[label]
    alts = [(k, round((v - cost) / 2, 3)) for k, v in both.items() if k != label]
    nones = [v for v in (da.get("none"), db.get("none")) if v is not None]
    if nones:  # "no card there" at either corner: the cheaper doubt
        alts.append(("none", round(min(nones), 3)))
    return label, cost, tuple(sorted(alts, key=lambda kv: (kv[1], kv[0]))[:3])


def _none_at(alts: Alts, cost: float) -> Alts:
    """``alts`` with the runner-up "no card there" at ``cost`` (unless it has it cheaper),
    cheapest first."""
    got = dict(alts)
    if got.get("none", math.inf) <= cost:
        return alts
    got["none"] = cost
    return tuple(sorted(got.items(), key=lambda kv: (kv[1], kv[0])))


def _none_cost(alts: Alts) -> float:
    """The cost of "no card there" among ``alts`` (inf: not among them)."""
    return min((cost for k, cost in alts if k == "none"), default=math.inf)


def _with_none(card: SeenCard, cost: float) -> SeenCard:
    """``card`` with the runner-up "no card there" at ``cost`` (unless it has it cheaper)."""
    alts = _none_at(card.alts, cost)
    return card if alts is card.alts else replace(card, alts=alts[:4])


#: looks in a row that must glimpse a joker by one weak corner (or a card by one corner under the
#: floor) in a seat's play zone before it is told to the referee as a ``glimpse``
#: (``Tracker.glimpses``)
GLIMPSE_LOOKS = 2
#: A corner under the floor is glimpsed (``Tracker._lone_glimpses``) only when the classifier puts
#: "no card there" at least this many nats dearer than its reading: game 48404's SQ (paris,
#: adapted) had no "none" within 3.6 nats; a ghost D7 in the print of a fan's lower H9 (the
#: shipped detector on tigullio, tests/track/test_pipeline_video.py) had it at 0.84-0.96
GLIMPSE_NONE_MIN = 2.0
#: the cost of "no card" for an added card read like a card that left (:func:`_maybe_gone`): the
#: two together are evidence of their own, beyond the classifier's runner-up cost
GONE_COST = 1.5
#: "No card" for an added copy that the window's looks confirmed (``confirm`` of ``window``)
#: but the frame that commits the change does not show: the looks that saw it may have seen a
#: card's own print twice. Seed 9507: N's SB, a plastic joker with an index in all four
#: corners, seen as two jokers in two looks of four and as one in the committing frame, was
#: played as SB SB with no runner-up at all, a pair on a single
ABSENT_COST = 1.0
#: Two cards of one label counted by corner pairs whose centres lie within this (mm) may be one
#: card's print paired twice (:func:`_print_doubles`): the less sure one gets "no card there"
#: at ``PRINT_DOUBLE_COST`` (nats)
PRINT_DOUBLE_MM = 12.0
PRINT_DOUBLE_COST = 1.0
#: ... and for an added card that left the same region earlier while the region kept other
#: cards (``Tracker._faded``): with no hand near, a card read anew there and now read back as it
#: was; in a seat's play zone also under a hand, a card covered by the seat's next play and seen
#: again when a later play moves the pile (``_faded_back``). Seed 9902: E's H7 D7 lay fanned;
#: with no hand near, the H7's index went unread and a double box of the D7's corner made it
#: D7 D7; when E laid S9 D9 over them the H7 was read again and played as H7 S9 D9, not a combo
#: (the referee drops a card at its "no card" cost only when the play as read is illegal)
FADED_COST = 1.0


def _maybe_gone(alts: Alts, gone: Collection[str]) -> Alts:
    """An added card whose runner-up is a card that left the region in the same change may be
    that card read anew, not a new card: "no card" joins its runner-ups, at ``GONE_COST`` or
    that reading's cost if lower (a dearer "no card" it had is lowered to that: plastic's C5,
    its top corner covered by a new SJ, was read S5 by the other corner with C5 at 0.07 and
    "none" at 4.4, and played as S5 SJ; seed 9402, 2026-12-02). New cards laid over a trick's
    old ones half cover them, and a covered corner is misread (seed 9609: a D3 under a new full
    house read as H3 at 3.4 nats, played as a sixth card). Every added card with such a
    runner-up gets it, not only the likeliest: there the new D9 had the D3 as its runner-up
    too, at 3.2. The referee takes a runner-up only when the play as read is illegal, the
    cheapest legal reading within its budget (3 nats)."""
    if not gone:
        return alts
    costs = [cost for card, cost in alts if card in gone]
    if not costs:
        return alts
    return _none_at(alts, round(min(min(costs), GONE_COST), 3))


def _faded_back(label: str, alts: Alts, faded: Counter[str]) -> Alts:
    """An added card that may be a card the region lost earlier, seen again (``_faded``): "no
    card" joins its runner-ups, at ``FADED_COST`` for its own label, else at ``GONE_COST`` or
    the cost of a runner-up it lost (read back in another suit or rank), whichever is lower;
    the copy so explained is used up. Plastic 48802 at 2304x1296 (2026-12-06): N's S4, covered
    by N's later plays, left the zone and came back read C4 or S4 with two of them; proc-serif
    48815 at 1280x720 the same with W's H4."""
    if faded[label] > 0:
        faded[label] -= 1
        return _none_at(alts, FADED_COST)
    lost = [(cost, card) for card, cost in alts if faded[card] > 0]
    if lost:
        faded[min(lost)[1]] -= 1
    return _maybe_gone(alts, {card for _, card in lost})


def _fitting_pairs(
    ok: Mapping[tuple[int, int], float],
    at: Sequence[np.ndarray],
    weak: Sequence[bool],
    spacing: float | None,
) -> dict[tuple[int, int], float]:
    """The corner pairs of one label ``ok`` (index pairs into the corner centres ``at``) that
    lie within ``PAIR_FAR_MM`` of the table's learnt corner spacing (the 20 mm tolerance round
    82 holds until the deck's spacing is known: two C6 of a six-card fan lay four steps, 68 mm,
    apart and counted one card where the spacing is 85; seed 9806, tigullio), less
    a pair of two sure corners lying off the table's learnt corner spacing by more than
    ``PAIR_OFF_MM`` where one of them has a ``weak`` partner (a corner that counts only with
    its pair) on the spacing (within ``PAIR_ON_MM``): the sure corner left single still counts
    its card, and the weak one completes another. Two identical cards fanned tightly show two
    top-left indices ~15 mm apart and one bottom-right: that one paired with the lower card's
    index (86 mm, 11 off) while its own top-left index (74 mm, on the spacing) scored under
    the floor and, left single, counted no card: SB SB read as one SB (seed 9805, proc-serif).
    A pair with a weak corner is kept (plastic's jokers print an index in all four corners:
    a weak top-left lies on the spacing from two sure ones, seed 9802). Without a learnt
    spacing, ``ok`` as it is."""
    if spacing is None:
        return dict(ok)

    def off(i: int, j: int) -> float:
        return abs(float(np.hypot(*(at[i] - at[j]))) - spacing)

    ok = {k: e for k, e in ok.items() if off(*k) <= PAIR_FAR_MM}

    # sure corner -> it has a weak partner on the spacing
    anchored = {
        a if weak[b] else b for a, b in ok if weak[a] != weak[b] and off(a, b) <= PAIR_ON_MM
    }
    return {
        (i, j): e
        for (i, j), e in ok.items()
        if weak[i] or weak[j] or off(i, j) <= PAIR_OFF_MM or not ({i, j} & anchored)
    }


def _on_segment(p: np.ndarray, q: np.ndarray, pts: np.ndarray) -> int:
    """How many of the points ``pts`` lie on the segment ``p``-``q`` (within ``FAN_LINE_MM`` of
    it, between its first and last tenth): see ``FAN_BETWEEN``."""
    d = q - p
    length = float(np.hypot(*d))
    if length < 1e-6 or not len(pts):
        return 0
    u = d / length
    rel = pts - p
    along = rel @ u
    across = np.abs(rel[:, 0] * u[1] - rel[:, 1] * u[0])
    on = (along > 0.1 * length) & (along < 0.9 * length) & (across <= FAN_LINE_MM)
    return int(np.count_nonzero(on))


def _four_index_cards(
    ok: Mapping[tuple[int, int], float], at: Sequence[np.ndarray], same_mm: float
) -> dict[tuple[int, int], float]:
    """The corner pairs of one label ``ok``, where four corners lie as the corners of one card
    (``_rect_diagonals``) left with those two diagonals only. A card with an index in all four
    corners (plastic's jokers) gives two diagonals, counted once; but its long sides (70 mm)
    lie as near the corner spacing as the diagonals (83), and two sure corners of a long side
    were paired before a diagonal with a weak corner, the other long side with each other: two
    jokers for one (seed 9807: HR read HR HR)."""
    return _diagonals_only(ok, _rect_diagonals(ok, at, same_mm))


def _diagonals_only(
    ok: Mapping[tuple[int, int], float],
    rects: Sequence[tuple[set[tuple[int, int]], tuple[int, ...]]],
) -> dict[tuple[int, int], float]:
    """``ok`` with every pair touching a rectangle of ``rects`` (``_rect_diagonals``) dropped
    but its two diagonals."""
    out = dict(ok)
    for diagonals, quad in rects:
        for pair in list(out):
            if set(pair) & set(quad) and pair not in diagonals:
                del out[pair]
    return out


def _rect_diagonals(
    ok: Mapping[tuple[int, int], float], at: Sequence[np.ndarray], same_mm: float
) -> list[tuple[set[tuple[int, int]], tuple[int, ...]]]:
    """Four corners of one label lying as the corners of one card, each with its two diagonals:
    two pairs in ``ok`` with one centre (within ``same_mm``), diagonals of one length within
    ``RECT_DIAG_MM``, every side at least ``RECT_SIDE_MM``. Two identical cards fanned give no
    such rectangle (their corners' sides are the fan's offset, 15-35 mm, and the crossed
    diagonals differ in length)."""
    found: list[tuple[set[tuple[int, int]], tuple[int, ...]]] = []
    n = len(at)
    if n < 4 or n > 10:  # more than 10 corners of one label: a confused detector (_best_pairs)
        return found

    def dist(i: int, j: int) -> float:
        return float(np.hypot(*(at[i] - at[j])))

    def key(i: int, j: int) -> tuple[int, int]:
        return (i, j) if i < j else (j, i)

    used: set[int] = set()
    for quad in itertools.combinations(range(n), 4):
        if used & set(quad):
            continue
        a, b, c, d = quad
        for (p, q), (r, t) in (((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))):
            if key(p, q) not in ok or key(r, t) not in ok:
                continue
            if np.hypot(*((at[p] + at[q]) / 2 - (at[r] + at[t]) / 2)) >= same_mm:
                continue
            if abs(dist(p, q) - dist(r, t)) > RECT_DIAG_MM:
                continue
            if min(dist(p, r), dist(p, t), dist(q, r), dist(q, t)) < RECT_SIDE_MM:
                continue
            found.append(({key(p, q), key(r, t)}, quad))
            used |= set(quad)
            break
    return found


def _print_doubles(
    out: list[SeenCard], paired: Sequence[tuple[tuple[bool, float], np.ndarray, int]]
) -> None:
    """Give "no card there" at ``PRINT_DOUBLE_COST`` to each card of one label counted by a
    corner pair whose centre lies within ``PRINT_DOUBLE_MM`` of another such card's and whose
    pair is the less sure of the two (``paired``: per card counted by a pair, how unsure the pair
    is — a corner under the floor first, then the lower score —, its centre and its place in
    ``out``; marked in place).

    A card whose index is a long word printed in all four corners (plastic's jokers) is boxed in
    pieces along the word, and two pieces on opposite sides pair as a second diagonal whose
    centre lies a few mm off the card's own: 8.7 mm in 49082 (1280x720: E's SB played as SB SB,
    its second pair a corner scoring 0.36 with one under the floor at 0.16), ~11 mm in 49062
    (2304x1296), over ``same_mm`` (8 mm), which merges one card's two diagonals. Two real copies
    lying so close overlap all but a strip, and the lower one's diagonal then runs under the
    upper one (a fanned pair shows its lower card along one edge, 12-15 mm off, 47201). Only a
    doubt, as every other rule of this kind: the referee drops the card where the play is
    illegal with it, and keeps it where it is legal."""
    for (doubt_a, at_a, k_a), (doubt_b, at_b, k_b) in itertools.combinations(paired, 2):
        if np.hypot(*(at_a - at_b)) >= PRINT_DOUBLE_MM:
            continue
        k = max((doubt_a, k_a), (doubt_b, k_b))[1]
        out[k] = _with_none(out[k], PRINT_DOUBLE_COST)


def _best_pairs(
    n: int, ok: Mapping[tuple[int, int], float], weak: Sequence[bool] = ()
) -> list[tuple[int, int]]:
    """Corner pairs of one label: as many pairs of two sure corners as possible (fewest cards),
    then of a sure and a ``weak`` corner, then of two weak ones, then the least total distance
    error. Exhaustive; a label has a handful of corners at most (greedy pairing can pair the
    corner of one copy with the corner of the other and count three cards for two).

    A weak corner (a joker under the corner floor, or one under the score floor) left single
    counts no card, so it must not draw a sure corner away from its true partner, nor pair with
    another weak one while a sure corner it could complete stays single. A joker's index found
    twice, 11-12 mm apart (a second box on the same big index, weak): each sure corner paired
    with the other's weak double made two pairs with centres 12 mm apart, two jokers where one
    lay (seed 9405, proc-serif); the two weak boxes paired with each other beside the sure
    corner alone, also two (seed 9609, paris; both 2026-12-01)."""
    weak = list(weak) or [False] * n
    if n > 10:  # a confused detector: fall back to greedy
        chosen: list[tuple[int, int]] = []
        used: set[int] = set()
        for (i, j), _ in sorted(ok.items(), key=lambda kv: kv[1]):
            if i not in used and j not in used:
                chosen.append((i, j))
                used |= {i, j}
        return chosen
    # key: (-sure-sure pairs, -sure-weak pairs, -weak-weak pairs, total error), smallest wins
    best: tuple[tuple[int, int, int, float], list[tuple[int, int]]] = ((0, 0, 0, 0.0), [])

    def search(free: list[int], pairs: list[tuple[int, int]], key: list[float]) -> None:
        nonlocal best
        if len(free) < 2:
            k = (int(key[0]), int(key[1]), int(key[2]), key[3])
            if k < best[0]:
                best = (k, list(pairs))
            return
        i, rest = free[0], free[1:]
        for j in rest:
            e = ok.get((i, j))
            if e is not None:
                kind = int(weak[i]) + int(weak[j])  # 0 sure-sure, 1 sure-weak, 2 weak-weak
                nxt = list(key)
                nxt[kind] -= 1
                nxt[3] += e
                search([k for k in rest if k != j], [*pairs, (i, j)], nxt)
        search(rest, pairs, key)  # i stays single

    search(list(range(n)), [], [0, 0, 0, 0.0])
    return best[1]


def _a_step_from(
    p: np.ndarray, anchors: Sequence[np.ndarray], others: Sequence[np.ndarray]
) -> bool:
    """Whether corner ``p`` lies a fan's step (``KIN_STEP_MM``) from one of ``anchors`` and
    nearer than a step to none of them nor of ``others``: a lower card's index half covered by
    the card on top (``Tracker._next_of_kin``, ``_joker_kin``, ``_fan_maybes``); nearer, it is a
    double box of that index."""
    lo, hi = KIN_STEP_MM
    near = [float(np.hypot(*(p - q))) for q in anchors]
    if not near or min(near) > hi:
        return False
    return min(near) >= lo and all(float(np.hypot(*(p - q))) >= lo for q in others)


def _fan_middles(index_of: Sequence[tuple[str, np.ndarray]]) -> list[np.ndarray]:
    """The corner indices of ``index_of`` (label, table mm) lying inside a fan's row: another
    index a fan's step (``KIN_STEP_MM``) from each on either side, within ``FAN_LINE_MM`` of the
    line between those two. Such an index is a lower card's, whose far corner lies under the
    cards on top of it: it is no corner a card read in two suits shows (``Tracker._fuse``)."""
    lo, hi = KIN_STEP_MM
    out: list[np.ndarray] = []
    for i, (_, p) in enumerate(index_of):
        steps = [
            q - p
            for j, (_, q) in enumerate(index_of)
            if j != i and lo <= float(np.hypot(*(q - p))) <= hi
        ]
        if _either_side(steps):
            out.append(p)
    return out


def _either_side(offsets: Sequence[np.ndarray]) -> bool:
    """Whether two of ``offsets`` (other indices, less a corner's own place) lie on either side
    of the corner, within ``FAN_LINE_MM`` of the line between them: the corner lies in their
    row (``_fan_middles``, ``_straddlers``)."""
    return any(
        float(a @ b) < 0
        and abs(float(a[0] * b[1] - a[1] * b[0])) / float(np.hypot(*(a - b))) < FAN_LINE_MM
        for a, b in itertools.combinations(offsets, 2)
    )


def _away(p: tuple[float, float], places: Iterable[tuple[float, float]], mm: float) -> bool:
    """Whether table point ``p`` lies ``mm`` or more from every one of ``places``."""
    return all(math.hypot(p[0] - q[0], p[1] - q[1]) >= mm for q in places)


def _maybe_readings(label: str, cost: float, alts: Alts) -> Alts:
    """A card that may lie there (``MAYBE``): read ``label`` at ``cost``, or its runner-ups at
    ``cost`` more (at most four readings)."""
    readings = ((label, round(cost, 3)),) + tuple(
        (c, round(cost + a, 3)) for c, a in alts if c not in ("none", label)
    )
    return readings[:4]


def _straddlers(index_of: Sequence[tuple[str, np.ndarray]], same_mm: float) -> set[int]:
    """Which corner indices of ``index_of`` (label, table mm) lie astride two others: nearer
    each than a fan's step (``KIN_STEP_MM``, from), on either side and within ``FAN_LINE_MM``
    of the line between them. A double box of one corner (its own label within ``same_mm``) is
    no neighbour. No card's own index fits there, since each of the two would cover it: the
    corner stage boxed the space astride two fanned indices, part of each. In game 47002
    (plastic, 2026-12-05) such a box over S6's and C6's indices in the fan S6 C6 S6 was read C6
    (0.36, over the floor) in every look: the triple counted S6 S6 C6 C6, a legal bomb, the
    next seat's triple of tens became a bomb with a guessed card, and five plays were lost. In
    47003 one (S6, 0.27) paired with the top card's far corner and left that card's own index
    to count a second S6. :meth:`Tracker._cluster` makes each a card that may lie there
    (``MAYBE``, its reading at ``FAN_MAYBE_COST``: the referee adds it only to make an illegal
    play legal) that pairs with no corner. It assumes fans at least ``KIN_STEP_MM``'s 12 mm
    apart, as ``Tracker._next_of_kin`` does."""
    lo = KIN_STEP_MM[0]
    out: set[int] = set()
    for i, (label, p) in enumerate(index_of):
        near = [
            q - p
            for j, (other, q) in enumerate(index_of)
            if j != i
            and 0 < (d := float(np.hypot(*(q - p)))) < lo
            and not (other == label and d < same_mm)
        ]
        if _either_side(near):
            out.add(i)
    return out


class Tracker:
    """Corner detections -> per-region card multisets, committed when stable."""

    def __init__(
        self,
        calibration: _Calibration,
        *,
        card_mm: tuple[float, float] = (63.0, 88.0),
        index_mm: tuple[float, float] = (6.0, 12.0),
        pair_tol_mm: float = 20.0,
        same_mm: float = 8.0,
        band_mm: float = 110.0,
        stable_frames: int = 2,
        window: int = 5,
        confirm: int = 2,
        drop_window: int = 2,
        min_score: float = 0.25,
        max_gap_s: float = 0.5,
        inside_mm: float = 5.0,
        keep_score: float = 0.12,
        keep_mm: float = 6.0,
        keep_s: float = 1.0,
        fuse_mm: float = 5.0,
        fuse_cost: float = 4.0,
        faint_score: float = 0.05,
    ) -> None:
        if stable_frames < 1 or window < 1 or drop_window < 1 or not 1 <= confirm <= window:
            raise ValueError(
                "Tracker: stable_frames, window and drop_window must be >= 1, confirm 1..window"
            )
        self.calibration = calibration
        g = calibration.geometry
        self.width_mm, self.height_mm = float(g.width_mm), float(g.height_mm)
        w, h = card_mm
        ix, iy = index_mm
        self.pair_mm = math.hypot(w - 2 * ix, h - 2 * iy)
        self.index_angle = math.atan2(h - 2 * iy, w - 2 * ix)
        self.card_half = (w / 2, h / 2)
        self.inside_mm = inside_mm
        self.fuse_mm, self.fuse_cost = fuse_mm, fuse_cost
        self._spacings: list[float] = []
        self.keep_score, self.keep_mm, self.keep_s = keep_score, keep_mm, keep_s
        self.faint_score = min(faint_score, keep_score)
        self._strong: list[tuple[float, str, float, float]] = []
        self.pair_tol_mm = pair_tol_mm
        self.same_mm = same_mm
        self.band_mm = band_mm
        self.stable_frames = stable_frames
        self.window = window
        self.confirm = confirm
        self.drop_window = drop_window
        self.min_score = min_score
        self.max_gap_s = max_gap_s
        self._last_t: dict[str, float] = {}
        self.committed: dict[str, Counter[str]] = {r: Counter() for r in self.regions()}
        self._history: dict[str, list[Counter[str]]] = {r: [] for r in self.committed}
        self._candidate: dict[str, tuple[tuple[str, ...], int]] = {}
        self.last_seen: list[SeenCard] = []
        #: the last frame's corners under the floor left single and not counted, with the sure
        #: indices and whole cards around them: :meth:`_fan_maybes` reads them at a commit only
        self._lone_left: tuple[list[Any], list[Any], list[SeenCard]] = ([], [], [])
        self._touched: dict[str, bool] = dict.fromkeys(self.committed, True)
        self._unconfirmed: dict[str, bool] = dict.fromkeys(self.committed, False)
        #: per region, cards a change took away with no hand near (a label read anew, not a
        #: card lifted), or in a seat's play zone at all (a trick's cards stay till it is
        #: cleared: one gone was covered), while other cards stay: one seen there again may be
        #: that card, read back (``FADED_COST``); forgotten when the region empties
        self._faded: dict[str, Counter[str]] = {r: Counter() for r in self.committed}
        #: per region, where each label lay in the settled looks since the region's last change
        #: (``_copies_held``): label -> places (table mm)
        self._at: dict[str, dict[str, list[tuple[float, float]]]] = {r: {} for r in self.committed}
        #: the last frame's weak joker corners and lone corners under the floor left single:
        #: (label, region)
        self._glimpsed: list[tuple[str, str]] = []
        #: per seat zone, looks in a row that glimpsed each label, and those already told
        self._glimpse_runs: dict[str, Counter[str]] = {s: Counter() for s in SEATS}
        self._glimpse_told: dict[str, set[str]] = {s: set() for s in SEATS}
        #: jokers (and lone cards) glimpsed in a seat's play zone for ``GLIMPSE_LOOKS`` looks in
        #: a row with no hand near, too faint to count: (t, seat, card), for the caller to take
        #: (and clear)
        self.glimpses: list[tuple[float, str, str]] = []

    # ---------------------------------------------------------------- regions
    def regions(self) -> list[str]:
        out: list[str] = []
        for z in self.calibration.zones:
            if z in SEATS:
                out += [z, f"{z}.band"]
            elif z == "centre":
                out += [f"centre.{s}" for s in SEATS]
            else:
                out.append(z)
        out.append(OUTSIDE)
        return out

    def regions_of(self, zones: Iterable[str]) -> list[str]:
        """Regions inside the given calibration zones (``outside`` only with ``None``)."""
        wanted = set(zones)
        return [r for r in self.committed if region_zone(r) in wanted]

    def region_at(self, x: float, y: float) -> str:
        zone = self.calibration.zone_at_mm((x, y))
        if zone is None:
            return OUTSIDE
        if zone in SEATS:
            edge = {"N": y, "S": self.height_mm - y, "W": x, "E": self.width_mm - x}[zone]
            return f"{zone}.band" if edge < self.band_mm else zone
        if zone == "centre":
            dx, dy = x - self.width_mm / 2, y - self.height_mm / 2
            if abs(dx) > abs(dy):
                return "centre.E" if dx > 0 else "centre.W"
            return "centre.S" if dy > 0 else "centre.N"
        return zone

    # ---------------------------------------------------------------- corners -> cards
    def cards_in(self, detections: Sequence[CardBox], learn: bool = True) -> list[SeenCard]:
        """Cluster corner detections into card instances (see the module doc); ``learn``:
        their corner pairs count towards the table's corner spacing (``spacing``)."""
        dets = [d for d in detections if d.score >= self.min_score]
        if not dets:
            return []
        return self._cluster(dets, self._centres_mm(dets), learn=learn)

    def _cluster(
        self,
        dets: Sequence[CardBox],
        mm: np.ndarray,
        partner_only: int = 0,
        learn: bool = True,
        faint: int = 0,
    ) -> list[SeenCard]:
        """Card instances of corner detections ``dets`` whose box centres lie at ``mm``; the
        last ``partner_only`` detections (under the floor) count only as the second corner of a
        card whose first corner counts, or paired with each other on the table's corner spacing
        (``LOW_PAIR_MM``); the last ``faint`` of them (under ``keep_score``) only so."""
        if not dets:
            return []
        first_low = len(dets) - partner_only
        first_faint = len(dets) - faint
        # per label: (centre, runner-ups, weak, under the floor, under keep_score, score)
        by_label: dict[str, list[tuple[np.ndarray, Alts, bool, bool, bool, float]]] = {}
        maybe: list[SeenCard] = []  # (and cards read whole)
        # every corner index over the floor: a fan's indices in a row (FAN_BETWEEN)
        index_at = [
            k
            for k, d in enumerate(dets[:first_low])
            if d.card != MAYBE and not getattr(d, "whole", False)
        ]
        # a box astride two fanned indices is a card that may lie there (``_straddlers``)
        astride = _straddlers([(dets[k].card, mm[k]) for k in index_at], self.same_mm)
        astride = {index_at[i] for i in astride}
        index_of = [(dets[k].card, mm[k]) for k in index_at if k not in astride]
        for k, (d, p) in enumerate(zip(dets, mm, strict=True)):
            weak = bool(getattr(d, "weak", False))
            alt = tuple(getattr(d, "alts", ()))
            item = (p, alt, weak, k >= first_low, k >= first_faint, float(d.score))
            if k in astride:
                x, y = float(p[0]), float(p[1])
                readings = _maybe_readings(d.card, FAN_MAYBE_COST, alt)
                maybe.append(SeenCard(MAYBE, x, y, self.region_at(x, y), 1, readings))
                continue
            if d.card == MAYBE or getattr(d, "whole", False):
                # a card read whole (vision/faces.py: a court card by its picture) or one that
                # may be there: one card each, never a corner of a pair (two queens of a trick
                # 64 mm apart counted one, seed 9403)
                x, y = float(p[0]), float(p[1])
                corners = 1 if d.card == MAYBE else 2
                maybe.append(SeenCard(d.card, x, y, self.region_at(x, y), corners, item[1]))
                continue
            by_label.setdefault(d.card, []).append(item)
        out: list[SeenCard] = []
        # corners under the floor, left single: label, centre, runner-ups, score
        lone: list[tuple[str, np.ndarray, Alts, float]] = []
        # weak joker corners and lone corners under the floor (no card): label, region
        # (``Tracker.glimpses``)
        glimpsed: list[tuple[str, str]] = []
        if learn:
            self._glimpsed = glimpsed
        # the corner indices of the jokers counted, and the weak joker corners left single
        joker_at: list[np.ndarray] = []
        joker_lone: list[tuple[str, np.ndarray, Alts]] = []
        joker_cards: list[tuple[np.ndarray, np.ndarray]] = []  # centre, centre -> an index
        for label, pts in by_label.items():
            # merge double detections of one corner (a sure one before a weak one, either
            # before one under the floor)
            merged: list[np.ndarray] = []
            alts: list[Alts] = []
            weaks: list[bool] = []
            lows: list[bool] = []
            faints: list[bool] = []
            unsure: list[bool] = []  # may not pair under the floor (LOW_PAIR_SURE)
            jokers: list[bool] = []  # a joker under the corner floor (``weak``)
            scores: list[float] = []
            for p, a, w, low, fnt, sc in sorted(pts, key=lambda x: (x[3], x[4], x[2])):
                if all(np.hypot(*(p - q)) >= self.same_mm for q in merged):
                    merged.append(p)
                    alts.append(a)
                    jokers.append(w)
                    scores.append(sc)
                    weaks.append(w or low)
                    lows.append(low)
                    faints.append(fnt)
                    unsure.append(w or any(c < LOW_PAIR_SURE for _, c in a))
            n = len(merged)
            # other labels' indices only: a double box of one corner lies on its card's diagonal
            # (a joker's index found twice, 12 mm apart, seed 9405), and no third copy of this
            # label lies between two of its copies
            others = np.asarray([p for c, p in index_of if c != label], np.float64).reshape(-1, 2)
            err = {
                (i, j): abs(float(np.hypot(*(merged[i] - merged[j]))) - self.pair_mm)
                for i in range(n)
                for j in range(i + 1, n)
                if self._may_pair(
                    merged[i],
                    merged[j],
                    lows[i],
                    lows[j],
                    faints[i] or faints[j],
                    unsure[i] or unsure[j],
                )
                and _on_segment(merged[i], merged[j], others) < FAN_BETWEEN
            }
            near = {k: e for k, e in err.items() if e <= self.pair_tol_mm}
            ok = _fitting_pairs(near, merged, weaks, self.spacing)
            # a card's four corner indices keep their diagonals whatever the learnt spacing
            # says: plastic's SB, four sure corners, lost its 84 mm diagonal to a weak corner
            # on the 75 mm spacing, and its two long sides (69 mm) counted two jokers (seed
            # 9502)
            # (the rectangles among ``near`` are those among ``ok`` then: one search per label)
            rects = _rect_diagonals(near, merged, self.same_mm)
            for diagonals, _ in rects:
                ok.update({k: near[k] for k in diagonals})
            ok = _diagonals_only(ok, rects)
            used: set[int] = set()
            # per card counted by a pair: how unsure its pair is (a corner under the floor, its
            # lower score), its centre and its place in ``out`` (``_print_doubles``)
            paired: list[tuple[tuple[bool, float], np.ndarray, int]] = []
            is_joker = parse_card(label).is_joker
            for i, j in _best_pairs(n, ok, weaks):
                used |= {i, j}
                c = (merged[i] + merged[j]) / 2
                if is_joker:
                    joker_at += [merged[i], merged[j]]
                    joker_cards.append((c, merged[i] - c))
                if any(np.hypot(*(c - q)) < self.same_mm for _, q, _ in paired):
                    continue  # both diagonals of a card with an index in all four corners
                if learn and not (lows[i] and lows[j]):
                    self._spacings.append(float(np.hypot(*(merged[i] - merged[j]))))
                a = _pair_alts(alts[i], alts[j]) if alts[i] or alts[j] else ()
                axes = self._axes(merged[i], merged[j])
                paired.append(((lows[i] or lows[j], -min(scores[i], scores[j])), c, len(out)))
                out.append(
                    SeenCard(label, float(c[0]), float(c[1]), self.region_at(*c), 2, a, axes)
                )
            _print_doubles(out, paired)
            for i in range(n):
                if i not in used and not weaks[i]:  # a weak corner counts with its pair only
                    x, y = float(merged[i][0]), float(merged[i][1])
                    out.append(SeenCard(label, x, y, self.region_at(x, y), 1, alts[i]))
                    if is_joker:
                        joker_at.append(merged[i])
                elif i not in used and lows[i] and not jokers[i] and scores[i] >= KIN_MIN_SCORE:
                    lone.append((label, merged[i], alts[i], scores[i]))
                elif i not in used and jokers[i]:
                    joker_lone.append((label, merged[i], alts[i]))
                    if learn:
                        x, y = float(merged[i][0]), float(merged[i][1])
                        glimpsed.append((label, self.region_at(x, y)))
        whole = [c for c in out if c.corners == 2]
        kin = self._next_of_kin([(c, p, a) for c, p, a, _ in lone], index_of, whole)
        out += kin
        out += self._joker_kin(joker_lone, joker_at, index_of, joker_cards)
        kept = {(k.card, k.x_mm, k.y_mm) for k in kin}
        left = [x for x in lone if (x[0], float(x[1][0]), float(x[1][1])) not in kept]
        self._lone_left = (left, index_of, whole)
        if learn:
            glimpsed += self._lone_glimpses(left, index_of, whole)
        del self._spacings[:-SPACING_KEEP]
        return self._inside_doubts(self._pair_doubts(self._fuse(out, index_of))) + maybe

    def _next_of_kin(
        self,
        lone: Sequence[tuple[str, np.ndarray, Alts]],
        sure: Sequence[tuple[str, np.ndarray]],
        whole: Sequence[SeenCard] = (),
    ) -> list[SeenCard]:
        """Corners under the floor, left single (``lone``: label, centre, runner-ups), that count
        as a card: those a fan's step (``KIN_STEP_MM``) from a sure corner index (``sure``) of
        their own rank, and nearer none. Cards of one rank are laid together (a
        pair, a bomb, a full house's three), fanned or stacked a little apart, and the lower
        card's index is half covered by the one on top; a corner of another rank there may be a
        misread of the upper card's index, not a card; so is one lying well inside a card seen
        by both corners (``whole``: on top, so nothing under it shows): a detection on its art.
        Each counts with "no card" among its runner-ups at ``KIN_NONE_COST``: the referee drops
        it where the play is illegal with it."""
        out: list[SeenCard] = []
        at = [q for _, q in sure]
        for label, p, alts in lone:
            card = parse_card(label)
            kin = [q for c, q in sure if parse_card(c).rank == card.rank]
            if card.is_joker or not _a_step_from(p, kin, at):
                continue
            x, y = float(p[0]), float(p[1])
            got = _none_at(alts, KIN_NONE_COST)
            kin_card = SeenCard(label, x, y, self.region_at(x, y), 1, got[:4])
            if not self._inside(kin_card, whole):
                out.append(kin_card)
        return out

    def _joker_kin(
        self,
        lone: Sequence[tuple[str, np.ndarray, Alts]],
        counted: Sequence[np.ndarray],
        sure: Sequence[tuple[str, np.ndarray]],
        cards: Sequence[tuple[np.ndarray, np.ndarray]] = (),
    ) -> list[SeenCard]:
        """Weak joker corners left single (``lone``: label, centre, runner-ups) that count as a
        card: those a fan's step (``KIN_STEP_MM``) from the index of a joker counted
        (``counted``: the corner indices of the jokers counted, single or paired), or of one
        counted by this rule before it, and nearer no corner index of another card (``sure``)
        nor any joker counted. The analogue of :meth:`_next_of_kin` for jokers, which the corner
        stage scores under its floor (``weak``) and which count only paired: a joker bomb or pair
        fanned along its long side shows of each lower joker only its top strip with one index.
        It is chained, from the nearest, since a four-joker bomb has three lower cards, each a
        step from the next. Each counts with "no card" among its runner-ups at
        ``KIN_NONE_COST`` (a weak joker may be a ghost in a court card's picture): the referee
        drops it where the play is illegal with it. Seen on game 47201 (tigullio, 2026-12-05):
        E's joker bomb SB HR HR SB, fanned ~12-15 mm apart on an earlier play's aces, counted
        HR HR (the two indices scoring over the floor), then a wrong finishing order. A weak
        corner within a step of a counted joker is that joker's double box, not a card. So is
        one no further (``JOKER_KIN_OUT_MM``) from the centre of a joker counted by two corners
        (``cards``: centre, and the vector from it to one of its indices) than its own indices
        lie: a box on that joker's face (plastic's jokers print an index in all four corners,
        and extra boxes on their art and foot are common: seeds 9502, 9707), while a lower
        joker's index shows beside the top card, further out than the top card's indices. One
        the classifier reads about as likely as another card (``JOKER_KIN_SURE``) counts none."""
        out: list[SeenCard] = []
        anchors = [np.asarray(q, np.float64) for q in counted]
        others = [q for c, q in sure if not parse_card(c).is_joker]
        left = list(lone)
        while left and anchors:
            # the weak corner nearest a joker counted (chained: those counted here included)
            gaps = [min(float(np.hypot(*(p - q))) for q in anchors) for _, p, _ in left]
            k = int(np.argmin(gaps))
            label, p, alts = left.pop(k)
            if gaps[k] > KIN_STEP_MM[1]:
                break
            if not _a_step_from(p, anchors, others):
                continue  # a double box of a counted joker's index, or of another card's
            if any(np.hypot(*(p - c)) < np.hypot(*v) + JOKER_KIN_OUT_MM for c, v in cards):
                continue  # on a counted joker's own face
            if any(a != "none" and cost < JOKER_KIN_SURE for a, cost in alts):
                continue  # as likely another card
            x, y = float(p[0]), float(p[1])
            got = _none_at(alts, KIN_NONE_COST)
            out.append(SeenCard(label, x, y, self.region_at(x, y), 1, got[:4]))
            anchors.append(p)
        return out

    def _fan_maybes(
        self,
        lone: Sequence[tuple[str, np.ndarray, Alts, float]],
        sure: Sequence[tuple[str, np.ndarray]],
        whole: Sequence[SeenCard],
    ) -> list[SeenCard]:
        """Corners under the floor, left single and not counted as a card, that lie in a fan's
        row: a fan's step (``KIN_STEP_MM``) from a sure corner index of any rank, and nearer
        none, not inside a card seen by both corners. Each is a card that *may* lie there
        (``MAYBE``, its readings: its own label at ``FAN_MAYBE_COST`` plus how much surer the
        floor is than its score, then its runner-ups): :meth:`update` gives them to a play
        committed in their region as doubts with no card, which the referee adds only to make
        an illegal play legal (seed 9407: N's straight D8 D9 DT HJ CQ, the HJ's index half
        covered by the CQ at 0.24, was read D8 D9 DT CQ and completed with a guessed SJ)."""
        out: list[SeenCard] = []
        at = [q for _, q in sure]
        for label, p, alts, score in lone:
            if parse_card(label).is_joker or not _a_step_from(p, at, ()):
                continue
            x, y = float(p[0]), float(p[1])
            cost = FAN_MAYBE_COST + math.log(self.min_score / max(score, 1e-3))
            card = SeenCard(
                MAYBE, x, y, self.region_at(x, y), 1, _maybe_readings(label, cost, alts)
            )
            if not self._inside(card, whole):
                out.append(card)
        return out

    def _lone_glimpses(
        self,
        lone: Sequence[tuple[str, np.ndarray, Alts, float]],
        sure: Sequence[tuple[str, np.ndarray]],
        whole: Sequence[SeenCard],
    ) -> list[tuple[str, str]]:
        """Corners under the floor, left single and counted by no rule above (``lone`` after
        ``_next_of_kin``): label and region of each that is no double box of another label's
        index (nearer one than ``same_mm``), lies inside no card seen by both corners, and puts
        "no card" at least ``GLIMPSE_NONE_MIN`` dearer. No card (a ghost in a card's print looks
        the same), but :meth:`_glimpse` tells one seen in a seat's play zone for
        ``GLIMPSE_LOOKS`` looks in a row to the referee as a glimpse, as it does a weak joker's,
        which the decoder uses only for a turn the table played on as taken (engine/decoder.py
        ``_put_in``). Game 48404 (paris, adapted; issue 44): W's single SQ at 53.6 s showed one
        index, scored 0.16-0.17 against the floor of 0.25 in both of the zone's looks, and the
        play was lost. General: any card laid with one corner in view, read weakly."""
        out: list[tuple[str, str]] = []
        at = [q for _, q in sure]
        for label, p, alts, _ in lone:
            x, y = float(p[0]), float(p[1])
            if _none_cost(alts) < GLIMPSE_NONE_MIN:
                continue
            if any(float(np.hypot(*(p - q))) < self.same_mm for q in at):
                continue
            if not self._inside(SeenCard(label, x, y, "", 1, ()), whole):
                out.append((label, self.region_at(x, y)))
        return out

    def _may_pair(
        self, p: np.ndarray, q: np.ndarray, low_p: bool, low_q: bool, faint: bool, unsure: bool
    ) -> bool:
        """Whether two corners of one label may be one card's two corners (before the distance
        test): a sure corner with any but a faint one; two under the floor (one may be faint)
        only when they lie the table's learnt corner spacing apart within ``LOW_PAIR_MM`` and
        neither is ``unsure`` (a weak joker, or a reading within ``LOW_PAIR_SURE`` of another).
        Plastic's court-card indices score low at the corner stage: an SQ's two corners at 0.24
        and 0.11, 73.2 mm apart on a 74.5 mm spacing, and an HQ's at 0.17 and 0.07 (3 mm off)
        counted no card, and the plays were lost (seeds 9807 and 9402). Two ghosts of one label
        seldom lie a card's corner spacing apart."""
        if not (low_p and low_q):
            return not faint
        spacing = self.spacing
        if spacing is None or unsure:
            return False
        return abs(float(np.hypot(*(p - q))) - spacing) <= LOW_PAIR_MM

    @property
    def second_copy_mm(self) -> float:
        """How far (mm) from every place a label lay in a zone's settled looks a copy of it
        must lie after a hand came to be a second copy (:meth:`_copies_held`): the card's
        corner spacing (the larger of its size's and the learnt one) and a double box's
        tolerance (``same_mm``). One card seen by its centre, then by one corner, moves half a
        spacing; by one corner, then the other, one spacing. About 90 mm for a 63 x 88 card."""
        return max(self.pair_mm, self.spacing or 0.0) + self.same_mm

    @property
    def spacing(self) -> float | None:
        """This table's distance between a card's two corner indices (mm), learnt from the corner
        pairs of one label seen so far (the median of the latest ``SPACING_KEEP``); None until
        ``SPACING_MIN`` were seen. Decks differ: plastic's indices sit ~75 mm apart, not
        ``pair_mm`` (82, a 63 x 88 mm card with the index centre 6 x 12 mm in)."""
        if len(self._spacings) < SPACING_MIN:
            return None
        return float(np.median(self._spacings))

    def _fuse(
        self, cards: list[SeenCard], index_of: Sequence[tuple[str, np.ndarray]]
    ) -> list[SeenCard]:
        """Two one-corner cards read differently, lying the table's corner spacing apart
        (``spacing`` +- ``fuse_mm``), are one card when both readings together name one card
        for at most ``fuse_cost`` nats (each corner's runner-up cost of it, added): a card whose
        two corners were read in two suits (plastic enrolled: S9 at one corner, C9 at the other)
        is one card, named from both. The cheapest pairs first; each corner in one pair.

        Not two ends of a fan's row, though: with ``FAN_BETWEEN`` of the corner indices
        ``index_of`` lying between them, as for a pair of one label. Stacked bombs lay their
        indices in a row 17 mm apart, and the first and fifth lie about the spacing apart
        (seed 9705, proc-serif, spacing 74 mm): a DK and an HK, 69 mm apart with three indices
        between, and an SJ and an HJ (the top card's top-left index, left single when its
        bottom-right one paired with the HJ's under it), were each taken as one card, and two
        bombs were read a card short.

        Nor an index inside a fan's row (``_fan_middles``): its card's far corner lies under
        the cards fanned over it. Game 47904 (paris, 2026-12-05): W's bomb D8 D8 S8 H8 S8 lay
        over an HQ of an earlier play whose one index showed; the H8's index, the bomb's fourth,
        lay the spacing (84 mm) from the HQ's, just where the HQ's covered corner was, and was
        taken as that corner: the bomb counted four eights, and W's going out was missed."""
        spacing = self.spacing
        singles = [k for k, c in enumerate(cards) if c.corners == 1]
        if spacing is None or len(singles) < 2:
            return cards
        pts = np.asarray([p for _, p in index_of], np.float64).reshape(-1, 2)
        middles = _fan_middles(index_of)
        singles = [
            k
            for k in singles
            if all(
                np.hypot(cards[k].x_mm - m[0], cards[k].y_mm - m[1]) >= self.same_mm
                for m in middles
            )
        ]
        options: list[tuple[float, float, int, int, str, Alts]] = []
        for ai, i in enumerate(singles):
            for j in singles[ai + 1 :]:
                a, b = cards[i], cards[j]
                if a.card == b.card:
                    continue
                off = abs(math.hypot(a.x_mm - b.x_mm, a.y_mm - b.y_mm) - spacing)
                if off > self.fuse_mm:
                    continue
                p, q = np.array([a.x_mm, a.y_mm]), np.array([b.x_mm, b.y_mm])
                if _on_segment(p, q, pts) >= FAN_BETWEEN:
                    continue
                got = _fused(a, b)
                if got is not None and got[1] <= self.fuse_cost:
                    options.append((got[1], off, i, j, got[0], got[2]))
        if not options:
            return cards
        used: set[int] = set()
        made: list[SeenCard] = []
        for _, _, i, j, label, alts in sorted(options):
            if i in used or j in used:
                continue
            used |= {i, j}
            a, b = cards[i], cards[j]
            p, q = np.array([a.x_mm, a.y_mm]), np.array([b.x_mm, b.y_mm])
            c = (p + q) / 2
            x, y = float(c[0]), float(c[1])
            made.append(SeenCard(label, x, y, self.region_at(x, y), 2, alts, self._axes(p, q)))
        return [c for k, c in enumerate(cards) if k not in used] + made

    def _pair_doubts(self, cards: list[SeenCard]) -> list[SeenCard]:
        """Two one-corner cards ``pair_mm`` apart, where the first's runner-up reading is the
        second's label, may be the two corners of one card with one corner misread (a CJ read
        C3 at one corner): the first gets the runner-up "no card" at that reading's cost less
        ``PAIR_BONUS`` (the distance fits one card; a second copy of the label would not
        explain it)."""
        singles = [c for c in cards if c.corners == 1]
        if len(singles) < 2:
            return cards
        out = []
        for c in cards:
            costs = dict(c.alts)
            best: float | None = None
            if c.corners == 1 and costs:
                for o in singles:
                    if o is c or o.card == c.card or o.card not in costs:
                        continue
                    d = math.hypot(c.x_mm - o.x_mm, c.y_mm - o.y_mm)
                    if abs(d - self.pair_mm) <= self.pair_tol_mm:
                        v = max(0.0, costs[o.card] - PAIR_BONUS)
                        best = v if best is None else min(best, v)
            out.append(c if best is None else _with_none(c, round(best, 3)))
        return out

    def _inside_doubts(self, cards: list[SeenCard]) -> list[SeenCard]:
        """A card seen by one corner index lying well inside a card seen by both of its corners
        (so lying on top: nothing of another card shows through it) is probably a detection on
        that card's art (a corner read in a joker's picture), and one of the same label lying
        where that card's other two corners are is its own index (``_other_index``): each gets
        the runner-up reading "no card" at ``INSIDE_COST``, so the referee drops it when the
        play is illegal with it."""
        whole = [c for c in cards if c.corners == 2 and c.axes is not None]
        if not whole:
            return cards
        return [
            _with_none(c, INSIDE_COST)
            if c.corners == 1 and (self._inside(c, whole) or self._other_index(c, whole))
            else c
            for c in cards
        ]

    def _other_index(self, c: SeenCard, whole: Sequence[SeenCard]) -> bool:
        """Whether ``c`` lies where a card of its label seen by both corners (``whole``) has
        its other two corners: as far from that card's centre as its two indices (within
        ``RECT_DIAG_MM``, on the table's learnt spacing) and at least ``RECT_SIDE_MM`` from
        both. A card with an index in all four corners (plastic's jokers) shows it there; its
        second diagonal, with one corner under the floor, was not paired, and the one sure
        corner left counted a second joker (seed 9507, N's SB, in two looks of four). There the
        change was committed on a look without that corner (``ABSENT_COST`` covers it), so no
        bench play changed by this alone (2026-12-04); it covers a commit on such a look. The
        two indices seen may be either diagonal, so only distances count."""
        half = (self.spacing or self.pair_mm) / 2
        cos_a, sin_a = math.cos(self.index_angle), math.sin(self.index_angle)
        for w in whole:
            if w.card != c.card or w.axes is None:
                continue
            dx, dy = c.x_mm - w.x_mm, c.y_mm - w.y_mm
            if abs(math.hypot(dx, dy) - half) > RECT_DIAG_MM:
                continue
            (ux, uy), (vx, vy) = w.axes
            ex, ey = half * (cos_a * ux + sin_a * vx), half * (cos_a * uy + sin_a * vy)
            if min(math.hypot(dx - ex, dy - ey), math.hypot(dx + ex, dy + ey)) >= RECT_SIDE_MM:
                return True
        return False

    def _inside(self, c: SeenCard, whole: Sequence[SeenCard]) -> bool:
        """Whether ``c``'s centre lies well inside (``inside_mm`` from its edges) one of the
        cards ``whole``, each seen by both corners (``axes`` known)."""
        hw, hh = self.card_half[0] - self.inside_mm, self.card_half[1] - self.inside_mm
        for w in whole:
            if w.axes is None:
                continue
            dx, dy = c.x_mm - w.x_mm, c.y_mm - w.y_mm
            (ux, uy), (vx, vy) = w.axes
            if abs(dx * ux + dy * uy) < hw and abs(dx * vx + dy * vy) < hh:
                return True
        return False

    def _axes(self, p: np.ndarray, q: np.ndarray) -> tuple[tuple[float, float], ...] | None:
        """Unit vectors along a card's short and long sides, from its two corner indices (the
        indices sit at opposite corners: the diagonal between them is ``index_diag``)."""
        d = q - p
        norm = float(np.hypot(*d))
        if norm < 1e-6:
            return None
        ang = math.atan2(float(d[1]), float(d[0])) - self.index_angle
        ux, uy = math.cos(ang), math.sin(ang)
        return ((ux, uy), (-uy, ux))

    def _hysteresis(
        self, t: float, detections: Sequence[CardBox]
    ) -> tuple[list[CardBox], np.ndarray, int, bool, int]:
        """Detections over ``min_score``, plus those over ``keep_score`` where a corner of the
        same label was over ``min_score`` within ``keep_mm`` in the last ``keep_s`` (a corner
        hovering about the floor under camera noise is not lost every other frame); with their
        centres in table mm. Then the other detections over ``keep_score``, and how many: they
        count only as a card's second corner (:meth:`_cluster`; a joker whose second corner
        scored 0.19 next to a weak first one, seed 9404). Then those over ``faint_score``, and
        how many: they count only paired with another under the floor on the table's corner
        spacing. (The arguments of :meth:`_cluster`.)"""
        cand = [d for d in detections if d.score >= self.faint_score]
        mm = self._centres_mm(cand) if cand else np.zeros((0, 2))
        strong = [i for i, d in enumerate(cand) if d.score >= self.min_score]
        recent = [r for r in self._strong if t - r[0] <= self.keep_s]
        recent += [(t, cand[i].card, float(mm[i, 0]), float(mm[i, 1])) for i in strong]
        self._strong = recent
        keep = [
            i
            for i, d in enumerate(cand)
            if d.score >= self.min_score
            or d.score >= self.keep_score
            and any(
                r[1] == d.card and math.hypot(r[2] - mm[i, 0], r[3] - mm[i, 1]) <= self.keep_mm
                for r in recent
            )
        ]
        kept = set(keep)
        rest = [i for i in range(len(cand)) if i not in kept and cand[i].score >= self.keep_score]
        faint = [i for i in range(len(cand)) if cand[i].score < self.keep_score]
        order = keep + rest + faint
        return [cand[i] for i in order], mm[order], len(rest) + len(faint), True, len(faint)

    def _centres_mm(self, dets: Sequence[CardBox]) -> np.ndarray:
        boxes = np.asarray([d.box for d in dets], np.float64).reshape(-1, 4)
        centres = np.stack([(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2], 1)
        return np.asarray(self.calibration.to_table(centres), np.float64).reshape(-1, 2)

    # ---------------------------------------------------------------- the update
    def update(
        self,
        t: float,
        detections: Sequence[CardBox],
        *,
        zones: Iterable[str] | None = None,
        busy: Iterable[str] = (),
    ) -> list[Change]:
        """Feed the detections of one frame.

        ``zones``: the calibration zones these detections cover (None: the whole frame, incl.
        ``outside``); regions elsewhere keep their state. ``busy``: zones with a hand over them
        (or moving): their regions are neither observed nor committed this frame. Returns the
        changes committed now."""
        self._glimpsed = []
        seen = self._cluster(*self._hysteresis(t, detections))
        self.last_seen = seen
        regions = list(self.committed) if zones is None else self.regions_of(zones)
        busy_set = set(busy)
        counts: dict[str, Counter[str]] = {r: Counter() for r in regions}
        unsure: dict[str, dict[str, list[Alts]]] = {}
        where: dict[str, dict[str, list[tuple[float, float]]]] = {r: {} for r in counts}
        for c in seen:
            if c.region in counts:
                counts[c.region][c.card] += 1
                unsure.setdefault(c.region, {}).setdefault(c.card, []).append(c.alts)
                where[c.region].setdefault(c.card, []).append((c.x_mm, c.y_mm))
        changes: list[Change] = []
        self.touch(busy_set)
        for r in regions:
            if region_zone(r) in busy_set:
                self._history[r] = []
                self._candidate.pop(r, None)
                self._unconfirmed[r] = False
                continue
            hist = self._history[r]
            if t - self._last_t.get(r, -math.inf) > self.max_gap_s:
                # not observed just before: earlier frames say nothing about now
                hist.clear()
                self._candidate.pop(r, None)
            self._last_t[r] = t
            hist.append(counts[r])
            del hist[: -max(self.window, self.drop_window)]
            # per label: more copies than committed only when ``confirm`` of the last ``window``
            # looks see them (a ghost of one frame is no card); fewer only when none of the last
            # ``drop_window`` looks does (a corner missed in one frame costs nothing)
            cand: Counter[str] = Counter()
            have = self.committed[r]
            add_h, drop_h = hist[-self.window :], hist[-self.drop_window :]
            need = min(self.confirm, len(add_h))
            for k in {k for h in hist for k in h} | set(have):
                seen_n = sorted((h[k] for h in add_h), reverse=True)
                most = max(h[k] for h in drop_h)
                if seen_n[need - 1] > have[k]:
                    cand[k] = seen_n[need - 1]
                elif most < have[k]:
                    cand[k] = most
                else:
                    cand[k] = have[k]
            cand = +cand
            # something seen but not yet confirmed: keep looking (Tracker.pending)
            self._unconfirmed[r] = any(n > cand[k] for h in hist for k, n in h.items())
            key = _counter_tuple(cand)
            prev_key, streak = self._candidate.get(r, ((), 0))
            streak = streak + 1 if prev_key == key and r in self._candidate else 1
            self._candidate[r] = (key, streak)
            if not (streak >= self.stable_frames and key != _counter_tuple(self.committed[r])):
                if counts[r] == self.committed[r]:  # a settled look: where its cards lie
                    self._settled(r, where[r])
                continue
            old = self.committed[r]
            self.committed[r] = cand
            both = _counter_tuple(cand - old)
            added = tuple(k for k in both if k != MAYBE)
            removed = tuple(k for k in _counter_tuple(old - cand) if k != MAYBE)
            second, near = self._copies_held(r, old, cand, counts[r], where[r], added)
            anew = self._read_anew(r, removed, added, where[r], second)
            self._at[r] = {}
            self._settled(r, where[r])
            if not added and not removed:
                continue  # only a card that may be there came or went: no change of cards
            added, removed = tuple(sorted(added + second)), tuple(sorted(removed + second))
            # runner-ups of the added cards, from this frame's instances of their labels
            doubts: list[tuple[str, Alts]] = []
            # per label, the instances that may be no card first (a fan's lower card
            # seen under the floor, ``_next_of_kin``): the copy a change adds is the one
            # least sure to be there, and the referee drops a card at its "none" cost
            pool = {k: sorted(v, key=_none_cost) for k, v in unsure.get(r, {}).items()}
            gone = set(removed) - set(second)  # a second copy is no card read anew
            faded = self._faded[r]
            # copies the looks confirmed that this frame does not show
            absent = +(cand - counts[r])
            for label in added:
                got = pool.get(label)
                a = got.pop(0) if got else ()
                a = _maybe_gone(a, gone)
                a = _faded_back(label, a, faded)
                if absent[label] > 0:
                    absent[label] -= 1
                    a = _none_at(a, ABSENT_COST)
                if a:
                    doubts.append((label, a))
            if added:  # cards that may lie beside them (MAYBE), each with its readings
                # a copy held before and after, lying among the new cards: maybe a second
                # copy laid near the first (49007: S's D7 C8 S9 DT DJ over its D7)
                doubts += [(MAYBE, _maybe_readings(k, NEAR_SECOND_COST, ())) for k in near]
                maybes = pool.get(MAYBE, [])
                doubts += [(MAYBE, a) for a in maybes[: both.count(MAYBE)] if a]
                # and a fan's faint corners of cards not lying there before
                doubts += [
                    (MAYBE, m.alts)
                    for m in self._fan_maybes(*self._lone_left)
                    if m.region == r and m.alts and m.alts[0][0] not in old
                ]
            contents = tuple(k for k in key if k != MAYBE)
            if not contents:
                faded.clear()
            elif removed and (not self._touched[r] or r in SEATS):
                faded.update(removed)
            if anew:  # the cards read anew first, as a change of their own (``_read_anew``)
                olds, news = Counter(o for o, _ in anew), Counter(n for _, n in anew)
                own, mine, rest = Counter(news), [], []
                for d in doubts:
                    if d[0] != MAYBE and own[d[0]] > 0:
                        own[d[0]] -= 1
                        mine.append(d)
                    else:
                        rest.append(d)
                changes.append(
                    Change(t, r, _counter_tuple(news), _counter_tuple(olds), contents, tuple(mine))
                )
                added = _counter_tuple(Counter(added) - news)
                removed = _counter_tuple(Counter(removed) - olds)
                doubts = rest
            if added or removed:
                changes.append(
                    Change(t, r, added, removed, contents, tuple(doubts), self._touched[r])
                )
            self._touched[r] = False
        self._glimpse(t, [r for r in regions if region_zone(r) not in busy_set])
        return changes

    def _settled(self, r: str, where: Mapping[str, list[tuple[float, float]]]) -> None:
        """Keep where each label lies in region ``r`` in this look (``_at``; places within
        ``same_mm`` of one kept already are not kept again)."""
        at = self._at[r]
        for label, places in where.items():
            kept = at.setdefault(label, [])
            for p in places:
                if _away(p, kept, self.same_mm):
                    kept.append(p)

    def _copies_held(
        self,
        r: str,
        old: Counter[str],
        cand: Counter[str],
        now: Counter[str],
        where: Mapping[str, list[tuple[float, float]]],
        added: Sequence[str],
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Labels of a change in seat zone ``r`` (a hand came, adding ``added``) that the zone
        held before and holds as often now (``cand``, and this look ``now``), as two lists:

        * *second copies*: one of the label's places lies ``second_copy_mm`` or more from every
          place it lay in the zone's settled looks since its last change (``_at``): a new play
          holds a second copy, covering the first. Guandan's two decks: by counts alone the
          new copy is the old one still seen, and the play loses it. Plastic 48957 (1280x720,
          adapted, and with the renderer's own labels): E's DT CJ DQ SK DA laid over its
          earlier S8 D9 DT HJ CQ, the new DT 111 mm from the old; played as CJ DQ SK DA, then
          re-read with a guessed HT.
        * *near seconds*: not a second copy, but one of its places lies within
          ``second_copy_mm`` of a new card's place (an added label's place ``same_mm`` or more
          from where that label lay before): a second copy may have been laid near the first,
          which by sight is one card. Plastic 49007: S's D7 C8 S9 DT DJ over its own D7, the
          two D7 ~15 mm apart, played as C8 S9 DT DJ even with the renderer's own labels.

        General: any seat that plays both copies of a card onto its own zone before a clearing.
        Call before ``_at[r]`` is reset."""
        if not added or r not in SEATS or not self._touched[r]:
            return (), ()
        far_mm, at = self.second_copy_mm, self._at[r]
        new_at = [
            p for k in set(added) for p in where.get(k, ()) if _away(p, at.get(k, ()), self.same_mm)
        ]
        second: list[str] = []
        near: list[str] = []
        for label, n in old.items():
            if label == MAYBE or not n or cand[label] != n or now[label] != n:
                continue
            places = at.get(label)
            if places and any(_away(p, places, far_mm) for p in where.get(label, ())):
                second.append(label)
            elif any(not _away(p, new_at, far_mm) for p in where.get(label, ())):
                near.append(label)
        return tuple(second), tuple(near)

    def _read_anew(
        self,
        r: str,
        removed: Sequence[str],
        added: Sequence[str],
        where: Mapping[str, list[tuple[float, float]]],
        second: Sequence[str],
    ) -> tuple[tuple[str, str], ...]:
        """Cards of a hand's change of seat zone ``r`` that are cards lying there read anew,
        not cards the seat played: a removed label and an added one of the same rank (no
        joker), the added one seen within ``same_mm`` of a place where the removed one lay in
        the zone's settled looks since its last change (``_at``), paired one for one as
        ``(earlier, new)``. A card does not move by itself, and a card of the seat's new play
        laid with its index on the very spot of an earlier card's index would have to cover it
        exactly. Guyenne-classic 49288 (2304x1296 enrolment, read at 1280x720, 2026-12-07): N's
        own earlier D3 D4 S3, still in its zone, were read C3 H4 H3 as N laid DA SJ beside
        them, and the play counted five cards (C3 DA H3 H4 SJ; read again with this split, on
        the same detections: DA SJ and a re-reading, the game 49/49 plays against 48/49).
        General: any design whose suits within a colour the classifier confuses, at any seat's
        play beside its own earlier cards. The split keeps ``_relabel``'s rule (same rank,
        other suit): the referee takes the new reading where it fits the table better (a
        ``played`` with ``was``). A card read anew as another rank is still counted as new.
        Call before ``_at[r]`` is reset."""
        if r not in SEATS or not self._touched[r] or not removed or not added:
            return ()
        at, pairs = self._at[r], []
        news = [a for a in added if a != MAYBE and a not in second]
        for old in removed:
            if old == MAYBE or old in second:
                continue
            places = at.get(old, ())
            new = next(
                (
                    n
                    for n in news
                    if _read_as(old, n)
                    and any(not _away(p, places, self.same_mm) for p in where.get(n, ()))
                ),
                None,
            )
            if new is not None:
                news.remove(new)
                pairs.append((old, new))
        return tuple(pairs)

    def _glimpse(self, t: float, looked: Sequence[str]) -> None:
        """Jokers seen by one weak corner in a seat's play zone (no card: a ghost joker in a
        court card's picture looks the same), and any card seen by one corner under the floor
        alone (``_lone_glimpses``), for ``GLIMPSE_LOOKS`` looks in a row while the zone does not
        count that label: told once (``glimpses``) until the zone empties."""
        now: dict[str, set[str]] = {}
        for label, region in self._glimpsed:
            now.setdefault(region, set()).add(label)
        for r in looked:
            if r not in self._glimpse_runs:
                continue  # only a seat's play zone
            runs, told = self._glimpse_runs[r], self._glimpse_told[r]
            if not self.committed[r]:
                told.clear()
            for label in list(runs):
                if label not in now.get(r, ()):
                    del runs[label]
            for label in now.get(r, ()):
                if self.committed[r][label]:
                    continue
                runs[label] += 1
                if runs[label] >= GLIMPSE_LOOKS and label not in told:
                    told.add(label)
                    self.glimpses.append((t, r, label))

    def touch(self, zones: Iterable[str]) -> None:
        """Zones with a hand or motion over them this frame (also when nothing is detected
        there): their next committed change is a physical one (``Change.touched``)."""
        for r in self.regions_of(zones):
            self._touched[r] = True

    def seed(self, on_table: Mapping[str, Iterable[Any]]) -> None:
        """Start from what is known to lie on the table (a restart: see :class:`TableState`):
        every region's committed contents become those given (regions not named: empty), as if
        seen and confirmed, so seeing them again changes nothing, cards added to them are added
        and their removal is a removal. Unknown regions raise ``ValueError``."""
        unknown = sorted(set(on_table) - set(self.committed))
        if unknown:
            raise ValueError(
                f"Tracker.seed: unknown regions {unknown} (have {list(self.committed)})"
            )
        for r in self.committed:
            self.committed[r] = Counter(str(c) for c in on_table.get(r, ()))
            self._history[r] = []
            self._candidate.pop(r, None)
            self._last_t.pop(r, None)
            self._unconfirmed[r] = False
            self._faded[r] = Counter()
            self._at[r] = {}
            if r in self._glimpse_runs:
                self._glimpse_runs[r].clear()
                self._glimpse_told[r].clear()

    def pending(self, zones: Iterable[str] | None = None) -> bool:
        """True while some region (of ``zones``) sees something other than what it committed,
        or has not yet confirmed it: the caller should keep detecting there."""
        regions = list(self.committed) if zones is None else self.regions_of(zones)
        for r in regions:
            key, streak = self._candidate.get(r, (None, 0))
            if key is None:
                return True
            if key != _counter_tuple(self.committed[r]) or streak < self.stable_frames:
                return True
            if self._unconfirmed.get(r):
                return True
        return False

    def contents(self) -> dict[str, tuple[str, ...]]:
        """The cards committed per region (not the cards that may be there)."""
        out = {
            r: tuple(k for k in _counter_tuple(c) if k != MAYBE) for r, c in self.committed.items()
        }
        return {r: cs for r, cs in out.items() if cs}


# ------------------------------------------------------------------------------ interpreter
def _cards(labels: Iterable[str]) -> tuple[Card, ...]:
    return tuple(sort_cards([parse_card(x) for x in labels]))


def _read_as(old: str, new: str) -> bool:
    """Whether card ``old`` read anew may have come out as ``new``: the same rank in another
    suit, no joker (what a ``played`` with ``was`` stands for)."""
    return old[1:] == new[1:] and old != new and old not in ("SB", "HR")


def _relabel(ch: Change) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """A change of a zone that still holds cards, whose added cards are its removed cards'
    ranks in other suits, one for one (no joker, nothing else): the earlier and the new
    readings, paired by rank; None for any other change."""
    if not ch.added or len(ch.added) != len(ch.removed) or not ch.contents:
        return None
    old = sorted(ch.removed, key=lambda c: (c[1:], c))
    new = sorted(ch.added, key=lambda c: (c[1:], c))
    if not all(_read_as(a, b) for a, b in zip(old, new, strict=True)):
        return None
    if MAYBE in old or MAYBE in new:
        return None
    return tuple(old), tuple(new)


def _alt_cards(alts: Alts) -> tuple[tuple[Card | None, float], ...]:
    return tuple((None if k == "none" else parse_card(k), v) for k, v in alts)


@dataclass
class _Item:
    seat: str
    card: str
    t_add: float
    t_lift: float | None = None
    done: bool = False


@dataclass
class Interpreter:
    """Committed changes and lamp states -> observations (CONTRACT "Observation JSON")."""

    #: a card lifted from the centre and not seen arriving elsewhere within this time was
    #: withdrawn (shown jokers) or taken straight into a hand
    transfer_wait_s: float = 1.5
    _lamps: dict[str, str | None] = field(default_factory=dict)
    _deal_t: float | None = None
    _leader: str | None = None
    _level: str | None = ""
    _pending: list[_Item] = field(default_factory=list)
    _tributes: dict[str, str] = field(default_factory=dict)  # receiver -> payer
    _returned: set[str] = field(default_factory=set)
    _play: dict[str, tuple[str, ...]] = field(default_factory=lambda: {s: () for s in SEATS})
    #: changes of a play zone with no hand near (not plays): the pipeline reports them
    rereads: list[Change] = field(default_factory=list)
    #: cards found in a seat's play zone with no hand near, at most this long after the seat's
    #: play was observed and with nothing taken away: a corner found a few frames late, sent as
    #: part of that play (a ``played`` observation with ``amends``: the play's time)
    late_s: float = 1.0
    #: such changes (the pipeline reports them)
    late: list[Change] = field(default_factory=list)
    #: per seat, the time of its last ``played`` observation while its cards still lie there
    _last_played: dict[str, float] = field(default_factory=dict)
    #: touched changes of a play zone that read cards lying there anew: the same ranks, other
    #: suits, nothing else added or taken away (sent as a ``played`` with ``was``; the pipeline
    #: reports them)
    relabels: list[Change] = field(default_factory=list)

    def resume(self, state: TableState) -> None:
        """Go on from ``state`` (see :class:`TableState`): the seats' play zones as they lie (so
        emptying them is a ``trick_cleared``), this deal's tributes and returns (so the next
        card across the centre is told apart), and the lamps that may still be lit."""
        self._play = {s: tuple(sorted(state.on_table.get(s, ()))) for s in SEATS}
        self._tributes = dict(state.tributes)
        self._returned = set(state.returned)
        self._lamps = {**self._lamps, **state.lamps}

    # ---------------------------------------------------------------- lamps
    def lamps(self, t: float, states: Mapping[str, str | None]) -> list[Observation]:
        """Current (debounced) lamp states; rising edges become observations."""
        out: list[Observation] = []
        prev = self._lamps
        deal_now = states.get("deal") == "deal"
        if deal_now and prev.get("deal") != "deal":
            self._deal_t = t
            self._last_played.clear()
            self._leader = None
            self._level = ""
        if deal_now:
            lead = [s for s in SEATS if states.get(s) == "lead"]
            if len(lead) == 1:
                self._leader = lead[0]
        if not deal_now and prev.get("deal") == "deal" and self._deal_t is not None:
            out.append(
                Observation(
                    self._deal_t, "deal_start", first_leader=self._leader, level=self._level
                )
            )
            self._pending.clear()
            self._tributes.clear()
            self._returned.clear()
            self._deal_t = None
        for s in SEATS:
            if states.get(s) == "pass" and prev.get(s) != "pass" and not deal_now:
                out.append(Observation(t, "pass", seat=s))
        self._lamps = dict(states)
        return out

    # ---------------------------------------------------------------- changes
    def changes(self, t: float, changes: Sequence[Change]) -> list[Observation]:
        out: list[Observation] = []
        cleared = False
        # removals first: a card crossing the centre is lifted on one side, lands on another
        for ch in changes:
            if ch.region.startswith("centre.") and ch.removed:
                seat = ch.region.split(".", 1)[1]
                for card in ch.removed:
                    item = next(
                        (
                            i
                            for i in self._pending
                            if i.seat == seat and i.card == card and i.t_lift is None
                        ),
                        None,
                    )
                    if item is None:
                        continue
                    item.t_lift = t
                    # it may already have landed on another side (that side settled first)
                    dst = next(
                        (
                            i
                            for i in self._pending
                            if i.card == card
                            and i.seat != seat
                            and i.t_lift is None
                            and not i.done
                            and i.t_add >= item.t_add
                            and t - i.t_add <= self.transfer_wait_s
                        ),
                        None,
                    )
                    if dst is not None:
                        item.done = dst.done = True
                        out.append(self._transfer(item, dst.seat))
            elif ch.region in SEATS:
                had = any(self._play.values())
                self._play[ch.region] = ch.contents
                if ch.removed:  # cards taken away (a trick cleared) or read anew: no amends
                    self._last_played.pop(ch.region, None)
                if ch.removed and had and not any(self._play.values()):
                    cleared = True
        for ch in changes:
            r = ch.region
            if not ch.added:
                continue
            if r in SEATS:
                self._play[r] = ch.contents
                doubts = tuple(
                    (None if c == MAYBE else parse_card(c), _alt_cards(a)) for c, a in ch.doubts
                )
                old_new = _relabel(ch) if ch.touched else None
                if old_new is not None:
                    # the same cards read anew as a hand passed, not a play: no card of a
                    # trick's rank can be laid on one of its own in the same trick and hide it
                    # (seed 9406: S's C3 C3 S9 H9 D9, read with an S3, read C3 C3 while S's
                    # hand lay near; it had become a "play" of C3 out of turn); the referee
                    # takes the reading that fits
                    self.relabels.append(ch)
                    old, new = old_new
                    out.append(
                        Observation(
                            t,
                            "played",
                            seat=r,
                            cards=_cards(new),
                            doubts=doubts,
                            extra={"was": list(old)},
                        )
                    )
                    continue
                if not ch.touched:
                    # no hand came near: the detector now reads the zone differently (a label
                    # flickering, a corner found late), which is no play by the seat; cards
                    # only added soon after the seat's play are that play's, found late (seed
                    # 9406: the fifth card of W's bomb CT CT HT HT DT, half covered, was found
                    # 0.2 s after the other four were committed); the referee decides
                    at = self._last_played.get(r)
                    if not ch.removed and at is not None and t - at <= self.late_s:
                        self.late.append(ch)
                        out.append(
                            Observation(
                                t,
                                "played",
                                seat=r,
                                cards=_cards(ch.added),
                                doubts=doubts,
                                extra={"amends": at},
                            )
                        )
                    else:
                        self.rereads.append(ch)
                    continue
                out.append(Observation(t, "played", seat=r, cards=_cards(ch.added), doubts=doubts))
                self._last_played[r] = t
            elif r.endswith(".band"):
                out.append(Observation(t, "exposed", seat=region_zone(r), cards=_cards(ch.added)))
            elif r == OUTSIDE:
                out.append(Observation(t, "exposed", seat=None, cards=_cards(ch.added)))
            elif r.startswith("centre."):
                seat = r.split(".", 1)[1]
                if self._deal_t is not None:  # the cut card of a random-level deal
                    cut = parse_card(ch.added[0])
                    self._level = None if cut.is_joker else cut.rank
                    continue
                for card in ch.added:
                    src = next(
                        (
                            i
                            for i in self._pending
                            if i.card == card
                            and i.seat != seat
                            and i.t_lift is not None
                            and not i.done
                            and t - i.t_lift <= self.transfer_wait_s
                        ),
                        None,
                    )
                    if src is not None:
                        src.done = True
                        out.append(self._transfer(src, seat))
                        # the arrival is the receiver's to take: no further observation
                        self._pending.append(_Item(seat, card, t, done=True))
                    else:
                        self._pending.append(_Item(seat, card, t))
        if cleared:
            out.append(Observation(t, "trick_cleared"))
        out += self.flush(t)
        out.sort(key=lambda o: o.t)
        return out

    def _transfer(self, item: _Item, to: str | None) -> Observation:
        payer = self._tributes.get(item.seat)
        card = (parse_card(item.card),)
        if payer is not None and item.seat not in self._returned:
            self._returned.add(item.seat)
            return Observation(
                item.t_add, "tribute_return", seat=item.seat, cards=card, to=to or payer
            )
        if to is not None:
            self._tributes[to] = item.seat
        return Observation(item.t_add, "tribute", seat=item.seat, cards=card, to=to)

    def flush(self, t: float) -> list[Observation]:
        """Resolve centre cards lifted more than ``transfer_wait_s`` ago without landing on another
        side: big jokers were ``shown`` (anti-tribute), any other card was ``exposed``."""
        out: list[Observation] = []
        shown: dict[str, list[_Item]] = {}
        for item in self._pending:
            if item.done or item.t_lift is None or t - item.t_lift <= self.transfer_wait_s:
                continue
            item.done = True
            if item.card == "HR":
                shown.setdefault(item.seat, []).append(item)
            else:  # shown and withdrawn: an exposed card
                out.append(
                    Observation(item.t_add, "exposed", seat=item.seat, cards=_cards([item.card]))
                )
        for seat, items in shown.items():
            out.append(
                Observation(
                    min(i.t_add for i in items),
                    "shown",
                    seat=seat,
                    cards=_cards(i.card for i in items),
                )
            )
        self._pending = [i for i in self._pending if not i.done or t - i.t_add < 30.0]
        return out
