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


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` laid on ``base``: tables merged key by key, everything else replaced."""
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _read(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        where = f" (extended by {seen[-1]})" if seen else ""
        raise ConfigError(
            f"{path}: no such training config{where} (see models/train.toml)"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    base = raw.pop("extends", None)
    if base is None:
        return raw
    if not isinstance(base, str):
        raise ConfigError(f"{path}: extends = {base!r}: the path of another config expected")
    parent = (path.parent / base).resolve()
    if parent in seen or parent == path.resolve():
        raise ConfigError(f"{path}: extends {base} in a loop")
    return _merge(_read(parent, (*seen, path.resolve())), raw)


def load_config(path: Path, root: Path | None = None) -> TrainConfig:
    """Read a TOML config; relative paths in it are taken from ``root`` (default: the cwd).

    ``extends = "other.toml"`` (a path from this file's folder) reads that config first and
    lays this one's tables over it, key by key: a second training round names only what it
    changes (models/train-photo2.toml)."""
    raw = _read(path)
    cfg = TrainConfig((root or Path.cwd()).resolve(), raw)
    for sec in ("data", "detector", "classifier", "export"):
        cfg.section(sec)
    return cfg
