"""Rule profiles: every rule option of RULES.md as data, read from TOML files.

A profile is a frozen :class:`Profile` built from a TOML document. The named profiles of
RULES.md ship as package data in ``engine/profiles/<name>.toml``; an organiser can write their
own file (``extends = "huaian"`` inherits a named profile, or a path relative to the file) and
load it by path. ``engine/profiles/README.md`` documents every key.

Reading a profile file is the engine's only I/O and happens in :func:`load_profile` alone;
:func:`profile_from_toml` and :func:`profile_from_dict` only parse and validate. Every problem
raises :class:`ProfileError` (a ``ValueError``) naming the dotted key, what is wrong and what
values are allowed.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from engine.combos import ComboRules

__all__ = [
    "ProfileError",
    "Profile",
    "PlayRules",
    "ComboOptions",
    "TributeRules",
    "PromotionRules",
    "PassARules",
    "StreakBonus",
    "DealRules",
    "TimeRules",
    "MatchRules",
    "ReportRules",
    "SlowPlayRules",
    "FoulRules",
    "PROMOTION_TABLES",
    "load_profile",
    "list_profiles",
    "profile_from_toml",
    "profile_from_dict",
    "describe_profile",
]


class ProfileError(ValueError):
    """A profile that cannot be used; the message names the profile, the key and why."""


#: Levels gained by the winning team, by where the winner's partner finished (2nd, 3rd, 4th).
#: RULES.md "Promotion": 123 most texts; 246 000 篇1; 421 002 细则; 531 002 第五篇 / 004 篇七.
PROMOTION_TABLES: Final[Mapping[str, tuple[int, int, int]]] = {
    "123": (3, 2, 1),
    "246": (6, 4, 2),
    "421": (4, 2, 1),
    "531": (5, 3, 1),
}

_LEVEL_ALIASES: Final = {"10": "T", "t": "T", "j": "J", "q": "Q", "k": "K", "a": "A"}
_LEVELS: Final = "23456789TJQKA"


# --------------------------------------------------------------------------- sections
@dataclass(frozen=True, slots=True)
class PlayRules:
    """Turn order. ``counterclockwise`` is S -> E -> N -> W (下家 order, DESIGN.md)."""

    direction: str = "counterclockwise"

    @property
    def seat_order(self) -> tuple[str, str, str, str]:
        if self.direction == "clockwise":
            return ("S", "W", "N", "E")
        return ("S", "E", "N", "W")

    def next_seat(self, seat: str) -> str:
        order = self.seat_order
        if seat not in order:
            raise ValueError(f"unknown seat {seat!r}: seats are N, E, S, W")
        return order[(order.index(seat) + 1) % 4]


@dataclass(frozen=True, slots=True)
class ComboOptions:
    """Combo options: full house with a joker pair (texts silent; default on), card limit."""

    full_house_joker_pair: bool = True
    #: at most this many cards in one play (000 篇1: 6); None = no limit (``0`` in TOML).
    max_cards_per_play: int | None = None


@dataclass(frozen=True, slots=True)
class TributeRules:
    """Tribute (进贡), return (还贡) and anti-tribute (抗贡)."""

    enabled: bool = True
    #: equal double tribute: clockwise (002), winner_chooses (002 第一篇, 004), fixed (001).
    double_tie: str = "clockwise"
    #: max_ten (000, 002, 004), any (001), max_ten_to_partner (002 细则),
    #: max_ten_not_level (national 2022: <= 10 and not a level card).
    return_limit: str = "max_ten"
    #: when no card meets the limit: smallest card (national 2022), or none (limit only).
    return_fallback: str = "smallest"
    anti_tribute: bool = True
    #: who leads when there is no tribute (disabled or anti-tribute): previous 上游 (000 篇6).
    no_tribute_leader: str = "previous_first"
    #: returns placed face down and shown together (000 篇3 双贡, national 2022).
    return_face_down: bool = False
    #: a wrong tribute found later: flag a foul, or void the hand (treated as last; national).
    wrong_tribute: str = "foul"


@dataclass(frozen=True, slots=True)
class PromotionRules:
    """Promotion table and what happens beyond A (000 篇3)."""

    table: str = "123"
    overflow_penalises: bool = False
    #: levels taken off the opponents when passing A (000 篇3: 双下 3, 单下 2); only
    #: applied when ``overflow_penalises`` is on.
    pass_a_penalty_double_down: int = 0
    pass_a_penalty_single_down: int = 0

    @property
    def steps(self) -> tuple[int, int, int] | None:
        """Levels gained for partner 2nd, 3rd, 4th; None for ``none`` (deal points)."""
        return PROMOTION_TABLES.get(self.table)


@dataclass(frozen=True, slots=True)
class PassARules:
    """Passing A (过A) and failing it."""

    condition: str = "partner_not_last"
    #: failed attempts at A before the reset (3 in 000, 001).
    attempts: int = 3
    #: level the team drops to after ``attempts`` failures: 2, J, T (10), or never.
    reset_to: str = "2"


@dataclass(frozen=True, slots=True)
class StreakBonus:
    """000 篇7: a player first in three deals in a row gains the team one extra level."""

    enabled: bool = False
    deals: int = 3
    levels: int = 1
    #: ``player``: the same seat first each time (000 篇7 "一个人"); ``team``: either partner.
    by: str = "player"


@dataclass(frozen=True, slots=True)
class DealRules:
    """How the level of each deal is set, deal points and fixed deal counts."""

    #: promotion (level of the previous deal's winner), fixed, random (cut each deal, 000 篇6).
    level: str = "promotion"
    fixed_level: str = "2"
    #: deal points for the winners by partner place 2nd/3rd/4th: "321" (003, 000 篇6) or "none".
    points: str = "none"
    #: fixed number of deals in a match (6 in 003, 8 in 000 篇6); 0 = not fixed.
    count: int = 0
    #: points tied after ``count`` deals: extra_deal (000 篇6 "加赛一局") or draw.
    tie: str = "extra_deal"

    @property
    def point_table(self) -> tuple[int, int, int] | None:
        return (3, 2, 1) if self.points == "321" else None


@dataclass(frozen=True, slots=True)
class TimeRules:
    """Time-limited matches: finish the deal, higher level wins, then the tie rule."""

    #: 0 = no time limit.
    limit_minutes: int = 0
    #: reached_first (000 篇1), last_deal_winner (002 第五篇), extra_deal (004 篇二),
    #: draw (002 细则).
    tie: str = "reached_first"


@dataclass(frozen=True, slots=True)
class MatchRules:
    """Match format and match points (002 细则 W2 D1 L0; national W3 D2 L1)."""

    best_of: int = 1
    win_points: int = 2
    draw_points: int = 1
    loss_points: int = 0
    no_show_points: int = 0
    bye_points: int = 2


@dataclass(frozen=True, slots=True)
class ReportRules:
    """Card-count reporting (报牌): 6 (002), 7 (000), 10 (002 细则; national once at 10)."""

    #: 0 = no reporting.
    card_count: int = 6
    #: report only once when reaching the threshold (national) instead of on every change.
    once: bool = False


@dataclass(frozen=True, slots=True)
class SlowPlayRules:
    """Time allowed to play (002 第一篇: 30 s; 30-45 s warning; 15 s after it a foul)."""

    play_seconds: int = 30
    #: first play of a deal (000 篇3: 40 s, later plays 20 s).
    first_play_seconds: int = 30
    #: False: over ``play_seconds`` is a foul at once (002 细则 "直接記犯規").
    warning: bool = True
    #: a play later than play_seconds but within this gets a warning.
    warning_seconds: int = 45
    #: after a warning, a foul when the seat still has not played within this.
    grace_seconds: int = 15
    #: tribute and return (002: 40 s).
    tribute_seconds: int = 40


@dataclass(frozen=True, slots=True)
class FoulRules:
    """Fouls and the three-foul penalty (002 第一篇 第3條, 002 细则 十二)."""

    #: fouls by one pair in a round that lose it.
    limit: int = 3
    #: match_lost: the pair loses the round (match); deal_lost: the current deal is scored as a
    #: win of ``forfeit_levels`` for the opponents and play goes on.
    penalty: str = "match_lost"
    #: levels credited to the opponents (002 第一篇 "升三級").
    forfeit_levels: int = 3
    #: level difference (级差分) recorded for a forfeit (002 细则 10:-10).
    level_difference: int = 3
    #: out of turn / exposed card / illegal play: the offender loses the current trick (本轮).
    out_of_turn: str = "lose_trick"
    exposed_card: str = "lose_trick"
    illegal_play: str = "lose_trick"
    #: after an out-of-turn play the partner may not lead the same kind next trick (national).
    partner_lead_ban: bool = False
    #: wrong count reports: warnings before they count as fouls (002 细则: one).
    count_report_warnings: int = 1
    #: minutes late that forfeit the round (002 第一篇 10, 002 细则 5); 0 = not applied.
    late_forfeit_minutes: int = 10


@dataclass(frozen=True, slots=True)
class Profile:
    """Every option of RULES.md. Build with :func:`load_profile` or :func:`profile_from_dict`."""

    name: str
    title: str = ""
    source: str = ""
    play: PlayRules = PlayRules()
    combos: ComboOptions = ComboOptions()
    tribute: TributeRules = TributeRules()
    promotion: PromotionRules = PromotionRules()
    pass_a: PassARules = PassARules()
    streak_bonus: StreakBonus = StreakBonus()
    deals: DealRules = DealRules()
    time: TimeRules = TimeRules()
    match: MatchRules = MatchRules()
    report: ReportRules = ReportRules()
    slow_play: SlowPlayRules = SlowPlayRules()
    fouls: FoulRules = FoulRules()

    @property
    def combo_rules(self) -> ComboRules:
        """The combo options as ``engine.combos.ComboRules`` for classify/legal_moves."""
        from engine.combos import ComboRules

        return ComboRules(
            full_house_joker_pair=self.combos.full_house_joker_pair,
            max_cards_per_play=self.combos.max_cards_per_play,
        )

    @property
    def promotes(self) -> bool:
        """False for deal-point profiles (no promotion, level fixed or random)."""
        return self.promotion.table != "none"

    def to_dict(self) -> dict[str, Any]:
        """Plain data in the TOML schema (``0`` for no card limit); round-trips."""
        return describe_profile(self)


# --------------------------------------------------------------------------- schema
@dataclass(frozen=True, slots=True)
class _Key:
    kind: type  # bool, int or str
    choices: tuple[str, ...] = ()
    lo: int | None = None
    hi: int | None = None
    level: bool = False  # a level character 2..A (10 accepted for T)


_DIRECTIONS = ("counterclockwise", "clockwise")
_SCHEMA: Final[dict[str, tuple[type, dict[str, _Key]]]] = {
    "play": (PlayRules, {"direction": _Key(str, _DIRECTIONS)}),
    "combos": (
        ComboOptions,
        {"full_house_joker_pair": _Key(bool), "max_cards_per_play": _Key(int, lo=0, hi=27)},
    ),
    "tribute": (
        TributeRules,
        {
            "enabled": _Key(bool),
            "double_tie": _Key(str, ("clockwise", "winner_chooses", "fixed")),
            "return_limit": _Key(
                str, ("max_ten", "any", "max_ten_to_partner", "max_ten_not_level")
            ),
            "return_fallback": _Key(str, ("smallest", "none")),
            "anti_tribute": _Key(bool),
            "no_tribute_leader": _Key(str, ("previous_first", "previous_last")),
            "return_face_down": _Key(bool),
            "wrong_tribute": _Key(str, ("foul", "hand_void")),
        },
    ),
    "promotion": (
        PromotionRules,
        {
            "table": _Key(str, ("123", "246", "421", "531", "none")),
            "overflow_penalises": _Key(bool),
            "pass_a_penalty_double_down": _Key(int, lo=0, hi=12),
            "pass_a_penalty_single_down": _Key(int, lo=0, hi=12),
        },
    ),
    "pass_a": (
        PassARules,
        {
            "condition": _Key(
                str, ("partner_not_last", "double_down_only", "first_with_second_or_third")
            ),
            "attempts": _Key(int, lo=1, hi=99),
            "reset_to": _Key(str, ("2", "J", "T", "never"), level=True),
        },
    ),
    "streak_bonus": (
        StreakBonus,
        {
            "enabled": _Key(bool),
            "deals": _Key(int, lo=2, hi=99),
            "levels": _Key(int, lo=1, hi=12),
            "by": _Key(str, ("player", "team")),
        },
    ),
    "deals": (
        DealRules,
        {
            "level": _Key(str, ("promotion", "fixed", "random")),
            "fixed_level": _Key(str, tuple(_LEVELS), level=True),
            "points": _Key(str, ("321", "none")),
            "count": _Key(int, lo=0, hi=999),
            "tie": _Key(str, ("extra_deal", "draw")),
        },
    ),
    "time": (
        TimeRules,
        {
            "limit_minutes": _Key(int, lo=0, hi=24 * 60),
            "tie": _Key(str, ("reached_first", "last_deal_winner", "extra_deal", "draw")),
        },
    ),
    "match": (
        MatchRules,
        {
            "best_of": _Key(int, lo=1, hi=99),
            "win_points": _Key(int, lo=0, hi=99),
            "draw_points": _Key(int, lo=0, hi=99),
            "loss_points": _Key(int, lo=0, hi=99),
            "no_show_points": _Key(int, lo=0, hi=99),
            "bye_points": _Key(int, lo=0, hi=99),
        },
    ),
    "report": (
        ReportRules,
        {"card_count": _Key(int, lo=0, hi=27), "once": _Key(bool)},
    ),
    "slow_play": (
        SlowPlayRules,
        {
            "play_seconds": _Key(int, lo=1, hi=3600),
            "first_play_seconds": _Key(int, lo=1, hi=3600),
            "warning": _Key(bool),
            "warning_seconds": _Key(int, lo=1, hi=3600),
            "grace_seconds": _Key(int, lo=0, hi=3600),
            "tribute_seconds": _Key(int, lo=1, hi=3600),
        },
    ),
    "fouls": (
        FoulRules,
        {
            "limit": _Key(int, lo=1, hi=99),
            "penalty": _Key(str, ("match_lost", "deal_lost")),
            "forfeit_levels": _Key(int, lo=1, hi=12),
            "level_difference": _Key(int, lo=0, hi=99),
            "out_of_turn": _Key(str, ("lose_trick", "none")),
            "exposed_card": _Key(str, ("lose_trick", "none")),
            "illegal_play": _Key(str, ("lose_trick", "none")),
            "partner_lead_ban": _Key(bool),
            "count_report_warnings": _Key(int, lo=0, hi=99),
            "late_forfeit_minutes": _Key(int, lo=0, hi=999),
        },
    ),
}
_TOP_KEYS: Final = ("name", "title", "source", "extends")


def _describe_key(key: _Key) -> str:
    if key.choices:
        shown = ["10" if c == "T" else c for c in key.choices] if key.level else list(key.choices)
        return "one of " + ", ".join(repr(c) for c in shown)
    if key.kind is bool:
        return "true or false"
    return f"an integer from {key.lo} to {key.hi}"


def _check_value(where: str, dotted: str, key: _Key, value: object) -> object:
    def fail(why: str) -> ProfileError:
        return ProfileError(f"{where}: {dotted} {why}; allowed: {_describe_key(key)}")

    if key.kind is bool:
        if not isinstance(value, bool):
            raise fail(f"must be true or false, got {value!r}")
        return value
    if key.kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail(f"must be an integer, got {value!r}")
        if (key.lo is not None and value < key.lo) or (key.hi is not None and value > key.hi):
            raise fail(f"is out of range: {value}")
        return value
    if key.level and isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise fail(f"must be a string, got {value!r}")
    if key.level:
        value = _LEVEL_ALIASES.get(value, value.upper() if value != "never" else value)
    if key.choices and value not in key.choices:
        raise fail(f"has an unknown value {value!r}")
    return value


def _is_table(value: object) -> bool:
    return isinstance(value, Mapping)


def profile_from_dict(data: Mapping[str, Any], *, source: str = "<profile>") -> Profile:
    """Validate plain data (the TOML schema, ``extends`` already resolved) into a Profile."""
    where = f"profile {source}"
    unknown = [k for k in data if k not in _TOP_KEYS and k not in _SCHEMA]
    if unknown:
        raise ProfileError(
            f"{where}: unknown key {unknown[0]!r}; allowed top-level keys: "
            + ", ".join(list(_TOP_KEYS) + list(_SCHEMA))
        )
    if "extends" in data:
        raise ProfileError(
            f"{where}: extends = {data['extends']!r} must be resolved by load_profile or "
            "profile_from_toml, not profile_from_dict"
        )
    top: dict[str, str] = {}
    for k in ("name", "title", "source"):
        v = data.get(k, "")
        if not isinstance(v, str):
            raise ProfileError(f"{where}: {k} must be a string, got {v!r}")
        top[k] = v
    if not top["name"]:
        raise ProfileError(f'{where}: name is missing; give the profile a name = "..."')
    sections: dict[str, Any] = {}
    for section, (cls, keys) in _SCHEMA.items():
        raw = data.get(section, {})
        if not _is_table(raw):
            raise ProfileError(f"{where}: {section} must be a table [{section}], got {raw!r}")
        values: dict[str, object] = {}
        for k, v in raw.items():
            if k not in keys:
                raise ProfileError(
                    f"{where}: unknown key {section}.{k}; allowed keys in [{section}]: "
                    + ", ".join(keys)
                )
            values[k] = _check_value(where, f"{section}.{k}", keys[k], v)
        if section == "combos" and values.get("max_cards_per_play") == 0:
            values["max_cards_per_play"] = None
        sections[section] = cls(**values)
    profile = Profile(name=top["name"], title=top["title"], source=top["source"], **sections)
    _cross_check(where, profile)
    return profile


def _cross_check(where: str, p: Profile) -> None:
    mc = p.combos.max_cards_per_play
    if mc is not None and mc < 5:
        raise ProfileError(
            f"{where}: combos.max_cards_per_play = {mc} would forbid straights; allowed: 0 "
            "(no limit) or 5 to 27"
        )
    if p.promotes and p.deals.level != "promotion":
        raise ProfileError(
            f"{where}: deals.level = {p.deals.level!r} needs promotion.table = 'none' "
            f"(got {p.promotion.table!r}); a promoting match plays the winner's level"
        )
    if not p.promotes:
        if p.deals.level == "promotion":
            raise ProfileError(
                f"{where}: promotion.table = 'none' needs deals.level = 'fixed' or 'random'"
            )
        if p.deals.points == "none":
            raise ProfileError(
                f"{where}: promotion.table = 'none' needs deals.points = '321' to score deals"
            )
        if p.deals.count == 0 and p.time.limit_minutes == 0:
            raise ProfileError(
                f"{where}: promotion.table = 'none' needs deals.count > 0 or "
                "time.limit_minutes > 0, or the match never ends"
            )
    if p.slow_play.warning_seconds < p.slow_play.play_seconds:
        raise ProfileError(
            f"{where}: slow_play.warning_seconds ({p.slow_play.warning_seconds}) must be >= "
            f"slow_play.play_seconds ({p.slow_play.play_seconds})"
        )
    if p.time.tie == "draw" and p.match.best_of != 1:
        raise ProfileError(f"{where}: time.tie = 'draw' is only allowed with match.best_of = 1")
    if p.deals.tie == "draw" and p.match.best_of != 1:
        raise ProfileError(f"{where}: deals.tie = 'draw' is only allowed with match.best_of = 1")
    if p.match.best_of % 2 == 0:
        raise ProfileError(f"{where}: match.best_of must be odd, got {p.match.best_of}")


def describe_profile(profile: Profile) -> dict[str, Any]:
    """The profile as plain JSON-able data in the TOML schema (no ``extends``)."""
    out: dict[str, Any] = {"name": profile.name, "title": profile.title, "source": profile.source}
    for section in _SCHEMA:
        obj = getattr(profile, section)
        d = {f.name: getattr(obj, f.name) for f in fields(obj)}
        if section == "combos" and d["max_cards_per_play"] is None:
            d["max_cards_per_play"] = 0
        out[section] = d
    return out


# --------------------------------------------------------------------------- loading
_Reader = Callable[[str, str | None], tuple[str, str, str | None]]


def _named_dir() -> Traversable:
    return resources.files("engine").joinpath("profiles")


def list_profiles() -> list[str]:
    """Names of the profiles shipped with the engine, sorted."""
    return sorted(
        p.name[: -len(".toml")] for p in _named_dir().iterdir() if p.name.endswith(".toml")
    )


def _read(ref: str, base_dir: str | None, force_path: bool = False) -> tuple[str, str, str | None]:
    """The text of a named profile or a path: (text, source label, directory for extends).
    A reference ending in ``.toml`` or holding a path separator is a path; anything else a name.
    """
    looks_like_path = force_path or ref.endswith(".toml") or "/" in ref or "\\" in ref
    if not looks_like_path:
        res = _named_dir().joinpath(ref.strip().lower() + ".toml")
        if res.is_file():
            return res.read_text(encoding="utf-8"), ref, None
        raise ProfileError(
            f"unknown profile {ref!r}; known profiles: {', '.join(list_profiles())} "
            "(or give a path to a .toml file)"
        )
    path = Path(ref)
    if base_dir is not None and not path.is_absolute():
        path = Path(base_dir) / path
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProfileError(
            f"profile file {str(path)!r} not found; known profile names: "
            + ", ".join(list_profiles())
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"profile file {str(path)!r} cannot be read: {exc}") from None
    return text, str(path), str(path.parent)


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if _is_table(v) and _is_table(out.get(k)):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _resolve(
    text: str, source: str, base_dir: str | None, reader: _Reader, seen: tuple[str, ...]
) -> dict[str, Any]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"profile {source}: malformed TOML: {exc}") from None
    ext = data.pop("extends", None)
    if ext is None:
        return data
    if not isinstance(ext, str) or not ext:
        raise ProfileError(
            f"profile {source}: extends must be a profile name or a path, got {ext!r}"
        )
    if ext in seen or len(seen) > 16:
        raise ProfileError(f"profile {source}: extends = {ext!r} loops: {' -> '.join(seen)}")
    try:
        base_text, base_source, base_base = reader(ext, base_dir)
    except ProfileError as exc:
        raise ProfileError(f"profile {source}: extends = {ext!r}: {exc}") from None
    base = _resolve(base_text, base_source, base_base, reader, seen + (ext,))
    base.pop("name", None)
    base.pop("title", None)
    base.pop("source", None)
    return _merge(base, data)


def profile_from_toml(text: str, *, source: str = "<text>", base_dir: str | None = None) -> Profile:
    """Parse and validate TOML text. ``extends`` names a shipped profile or a path (relative
    paths against ``base_dir``); resolving it reads that file."""
    data = _resolve(text, source, base_dir, _read, (source,))
    return profile_from_dict(data, source=source)


def load_profile(name_or_path: str | Path) -> Profile:
    """A named profile (``list_profiles()``) or an organiser's ``.toml`` file by path."""
    text, source, base_dir = _read(
        str(name_or_path), None, force_path=isinstance(name_or_path, Path)
    )
    return profile_from_toml(text, source=source, base_dir=base_dir)
