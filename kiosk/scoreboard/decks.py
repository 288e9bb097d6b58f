"""A tournament's shared deck (issue 44, "Sharing"): one enrolment serves every table.

The organiser enrols the event's deck once (``guandan vision enrol`` -> ``deck.json``), adapts
the classifier to it if they like (``guandan vision adapt`` -> ``deck.classes.onnx``) and
uploads both to the scoreboard (``guandan scoreboard deck upload``, ``POST
/api/v1/tournaments/{tid}/deck`` or the admin page). Each upload is the tournament's next
version; older ones are kept. A kiosk started with its table token asks for the manifest of
the current version (``GET /api/v1/tables/{table}/deck``: version, each file's SHA-256 and
size; ``ETag`` / ``If-None-Match``, so a kiosk that has it gets 304 and downloads nothing), then
the files it lacks (``GET /api/v1/tables/{table}/deck/{version}/{kind}``), checks them and keeps
them (``kiosk/table/deckfetch.py``).

Storage: the bytes are in the database (``deck_file``), like everything else the scoreboard
keeps. A deck is a few MB (the shipped classifier is 2.1 MB; a profile well under 1 MB), so
even many versions are small beside a tournament's events, every serve process on a shared
PostgreSQL serves the same files, and a database backup holds the deck with the results. The
files are immutable (a new upload is a new version), so each process keeps the recently served
ones in memory by SHA-256 (``BLOB_CACHE_BYTES``): 100 kiosks starting at once read each file
from the database once.

Refused uploads (``DeckRefused``, an ``ApiError``: 413 too large, 422 anything else) store
nothing: a profile that is not JSON or not a deck profile ``vision.enrol.DeckProfile`` can load;
a model that is not ONNX, not a guandan card classifier, not adapted by ``guandan vision
adapt``, one its own safety check rejected, or one whose classes are not the 54 cards and
``none``.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import threading
from collections import OrderedDict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from kiosk.scoreboard.models import DeckFile, DeckVersion, Tournament
from kiosk.scoreboard.service import ApiError

API = "/api/v1"
KINDS = ("profile", "model")
#: the names the kiosk keeps the files under (``vision.adapt.adapted_beside``: the adapted
#: classifier of ``deck.json`` is ``deck.classes.onnx`` beside it)
FILE_NAMES = {"profile": "deck.json", "model": "deck.classes.onnx"}
MEDIA_TYPES = {"profile": "application/json", "model": "application/octet-stream"}
MB = 1024 * 1024
#: the largest files taken (a profile is well under 1 MB; the shipped classifier is 2.1 MB)
MAX_BYTES = {"profile": 16 * MB, "model": 64 * MB}
#: what one upload request may carry in all (both files and the form's overhead)
MAX_UPLOAD_BYTES = MAX_BYTES["profile"] + MAX_BYTES["model"] + MB
#: the classes of a card classifier: the 54 cards in card notation (CONTRACT.md) and ``none``
CARD_CLASSES = frozenset([s + r for s in "SHCD" for r in "23456789TJQKA"] + ["SB", "HR", "none"])
CLASSIFIER_KIND = "guandan-card-classes"  # vision.detector.META_KIND["classifier"]
#: model metadata copied to the manifest (what the adapted classifier says of itself)
META_KEYS = (
    "guandan_version",
    "guandan_adapted_deck",
    "guandan_adapted_from",
    "guandan_adapted_at",
    "guandan_adapted_val",
)
BLOB_CACHE_BYTES = 160 * MB


class DeckRefused(ApiError):
    """An upload the scoreboard will not keep; the message names the file and what to do."""


def _iso(at: datetime | None) -> str | None:
    """A stored time as ISO 8601 in UTC (SQLite gives it back without its zone)."""
    if at is None:
        return None
    return (at if at.tzinfo is not None else at.replace(tzinfo=UTC)).isoformat()


def _size(n: int) -> str:
    return f"{n / MB:.1f} MB" if n >= MB / 10 else f"{n} bytes"


def too_large(kind: str, size: int) -> DeckRefused:
    return DeckRefused(
        413,
        f"{kind}: {_size(size)} is too large (at most {MAX_BYTES[kind] // MB} MB); "
        + (
            "is it a deck profile written by guandan vision enrol?"
            if kind == "profile"
            else "is it the classifier written by guandan vision adapt?"
        ),
    )


# ------------------------------------------------------------------------------ checking uploads
def check_profile(data: bytes) -> dict[str, Any]:
    """What a deck profile upload holds (``name``, ``classifier``, ``cards``); DeckRefused when
    it is not one the kiosks can load (read by ``vision.enrol.DeckProfile.load`` itself)."""
    if len(data) > MAX_BYTES["profile"]:
        raise too_large("profile", len(data))
    if not data.strip():
        raise DeckRefused(
            422, "profile: the file is empty; give the deck.json of guandan vision enrol"
        )
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise DeckRefused(
            422,
            f"profile: not JSON ({str(exc)[:120]}); give the deck.json written by "
            "guandan vision enrol",
        ) from None
    if not isinstance(raw, dict) or raw.get("kind") != "guandan-deck-profile":
        raise DeckRefused(
            422,
            'profile: JSON but not a deck profile (no "kind": "guandan-deck-profile"); give '
            "the deck.json written by guandan vision enrol (not the renderer's deck folder's "
            "deck.json)",
        )
    from vision.enrol import DeckProfile, EnrolError

    with tempfile.TemporaryDirectory(prefix="gd-deck-") as tmp:
        path = Path(tmp) / "deck.json"
        path.write_bytes(data)
        try:
            prof = DeckProfile.load(path)
        except EnrolError as exc:
            raise DeckRefused(
                422, "profile: " + str(exc).replace(str(path) + ": ", "", 1)
            ) from None
    return {"name": prof.name[:200], "classifier": prof.classifier, "cards": len(prof.cards)}


def check_model(data: bytes) -> dict[str, str]:
    """The metadata of an adapted classifier upload (``META_KEYS``); DeckRefused when it is not
    one the kiosks would read with (``vision.adapt.deck_reader``'s conditions)."""
    if len(data) > MAX_BYTES["model"]:
        raise too_large("model", len(data))
    if not data:
        raise DeckRefused(
            422, "model: the file is empty; give the .classes.onnx of guandan vision adapt"
        )
    import onnxruntime as ort

    try:
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        opts.intra_op_num_threads = 1
        sess = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own types
        first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
        raise DeckRefused(
            422,
            f"model: not an ONNX model ({first}); give the .classes.onnx written by "
            "guandan vision adapt",
        ) from None
    meta = dict(sess.get_modelmeta().custom_metadata_map)
    if meta.get("guandan_kind") != CLASSIFIER_KIND:
        raise DeckRefused(
            422,
            f"model: an ONNX model but not a card classifier (guandan_kind="
            f"{meta.get('guandan_kind')!r}, {CLASSIFIER_KIND!r} needed); give the .classes.onnx "
            "written by guandan vision adapt",
        )
    try:
        names = json.loads(meta.get("class_names", ""))
        if not isinstance(names, list):
            raise ValueError("not a list")
    except ValueError:
        raise DeckRefused(422, "model: the classifier's metadata lacks its class_names") from None
    if len(names) != len(CARD_CLASSES) or set(map(str, names)) != CARD_CLASSES:
        raise DeckRefused(
            422,
            f"model: {len(names)} classes, a card classifier has {len(CARD_CLASSES)} (the 54 "
            "cards and none); this is not a classifier adapted from the shipped "
            "card-classes.onnx",
        )
    outputs = {o.name: o.shape for o in sess.get_outputs()}
    width = (outputs.get("probs") or [None])[-1]
    if isinstance(width, int) and width != len(names):
        raise DeckRefused(
            422,
            f"model: its output gives {width} classes, its metadata names {len(names)}; "
            "export it again (guandan vision adapt)",
        )
    if meta.get("guandan_adapted") != "1":
        raise DeckRefused(
            422,
            "model: a card classifier, but not one adapted to a deck by guandan vision adapt "
            "(the kiosks already have the shipped one); upload the adapted .classes.onnx, or "
            "the profile alone",
        )
    if meta.get("guandan_adapted_accepted") != "1":
        raise DeckRefused(
            422,
            "model: guandan vision adapt rejected this classifier (it read its validation "
            f"crops worse than the base model: {_figures(meta)}); it is not shared. Upload the "
            "profile alone, or adapt again",
        )
    return {k: meta[k][:2000] for k in META_KEYS if k in meta}


def _figures(meta: dict[str, str]) -> str:
    try:
        v = json.loads(meta.get("guandan_adapted_val", "{}"))
        return f"{v['adapted_acc']:.4f} against {v['base_acc']:.4f}"
    except (ValueError, KeyError, TypeError):
        return "no figures"


def shipped_classifier_id() -> str | None:
    """The fingerprint of the classifier shipped with this install (None without one)."""
    try:
        from vision.detector import DEFAULT_CLASSIFIER_NAME, DEFAULT_MODEL
        from vision.enrol import classifier_id

        path = Path(DEFAULT_MODEL).parent / DEFAULT_CLASSIFIER_NAME
        return classifier_id(path) if path.is_file() else None
    except Exception:  # noqa: BLE001 - only a warning depends on it
        return None


# ------------------------------------------------------------------------------ storing
def upload(
    s: Session, tid: int, profile: bytes, model: bytes | None = None, note: str = ""
) -> tuple[DeckVersion, list[str]]:
    """Check and store the tournament's next deck version (nothing stored when refused).
    Returns it and warnings for the organiser (kept anyway)."""
    if s.get(Tournament, tid) is None:
        raise ApiError(404, f"no tournament {tid}")
    if len(note) > 400:
        raise DeckRefused(422, "note: at most 400 characters")
    info = check_profile(profile)
    meta = check_model(model) if model is not None else None
    warnings = []
    if model is None:
        shipped = shipped_classifier_id()
        if shipped is not None and info["classifier"] != shipped:
            warnings.append(
                f"the profile was enrolled with classifier {info['classifier']}, this "
                f"install's is {shipped}: kiosks with that model will not use it (they run "
                "with the shipped model and say so). Enrol with the kiosks' model, or upload "
                "the adapted classifier too (--model)"
            )
    files = {"profile": profile, **({"model": model} if model is not None else {})}
    digests = {k: hashlib.sha256(v).hexdigest() for k, v in files.items()}
    for attempt in range(5):
        last = s.execute(
            select(func.max(DeckVersion.version)).where(DeckVersion.tournament_id == tid)
        ).scalar()
        dv = DeckVersion(
            tournament_id=tid,
            version=int(last or 0) + 1,
            name=str(info["name"]),
            note=note,
            profile_sha256=digests["profile"],
            profile_size=len(profile),
            model_sha256=digests.get("model"),
            model_size=len(model) if model is not None else None,
            model_meta=meta,
        )
        s.add(dv)
        try:
            s.flush()
            for kind, data in files.items():
                s.add(
                    DeckFile(
                        deck_version_id=dv.id,
                        kind=kind,
                        sha256=digests[kind],
                        size=len(data),
                        data=data,
                    )
                )
            s.commit()
        except IntegrityError:  # another upload took this version number: take the next
            s.rollback()
            if attempt == 4:
                raise ApiError(409, "several deck uploads at once: try again") from None
            continue
        for kind, data in files.items():
            _cache_put(digests[kind], data)
        return dv, warnings
    raise AssertionError("unreachable")


def current(s: Session, tid: int) -> DeckVersion | None:
    """The tournament's deck version in force: its latest upload (None: none yet)."""
    return s.execute(
        select(DeckVersion)
        .where(DeckVersion.tournament_id == tid)
        .order_by(DeckVersion.version.desc())
        .limit(1)
    ).scalar_one_or_none()


def history(s: Session, tid: int) -> list[DeckVersion]:
    """Every deck version of the tournament, latest first."""
    return list(
        s.execute(
            select(DeckVersion)
            .where(DeckVersion.tournament_id == tid)
            .order_by(DeckVersion.version.desc())
        ).scalars()
    )


def etag(dv: DeckVersion | None) -> str:
    """The manifest's entity tag: changes with the version and its files."""
    if dv is None:
        return '"deck-none"'
    return f'"deck-v{dv.version}-{dv.profile_sha256[:16]}-{(dv.model_sha256 or "none")[:16]}"'


def etag_matches(header: str | None, tag: str) -> bool:
    """``If-None-Match`` names ``tag`` (or ``*``); weak tags compare as strong ones."""
    if not header:
        return False
    tags = [t.strip().removeprefix("W/") for t in header.split(",")]
    return "*" in tags or tag in tags


def manifest(dv: DeckVersion, table: str | None = None) -> dict[str, Any]:
    """What a kiosk needs to fetch the version: each file's name, SHA-256, size and URL (the
    table's own URL when ``table`` is given, else the admin's)."""
    base = (
        f"{API}/tables/{table}/deck/{dv.version}"
        if table is not None
        else f"{API}/tournaments/{dv.tournament_id}/deck/{dv.version}"
    )
    files: dict[str, Any] = {
        "profile": {
            "name": FILE_NAMES["profile"],
            "sha256": dv.profile_sha256,
            "size": dv.profile_size,
            "url": f"{base}/profile",
        }
    }
    if dv.model_sha256 is not None:
        files["model"] = {
            "name": FILE_NAMES["model"],
            "sha256": dv.model_sha256,
            "size": dv.model_size,
            "url": f"{base}/model",
        }
    return {
        "tournament": dv.tournament_id,
        "version": dv.version,
        "name": dv.name,
        "note": dv.note,
        "uploaded_at": _iso(dv.uploaded_at),
        "files": files,
        "model_meta": dv.model_meta,
        "etag": etag(dv),
    }


def read_file(s: Session, tid: int, version: int, kind: str) -> tuple[bytes, str]:
    """The bytes and SHA-256 of one file of a deck version (404 naming what is missing)."""
    if kind not in KINDS:
        raise ApiError(404, f"no deck file {kind!r}: the files are {', '.join(KINDS)}")
    row = s.execute(
        select(DeckFile.sha256, DeckFile.id)
        .join(DeckVersion, DeckFile.deck_version_id == DeckVersion.id)
        .where(
            DeckVersion.tournament_id == tid,
            DeckVersion.version == version,
            DeckFile.kind == kind,
        )
    ).first()
    if row is None:
        has = s.execute(
            select(DeckVersion.id).where(
                DeckVersion.tournament_id == tid, DeckVersion.version == version
            )
        ).first()
        if has is None:
            raise ApiError(404, f"tournament {tid} has no deck version {version}")
        raise ApiError(404, f"deck version {version} of tournament {tid} has no {kind}")
    sha, file_id = row
    data = _cache_get(sha)
    if data is None:
        with _loading(sha):  # one read from the database when many kiosks ask at once
            data = _cache_get(sha)
            if data is None:
                data = bytes(
                    s.execute(select(DeckFile.data).where(DeckFile.id == file_id)).scalar_one()
                )
                _cache_put(sha, data)
    return data, sha


def summary(s: Session, tid: int) -> dict[str, Any]:
    """What the admin page shows: the version in force and the earlier ones."""
    rows = history(s, tid)
    return {
        "current": manifest(rows[0]) if rows else None,
        "history": [
            {
                "version": r.version,
                "name": r.name,
                "note": r.note,
                "uploaded_at": _iso(r.uploaded_at),
                "profile_sha256": r.profile_sha256,
                "model_sha256": r.model_sha256,
                "size": r.profile_size + (r.model_size or 0),
            }
            for r in rows
        ],
    }


def describe(m: dict[str, Any]) -> str:
    """One line for people: ``v3 plastic (profile 1a2b3c4d 0.3 MB, model 5e6f7a8b 2.1 MB)``."""
    parts = [f"{k} {f['sha256'][:8]} {_size(int(f['size']))}" for k, f in m["files"].items()]
    return f"v{m['version']} {m['name']} ({', '.join(parts)})"


# ------------------------------------------------------------------------------ blob cache
_CACHE: OrderedDict[str, bytes] = OrderedDict()
_CACHE_LOCK = threading.Lock()


_LOADING: dict[str, threading.Lock] = {}


def _loading(sha: str) -> threading.Lock:
    with _CACHE_LOCK:
        return _LOADING.setdefault(sha, threading.Lock())


def _cache_get(sha: str) -> bytes | None:
    with _CACHE_LOCK:
        data = _CACHE.get(sha)
        if data is not None:
            _CACHE.move_to_end(sha)
        return data


def _cache_put(sha: str, data: bytes) -> None:
    if len(data) > BLOB_CACHE_BYTES // 4:
        return
    with _CACHE_LOCK:
        _CACHE[sha] = data
        _CACHE.move_to_end(sha)
        total = sum(len(v) for v in _CACHE.values())
        while total > BLOB_CACHE_BYTES and len(_CACHE) > 1:
            _, old = _CACHE.popitem(last=False)
            total -= len(old)


def upload_size_refused(content_length: str | None) -> DeckRefused | None:
    """A request whose declared length is over ``MAX_UPLOAD_BYTES`` (refused before reading)."""
    try:
        n = int(content_length or 0)
    except ValueError:
        return None
    if n > MAX_UPLOAD_BYTES:
        return DeckRefused(
            413,
            f"upload of {_size(n)} is too large: a deck profile is at most "
            f"{MAX_BYTES['profile'] // MB} MB and an adapted classifier "
            f"{MAX_BYTES['model'] // MB} MB",
        )
    return None


__all__ = [
    "DeckRefused",
    "check_model",
    "check_profile",
    "current",
    "describe",
    "etag",
    "history",
    "manifest",
    "read_file",
    "summary",
    "upload",
]
