"""Declared readings (``engine.declare``): what each wild stands for, and the bad declarations."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from engine import CardError, classify, declare


@pytest.mark.parametrize(
    ("cards", "level", "wilds_as", "kind", "key"),
    [
        ("H2 S4 S5 S6 S7", "2", "S8", "straight_flush", "4"),
        ("H2 S4 S5 S6 S7", "2", "S3", "straight_flush", "3"),
        ("H2 S4 S5 S6 S7", "2", "D8", "straight", "4"),  # another suit: a plain straight
        ("H2 S4 S5 S6 S7", "2", "3", "straight_flush", "3"),  # a rank: the strongest reading
        ("H2 S9 S9 C4 D4", "2", "4", "full_house", "4"),
        ("H2 S9 S9 C4 D4", "2", "9", "full_house", "9"),
        ("H2 H2 S3 C3 D3", "2", "5 5", "full_house", "3"),  # the two wilds are the pair
        ("H2 H2 S3 C3 D3", "2", "3 3", "bomb", "3"),
        ("HT SA", "10", "A", "pair", "A"),
    ],
)
def test_declared_reading(cards: str, level: str, wilds_as: str, kind: str, key: str) -> None:
    combo = declare(cards, level, wilds_as)
    assert (combo.kind, combo.key) == (kind, key)
    assert combo in classify(cards, level)


@pytest.mark.parametrize(
    ("cards", "wilds_as", "message"),
    [
        ("H2 S4 S5 S6 S7", "SB", "stands for any card except a joker"),
        ("H2 S4 S5 S6 S7", "大王", "stands for any card except a joker"),
        ("H2 S4 S5 S6 S7", "S8 S3", r"2 declaration\(s\) for 1 wild\(s\)"),
        ("S4 S5 S6 S7 S8", "S3", r"1 declaration\(s\) for 0 wild\(s\)"),
        ("H2 S4 S5 S6 S7", "S9", "no reading .* has the wilds as S9; readings: straight_flush"),
        ("H2 S4 S5 S6 S7", "X9", "unknown suit"),
        ("H2 S4 S9 SK SA", "S3", "readings: none"),
    ],
)
def test_bad_declarations_name_the_token(cards: str, wilds_as: str, message: str) -> None:
    with pytest.raises(CardError, match=message):
        declare(cards, "2", wilds_as)


def test_cli_classify_as() -> None:
    cmd = [sys.executable, "-m", "kiosk", "rules", "classify", "--level", "2"]
    out = subprocess.run([*cmd, "H2", "S4", "S5", "S6", "S7", "--as", "S8"], capture_output=True,
                         text=True, check=True)  # fmt: skip
    got = json.loads(out.stdout)
    assert [(c["kind"], c["key"]) for c in got] == [("straight_flush", "4")]
    assert got[0]["wilds"] == [{"card": "H2", "as": "S8"}]
    bad = subprocess.run([*cmd, "H2", "S4", "S5", "S6", "S7", "--as", "HR"], capture_output=True,
                         text=True)  # fmt: skip
    assert bad.returncode == 2 and "except a joker" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
