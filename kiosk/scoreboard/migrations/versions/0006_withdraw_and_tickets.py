"""Organiser's admin: pairs and tables can be withdrawn (``withdrawn``), and ``ticket``: the
short-lived secrets of the token page (post/redirect/get) and the table cards' pairing codes.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-04 17:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # add_column needs no table rebuild on SQLite (a rebuild would cascade deletes)
    for table in ("pair", "game_table"):
        op.add_column(
            table,
            sa.Column("withdrawn", sa.Boolean(), nullable=False, server_default=sa.false()),
        )
    op.create_table(
        "ticket",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.String(length=64), nullable=True),
        sa.Column("sealed", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournament.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["table_id"], ["game_table.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_ticket_table_id", "ticket", ["table_id"])


def downgrade() -> None:
    op.drop_index("ix_ticket_table_id", table_name="ticket")
    op.drop_table("ticket")
    with op.batch_alter_table("game_table") as batch:
        batch.drop_column("withdrawn")
    with op.batch_alter_table("pair") as batch:
        batch.drop_column("withdrawn")
