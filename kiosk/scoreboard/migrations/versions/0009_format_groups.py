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
    with op.batch_alter_table("tournament") as batch:
        batch.alter_column(
            "format",
            existing_type=sa.String(length=16),
            type_=sa.String(length=32),
            existing_nullable=False,
            existing_server_default="swiss",
        )
        batch.add_column(sa.Column("groups", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("advance", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tournament") as batch:
        batch.drop_column("advance")
        batch.drop_column("groups")
        batch.alter_column(
            "format",
            existing_type=sa.String(length=32),
            type_=sa.String(length=16),
            existing_nullable=False,
            existing_server_default="swiss",
        )
