"""Seat pass buttons: one push button per seat (N, E, S, W) that says "pass".

Like gpiozero's pin factories, the backend is chosen by a spec string
(``open_buttons(spec)``; ``None`` reads ``GUANDAN_BUTTONS``, default ``mock``):

* ``gpiozero`` or ``gpiozero:N=17,E=27,S=22,W=23`` - real buttons on the Pi's GPIO (BCM pin
  numbers, buttons wired between the pin and ground, internal pull-ups). gpiozero is imported only
  here; on Raspberry Pi OS install Debian's ``python3-gpiozero`` (hardware/pi/README.md).
* ``mock`` - no hardware; ``press(seat)`` simulates a press. Every press (accepted or bounced)
  is recorded in ``history``, like gpiozero's ``MockPin`` history.

Both backends debounce the same way in software: a second press of the same seat within
``debounce_s`` is recorded as bounced and not delivered. Accepted presses go to subscribers
(``subscribe(callback)``) and to a queue drained by ``poll()``.
"""

from __future__ import annotations

import importlib
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "SEATS",
    "DEFAULT_PINS",
    "ENV_VAR",
    "ButtonError",
    "ButtonPress",
    "PassButtons",
    "MockButtons",
    "GpiozeroButtons",
    "open_buttons",
]

SEATS: tuple[str, ...] = ("N", "E", "S", "W")
#: Default BCM pins (hardware/pi/README.md shows the wiring).
DEFAULT_PINS: dict[str, int] = {"N": 17, "E": 27, "S": 22, "W": 23}
ENV_VAR = "GUANDAN_BUTTONS"


class ButtonError(ValueError):
    """A bad button spec or an unusable GPIO setup; the message says what to do."""


@dataclass(frozen=True)
class ButtonPress:
    """A press: seat, time (``time.monotonic()`` seconds, or as given), accepted or bounced."""

    seat: str
    t: float
    accepted: bool = True


class PassButtons:
    """The four seat buttons; backends call ``_pressed(seat)`` when a button goes down."""

    spec = ""

    def __init__(
        self, debounce_s: float = 0.3, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if debounce_s < 0:
            raise ButtonError(f"debounce_s must be >= 0, got {debounce_s}")
        self.debounce_s = debounce_s
        self.clock = clock
        self.history: list[ButtonPress] = []
        self._queue: list[ButtonPress] = []
        self._subscribers: list[Callable[[ButtonPress], None]] = []
        self._last: dict[str, float] = {}
        self._lock = threading.Lock()
        self.closed = False

    def subscribe(self, callback: Callable[[ButtonPress], None]) -> None:
        """Call ``callback(press)`` for every accepted press (from the backend's thread)."""
        self._subscribers.append(callback)

    def poll(self) -> list[ButtonPress]:
        """Accepted presses since the last poll, oldest first."""
        with self._lock:
            out, self._queue = self._queue, []
        return out

    def _pressed(self, seat: str, t: float | None = None) -> ButtonPress:
        if seat not in SEATS:
            raise ButtonError(f"unknown seat {seat!r}: seats are N, E, S, W")
        now = self.clock() if t is None else t
        with self._lock:
            last = self._last.get(seat)
            accepted = last is None or now - last >= self.debounce_s
            press = ButtonPress(seat, now, accepted)
            self.history.append(press)
            if accepted:
                self._last[seat] = now
                self._queue.append(press)
        if accepted:
            for callback in list(self._subscribers):
                callback(press)
        return press

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> PassButtons:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MockButtons(PassButtons):
    """No hardware: ``press(seat)`` simulates a press; ``history`` keeps every press."""

    spec = "mock"

    def press(self, seat: str, t: float | None = None) -> ButtonPress:
        if self.closed:
            raise ButtonError("the buttons are closed")
        return self._pressed(seat, t)


class GpiozeroButtons(PassButtons):
    """Real buttons through gpiozero (``gpiozero.Button``, pull-up, pressed = pin to ground)."""

    def __init__(
        self,
        pins: Mapping[str, int] | None = None,
        debounce_s: float = 0.3,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(debounce_s, clock)
        pins = dict(DEFAULT_PINS if pins is None else pins)
        _check_pins(pins)
        self.pins = pins
        self.spec = "gpiozero:" + ",".join(f"{s}={pins[s]}" for s in SEATS if s in pins)
        try:
            gpiozero = importlib.import_module("gpiozero")
        except ImportError as exc:
            raise ButtonError(
                "gpiozero is not installed: on Raspberry Pi OS run `sudo apt install "
                "python3-gpiozero` and use a venv made with --system-site-packages "
                f"(hardware/pi/README.md); elsewhere use the 'mock' buttons ({exc})"
            ) from None
        self._buttons: dict[str, Any] = {}
        try:
            for seat, pin in pins.items():
                button = gpiozero.Button(pin, pull_up=True, bounce_time=None)
                button.when_pressed = self._handler(seat)
                self._buttons[seat] = button
        except Exception as exc:  # gpiozero raises its own GPIO errors (busy pin, no GPIO chip)
            self.close()
            raise ButtonError(
                f"cannot set up the seat buttons on GPIO pins {pins}: {exc} (is another program "
                "using the pins? is this a Raspberry Pi?)"
            ) from None

    def _handler(self, seat: str) -> Callable[..., None]:
        def handler(*_args: object) -> None:
            self._pressed(seat)

        return handler

    def close(self) -> None:
        for button in getattr(self, "_buttons", {}).values():
            try:
                button.close()
            except Exception:  # noqa: BLE001 - closing must not fail
                pass
        self._buttons = {}
        super().close()


def _check_pins(pins: Mapping[str, int]) -> None:
    for seat, pin in pins.items():
        if seat not in SEATS:
            raise ButtonError(f"unknown seat {seat!r} in button pins: seats are N, E, S, W")
        if not isinstance(pin, int) or not 0 <= pin <= 27:
            raise ButtonError(f"seat {seat}: GPIO pin {pin!r} is not a BCM pin number 0-27")
    used: dict[int, str] = {}
    for seat, pin in pins.items():
        if pin in used:
            raise ButtonError(f"seats {used[pin]} and {seat} share GPIO pin {pin}")
        used[pin] = seat


def _parse_pins(text: str, spec: str) -> dict[str, int]:
    pins: dict[str, int] = {}
    for part in text.split(","):
        seat, sep, pin = part.strip().partition("=")
        if not sep or not pin.strip().isdigit():
            raise ButtonError(
                f"button spec {spec!r}: {part.strip()!r} is not SEAT=PIN (e.g. gpiozero:N=17,E=27)"
            )
        pins[seat.strip().upper()] = int(pin)
    _check_pins(pins)
    return pins


def open_buttons(spec: str | None = None, **kwargs: Any) -> PassButtons:
    """Open the seat buttons named by ``spec`` (or ``$GUANDAN_BUTTONS``, default ``mock``)."""
    if spec is None:
        spec = os.environ.get(ENV_VAR) or "mock"
    kind, _, arg = spec.strip().partition(":")
    if kind == "mock":
        if arg:
            raise ButtonError(f"button spec {spec!r}: 'mock' takes no arguments")
        return MockButtons(**kwargs)
    if kind == "gpiozero":
        pins = _parse_pins(arg, spec) if arg else None
        return GpiozeroButtons(pins, **kwargs)
    raise ButtonError(f"unknown buttons {spec!r}: use 'mock' or 'gpiozero[:N=17,E=27,S=22,W=23]'")
