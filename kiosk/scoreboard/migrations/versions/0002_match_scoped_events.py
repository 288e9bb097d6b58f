"""Match-scoped events: organisers' decisions on unfinished matches, and round closings.

Events now carry ``match_id`` in their body (kept as received; filed in ``event.match_id`` as
before). Closing a round with unfinished matches needs a decision per match
(``match_decision``, append-only; the latest is copied to ``match.decision*``); every close and
reopen of a round is a ``round_change`` row with its reason.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-04 15:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("match") as batch:
        batch.add_column(sa.Column("decision", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("decision_winner", sa.String(length=8), nullable=True))
        batch.add_column(sa.Column("decision_level_ew", sa.String(length=2), nullable=True))
        batch.add_column(sa.Column("decision_level_ns", sa.String(length=2), nullable=True))
    op.create_table(
        "match_decision",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("decision", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=400), nullable=False),
        sa.Column("at_seq", sa.BigInteger(), nullable=True),
        sa.Column("winner", sa.String(length=8), nullable=True),
        sa.Column("level_ew", sa.String(length=2), nullable=True),
        sa.Column("level_ns", sa.String(length=2), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["match_id"], ["match.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_match_decision_match_id", "match_decision", ["match_id"])
    op.create_table(
        "round_change",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("round_id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=400), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["round_id"], ["round.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_round_change_round_id", "round_change", ["round_id"])


def downgrade() -> None:
    op.drop_index("ix_round_change_round_id", table_name="round_change")
    op.drop_table("round_change")
    op.drop_index("ix_match_decision_match_id", table_name="match_decision")
    op.drop_table("match_decision")
    with op.batch_alter_table("match") as batch:
        batch.drop_column("decision_level_ns")
        batch.drop_column("decision_level_ew")
        batch.drop_column("decision_winner")
        batch.drop_column("decision")
