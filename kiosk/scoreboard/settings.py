"""Settings from the environment (and the CLI, which overrides them)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

ENV_DB = "GUANDAN_SCOREBOARD_DB"
ENV_ADMIN_KEY = "GUANDAN_SCOREBOARD_ADMIN_KEY"
ENV_STANDINGS_INTERVAL = "GUANDAN_SCOREBOARD_PUSH_INTERVAL"
ENV_HEALTH_KEEP = "GUANDAN_SCOREBOARD_HEALTH_KEEP_H"
ENV_PEERS = "GUANDAN_SCOREBOARD_PEERS"


class SettingsError(ValueError):
    """A setting that cannot be used (bad database URL, bad number)."""


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/guandan-kiosk/scoreboard.db`` (``~/.local/share/...`` when unset)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "guandan-kiosk" / "scoreboard.db"


def normalise_db_url(value: str) -> str:
    """Turn what a user types into a SQLAlchemy URL.

    ``postgresql://`` and ``postgres://`` use psycopg 3; a plain path means a SQLite file;
    ``sqlite:///...`` is taken as is.
    """
    value = value.strip()
    if not value:
        raise SettingsError("empty database URL: give a file path or postgresql://user@host/db")
    if value.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + value.split("://", 1)[1]
    if value.startswith("postgresql+"):
        return value
    if value.startswith("sqlite:"):
        return value
    if "://" in value:
        scheme = value.split("://", 1)[0]
        raise SettingsError(
            f"unsupported database URL scheme {scheme!r}: use a SQLite file path, "
            "sqlite:///path or postgresql://user@host:port/db"
        )
    path = Path(value).expanduser()
    return f"sqlite:///{path}"


@dataclass(frozen=True)
class Settings:
    """What the scoreboard needs to run. ``from_env`` reads ``GUANDAN_SCOREBOARD_*``."""

    db_url: str = field(default_factory=lambda: normalise_db_url(str(default_db_path())))
    #: When set, admin pages and admin API calls need it (HTTP Basic password or Bearer).
    admin_key: str | None = None
    #: Run ``alembic upgrade head`` when the app starts.
    migrate: bool = True
    #: Minimum seconds between two standings pushes on the live stream.
    push_interval: float = 0.5
    #: Seconds of hall-health reports kept per table (older ones are dropped as new ones come).
    health_keep_s: float = 6 * 3600.0
    #: PostgreSQL: act as one scoreboard with the other serve processes on the database
    #: (LISTEN/NOTIFY; live.Peers). Off only for a deployment that is sure to run one process.
    peers: bool = True

    @classmethod
    def from_env(cls, db: str | None = None, admin_key: str | None = None) -> Settings:
        raw_db = db or os.environ.get(ENV_DB) or str(default_db_path())
        key = admin_key if admin_key is not None else os.environ.get(ENV_ADMIN_KEY) or None
        interval_raw = os.environ.get(ENV_STANDINGS_INTERVAL, "0.5")
        try:
            interval = float(interval_raw)
        except ValueError:
            raise SettingsError(
                f"{ENV_STANDINGS_INTERVAL}={interval_raw!r} is not a number of seconds"
            ) from None
        keep_raw = os.environ.get(ENV_HEALTH_KEEP, "6")
        try:
            keep_h = float(keep_raw)
        except ValueError:
            keep_h = -1.0
        if not 0.01 <= keep_h <= 24 * 366:
            raise SettingsError(
                f"{ENV_HEALTH_KEEP}={keep_raw!r}: give the hours of hall-health history to keep "
                "(0.01 to 8784)"
            )
        peers_raw = os.environ.get(ENV_PEERS, "on").strip().lower()
        if peers_raw not in ("on", "off", "1", "0", "true", "false", "yes", "no"):
            raise SettingsError(
                f"{ENV_PEERS}={peers_raw!r}: give on (several serve processes on one PostgreSQL "
                "act as one scoreboard; the default) or off (one process only)"
            )
        return cls(
            peers=peers_raw in ("on", "1", "true", "yes"),
            db_url=normalise_db_url(raw_db),
            admin_key=key,
            push_interval=interval,
            health_keep_s=keep_h * 3600.0,
        )

    @property
    def is_sqlite(self) -> bool:
        return self.db_url.startswith("sqlite")
