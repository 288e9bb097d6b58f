"""A recorded game through the whole table pipeline: video file -> frames (``hardware.camera``)
-> ``vision.pipeline.TablePipeline`` -> observations -> ``engine`` referee -> events.

For the kiosk's video source and ``guandan table replay``::

    from kiosk.replay import observations_from_video, replay
    for obs in observations_from_video("game.mp4"):          # Iterator[engine Observation]
        ...
    result = replay("game.mp4", profile="standard")          # ReplayResult: events, report
    result.events                                            # engine Event list (CONTRACT JSON)

This is where the layers meet (DESIGN.md: ``kiosk`` may import everything), so ``vision`` itself
imports neither ``hardware`` nor the referee.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.observations import Observation, from_camera
from vision.pipeline import PipelineError, ReplayReport, TablePipeline, resolve_detector
from vision.table import Calibration

__all__ = [
    "ReplayResult",
    "observations_from_video",
    "replay",
    "replay_command",
    "summarize",
]


def _load_calibration(calibration: Calibration | str | Path | None) -> Calibration | None:
    if calibration is None or isinstance(calibration, Calibration):
        return calibration
    return Calibration.load(calibration)


def observations_from_video(
    path: str | Path,
    calibration: Calibration | str | Path | None = None,
    detector: Any = None,
    *,
    report: ReplayReport | None = None,
    on_gap: Callable[[Any], None] | None = None,
    deck: Any = None,
    **options: Any,
) -> Iterator[Observation]:
    """Observations of a recorded game, in order, as the frames are read, each marked
    ``source: camera`` (a foul the referee judges on one waits for the floor referee).

    ``calibration``: a Calibration, a calibration JSON path, or None (calibrate from the video's
    first frames where all four markers show). ``detector``: see :func:`resolve_detector`;
    ``deck``: an enrolled deck profile (vision/enrol.py) it reads with.
    ``report`` (a :class:`ReplayReport`) is filled in as the video is read: frames, speed,
    unreadable stretches (``gaps``), calibration problems (``warnings``). Raises
    ``hardware.camera.CameraError`` (a ValueError) when the file cannot be opened at all."""
    from hardware.camera import FileCamera, Gap

    rep = report if report is not None else ReplayReport()
    gaps: list[Gap] = []

    def gap(g: Gap) -> None:
        gaps.append(g)
        rep.gaps.append(str(g))
        if on_gap is not None:
            on_gap(g)

    start = time.perf_counter()
    with FileCamera(path, on_gap=gap) as cam:  # a missing or unreadable file fails here first
        det = resolve_detector(detector, path, deck)
        cal = _load_calibration(calibration)
        pipe = TablePipeline(det, cal, report=rep, **options)
        fps = cam.fps
        seen_gaps = 0
        while True:
            frame = cam.read()
            if frame is None:
                break
            if len(gaps) != seen_gaps:
                seen_gaps = len(gaps)
                pipe.reset()
            index = int(round(frame.t * fps))
            rep.video_seconds = frame.t
            obs = pipe.process(index, frame.t, frame.image)
            rep.seconds = time.perf_counter() - start
            yield from map(from_camera, obs)
    yield from map(from_camera, pipe.finish())
    rep.seconds = time.perf_counter() - start
    if pipe.calibration is None:
        raise PipelineError(
            f"{path}: no frame showed the four corner markers, so nothing could be read "
            "(markers covered or out of view?); give --calibration FILE if the camera did not move"
        )


@dataclass
class ReplayResult:
    events: list[Any]
    observations: list[Observation]
    report: ReplayReport


def replay(
    video: str | Path,
    *,
    profile: Any = "standard",
    calibration: Calibration | str | Path | None = None,
    detector: Any = None,
    table: str = "t1",
    on_event: Callable[[Any], None] | None = None,
    **options: Any,
) -> ReplayResult:
    """The whole pipeline on a video file: observations fed to a live ``engine.Referee``.
    ``profile``: a name, a .toml path or an ``engine`` Profile. ``on_event`` sees each event as
    it is produced (the kiosk's event log / outbox)."""
    from engine.profiles import load_profile
    from engine.referee import Referee

    prof = load_profile(profile) if isinstance(profile, str | Path) else profile
    ref = Referee(prof, table=table)
    report = ReplayReport()
    observations: list[Observation] = []
    for obs in observations_from_video(video, calibration, detector, report=report, **options):
        observations.append(obs)
        for ev in ref.feed(obs):
            if on_event is not None:
                on_event(ev)
    return ReplayResult(ref.events, observations, report)


def summarize(events: Sequence[Any]) -> list[str]:
    """Human lines: each deal's plays, finishing order and levels (the README's main job), from
    the events in effect (a correction replaces what it names); a play the referee re-read says
    what the camera saw."""
    from engine.deal import effective_events
    from engine.events import parse_event

    parsed = [parse_event(ev) if isinstance(ev, dict) else ev for ev in events]
    lines: list[str] = []
    for ev in effective_events(parsed):
        e = ev.to_json()
        ty = e.get("type")
        if ty == "deal_started":
            lines.append(f"deal {e.get('deal')}: level {e.get('level')}, leader {e.get('leader')}")
        elif ty == "play":
            seen = ""
            if e.get("camera") and e["camera"] != e["cards"]:
                seen = f" (camera read {' '.join(e['camera'])})"
            if e.get("unseen"):
                seen += (
                    f" (+{e['unseen']} cards the camera never saw: the table played on as if out)"
                )
            lines.append(f"  {e['t']:8.2f}s {e['seat']} plays {' '.join(e['cards'])}{seen}")
        elif ty == "pass":
            lines.append(f"  {e['t']:8.2f}s {e['seat']} passes")
        elif ty in ("tribute", "tribute_returned"):
            lines.append(f"  {e['t']:8.2f}s {ty} {e['from']} -> {e['to']}: {e['card']}")
        elif ty == "foul":
            lines.append(f"  {e['t']:8.2f}s foul {e.get('seat')}: {e.get('kind')}")
        elif ty == "seat_out":
            lines.append(f"  {e['t']:8.2f}s {e['seat']} is out (place {e.get('place')})")
        elif ty == "deal_ended":
            lines.append(f"  finishing order {' '.join(e['order'])}; levels {e['levels']}")
        elif ty == "match_ended":
            lines.append(f"match won by {e.get('winner')}")
    return lines


def replay_command(args: Any) -> int:
    """``guandan table replay`` (kiosk/cli/table.py registers the arguments)."""
    import sys

    from engine.events import dump_event
    from engine.observations import dump_observation

    out = str(args.out)
    if out != "-" and not Path(out).resolve().parent.exists():
        raise PipelineError(f"--out {out}: the folder {Path(out).parent} does not exist")
    result = replay(
        args.video,
        profile=args.profile,
        calibration=args.calibration,
        detector=args.detector,
        table=args.table,
        deck=getattr(args, "deck", None),
    )
    rep = result.report
    _write(out, [dump_event(e) for e in result.events])
    if args.observations:
        _write(args.observations, [dump_observation(o) for o in result.observations])
    for g in rep.gaps:
        print(f"guandan table replay: warning: {g}", file=sys.stderr)
    for w in rep.warnings:
        print(f"guandan table replay: warning: {w}", file=sys.stderr)
    if not args.quiet:
        stream = sys.stderr if out == "-" else sys.stdout
        for line in summarize(result.events):
            print(line, file=stream)
        print(json.dumps({"replay": rep.to_json()}), file=stream)
    return 0


def _write(path: str, lines: list[str]) -> None:
    import sys

    text = "".join(line + "\n" for line in lines)
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    target = Path(path)
    tmp = target.with_name(target.name + ".part")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)
