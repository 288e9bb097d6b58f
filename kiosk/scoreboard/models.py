"""SQLAlchemy 2 models. ``events`` is the truth; ``deals`` and the result columns of ``matches``
are derived from it by ``fold.py`` and can be rebuilt at any time (``rebuild_match``)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class Tournament(Base):
    """The organiser's event (named ``tournament`` so it is never confused with a game event)."""

    __tablename__ = "tournament"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    profile: Mapped[str] = mapped_column(String(64))
    #: The event format (``formats.FORMATS``): ``swiss``, ``round_robin``, ``knockout``, ...
    format: Mapped[str] = mapped_column(String(32), default="swiss", server_default="swiss")
    #: a group stage's groups and the pairs each sends to the knockout (``groups_knockout``)
    groups: Mapped[int | None] = mapped_column(Integer, nullable=True, default=None)
    advance: Mapped[int | None] = mapped_column(Integer, nullable=True, default=None)
    #: Seed of the drawing of lots (last tie-break); recorded so the draw can be re-checked.
    lots_seed: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    pairs: Mapped[list[Pair]] = relationship(back_populates="tournament", order_by="Pair.number")
    tables: Mapped[list[GameTable]] = relationship(
        back_populates="tournament", order_by="GameTable.position"
    )
    rounds: Mapped[list[Round]] = relationship(back_populates="tournament", order_by="Round.number")


class Pair(Base):
    __tablename__ = "pair"
    __table_args__ = (UniqueConstraint("tournament_id", "number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournament.id", ondelete="CASCADE"))
    #: The pair's draw number (抽签号); round 1 pairs 1-2, 3-4, ... (002 细则).
    number: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(200))
    players: Mapped[str] = mapped_column(String(400), default="")
    club: Mapped[str] = mapped_column(String(200), default="")
    #: withdrawn from the tournament (退赛): paired no more, its results and standing kept
    withdrawn: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    tournament: Mapped[Tournament] = relationship(back_populates="pairs")


class GameTable(Base):
    """A playing table of a tournament, with its kiosk. ``code`` is the ``table`` field of its
    events (the kiosk's ``--table``), unique within the tournament; ``id`` is the scoreboard's
    key: the code itself unless another tournament has a table of that code, then
    ``<code>~<tournament>`` (``~`` is never in a code)."""

    __tablename__ = "game_table"
    __table_args__ = (Index("uq_game_table_tournament_code", "tournament_id", "code", unique=True),)

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    code: Mapped[str] = mapped_column(String(64))
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournament.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200), default="")
    position: Mapped[int] = mapped_column(Integer, default=0)
    #: sha256 hex of the bearer token; the token itself is shown once, when made.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: withdrawn (out of use): no new matches; its token still files its events (a kiosk
    #: catching up loses nothing)
    withdrawn: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    tournament: Mapped[Tournament] = relationship(back_populates="tables")


class Round(Base):
    __tablename__ = "round"
    __table_args__ = (UniqueConstraint("tournament_id", "number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournament.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    #: ``open`` while it is played (events of its tables go to its matches), then ``closed``.
    status: Mapped[str] = mapped_column(String(16), default="open")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    tournament: Mapped[Tournament] = relationship(back_populates="rounds")
    matches: Mapped[list[Match]] = relationship(back_populates="round", order_by="Match.id")


class Match(Base):
    """One pairing of a round: ``pair_ew`` (listed first, 002: 排前者就座东西) against ``pair_ns``.

    A bye has no table and no ``pair_ns``. The result columns are derived (``fold.py``); the
    admin may set ``override`` (``ew``, ``ns``, ``draw``, ``ew_no_show``, ``ns_no_show``,
    ``both_no_show``) which then wins over the events.
    """

    __tablename__ = "match"
    __table_args__ = (
        UniqueConstraint("round_id", "table_id"),
        Index("ix_match_table", "table_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("round.id", ondelete="CASCADE"))
    table_id: Mapped[str | None] = mapped_column(
        ForeignKey("game_table.id", ondelete="SET NULL"), nullable=True
    )
    pair_ew_id: Mapped[int] = mapped_column(ForeignKey("pair.id", ondelete="CASCADE"))
    pair_ns_id: Mapped[int | None] = mapped_column(
        ForeignKey("pair.id", ondelete="CASCADE"), nullable=True
    )
    override: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # --- the organiser's decision on an unfinished match (latest ``match_decision`` row) ---
    #: ``wait``, ``as_played``, ``forfeit_ew``, ``forfeit_ns``, ``void`` or None (none needed yet)
    decision: Mapped[str | None] = mapped_column(String(16), nullable=True)
    #: for ``as_played``: the result of the events stored when it was decided
    decision_winner: Mapped[str | None] = mapped_column(String(8), nullable=True)
    decision_level_ew: Mapped[str | None] = mapped_column(String(2), nullable=True)
    decision_level_ns: Mapped[str | None] = mapped_column(String(2), nullable=True)
    # --- derived from the events (fold.py) ---
    status: Mapped[str] = mapped_column(String(16), default="pending")  # pending|playing|finished
    winner: Mapped[str | None] = mapped_column(String(8), nullable=True)  # NS|EW|draw
    level_ns: Mapped[str] = mapped_column(String(2), default="2")
    level_ew: Mapped[str] = mapped_column(String(2), default="2")
    deals_played: Mapped[int] = mapped_column(Integer, default=0)
    fouls_ns: Mapped[int] = mapped_column(Integer, default=0)
    fouls_ew: Mapped[int] = mapped_column(Integer, default=0)

    round: Mapped[Round] = relationship(back_populates="matches")
    pair_ew: Mapped[Pair] = relationship(foreign_keys=[pair_ew_id])
    pair_ns: Mapped[Pair | None] = relationship(foreign_keys=[pair_ns_id])


class MatchDecision(Base):
    """An organiser's decision on an unfinished match (closing its round, or later), append-only:
    the latest row of a match is in force and is copied to ``Match.decision*``.

    ``wait``: the match goes on and its events score it when it ends; ``as_played``: scored from
    the events stored so far (``at_seq``: the table's highest seq of the match then), the higher
    level wins, equal levels draw; ``forfeit_ew`` / ``forfeit_ns``: that side forfeits, scored as
    the profile's forfeit (``fouls.level_difference``); ``void``: no result for either side.
    Events that arrive after a final decision are kept (the log is the truth) but not counted."""

    __tablename__ = "match_decision"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("match.id", ondelete="CASCADE"), index=True)
    decision: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(String(400), default="")
    at_seq: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    winner: Mapped[str | None] = mapped_column(String(8), nullable=True)
    level_ew: Mapped[str | None] = mapped_column(String(2), nullable=True)
    level_ns: Mapped[str | None] = mapped_column(String(2), nullable=True)
    decided_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class RoundChange(Base):
    """A round closed or reopened (append-only), with the organiser's reason."""

    __tablename__ = "round_change"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("round.id", ondelete="CASCADE"), index=True)
    action: Mapped[str] = mapped_column(String(16))  # closed | reopened
    reason: Mapped[str] = mapped_column(String(400), default="")
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Deal(Base):
    """A deal of a match, derived from its ``deal_started``/``deal_ended`` events."""

    __tablename__ = "deal"
    __table_args__ = (UniqueConstraint("match_id", "number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("match.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    level: Mapped[str | None] = mapped_column(String(2), nullable=True)
    leader: Mapped[str | None] = mapped_column(String(1), nullable=True)
    finish_order: Mapped[str | None] = mapped_column(String(8), nullable=True)  # e.g. "SENW"
    level_ns: Mapped[str | None] = mapped_column(String(2), nullable=True)
    level_ew: Mapped[str | None] = mapped_column(String(2), nullable=True)
    ended: Mapped[bool] = mapped_column(Boolean, default=False)


class EventRow(Base):
    """One ingested event, stored exactly as received (canonical JSON in ``body``)."""

    __tablename__ = "event"
    __table_args__ = (
        UniqueConstraint("table_id", "seq", name="uq_event_table_seq"),
        # ids are unique per table (two tournaments' tables A1 derive the same ids)
        UniqueConstraint("table_id", "id", name="uq_event_table_id"),
        Index("ix_event_match_type", "match_id", "type"),
    )

    pk: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    id: Mapped[str] = mapped_column(String(128))
    table_id: Mapped[str] = mapped_column(ForeignKey("game_table.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(BigInteger)
    deal: Mapped[int] = mapped_column(Integer)
    t: Mapped[float] = mapped_column(Float)
    type: Mapped[str] = mapped_column(String(32))
    match_id: Mapped[int | None] = mapped_column(
        ForeignKey("match.id", ondelete="SET NULL"), nullable=True
    )
    body: Mapped[dict[str, object]] = mapped_column(JSON)
    #: sha256 of the canonical JSON: an identical retry is recognised without comparing bodies.
    digest: Mapped[str] = mapped_column(String(64))
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class TableHealth(Base):
    """One hall-health report of a table's kiosk (``kiosk/scoreboard/health.py``), kept for
    ``Settings.health_keep_s`` seconds. ``received_at`` is the scoreboard's clock."""

    __tablename__ = "table_health"
    __table_args__ = (Index("ix_table_health_table_id", "table_id", "id"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    table_id: Mapped[str] = mapped_column(ForeignKey("game_table.id", ondelete="CASCADE"))
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    body: Mapped[dict[str, object]] = mapped_column(JSON)


class Ticket(Base):
    """A one-time or short-lived secret handed out in a URL (``kiosk/scoreboard/tickets.py``);
    only its SHA-256 is stored. ``reveal``: a table's new token, shown on the admin page until
    ``expires_at`` (post/redirect/get: a reload shows it again, never makes another);
    ``cards``: the pairing codes of a print of table cards; ``pair``: a table card's pairing
    code, claimed once (``used_at``) to give a kiosk a new token. ``sealed``: what the URL's
    secret opens (a token, or JSON), encrypted with a key derived from the secret."""

    __tablename__ = "ticket"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournament.id", ondelete="CASCADE"))
    table_id: Mapped[str | None] = mapped_column(
        ForeignKey("game_table.id", ondelete="CASCADE"), nullable=True, index=True
    )
    sealed: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class RoundClockRow(Base):
    """The round clock of a time-limited round (``kiosk/scoreboard/clock.py``), append-only:
    ``start`` (with ``limit_s``), ``pause``, ``resume``, ``call`` (time called by the
    organiser). The clock's state is a fold over these rows."""

    __tablename__ = "round_clock"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("round.id", ondelete="CASCADE"), index=True)
    action: Mapped[str] = mapped_column(String(16))
    limit_s: Mapped[int | None] = mapped_column(Integer, nullable=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class DeckVersion(Base):
    """One upload of a tournament's deck (``kiosk/scoreboard/decks.py``): the deck profile of
    ``guandan vision enrol`` and, optionally, the classifier ``guandan vision adapt`` fitted to
    it. Append-only: each upload is the next ``version`` of its tournament, the highest is the
    one kiosks fetch, older ones are kept. The files' bytes are in ``deck_file`` (one row per
    file, loaded only to serve it); their SHA-256 and sizes are copied here for the manifest."""

    __tablename__ = "deck_version"
    __table_args__ = (
        UniqueConstraint("tournament_id", "version", name="uq_deck_version_tournament_version"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournament.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    #: the deck profile's ``name``
    name: Mapped[str] = mapped_column(String(200))
    note: Mapped[str] = mapped_column(String(400), default="")
    profile_sha256: Mapped[str] = mapped_column(String(64))
    profile_size: Mapped[int] = mapped_column(BigInteger)
    model_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    model_size: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    #: what the adapted classifier says of itself (deck, base model, when, validation figures)
    model_meta: Mapped[dict[str, object] | None] = mapped_column(JSON, nullable=True)
    uploaded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class DeckFile(Base):
    """The bytes of one file of a deck version: ``kind`` ``profile`` (JSON) or ``model``
    (ONNX). In the database, like everything else the scoreboard keeps: every serve process on
    a shared PostgreSQL serves it, and a backup of the database holds it."""

    __tablename__ = "deck_file"
    __table_args__ = (
        UniqueConstraint("deck_version_id", "kind", name="uq_deck_file_version_kind"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    deck_version_id: Mapped[int] = mapped_column(ForeignKey("deck_version.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))
    sha256: Mapped[str] = mapped_column(String(64))
    size: Mapped[int] = mapped_column(BigInteger)
    data: Mapped[bytes] = mapped_column(LargeBinary)
