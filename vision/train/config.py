"""The training config (TOML) with the defaults of models/train.toml."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A training config that cannot be used."""


@dataclass
class TrainConfig:
    root: Path
    raw: dict[str, Any] = field(default_factory=dict)

    def section(self, name: str) -> dict[str, Any]:
        sec = self.raw.get(name)
        if not isinstance(sec, dict):
            raise ConfigError(f"training config lacks the [{name}] section")
        return sec

    def path(self, section: str, key: str) -> Path:
        sec = self.section(section)
        if key not in sec:
            raise ConfigError(f"training config lacks {key} in [{section}] (see models/train.toml)")
        p = Path(str(sec[key]))
        return p if p.is_absolute() else self.root / p

    @property
    def version(self) -> str:
        return str(self.raw.get("version", "dev"))


def load_config(path: Path, root: Path | None = None) -> TrainConfig:
    """Read a TOML config; relative paths in it are taken from ``root`` (default: the cwd)."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such training config (see models/train.toml)") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    cfg = TrainConfig((root or Path.cwd()).resolve(), raw)
    for sec in ("data", "detector", "classifier", "export"):
        cfg.section(sec)
    return cfg
