"""Initial schema: tournament, pairs, tables, rounds, matches, deals and the event log.

Revision ID: 0001
Revises:
Create Date: 2026-11-29 14:03:29.815207
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tournament",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("profile", sa.String(length=64), nullable=False),
        sa.Column("lots_seed", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "game_table",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournament.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_table(
        "pair",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("players", sa.String(length=400), nullable=False),
        sa.Column("club", sa.String(length=200), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournament.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tournament_id", "number"),
    )
    op.create_table(
        "round",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournament.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tournament_id", "number"),
    )
    op.create_table(
        "match",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("round_id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.String(length=64), nullable=True),
        sa.Column("pair_ew_id", sa.Integer(), nullable=False),
        sa.Column("pair_ns_id", sa.Integer(), nullable=True),
        sa.Column("override", sa.String(length=16), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("winner", sa.String(length=8), nullable=True),
        sa.Column("level_ns", sa.String(length=2), nullable=False),
        sa.Column("level_ew", sa.String(length=2), nullable=False),
        sa.Column("deals_played", sa.Integer(), nullable=False),
        sa.Column("fouls_ns", sa.Integer(), nullable=False),
        sa.Column("fouls_ew", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["pair_ew_id"], ["pair.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["pair_ns_id"], ["pair.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["round_id"], ["round.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["table_id"], ["game_table.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("round_id", "table_id"),
    )
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.create_index("ix_match_table", ["table_id"], unique=False)

    op.create_table(
        "deal",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("level", sa.String(length=2), nullable=True),
        sa.Column("leader", sa.String(length=1), nullable=True),
        sa.Column("finish_order", sa.String(length=8), nullable=True),
        sa.Column("level_ns", sa.String(length=2), nullable=True),
        sa.Column("level_ew", sa.String(length=2), nullable=True),
        sa.Column("ended", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["match_id"], ["match.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("match_id", "number"),
    )
    op.create_table(
        "event",
        sa.Column("pk", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("id", sa.String(length=128), nullable=False),
        sa.Column("table_id", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("deal", sa.Integer(), nullable=False),
        sa.Column("t", sa.Float(), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=True),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["match_id"], ["match.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["table_id"], ["game_table.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("pk"),
        sa.UniqueConstraint("id"),
        sa.UniqueConstraint("table_id", "seq", name="uq_event_table_seq"),
    )
    with op.batch_alter_table("event", schema=None) as batch_op:
        batch_op.create_index("ix_event_match_type", ["match_id", "type"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("event", schema=None) as batch_op:
        batch_op.drop_index("ix_event_match_type")

    op.drop_table("event")
    op.drop_table("deal")
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.drop_index("ix_match_table")

    op.drop_table("match")
    op.drop_table("round")
    op.drop_table("pair")
    op.drop_table("game_table")
    op.drop_table("tournament")
