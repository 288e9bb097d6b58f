"""``guandan demo --headless`` end to end, and ``guandan table run``'s bad input."""

from __future__ import annotations

import os
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
    # the main job reads the cards with the shipped ONNX model (no recorded labels)
    out = _run("demo", "--headless", "--data", str(tmp_path / "demo"), timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    # it says honestly what it replays: the bundled rendered game through the vision pipeline
    assert "bundled rendered game" in text and "vision pipeline" in text
    assert "the shipped card model models/card-corners.onnx" in text
    for label in ("table screen: http://", "overlay:", "scoreboard:", "result"):
        assert label in text, label
    assert "exactly once: yes" in text
    # the deal as it was played (datasets/demo/README.md: the referee on the truth log)
    assert "deal  1: order S N W E   levels NS  5 EW  2" in text, text
    assert "standings 1." in text
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


def test_table_run_takes_the_seat_buttons_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hardware/pi/guandan-kiosk.service sets $GUANDAN_BUTTONS for a bare `guandan table run`."""
    import argparse

    from hardware.buttons import ButtonError, MockButtons
    from kiosk.table.cli import open_seat_buttons

    monkeypatch.delenv("GUANDAN_BUTTONS", raising=False)
    assert open_seat_buttons(argparse.Namespace(buttons=None)) is None
    monkeypatch.setenv("GUANDAN_BUTTONS", " ")
    assert open_seat_buttons(argparse.Namespace(buttons=None)) is None
    monkeypatch.setenv("GUANDAN_BUTTONS", "mock")
    assert isinstance(open_seat_buttons(argparse.Namespace(buttons=None)), MockButtons)
    # --buttons wins over the environment
    monkeypatch.setenv("GUANDAN_BUTTONS", "gpiozero:N=x")
    assert isinstance(open_seat_buttons(argparse.Namespace(buttons="mock")), MockButtons)
    with pytest.raises(ButtonError, match=r"^\$GUANDAN_BUTTONS=gpiozero:N=x: .*SEAT=PIN"):
        open_seat_buttons(argparse.Namespace(buttons=None))
    with pytest.raises(ButtonError, match=r"^--buttons=nosuch: unknown buttons"):
        open_seat_buttons(argparse.Namespace(buttons="nosuch"))

    # the command: a bad spec in the environment is one line, exit 2, nothing written
    from .helpers import free_port

    base = [
        sys.executable, "-m", "kiosk", "table", "run", "--db", str(tmp_path / "k.db"),
        "--pin", "1234", "--simulate", "1", "--port", str(free_port()),
    ]  # fmt: skip
    env = dict(os.environ, GUANDAN_BUTTONS="gpiozero:N=17,E=17")
    out = subprocess.run(base, cwd=REPO, capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "$GUANDAN_BUTTONS=gpiozero:N=17,E=17: " in lines[0], lines
    assert "share GPIO pin 17" in lines[0] and "unset it" in lines[0]
    assert not (tmp_path / "k.db").exists()

    # a good one is opened and attached (the banner says which)
    from tests.helpers_server import ServerProcess

    kiosk = ServerProcess(
        base[3:], int(base[-1]), tmp_path / "k.log", env={"GUANDAN_BUTTONS": "mock"}
    )
    kiosk.start()
    try:
        assert kiosk.healthy()
    finally:
        kiosk.stop()
    assert "seat buttons: mock" in kiosk.log_tail()


def test_table_run_footage_budget_reaches_the_recorder_and_a_bad_one_says_what_to_give(
    tmp_path: Path,
) -> None:
    import argparse

    from kiosk.table.cli import make_footage

    def ns(**kw: object) -> argparse.Namespace:
        base = {"db": str(tmp_path / "k.db"), "footage": None, "table": "t3"}
        return argparse.Namespace(**{**base, **kw})

    rec = make_footage(ns(footage_budget=250.0))
    assert rec.budget_mb == 250.0 and rec.folder == tmp_path / "k-footage"
    assert make_footage(ns(footage="off", footage_budget=250.0)) is None
    for bad in (0.0, -5.0):
        with pytest.raises(ValueError, match="--footage-budget .*disk budget in MB"):
            make_footage(ns(footage_budget=bad))
    out = _run("table", "run", "--help", timeout=60)
    assert "--footage-budget" in out.stdout
