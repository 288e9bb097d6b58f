"""A pipeline started while cards lie on the table (the kiosk restarted mid-trick) goes on from
what the observations so far say lies there: ``table_state`` -> ``Tracker.seed``,
``Interpreter.resume``, ``TablePipeline.resume``."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from engine.cards import parse_cards
from engine.observations import Observation
from tests.helpers_server import REPO
from tests.track.helpers import calibration, detections, fan, fan_hidden
from vision.pipeline import OracleDetector, TablePipeline
from vision.table import Calibration
from vision.track import Interpreter, TableState, Tracker, table_state

S_PLAY = (450.0, 700.0)
E_PLAY = (700.0, 450.0)
GAME = REPO / "datasets" / "demo" / "game.mp4"


def ob(t: float, type_: str, seat: str | None = None, cards: str = "", **kw) -> Observation:
    return Observation(t, type_, seat=seat, cards=tuple(parse_cards(cards)) if cards else (), **kw)


def kinds(obs: list[Observation]) -> list[tuple]:
    return [(o.type, o.seat, tuple(sorted(str(c) for c in o.cards))) for o in obs]


def run(tracker: Tracker, it: Interpreter, frames: list[list], t0: float) -> list[Observation]:
    out: list[Observation] = []
    for k, dets in enumerate(frames):
        t = t0 + k * 0.1
        out += it.changes(t, tracker.update(t, dets))
    return out


def test_a_seeded_tracker_sees_what_lies_there_as_no_change() -> None:
    s_cards, e_cards = ["S3", "S4", "S5"], ["H9", "H9"]
    lying = fan(s_cards, *S_PLAY) + fan(e_cards, *E_PLAY)
    hidden = fan_hidden(0, 3) | fan_hidden(3, 2)
    state = TableState.of({"S": parse_cards("S3 S4 S5"), "E": e_cards})

    # a fresh tracker (no seed) reports both plays again: the defect
    fresh = run(Tracker(calibration()), Interpreter(), [detections(lying, hide=hidden)] * 3, 0.0)
    assert sorted(kinds(fresh)) == [
        ("played", "E", ("H9", "H9")),
        ("played", "S", ("S3", "S4", "S5")),
    ]

    tracker, it = Tracker(calibration()), Interpreter()
    tracker.seed(state.on_table)
    it.resume(state)
    assert tracker.contents() == {"S": ("S3", "S4", "S5"), "E": ("H9", "H9")}
    assert tracker.pending()  # not yet confirmed by a frame: keep looking
    # seen again: nothing new
    assert run(tracker, it, [detections(lying, hide=hidden)] * 4, 0.0) == []
    assert not tracker.pending()
    # a card laid on top of S's: a play of that card only
    more = lying + [("D8", 560.0, 700.0, 0.0)]
    out = run(tracker, it, [detections(more, hide=hidden)] * 3, 1.0)
    assert kinds(out) == [("played", "S", ("D8",))]
    # the table cleared: a trick_cleared (the interpreter knows the zones held cards)
    out = run(tracker, it, [[]] * 3, 2.0)
    assert kinds(out) == [("trick_cleared", None, ())]


def test_seeded_cards_that_are_gone_are_removed_without_a_play() -> None:
    tracker, it = Tracker(calibration()), Interpreter()
    state = TableState.of({"S": ["S3"], "W.band": ["DQ"], "centre.E": ["SA"]})
    tracker.seed(state.on_table)
    it.resume(state)
    # the trick was cleared, the exposed card picked up, the tribute taken while it was down
    out = run(tracker, it, [[]] * 3, 0.0)
    assert kinds(out) == [("trick_cleared", None, ())]
    assert tracker.contents() == {}


def test_seed_replaces_the_contents_and_names_unknown_regions() -> None:
    tracker = Tracker(calibration())
    tracker.seed({"N": ["HA"]})
    tracker.seed({"S": ["C2"]})
    assert tracker.contents() == {"S": ("C2",)}
    with pytest.raises(ValueError, match="unknown regions"):
        tracker.seed({"X": ["C2"]})


def test_table_state_folds_the_observations() -> None:
    obs = [
        ob(0, "deal_start"),
        ob(1, "played", "S", "H3 C3"),
        ob(2, "pass", "E"),
        ob(3, "trick_cleared"),
        ob(4, "exposed", "N", "DK"),
        ob(5, "exposed", None, "C4"),
        ob(6, "played", "S", "S9"),
        ob(7, "played", "E", "SB"),
        ob(8, "played", "S", "S9"),  # a second S9 (two decks), laid later
        ob(9, "pass", "N"),
    ]
    st = table_state(obs)
    assert st.on_table == {
        "S": ("S9", "S9"),
        "E": ("SB",),
        "N.band": ("DK",),
        "outside": ("C4",),
    }
    assert st.lamps == {"N": "pass"}  # the last thing seen: its lamp may still be lit
    assert table_state(obs[:3]).lamps == {"E": "pass"}
    assert table_state(obs[:4]).on_table == {}
    # a new deal starts afresh; tributes and returns are remembered for the deal
    deal2 = [
        ob(10, "deal_start"),
        ob(11, "tribute", "N", "SA", to="E"),
        ob(12, "tribute_return", "E", "C3", to="N"),
    ]
    st = table_state(obs + deal2)
    assert st.on_table == {"centre.E": ("SA",), "centre.N": ("C3",)}
    assert st.tributes == {"E": "N"} and st.returned == frozenset({"E"}) and st.lamps == {}
    # cards read anew (``was``) lie there as read now, not as more cards
    again = ob(9.5, "played", "S", "C9", extra={"was": ["S9"]})
    assert table_state([*obs[:9], again]).on_table["S"] == ("C9", "S9")


def test_a_resumed_interpreter_tells_a_return_from_a_tribute() -> None:
    it = Interpreter()
    it.resume(TableState(tributes={"E": "N"}))
    from vision.track import Change

    it.changes(1.0, [Change(1.0, "centre.E", ("C3",), (), ("C3",))])
    out = it.changes(
        2.0,
        [Change(2.0, "centre.E", (), ("C3",), ()), Change(2.0, "centre.N", ("C3",), (), ("C3",))],
    )
    assert [(o.type, o.seat, o.to) for o in out] == [("tribute_return", "E", "N")]


@pytest.fixture(scope="module")
def game_frames() -> list[np.ndarray]:
    cap = cv2.VideoCapture(str(GAME))
    frames = []
    try:
        while len(frames) < 160:  # the first 32 s: one trick, its clear, the next trick
            ok, image = cap.read()
            assert ok
            frames.append(image)
    finally:
        cap.release()
    return frames


def _pipe() -> TablePipeline:
    return TablePipeline(
        OracleDetector(f"{GAME}.oracle.jsonl.gz"),
        Calibration.load(f"{GAME}.calibration.json"),
    )


def _run(pipe: TablePipeline, frames: list[np.ndarray], a: int, b: int) -> list[Observation]:
    out: list[Observation] = []
    for i in range(a, b):
        out += pipe.process(i, i / 5.0, frames[i])
    return out


@pytest.mark.parametrize(
    "cut",
    [
        70,  # after N's play (12.6 s): three plays lie in the zones
        81,  # while W's pass lamp (15.6-16.6 s) is lit
        110,  # after the three passes, before the clear (24.1 s)
    ],
)
def test_a_pipeline_restarted_mid_trick_reports_what_an_uninterrupted_one_does(
    game_frames: list[np.ndarray], cut: int
) -> None:
    n = len(game_frames)
    whole = kinds(_run(_pipe(), game_frames, 0, n))
    before = _run(_pipe(), game_frames, 0, cut)
    again = _pipe()
    again.resume(table_state(before))
    after = _run(again, game_frames, cut, n)
    assert kinds(before + after) == whole
    assert ("trick_cleared", None, ()) in kinds(after)
    # the defect: a fresh pipeline reports what lies there as new plays
    fresh = kinds(_run(_pipe(), game_frames, cut, n))
    assert fresh != kinds(after) and fresh.count(("played", "S", ("C3", "D3", "H3", "S3"))) == 1
