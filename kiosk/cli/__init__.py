"""The ``guandan`` command line (CONTRACT.md lists the verbs).

Each area registers its verbs in its own module (``kiosk/cli/<area>.py``, a ``register(subparsers)``
function); heavy imports happen inside the handlers so ``guandan rules`` starts fast.
Errors: one line on stderr; exit 2 for bad usage or input (any ``ValueError``, e.g. ``CardError``,
``ProfileError``), 1 for failures.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

#: Modules under kiosk.cli that register verbs, in help order.
AREAS = (
    "rules",
    "sim",
    "vision",
    "train",
    "synth",
    "table",
    "hardware",
    "scoreboard",
    "demo",
    "review",
)

Handler = Callable[[argparse.Namespace], int | None]


class CliError(Exception):
    """A failure to report on one line with exit code 1 (bad input uses ValueError, exit 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="guandan", description="guandan-kiosk: automated Guandan scoring")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subs.required = True
    for area in AREAS:
        try:
            mod = importlib.import_module(f"kiosk.cli.{area}")
        except ModuleNotFoundError as exc:
            if exc.name == f"kiosk.cli.{area}":
                continue  # that area is not built yet
            raise
        mod.register(subs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        rc = handler(args)
    except KeyboardInterrupt:
        print("guandan: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except ValueError as exc:
        print(f"guandan {args.command}: {exc}", file=sys.stderr)
        return 2
    except (CliError, OSError) as exc:
        print(f"guandan {args.command}: {exc}", file=sys.stderr)
        return 1
    return int(rc or 0)


if __name__ == "__main__":
    sys.exit(main())
