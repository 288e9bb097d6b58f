"""guandan-kiosk rules engine: pure Python, stdlib only, no I/O.

Public API (CONTRACT.md): ``parse_cards``, ``classify``, ``beats``, ``legal_moves``,
``load_profile``, ``MatchState``, ``CardError``, ``ProfileError``.
"""

from engine.cards import Card, CardError, parse_card, parse_cards, parse_level
from engine.combos import KINDS, Combo, ComboRules, beats, classify, declare
from engine.deal import DealState, TableState, fold
from engine.events import Event, EventError, parse_event
from engine.match import MatchState
from engine.moves import legal_moves
from engine.observations import Observation, ObservationError, parse_observation
from engine.profiles import Profile, ProfileError, load_profile
from engine.referee import Referee
from engine.sim import simulate

__all__ = ["Card", "CardError", "parse_card", "parse_cards", "parse_level"]
__all__ += ["MatchState", "Profile", "ProfileError", "load_profile"]
__all__ += ["KINDS", "Combo", "ComboRules", "beats", "classify", "declare", "legal_moves"]
__all__ += ["DealState", "TableState", "fold", "Event", "EventError", "parse_event"]
__all__ += ["Observation", "ObservationError", "parse_observation", "Referee", "simulate"]
