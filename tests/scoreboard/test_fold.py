"""The fold: results and table state derived from events alone (DESIGN.md)."""

from __future__ import annotations

from kiosk.scoreboard.fold import apply_corrections, match_summary, table_state

from .helpers import ev, match_events


def test_match_summary_from_events() -> None:
    evs = match_events("T", "EW", {"NS": "4", "EW": "9"}, deals=3, fouls=["N", "E", "N"])
    s = match_summary(evs)
    assert (s.winner, s.finished, s.deals_played, s.status) == ("EW", True, 3, "finished")
    assert s.levels == {"NS": "4", "EW": "9"}
    assert s.fouls == {"NS": 2, "EW": 1}
    assert s.deals[1].order == ["E", "W", "S", "N"] and s.deals[1].leader == "E"


def test_draw_and_unfinished() -> None:
    evs = match_events("T", "draw", {"NS": "7", "EW": "7"}, deals=1)
    assert match_summary(evs).winner == "draw"
    s = match_summary(evs[:-1])
    assert (s.winner, s.finished, s.status) == (None, False, "playing")
    assert match_summary([]).status == "pending"


def test_corrections_replace_one_event_or_rewind_like_the_referee() -> None:
    a = ev("T", 1, "foul", seat="S", kind="slow_play")
    b = ev("T", 2, "foul", seat="E", kind="exposed_card")
    swap = ev(
        "T",
        3,
        "correction",
        replaces=b["id"],
        by={"type": "foul", "seat": "W", "kind": "out_of_turn"},
    )
    out = apply_corrections([a, b, swap])
    assert [e["seat"] for e in out] == ["S", "W"] and out[1]["id"] == b["id"]
    assert match_summary([a, b, swap]).fouls == {"NS": 1, "EW": 1}
    # the referee's correction (engine/referee.py): the events in effect go back to just before
    # the one it replaces; the corrected continuation follows it
    c = ev("T", 4, "play", seat="N", cards=["H5"])
    fix = ev("T", 5, "correction", replaces=b["id"], by=None)
    d = ev("T", 6, "play", seat="N", cards=["H5", "H5"])
    out = apply_corrections([a, b, swap, c, fix, d])
    assert [e["seq"] for e in out] == [1, 6]
    assert match_summary([a, b, swap, c, fix, d]).fouls == {"NS": 1, "EW": 0}
    # a correction of an event no longer in effect changes nothing
    assert apply_corrections([a, fix]) == [a]


def test_fouls_that_do_not_count() -> None:
    """A probable misread (duplicate_card) and a camera reading waiting for the referee's mark
    (review) are shown but not counted, as the referee counts them."""
    evs = [
        ev("T", 1, "foul", seat="S", kind="duplicate_card"),
        ev("T", 2, "foul", seat="E", kind="illegal_play", review=True),
        ev("T", 3, "foul", seat="E", kind="illegal_play", ruled=True),
    ]
    assert match_summary(evs).fouls == {"NS": 0, "EW": 1}
    assert table_state("T", 1, evs).fouls == {"N": 0, "E": 1, "S": 0, "W": 0}


def test_table_state_counts_cards() -> None:
    evs = [
        ev("T", 1, "deal_started", deal=2, level="5", leader="S"),
        ev("T", 2, "tribute", deal=2, **{"from": "N", "to": "E", "card": "HA"}),
        ev("T", 3, "tribute_returned", deal=2, **{"from": "E", "to": "N", "card": "C3"}),
        ev("T", 4, "play", deal=2, seat="S", cards=["S3", "S4", "S5", "S6", "S7"]),
        ev("T", 5, "play", deal=2, seat="E", cards=["D8", "D9", "DT", "DJ", "DQ"]),
        ev("T", 6, "pass", deal=2, seat="N"),
        ev("T", 7, "foul", deal=2, seat="W", kind="out_of_turn"),
    ]
    st = table_state("T", 9, evs)
    assert st.cards_left == {"N": 27, "E": 22, "S": 22, "W": 27}
    assert st.last_play == {"seat": "E", "cards": ["D8", "D9", "DT", "DJ", "DQ"], "combo": None}
    assert st.fouls["W"] == 1 and st.deal == 2 and st.level == "5" and st.last_seq == 7
    # Same result incrementally and in one go.
    inc = table_state("T", 9, [])
    for e in evs:
        inc.apply(e)
    assert inc.to_json() == st.to_json()
