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
None, ``message``); the hall-health report shows ``health_text`` and ``health_fields``
(kiosk/table/health.py; the scoreboard marks a table behind the tournament's deck degraded).

**Live swap** (:class:`DeckWatcher`, ``attach_deck_watch``): a running ``table run`` on a live
camera asks again every ``--deck-check`` seconds (``$GUANDAN_DECK_CHECK_S``, default
``DECK_CHECK_S``: 60; 0: only at start) with the ETag it holds, so an unchanged deck costs a 304.
A new version is downloaded and checked as at start, checked against the kiosk's classifier, and
its detector built, all in the watcher's thread; then it waits for the **next deal boundary**
(no deal in progress and no tribute under way: the referee's state) and the camera's frame loop
puts it in place between two frames (``LiveSource.frame_hook``), never within a frame. A deal
is read with one deck from its first card to its last: readings already made stay as they were
read, and the tracker never compares one deck's names with another's in the same deal. The
log says when it waits and when it swaps (and the event log gets a ``deck`` note); the health
report names the version in force and the one waiting (``deck_pending``). A failed download, a
damaged file or a deck that does not fit keeps the deck in force, and ``deck_problem`` says why.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("guandan.table.deck")
#: how often a running kiosk asks for a new deck version (seconds; 0: only at start)
DECK_CHECK_S = 60.0
ENV_DECK_CHECK = "GUANDAN_DECK_CHECK_S"
#: the longest wait between checks after failed downloads (each failure doubles the wait)
MAX_CHECK_BACKOFF_S = 600.0
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

    @property
    def problem(self) -> str | None:
        """Why the scoreboard's newest deck is not the one read with (None: nothing wrong, or
        the tournament shares none)."""
        return (
            self.message if self.status in ("cached", "kept", "unusable", "unavailable") else None
        )

    def health_fields(self) -> dict[str, Any]:
        """The health report's deck fields (kiosk/scoreboard/health.py ``HealthIn``)."""
        return {
            "deck_source": "shared" if self.using else "shipped",
            "deck_version": self.version if self.using else None,
            "deck_pending": None,
            "deck_problem": None if self.problem is None else self.problem[:200],
        }

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


# ---------------------------------------------------------------------- live swap
def check_interval(value: float | str | None) -> float:
    """Seconds between a running kiosk's deck checks: ``--deck-check`` (``value``), else
    ``$GUANDAN_DECK_CHECK_S``, else ``DECK_CHECK_S``; 0 checks only at start. A bad value is a
    ValueError naming where it came from."""
    where = "--deck-check"
    if value is None:
        value = os.environ.get(ENV_DECK_CHECK, "").strip() or None
        where = f"${ENV_DECK_CHECK}"
    if value is None:
        return DECK_CHECK_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (seconds == 0 or 1 <= seconds <= 86400):
        raise ValueError(
            f"{where} {value}: give the seconds between deck checks, 1 to 86400 (default "
            f"{DECK_CHECK_S:g}), or 0 to check only at start"
        )
    return seconds


def between_deals(worker: Any) -> bool:
    """No deal in progress at the kiosk's table (none yet, the last one ended, the match over)
    and no tribute under way: what the referee has been told so far (``worker.referee``). The
    camera's observations are fed one at a time (the source waits for each to be logged), so
    at the start of a frame every earlier reading has been judged."""
    ref = worker.referee
    if getattr(getattr(ref, "_core", None), "phase", None) is not None:
        return False  # the deal has been started: its tribute is being paid and returned
    st = ref.state
    return st.deal is None or st.deal.over or st.match_over


def build_detector(detector: Any, profile: Path) -> Any:
    """The model detector reading with ``profile`` (and the adapted classifier beside it), as
    ``--deck`` makes it (kiosk/table/sources.py ``LiveSource``)."""
    from vision.adapt import deck_reader
    from vision.pipeline import resolve_detector

    return resolve_detector(detector, None, deck_reader(profile))


def _key(got: DeckFetch) -> tuple[Any, ...]:
    return (got.version, got.sha256.get("profile"), got.sha256.get("model"))


class DeckWatcher:
    """Asks the scoreboard for a new deck version every ``interval_s`` while the kiosk runs and
    puts it in place at the next deal boundary, between two frames (see the module doc).

    Stands in for the start-up :class:`DeckFetch` in ``kiosk.info["deck_share"]``: ``using``,
    ``health_text`` and ``health_fields`` describe the deck in force, the one waiting and why
    the newest was not taken."""

    def __init__(
        self,
        kiosk: Any,
        source: Any,
        url: str,
        token: str,
        table: str,
        cache: str | Path,
        *,
        start: DeckFetch,
        detector: Any = "auto",
        interval_s: float = DECK_CHECK_S,
        timeout: float = 15.0,
        check: Callable[[Path], None] | None = check_with_pipeline,
        build: Callable[[Path], Any] | None = None,
        boundary: Callable[[], bool] | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.kiosk = kiosk
        self.source = source
        self.url, self.token, self.table = url, token, table
        self.cache = Path(cache)
        self.detector = detector
        self.interval_s = float(interval_s)
        self.timeout = timeout
        self.check = check
        self.build = build or (lambda profile: build_detector(detector, profile))
        self.boundary = boundary or (lambda: between_deals(kiosk.worker))
        self.say = say
        #: the deck read with now, and a newer one (its DeckFetch and detector) waiting for the
        #: deal in progress to end
        self.in_force = start
        self.pending: tuple[DeckFetch, Any] | None = None
        #: versions not taken (key -> why), so they are not tried again at every check
        self.refused: dict[tuple[Any, ...], str] = {}
        if start.status == "unusable":
            self.refused[_key(start)] = start.message
        self.problem: str | None = start.problem
        self.last: DeckFetch | None = None
        self.checks = 0
        self.swaps = 0
        self.failures = 0
        self._waiting_said = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="table-deck", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _delay(self) -> float:
        if not self.failures:
            return self.interval_s
        return min(max(self.interval_s, MAX_CHECK_BACKOFF_S), self.interval_s * 2**self.failures)

    def _run(self) -> None:
        while not self._stop.wait(self._delay()):
            try:
                self.check_once()
            except Exception as exc:  # noqa: BLE001 - a deck check must never stop the kiosk
                self.problem = f"deck check failed: {type(exc).__name__}: {exc}"
                log.exception("deck check failed")

    # ------------------------------------------------------------------ the check
    def _line(self, text: str, warn: bool = False) -> None:
        (log.warning if warn else log.info)(text)
        if self.say is not None:
            self.say(text)

    def _in_force_text(self) -> str:
        return f"deck {self.in_force.short()}" if self.in_force.using else "the shipped model"

    def check_once(self) -> str:
        """Ask the scoreboard once (the watcher's thread, or a test): ``in force``,
        ``pending`` (a new version waits for the deal boundary), ``refused``, or the
        fetch's status when it could not be asked (``cached``), a download failed its checks
        (``kept``) or there is no deck (``none``, ``unavailable``)."""
        got = fetch_deck(
            self.url, self.token, self.table, self.cache, timeout=self.timeout, check=self.check
        )
        self.checks += 1
        self.last = got
        if got.status == "kept":  # the newest failed its checks: the deck in force stays
            self.failures = min(self.failures + 1, 10)
            self.problem = got.message.split("; reading with", 1)[0]
            self._line(f"deck: {self.problem}; reading on with {self._in_force_text()}", True)
            return got.status
        self.failures = 0
        if got.status in ("cached", "unavailable"):  # not asked: nothing changes
            self.problem = got.message.split("; ", 1)[0]
            return got.status
        if got.status == "none" or got.profile is None:
            self.problem = None
            return got.status
        key = _key(got)
        if self.in_force.using and key == _key(self.in_force):
            self.problem = None
            return "in force"
        pending = self.pending
        if pending is not None and key == _key(pending[0]):
            self.problem = None
            return "pending"
        if key in self.refused:
            self.problem = self.refused[key]
            return "refused"
        why = unfit_reason(got.profile, self.detector)
        det = None
        if why is None:
            try:
                det = self.build(got.profile)
            except Exception as exc:  # noqa: BLE001 - PipelineError, onnxruntime's own
                why = f"the detector cannot read with it ({type(exc).__name__}: {exc})"
        if why is not None:
            msg = f"deck v{got.version} not taken: {why}"
            self.refused[key] = msg
            self.problem = msg
            self._line(
                f"deck: {got.short()} not taken: {why}; reading on with {self._in_force_text()}",
                warn=True,
            )
            return "refused"
        with self._lock:
            self.pending = (got, det)
        self.problem = None
        self._waiting_said = False
        self._line(
            f"deck: {got.short()} downloaded and checked ({got.message}); it is taken up at the "
            f"next deal boundary: a deal in progress is read to its end with "
            f"{self._in_force_text()}"
        )
        return "pending"

    # ------------------------------------------------------------------ the swap
    def between_frames(self, pipe: Any) -> None:
        """The camera's frame hook (``LiveSource.frame_hook``, called before each frame is
        processed): a waiting deck goes in at a deal boundary, else it keeps waiting."""
        pending = self.pending
        if pending is None:
            return
        try:
            if not self.boundary():
                if not self._waiting_said:
                    self._waiting_said = True
                    self._line(f"deck: {pending[0].short()} waits for the deal in progress to end")
                return
            self._swap(pipe, pending)
        except Exception as exc:  # noqa: BLE001 - the camera loop must go on
            self.problem = f"deck swap failed: {type(exc).__name__}: {exc}"
            log.exception("deck swap failed")
            with self._lock:
                self.pending = None

    def _swap(self, pipe: Any, pending: tuple[DeckFetch, Any]) -> None:
        got, det = pending
        was = self._in_force_text()
        pipe.detector = det
        report = getattr(pipe, "report", None)
        if report is not None:
            report.detector = getattr(det, "name", type(det).__name__)
        self.source.detector = det
        with self._lock:
            self.in_force = got
            if self.pending is pending:  # not one newer, downloaded meanwhile
                self.pending = None
        self.swaps += 1
        frame = getattr(self.source, "frames", None)
        self._line(
            f"deck: {got.short()} in force from frame {frame} (was {was}): swapped at a deal "
            "boundary, between two frames"
        )
        store = getattr(self.kiosk, "store", None)
        if store is not None:
            try:
                store.note(
                    "deck",
                    {
                        "event": "swapped",
                        "version": got.version,
                        "name": got.name,
                        "sha256": dict(got.sha256),
                        "was": was,
                        "frame": frame,
                    },
                )
            except Exception as exc:  # noqa: BLE001 - a full disk must not stop the camera
                log.warning("deck note not recorded: %s", exc)

    # ------------------------------------------------------------------ health report
    @property
    def using(self) -> bool:
        return self.in_force.using

    def short(self) -> str:
        return self.in_force.short()

    def health_text(self, reader: str | None = None) -> str:
        text = self.in_force.health_text(reader)
        pending = self.pending
        if pending is not None:
            text = f"{text} · v{pending[0].version} ready: taken up when the deal ends"
        return text[:200]

    def health_fields(self) -> dict[str, Any]:
        fields = self.in_force.health_fields()
        pending = self.pending
        fields["deck_pending"] = None if pending is None else pending[0].version
        fields["deck_problem"] = None if self.problem is None else self.problem[:200]
        return fields


def deck_fields(shared: Any, reader: str | None) -> dict[str, Any]:
    """The health report's deck fields: those of the shared deck (a :class:`DeckFetch` or a
    :class:`DeckWatcher`), ``own`` for a kiosk reading with a ``--deck`` of its own, none for
    one that reads no cards with a deck."""
    fields = getattr(shared, "health_fields", None)
    if callable(fields):
        out: dict[str, Any] = fields()
        return out
    return {"deck_source": "own"} if reader else {}


def attach_deck_watch(
    kiosk: Any,
    source: Any,
    url: str,
    token: str,
    table: str,
    cache: str | Path,
    *,
    start: DeckFetch,
    interval_s: float = DECK_CHECK_S,
    **kw: Any,
) -> DeckWatcher | None:
    """Make a running kiosk take up new deck versions (``table run``): a :class:`DeckWatcher`
    started after the kiosk's own threads and stopped before them, hooked into the camera's
    frame loop. None (the start-up deck stays for the whole run) when ``interval_s`` is 0 or the
    source has no frame loop to swap in (a video file)."""
    kiosk.info["deck_share"] = start
    if interval_s <= 0 or not hasattr(source, "frame_hook"):
        return None
    watcher = DeckWatcher(
        kiosk, source, url, token, table, cache, start=start, interval_s=interval_s, **kw
    )
    source.frame_hook = watcher.between_frames
    begin, end = kiosk.start, kiosk.stop

    def start_all() -> None:
        begin()
        watcher.start()

    def stop_all() -> None:
        watcher.stop()
        end()

    kiosk.start, kiosk.stop = start_all, stop_all
    kiosk.info["deck_share"] = watcher
    kiosk.info["deck_watch"] = watcher
    return watcher
