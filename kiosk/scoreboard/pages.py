"""Server-rendered pages: the public scoreboard and the admin pages (plain HTML forms, no JS
needed; the scoreboard page adds a few lines of JS for live updates and refreshes without)."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from sqlalchemy import select
from starlette.concurrency import run_in_threadpool

from kiosk.scoreboard import decks, service, tickets
from kiosk.scoreboard.formats import FORMAT_TEXT
from kiosk.scoreboard.formats import GROUP_FORMATS as FORMAT_GROUPS
from kiosk.scoreboard.models import Tournament
from kiosk.scoreboard.schemas import IntId
from kiosk.scoreboard.service import ApiError
from kiosk.scoreboard.standings import PROFILES
from kiosk.scoreboard.state import State, admin_ok

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).with_name("templates")))
#: the public pages' one string catalogue ``{key: {zh, en}}`` (Chinese default, ``?lang=en``)
CATALOGUE = Path(__file__).with_name("static") / "i18n.json"
LANGS = ("zh", "en")
NEXT_ROUND_TEXT = {
    "swiss": "Swiss pairing 电脑编排",
    "round_robin": "Next round of the round robin 大循环下一轮",
    "knockout": "Next knockout round from the winners 按胜者编排下一轮淘汰赛",
    "knockout_bo3": "Next game, or next round from the winners 下一局或按胜者编排下一轮",
    "knockout_bo3_sf": "Next game, or next round from the winners 下一局或按胜者编排下一轮",
    "knockout_redraw": "Next round, drawn anew 重新抽签编排下一轮",
    "knockout_repechage": "Next round (or the repechage) 编排下一轮（或附加赛）",
    "groups_knockout": "Next group round, then the knockout 小组赛下一轮，之后淘汰赛",
}
OVERRIDES = ("", "ew", "ns", "draw", "ew_no_show", "ns_no_show", "both_no_show")


def parse_pairings(text: str) -> list[tuple[str | None, int, int | None]]:
    """Lines ``TABLE EW NS`` (pair numbers) or ``bye PAIR``; blank lines and ``#`` ignored."""
    out: list[tuple[str | None, int, int | None]] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.replace(",", " ").split()
        try:
            if parts[0].lower() == "bye" and len(parts) == 2:
                out.append((None, int(parts[1]), None))
            elif len(parts) == 3:
                out.append((parts[0], int(parts[1]), int(parts[2])))
            else:
                raise ValueError
        except ValueError:
            raise ApiError(
                422,
                f"pairings line {lineno} ({raw.strip()!r}): write 'TABLE EW NS' with pair "
                "numbers, e.g. 'T1 1 2', or 'bye 5'",
            ) from None
    if not out:
        raise ApiError(422, "no pairings given: one line per table, 'TABLE EW NS'")
    return out


def _count(value: str, field: str) -> int | None:
    """A form's whole number, or None when left empty."""
    if not value.strip():
        return None
    try:
        return int(value.strip())
    except ValueError:
        raise ApiError(422, f"{field}: {value.strip()!r} is not a whole number") from None


def _flag(value: str | None, field: str) -> bool | None:
    if value is None or value == "":
        return None
    if value in ("1", "true", "on"):
        return True
    if value in ("0", "false", "off"):
        return False
    raise ApiError(422, f"form field {field!r} = {value!r}: give 1 or 0")


def kiosk_command(base: str, code: str, token: str, tid: int) -> str:
    """The command line that runs a table's kiosk against this scoreboard."""
    return (
        f"guandan table run --scoreboard {base.rstrip('/')} --table {code} --token {token} "
        f"--tournament {tid}"
    )


def qr_svg(text: str, title: str) -> Markup:
    """``text`` as a QR code, inline SVG (segno, pure Python)."""
    import segno

    qr = segno.make(text, error="m")
    return Markup(qr.svg_inline(scale=5, border=2, title=title, omitsize=True))


def _clocks(s: Any, tid: int) -> dict[int, dict[str, Any]]:
    """The clock of each open round (round number -> ``clock.clock_json``)."""
    from kiosk.scoreboard.clock import clock_json
    from kiosk.scoreboard.models import Round

    numbers = s.execute(
        select(Round.number).where(Round.tournament_id == tid, Round.status == "open")
    ).scalars()
    return {n: clock_json(s, tid, n) for n in numbers}


_CATALOGUE: dict[str, dict[str, str]] | None = None


def catalogue() -> dict[str, dict[str, str]]:
    global _CATALOGUE
    if _CATALOGUE is None:
        _CATALOGUE = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    return _CATALOGUE


class Tr:
    """``t(key, **params)`` in one language. A key without a text in that language is shown
    as the key itself and remembered in ``missing`` (the page lists them on
    ``<html data-i18n-missing>``; the tests fail on any)."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.missing: list[str] = []

    def __call__(self, key: str, **params: Any) -> str:
        text = catalogue().get(key, {}).get(self.lang)
        if not text:
            if key not in self.missing:
                self.missing.append(key)
            return key
        return text.format(**params) if params else text


def pick_lang(request: Request, lang: str | None) -> str:
    """``?lang=zh|en``, else the ``gd-lang`` cookie, else Chinese."""
    if lang in LANGS:
        return str(lang)
    cookie = request.cookies.get("gd-lang")
    return cookie if cookie in LANGS else "zh"


def _mmss(x: float | None) -> str:
    if x is None:
        return "–"
    v = max(0, int(x))
    return f"{v // 60}:{v % 60:02d}"


def board_data(s: Any, tid: int) -> dict[str, Any] | None:
    """What the public board shows, from the database (the tables' live summaries are added
    from the hub by the caller)."""
    from kiosk.scoreboard import disputes
    from kiosk.scoreboard.standings import match_points

    t = s.get(Tournament, tid)
    if t is None:
        return None
    names = {p.number: p.name for p in t.pairs}
    rounds = service.rounds_json(s, tid)
    byes: dict[int, int] = {}
    by_match: dict[int, dict[str, Any]] = {}
    for r in rounds:
        for m in r["matches"]:
            m["ew_name"] = names.get(m["ew"], str(m["ew"]))
            m["ns_name"] = names.get(m["ns"], str(m["ns"])) if m["ns"] is not None else None
            by_match[m["id"]] = m
            if m["ns"] is None:
                byes[m["ew"]] = byes.get(m["ew"], 0) + 1
    standings = [x.to_json() for x in service.compute_standings(s, t)]
    for row in standings:
        # a bye is counted as a win by the standings: shown as a bye, not as a game won
        row["byes"] = byes.get(int(row["pair"]), 0)  # type: ignore[arg-type]
        row["games_won"] = int(row["wins"]) - row["byes"]  # type: ignore[call-overload]
    tables = service.tables_of(s, tid)
    bracket = service.bracket_json(s, t)
    for br in bracket or []:
        for bm in br["matches"]:
            bm["ew_name"] = names.get(bm["ew"], str(bm["ew"]))
            bm["ns_name"] = names.get(bm["ns"], str(bm["ns"])) if bm["ns"] is not None else None
            full = by_match.get(bm["match"], {})
            bm["status"] = full.get("status")
            # the score shown by each side: deal points (a deal-points profile), else levels
            kind = "points" if "points_ew" in full else "level"
            bm["score_ew"], bm["score_ns"] = full.get(kind + "_ew"), full.get(kind + "_ns")
    return {
        "t": {
            "id": t.id,
            "name": t.name,
            "profile": t.profile,
            "format": t.format,
            "deal_points": service.point_table(t.profile) is not None,
        },
        "bracket": bracket,
        "groups": service.groups_json(s, t),
        "bracket_places": service.knockout_places(s, t) if bracket is not None else {},
        "pair_names": names,
        "table_ids": [gt.id for gt in tables],
        "codes": {gt.id: gt.code for gt in tables},
        "standings": standings,
        "rounds": rounds,
        "matches": by_match,
        "bye_points": match_points(t.profile).bye,
        "clocks": _clocks(s, tid),
        "disputes": disputes.table_disputes(s, tables),
    }


def register_pages(app: FastAPI) -> None:
    def sb_of(request: Request) -> State:
        sb: State = request.app.state.sb
        return sb

    def guard(request: Request) -> Response | None:
        sb = sb_of(request)
        if not admin_ok(request, sb):
            return HTMLResponse(
                "<h1>401</h1><p>Admin key required: log in with any user name and the key "
                "(GUANDAN_SCOREBOARD_ADMIN_KEY) as password.</p>",
                status_code=401,
                headers={"WWW-Authenticate": 'Basic realm="guandan scoreboard", charset="UTF-8"'},
            )
        if request.method == "POST":
            origin = request.headers.get("origin") or request.headers.get("referer")
            if origin and urlsplit(origin).netloc not in ("", request.headers.get("host", "")):
                return HTMLResponse(
                    "<h1>403</h1><p>Cross-site form post refused.</p>", status_code=403
                )
        return None

    def tournament_page(
        request: Request,
        tid: IntId,
        *,
        token: dict[str, str] | None = None,
        error: str | None = None,
        status: int = 200,
    ) -> Response:
        sb = sb_of(request)
        with sb.sf() as s:
            try:
                t = service.get_tournament(s, tid)
            except ApiError as exc:
                return HTMLResponse(f"<h1>404</h1><p>{exc.detail}</p>", status_code=404)
            ctx: dict[str, Any] = {
                "t": t,
                "pairs": list(t.pairs),
                "tables": service.tables_of(s, tid),
                "rounds": service.rounds_json(s, tid),
                "standings": [x.to_json() for x in service.compute_standings(s, t)],
                "token": token,
                "error": error,
                "overrides": OVERRIDES,
                "decisions": service.DECISION_TEXT,
                "base_url": str(request.base_url).rstrip("/"),
                "clocks": _clocks(s, tid),
                "formats": FORMAT_TEXT,
                "next_round_text": NEXT_ROUND_TEXT,
                "deck": decks.summary(s, tid),
            }
            return TEMPLATES.TemplateResponse(
                request, "admin_tournament.html", ctx, status_code=status
            )

    def run(request: Request, tid: IntId, fn: Any) -> Response:
        sb = sb_of(request)
        try:
            with sb.sf() as s:
                fn(s)
        except ApiError as exc:
            sb.directory.invalidate()
            detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
            return tournament_page(request, tid, error=detail, status=exc.status)
        sb.directory.invalidate()
        return RedirectResponse(f"/admin/{tid}", status_code=303)

    @app.get("/admin", include_in_schema=False)
    def admin_index(request: Request) -> Response:
        if (denied := guard(request)) is not None:
            return denied
        with sb_of(request).sf() as s:
            ts = list(s.execute(select(Tournament).order_by(Tournament.id)).scalars())
        return TEMPLATES.TemplateResponse(
            request,
            "admin_index.html",
            {"tournaments": ts, "profiles": PROFILES, "formats": FORMAT_TEXT, "error": None},
        )

    @app.post("/admin/tournaments", include_in_schema=False)
    def admin_create(
        request: Request,
        name: Annotated[str, Form()] = "",
        profile: Annotated[str, Form()] = "swiss-421",
        format: Annotated[str, Form()] = "swiss",
        groups: Annotated[str, Form()] = "",
        advance: Annotated[str, Form()] = "",
    ) -> Response:
        if (denied := guard(request)) is not None:
            return denied
        sb = sb_of(request)
        try:
            if not name.strip():
                raise ApiError(422, "the tournament needs a name")
            n_groups = _count(groups, "groups 小组数")
            n_advance = _count(advance, "advance 出线数")
            if format not in FORMAT_GROUPS:  # the form's group fields apply to a group stage
                n_groups = n_advance = None
            with sb.sf() as s:
                t = service.create_tournament(
                    s, name.strip()[:200], profile, None, format, n_groups, n_advance
                )
        except ApiError as exc:
            with sb.sf() as s:
                ts = list(s.execute(select(Tournament).order_by(Tournament.id)).scalars())
            return TEMPLATES.TemplateResponse(
                request,
                "admin_index.html",
                {
                    "tournaments": ts,
                    "profiles": PROFILES,
                    "formats": FORMAT_TEXT,
                    "error": exc.detail,
                },
                status_code=exc.status,
            )
        return RedirectResponse(f"/admin/{t.id}", status_code=303)

    @app.get("/admin/{tid}", include_in_schema=False)
    def admin_tournament(request: Request, tid: IntId) -> Response:
        if (denied := guard(request)) is not None:
            return denied
        return tournament_page(request, tid)

    @app.post("/admin/{tid}/deck", include_in_schema=False)
    async def admin_deck(request: Request, tid: IntId) -> Response:
        """Share a deck (the profile, optionally the adapted classifier): the next version."""
        if (denied := guard(request)) is not None:
            return denied
        sb = sb_of(request)
        try:
            refused = decks.upload_size_refused(request.headers.get("content-length"))
            if refused is not None:
                raise refused
            try:
                form = await request.form(max_files=2, max_fields=4)
            except Exception as exc:  # noqa: BLE001 - not a multipart form
                raise ApiError(422, f"cannot read the form ({exc})") from None
            try:
                files: dict[str, bytes | None] = {}
                for kind in decks.KINDS:
                    part = form.get(kind)
                    data = (
                        await part.read(decks.MAX_BYTES[kind] + 1)
                        if part is not None and hasattr(part, "read")
                        else None
                    )
                    if data is not None and len(data) > decks.MAX_BYTES[kind]:
                        raise decks.too_large(kind, len(data))
                    files[kind] = data or None
                note = form.get("note")
            finally:
                await form.close()
            profile = files["profile"]
            if profile is None:
                raise ApiError(
                    422,
                    "choose the deck profile (deck.json of guandan vision enrol) 请选择牌组档案",
                )

            def store() -> list[str]:
                with sb.sf() as s:
                    dv, warnings = decks.upload(
                        s, tid, profile, files["model"], note if isinstance(note, str) else ""
                    )
                    return [
                        f"deck v{dv.version} stored 已保存; warning 注意: {w}" for w in warnings
                    ]

            warnings = await run_in_threadpool(store)
        except ApiError as exc:
            detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
            code = exc.status
            return await run_in_threadpool(
                lambda: tournament_page(request, tid, error=detail, status=code)
            )
        if warnings:
            return await run_in_threadpool(
                lambda: tournament_page(request, tid, error=" ".join(warnings))
            )
        return RedirectResponse(f"/admin/{tid}#deck", status_code=303)

    @app.post("/admin/{tid}/pairs", include_in_schema=False)
    def admin_pair(
        request: Request,
        tid: IntId,
        name: Annotated[str, Form()] = "",
        players: Annotated[str, Form()] = "",
        club: Annotated[str, Form()] = "",
        number: Annotated[str, Form()] = "",
    ) -> Response:
        if (denied := guard(request)) is not None:
            return denied

        def do(s: Any) -> None:
            if not name.strip():
                raise ApiError(422, "the pair needs a name")
            num = None
            if number.strip():
                if not number.strip().isdigit() or not 1 <= int(number) <= 100_000:
                    raise ApiError(422, f"pair number {number!r}: give a whole number 1..100000")
                num = int(number)
            service.add_pair(s, tid, name.strip()[:200], players[:400], club[:200], num)

        return run(request, tid, do)

    @app.post("/admin/{tid}/tables", include_in_schema=False)
    def admin_table(
        request: Request,
        tid: IntId,
        table_id: Annotated[str, Form()] = "",
        name: Annotated[str, Form()] = "",
    ) -> Response:
        if (denied := guard(request)) is not None:
            return denied
        from pydantic import TypeAdapter, ValidationError

        from kiosk.scoreboard.schemas import TableId

        sb = sb_of(request)
        try:
            TypeAdapter(TableId).validate_python(table_id)
        except ValidationError:
            return tournament_page(
                request,
                tid,
                status=422,
                error=f"table id {table_id!r}: letters, digits, '_', '-', '.'; 1..64 characters",
            )
        try:
            with sb.sf() as s:
                gt, token = service.add_table(s, tid, table_id, name[:200])
                ticket = tickets.reveal(s, tid, gt.id, token)
        except ApiError as exc:
            return tournament_page(request, tid, error=str(exc.detail), status=exc.status)
        sb.directory.invalidate()
        return RedirectResponse(f"/admin/{tid}/tokens/{ticket}", status_code=303)

    @app.post("/admin/{tid}/tables/{table_id}/token", include_in_schema=False)
    def admin_rotate(request: Request, tid: IntId, table_id: str) -> Response:
        if (denied := guard(request)) is not None:
            return denied
        sb = sb_of(request)
        try:
            with sb.sf() as s:
                token = service.rotate_token(s, table_id, tid)
                gt = service.find_table(s, table_id, tid)
                ticket = tickets.reveal(s, tid, gt.id, token)
        except ApiError as exc:
            return tournament_page(request, tid, error=str(exc.detail), status=exc.status)
        sb.directory.invalidate()
        return RedirectResponse(f"/admin/{tid}/tokens/{ticket}", status_code=303)

    @app.get("/admin/{tid}/tokens/{ticket}", include_in_schema=False)
    def admin_token(request: Request, tid: IntId, ticket: str) -> Response:
        """The new token of a table (post/redirect/get: a reload shows it again for 15 min)."""
        if (denied := guard(request)) is not None:
            return denied
        try:
            with sb_of(request).sf() as s:
                shown = tickets.open_reveal(s, tid, ticket)
        except ApiError as exc:
            return tournament_page(request, tid, error=str(exc.detail), status=exc.status)
        shown["command"] = kiosk_command(str(request.base_url), shown["code"], shown["token"], tid)
        return tournament_page(request, tid, token=shown)

    # ------------------------------------------------------------------ edit and withdraw
    @app.post("/admin/{tid}/pairs/{number}", include_in_schema=False)
    def admin_edit_pair(
        request: Request,
        tid: IntId,
        number: IntId,
        name: Annotated[str | None, Form()] = None,
        players: Annotated[str | None, Form()] = None,
        club: Annotated[str | None, Form()] = None,
        withdrawn: Annotated[str | None, Form()] = None,
    ) -> Response:
        """Form fields present are changed: ``name``, ``players``, ``club``, ``withdrawn``
        (``1`` withdraw, ``0`` reinstate)."""
        if (denied := guard(request)) is not None:
            return denied

        def do(s: Any) -> None:
            service.edit_pair(
                s,
                tid,
                number,
                name=name,
                players=players,
                club=club,
                withdrawn=_flag(withdrawn, "withdrawn"),
            )

        return run(request, tid, do)

    @app.post("/admin/{tid}/tables/{table_id}/edit", include_in_schema=False)
    def admin_edit_table(
        request: Request,
        tid: IntId,
        table_id: str,
        name: Annotated[str | None, Form()] = None,
        withdrawn: Annotated[str | None, Form()] = None,
    ) -> Response:
        if (denied := guard(request)) is not None:
            return denied
        return run(
            request,
            tid,
            lambda s: service.edit_table(
                s, tid, table_id, name=name, withdrawn=_flag(withdrawn, "withdrawn")
            ),
        )

    # ------------------------------------------------------------------ table cards
    @app.post("/admin/{tid}/cards", include_in_schema=False)
    def admin_print_cards(
        request: Request, tid: IntId, base: Annotated[str, Form()] = ""
    ) -> Response:
        """New pairing codes for the tables in use, then (303) the printable cards."""
        if (denied := guard(request)) is not None:
            return denied
        base = (base or str(request.base_url)).strip().rstrip("/")
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.netloc or len(base) > 200:
            return tournament_page(
                request,
                tid,
                status=422,
                error=f"scoreboard address {base!r}: give the URL the kiosks reach it at, e.g. "
                "http://10.0.0.2:8700 (计分中心地址无效)",
            )
        try:
            with sb_of(request).sf() as s:
                ticket = tickets.print_cards(s, tid, base)
        except ApiError as exc:
            return tournament_page(request, tid, error=str(exc.detail), status=exc.status)
        return RedirectResponse(f"/admin/{tid}/cards/{ticket}", status_code=303)

    @app.get("/admin/{tid}/cards/{ticket}", include_in_schema=False)
    def admin_cards(request: Request, tid: IntId, ticket: str) -> Response:
        if (denied := guard(request)) is not None:
            return denied
        try:
            with sb_of(request).sf() as s:
                t = service.get_tournament(s, tid)
                cards = tickets.open_cards(s, tid, ticket)
                name = t.name
        except ApiError as exc:
            return tournament_page(request, tid, error=str(exc.detail), status=exc.status)
        for c in cards:
            c["qr"] = qr_svg(c["url"], f"{c['code']}: {c['url']}")
        return TEMPLATES.TemplateResponse(
            request,
            "cards.html",
            {"cards": cards, "tname": name, "tid": tid, "days": tickets.PAIR_S // 86400},
        )

    @app.get("/admin/print/markers.pdf", include_in_schema=False)
    def admin_markers(request: Request, page: str = "a4") -> Response:
        """The four ArUco corner markers of a table (``guandan hardware markers``) as a PDF."""
        if (denied := guard(request)) is not None:
            return denied
        from hardware.markers import MarkerSheetError, layout_sheet, sheet_pdf

        try:
            data = sheet_pdf(layout_sheet(page))
        except MarkerSheetError as exc:
            return HTMLResponse(f"<h1>422</h1><p>{exc}</p>", status_code=422)
        return Response(
            data,
            media_type="application/pdf",
            headers={"Content-Disposition": f'inline; filename="markers-{page}.pdf"'},
        )

    # ------------------------------------------------------------------ pairing a kiosk
    @app.get("/pair/{ticket}", include_in_schema=False)
    def pair_page(request: Request, ticket: str) -> Response:
        """A table card's QR code: confirm to give this table's kiosk a new token."""
        try:
            with sb_of(request).sf() as s:
                info = tickets.pairing(s, ticket)
        except ApiError as exc:
            return TEMPLATES.TemplateResponse(
                request, "pair.html", {"info": None, "error": exc.detail}, status_code=exc.status
            )
        if info["token"]:
            info["command"] = kiosk_command(
                str(request.base_url), info["code"], info["token"], info["tournament"]
            )
        return TEMPLATES.TemplateResponse(request, "pair.html", {"info": info, "error": None})

    @app.post("/pair/{ticket}", include_in_schema=False)
    def pair_claim(request: Request, ticket: str) -> Response:
        sb = sb_of(request)
        try:
            with sb.sf() as s:
                tickets.claim(s, ticket)
        except ApiError as exc:
            return TEMPLATES.TemplateResponse(
                request, "pair.html", {"info": None, "error": exc.detail}, status_code=exc.status
            )
        sb.directory.invalidate()
        return RedirectResponse(f"/pair/{ticket}", status_code=303)

    @app.post("/admin/{tid}/rounds", include_in_schema=False)
    def admin_round(
        request: Request,
        tid: IntId,
        mode: Annotated[str, Form()] = "swiss",
        pairings: Annotated[str, Form()] = "",
    ) -> Response:
        if (denied := guard(request)) is not None:
            return denied

        def do(s: Any) -> None:
            # "auto" (or "swiss", as before): the tournament's format makes the pairings
            plan = None if mode in ("auto", "swiss") else parse_pairings(pairings)
            service.create_round(s, tid, plan)

        return run(request, tid, do)

    @app.post("/admin/{tid}/rounds/{number}/close", include_in_schema=False)
    async def admin_close(request: Request, tid: IntId, number: IntId) -> Response:
        """Form fields ``decision_<match id>`` (one per unfinished match; empty = none chosen)
        and ``reason``."""
        if (denied := guard(request)) is not None:
            return denied
        form = await request.form()
        reason = str(form.get("reason") or "")[:400]
        plan: list[tuple[int, str, str]] = []
        for key, value in form.multi_items():
            if not key.startswith("decision_") or not str(value):
                continue
            mid = key.removeprefix("decision_")
            if not mid.isdigit() or len(mid) > 9:
                return tournament_page(request, tid, error=f"bad form field {key!r}", status=422)
            plan.append((int(mid), str(value), reason))
        from starlette.concurrency import run_in_threadpool

        return await run_in_threadpool(
            run, request, tid, lambda s: service.close_round(s, tid, number, plan, reason)
        )

    @app.post("/admin/{tid}/rounds/{number}/clock", include_in_schema=False)
    def admin_clock(
        request: Request,
        tid: IntId,
        number: IntId,
        action: Annotated[str, Form()] = "",
        minutes: Annotated[str, Form()] = "",
    ) -> Response:
        if (denied := guard(request)) is not None:
            return denied
        from kiosk.scoreboard.clock import act

        def do(s: Any) -> None:
            mins = None
            if minutes.strip():
                if not minutes.strip().isdigit() or len(minutes.strip()) > 4:
                    raise ApiError(422, f"minutes {minutes!r}: give a whole number 1..600")
                mins = int(minutes)
            act(s, tid, number, action, mins)

        return run(request, tid, do)

    @app.post("/admin/{tid}/rounds/{number}/reopen", include_in_schema=False)
    def admin_reopen(
        request: Request, tid: IntId, number: IntId, reason: Annotated[str, Form()] = ""
    ) -> Response:
        if (denied := guard(request)) is not None:
            return denied
        return run(request, tid, lambda s: service.reopen_round(s, tid, number, reason[:400]))

    @app.post("/admin/{tid}/matches/{match_id}/decision", include_in_schema=False)
    def admin_decision(
        request: Request,
        tid: IntId,
        match_id: IntId,
        decision: Annotated[str, Form()] = "",
        reason: Annotated[str, Form()] = "",
    ) -> Response:
        if (denied := guard(request)) is not None:
            return denied
        return run(
            request, tid, lambda s: service.decide_match(s, match_id, decision, reason[:400])
        )

    @app.post("/admin/{tid}/matches/{match_id}/override", include_in_schema=False)
    def admin_override(
        request: Request, tid: IntId, match_id: IntId, result: Annotated[str, Form()] = ""
    ) -> Response:
        if (denied := guard(request)) is not None:
            return denied

        def do(s: Any) -> None:
            if result not in OVERRIDES:
                raise ApiError(422, f"result {result!r}: choose one of {', '.join(OVERRIDES[1:])}")
            service.set_override(s, match_id, result or None)

        return run(request, tid, do)

    # ------------------------------------------------------------------ public pages
    @app.get("/scoreboard", include_in_schema=False)
    def board_index(request: Request, lang: str | None = None) -> Response:
        lg = pick_lang(request, lang)
        with sb_of(request).sf() as s:
            ts = list(s.execute(select(Tournament).order_by(Tournament.id)).scalars())
        if len(ts) == 1:
            return RedirectResponse(f"/scoreboard/{ts[0].id}?lang={lg}", status_code=307)
        tr = Tr(lg)
        ctx = {"tournaments": ts, "t_": tr, "lang": lg, "other": "en" if lg == "zh" else "zh"}
        page = TEMPLATES.env.get_template("board_list.html").render(ctx)
        if tr.missing:
            keys = html.escape(" ".join(tr.missing))
            page = page.replace("<html ", f'<html data-i18n-missing="{keys}" ', 1)
        return HTMLResponse(page)

    async def board_ctx(request: Request, tid: int, lang: str) -> dict[str, Any] | None:
        from starlette.concurrency import run_in_threadpool

        sb = sb_of(request)

        def load() -> dict[str, Any] | None:
            with sb.sf() as s:
                return board_data(s, tid)

        ctx = await run_in_threadpool(load)
        if ctx is None:
            return None
        ctx["tables"] = [
            (await sb.hub.table(t, sb.directory.match_for(t))).to_json() for t in ctx["table_ids"]
        ]
        tr = Tr(lang)
        ctx.update(lang=lang, other="en" if lang == "zh" else "zh", t_=tr, mmss=_mmss)
        return ctx

    @app.get("/scoreboard/{tid}", include_in_schema=False)
    async def board(request: Request, tid: IntId, lang: str | None = None) -> Response:
        """The public board: standings, tables, open disputes, rounds, in Chinese (default) or
        English (``?lang=en``, kept in a cookie); live over the SSE stream."""
        lg = pick_lang(request, lang)
        ctx = await board_ctx(request, tid, lg)
        if ctx is None:
            return HTMLResponse(
                f"<h1>404</h1><p>没有编号为 {tid} 的比赛 · no tournament {tid}</p>",
                status_code=404,
            )
        ctx["catalogue_json"] = Markup(
            json.dumps(
                {k: v[lg] for k, v in catalogue().items() if v.get(lg)}, ensure_ascii=False
            ).replace("</", "<\\/")
        )
        page = TEMPLATES.env.get_template("board.html").render(ctx)
        if ctx["t_"].missing:  # known once the whole page is rendered
            keys = html.escape(" ".join(ctx["t_"].missing))
            page = page.replace("<html ", f'<html data-i18n-missing="{keys}" ', 1)
        resp = HTMLResponse(page)
        if lang in LANGS:
            resp.set_cookie("gd-lang", lg, max_age=365 * 86400, samesite="lax")
        return resp

    @app.get("/scoreboard/{tid}/parts", include_in_schema=False)
    async def board_parts(request: Request, tid: IntId, lang: str | None = None) -> Response:
        """The board's sections as HTML (``{id: html}``), for the page's live updates: one
        rendering of every section, server side, in the page's language."""
        lg = pick_lang(request, lang)
        ctx = await board_ctx(request, tid, lg)
        if ctx is None:
            return JSONResponse({"detail": f"no tournament {tid}"}, status_code=404)
        tpl = TEMPLATES.env.get_template("_board_parts.html")
        mod = tpl.make_module(ctx)
        names = ["standings", "tables", "disputes", "rounds", "clocks"]
        if ctx["bracket"] is not None:  # a knockout
            names.append("bracket")
        if ctx["groups"] is not None:  # a group stage
            names.append("groups")
        parts = {name: str(getattr(mod, "sec_" + name)()) for name in names}
        return JSONResponse({"parts": parts, "missing": ctx["t_"].missing})

    @app.get("/api/v1/tournaments/{tid}/disputes", tags=["tournament"])
    def get_disputes(request: Request, tid: IntId) -> Response:
        """Each table's open disputes (fouls under review, re-reads, referee notices and
        warnings nobody ruled on), derived from the stored events as the table kiosk's review
        desk does, each with a link to the kiosk's review page when its address is set
        (``GUANDAN_SCOREBOARD_KIOSK_URLS``). No footage is copied here."""
        from kiosk.scoreboard import disputes

        with sb_of(request).sf() as s:
            if s.get(Tournament, tid) is None:
                return JSONResponse(
                    {"detail": f"no tournament {tid}: see GET /api/v1/tournaments"},
                    status_code=404,
                )
            rows = disputes.table_disputes(s, service.tables_of(s, tid))
        return JSONResponse({"tournament": tid, "tables": rows})
