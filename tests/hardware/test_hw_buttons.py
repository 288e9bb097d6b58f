"""Seat pass buttons: the mock, and the gpiozero backend driven through a stand-in module."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from hardware.buttons import (
    DEFAULT_PINS,
    ENV_VAR,
    ButtonError,
    ButtonPress,
    GpiozeroButtons,
    MockButtons,
    open_buttons,
)


def test_mock_records_history_and_debounces() -> None:
    buttons = open_buttons("mock")
    assert isinstance(buttons, MockButtons)
    got: list[ButtonPress] = []
    buttons.subscribe(got.append)
    buttons.press("S", t=10.0)
    buttons.press("S", t=10.1)  # bounce
    buttons.press("E", t=10.15)
    buttons.press("S", t=10.5)
    assert [(p.seat, p.t, p.accepted) for p in buttons.history] == [
        ("S", 10.0, True),
        ("S", 10.1, False),
        ("E", 10.15, True),
        ("S", 10.5, True),
    ]
    assert [p.seat for p in got] == ["S", "E", "S"]
    assert [p.seat for p in buttons.poll()] == ["S", "E", "S"]
    assert buttons.poll() == []


def test_mock_with_a_clock_and_no_debounce() -> None:
    now = [0.0]
    buttons = MockButtons(debounce_s=0, clock=lambda: now[0])
    buttons.press("N")
    buttons.press("N")
    assert [p.accepted for p in buttons.history] == [True, True]
    now[0] = 3.0
    assert buttons.press("W").t == 3.0


def test_mock_errors() -> None:
    buttons = MockButtons()
    with pytest.raises(ButtonError, match="unknown seat 'X'"):
        buttons.press("X")
    with pytest.raises(ButtonError, match="debounce_s"):
        MockButtons(debounce_s=-1)
    with MockButtons() as b:
        b.press("N")
    with pytest.raises(ButtonError, match="closed"):
        b.press("N")


class FakeButton:
    """The bits of gpiozero.Button the backend uses."""

    made: list[FakeButton] = []
    busy: set[int] = set()

    def __init__(self, pin: int, pull_up: bool = True, bounce_time: Any = None) -> None:
        if pin in FakeButton.busy:
            raise RuntimeError(f"GPIO{pin} is already in use")
        self.pin, self.pull_up = pin, pull_up
        self.when_pressed: Any = None
        self.closed = False
        FakeButton.made.append(self)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake_gpiozero(monkeypatch: pytest.MonkeyPatch) -> type[FakeButton]:
    module = types.ModuleType("gpiozero")
    module.Button = FakeButton  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gpiozero", module)
    FakeButton.made = []
    FakeButton.busy = set()
    return FakeButton


def test_gpiozero_backend_wires_each_seat(fake_gpiozero: type[FakeButton]) -> None:
    now = [0.0]
    buttons = open_buttons("gpiozero:N=5,E=6,S=13,W=19", clock=lambda: now[0])
    assert isinstance(buttons, GpiozeroButtons)
    assert buttons.spec == "gpiozero:N=5,E=6,S=13,W=19"
    by_pin = {b.pin: b for b in fake_gpiozero.made}
    assert set(by_pin) == {5, 6, 13, 19} and all(b.pull_up for b in by_pin.values())
    by_pin[13].when_pressed()  # S pressed (gpiozero calls the handler from its thread)
    now[0] = 0.1
    by_pin[13].when_pressed()  # contact bounce
    now[0] = 1.0
    by_pin[5].when_pressed()
    assert [(p.seat, p.accepted) for p in buttons.history] == [
        ("S", True),
        ("S", False),
        ("N", True),
    ]
    assert [p.seat for p in buttons.poll()] == ["S", "N"]
    buttons.close()
    assert all(b.closed for b in fake_gpiozero.made)


def test_gpiozero_default_pins(
    fake_gpiozero: type[FakeButton], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, "gpiozero")
    buttons = open_buttons()
    assert sorted(b.pin for b in fake_gpiozero.made) == sorted(DEFAULT_PINS.values())
    assert buttons.spec == "gpiozero:N=17,E=27,S=22,W=23"


def test_gpiozero_busy_pin_is_reported_and_cleaned_up(fake_gpiozero: type[FakeButton]) -> None:
    fake_gpiozero.busy = {22}
    with pytest.raises(ButtonError, match="GPIO22 is already in use"):
        open_buttons("gpiozero")
    assert fake_gpiozero.made and all(b.closed for b in fake_gpiozero.made)


def test_gpiozero_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gpiozero", None)
    with pytest.raises(ButtonError, match="apt install python3-gpiozero"):
        open_buttons("gpiozero")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpiozero:N=17,E=17", "share GPIO pin 17"),
        ("gpiozero:N=40", "not a BCM pin"),
        ("gpiozero:Q=4", "unknown seat 'Q'"),
        ("gpiozero:N17", "not SEAT=PIN"),
        ("mock:1", "takes no arguments"),
        ("keyboard", "unknown buttons 'keyboard'"),
    ],
)
def test_bad_button_specs(spec: str, message: str) -> None:
    with pytest.raises(ButtonError, match=message):
        open_buttons(spec)


def test_default_is_mock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert isinstance(open_buttons(), MockButtons)
