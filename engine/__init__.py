"""guandan-kiosk rules engine: pure Python, stdlib only, no I/O.

Public API (CONTRACT.md): ``parse_cards``, ``classify``, ``beats``, ``legal_moves``,
``load_profile``, ``MatchState``, ``CardError``, ``ProfileError``.
"""

from engine.cards import Card, CardError, parse_card, parse_cards, parse_level

__all__ = ["Card", "CardError", "parse_card", "parse_cards", "parse_level"]
