"""Frame sizes given as text (``WIDTHxHEIGHT``): the camera's capture size, a render's size.

One parser for every place a frame size is typed (``guandan synth video --size``, ``guandan
table run --capture-size`` and ``$GUANDAN_CAPTURE_SIZE``, ``bench/table_accuracy.py --size``), so
a wrong one gets the same clear message everywhere. Imports nothing heavy.
"""

from __future__ import annotations

__all__ = ["FrameSizeError", "parse_frame_size", "MIN_SIZE", "MAX_SIZE", "SIZES"]

#: the smallest and largest frame accepted (width, height): a table's cards are unreadable
#: below the one, and no camera we plan for films above the other
MIN_SIZE = (160, 120)
MAX_SIZE = (4096, 4096)
#: sizes worth knowing by name: the kiosk's default, the Raspberry Pi Camera Module 3's
#: 2304x1296 (full view, 30+ frames/s) and the HQ camera's 2028x1520
SIZES = ("1280x720", "2304x1296", "2028x1520")


class FrameSizeError(ValueError):
    """A frame size that is not ``WIDTHxHEIGHT`` in the range accepted."""


def parse_frame_size(text: str, option: str = "--size") -> tuple[int, int]:
    """``"2304x1296"`` -> ``(2304, 1296)`` (``X`` and ``×`` too, spaces ignored). A bad text
    raises :class:`FrameSizeError` naming ``option`` and saying what is expected."""
    raw = str(text).strip()
    parts = raw.lower().replace("×", "x").replace(" ", "").split("x")
    try:
        if len(parts) != 2:
            raise ValueError
        w, h = (int(p, 10) for p in parts)
    except ValueError:
        raise FrameSizeError(
            f"{option} {raw!r} is not WIDTHxHEIGHT in pixels, e.g. 1280x720 or 2304x1296"
        ) from None
    if not (MIN_SIZE[0] <= w <= MAX_SIZE[0] and MIN_SIZE[1] <= h <= MAX_SIZE[1]):
        raise FrameSizeError(
            f"{option} {raw!r}: width {MIN_SIZE[0]}-{MAX_SIZE[0]} and height "
            f"{MIN_SIZE[1]}-{MAX_SIZE[1]} pixels, e.g. 1280x720 or 2304x1296"
        )
    return w, h
