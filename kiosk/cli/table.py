"""``guandan table ...``: table calibration (and, later, the whole pipeline on a video).

* ``guandan table calibrate (--image FRAME | --camera SPEC) --out calibration.json
  [--capture-size WxH] [--table-size WxH] [--marker-size MM] [--marker-offset MM]
  [--centre-size MM] [--previous FILE] [--frames N] [--preview PNG]``
* ``guandan table check --calibration FILE (--image FRAME | --camera SPEC) [--capture-size WxH]
  [--threshold MM]``: has the camera moved since calibration? Exit 0 when steady, 1 when moved
  (JSON on stdout).

``--capture-size`` (default ``$GUANDAN_CAPTURE_SIZE``) asks a live camera for frames of that size,
as ``guandan table run`` does (kiosk/table/cli.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    table = subparsers.add_parser(
        "table",
        help="table calibration and the table pipeline",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = table.add_subparsers(dest="table_command", metavar="VERB")
    verbs.required = True

    cal = verbs.add_parser(
        "calibrate",
        help="calibrate from a frame or a camera (four ArUco corner markers)",
        description=(
            "Find the four corner markers (DICT_4X4_50 ids 0 NW, 1 NE, 2 SE, 3 SW; print them "
            "with `guandan hardware markers`) and write the calibration JSON: the homography "
            "from image pixels to table millimetres and the seat zones N, E, S, W and centre."
        ),
    )
    _source_args(cal)
    cal.add_argument("--out", required=True, help="calibration file to write (JSON)")
    cal.add_argument(
        "--table-size",
        metavar="WxH",
        default=None,
        help="table size in mm, width (west-east) x height (north-south); default 900x900, "
        "or the previous calibration's",
    )
    cal.add_argument(
        "--marker-size",
        type=float,
        default=None,
        metavar="MM",
        help="printed black square of each marker (default 60)",
    )
    cal.add_argument(
        "--marker-offset",
        type=float,
        default=None,
        metavar="MM",
        help="distance from each table edge to the marker centre at its corner (default 50)",
    )
    cal.add_argument(
        "--centre-size",
        type=float,
        default=None,
        metavar="MM",
        help="side of the square centre zone (default 300)",
    )
    cal.add_argument(
        "--previous",
        metavar="FILE",
        help="previous calibration: lets one covered marker be estimated, keeps edited zones",
    )
    cal.add_argument(
        "--frames",
        type=int,
        default=10,
        help="with --camera: frames to average (default 10)",
    )
    cal.add_argument("--preview", metavar="PNG", help="also write the frame with the zones drawn")
    cal.set_defaults(handler=_calibrate)

    check = verbs.add_parser(
        "check",
        help="has the camera moved since calibration?",
        description="Compare the corner markers in a frame with a calibration. Prints JSON; "
        "exit 0 when the camera is steady, 1 when it (or a marker) moved or no marker is visible.",
    )
    _source_args(check)
    check.add_argument("--calibration", required=True, metavar="FILE")
    check.add_argument(
        "--threshold", type=float, default=10.0, metavar="MM", help="allowed shift (default 10)"
    )
    check.set_defaults(handler=_check)

    # `guandan table run`: the kiosk (issue 6), registered from kiosk/table/cli.py
    from kiosk.table.cli import register_run

    register_run(verbs)

    # `guandan table replay VIDEO [--calibration FILE] --out events.jsonl` (issue 5): the whole
    # pipeline on a file - camera backend, detector, tracker, referee (vision/pipeline.py)
    rep = verbs.add_parser(
        "replay",
        help="run the table pipeline on a video file and write the event log",
        description="Read a recorded (or `guandan synth video`) game: calibration from the "
        "markers, card detection, tracking, referee. Writes event JSON lines and prints each "
        "deal's plays, finishing order and levels; unreadable stretches are reported.",
    )
    rep.add_argument("video", help="video file (anything OpenCV/FFmpeg reads)")
    rep.add_argument("--out", required=True, help="events JSONL to write ('-' for stdout)")
    rep.add_argument("--calibration", metavar="FILE", help="calibration JSON (default: from video)")
    rep.add_argument("--profile", default="standard", help="rule profile (default standard)")
    rep.add_argument("--table", default="t1", help="table id stamped on the events (default t1)")
    rep.add_argument(
        "--detector",
        default="auto",
        help="auto (models/card-corners.onnx if shipped, else the video's oracle labels), "
        "model, oracle, or a path to an .onnx / .oracle.jsonl.gz",
    )
    rep.add_argument(
        "--deck",
        metavar="FILE",
        help="the table's deck design, enrolled with `guandan vision enrol` (default: none)",
    )
    rep.add_argument("--observations", metavar="FILE", help="also write the observations (JSONL)")
    rep.add_argument("--quiet", action="store_true", help="no summary on stdout")
    rep.set_defaults(handler=_replay)


def _source_args(parser: argparse.ArgumentParser) -> None:
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--image", metavar="FRAME", help="a still frame (PNG/JPEG) from the camera")
    src.add_argument(
        "--camera",
        metavar="SPEC",
        help="camera spec: file:VIDEO, device:0, picamera2, synthetic:table (hardware/camera.py)",
    )
    from kiosk.table.cli import add_capture_size

    add_capture_size(parser)


def _read_image(path: str) -> Any:
    import cv2

    p = Path(path)
    if not p.exists():
        raise ValueError(f"image {p} not found")
    if p.is_dir():
        raise ValueError(f"{p} is a directory, not an image")
    image = cv2.imread(str(p), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError(f"cannot read image {p}: not a PNG/JPEG/... that OpenCV can decode")
    return image


def _camera_frames(spec: str, count: int, args: argparse.Namespace | None = None) -> list[Any]:
    from hardware.camera import open_camera

    if count < 1:
        raise ValueError(f"--frames must be at least 1, got {count}")
    if args is not None:  # --capture-size, else $GUANDAN_CAPTURE_SIZE
        from kiosk.table.cli import capture_size_of
        from kiosk.table.sources import with_capture_size

        spec = with_capture_size(spec, capture_size_of(args, spec))
    frames = []
    with open_camera(spec) as camera:
        for frame in camera:
            frames.append(frame.image)
            if len(frames) >= count:
                break
        gaps = getattr(camera, "gaps", [])
    for gap in gaps:
        print(f"guandan table: warning: {gap}", file=sys.stderr)
    if not frames:
        raise ValueError(f"camera {spec} delivered no frames")
    return frames


def _calibrate(args: argparse.Namespace) -> int:
    from vision.table import Calibration, TableGeometry, calibrate_frames, draw_calibration

    previous = Calibration.load(args.previous) if args.previous else None
    geometry = None
    overrides = {
        k: v
        for k, v in (
            ("marker_mm", args.marker_size),
            ("marker_offset_mm", args.marker_offset),
            ("centre_mm", args.centre_size),
        )
        if v is not None
    }
    if args.table_size or overrides:
        base = previous.geometry if previous is not None else TableGeometry()
        fields = base.to_json()
        fields.update(overrides)
        if args.table_size:
            size = TableGeometry.parse_size(args.table_size)
            fields["width_mm"], fields["height_mm"] = size.width_mm, size.height_mm
        geometry = TableGeometry(**fields)
    frames = (
        [_read_image(args.image)] if args.image else _camera_frames(args.camera, args.frames, args)
    )
    calibration = calibrate_frames(frames, geometry, previous=previous)
    out = Path(args.out)
    if not out.parent.exists():
        raise ValueError(f"--out {out}: the folder {out.parent} does not exist")
    calibration.save(out)
    if args.preview:
        import cv2

        if not cv2.imwrite(args.preview, draw_calibration(frames[-1], calibration)):
            raise ValueError(f"--preview {args.preview}: cannot write (use a .png or .jpg name)")
    g = calibration.geometry
    summary = {
        "out": str(out),
        "image_size": list(calibration.image_size),
        "table_mm": [g.width_mm, g.height_mm],
        "frames": len(frames),
        "markers": {
            str(i): [round(x, 1), round(y, 1)]
            for i, (x, y) in sorted(calibration.marker_px.items())
        },
        "estimated": list(calibration.estimated),
    }
    print(json.dumps(summary))
    if calibration.estimated:
        print(
            f"guandan table: warning: marker(s) {list(calibration.estimated)} were covered and "
            "estimated from the previous calibration; uncover them and recalibrate when you can",
            file=sys.stderr,
        )
    return 0


def _check(args: argparse.Namespace) -> int:
    from vision.table import Calibration, check_camera

    calibration = Calibration.load(args.calibration)
    image = _read_image(args.image) if args.image else _camera_frames(args.camera, 1, args)[0]
    result = check_camera(image, calibration, args.threshold)
    print(
        json.dumps(
            {
                "status": result.status,
                "shift_mm": {str(k): round(v, 2) for k, v in sorted(result.shift_mm.items())},
                "message": result.message,
            },
            ensure_ascii=False,
        )
    )
    if not result.ok:
        print(f"guandan table check: {result.message}", file=sys.stderr)
        return 1
    return 0


def _replay(args: argparse.Namespace) -> int:
    from kiosk.replay import replay_command  # heavy: imported only when used

    return replay_command(args)
