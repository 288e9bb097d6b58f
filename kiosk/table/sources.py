"""Where the kiosk's observations come from: one protocol, three backends.

* :class:`JsonlSource` - an observation file (``guandan sim --observations``, or the truth file
  next to a rendered video), paced by each observation's ``t`` divided by ``speed``
  (``speed=0``: as fast as possible).
* :class:`SimSource` - a seeded simulated match (engine.sim), paced the same way.
* :class:`VideoSource` - the vision pipeline on a video or camera (``vision.pipeline``,
  imported only when used).

A source yields observations in order; ``skip`` of them are consumed silently first (a kiosk
restarting after a crash resumes after the last logged one). Pacing: the first yielded
observation is due at once; the next at ``(t - t_first) / speed`` seconds later on the wall
clock. ``clock()`` tells the session time now (for the shot clock and referee entries).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from engine.observations import Observation, parse_observation


class SourceError(ValueError):
    """A source that cannot be opened; the message says what to do."""


class ObservationSource(Protocol):
    kind: str
    description: str

    def observations(self, skip: int, stop: threading.Event) -> Iterator[Observation]: ...

    def clock(self) -> float | None: ...


class _Paced:
    """Wall-clock pacing by observation time."""

    def __init__(self, speed: float) -> None:
        if speed < 0:
            raise SourceError(f"speed {speed}: give 0 (as fast as possible) or more")
        self.speed = speed
        self._t0: float | None = None
        self._wall0 = 0.0
        self._last_t = 0.0

    def wait(self, t: float, stop: threading.Event) -> bool:
        """Sleep until observation time ``t`` is due; False when stopped."""
        self._last_t = max(self._last_t, t)
        if self.speed == 0:
            return not stop.is_set()
        if self._t0 is None:
            self._t0, self._wall0 = t, time.monotonic()
            return not stop.is_set()
        due = self._wall0 + (t - self._t0) / self.speed
        while True:
            left = due - time.monotonic()
            if left <= 0:
                return not stop.is_set()
            if stop.wait(min(left, 0.25)):
                return False

    def clock(self) -> float | None:
        if self._t0 is None:
            return None
        if self.speed == 0:
            return self._last_t
        return self._t0 + (time.monotonic() - self._wall0) * self.speed


def _paced(
    items: Iterator[Observation], pace: _Paced, skip: int, stop: threading.Event
) -> Iterator[Observation]:
    for n, obs in enumerate(items):
        if n < skip:
            pace._last_t = max(pace._last_t, obs.t)
            continue
        if not pace.wait(obs.t, stop):
            return
        yield obs


class JsonlSource:
    kind = "observations"

    def __init__(self, path: str | Path, *, speed: float = 1.0) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise SourceError(
                f"observation file {self.path} not found; write one with "
                "`guandan sim --profile P --deals N --out ev.jsonl --observations obs.jsonl`"
            )
        self._items: list[Observation] = []
        for n, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                self._items.append(parse_observation(line, where=f"{self.path.name} line {n}"))
        self._pace = _Paced(speed)
        self.description = f"observation file {self.path} ({len(self._items)} observations)"

    def __len__(self) -> int:
        return len(self._items)

    def observations(self, skip: int, stop: threading.Event) -> Iterator[Observation]:
        return _paced(iter(self._items), self._pace, skip, stop)

    def clock(self) -> float | None:
        return self._pace.clock()


def first_match(observations: list[Observation], profile: Any, table: str) -> list[Observation]:
    """The observations up to the end of the first match (a full match for a demo)."""
    from engine.referee import Referee

    ref = Referee(profile, table=table)
    for i, obs in enumerate(observations):
        if any(ev.type == "match_ended" for ev in ref.feed(obs)):
            return observations[: i + 1]
    return observations


class SimSource:
    """A seeded simulated match: one whole match (at most ``deals`` deals)."""

    kind = "simulation"

    def __init__(
        self,
        profile: Any,
        *,
        seed: int,
        speed: float = 1.0,
        deals: int = 40,
        mischief: float = 0.0,
        table: str = "t1",
        whole_match: bool = True,
    ) -> None:
        from engine.sim import simulate

        result = simulate(profile, deals=deals, seed=seed, mischief=mischief, table=table)
        items = list(result.observations)
        if whole_match:
            items = first_match(items, profile, table)
        self._items = items
        self._pace = _Paced(speed)
        self.description = (
            f"simulated match (engine.sim, profile {profile.name}, seed {seed}, "
            f"{len(items)} observations)"
        )

    def __len__(self) -> int:
        return len(self._items)

    def observations(self, skip: int, stop: threading.Event) -> Iterator[Observation]:
        return _paced(iter(self._items), self._pace, skip, stop)

    def clock(self) -> float | None:
        return self._pace.clock()


def vision_available() -> bool:
    try:
        import importlib

        mod = importlib.import_module("kiosk.replay")
    except ImportError:
        return False
    return hasattr(mod, "observations_from_video")


class VideoSource:
    """The table pipeline (vision.pipeline) on a video file or camera spec."""

    kind = "video"

    def __init__(
        self, spec: str, *, calibration: str | None = None, speed: float = 1.0, **kw: Any
    ) -> None:
        if not vision_available():
            raise SourceError(
                "the vision pipeline (kiosk.replay.observations_from_video) is not installed "
                "in this build; use --observations FILE or --simulate SEED"
            )
        path = spec.removeprefix("file:")
        if not Path(path).is_file():
            raise SourceError(
                f"--camera {spec!r}: the pipeline reads a video file (file:VIDEO); "
                f"{path} is not a file"
            )
        if calibration is not None and not Path(calibration).is_file():
            raise SourceError(f"--calibration {calibration}: file not found")
        self.spec = spec
        self.calibration = calibration
        self.kw = kw
        self._pace = _Paced(speed)
        self.description = f"vision pipeline on {spec}"

    def observations(self, skip: int, stop: threading.Event) -> Iterator[Observation]:
        from kiosk import replay as pipeline

        spec = self.spec.removeprefix("file:")
        items = pipeline.observations_from_video(spec, calibration=self.calibration, **self.kw)
        return _paced(iter(items), self._pace, skip, stop)

    def clock(self) -> float | None:
        return self._pace.clock()
