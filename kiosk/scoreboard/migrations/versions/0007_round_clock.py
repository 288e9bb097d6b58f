"""The round clock of time-limited rounds: ``round_clock`` rows (start, pause, resume, call).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-04 17:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "round_clock",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("round_id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("limit_s", sa.Integer(), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["round_id"], ["round.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_round_clock_round_id", "round_clock", ["round_id"])


def downgrade() -> None:
    op.drop_index("ix_round_clock_round_id", table_name="round_clock")
    op.drop_table("round_clock")
