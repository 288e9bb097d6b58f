"""Headless Chromium (Debian's ``chromium``) for the page tests: the DOM after the page's scripts
ran, and screenshots. Tests that use it mark themselves with ``needs_chromium``."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (apt-get install -y chromium)"
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium(url: str, *args: str) -> str:
    """Run Chromium on ``url`` with a throw-away profile; its stdout (e.g. ``--dump-dom``)."""
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory(prefix="gd-chromium-") as profile:
        out = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args, url],
            capture_output=True,
            timeout=90,
            check=True,
        )
    return out.stdout.decode("utf-8", "replace")


def screenshot(url: str, path: Path, size: str, *extra: str) -> Any:
    """A screenshot of ``url`` at ``size`` ("W,H") as an OpenCV image (BGR or BGRA)."""
    import cv2

    chromium(url, f"--window-size={size}", f"--screenshot={path}", *extra)
    img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    assert img is not None, f"no screenshot at {path}"
    return img
