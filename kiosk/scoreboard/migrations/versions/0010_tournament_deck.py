"""A tournament's shared deck (issue 44): ``deck_version`` (each upload of the deck profile and
the optional adapted classifier, versioned, with SHA-256 and sizes) and ``deck_file`` (the
files' bytes).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04 23:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deck_version",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("note", sa.String(length=400), nullable=False),
        sa.Column("profile_sha256", sa.String(length=64), nullable=False),
        sa.Column("profile_size", sa.BigInteger(), nullable=False),
        sa.Column("model_sha256", sa.String(length=64), nullable=True),
        sa.Column("model_size", sa.BigInteger(), nullable=True),
        sa.Column("model_meta", sa.JSON(), nullable=True),
        sa.Column("uploaded_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournament.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tournament_id", "version", name="uq_deck_version_tournament_version"),
    )
    op.create_table(
        "deck_file",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("deck_version_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["deck_version_id"], ["deck_version.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("deck_version_id", "kind", name="uq_deck_file_version_kind"),
    )


def downgrade() -> None:
    op.drop_table("deck_file")
    op.drop_table("deck_version")
