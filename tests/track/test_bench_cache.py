"""bench/table_accuracy.py --det-cache: answers kept by the exact pixels, reloaded from disk."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parents[2] / "bench" / "table_accuracy.py"


def _bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("table_accuracy_bench", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


class Counting:
    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def detect(self, image: np.ndarray) -> list[tuple[int, int]]:
        self.calls += 1
        return [(int(image.sum()), self.calls)]


def test_answers_are_kept_by_their_pixels_and_survive_a_reload(tmp_path: Path) -> None:
    bench = _bench()
    det = Counting()
    path = tmp_path / "g1.dets-x.pkl"
    cached = bench.CachedDetector(det, path)
    a = np.zeros((4, 6, 3), np.uint8)
    b = a.copy()
    b[1, 2, 0] = 1  # one pixel differs: another answer
    first = cached.detect(a)
    assert cached.detect(a.copy()) == first and det.calls == 1
    assert cached.detect(b) != first and det.calls == 2
    assert cached.detect(a.reshape(6, 4, 3)) != first  # same bytes, another shape
    assert cached.name == "counting"  # the rest is the detector's own
    cached.save()
    again = bench.CachedDetector(Counting(), path)
    assert again.detect(a) == first and (again.hits, again.misses) == (1, 0)


def test_the_cache_tag_follows_the_detector_file(tmp_path: Path) -> None:
    """Another corner detector file in the same place (an int8 copy) makes another cache; the
    same bytes elsewhere, or another look at the same file, the same one."""
    from types import SimpleNamespace

    bench = _bench()
    model = tmp_path / "card-corners.onnx"
    model.write_bytes(b"float model")
    det = SimpleNamespace(classifier_id="abc", model_path=model)
    tag = bench.cache_tag(det, None)
    assert bench.cache_tag(det, None) == tag
    elsewhere = tmp_path / "copy.onnx"
    elsewhere.write_bytes(b"float model")
    assert bench.cache_tag(SimpleNamespace(classifier_id="abc", model_path=elsewhere), None) == tag
    model.write_bytes(b"int8 model")
    assert bench.cache_tag(det, None) != tag
    assert bench.cache_tag(SimpleNamespace(classifier_id="abd", model_path=elsewhere), None) != tag


def test_a_kept_render_is_named_by_all_that_shapes_it(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Another deck or deal count for the same seed renders beside a kept game, never over it
    (a game's deck comes from its place in the run: ``--seed 9904 --games 1`` is tigullio while
    game 9904 of ``--seed 9901`` is paris); the same arguments reuse it."""
    import vision.synth.video as video

    bench = _bench()
    made: list[tuple[int, str, int]] = []

    def render_game(prof, seed, deals, out, deck, mischief):  # type: ignore[no-untyped-def]
        made.append((seed, deck, deals))
        out.write_bytes(deck.encode())
        return (seed, deck, deals)

    monkeypatch.setattr(video, "render_game", render_game)
    prof = type("P", (), {"name": "standard"})()
    paris, info = bench.kept_render(prof, 9904, 1, "paris", 0.0, tmp_path)
    assert info == (9904, "paris", 1)
    tig, _ = bench.kept_render(prof, 9904, 1, "tigullio", 0.0, tmp_path)
    two, _ = bench.kept_render(prof, 9904, 2, "paris", 0.0, tmp_path)
    assert len({paris, tig, two}) == 3 and paris.read_bytes() == b"paris"
    again, info = bench.kept_render(prof, 9904, 1, "paris", 0.0, tmp_path)
    assert again == paris and info == (9904, "paris", 1) and len(made) == 3


def test_a_suit_within_its_colour_is_the_only_error_the_suit_figure_forgives() -> None:
    """plays_exact_but_suit_pct counts a play right when it differs from the truth only by a
    club for a spade or a heart for a diamond (the naming of an unseen design); another rank, a
    colour, a seat or a card more is still wrong."""
    bench = _bench()
    c = bench._by_colour
    assert c(("N", ("S9", "S9"))) == c(("N", ("C9", "S9")))
    assert c(("S", ("HK", "DK", "SB"))) == c(("S", ("DK", "DK", "SB")))
    assert c(("N", ("S9",))) != c(("N", ("H9",)))  # another colour
    assert c(("N", ("S9",))) != c(("N", ("S8",)))  # another rank
    assert c(("N", ("S9",))) != c(("E", ("S9",)))  # another seat
    assert c(("N", ("S9",))) != c(("N", ("S9", "C9")))  # a card more
    assert c(("N", ("SB",))) != c(("N", ("HR",)))  # the jokers are no suits
