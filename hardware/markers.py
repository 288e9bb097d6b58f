"""The printable sheet of table corner markers (``guandan hardware markers --out FILE``).

Four ArUco markers of ``DICT_4X4_50``, ids 0..3 for the corners NW, NE, SE, SW (seen from above,
North at the top), the same constants as ``vision/table.py`` (a test checks they agree). One A4 or
US-letter page, with a label under each marker, a cutting guide, tick marks through each marker's
centre (the centre goes ``offset_mm`` from both table edges at its corner) and a 100 mm scale bar
to check the printer did not rescale.

* PDF: written directly (vector shapes, the standard Helvetica font, no dependency), so the
  marker squares are exact at any zoom when printed at 100 %.
* PNG: rasterised at ``dpi`` with a ``pHYs`` chunk so image viewers print it at the right size.
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

__all__ = [
    "ARUCO_DICTIONARY",
    "CORNER_IDS",
    "PAGES",
    "MarkerSheetError",
    "SheetLayout",
    "layout_sheet",
    "marker_cells",
    "sheet_pdf",
    "sheet_image",
    "sheet_png",
    "write_sheet",
]

ARUCO_DICTIONARY = "DICT_4X4_50"
CORNER_IDS: dict[int, str] = {0: "NW", 1: "NE", 2: "SE", 3: "SW"}
_CORNER_WORDS = {"NW": "north-west", "NE": "north-east", "SE": "south-east", "SW": "south-west"}
#: Page name -> (width, height) in mm.
PAGES: dict[str, tuple[float, float]] = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
_MARGIN = 12.0
_PT_PER_MM = 72.0 / 25.4


class MarkerSheetError(ValueError):
    """Bad sheet options (marker too big for the page, unknown page, wrong file type)."""


@dataclass(frozen=True)
class _Rect:
    x: float
    y: float
    w: float
    h: float  # mm, origin top-left of the page, y down


@dataclass(frozen=True)
class _Line:
    x1: float
    y1: float
    x2: float
    y2: float
    width: float = 0.3
    dashed: bool = False


@dataclass(frozen=True)
class _Text:
    x: float
    y: float  # baseline
    size: float  # cap height-ish, mm
    text: str


@dataclass
class SheetLayout:
    """Everything on the page, in mm (origin top-left, y down)."""

    page: str
    width: float
    height: float
    marker_mm: float
    rects: list[_Rect] = field(default_factory=list)
    lines: list[_Line] = field(default_factory=list)
    texts: list[_Text] = field(default_factory=list)
    #: marker id -> (x, y) of its centre on the page, mm
    centres: dict[int, tuple[float, float]] = field(default_factory=dict)


def marker_cells(marker_id: int) -> NDArray[np.bool_]:
    """The marker's 6x6 cells (True = black), including the black border."""
    aruco = cv2.aruco
    dictionary = aruco.getPredefinedDictionary(getattr(aruco, ARUCO_DICTIONARY))
    img = aruco.generateImageMarker(dictionary, marker_id, 6)
    return np.asarray(img, np.uint8) < 128


def layout_sheet(page: str = "a4", marker_mm: float = 60.0, offset_mm: float = 50.0) -> SheetLayout:
    key = page.lower()
    if key not in PAGES:
        raise MarkerSheetError(f"unknown page {page!r}: use {' or '.join(PAGES)}")
    pw, ph = PAGES[key]
    col_w = (pw - 2 * _MARGIN) / 2
    quiet = marker_mm / 6
    biggest = col_w * 0.75
    if not 15.0 <= marker_mm <= biggest:
        raise MarkerSheetError(
            f"marker size {marker_mm:g} mm does not fit: use 15 to {biggest:.0f} mm for four "
            f"markers on one {key.upper()} page"
        )
    if offset_mm < marker_mm / 2:
        raise MarkerSheetError(
            f"marker offset {offset_mm:g} mm is less than half the marker size: the marker would "
            "hang over the table edge"
        )
    sheet = SheetLayout(key, pw, ph, marker_mm)
    sheet.texts.append(
        _Text(_MARGIN, _MARGIN + 5, 5.0, f"guandan-kiosk table corner markers ({ARUCO_DICTIONARY})")
    )
    notes = (
        "Print at 100% (no 'fit to page'); measure the 100 mm bar below.",
        "Stick each marker at its corner, seen from above with North at the top.",
        f"Marker centre {offset_mm:g} mm from both table edges; black square {marker_mm:g} mm.",
    )
    for i, note in enumerate(notes):
        sheet.texts.append(_Text(_MARGIN, _MARGIN + 12 + 5 * i, 3.0, note))
    top = _MARGIN + 28
    bottom = ph - _MARGIN - 22
    row_h = (bottom - top) / 2
    slots = {0: (0, 0), 1: (1, 0), 3: (0, 1), 2: (1, 1)}  # the sheet mirrors the table layout
    for mid, (col, row) in slots.items():
        cx = _MARGIN + col_w * (col + 0.5)
        cy = top + row_h * row + row_h * 0.45
        sheet.centres[mid] = (cx, cy)
        cell = marker_mm / 6
        x0, y0 = cx - marker_mm / 2, cy - marker_mm / 2
        cells = marker_cells(mid)
        for r in range(6):
            c = 0
            while c < 6:
                if cells[r, c]:
                    start = c
                    while c < 6 and cells[r, c]:
                        c += 1
                    sheet.rects.append(
                        _Rect(x0 + start * cell, y0 + r * cell, (c - start) * cell, cell)
                    )
                else:
                    c += 1
        # cutting guide around the white quiet zone
        q0, q1 = x0 - quiet, x0 + marker_mm + quiet
        r0, r1 = y0 - quiet, y0 + marker_mm + quiet
        for a, b, c2, d in ((q0, r0, q1, r0), (q1, r0, q1, r1), (q1, r1, q0, r1), (q0, r1, q0, r0)):
            sheet.lines.append(_Line(a, b, c2, d, 0.2, dashed=True))
        # centre ticks outside the quiet zone
        t = 4.0
        sheet.lines += [
            _Line(cx, r0 - t, cx, r0 - 1),
            _Line(cx, r1 + 1, cx, r1 + t),
            _Line(q0 - t, cy, q0 - 1, cy),
            _Line(q1 + 1, cy, q1 + t, cy),
        ]
        corner = CORNER_IDS[mid]
        sheet.texts.append(
            _Text(q0, r1 + t + 6, 3.5, f"id {mid}: {corner} corner ({_CORNER_WORDS[corner]})")
        )
    # scale bar
    y = ph - _MARGIN - 8
    sheet.lines.append(_Line(_MARGIN, y, _MARGIN + 100, y, 0.5))
    for i in range(11):
        tick = 3.0 if i % 5 == 0 else 1.5
        sheet.lines.append(_Line(_MARGIN + 10 * i, y, _MARGIN + 10 * i, y - tick, 0.3))
    sheet.texts.append(_Text(_MARGIN + 104, y, 3.0, "100 mm"))
    return sheet


# --------------------------------------------------------------------------------------------
# PDF


def _pdf_escape(text: str) -> str:
    if not text.isascii():
        raise MarkerSheetError("sheet text must be ASCII for the standard PDF font")
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def sheet_pdf(sheet: SheetLayout) -> bytes:
    """A one-page vector PDF of the sheet."""
    k = _PT_PER_MM
    ph = sheet.height

    def pt(v: float) -> str:
        return f"{v * k:.3f}"

    ops: list[str] = ["0 g"]
    for r in sheet.rects:
        ops.append(f"{pt(r.x)} {pt(ph - r.y - r.h)} {pt(r.w)} {pt(r.h)} re f")
    ops.append("0 G 0 J")
    for ln in sheet.lines:
        dash = "[2 2] 0 d" if ln.dashed else "[] 0 d"
        ops.append(
            f"{dash} {pt(ln.width)} w {pt(ln.x1)} {pt(ph - ln.y1)} m {pt(ln.x2)} {pt(ph - ln.y2)} "
            "l S"
        )
    for tx in sheet.texts:
        size = tx.size / 0.72  # Helvetica cap height is ~0.72 em
        ops.append(
            f"BT /F1 {pt(size)} Tf {pt(tx.x)} {pt(ph - tx.y)} Td ({_pdf_escape(tx.text)}) Tj ET"
        )
    content = zlib.compress("\n".join(ops).encode("ascii"))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {pt(sheet.width)} {pt(sheet.height)}] "
            "/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>"
        ).encode("ascii"),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        f"<< /Length {len(content)} /Filter /FlateDecode >>\nstream\n".encode("ascii")
        + content
        + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode("ascii") + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode("ascii")
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode("ascii")
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    ).encode("ascii")
    return bytes(out)


# --------------------------------------------------------------------------------------------
# PNG


def sheet_image(sheet: SheetLayout, dpi: int = 300) -> NDArray[np.uint8]:
    """The sheet rasterised (grey, white paper) at ``dpi``."""
    if not 50 <= dpi <= 1200:
        raise MarkerSheetError(f"dpi {dpi} is out of range: use 50 to 1200")
    s = dpi / 25.4
    w, h = round(sheet.width * s), round(sheet.height * s)
    img = np.full((h, w), 255, np.uint8)
    for r in sheet.rects:
        x0, y0 = round(r.x * s), round(r.y * s)
        x1, y1 = round((r.x + r.w) * s), round((r.y + r.h) * s)
        img[y0:y1, x0:x1] = 0
    for ln in sheet.lines:
        thick = max(1, round(ln.width * s))
        p1 = (round(ln.x1 * s), round(ln.y1 * s))
        p2 = (round(ln.x2 * s), round(ln.y2 * s))
        if ln.dashed:
            length = float(np.hypot(p2[0] - p1[0], p2[1] - p1[1]))
            step = 2 * 2 * s
            n = max(1, int(length // step))
            for i in range(n):
                a = i / n
                b = (i + 0.5) / n
                q1 = (round(p1[0] + (p2[0] - p1[0]) * a), round(p1[1] + (p2[1] - p1[1]) * a))
                q2 = (round(p1[0] + (p2[0] - p1[0]) * b), round(p1[1] + (p2[1] - p1[1]) * b))
                cv2.line(img, q1, q2, 0, thick)
        else:
            cv2.line(img, p1, p2, 0, thick)
    for tx in sheet.texts:
        # Hershey simplex: cap height ~ 22 px per unit scale
        scale = tx.size * s / 22.0
        room = (sheet.width - _MARGIN - tx.x) * s
        (tw, _), _ = cv2.getTextSize(tx.text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
        if tw > room:
            scale *= room / tw
        thick = max(1, round(scale * 1.6))
        cv2.putText(
            img,
            tx.text,
            (round(tx.x * s), round(tx.y * s)),
            cv2.FONT_HERSHEY_SIMPLEX,
            scale,
            0,
            thick,
            cv2.LINE_AA,
        )
    return img


def _png_with_dpi(img: NDArray[np.uint8], dpi: int) -> bytes:
    ok, buf = cv2.imencode(".png", img)
    if not ok:
        raise MarkerSheetError("could not encode the PNG")
    data = buf.tobytes()
    ppm = round(dpi / 0.0254)
    body = b"pHYs" + struct.pack(">IIB", ppm, ppm, 1)
    chunk = struct.pack(">I", 9) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    ihdr_end = 8 + 8 + 13 + 4  # signature + IHDR length/type + IHDR data + CRC
    return data[:ihdr_end] + chunk + data[ihdr_end:]


def sheet_png(sheet: SheetLayout, dpi: int = 300) -> bytes:
    return _png_with_dpi(sheet_image(sheet, dpi), dpi)


def write_sheet(
    path: str | os.PathLike[str],
    page: str = "a4",
    marker_mm: float = 60.0,
    offset_mm: float = 50.0,
    dpi: int = 300,
) -> Path:
    """Write the sheet as PDF or PNG, by the file's extension."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in (".pdf", ".png"):
        raise MarkerSheetError(
            f"{target}: the marker sheet is written as .pdf or .png, not {suffix or 'no suffix'!r}"
        )
    sheet = layout_sheet(page, marker_mm, offset_mm)
    data = sheet_pdf(sheet) if suffix == ".pdf" else sheet_png(sheet, dpi)
    if target.parent and not target.parent.exists():
        raise MarkerSheetError(f"{target}: the folder {target.parent} does not exist")
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)
    return target
