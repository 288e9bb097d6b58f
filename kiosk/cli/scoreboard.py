"""``guandan scoreboard``: the central service and its admin verbs.

serve           run the API, pages and live stream under uvicorn (migrates first)
migrate         alembic upgrade head (or a given revision)
add-event       create a tournament (the organiser's event); prints its id
add-pair        add a pair to a tournament
add-table       register a table; prints its bearer token (shown once)
rotate-token    give a table a new token (the old one stops working)
close-round     close a round; each unfinished match needs --decide MATCH=DECISION
reopen-round    reopen a closed round (with --reason)
decide          an organiser's decision on one unfinished match
standings       print the standings (CSV or JSON)
health          the hall's health: every table ok / degraded / offline (JSON or Prometheus)
withdraw        withdraw a pair (--pair N) or a table (--table T) of a tournament, or reinstate
deck upload     share the event's deck with every table: the profile of `guandan vision enrol`
                and optionally the classifier of `guandan vision adapt` (a new version)
deck show       the tournament's deck: the version kiosks fetch and the earlier ones (JSON)

``--db`` (or GUANDAN_SCOREBOARD_DB) is a SQLite file path or a postgresql:// URL; default
``$XDG_DATA_HOME/guandan-kiosk/scoreboard.db``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def _db_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        help="SQLite file path or postgresql://user@host:port/db "
        "(default: $GUANDAN_SCOREBOARD_DB or the user data dir)",
    )


def register(subparsers: Any) -> None:
    sb = subparsers.add_parser("scoreboard", help="central scoreboard service")
    verbs = sb.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    p = verbs.add_parser("serve", help="run the scoreboard (API, pages, live stream)")
    _db_arg(p)
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8700, help="port (default 8700)")
    p.add_argument(
        "--admin-key",
        help="require this key for admin pages/API "
        "(default: $GUANDAN_SCOREBOARD_ADMIN_KEY; none = open admin)",
    )
    p.add_argument(
        "--open-admin",
        action="store_true",
        help="serve on a non-loopback --host without an admin key (anyone on the network can "
        "set up the event, rotate table tokens and override results)",
    )
    p.add_argument("--no-migrate", action="store_true", help="do not run migrations at start")
    p.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    p.add_argument("--access-log", action="store_true", help="log every request")
    p.set_defaults(handler=_serve)

    p = verbs.add_parser("migrate", help="run the database migrations")
    _db_arg(p)
    p.add_argument("--revision", default="head", help="target revision (default head)")
    p.set_defaults(handler=_migrate)

    p = verbs.add_parser("add-event", help="create a tournament; prints its id")
    _db_arg(p)
    p.add_argument("--name", required=True)
    p.add_argument("--profile", default="swiss-421", help="rule profile (RULES.md)")
    p.add_argument("--lots-seed", type=int, help="seed of the drawing of lots (default random)")
    from kiosk.scoreboard.formats import FORMATS

    p.add_argument(
        "--format",
        default="swiss",
        choices=FORMATS,
        help="how rounds are made and pairs ranked (default swiss; RULES.md, kiosk/scoreboard/"
        "formats.py)",
    )
    p.add_argument("--groups", type=int, help="groups_knockout: number of groups (default 2)")
    p.add_argument(
        "--advance", type=int, help="groups_knockout: pairs each group sends on (default 2)"
    )
    p.set_defaults(handler=_add_event)

    p = verbs.add_parser("add-pair", help="add a pair to a tournament")
    _db_arg(p)
    p.add_argument("--event", type=int, required=True, help="tournament id")
    p.add_argument("--name", required=True)
    p.add_argument("--players", default="")
    p.add_argument("--club", default="")
    p.add_argument("--number", type=int, help="draw number (default next free)")
    p.set_defaults(handler=_add_pair)

    p = verbs.add_parser("add-table", help="register a table; prints its token")
    _db_arg(p)
    p.add_argument("--event", type=int, required=True, help="tournament id")
    p.add_argument("--table", required=True, help="table id (the `table` field of its events)")
    p.add_argument("--name", default="")
    p.set_defaults(handler=_add_table)

    p = verbs.add_parser("rotate-token", help="new token for a table")
    _db_arg(p)
    p.add_argument("--table", required=True)
    p.add_argument(
        "--event", type=int, help="tournament id (needed when several have a table of that id)"
    )
    p.set_defaults(handler=_rotate)

    decisions = "wait, as_played, forfeit_ew, forfeit_ns or void"
    p = verbs.add_parser("close-round", help="close a round (a decision per unfinished match)")
    _db_arg(p)
    p.add_argument("--event", type=int, required=True, help="tournament id")
    p.add_argument("--round", type=int, required=True, help="round number")
    p.add_argument(
        "--decide",
        action="append",
        default=[],
        metavar="MATCH=DECISION",
        help=f"decision for an unfinished match: {decisions} (repeat per match)",
    )
    p.add_argument("--reason", default="")
    p.set_defaults(handler=_close_round)

    p = verbs.add_parser("reopen-round", help="reopen a closed round")
    _db_arg(p)
    p.add_argument("--event", type=int, required=True, help="tournament id")
    p.add_argument("--round", type=int, required=True, help="round number")
    p.add_argument("--reason", required=True, help="why (recorded with the round)")
    p.set_defaults(handler=_reopen_round)

    p = verbs.add_parser("decide", help="decide an unfinished match")
    _db_arg(p)
    p.add_argument("--match", type=int, required=True, help="match id")
    p.add_argument("--decision", required=True, help=decisions)
    p.add_argument("--reason", default="")
    p.set_defaults(handler=_decide)

    p = verbs.add_parser("standings", help="print standings")
    _db_arg(p)
    p.add_argument("--event", type=int, required=True, help="tournament id")
    p.add_argument("--format", choices=["csv", "json"], default="csv")
    p.set_defaults(handler=_standings)

    p = verbs.add_parser("health", help="the hall's health: each table ok / degraded / offline")
    _db_arg(p)
    p.add_argument("--event", type=int, required=True, help="tournament id")
    p.add_argument("--format", choices=["json", "prometheus"], default="json")
    p.set_defaults(handler=_health)

    p = verbs.add_parser(
        "withdraw", help="withdraw a pair or a table (no more pairings), or reinstate it"
    )
    _db_arg(p)
    p.add_argument("--event", type=int, required=True, help="tournament id")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--pair", type=int, metavar="N", help="the pair's number")
    who.add_argument("--table", metavar="T", help="the table's id")
    p.add_argument("--reinstate", action="store_true", help="bring it back instead")
    p.set_defaults(handler=_withdraw)

    deck = verbs.add_parser(
        "deck",
        help="the tournament's shared deck (profile and adapted classifier) for every kiosk",
        description="One enrolment serves every table: upload the deck profile (guandan vision "
        "enrol) and, optionally, the classifier adapted to it (guandan vision adapt); each "
        "upload is the tournament's next version, and a kiosk started with its table token "
        "fetches the current one (kiosk/scoreboard/decks.py).",
    )
    dverbs = deck.add_subparsers(dest="deck_verb", metavar="VERB")
    dverbs.required = True
    p = dverbs.add_parser("upload", help="store the next deck version of a tournament")
    _db_arg(p)
    p.add_argument(
        "--event", "--tournament", dest="event", type=int, required=True, help="tournament id"
    )
    p.add_argument(
        "--profile", required=True, metavar="FILE", help="deck.json from guandan vision enrol"
    )
    p.add_argument(
        "--model",
        metavar="FILE",
        help="the adapted classifier from guandan vision adapt (deck.classes.onnx); default: "
        "the one beside --profile when there is one, else none (the kiosks' shipped model)",
    )
    p.add_argument("--no-model", action="store_true", help="share the profile alone")
    p.add_argument("--note", default="", help="a note for the organisers (up to 400 characters)")
    p.set_defaults(handler=_deck_upload)
    p = dverbs.add_parser("show", help="the tournament's deck versions (JSON)")
    _db_arg(p)
    p.add_argument(
        "--event", "--tournament", dest="event", type=int, required=True, help="tournament id"
    )
    p.set_defaults(handler=_deck_show)


def _settings(args: argparse.Namespace, **kw: Any) -> Any:
    from kiosk.scoreboard.settings import Settings

    return Settings.from_env(db=args.db, **kw)


def _session(args: argparse.Namespace) -> Any:
    from kiosk.scoreboard.db import make_engine, session_factory, upgrade

    engine = make_engine(_settings(args).db_url)
    try:
        upgrade(engine)
    except Exception as exc:
        from kiosk.cli import CliError

        raise CliError(f"cannot open or migrate the database: {exc}") from exc
    return session_factory(engine)()


def _api(fn: Any) -> Any:
    # ApiError (4xx) from the service is bad input: exit 2 with its message.
    from kiosk.scoreboard.service import ApiError

    try:
        return fn()
    except ApiError as exc:
        detail = exc.detail
        if isinstance(detail, dict) and isinstance(detail.get("message"), str):
            detail = detail["message"]
        elif not isinstance(detail, str):
            detail = json.dumps(detail, ensure_ascii=False)
        raise ValueError(detail) from None


def is_loopback(host: str) -> bool:
    import ipaddress

    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_open_admin(host: str, admin_key: str | None, open_admin: bool) -> None:
    """A scoreboard reachable from the hall network needs an admin key (or an explicit
    ``--open-admin``): without one any phone on the Wi-Fi can override results."""
    if admin_key or open_admin or is_loopback(host):
        return
    raise ValueError(
        f"--host {host}: the scoreboard would be reachable from the network with open admin "
        "pages; set an admin key (--admin-key KEY or GUANDAN_SCOREBOARD_ADMIN_KEY), or pass "
        "--open-admin to allow it deliberately"
    )


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from kiosk.scoreboard.app import create_app

    settings = _settings(args, admin_key=args.admin_key)
    check_open_admin(args.host, settings.admin_key, args.open_admin)
    if args.no_migrate:
        from dataclasses import replace

        settings = replace(settings, migrate=False)
    if not 0 < args.port < 65536:
        raise ValueError(f"--port {args.port}: give a port 1..65535")
    app = create_app(settings)
    print(
        f"scoreboard: http://{args.host}:{args.port}/scoreboard  admin: /admin  "
        f"API: /docs  db: {settings.db_url.split('://', 1)[0]}",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        access_log=args.access_log,
        # Kiosks post every few seconds: keep their connections open between posts.
        timeout_keep_alive=30,
    )
    return 0


def _migrate(args: argparse.Namespace) -> int:
    from kiosk.scoreboard.db import current_revision, make_engine, upgrade

    engine = make_engine(_settings(args).db_url)
    upgrade(engine, args.revision)
    print(f"database at revision {current_revision(engine)}")
    return 0


def _add_event(args: argparse.Namespace) -> int:
    from kiosk.scoreboard import service

    with _session(args) as s:
        t = _api(
            lambda: service.create_tournament(
                s, args.name, args.profile, args.lots_seed, args.format, args.groups, args.advance
            )
        )
        print(t.id)
    return 0


def _add_pair(args: argparse.Namespace) -> int:
    from kiosk.scoreboard import service

    with _session(args) as s:
        p = _api(
            lambda: service.add_pair(s, args.event, args.name, args.players, args.club, args.number)
        )
        print(p.number)
    return 0


def _add_table(args: argparse.Namespace) -> int:
    from pydantic import TypeAdapter, ValidationError

    from kiosk.scoreboard import service
    from kiosk.scoreboard.schemas import TableId

    try:
        TypeAdapter(TableId).validate_python(args.table)
    except ValidationError:
        raise ValueError(
            f"--table {args.table!r}: use letters, digits, '_', '-', '.' (1..64 characters)"
        ) from None
    with _session(args) as s:
        _gt, token = _api(lambda: service.add_table(s, args.event, args.table, args.name))
        print(token)
    return 0


def _rotate(args: argparse.Namespace) -> int:
    from kiosk.scoreboard import service

    with _session(args) as s:
        print(_api(lambda: service.rotate_token(s, args.table, args.event)))
    return 0


def _standings(args: argparse.Namespace) -> int:
    import csv

    from kiosk.scoreboard import service
    from kiosk.scoreboard.standings import CSV_COLUMNS

    with _session(args) as s:
        t = _api(lambda: service.get_tournament(s, args.event))
        rows = [x.to_json() for x in service.compute_standings(s, t)]
    if args.format == "json":
        print(json.dumps(rows, ensure_ascii=False))
    else:
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(CSV_COLUMNS)
        for r in rows:
            w.writerow([r[c] for c in CSV_COLUMNS])
    return 0


def _health(args: argparse.Namespace) -> int:
    from kiosk.scoreboard import service
    from kiosk.scoreboard.health import metrics_text, tournament_health

    with _session(args) as s:
        t = _api(lambda: service.get_tournament(s, args.event))
        data = tournament_health(s, t)
    if args.format == "prometheus":
        sys.stdout.write(metrics_text([data]))
    else:
        print(json.dumps(data, ensure_ascii=False))
    return 0


def _withdraw(args: argparse.Namespace) -> int:
    from kiosk.scoreboard import service

    flag = not args.reinstate
    with _session(args) as s:
        if args.pair is not None:
            p = _api(lambda: service.edit_pair(s, args.event, args.pair, withdrawn=flag))
            print(json.dumps({"pair": p.number, "name": p.name, "withdrawn": p.withdrawn}))
        else:
            gt = _api(lambda: service.edit_table(s, args.event, args.table, withdrawn=flag))
            print(json.dumps({"table": gt.code, "key": gt.id, "withdrawn": gt.withdrawn}))
    return 0


def _close_round(args: argparse.Namespace) -> int:
    from kiosk.scoreboard import service

    plan: list[tuple[int, str, str]] = []
    for item in args.decide:
        match, sep, decision = item.partition("=")
        if not sep or not match.strip().isdigit() or not decision.strip():
            raise ValueError(
                f"--decide {item!r}: write MATCH=DECISION, e.g. --decide 12=wait "
                "(decisions: wait, as_played, forfeit_ew, forfeit_ns, void)"
            )
        plan.append((int(match), decision.strip(), args.reason))
    with _session(args) as s:
        _api(lambda: service.close_round(s, args.event, args.round, plan, args.reason))
    print(f"round {args.round} closed")
    return 0


def _reopen_round(args: argparse.Namespace) -> int:
    from kiosk.scoreboard import service

    with _session(args) as s:
        _api(lambda: service.reopen_round(s, args.event, args.round, args.reason))
    print(f"round {args.round} reopened")
    return 0


def _decide(args: argparse.Namespace) -> int:
    from kiosk.scoreboard import service

    with _session(args) as s:
        m = _api(lambda: service.decide_match(s, args.match, args.decision, args.reason))
        print(f"match {m.id}: {m.decision}")
    return 0


def _read_upload(path: str, kind: str) -> bytes:
    """The bytes of --profile / --model (ValueError: exit 2, naming the option)."""
    from pathlib import Path

    from kiosk.scoreboard.decks import MAX_BYTES, too_large

    p = Path(path)
    if not p.is_file():
        raise ValueError(f"--{kind} {p}: file not found")
    size = p.stat().st_size
    if size > MAX_BYTES[kind]:
        raise ValueError(f"--{kind} {p}: {too_large(kind, size).detail}")
    return p.read_bytes()


def _deck_upload(args: argparse.Namespace) -> int:
    from pathlib import Path

    from kiosk.scoreboard import decks

    if args.model and args.no_model:
        raise ValueError("give --model FILE or --no-model, not both")
    profile = _read_upload(args.profile, "profile")
    model_path = args.model
    if model_path is None and not args.no_model:
        from vision.adapt import adapted_beside

        beside = adapted_beside(Path(args.profile))
        if beside.is_file():
            model_path = str(beside)
    model = _read_upload(model_path, "model") if model_path else None
    with _session(args) as s:
        dv, warnings = _api(lambda: decks.upload(s, args.event, profile, model, args.note))
        out = decks.manifest(dv)
    for w in warnings:
        print(f"guandan scoreboard deck: warning: {w}", file=sys.stderr)
    print(f"tournament {args.event}: deck {decks.describe(out)}", file=sys.stderr)
    print(json.dumps(out, ensure_ascii=False))
    return 0


def _deck_show(args: argparse.Namespace) -> int:
    from kiosk.scoreboard import decks, service

    with _session(args) as s:
        _api(lambda: service.get_tournament(s, args.event))
        out = {"tournament": args.event, **decks.summary(s, args.event)}
    print(json.dumps(out, ensure_ascii=False))
    return 0
