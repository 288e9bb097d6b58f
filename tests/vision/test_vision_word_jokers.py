"""Jokers that print a word, not an index (issue 44): the renderer's ``proc-serif-wordjokers``
deck prints JOKER down each corner, one letter under the other (the Western poker deck's joker:
its J is no jack), over a jester, the small joker in black, the big one in red. Such jokers are
read by their whole face; a face found on a card seen by both its corner indices is that card,
not a joker lying on it (game 47702: the big joker found on a black king's face at 0.47)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from vision.synth.decks import NO_INDEX

DECK = "proc-serif-wordjokers"
pytest.importorskip("PIL")


def test_the_word_joker_deck_prints_the_word_in_both_corners(tmp_path: Path) -> None:
    from vision.synth.decks import DeckUnavailable, ensure_deck, known_decks

    try:
        deck = ensure_deck(DECK, tmp_path)
    except DeckUnavailable as exc:
        pytest.skip(str(exc))
    assert DECK in known_decks() and NO_INDEX[DECK] == "BR"
    assert not deck.has_index("SB") and not deck.has_index("HR") and deck.has_index("SJ")
    assert json.loads((deck.path / "deck.json").read_text())["jokers"] == "word"
    for card, red in (("SB", False), ("HR", True)):
        face = deck.image(card)
        h, w = face.shape[:2]
        strip = face[: int(h * 0.42), : int(w * 0.22), :3].astype(int)
        ink = np.abs(strip - np.median(face[:, :, :3].reshape(-1, 3), axis=0)).sum(axis=2) > 150
        assert ink.mean() > 0.04, card  # five letters down the corner
        b, g, r = (strip[ink][:, k].mean() for k in range(3))
        assert (r > b + 80) == red, (card, b, g, r)
        # the same word, turned, in the opposite corner (the card reads either way up)
        turned = face[h - int(h * 0.42) :, w - int(w * 0.22) :, :3][::-1, ::-1]
        assert cv2.absdiff(turned, face[: int(h * 0.42), : int(w * 0.22), :3]).mean() < 12
    # its number and court cards are proc-serif's
    plain = ensure_deck("proc-serif", tmp_path)
    assert cv2.absdiff(plain.image("SJ"), deck.image("SJ")).mean() < 1.0


def test_a_face_on_a_card_seen_by_both_corners_is_that_card() -> None:
    """``TablePipeline._faces`` drops a face found whole within ``SAME_CARD_MM`` of a card's
    middle that both its corner indices show, turned as that card: the word jokers' HR found on
    a black king's face (game 47702, 3 mm from the king's middle) counted the king twice. A
    card laid across another at its middle (its indices show) or beside it still counts."""
    from vision.pipeline import SAME_CARD_DEG, SAME_CARD_MM, _same_card

    king = ((542.0, 688.0), 30.0)  # the card seen by both corners: middle (mm), angle (degrees)

    def face(x: float, y: float, angle: float) -> SimpleNamespace:
        return SimpleNamespace(centre_mm=(x, y), angle=angle)

    assert _same_card(face(542.0, 685.0, 31.0), *king)
    assert _same_card(face(542.0, 685.0, 30.0 + 180.0 - SAME_CARD_DEG / 2), *king)  # upside down
    assert not _same_card(face(542.0, 685.0, 120.0), *king)  # laid across it
    assert not _same_card(face(542.0 + SAME_CARD_MM + 1.0, 688.0, 30.0), *king)  # beside it
