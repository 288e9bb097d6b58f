"""Camera plugins named in $GUANDAN_CAMERA_PLUGINS register their backends when first needed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hardware import camera
from hardware.camera import BACKENDS, PLUGINS_VAR, CameraError, open_camera, parse_spec

PLUGIN = """
from hardware.camera import SyntheticCamera, register_backend

def _open(spec, arg, opts, **kwargs):
    frames = opts.get_int("frames")
    opts.done()
    return SyntheticCamera("bars", frames=frames, size=(64, 48))

register_backend("netcam", _open)
"""


def test_a_plugin_named_in_the_environment_adds_a_backend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_netcam_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(camera, "_PLUGINS_LOADED", set())
    with pytest.raises(CameraError, match="unknown camera 'netcam:1'"):
        parse_spec("netcam:1")
    monkeypatch.setenv(PLUGINS_VAR, " my_netcam_plugin , ")
    try:
        assert parse_spec("netcam:1?frames=2") == ("netcam", "1", {"frames": "2"})
        with open_camera("netcam:1?frames=2") as cam:
            assert len(list(cam)) == 2
        assert camera.load_plugins() == []  # imported once
    finally:
        BACKENDS.pop("netcam", None)
        sys.modules.pop("my_netcam_plugin", None)


def test_a_plugin_that_cannot_be_imported_is_a_camera_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(camera, "_PLUGINS_LOADED", set())
    monkeypatch.setenv(PLUGINS_VAR, "no_such_camera_plugin_xyz")
    with pytest.raises(CameraError, match=f"'no_such_camera_plugin_xyz' .*{PLUGINS_VAR}"):
        open_camera("synthetic?frames=1")
