"""``guandan demo --headless`` end to end, and ``guandan table run``'s bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import REPO, sim_observations, write_observations


def _run(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kiosk", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_demo_headless_replays_the_bundled_recording(tmp_path: Path) -> None:
    out = _run("demo", "--headless", "--data", str(tmp_path / "demo"))
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    # it says honestly what it replays: the bundled rendered game through the vision pipeline
    assert "bundled rendered game" in text and "vision pipeline" in text
    for label in ("table screen: http://", "overlay:", "scoreboard:", "result"):
        assert label in text, label
    assert "exactly once: yes" in text
    assert "deal  1: order" in text and "standings 1." in text
    assert (tmp_path / "demo" / "kiosk.db").is_file()
    # a second run into the same folder is refused, not mixed up
    again = _run("demo", "--headless", "--data", str(tmp_path / "demo"))
    assert again.returncode == 2 and "already holds a demo" in again.stderr


def test_demo_headless_simulated_match_has_a_winner(tmp_path: Path) -> None:
    out = _run("demo", "--headless", "--simulate", "--data", str(tmp_path / "demo"))
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert "SIMULATED" in text
    assert "winner:" in text and "exactly once: yes" in text
    assert "deal  1: order" in text and "standings 1." in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pin", "12"], "give 4 to 12 digits"),
        (["--scoreboard", "http://127.0.0.1:9"], "give both --scoreboard URL and --token"),
        (["--scoreboard", "hall:8700", "--token", "x"], "give the URL"),
        (["--db", "/nonexistent-dir/k.db"], "does not exist"),
        (["--observations", "/nonexistent.jsonl"], "not found"),
        (["--speed", "-1", "--simulate", "1"], "--speed"),
        (["--profile", "nosuch"], "nosuch"),
    ],
)
def test_table_run_bad_input_is_one_line_exit_2(
    args: list[str], message: str, tmp_path: Path
) -> None:
    base = ["table", "run", "--db", str(tmp_path / "k.db"), "--pin", "1234", "--port", "1"]
    out = _run(*base, *args, timeout=60)
    assert out.returncode == 2, out.stdout + out.stderr
    assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_table_run_refuses_another_tables_log(tmp_path: Path) -> None:
    from kiosk.table.store import EventLog

    EventLog(tmp_path / "k.db", table="t9", profile="swiss-421").close()
    f = write_observations(tmp_path / "o.jsonl", sim_observations(1, 41)[:5])
    out = _run(
        "table", "run", "--db", str(tmp_path / "k.db"), "--observations", str(f),
        "--table", "t1", "--pin", "1234", timeout=60,
    )  # fmt: skip
    assert out.returncode == 2 and "log of table 't9'" in out.stderr
