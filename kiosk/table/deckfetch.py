"""The tournament's shared deck, the kiosk's side (issue 44, "Sharing"; the scoreboard's side is
kiosk/scoreboard/decks.py).

A kiosk started with its scoreboard URL and table token, reading a camera, and given no
``--deck``, asks the scoreboard for its tournament's deck (``GET /api/v1/tables/{table}/deck``)
and keeps it in a cache folder (``<db stem>-deck/`` beside ``--db`` unless ``--deck-cache``):

* the manifest names the version and each file's SHA-256 and size; the kiosk sends the ETag of
  the version it holds (``If-None-Match``), so a restart that already has it downloads nothing
  (304);
* a new version's files are downloaded into a temporary folder, each checked against its
  SHA-256 and size (a file the kiosk already holds by that SHA-256 is copied, not downloaded),
  and read once as the pipeline will read them (``vision.adapt.deck_reader``); only then is the
  folder renamed into place and ``current.json`` replaced (written whole, then renamed). A
  download that fails any check leaves the last good version in force;
* the scoreboard unreachable (or refusing the token): the cached version is read with, and the
  kiosk says so; no cached version either: the shipped model, said clearly in the log and in
  the health report.

Each outcome is a :class:`DeckFetch` (``status``, ``version``, ``profile`` path to read with or
None, ``message``); the hall-health report shows ``health_text`` (kiosk/table/health.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("guandan.table.deck")
DECK_PATH = "/api/v1/tables/{table}/deck"
CURRENT = "current.json"
FILE_NAMES = {"profile": "deck.json", "model": "deck.classes.onnx"}
#: version folders kept besides the one in force (the previous ones, newest first)
KEEP_PREVIOUS = 1
CHUNK = 1 << 16

#: what ``status`` says: read with a shared deck (``fetched`` now, ``current`` already held,
#: ``cached`` the scoreboard could not be asked, ``kept`` a newer one failed its checks) or not
#: (``none`` shared, ``unavailable``: no answer and nothing cached)
USING = ("fetched", "current", "cached", "kept")


class DeckFetchError(Exception):
    """A download that cannot be used (checksum, size, an unreadable deck); the last good
    version stays in force."""


@dataclass
class DeckFetch:
    """The outcome of asking the scoreboard for the tournament's deck."""

    status: str
    message: str
    version: int | None = None
    name: str | None = None
    #: the deck profile to read with (the adapted classifier beside it), None: the shipped model
    profile: Path | None = None
    sha256: dict[str, str] = field(default_factory=dict)
    downloaded: int = 0  # bytes downloaded this time

    @property
    def using(self) -> bool:
        return self.profile is not None and self.status in USING

    def short(self) -> str:
        """``v3 plastic 1a2b3c4d`` (the profile's SHA-256, first 8 hex)."""
        sha = self.sha256.get("profile", "")[:8]
        model = " +model" if "model" in self.sha256 else ""
        return f"v{self.version} {self.name or '?'} {sha}{model}".strip()

    def health_text(self, reader: str | None = None) -> str:
        """What the health report's ``deck`` says (at most 200 characters): the deck the
        detector reads with (``reader``) and where it came from."""
        if self.using:
            where = {
                "fetched": "shared",
                "current": "shared",
                "cached": "shared, cached: scoreboard unreachable",
                "kept": "shared, cached: newer version refused",
            }[self.status]
            text = f"{reader} · {where} {self.short()}" if reader else f"{where} {self.short()}"
        else:
            text = f"shipped model: {self.message}"
        return text[:200]

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "version": self.version,
            "name": self.name,
            "profile": str(self.profile) if self.profile else None,
            "sha256": dict(self.sha256),
            "downloaded": self.downloaded,
        }


def default_cache(db: str | Path) -> Path:
    """``<db stem>-deck/`` beside the kiosk's event log (as footage goes to ``-footage/``)."""
    p = Path(db)
    return p.with_name(f"{p.stem}-deck")


def check_with_pipeline(profile: Path) -> None:
    """Read the deck as ``--deck`` would (vision.adapt.deck_reader: the profile, and the adapted
    classifier beside it); DeckFetchError naming what is wrong."""
    try:
        from vision.adapt import deck_reader
    except ImportError:  # a build without the vision pipeline: nothing reads it anyway
        return
    try:
        deck_reader(profile)
    except ValueError as exc:
        raise DeckFetchError(f"the downloaded deck cannot be read: {exc}") from None


class DeckCache:
    """The cache folder: ``current.json`` (the version in force: its manifest and folder) and
    one folder per version (``v3-1a2b3c4d/deck.json``, ``deck.classes.onnx``)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def load(self) -> dict[str, Any] | None:
        """The version in force, its files checked against their SHA-256 (None: none, or one
        damaged since; a damaged one is logged and not used)."""
        path = self.folder / CURRENT
        try:
            cur = json.loads(path.read_text(encoding="utf-8"))
            files = cur["files"]
            folder = self.folder / cur["dir"]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("deck cache %s unreadable (%s): not used", path, exc)
            return None
        for kind, f in files.items():
            p = folder / FILE_NAMES[kind]
            if not p.is_file() or sha256_file(p) != f.get("sha256"):
                log.warning("deck cache: %s changed or missing since it was fetched: not used", p)
                return None
        return dict(cur)

    def find(self, sha: str) -> Path | None:
        """A cached file with this SHA-256 (to copy instead of downloading it again)."""
        if not self.folder.is_dir():
            return None
        for d in self.folder.iterdir():
            if not d.is_dir() or d.name.startswith("."):
                continue
            for name in FILE_NAMES.values():
                p = d / name
                if p.is_file() and sha256_file(p) == sha:
                    return p
        return None

    def install(self, staged: Path, manifest: dict[str, Any], extra: dict[str, Any]) -> Path:
        """Move a checked download (``staged``) into place and make it the version in force."""
        name = f"v{int(manifest['version'])}-{manifest['files']['profile']['sha256'][:8]}"
        final = self.folder / name
        if final.exists():
            shutil.rmtree(final)
        staged.rename(final)
        cur = {
            "version": int(manifest["version"]),
            "name": manifest.get("name"),
            "tournament": manifest.get("tournament"),
            "etag": manifest.get("etag"),
            "dir": name,
            "files": {
                k: {"sha256": f["sha256"], "size": int(f["size"])}
                for k, f in manifest["files"].items()
            },
            "uploaded_at": manifest.get("uploaded_at"),
            **extra,
        }
        write_atomic(self.folder / CURRENT, json.dumps(cur, ensure_ascii=False, indent=1))
        self.prune(keep=name)
        return final

    def prune(self, keep: str) -> None:
        """Drop version folders but the one in force and the ``KEEP_PREVIOUS`` newest others,
        and temporary folders left by an interrupted download."""
        dirs = [d for d in self.folder.iterdir() if d.is_dir() and d.name != keep]
        for d in dirs:
            if d.name.startswith(".tmp-"):
                shutil.rmtree(d, ignore_errors=True)
        old = sorted(
            (d for d in dirs if not d.name.startswith(".")),
            key=lambda d: d.stat().st_mtime,
            reverse=True,
        )
        for d in old[KEEP_PREVIOUS:]:
            shutil.rmtree(d, ignore_errors=True)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a temp file, fsync, rename)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class _Http:
    def __init__(self, url: str, token: str, timeout: float) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def open(self, path: str, headers: dict[str, str] | None = None) -> Any:
        req = urllib.request.Request(
            self.url + path,
            headers={"Authorization": f"Bearer {self.token}", **(headers or {})},
        )
        return urllib.request.urlopen(req, timeout=self.timeout)


def _http_error(exc: urllib.error.HTTPError) -> str:
    try:
        body = exc.read()[:300].decode("utf-8", "replace")
        detail = json.loads(body).get("detail", body)
    except (ValueError, AttributeError, OSError):
        detail = ""
    return f"HTTP {exc.code}" + (f": {detail}" if detail else "")


def fetch_deck(
    url: str,
    token: str,
    table: str,
    cache: str | Path,
    *,
    timeout: float = 15.0,
    check: Callable[[Path], None] | None = check_with_pipeline,
) -> DeckFetch:
    """Bring the cache up to the tournament's current deck and say what to read with."""
    store = DeckCache(cache)
    held = store.load()
    http = _Http(url, token, timeout)
    path = DECK_PATH.format(table=urllib.parse.quote(table, safe=""))
    headers = {"Accept": "application/json"}
    if held is not None and held.get("etag"):
        headers["If-None-Match"] = str(held["etag"])
    try:
        with http.open(path, headers) as resp:
            answer = json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        if exc.code == 304 and held is not None:
            return _held(store, held, "current", f"deck v{held['version']} is current")
        why = _http_error(exc)
        if exc.code == 404:
            why += " (a scoreboard without shared decks, or not this table's)"
        return _fallback(store, held, f"the scoreboard refused the deck request ({why})")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        why = str(getattr(exc, "reason", exc)) or type(exc).__name__
        return _fallback(store, held, f"scoreboard unreachable ({why})")
    manifest = answer.get("deck") if isinstance(answer, dict) else None
    if manifest is None:
        return DeckFetch(
            "none",
            "the tournament shares no deck on the scoreboard (upload one: guandan scoreboard "
            "deck upload)",
        )
    try:
        version = int(manifest["version"])
        files = manifest["files"]
        if "profile" not in files or set(files) - set(FILE_NAMES):
            raise KeyError("files")
    except (KeyError, TypeError, ValueError):
        return _fallback(store, held, "the scoreboard's deck manifest is malformed")
    if (
        held is not None
        and held.get("version") == version
        and held.get("files")
        == {k: {"sha256": f["sha256"], "size": int(f["size"])} for k, f in files.items()}
    ):
        if manifest.get("etag") and manifest.get("etag") != held.get("etag"):
            held["etag"] = manifest["etag"]
            write_atomic(store.folder / CURRENT, json.dumps(held, ensure_ascii=False, indent=1))
        return _held(store, held, "current", f"deck v{version} is current")
    try:
        got = _download(http, store, manifest, check)
    except DeckFetchError as exc:
        log.warning("deck v%s not taken: %s", version, exc)
        return _fallback(store, held, f"deck v{version} refused: {exc}", status="kept")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        why = str(getattr(exc, "reason", exc)) or type(exc).__name__
        return _fallback(store, held, f"deck v{version} download failed ({why})", status="kept")
    return got


def _held(store: DeckCache, held: dict[str, Any], status: str, message: str) -> DeckFetch:
    return DeckFetch(
        status,
        message,
        version=int(held["version"]),
        name=held.get("name"),
        profile=store.folder / held["dir"] / FILE_NAMES["profile"],
        sha256={k: f["sha256"] for k, f in held["files"].items()},
    )


def _fallback(
    store: DeckCache, held: dict[str, Any] | None, why: str, status: str = "cached"
) -> DeckFetch:
    if held is None:
        return DeckFetch("unavailable", f"{why}; no deck cached")
    fetched = held.get("fetched_at")
    when = f", fetched {fetched}" if fetched else ""
    return _held(
        store, held, status, f"{why}; reading with the cached deck v{held['version']}{when}"
    )


def _download(
    http: _Http, store: DeckCache, manifest: dict[str, Any], check: Callable[[Path], None] | None
) -> DeckFetch:
    store.folder.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=".tmp-", dir=store.folder))
    total = 0
    try:
        for kind, f in manifest["files"].items():
            sha, size = str(f["sha256"]).lower(), int(f["size"])
            target = staged / FILE_NAMES[kind]
            have = store.find(sha)
            if have is not None:
                shutil.copyfile(have, target)
            else:
                total += _get_file(http, str(f["url"]), target, sha, size, kind)
        profile = staged / FILE_NAMES["profile"]
        if check is not None:
            check(profile)
        fetched_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        final = store.install(staged, manifest, {"fetched_at": fetched_at})
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    version = int(manifest["version"])
    return DeckFetch(
        "fetched",
        f"deck v{version} fetched, {total} bytes downloaded",
        version=version,
        name=manifest.get("name"),
        profile=final / FILE_NAMES["profile"],
        sha256={k: str(f["sha256"]).lower() for k, f in manifest["files"].items()},
        downloaded=total,
    )


def _get_file(http: _Http, url: str, target: Path, sha: str, size: int, kind: str) -> int:
    """Download ``url`` into ``target``, checking its size and SHA-256 as it comes."""
    parsed = urllib.parse.urlsplit(url)
    path = parsed.path + (f"?{parsed.query}" if parsed.query else "")
    h = hashlib.sha256()
    n = 0
    with http.open(path) as resp, open(target, "wb") as out:
        while True:
            block = resp.read(CHUNK)
            if not block:
                break
            n += len(block)
            if n > size:
                raise DeckFetchError(f"{kind}: more than the {size} bytes the manifest names")
            h.update(block)
            out.write(block)
        out.flush()
        os.fsync(out.fileno())
    if n != size:
        raise DeckFetchError(f"{kind}: {n} bytes received, the manifest names {size}")
    if h.hexdigest() != sha:
        raise DeckFetchError(
            f"{kind}: checksum mismatch (sha256 {h.hexdigest()[:16]}..., the manifest names "
            f"{sha[:16]}...)"
        )
    return n


def unfit_reason(profile: Path, detector: str | None) -> str | None:
    """Why a fetched deck cannot be read with this kiosk's detector (None: it can, or it cannot
    be told before the pipeline starts): a profile without an adapted classifier fits only the
    classifier it was enrolled with."""
    if detector not in (None, "auto", "model"):
        return None  # a model of the kiosk's own: the pipeline checks it when it loads
    try:
        from vision.adapt import deck_reader
        from vision.detector import DEFAULT_CLASSIFIER_NAME, DEFAULT_MODEL
        from vision.enrol import classifier_id
    except ImportError:
        return None
    try:
        reader = deck_reader(profile)
    except ValueError as exc:
        return f"it cannot be read ({exc})"
    if reader.classifier is not None or reader.profile is None:
        return None  # read with its adapted classifier: fits any detector
    shipped = Path(DEFAULT_MODEL).parent / DEFAULT_CLASSIFIER_NAME
    if not shipped.is_file():
        return None
    mine = classifier_id(shipped)
    if reader.profile.classifier != mine:
        return (
            f"the shared deck profile was enrolled with classifier {reader.profile.classifier}, "
            f"this kiosk's is {mine}: enrol it with this model, or share the adapted classifier "
            "with it"
        )
    return None


def share_deck(
    url: str,
    token: str,
    table: str,
    cache: str | Path,
    detector: str | None = None,
    say: Callable[[str], None] | None = None,
    **kw: Any,
) -> DeckFetch:
    """``guandan table run``'s step: fetch the tournament's deck and say what the kiosk reads
    with (``say``: one line for the operator; the log gets it too)."""
    got = fetch_deck(url, token, table, cache, **kw)
    if got.using and got.profile is not None:
        why = unfit_reason(got.profile, detector)
        if why is not None:
            got = DeckFetch(
                "unusable",
                f"deck {got.short()} not used: {why}",
                version=got.version,
                name=got.name,
                sha256=got.sha256,
                downloaded=got.downloaded,
            )
    if got.using:
        line = f"deck: {got.short()} from the scoreboard: {got.message}"
        log.info(line)
    else:
        line = f"deck: reading with the SHIPPED model, no event deck: {got.message}"
        log.warning(line)
    if say is not None:
        say(line)
    return got
