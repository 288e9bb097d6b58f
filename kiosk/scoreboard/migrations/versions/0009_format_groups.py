"""Formats with longer names (knockout_repechage) and a group stage's settings: the number of
groups and the pairs each sends to the knockout (groups_knockout, 000 篇11); NULL for the other
formats.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04 21:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ALTER TABLE ... ADD COLUMN: no table copy. On SQLite a batch copy of ``tournament``
    # drops the old table, and with foreign keys on that deletes every table, pair and round
    # of it through ON DELETE CASCADE. SQLite does not enforce a VARCHAR's length, so the
    # wider ``format`` is PostgreSQL's only.
    op.add_column("tournament", sa.Column("groups", sa.Integer(), nullable=True))
    op.add_column("tournament", sa.Column("advance", sa.Integer(), nullable=True))
    if op.get_bind().dialect.name != "sqlite":
        op.alter_column(
            "tournament",
            "format",
            existing_type=sa.String(length=16),
            type_=sa.String(length=32),
            existing_nullable=False,
            existing_server_default="swiss",
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.alter_column(
            "tournament",
            "format",
            existing_type=sa.String(length=32),
            type_=sa.String(length=16),
            existing_nullable=False,
            existing_server_default="swiss",
        )
    if op.get_bind().dialect.name == "sqlite":  # in place (SQLite >= 3.35), no table copy
        op.execute("ALTER TABLE tournament DROP COLUMN advance")
        op.execute("ALTER TABLE tournament DROP COLUMN groups")
    else:
        op.drop_column("tournament", "advance")
        op.drop_column("tournament", "groups")
