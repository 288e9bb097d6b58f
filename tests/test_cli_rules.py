"""``guandan rules classify`` / ``guandan rules moves`` (CONTRACT.md command table)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kiosk.cli import main

ROOT = Path(__file__).resolve().parents[1]
GUANDAN = ROOT / ".venv" / "bin" / "guandan"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [str(GUANDAN)] if GUANDAN.exists() else [sys.executable, "-m", "kiosk"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, cwd=ROOT, timeout=60)


def test_classify_subprocess_prints_json_readings() -> None:
    res = run("rules", "classify", "--level", "2", "H2", "S4", "S5", "S6", "S7")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert [(c["kind"], c["key"]) for c in out] == [
        ("straight_flush", "4"),
        ("straight_flush", "3"),
        ("straight", "4"),
        ("straight", "3"),
    ]
    assert out[0]["cards"] == ["H2", "S4", "S5", "S6", "S7"] and out[0]["size"] == 5
    assert out[0]["wilds"] == [{"card": "H2", "as": "S8"}]


def test_moves_subprocess_with_trick() -> None:
    res = run("rules", "moves", "--level", "9", "--hand", "S4 D4 S5 SB", "--trick", "S3", "D3")
    assert res.returncode == 0, res.stderr
    assert [(c["kind"], c["key"], c["cards"]) for c in json.loads(res.stdout)] == [
        ("pair", "4", ["S4", "D4"])
    ]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["rules", "classify", "--level", "2", "S3", "X4"], "X4"),
        (["rules", "classify", "--level", "1", "S3"], "level"),
        (["rules", "classify", "--level", "2", "S3", "S3", "S3"], "3 times"),
        (["rules", "moves", "--level", "2", "--hand", "S3", "--trick", "S4", "S5"], "not a combo"),
        (["rules", "moves", "--level", "2", "--hand", "S3", "--profile", "nope"], "nope"),
    ],
)
def test_bad_input_one_line_exit_2(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and needle in err


def test_moves_lead_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "moves", "--level", "2", "--hand", "S3", "S3", "D3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["kind"] for c in out] == ["single", "single", "pair", "pair", "triple"]


def test_profile_options(capsys: pytest.CaptureFixture[str]) -> None:
    seven = ["S3", "S3", "D3", "D3", "C3", "C3", "H3"]
    assert main(["rules", "classify", "--level", "2", *seven]) == 0
    assert json.loads(capsys.readouterr().out)[0]["kind"] == "bomb"
    # hefei-qualifier: at most 6 cards in one play (000 篇1)
    assert main(["rules", "classify", "--level", "2", "--profile", "hefei-qualifier", *seven]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_level_none_is_a_deal_without_wilds(capsys: pytest.CaptureFixture[str]) -> None:
    """``--level none``: a joker cut (000 篇6 "抽到大小王不带"): no level rank, no wilds."""
    assert main(["rules", "classify", "--level", "A", "HA", "S5"]) == 0
    assert [c["kind"] for c in json.loads(capsys.readouterr().out)] == ["pair"]  # ♥A wild
    assert main(["rules", "classify", "--level", "none", "HA", "S5"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["rules", "classify", "--level", "None", "HA", "HA"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(c["kind"], c["key"], c["level"], c["wilds"]) for c in out] == [("pair", "A", None, [])]
    assert (
        main(["rules", "moves", "--level", "none", "--hand", "HA S5 C5 D5", "--trick", "SK"]) == 0
    )
    assert [(c["kind"], c["cards"]) for c in json.loads(capsys.readouterr().out)] == [
        ("single", ["HA"])
    ]
    assert main(["rules", "classify", "--level", "none", "HA", "S5", "--as", "5"]) == 2
    assert "no wilds" in capsys.readouterr().err
