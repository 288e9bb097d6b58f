"""``guandan hardware ...``: marker sheet, camera and button checks.

* ``guandan hardware markers --out markers.pdf|markers.png [--page a4|letter]
  [--marker-size MM] [--marker-offset MM] [--dpi N]``
* ``guandan hardware camera [--camera SPEC] [--frames N] [--save DIR]``: read frames from a
  camera backend and print one JSON line (size, fps, frames read, unreadable stretches).
* ``guandan hardware buttons [--buttons SPEC] [--seconds S]``: print seat button presses as JSON
  lines (check the wiring on the Pi).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    hw = subparsers.add_parser(
        "hardware",
        help="marker sheet, camera and button checks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = hw.add_subparsers(dest="hardware_command", metavar="VERB")
    verbs.required = True

    markers = verbs.add_parser(
        "markers",
        help="write the printable corner-marker sheet (PDF or PNG)",
        description="Four ArUco markers (DICT_4X4_50, ids 0 NW, 1 NE, 2 SE, 3 SW) on one page.",
    )
    markers.add_argument("--out", required=True, help="markers.pdf or markers.png")
    markers.add_argument("--page", default="a4", choices=["a4", "letter"])
    markers.add_argument("--marker-size", type=float, default=60.0, metavar="MM")
    markers.add_argument(
        "--marker-offset",
        type=float,
        default=50.0,
        metavar="MM",
        help="marker centre to table edges, printed as a reminder (default 50)",
    )
    markers.add_argument("--dpi", type=int, default=300, help="PNG resolution (default 300)")
    markers.set_defaults(handler=_markers)

    camera = verbs.add_parser(
        "camera",
        help="read frames from a camera backend and report",
        description="Specs: file:VIDEO, device:0, picamera2, synthetic[:table] "
        "(default $GUANDAN_CAMERA or synthetic).",
    )
    camera.add_argument("--camera", default=None, metavar="SPEC")
    camera.add_argument("--frames", type=int, default=30, help="frames to read (0 = to the end)")
    camera.add_argument("--save", metavar="DIR", help="save the first and last frame as PNG here")
    camera.set_defaults(handler=_camera)

    buttons = verbs.add_parser(
        "buttons",
        help="print seat pass-button presses",
        description="Specs: gpiozero[:N=17,E=27,S=22,W=23] or mock (default $GUANDAN_BUTTONS).",
    )
    buttons.add_argument("--buttons", default=None, metavar="SPEC")
    buttons.add_argument("--seconds", type=float, default=30.0)
    buttons.set_defaults(handler=_buttons)


def _markers(args: argparse.Namespace) -> int:
    from hardware.markers import write_sheet

    path = write_sheet(args.out, args.page, args.marker_size, args.marker_offset, args.dpi)
    print(json.dumps({"out": str(path), "bytes": path.stat().st_size}))
    return 0


def _camera(args: argparse.Namespace) -> int:
    import cv2

    from hardware.camera import open_camera

    if args.frames < 0:
        raise ValueError(f"--frames must be >= 0, got {args.frames}")
    save = Path(args.save) if args.save else None
    if save is not None and not save.is_dir():
        raise ValueError(f"--save {save}: not an existing folder")
    started = time.perf_counter()
    first = last = None
    count = 0
    with open_camera(args.camera) as cam:
        for frame in cam:
            if first is None:
                first = frame
            last = frame
            count += 1
            if args.frames and count >= args.frames:
                break
        gaps = list(getattr(cam, "gaps", []))
        summary: dict[str, Any] = {
            "camera": cam.spec,
            "size": list(cam.size),
            "fps": round(cam.fps, 3),
            "frames": count,
            "first_t": round(first.t, 3) if first else None,
            "last_t": round(last.t, 3) if last else None,
            "read_fps": round(count / max(time.perf_counter() - started, 1e-9), 1),
            "gaps": [g.to_json() for g in gaps],
        }
    if save is not None and first is not None and last is not None:
        cv2.imwrite(str(save / "first.png"), first.image)
        cv2.imwrite(str(save / "last.png"), last.image)
    print(json.dumps(summary))
    for gap in gaps:
        print(f"guandan hardware camera: warning: {gap}", file=sys.stderr)
    if count == 0:
        print("guandan hardware camera: the camera delivered no frames", file=sys.stderr)
        return 1
    return 0


def _buttons(args: argparse.Namespace) -> int:
    from hardware.buttons import open_buttons

    with open_buttons(args.buttons) as buttons:
        print(f"listening to {buttons.spec} for {args.seconds:g} s", file=sys.stderr)
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            for press in buttons.poll():
                print(json.dumps({"seat": press.seat, "t": round(press.t, 3)}), flush=True)
            time.sleep(0.02)
    return 0
