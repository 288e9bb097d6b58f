"""Hall health: ``table_health``, the reports of the table kiosks (camera, outbox, disk, CPU,
versions), kept for a bounded time (kiosk/scoreboard/health.py).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04 16:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "table_health",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("table_id", sa.String(length=64), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["table_id"], ["game_table.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_table_health_table_id", "table_health", ["table_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_table_health_table_id", table_name="table_health")
    op.drop_table("table_health")
