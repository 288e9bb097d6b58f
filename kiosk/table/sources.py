"""Where the kiosk's observations come from: one protocol, four backends.

* :class:`JsonlSource` - an observation file (``guandan sim --observations``, or the truth file
  next to a rendered video), paced by each observation's ``t`` divided by ``speed``
  (``speed=0``: as fast as possible).
* :class:`SimSource` - a seeded simulated match (engine.sim), paced the same way.
* :class:`VideoSource` - the vision pipeline on a video file (``kiosk.replay``, imported only
  when used), paced by video time divided by ``speed``.
* :class:`LiveSource` - the same pipeline (``vision.pipeline.TablePipeline``) on a live camera
  (``hardware.camera`` specs ``device:N``, ``picamera2[:N]``, ``synthetic[:table]``, or a
  plugin's): no end, no pacing, frames recorded by ``kiosk.table.footage``; a camera that stops
  delivering raises the ``camera`` alarm and is reopened with backoff (see the class).

The capture size of a live camera is a setting (``capture_size``; ``guandan table run
--capture-size WxH``, else ``$GUANDAN_CAPTURE_SIZE``, else the spec's own ``size=`` or the
backend's default, 1280x720): the Raspberry Pi Camera Module 3 films its full view at 2304x1296
at 30+ frames/s, the HQ camera at 2028x1520. The pipeline detects on a reduced copy of a larger
frame and names the cards from crops of the frame itself (vision/pipeline.py
``DETECT_SHORT_SIDE``). A video file is read at whatever size it was recorded.

A source yields observations in order; ``skip`` of them are consumed silently first (a kiosk
restarting after a crash resumes after the last logged one). Pacing: the first yielded
observation is due at once; the next at ``(t - t_first) / speed`` seconds later on the wall
clock. ``clock()`` tells the session time now (for the shot clock and referee entries).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, Protocol

from engine.observations import Observation, from_camera, parse_observation

log = logging.getLogger("guandan.table")


class SourceError(ValueError):
    """A source that cannot be opened; the message says what to do."""


#: the live camera's capture size when ``--capture-size`` is not given (the Pi service file's
#: environment sets it beside ``GUANDAN_CAMERA``)
ENV_CAPTURE_SIZE = "GUANDAN_CAPTURE_SIZE"


def capture_size(text: str | None, option: str = "--capture-size") -> tuple[int, int] | None:
    """``"2304x1296"`` -> ``(2304, 1296)``; None or empty -> None; a bad text is a
    :class:`SourceError` naming ``option``."""
    if text is None or not str(text).strip():
        return None
    from vision.framesize import FrameSizeError, parse_frame_size

    try:
        return parse_frame_size(text, option)
    except FrameSizeError as exc:
        raise SourceError(str(exc)) from None


def with_capture_size(spec: str, size: tuple[int, int] | None) -> str:
    """The live camera ``spec`` asking for ``size`` (its ``size=WxH`` option); the spec itself
    when ``size`` is None, when it is a video file (read at its own size), or when it asks for
    that size already. A spec that asks for another size (``size=``, ``width=``/``height=``) is
    a :class:`SourceError`: one camera, one size."""
    if size is None:
        return spec
    from hardware.camera import CameraError, parse_spec

    try:
        kind, _arg, options = parse_spec(spec)
    except CameraError as exc:
        raise SourceError(f"--camera {spec}: {exc}") from None
    if kind == "file":
        return spec
    want = f"{size[0]}x{size[1]}"
    own = options.get("size")
    if own is None and ("width" in options or "height" in options):
        own = f"{options.get('width', '?')}x{options.get('height', '?')}"
    if own is not None:
        if own.strip().lower() == want:
            return spec
        raise SourceError(
            f"--camera {spec} asks for {own} and the capture size is {want}: give the size once "
            "(--capture-size WxH, or size=WxH in the camera spec)"
        )
    return f"{spec}{'&' if '?' in spec else '?'}size={want}"


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
        if kw.get("deck") is not None:
            kw["deck"] = _load_deck(kw["deck"])
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


def is_live_spec(spec: str) -> bool:
    """True for a live camera spec: whatever ``hardware.camera`` opens that is not a video file
    (``device:N``, ``picamera2``, ``synthetic``, a plugin's). Bad specs raise ``CameraError``."""
    from hardware.camera import parse_spec

    kind, _arg, _options = parse_spec(spec)
    return kind != "file"


class _Lost:
    """What a camera reader reports instead of a frame when the camera is gone."""

    def __init__(self, why: str) -> None:
        self.why = why


class _Reader:
    """One opened camera, read in its own thread into a short queue, so a camera whose driver
    hangs cannot hang the kiosk (the consumer gives up after ``stall_s``). Frames are not served
    faster than their own timestamps say (a synthetic camera runs in real time); each comes with
    the monotonic time it was taken, by its timestamp relative to the reader's first. The queue
    blocks rather than drops: every frame delivered is processed and recorded. The thread
    closes the camera when it ends."""

    def __init__(self, camera: Any) -> None:
        self.camera = camera
        self.fps = float(getattr(camera, "fps", 0.0) or 0.0)
        self.q: queue.Queue[tuple[Any, float] | _Lost] = queue.Queue(maxsize=2)
        self.max_lag_s = 2.0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="camera-reader", daemon=True)
        self.thread.start()

    def _put(self, item: tuple[Any, float] | _Lost) -> bool:
        while not self.stopped.is_set():
            try:
                self.q.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        first: tuple[float, float] | None = None
        try:
            while not self.stopped.is_set():
                frame = self.camera.read()
                now = time.monotonic()
                if frame is None:
                    self._put(_Lost("the camera ended its stream"))
                    return
                # when the frame was taken, on the monotonic clock, by its own timestamp
                at = now if first is None else first[1] + (frame.t - first[0])
                if at > now:  # ahead of real time (a generated camera): wait for it
                    if self.stopped.wait(at - now):
                        return
                elif now - at > self.max_lag_s or first is None:
                    # first frame, or the stamps fell behind the wall clock (the camera was not
                    # read for a while, or it counts frames, not time): anchor them here
                    first, at = (frame.t, now), now
                if not self._put((frame, at)):
                    return
        except Exception as exc:  # noqa: BLE001 - any failure of the camera is a lost camera
            self._put(_Lost(str(exc) or type(exc).__name__))
        finally:
            try:
                self.camera.close()
            except Exception as exc:  # noqa: BLE001
                log.warning("closing camera %s: %s", getattr(self.camera, "spec", "?"), exc)

    def close(self) -> None:
        self.stopped.set()


AlarmFn = Callable[[str, str | None, str], None]


class LiveSource:
    """The table pipeline (``vision.pipeline.TablePipeline``) on a live camera.

    The camera is opened, and its first frame awaited, when the source is made: a camera that
    cannot be used fails there (:class:`SourceError`, the CLI's exit 2) before anything is
    written. Then frames are read live until the kiosk stops; ``skip`` is ignored (what the log
    holds is history, the frames are new) and nothing is paced (``speed`` does not apply).

    Timestamps come from the frames (monotonic wall clock or sensor time, by backend), mapped
    onto the session clock, which continues from the log's last ``t`` after a restart
    (``attach``). The pipeline's frame index counts the frames processed. A kiosk restarted
    mid-trick sees cards already recorded lying in the play zones: the worker tells the source
    what the log says lies there (``resume``, a ``vision.track.TableState``) and the pipeline
    starts from it (``TablePipeline.resume``), so they are not reported again.

    A camera that stops delivering (read errors, end of stream, no frame for ``stall_s``)
    raises the ``camera`` alarm and a ``camera`` note in the log (``lost``, then ``restored``
    with how long it was down); the kiosk keeps serving and the referee's entries still work.
    The camera is reopened after ``retry_s``, doubling up to ``max_retry_s`` until frames come
    back; then the alarm clears and the pipeline carries on (motion history reset). The
    ``markers`` alarm says when no frame has shown the four corner markers for ``markers_s``
    seconds (nothing can be read until one does); ``--calibration FILE`` works as for files.
    ``footage`` (a :class:`kiosk.table.footage.FootageRecorder`) records every frame.

    ``capture_size`` (width, height) asks the camera for frames of that size (the spec's
    ``size=`` option, :func:`with_capture_size`; None: the spec's own or the backend's default).
    A calibration file made at another size of the same view is scaled to the frames; one made
    with another aspect ratio (another camera mode: another view) stops the kiosk at start.
    """

    kind = "camera"

    def __init__(
        self,
        spec: str,
        *,
        calibration: str | None = None,
        detector: Any = "auto",
        deck: Any = None,
        footage: Any = None,
        retry_s: float = 1.0,
        max_retry_s: float = 30.0,
        stall_s: float = 10.0,
        first_frame_s: float = 20.0,
        markers_s: float = 15.0,
        opener: Callable[[str], Any] | None = None,
        capture_size: tuple[int, int] | None = None,
        **options: Any,
    ) -> None:
        if not vision_available():
            raise SourceError(
                "the vision pipeline (kiosk.replay, vision.pipeline) is not installed in this "
                "build; use --observations FILE or --simulate SEED"
            )
        from hardware.camera import open_camera
        from vision.detector import DEFAULT_MODEL
        from vision.pipeline import PipelineError, ReplayReport, resolve_detector
        from vision.table import Calibration

        if not 0 < retry_s <= max_retry_s:
            raise SourceError(f"camera retry {retry_s} s .. {max_retry_s} s: give 0 < first <= max")
        spec = with_capture_size(spec, capture_size)
        self.capture_size = capture_size
        self.spec = spec
        self._opener = opener or open_camera
        self.calibration = None
        if calibration is not None:
            if not Path(calibration).is_file():
                raise SourceError(f"--calibration {calibration}: file not found")
            self.calibration = Calibration.load(calibration)
        if detector in (None, "auto") and not DEFAULT_MODEL.exists():
            raise SourceError(
                f"no card detector for the live camera: {DEFAULT_MODEL} is not there (train it: "
                "models/README.md); pass --detector MODEL.onnx"
            )
        try:
            self.detector = resolve_detector(detector, None, _load_deck(deck))
        except PipelineError as exc:
            raise SourceError(
                f"--detector {detector}: {exc} (a live camera needs a model: auto, model or "
                "PATH.onnx)"
            ) from None
        self.options = options
        self.footage = footage
        self.retry_s, self.max_retry_s = retry_s, max_retry_s
        self.stall_s = stall_s
        self.markers_s = markers_s
        self.report = ReplayReport()
        self._alarm: AlarmFn = lambda kind, en, zh: None
        self._note: Callable[[dict[str, Any]], None] = lambda body: None
        self._base = 0.0
        self._mono0 = time.monotonic()
        self._last_t = 0.0
        self._index = 0
        self._delay = retry_s
        self._down_since: float | None = None
        self._down_t = 0.0
        self._uncalibrated_since: float | None = None
        self._vision_ok = 0
        self._lock = threading.Lock()
        self.frames = 0
        self.outages = 0
        self.reopen_tries = 0
        self.last_error: str | None = None
        self.last_frame_at: float | None = None
        self._pipe: Any = None
        self._resume: Any = None
        #: called with the pipeline before each frame is processed (never within one): a new
        #: deck taken up between deals (kiosk/table/deckfetch.py ``DeckWatcher``)
        self.frame_hook: Callable[[Any], None] | None = None

        try:
            camera = self._opener(spec)
        except Exception as exc:  # noqa: BLE001 - CameraError, or a driver's own error
            raise SourceError(f"--camera {spec}: cannot open the camera: {exc}") from None
        self.camera_spec = str(getattr(camera, "spec", spec))
        self.size = tuple(getattr(camera, "size", (0, 0)))
        self.fps = float(getattr(camera, "fps", 0.0) or 0.0)
        reader = _Reader(camera)
        try:
            first = reader.q.get(timeout=first_frame_s)
        except queue.Empty:
            reader.close()
            raise SourceError(
                f"--camera {spec}: the camera opened but delivered no frame in {first_frame_s:g} "
                "s: check it is the right device and that no other program uses it"
            ) from None
        if isinstance(first, _Lost):
            reader.close()
            raise SourceError(
                f"--camera {spec}: the camera opened but delivered no frame: {first.why}"
            )
        image = first[0].image
        self.size = (int(image.shape[1]), int(image.shape[0]))
        if self.calibration is not None:
            try:
                self.calibration.for_image_size(*self.size)
            except ValueError as exc:  # TableError: another aspect ratio
                reader.close()
                raise SourceError(
                    f"--calibration: made at {self.calibration.image_size[0]}x"
                    f"{self.calibration.image_size[1]}, but the camera gives {self.size[0]}x"
                    f"{self.size[1]} ({exc}); calibrate at this capture size (guandan table "
                    "calibrate --camera SPEC --capture-size WxH --out FILE)"
                ) from None
        self._reader: _Reader | None = reader
        self._first: tuple[Any, float] | None = first
        self.description = (
            f"live camera {self.camera_spec} ({self.size[0]}x{self.size[1]}, {self.fps:g} fps) "
            f"through the vision pipeline (detector {self.report.detector or _name(self.detector)})"
        )

    # ------------------------------------------------------------------ wiring
    def attach(
        self,
        *,
        alarm: AlarmFn | None = None,
        note: Callable[[dict[str, Any]], None] | None = None,
        start_t: float = 0.0,
        paused: Callable[[], bool] | None = None,
    ) -> None:
        """Called by the worker before it starts reading: where alarms and notes go, and the
        session time to continue from (the log's last ``t``)."""
        if alarm is not None:
            self._alarm = alarm
        if note is not None:
            self._note = note
        self._base = max(0.0, float(start_t))
        self._mono0 = time.monotonic()
        self._last_t = self._base
        if self.footage is not None:
            self.footage.alarm = alarm
            self.footage.paused = paused

    def resume(self, state: Any) -> None:
        """What lies on the table already (a ``vision.track.TableState`` folded from the log;
        called by the worker before it starts reading): the pipeline starts from it."""
        self._resume = state

    def clock(self) -> float | None:
        return self._base + (time.monotonic() - self._mono0)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self.footage is not None:
            self.footage.close()

    # ------------------------------------------------------------------ the frame loop
    def observations(self, skip: int, stop: threading.Event) -> Iterator[Observation]:
        from vision.pipeline import TablePipeline

        pipe = TablePipeline(self.detector, self.calibration, report=self.report, **self.options)
        if self._resume is not None:
            pipe.resume(self._resume)
        self._pipe = pipe
        try:
            while not stop.is_set():
                reader = self._reader
                if reader is None:
                    reader = self._reopen(stop)
                    if reader is None:
                        return
                    self._reader = reader
                    pipe.reset()
                why = yield from self._frames(reader, pipe, stop)
                reader.close()
                self._reader = None
                if why is None:
                    return
                self._lost(why)
        finally:
            self.close()

    def _frames(
        self, reader: _Reader, pipe: Any, stop: threading.Event
    ) -> Generator[Observation, None, str | None]:
        """Observations from one opened camera; returns why it stopped (None: the kiosk did)."""
        started = False
        while not stop.is_set():
            item: tuple[Any, float] | _Lost
            if self._first is not None:
                item, self._first = self._first, None
            else:
                since = time.monotonic()
                while True:
                    try:
                        item = reader.q.get(timeout=0.25)
                        break
                    except queue.Empty:
                        if stop.is_set():
                            return None
                        if time.monotonic() - since > self.stall_s:
                            return f"no frame for {self.stall_s:g} s"
            if isinstance(item, _Lost):
                return item.why
            frame, at = item
            t = max(self._base + (at - self._mono0), self._last_t + 0.001)
            self._last_t = t
            if not started:
                started = True
                if self._down_since is not None:
                    self._restored()
            with self._lock:
                self.frames += 1
                self.last_frame_at = time.time()
            image = frame.image
            self.size = (int(image.shape[1]), int(image.shape[0]))
            if self.footage is not None:
                self.footage.write(t, image, reader.fps)
            if self.frame_hook is not None:
                self.frame_hook(pipe)
            try:
                obs = pipe.process(self._index, t, image)
                self._vision_fine()
            except Exception as exc:  # noqa: BLE001 - one bad frame must not end the camera
                log.exception("vision pipeline failed on frame %d", self._index)
                self._vision_ok = 0
                self._alarm(
                    "vision",
                    f"the vision pipeline failed on a frame ({type(exc).__name__}: {exc}); it "
                    "carries on with the next frames",
                    f"视觉处理出错（{type(exc).__name__}）：继续处理后续画面",
                )
                pipe.reset()
                obs = []
            self._index += 1
            self._check_markers(pipe, t)
            yield from map(from_camera, obs)
        return None

    def _vision_fine(self) -> None:
        self._vision_ok += 1
        if self._vision_ok == 50:
            self._alarm("vision", None, "")

    def _check_markers(self, pipe: Any, t: float) -> None:
        if pipe.calibration is not None:
            if self._uncalibrated_since is not None:
                self._uncalibrated_since = None
                self._alarm("markers", None, "")
            return
        if self._uncalibrated_since is None:
            self._uncalibrated_since = t
        elif t - self._uncalibrated_since >= self.markers_s:
            self._alarm(
                "markers",
                f"the camera ({self.spec}) has not seen the four corner markers for "
                f"{self.markers_s:g} s: no cards can be read; uncover the markers or re-aim "
                "the camera (or start with --calibration FILE)",
                "摄像头看不到四个角标：无法识别牌；请露出角标或调整摄像头",
            )

    # ------------------------------------------------------------------ lost and found
    def _lost(self, why: str) -> None:
        log.warning("camera %s lost: %s", self.spec, why)
        self.last_error = why
        if self.footage is not None:
            self.footage.cut()
        if self._down_since is not None:
            return
        self._down_since = time.time()
        self._down_t = self._last_t
        self.outages += 1
        self._alarm(
            "camera",
            f"CAMERA LOST ({self.spec}): {why}. Cards are not being read; the event log is kept "
            "and referee entries still work. Check the camera and its cable: the kiosk "
            "reconnects by itself.",
            f"摄像头断开（{self.spec}）：未在识别牌；事件记录完好，裁判录入仍可用。"
            "请检查摄像头和连线，系统会自动重连。",
        )
        self._safe_note(
            {"event": "lost", "spec": self.spec, "reason": why, "t": round(self._down_t, 3)}
        )

    def _restored(self) -> None:
        assert self._down_since is not None
        down_s = round(time.time() - self._down_since, 1)
        log.warning("camera %s is back after %.1f s", self.spec, down_s)
        self._down_since = None
        self._delay = self.retry_s
        self._alarm("camera", None, "")
        self._safe_note(
            {
                "event": "restored",
                "spec": self.spec,
                "t": round(self._last_t, 3),
                "lost_t": round(self._down_t, 3),
                "down_s": down_s,
            }
        )

    def _safe_note(self, body: dict[str, Any]) -> None:
        try:
            self._note(body)
        except Exception as exc:  # noqa: BLE001 - a full disk must not stop the camera loop
            log.warning("camera note not recorded: %s", exc)

    def _reopen(self, stop: threading.Event) -> _Reader | None:
        while True:
            if stop.wait(self._delay):
                return None
            self._delay = min(self._delay * 2, self.max_retry_s)
            self.reopen_tries += 1
            try:
                camera = self._opener(self.spec)
            except Exception as exc:  # noqa: BLE001
                self.last_error = f"cannot reopen: {exc}"
                log.warning("camera %s: %s", self.spec, self.last_error)
                continue
            return _Reader(camera)

    # ------------------------------------------------------------------ state
    def status(self) -> dict[str, Any]:
        """For the screen's state (``/api/state`` ``camera``)."""
        pipe = self._pipe
        with self._lock:
            frames, last = self.frames, self.last_frame_at
        rep = self.report
        return {
            "spec": self.spec,
            "state": "lost" if self._down_since is not None else "live",
            "size": list(self.size),
            "detect_scale": round(rep.detect_scale, 4),
            "fps": self.fps,
            "frames": frames,
            "last_frame_at": last,
            "outages": self.outages,
            "reopen_tries": self.reopen_tries,
            "down_since": self._down_since,
            "last_error": self.last_error,
            "calibrated": pipe is not None and pipe.calibration is not None,
            "calibration": rep.calibration,
            "warnings": list(rep.warnings[-3:]),
            "footage": self.footage.status() if self.footage is not None else None,
        }


def _load_deck(deck: Any) -> Any:
    """--deck FILE as what to read with (vision.adapt.DeckReader: the deck profile, and the
    classifier adapted to the deck when ``guandan vision adapt`` wrote one beside it; None stays
    None); a bad file is a SourceError naming it."""
    if deck is None or not isinstance(deck, str | Path):
        return deck
    from vision.adapt import deck_reader

    try:
        return deck_reader(deck)
    except ValueError as exc:  # EnrolError, AdaptError
        raise SourceError(f"--deck {exc}") from None


def _name(detector: Any) -> str:
    return str(getattr(detector, "name", type(detector).__name__))
