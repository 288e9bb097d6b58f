"""The printable marker sheet: PNG and PDF both carry detectable markers of the right size."""

from __future__ import annotations

import json
import re
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from hardware import markers
from hardware.markers import MarkerSheetError, layout_sheet, sheet_pdf, write_sheet
from kiosk.cli import main
from vision import table


def test_constants_agree_with_the_calibration() -> None:
    assert markers.ARUCO_DICTIONARY == table.ARUCO_DICTIONARY
    assert markers.CORNER_IDS == table.CORNER_IDS


def _png_chunks(data: bytes) -> dict[bytes, bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, pos = {}, 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        chunks[kind] = body
        pos += 12 + length
    return chunks


@pytest.mark.parametrize("page", ["a4", "letter"])
def test_png_sheet(tmp_path: Path, page: str) -> None:
    path = write_sheet(tmp_path / "m.png", page=page, dpi=200)
    data = path.read_bytes()
    phys = _png_chunks(data)[b"pHYs"]
    assert struct.unpack(">IIB", phys) == (7874, 7874, 1)  # 200 dpi in pixels per metre
    img = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
    w_mm, h_mm = markers.PAGES[page]
    assert img.shape == (round(h_mm * 200 / 25.4), round(w_mm * 200 / 25.4))
    det = table.detect_markers(img)
    assert det.visible == (0, 1, 2, 3) and det.other_ids == ()
    px_per_mm = 200 / 25.4
    for s in det.corners.values():
        assert s.side_px / px_per_mm == pytest.approx(60.0, abs=0.5)
    c = {i: s.centre for i, s in det.corners.items()}
    # laid out like the table: 0 top-left, 1 top-right, 3 bottom-left, 2 bottom-right
    assert c[0][0] < c[1][0] and c[3][0] < c[2][0] and c[0][1] < c[3][1] and c[1][1] < c[2][1]


def _pdf_objects(data: bytes) -> dict[int, bytes]:
    xref = int(re.search(rb"startxref\n(\d+)\n%%EOF", data).group(1))  # type: ignore[union-attr]
    assert data[xref : xref + 4] == b"xref"
    table_lines = data[xref:].split(b"\n")
    count = int(table_lines[1].split()[1])
    objects = {}
    for n in range(1, count):
        offset = int(table_lines[2 + n].split()[0])
        assert data[offset:].startswith(f"{n} 0 obj".encode())
        end = data.index(b"endobj", offset)
        objects[n] = data[offset:end]
    return objects


def test_pdf_sheet_is_well_formed_and_its_shapes_are_the_markers(tmp_path: Path) -> None:
    path = write_sheet(tmp_path / "m.pdf", marker_mm=50)
    data = path.read_bytes()
    assert data.startswith(b"%PDF-1.4") and data.rstrip().endswith(b"%%EOF")
    objects = _pdf_objects(data)
    assert b"/MediaBox [0 0 595.276 841.890]" in objects[3]  # A4 in points
    assert b"/BaseFont /Helvetica" in objects[4]
    stream = objects[5]
    raw = stream[stream.index(b"stream\n") + 7 : stream.rindex(b"\nendstream")]
    assert int(re.search(rb"/Length (\d+)", stream).group(1)) == len(raw)  # type: ignore[union-attr]
    content = zlib.decompress(raw).decode("ascii")
    assert "(id 2: SE corner \\(south-east\\)) Tj" in content
    # rasterise the filled rectangles ourselves and look for the markers in them
    scale = 4.0  # px per point
    img = np.full((round(841.89 * scale), round(595.276 * scale)), 255, np.uint8)
    rects = re.findall(r"([\d.]+) ([\d.]+) ([\d.]+) ([\d.]+) re f", content)
    assert rects
    for x, y, w, h in (tuple(float(v) for v in r) for r in rects):
        x0, x1 = round(x * scale), round((x + w) * scale)
        y1, y0 = round((841.89 - y) * scale), round((841.89 - y - h) * scale)
        img[y0:y1, x0:x1] = 0
    det = table.detect_markers(cv2.resize(img, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA))
    assert det.visible == (0, 1, 2, 3)
    mm_per_px = 25.4 / 72 / (scale * 0.5)
    for s in det.corners.values():
        assert s.side_px * mm_per_px == pytest.approx(50.0, abs=0.5)


def test_sheet_options_are_checked(tmp_path: Path) -> None:
    with pytest.raises(MarkerSheetError, match="does not fit: use 15 to"):
        layout_sheet(marker_mm=120)
    with pytest.raises(MarkerSheetError, match="unknown page 'a3'"):
        layout_sheet(page="a3")
    with pytest.raises(MarkerSheetError, match="hang over"):
        layout_sheet(marker_mm=60, offset_mm=20)
    with pytest.raises(MarkerSheetError, match=r"\.pdf or \.png, not '\.svg'"):
        write_sheet(tmp_path / "m.svg")
    with pytest.raises(MarkerSheetError, match="does not exist"):
        write_sheet(tmp_path / "no" / "m.pdf")
    with pytest.raises(MarkerSheetError, match="dpi"):
        write_sheet(tmp_path / "m.png", dpi=10)


def test_offset_is_printed_on_the_sheet() -> None:
    pdf = sheet_pdf(layout_sheet(offset_mm=70))
    objects = _pdf_objects(pdf)
    raw = objects[5][objects[5].index(b"stream\n") + 7 : objects[5].rindex(b"\nendstream")]
    assert "Marker centre 70 mm from both table edges" in zlib.decompress(raw).decode()


def test_cli_markers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "markers.pdf"
    assert main(["hardware", "markers", "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary == {"out": str(out), "bytes": out.stat().st_size}
    assert out.read_bytes().startswith(b"%PDF")
    png = tmp_path / "markers.png"
    assert main(["hardware", "markers", "--out", str(png), "--dpi", "100"]) == 0
    assert table.detect_markers(cv2.imread(str(png))).visible == (0, 1, 2, 3)
    capsys.readouterr()
    assert main(["hardware", "markers", "--out", str(tmp_path / "m.jpg")]) == 2
    err = capsys.readouterr().err
    assert "written as .pdf or .png" in err and err.count("\n") == 1
