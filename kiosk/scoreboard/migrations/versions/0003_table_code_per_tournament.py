"""Tables belong to a tournament: ``game_table.code`` is the table's id as its kiosk knows it
(the ``table`` field of its events), unique within the tournament, so two tournaments may both
have a table ``A1``. ``game_table.id`` stays the scoreboard's own key: the code itself when no
other tournament has it, else ``<code>~<tournament>``.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-04 16:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # No table rebuild on SQLite: dropping game_table to rebuild it would cascade to its events.
    op.add_column("game_table", sa.Column("code", sa.String(length=64), nullable=True))
    op.execute("UPDATE game_table SET code = id")
    if op.get_bind().dialect.name != "sqlite":
        op.alter_column("game_table", "code", existing_type=sa.String(length=64), nullable=False)
    op.create_index(
        "uq_game_table_tournament_code", "game_table", ["tournament_id", "code"], unique=True
    )


def downgrade() -> None:
    op.drop_index("uq_game_table_tournament_code", table_name="game_table")
    with op.batch_alter_table("game_table") as batch:
        batch.drop_column("code")
