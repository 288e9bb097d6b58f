"""The tournament's format (swiss, round_robin, knockout); existing tournaments are Swiss.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04 18:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tournament") as batch:
        batch.add_column(
            sa.Column("format", sa.String(length=16), nullable=False, server_default="swiss")
        )


def downgrade() -> None:
    with op.batch_alter_table("tournament") as batch:
        batch.drop_column("format")
