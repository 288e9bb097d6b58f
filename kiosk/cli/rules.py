"""``guandan rules classify`` and ``guandan rules moves`` (CONTRACT.md): the engine on the CLI.

Both print a JSON list of combos (``Combo.to_json()``). ``--level none`` reads a deal without a
level (a joker cut, 000 篇6: no level rank, no wilds; combos carry ``"level": null``). Bad cards,
levels or profiles raise ``CardError``/``ProfileError`` (ValueErrors): the dispatcher prints one
line and exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.combos import ComboRules

__all__ = ["register"]


def register(subs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rp = subs.add_parser(
        "rules",
        help="classify cards and list legal plays",
        description="The rules engine on the command line: every reading of a set of cards, "
        "or every legal play of a hand. Cards are written S3 HT SB HR (see CONTRACT.md).",
    )
    verbs = rp.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    cp = verbs.add_parser(
        "classify",
        help="every reading of CARDS as a combo, strongest first ([] = not a combo)",
        description="Prints a JSON list of every reading of CARDS at the level, strongest first; "
        "[] when the cards are not a combo.",
    )
    cp.add_argument("--level", required=True, help=_LEVEL_HELP)
    cp.add_argument("cards", nargs="+", metavar="CARDS", help="cards, e.g. H2 S4 S5 S6 S7")
    cp.add_argument(
        "--as",
        dest="wilds_as",
        nargs="+",
        metavar="CARD",
        help="a declared reading: what each wild stands for, in order (S8, or a rank like 8); "
        "prints that one reading, or fails naming the readings there are",
    )
    _profile_option(cp)
    cp.set_defaults(handler=_classify)

    mp = verbs.add_parser(
        "moves",
        help="every legal play of a hand (as a lead, or against --trick)",
        description="Prints a JSON list of every distinct legal play of the hand: a lead, or "
        "the plays that beat --trick (read as its strongest reading).",
    )
    mp.add_argument("--level", required=True, help=_LEVEL_HELP)
    mp.add_argument("--hand", required=True, nargs="+", metavar="CARDS", help="the hand's cards")
    mp.add_argument("--trick", nargs="+", metavar="CARDS", help="the play to beat (none: a lead)")
    _profile_option(mp)
    mp.set_defaults(handler=_moves)


_LEVEL_HELP = "level rank 2..A (10 or T for ten); none: no level, no wilds (a joker cut)"


def _level(text: str) -> str | None:
    """The engine's level: None for ``none`` (a deal without a level), else the text as given."""
    return None if text.strip().lower() == "none" else text


def _profile_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--profile",
        help="rule profile name or .toml path, for its combo options (full house with a joker "
        "pair, most cards in one play); default: the standard combo rules",
    )


def _rules(args: argparse.Namespace) -> ComboRules | None:
    if not args.profile:
        return None
    import engine

    rules: ComboRules = engine.load_profile(args.profile).combo_rules
    return rules


def _print(combos: list[object]) -> None:
    json.dump([c.to_json() for c in combos], sys.stdout, ensure_ascii=False)  # type: ignore[attr-defined]
    sys.stdout.write("\n")


def _classify(args: argparse.Namespace) -> int:
    from engine.combos import classify, declare

    cards = " ".join(args.cards)
    if args.wilds_as:
        level = _level(args.level)
        _print([declare(cards, level, " ".join(args.wilds_as), rules=_rules(args))])
    else:
        _print(list(classify(cards, _level(args.level), rules=_rules(args))))
    return 0


def _moves(args: argparse.Namespace) -> int:
    from engine.moves import legal_moves

    trick = " ".join(args.trick) if args.trick else None
    level = _level(args.level)
    _print(list(legal_moves(" ".join(args.hand), trick, level, rules=_rules(args))))
    return 0
