"""Pydantic models at the edge: the event JSON of CONTRACT.md and the API's own bodies.

Every event has ``v`` (1), ``id``, ``table``, ``deal``, ``seq``, ``t`` and ``type``, plus the
fields of its type. Unknown *types* are refused (422 naming ``type``); extra *fields* are kept
(CONTRACT.md: "add freely"). Cards are checked and stored in canonical notation.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from fastapi import Path
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)

from engine.cards import CardError, parse_cards, parse_level
from engine.events import EVENT_FIELDS, FOUL_KINDS

Seat = Literal["N", "E", "S", "W"]
Team = Literal["NS", "EW"]
FoulKind = Literal[FOUL_KINDS]  # type: ignore[valid-type]
MAX_SEQ = 2**53
#: Integer ids in URL paths (tournament, round, match): bounded so no driver overflows.
IntId = Annotated[int, Path(ge=1, le=2**31 - 1)]
# Printable identifiers: no control characters (they break logs, URLs and PostgreSQL text).
Ident = Annotated[
    str, StringConstraints(min_length=1, max_length=128, pattern=r"^[^\x00-\x1f\x7f]+$")
]
TableId = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
]


def _table_from_int(value: Any) -> Any:
    # A kiosk may number its tables; the scoreboard keys them by text.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


def _level(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError("a level is a rank character 2..9, T, J, Q, K or A")
    try:
        return parse_level(value)
    except (CardError, ValueError) as exc:
        raise ValueError(str(exc)) from None


def _cards(value: Any) -> list[str]:
    if isinstance(value, str):
        text: Any = value
    elif isinstance(value, list) and all(isinstance(c, str) for c in value):
        text = value
    else:
        raise ValueError('cards are a list of card strings (e.g. ["S3", "HR"]) or one string')
    try:
        cards = parse_cards(text)
    except CardError as exc:
        raise ValueError(str(exc)) from None
    if not cards:
        raise ValueError("no cards given")
    return [str(c) for c in cards]


def _card(value: Any) -> str:
    cards = _cards(value)
    if len(cards) != 1:
        raise ValueError(f"expected one card, got {len(cards)}")
    return cards[0]


Level = Annotated[str, BeforeValidator(_level)]
Cards = Annotated[list[str], BeforeValidator(_cards)]
OneCard = Annotated[str, BeforeValidator(_card)]
StrictNonNeg = Annotated[int, Field(strict=True, ge=0, le=MAX_SEQ)]


class EventBase(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    v: Literal[1] = Field(description="event schema version; 1")
    id: Ident = Field(description="unique event id, stable across retries")
    table: Annotated[TableId, BeforeValidator(_table_from_int)] = Field(
        description="the table's id, as registered at the scoreboard"
    )
    deal: Annotated[int, Field(strict=True, ge=0, le=1_000_000)] = Field(
        description="deal number within the match"
    )
    seq: StrictNonNeg = Field(description="per-table sequence number, gapless, from 1")
    t: float = Field(ge=0, le=1e9, description="seconds since the recording/session started")
    match_id: Annotated[int, Field(strict=True, ge=1, le=2**31 - 1)] | None = Field(
        default=None,
        description="the scoreboard match the event belongs to (the kiosk learns it from GET "
        "/api/v1/tables/{table}/assignment); an event for a match that is not its table's is "
        "refused (409). Without it the event goes to the table's current match (older kiosks)",
    )

    @field_validator("t")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("t must be a finite number of seconds")
        return value


class DealStarted(EventBase):
    type: Literal["deal_started"]
    level: Level | None = Field(
        default=None, description="the deal's level; null when a joker was cut (no wilds)"
    )
    leader: Seat | None = None


class Tribute(EventBase):
    type: Literal["tribute"]
    from_: Seat = Field(alias="from")
    to: Seat
    card: OneCard


class TributeReturned(EventBase):
    type: Literal["tribute_returned"]
    from_: Seat = Field(alias="from")
    to: Seat
    card: OneCard


class AntiTribute(EventBase):
    type: Literal["anti_tribute"]
    seats: list[Seat] = Field(min_length=1, max_length=4)


class Play(EventBase):
    type: Literal["play"]
    seat: Seat
    cards: Cards
    combo: str | dict[str, Any] | None = None


class Pass(EventBase):
    type: Literal["pass"]
    seat: Seat


class SeatOut(EventBase):
    type: Literal["seat_out"]
    seat: Seat
    place: Annotated[int, Field(strict=True, ge=1, le=4)]


class Foul(EventBase):
    type: Literal["foul"]
    seat: Seat | None = None
    kind: FoulKind
    detail: str | dict[str, Any] | None = None


class Correction(EventBase):
    type: Literal["correction"]
    replaces: Ident
    by: str | dict[str, Any] | None = None


class DealEnded(EventBase):
    type: Literal["deal_ended"]
    order: list[Seat] = Field(min_length=2, max_length=4)
    levels: dict[Team, Level]

    @field_validator("order")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError(f"finishing order repeats a seat: {value}")
        return value

    @field_validator("levels")
    @classmethod
    def _both(cls, value: dict[str, str]) -> dict[str, str]:
        if set(value) != {"NS", "EW"}:
            raise ValueError('levels needs both teams, e.g. {"NS": "3", "EW": "2"}')
        return value


class MatchEnded(EventBase):
    type: Literal["match_ended"]
    winner: Literal["NS", "EW", "draw"] | None = Field(
        description="NS, EW, or null/'draw' for a drawn (time-limited) match"
    )


class RefereeNote(EventBase):
    """Event types the referee emits beyond CONTRACT.md's list ("at least"): stored and relayed
    as they are, never folded into results."""

    type: Literal["warning", "count_alert", "time_called", "series_ended", "notice"]
    seat: Seat | None = None


Event = Annotated[
    DealStarted
    | Tribute
    | TributeReturned
    | AntiTribute
    | Play
    | Pass
    | SeatOut
    | Foul
    | Correction
    | DealEnded
    | MatchEnded
    | RefereeNote,
    Field(discriminator="type"),
]
EVENT_TYPES = tuple(EVENT_FIELDS)  # every type the engine referee emits
MAX_BATCH = 1000
EventBatch = Annotated[list[Event], Field(min_length=1, max_length=MAX_BATCH)]


def event_body(event: EventBase) -> dict[str, Any]:
    """The canonical JSON object stored for an event (aliases, canonical cards, extras kept).
    An absent ``match_id`` stays absent (a retry of an event stored before it existed matches)."""
    body = event.model_dump(mode="json", by_alias=True)
    if body.get("match_id") is None:
        body.pop("match_id", None)
    return body


# ----------------------------------------------------------------------------- API bodies


class IngestResult(BaseModel):
    table: str
    accepted: list[str] = Field(description="ids stored by this request")
    duplicates: list[str] = Field(description="ids already stored with the same content")
    max_seq: int = Field(description="highest seq stored for the table (0 when none)")
    missing: list[int] = Field(description="seqs below max_seq not received (first 1000)")
    missing_count: int


class MissingSeqs(BaseModel):
    table: str
    max_seq: int
    stored: int
    missing: list[int]
    missing_count: int


class TournamentIn(BaseModel):
    name: Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True)]
    profile: str = Field(default="swiss-421", description="rule profile name from RULES.md")
    lots_seed: Annotated[int, Field(ge=0, le=2**62)] | None = Field(
        default=None, description="seed of the drawing of lots; random when omitted"
    )
    format: Literal[
        "swiss",
        "round_robin",
        "knockout",
        "knockout_bo3",
        "knockout_bo3_sf",
        "knockout_redraw",
        "knockout_repechage",
        "groups_knockout",
    ] = Field(
        default="swiss",
        description="how rounds are made and pairs ranked: swiss (002 细则), round_robin "
        "(every pair meets every other once, big/small points, 000 篇2), knockout (single "
        "elimination with byes and a match for 3rd place, 002 第三篇) or knockout_bo3 (the "
        "same, each meeting best of 3, 004) or knockout_bo3_sf (one game a meeting, best of 3 "
        "from the semi-finals on, 002 第三篇), knockout_redraw (the pairs still in drawn anew "
        "before each round, a bye for an odd one out, 003), knockout_repechage (no byes: a "
        "repechage of a round's losers fills the bracket up to a power of two, best of 3 from "
        "the semi-finals, 002 第三篇), groups_knockout (groups play a round robin, the top "
        "`advance` of each go into a knockout drawn by lots, 000 篇11)",
    )
    groups: Annotated[int, Field(ge=1, le=64)] | None = Field(
        default=None,
        description="groups_knockout only: the number of groups (2 when omitted); pairs go "
        "into groups by draw number in blocks",
    )
    advance: Annotated[int, Field(ge=1, le=64)] | None = Field(
        default=None,
        description="groups_knockout only: pairs from each group into the knockout (2 when "
        "omitted; less than the smallest group)",
    )


class TournamentOut(BaseModel):
    id: int
    name: str
    profile: str
    lots_seed: int
    format: str = "swiss"
    groups: int | None = None
    advance: int | None = None


class PairIn(BaseModel):
    name: Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True)]
    players: Annotated[str, StringConstraints(max_length=400)] = ""
    club: Annotated[str, StringConstraints(max_length=200)] = ""
    number: Annotated[int, Field(ge=1, le=100_000)] | None = Field(
        default=None, description="draw number; next free number when omitted"
    )


class PairOut(BaseModel):
    id: int
    number: int
    name: str
    players: str
    club: str
    withdrawn: bool = Field(default=False, description="withdrawn (退赛): paired no more")


class PairPatch(BaseModel):
    """What to change of a pair; fields left out stay as they are."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    players: Annotated[str, StringConstraints(max_length=400)] | None = None
    club: Annotated[str, StringConstraints(max_length=200)] | None = None
    withdrawn: bool | None = Field(
        default=None, description="true: withdraw (no more pairings); false: reinstate"
    )


class TablePatch(BaseModel):
    """What to change of a table (its code is the kiosk's and stays)."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, StringConstraints(max_length=200)] | None = None
    withdrawn: bool | None = Field(
        default=None, description="true: out of use (no new matches); false: back in use"
    )


class TableIn(BaseModel):
    id: TableId = Field(
        description="the table's id as its kiosk knows it (the events' `table` field); unique "
        "in the tournament, another tournament may have a table of the same id"
    )
    name: Annotated[str, StringConstraints(max_length=200)] = ""


class TableOut(BaseModel):
    id: str = Field(
        description="the scoreboard's key of the table (URLs): its code, or <code>~<tournament> "
        "when another tournament had that code first"
    )
    code: str = Field(description="the events' `table` field (the kiosk's table id)")
    name: str
    tournament_id: int
    withdrawn: bool = Field(default=False, description="out of use: no new matches")


class TableWithToken(TableOut):
    token: str = Field(description="bearer token for the table's kiosk; shown only now")


class PairingIn(BaseModel):
    table: TableId | None = Field(default=None, description="table id; null for a bye")
    ew: Annotated[int, Field(ge=1, le=100_000)] = Field(description="pair number seated East-West")
    ns: Annotated[int, Field(ge=1, le=100_000)] | None = Field(
        default=None, description="pair number seated North-South; null for a bye"
    )


class RoundIn(BaseModel):
    pairings: list[PairingIn] | None = Field(
        default=None,
        description="explicit pairings; omit to let the tournament's format make them (Swiss "
        "pairing, the round robin's next round, the knockout's next round from the winners)",
    )


class RulingOut(BaseModel):
    by: Literal["override", "decision"] = Field(
        description="override (an admin ruling, wins over a decision) or decision (the "
        "organiser's on an unfinished match)"
    )
    kind: str = Field(
        description="the override's result (ew, ns, draw, ew_no_show, ns_no_show, both_no_show) "
        "or the decision (as_played, forfeit_ew, forfeit_ns, void)"
    )
    reason: str = Field(description="the decision's reason as typed; empty for an override")


class MatchOut(BaseModel):
    id: int
    round: int
    table: str | None
    ew: int
    ns: int | None
    status: str = Field(
        description="pending, playing, finished (the play at the table) or decided (a ruling "
        "gives the result: ``ruling``)"
    )
    play_status: str | None = Field(
        default=None, description="the play at the table: pending, playing or finished"
    )
    ruling: RulingOut | None = Field(
        default=None, description="the ruling that decides the match; null: none"
    )
    winner: str | None
    level_ew: str
    level_ns: str
    deals_played: int
    fouls_ew: int
    fouls_ns: int
    override: str | None
    result: str | None = Field(
        default=None,
        description="what the standings count: EW, NS, draw, both lost, both no-show, bye; "
        "null while undecided (winner is the play at the table)",
    )
    decided_by: str | None = Field(
        default=None,
        description="override, decision (the organiser's, on an unfinished match), fouls (the "
        "profile's foul limit), events or bye",
    )
    decision: str | None = Field(
        default=None, description="wait, as_played, forfeit_ew, forfeit_ns or void; null: none"
    )


class RoundOut(BaseModel):
    id: int
    number: int
    status: str
    matches: list[MatchOut]


DECISIONS = ("wait", "as_played", "forfeit_ew", "forfeit_ns", "void")
Decision = Literal["wait", "as_played", "forfeit_ew", "forfeit_ns", "void"]
Reason = Annotated[str, StringConstraints(max_length=400, strip_whitespace=True)]


class DecisionIn(BaseModel):
    decision: Decision = Field(
        description="wait (the match goes on; its events score it), as_played (scored from the "
        "events stored so far: higher level wins, equal draws), forfeit_ew / forfeit_ns (that "
        "side forfeits, scored per the profile), void (no result for either side)"
    )
    reason: Reason = ""


class MatchDecisionIn(DecisionIn):
    match: Annotated[int, Field(ge=1, le=2**31 - 1)] = Field(description="match id")


class CloseIn(BaseModel):
    decisions: list[MatchDecisionIn] = Field(
        default_factory=list,
        description="one decision per unfinished match of the round (409 lists those missing)",
    )
    reason: Reason = ""


class ReopenIn(BaseModel):
    reason: Annotated[str, StringConstraints(min_length=1, max_length=400, strip_whitespace=True)]


class MatchRef(BaseModel):
    match_id: int
    round: int
    tournament: int
    status: str
    decision: str | None
    ew: dict[str, Any] | None
    ns: dict[str, Any] | None


class Assignment(BaseModel):
    table: str
    current: MatchRef | None = Field(
        description="the match this table plays now: its events carry this match_id"
    )
    queue: list[MatchRef] = Field(
        description="the table's unfinished matches, earliest round first (current first)"
    )
    clock: dict[str, Any] | None = Field(
        default=None,
        description="the round clock of the current match's round (state, limit_s, "
        "remaining_s, called, ends_at), when the organiser started one",
    )


class OverrideIn(BaseModel):
    result: Literal["ew", "ns", "draw", "ew_no_show", "ns_no_show", "both_no_show"] | None = Field(
        description="admin result that wins over the events; null clears it"
    )


class ClockIn(BaseModel):
    """An action on a round's clock."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["start", "pause", "resume", "call"] = Field(
        description="start (the limit: ``minutes`` or the profile's), pause, resume, call (time)"
    )
    minutes: Annotated[int, Field(ge=1, le=600)] | None = Field(
        default=None, description="the round's time limit at ``start`` (default: the profile's)"
    )
