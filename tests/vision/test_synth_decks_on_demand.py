"""No silent toy deck (issue 44): a named deck is rendered on first use where this machine can
(an aisleriot sheet by cairosvg or, in a runtime-only install, Debian's rsvg-convert), else the
renderer stops with an error naming the deck, what is missing and what to install; no other deck
is used instead, and ``cv-plain`` only when asked for by name."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from kiosk.cli import main
from vision.synth import decks
from vision.synth.decks import CARD_NAMES, DeckUnavailable, UnknownDeck, ensure_deck
from vision.synth.video import load_faces

TIGULLIO = decks.AISLERIOT_DIR / "tigullio.svgz"
needs_sheet = pytest.mark.skipif(
    not TIGULLIO.exists(), reason=f"{TIGULLIO} missing: apt-get install gnome-cards-data"
)


@pytest.fixture
def no_cairosvg(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a runtime-only install (no train extra): ``import cairosvg`` fails."""
    monkeypatch.setitem(sys.modules, "cairosvg", None)


@pytest.fixture
def no_rsvg(monkeypatch: pytest.MonkeyPatch) -> None:
    real = shutil.which
    monkeypatch.setattr(
        decks.shutil, "which", lambda cmd, *a, **k: None if cmd == "rsvg-convert" else real(cmd)
    )


@needs_sheet
@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="rsvg-convert missing")
def test_a_runtime_install_renders_the_named_deck_with_rsvg_convert(
    tmp_path: Path, no_cairosvg: None
) -> None:
    assert decks.sheet_renderer() == "rsvg-convert"
    deck = ensure_deck("tigullio", tmp_path)
    assert deck.name == "tigullio" and deck.cards == CARD_NAMES
    assert sorted(p.stem for p in (tmp_path / "tigullio").glob("*.png")) == sorted(CARD_NAMES)
    x1, y1, x2, y2 = deck.index_box  # the corner index measured from the ink, as cairosvg's
    assert 0.0 < x1 < 0.1 and 0.0 < y1 < 0.1 and 0.12 < x2 < 0.3 and 0.15 < y2 < 0.35
    assert [p.name for p in tmp_path.iterdir()] == ["tigullio"]  # no staging folder left
    faces = load_faces("tigullio", tmp_path)
    assert faces.name == "tigullio" and set(faces.images) == set(CARD_NAMES)


@needs_sheet
def test_without_an_svg_renderer_it_says_what_to_install_and_uses_no_other_deck(
    tmp_path: Path, no_cairosvg: None, no_rsvg: None
) -> None:
    with pytest.raises(DeckUnavailable) as err:
        load_faces("tigullio", tmp_path)
    said = str(err.value)
    assert "'tigullio'" in said and "tigullio.svgz" in said
    assert "pip install cairosvg" in said and "apt-get install librsvg2-bin" in said
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_a_missing_sheet_asks_for_gnome_cards_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(decks, "AISLERIOT_DIR", tmp_path / "no-aisleriot")
    with pytest.raises(DeckUnavailable, match="'plastic'.*apt-get install gnome-cards-data"):
        ensure_deck("plastic", tmp_path / "decks")


def test_a_drawn_deck_without_pillow_asks_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(DeckUnavailable, match="'proc-serif'.*pip install pillow"):
        load_faces("proc-serif", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_deck_is_bad_input_and_cv_plain_only_by_name(tmp_path: Path) -> None:
    with pytest.raises(UnknownDeck, match="'tigulio': no such design.*tigullio"):
        load_faces("tigulio", tmp_path)
    assert isinstance(UnknownDeck("x"), ValueError)
    assert load_faces("cv-plain", tmp_path).name == "cv-plain"


def test_a_deck_without_jokers_cannot_film_a_game(tmp_path: Path) -> None:
    (tmp_path / "kde-penguins").mkdir()
    meta = {"name": "kde-penguins", "index_box": [0, 0, 0.2, 0.3], "missing": ["SB", "HR"]}
    (tmp_path / "kde-penguins" / "deck.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="'kde-penguins' has no SB HR"):
        load_faces("kde-penguins", tmp_path)


@needs_sheet
def test_an_interrupted_render_is_replaced_not_read(tmp_path: Path) -> None:
    if shutil.which("rsvg-convert") is None:
        pytest.importorskip("cairosvg")
    half = tmp_path / "tigullio"
    half.mkdir()
    (half / "S2.png").write_bytes(b"")  # an old render killed before its deck.json
    deck = ensure_deck("tigullio", tmp_path)
    assert (half / "deck.json").exists() and deck.image("S2").shape[0] > 100


@needs_sheet
def test_synth_video_cli_stops_with_what_to_install(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    no_cairosvg: None,
    no_rsvg: None,
) -> None:
    """The issue's case: no --deck, nothing rendered, no way to render tigullio here. It used to
    fall back (one warning line) to proc-serif and then to cv-plain."""
    monkeypatch.setenv("GUANDAN_DECKS_DIR", str(tmp_path / "decks"))
    out = tmp_path / "g.mp4"
    assert main(["synth", "video", "--seed", "918273", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "deck 'tigullio'" in err and "librsvg2-bin" in err, err
    assert "cv-plain" not in err and "proc-serif" not in err
    assert not out.exists() and not (tmp_path / "g.mp4.truth.jsonl").exists()
    # a name that is no design: bad input (exit 2), the known names listed
    assert main(["synth", "video", "--seed", "1", "--out", str(out), "--deck", "tigulio"]) == 2
    assert "no such design" in capsys.readouterr().err
