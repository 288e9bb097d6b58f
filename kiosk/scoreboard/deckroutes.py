"""The shared deck's routes (kiosk/scoreboard/decks.py holds the logic).

Admin: ``POST /api/v1/tournaments/{tid}/deck`` (multipart: ``profile``, optional ``model`` and
``note``) stores the next version; ``GET /api/v1/tournaments/{tid}/deck`` lists the versions;
``GET /api/v1/tournaments/{tid}/deck/{version}/{kind}`` downloads a file.

Kiosk (its table token, or the admin key): ``GET /api/v1/tables/{table}/deck`` answers the
manifest of the version in force (``deck`` null while the tournament has none) with an ETag,
304 to ``If-None-Match`` with it; ``GET /api/v1/tables/{table}/deck/{version}/{kind}`` the
file, its SHA-256 as ETag and in ``X-Deck-Sha256``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import FastAPI, Path, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from kiosk.scoreboard import decks
from kiosk.scoreboard.decks import MAX_BYTES, DeckRefused
from kiosk.scoreboard.schemas import IntId
from kiosk.scoreboard.service import ApiError
from kiosk.scoreboard.state import API, SB, Admin, Creds, State, admin_ok

Kind = Annotated[str, Path(pattern="^(profile|model)$", description="profile or model")]
UPLOAD_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["profile"],
                    "properties": {
                        "profile": {
                            "type": "string",
                            "format": "binary",
                            "description": "deck.json written by guandan vision enrol",
                        },
                        "model": {
                            "type": "string",
                            "format": "binary",
                            "description": "deck.classes.onnx written by guandan vision adapt",
                        },
                        "note": {"type": "string", "maxLength": 400},
                    },
                }
            }
        },
    }
}
FILE_CACHE = "private, max-age=31536000, immutable, no-transform"


def _table_of(request: Request, table_id: str, creds: Any, sb: State) -> tuple[str, int]:
    """The table (key) a deck URL names and its tournament: the caller must hold that table's
    token, or the admin key (401 / 403 / 404 / 409 otherwise). A scoreboard without an admin
    key answers a request without credentials, as its other reads; a wrong token is refused."""
    token_table = sb.directory.table_for_token(creds.credentials) if creds else None
    key = sb.directory.resolve(table_id, token_table)
    if key is None:
        if sb.directory.has_table(table_id):
            raise ApiError(
                409,
                f"several tournaments have a table {table_id!r}: use the table's key or the "
                "table's own token",
            )
        raise ApiError(404, f"no table {table_id!r} on this scoreboard (没有此桌)")
    if token_table is None and creds is not None:  # a table made just now (resolve reloaded)
        token_table = sb.directory.table_for_token(creds.credentials)
    if creds is None:
        if admin_ok(request, sb):  # the admin (HTTP Basic), or a scoreboard without a key
            return key, sb.directory.tournament_of[key]
        raise ApiError(
            401,
            "missing table token: send 'Authorization: Bearer <token>' with the table's token "
            "(the kiosk's --token)",
        )
    if token_table != key and not (sb.settings.admin_key and admin_ok(request, sb)):
        # a bearer that is not this table's token is refused even on an open scoreboard: a
        # kiosk with a rotated or mistyped token hears so
        if token_table is not None:
            raise ApiError(
                403,
                f"this token belongs to table {sb.directory.code(token_table)!r}, not "
                f"{table_id!r}: ask for /api/v1/tables/<your table>/deck",
            )
        raise ApiError(
            401,
            "invalid table token: it matches no table (rotated? mistyped?); get the current "
            "token from the admin page or `guandan scoreboard rotate-token`",
        )
    return key, sb.directory.tournament_of[key]


async def _read(part: Any, kind: str) -> bytes | None:
    if part is None:
        return None
    if isinstance(part, UploadFile):
        data = await part.read(MAX_BYTES[kind] + 1)
    else:
        data = str(part).encode("utf-8")
    if len(data) > MAX_BYTES[kind]:
        raise decks.too_large(kind, len(data))
    return data


def _file_response(data: bytes, sha: str, kind: str, request: Request) -> Response:
    headers = {"ETag": f'"{sha}"', "X-Deck-Sha256": sha, "Cache-Control": FILE_CACHE}
    if decks.etag_matches(request.headers.get("if-none-match"), f'"{sha}"'):
        return Response(status_code=304, headers=headers)
    headers["Content-Disposition"] = f'attachment; filename="{decks.FILE_NAMES[kind]}"'
    return Response(data, media_type=decks.MEDIA_TYPES[kind], headers=headers)


def register_decks(app: FastAPI) -> None:
    @app.post(
        f"{API}/tournaments/{{tid}}/deck",
        tags=["deck"],
        status_code=201,
        responses={401: {}, 404: {}, 409: {}, 413: {}, 422: {}},
        openapi_extra=UPLOAD_BODY,
    )
    async def post_deck(tid: IntId, request: Request, _a: Admin, sb: SB) -> JSONResponse:
        """Share a deck with every table of the tournament: the deck profile (``guandan vision
        enrol``) and, optionally, the classifier adapted to it (``guandan vision adapt``). It
        becomes the tournament's next version (older ones are kept); kiosks fetch it when they
        start. Refused (413 too large, 422 not a deck profile / not an adapted classifier),
        nothing is stored. Answers the new version's manifest and ``warnings``."""
        refused = decks.upload_size_refused(request.headers.get("content-length"))
        if refused is not None:
            raise refused
        ctype = request.headers.get("content-type", "")
        if not ctype.lower().startswith("multipart/form-data"):
            raise DeckRefused(
                422,
                "send multipart/form-data with the file 'profile' (deck.json), optionally "
                "'model' (deck.classes.onnx) and 'note' (or use guandan scoreboard deck upload)",
            )
        try:
            form = await request.form(max_files=2, max_fields=4)
        except Exception as exc:  # noqa: BLE001 - a malformed multipart body
            raise DeckRefused(422, f"cannot read the multipart form ({exc})") from None
        try:
            profile = await _read(form.get("profile"), "profile")
            model = await _read(form.get("model"), "model")
            note_raw = form.get("note")
            note = note_raw if isinstance(note_raw, str) else ""
        finally:
            await form.close()
        if profile is None:
            raise DeckRefused(
                422, "field 'profile' missing: give the deck.json of guandan vision enrol"
            )
        if model is not None and not model:
            model = None  # an empty file field: a form sent without choosing a model

        def store() -> dict[str, Any]:
            with sb.sf() as s:
                dv, warnings = decks.upload(s, tid, profile, model, note)
                return {**decks.manifest(dv), "warnings": warnings}

        out = await run_in_threadpool(store)
        return JSONResponse(out, status_code=201)

    @app.get(f"{API}/tournaments/{{tid}}/deck", tags=["deck"], responses={404: {}})
    def get_decks(tid: IntId, sb: SB) -> dict[str, Any]:
        """The tournament's shared deck: the version in force (``current``: its manifest; null
        while none was uploaded) and every version, latest first (``history``)."""
        from kiosk.scoreboard import service

        with sb.sf() as s:
            service.get_tournament(s, tid)
            return {"tournament": tid, **decks.summary(s, tid)}

    @app.get(
        f"{API}/tournaments/{{tid}}/deck/{{version}}/{{kind}}",
        tags=["deck"],
        responses={401: {}, 404: {}},
        response_class=Response,
    )
    def get_deck_file_admin(
        tid: IntId, version: IntId, kind: Kind, request: Request, _a: Admin, sb: SB
    ) -> Response:
        """One file of a deck version (admin)."""
        with sb.sf() as s:
            data, sha = decks.read_file(s, tid, version, kind)
        return _file_response(data, sha, kind, request)

    @app.get(
        f"{API}/tables/{{table_id}}/deck",
        tags=["deck"],
        responses={304: {}, 401: {}, 403: {}, 404: {}, 409: {}},
    )
    def get_table_deck(table_id: str, request: Request, creds: Creds, sb: SB) -> Response:
        """The manifest of the deck the table's tournament shares now (``deck``: version, name,
        each file's SHA-256, size and URL; null while none was uploaded), with its ``ETag``: a
        kiosk that sends it back in ``If-None-Match`` gets 304 and downloads nothing."""
        key, tid = _table_of(request, table_id, creds, sb)
        with sb.sf() as s:
            dv = decks.current(s, tid)
            body = {
                "tournament": tid,
                "table": key,
                "deck": decks.manifest(dv, table_id) if dv is not None else None,
            }
        tag = decks.etag(dv)
        headers = {"ETag": tag, "Cache-Control": "no-cache"}
        if decks.etag_matches(request.headers.get("if-none-match"), tag):
            return Response(status_code=304, headers=headers)
        return JSONResponse(body, headers=headers)

    @app.get(
        f"{API}/tables/{{table_id}}/deck/{{version}}/{{kind}}",
        tags=["deck"],
        responses={304: {}, 401: {}, 403: {}, 404: {}, 409: {}},
        response_class=Response,
    )
    def get_table_deck_file(
        table_id: str, version: IntId, kind: Kind, request: Request, creds: Creds, sb: SB
    ) -> Response:
        """One file of a deck version of the table's tournament (``application/json`` for
        the profile, ``application/octet-stream`` for the model); its SHA-256 is the ETag and
        ``X-Deck-Sha256``: check it before use."""
        _key, tid = _table_of(request, table_id, creds, sb)
        with sb.sf() as s:
            data, sha = decks.read_file(s, tid, version, kind)
        return _file_response(data, sha, kind, request)
