"""Event ids are unique per table, not across the scoreboard: two tournaments may each have a
table ``A1`` whose kiosks derive the same ids (UUID5 of table and seq). ``event.id`` loses its
own unique constraint; ``(table_id, id)`` gets one (``uq_event_table_id``), which also serves the
ingest path's lookups by table and id.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-04 16:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def _event_table(unique: sa.UniqueConstraint) -> sa.Table:
    """The ``event`` table as SQLite gets it rebuilt (its unique on ``id`` has no name to drop)."""
    return sa.Table(
        "event",
        sa.MetaData(),
        sa.Column("pk", sa.Integer(), nullable=False),
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
        unique,
        sa.UniqueConstraint("table_id", "seq", name="uq_event_table_seq"),
        sa.Index("ix_event_match_type", "match_id", "type"),
    )


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        new = _event_table(sa.UniqueConstraint("table_id", "id", name="uq_event_table_id"))
        with op.batch_alter_table("event", copy_from=new, recreate="always"):
            pass
        return
    names = bind.execute(
        sa.text(
            "SELECT c.conname FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid "
            "JOIN pg_namespace n ON n.oid = t.relnamespace "
            "WHERE t.relname = 'event' AND n.nspname = current_schema() AND c.contype = 'u' "
            "AND c.conkey = ARRAY[(SELECT attnum FROM pg_attribute "
            "WHERE attrelid = t.oid AND attname = 'id')]::int2[]"
        )
    ).scalars()
    for name in list(names):
        op.drop_constraint(name, "event", type_="unique")
    op.create_unique_constraint("uq_event_table_id", "event", ["table_id", "id"])


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        new = _event_table(sa.UniqueConstraint("id", name="uq_event_id"))
        with op.batch_alter_table("event", copy_from=new, recreate="always"):
            pass
        return
    op.drop_constraint("uq_event_table_id", "event", type_="unique")
    op.create_unique_constraint("event_id_key", "event", ["id"])
