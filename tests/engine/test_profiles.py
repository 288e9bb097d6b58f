"""Rule profiles: every named profile loads; a bad file raises ProfileError naming the key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from engine import Profile, ProfileError, load_profile
from engine.profiles import (
    PROMOTION_TABLES,
    describe_profile,
    list_profiles,
    profile_from_dict,
    profile_from_toml,
)

NAMED = [
    "huaian",
    "standard",
    "jiangsu-points",
    "hefei-qualifier",
    "hefei-final",
    "swiss-421",
    "club-531",
    "school-double-down",
    "six-deal-points",
    "eight-deal-random-level",
    "national",
]


def test_every_named_profile_is_shipped() -> None:
    assert sorted(NAMED) == list_profiles()


@pytest.mark.parametrize("name", NAMED)
def test_named_profile_loads_and_round_trips(name: str) -> None:
    p = load_profile(name)
    assert isinstance(p, Profile)
    assert p.name == name
    assert p.source, "every shipped profile cites its source"
    again = profile_from_dict(describe_profile(p), source=name)
    assert again == p
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.name = "x"  # type: ignore[misc]


# The RULES.md "Named profiles" table, row by row.
@pytest.mark.parametrize(
    ("name", "tribute", "return_limit", "table", "condition", "reset_to"),
    [
        ("huaian", True, "any", "123", "partner_not_last", "2"),
        ("standard", True, "max_ten", "123", "partner_not_last", "never"),
        ("jiangsu-points", True, "max_ten", "123", "partner_not_last", "2"),
        ("hefei-qualifier", True, "max_ten", "246", "first_with_second_or_third", "2"),
        ("hefei-final", True, "max_ten", "123", "first_with_second_or_third", "2"),
        ("swiss-421", True, "max_ten_to_partner", "421", "double_down_only", "never"),
        ("club-531", True, "max_ten", "531", "partner_not_last", "2"),
        ("school-double-down", True, "max_ten", "123", "double_down_only", "J"),
        ("six-deal-points", False, "max_ten", "none", "partner_not_last", "never"),
        ("eight-deal-random-level", False, "max_ten", "none", "partner_not_last", "never"),
        ("national", True, "max_ten_not_level", "123", "partner_not_last", "2"),
    ],
)
def test_named_profile_matches_rules_table(
    name: str, tribute: bool, return_limit: str, table: str, condition: str, reset_to: str
) -> None:
    p = load_profile(name)
    assert p.tribute.enabled is tribute
    if tribute:
        assert p.tribute.return_limit == return_limit
    assert p.promotion.table == table
    if table != "none":
        assert p.pass_a.condition == condition
        assert p.pass_a.reset_to == reset_to
        assert p.pass_a.attempts == 3


def test_named_profile_notes_column() -> None:
    assert load_profile("standard").report.card_count == 6
    j = load_profile("jiangsu-points")
    assert j.promotion.overflow_penalises and j.report.card_count == 7
    assert (j.promotion.pass_a_penalty_double_down, j.promotion.pass_a_penalty_single_down) == (
        3,
        2,
    )
    assert j.slow_play.first_play_seconds == 40 and j.slow_play.play_seconds == 20
    hq = load_profile("hefei-qualifier")
    assert hq.combos.max_cards_per_play == 6 and hq.time.limit_minutes == 45
    hf = load_profile("hefei-final")
    assert hf.time.limit_minutes == 120 and hf.promotion.table == "123"
    sw = load_profile("swiss-421")
    assert sw.time.limit_minutes == 40 and sw.report.card_count == 10
    assert (sw.match.win_points, sw.match.draw_points, sw.match.loss_points) == (2, 1, 0)
    assert sw.fouls.level_difference == 10 and sw.time.tie == "draw"
    club = load_profile("club-531")
    assert club.promotion.overflow_penalises and club.time.limit_minutes == 60
    assert club.time.tie == "last_deal_winner"
    assert load_profile("school-double-down").time.limit_minutes == 40
    six = load_profile("six-deal-points")
    assert (six.deals.level, six.deals.fixed_level, six.deals.count) == ("fixed", "2", 6)
    assert six.deals.points == "321" and not six.promotes
    eight = load_profile("eight-deal-random-level")
    assert (eight.deals.level, eight.deals.count) == ("random", 8)
    nat = load_profile("national")
    assert nat.report.card_count == 10 and nat.report.once
    m = nat.match
    assert (m.win_points, m.draw_points, m.loss_points, m.no_show_points, m.bye_points) == (
        3,
        2,
        1,
        0,
        3,
    )
    assert nat.tribute.return_fallback == "smallest" and nat.fouls.partner_lead_ban


def test_defaults_and_play_direction() -> None:
    p = profile_from_dict({"name": "x"})
    assert p.play.seat_order == ("S", "E", "N", "W")
    assert p.play.next_seat("W") == "S"
    assert p.combos.full_house_joker_pair is True and p.combos.max_cards_per_play is None
    assert p.slow_play.play_seconds == 30 and p.slow_play.warning_seconds == 45
    assert p.slow_play.grace_seconds == 15 and p.slow_play.tribute_seconds == 40
    assert p.fouls.limit == 3 and p.fouls.out_of_turn == "lose_trick"
    cw = profile_from_dict({"name": "x", "play": {"direction": "clockwise"}})
    assert cw.play.seat_order == ("S", "W", "N", "E")
    with pytest.raises(ValueError, match="unknown seat"):
        cw.play.next_seat("X")


def test_promotion_tables() -> None:
    assert PROMOTION_TABLES == {
        "123": (3, 2, 1),
        "246": (6, 4, 2),
        "421": (4, 2, 1),
        "531": (5, 3, 1),
    }


def test_combo_rules_property() -> None:
    combos = pytest.importorskip("engine.combos")
    cr = load_profile("hefei-qualifier").combo_rules
    assert isinstance(cr, combos.ComboRules)
    assert cr.max_cards_per_play == 6 and cr.full_house_joker_pair is True
    assert load_profile("huaian").combo_rules.max_cards_per_play is None


def test_level_aliases_in_values() -> None:
    p = profile_from_toml('name = "x"\n[pass_a]\nreset_to = "10"\n')
    assert p.pass_a.reset_to == "T"
    p = profile_from_toml('name = "x"\n[pass_a]\nreset_to = "j"\n')
    assert p.pass_a.reset_to == "J"
    p = profile_from_toml(
        'name = "x"\n[promotion]\ntable = "none"\n[deals]\nlevel = "fixed"\nfixed_level = 10\n'
        'points = "321"\ncount = 4\n'
    )
    assert p.deals.fixed_level == "T"


# ---------------------------------------------------------------- errors name the key
def test_unknown_name_lists_known_names() -> None:
    with pytest.raises(ProfileError) as ei:
        load_profile("huaiann")
    msg = str(ei.value)
    assert "'huaiann'" in msg
    for name in NAMED:
        assert name in msg


def test_profile_error_is_value_error() -> None:
    assert issubclass(ProfileError, ValueError)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('name = "x"\n[tribute\n', "malformed TOML"),
        ('name = "x"\ncolour = "red"\n', "unknown key 'colour'"),
        ('name = "x"\n[tribute]\nreturn_limt = "any"\n', "tribute.return_limt"),
        ('name = "x"\n[tribute]\nreturn_limit = "ten"\n', "tribute.return_limit"),
        ('name = "x"\n[tribute]\nenabled = "yes"\n', "tribute.enabled"),
        ('name = "x"\n[pass_a]\nattempts = 0\n', "pass_a.attempts"),
        ('name = "x"\n[pass_a]\nattempts = true\n', "pass_a.attempts"),
        ('name = "x"\n[pass_a]\nreset_to = "Q"\n', "pass_a.reset_to"),
        ('name = "x"\n[promotion]\ntable = "357"\n', "promotion.table"),
        ('name = "x"\n[report]\ncard_count = 30\n', "report.card_count"),
        ('name = "x"\n[combos]\nmax_cards_per_play = 3\n', "combos.max_cards_per_play"),
        ('name = "x"\ntribute = 3\n', "tribute must be a table"),
        ('title = "no name"\n', "name is missing"),
        ('name = "x"\n[promotion]\ntable = "none"\n', "deals.level"),
        ('name = "x"\n[deals]\nlevel = "fixed"\n', "deals.level"),
        ('name = "x"\n[slow_play]\nplay_seconds = 50\n', "slow_play.warning_seconds"),
        ('name = "x"\n[match]\nbest_of = 2\n', "match.best_of"),
        ('name = "x"\nextends = "nope"\n', "unknown profile 'nope'"),
    ],
)
def test_bad_profile_text(text: str, needle: str) -> None:
    with pytest.raises(ProfileError) as ei:
        profile_from_toml(text, source="t.toml")
    assert needle in str(ei.value)
    assert "t.toml" in str(ei.value)


def test_bad_value_message_lists_allowed_values() -> None:
    with pytest.raises(ProfileError) as ei:
        profile_from_toml('name = "x"\n[tribute]\ndouble_tie = "random"\n')
    msg = str(ei.value)
    assert "tribute.double_tie" in msg and "'random'" in msg
    assert "'clockwise'" in msg and "'winner_chooses'" in msg and "'fixed'" in msg
    with pytest.raises(ProfileError, match=r"pass_a\.attempts .*from 1 to 99"):
        profile_from_toml('name = "x"\n[pass_a]\nattempts = -1\n')


def test_unknown_key_lists_allowed_keys() -> None:
    with pytest.raises(ProfileError) as ei:
        profile_from_toml('name = "x"\n[pass_a]\ncondtion = "double_down_only"\n')
    assert "pass_a.condtion" in str(ei.value)
    assert "condition" in str(ei.value) and "reset_to" in str(ei.value)


# ---------------------------------------------------------------- organisers' files
def test_custom_profile_from_path_with_extends(tmp_path: Path) -> None:
    f = tmp_path / "club.toml"
    f.write_text(
        'extends = "huaian"\nname = "my-club"\n[pass_a]\nreset_to = "J"\n'
        "[time]\nlimit_minutes = 35\n",
        encoding="utf-8",
    )
    p = load_profile(str(f))
    base = load_profile("huaian")
    assert p.name == "my-club"
    assert p.pass_a.reset_to == "J" and p.time.limit_minutes == 35
    # everything else inherited, including keys of the same section not overridden
    assert p.pass_a.condition == base.pass_a.condition
    assert p.tribute == base.tribute and p.time.tie == base.time.tie
    assert p.source == ""  # the base's title and source are not inherited
    assert load_profile(f) == p  # a Path works too


def test_extends_chain_relative_path_and_loop(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text(
        'extends = "swiss-421"\nname = "a"\n[report]\ncard_count = 8\n', encoding="utf-8"
    )
    (tmp_path / "b.toml").write_text(
        'extends = "a.toml"\nname = "b"\n[promotion]\ntable = "531"\n', encoding="utf-8"
    )
    b = load_profile(tmp_path / "b.toml")
    assert b.report.card_count == 8 and b.promotion.table == "531"
    assert b.pass_a.condition == "double_down_only"
    (tmp_path / "c.toml").write_text('extends = "d.toml"\nname = "c"\n', encoding="utf-8")
    (tmp_path / "d.toml").write_text('extends = "c.toml"\nname = "d"\n', encoding="utf-8")
    with pytest.raises(ProfileError, match="loops"):
        load_profile(tmp_path / "c.toml")


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="not found"):
        load_profile(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\n[time]\nlimit_minutes = "forty"\n', encoding="utf-8")
    with pytest.raises(ProfileError, match=r"time\.limit_minutes"):
        load_profile(bad)
    bad.write_bytes(b"name = \xff\xfe")
    with pytest.raises(ProfileError, match="cannot be read|malformed"):
        load_profile(bad)


def test_profile_from_dict_rejects_unresolved_extends() -> None:
    with pytest.raises(ProfileError, match="extends"):
        profile_from_dict({"name": "x", "extends": "huaian"})


def test_readme_documents_every_key() -> None:
    readme = Path(__file__).resolve().parents[2] / "engine" / "profiles" / "README.md"
    text = readme.read_text(encoding="utf-8")
    for section, keys in describe_profile(load_profile("huaian")).items():
        if isinstance(keys, dict):
            assert f"[{section}]" in text, section
            for key in keys:
                assert f"`{key}`" in text, f"{section}.{key}"


def test_draw_rules_need_single_game() -> None:
    with pytest.raises(ProfileError, match=r"time\.tie"):
        profile_from_toml('name = "x"\n[time]\ntie = "draw"\n[match]\nbest_of = 3\n')
    with pytest.raises(ProfileError, match=r"deals\.tie"):
        profile_from_toml(
            'name = "x"\nextends = "six-deal-points"\n[deals]\ntie = "draw"\n[match]\nbest_of = 3\n'
        )


def test_names_are_case_insensitive() -> None:
    assert load_profile(" Swiss-421 ") == load_profile("swiss-421")
