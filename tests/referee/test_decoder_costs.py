"""The decoder's costs and windows sit in one table (engine/channel.py ``COSTS``), each with its
reason: the module's constants are its rows (a ``Cost`` is a float, a ``Window`` an int)."""

from __future__ import annotations

from engine import channel, decoder, referee


def test_every_cost_has_a_reason_and_its_constant() -> None:
    assert channel.COSTS is decoder.COSTS
    for name, row in channel.COSTS.items():
        assert row.why.strip() and len(row.why) > 20, name
        assert row >= 0, name
        assert getattr(channel, name) is row, name
        assert isinstance(row, channel.Cost | channel.Window), name


def test_the_referee_reads_the_decoder_s_budgets() -> None:
    """The referee's re-reading as a play comes uses the decoder's budgets (no copy of its own)."""
    assert referee.REREAD_BUDGET is decoder.REREAD_BUDGET
    assert referee.REREAD_BUDGET_IMPOSSIBLE is decoder.REREAD_BUDGET_IMPOSSIBLE
    assert referee.HINDSIGHT_WINDOW is decoder.HINDSIGHT_WINDOW
