"""The tournament's shared deck (issue 44, "Sharing"), on a real scoreboard process on SQLite and
on PostgreSQL, fetched by the kiosk's own code (kiosk/table/deckfetch.py) over HTTP: upload ->
fetch (checksums) -> a second start downloads nothing -> a new version is fetched; a damaged
download is refused and the last good deck kept; an unreachable scoreboard leaves the cached
deck in use; bad uploads are refused with the named error and store nothing; migration 0010
up and down."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from kiosk.table.deckfetch import DeckCache, DeckWatcher, fetch_deck
from tests.helpers_server import free_port

from .deck_helpers import BASE, CORNERS, CorruptingProxy, make_adapted, make_profile, upload
from .helpers import REPO, Server, new_tournament


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    tmp = tmp_path_factory.mktemp("deckfiles")
    return {
        "profile": make_profile(tmp / "deck.json", "plastic").read_bytes(),
        "profile2": make_profile(tmp / "deck2.json", "plastic-2").read_bytes(),
        "model": make_adapted(tmp / "deck.classes.onnx").read_bytes(),
        "rejected": make_adapted(tmp / "rejected.onnx", accepted=False).read_bytes(),
        "classes40": make_adapted(
            tmp / "c40.onnx", class_names=[f"S{r}" for r in "23456789"] * 5
        ).read_bytes(),
    }


def _versions(server: Server, tid: int) -> list[int]:
    with server.client() as c:
        r = c.get(f"/api/v1/tournaments/{tid}/deck")
        assert r.status_code == 200, r.text
        return [h["version"] for h in r.json()["history"]]


def test_upload_fetch_restart_new_version(
    server: Server, tmp_path: Path, files: dict[str, bytes]
) -> None:
    t = new_tournament(server, tables=2)
    tid, (t1, t2) = t["id"], t["tables"]
    tok1, tok2 = t["tokens"][t1], t["tokens"][t2]
    cache1, cache2 = tmp_path / "k1-deck", tmp_path / "k2-deck"

    # nothing shared yet: the shipped model, said so
    got = fetch_deck(server.url, tok1, t1, cache1)
    assert got.status == "none" and got.profile is None and not got.using
    assert "shares no deck" in got.message and got.health_text().startswith("shipped model")

    r = upload(server.url, tid, files["profile"], files["model"], note="hall A")
    assert r.status_code == 201, r.text
    v1 = r.json()
    assert v1["version"] == 1 and v1["name"] == "plastic" and v1["note"] == "hall A"
    assert v1["files"]["profile"]["sha256"] == _sha(files["profile"])
    assert v1["files"]["model"] == {
        "name": "deck.classes.onnx",
        "sha256": _sha(files["model"]),
        "size": len(files["model"]),
        "url": f"/api/v1/tournaments/{tid}/deck/1/model",
    }
    assert v1["model_meta"]["guandan_adapted_deck"] == "plastic" and v1["warnings"] == []

    # the kiosk fetches it: both files, checked, in place
    got = fetch_deck(server.url, tok1, t1, cache1)
    assert got.status == "fetched" and got.using and got.version == 1
    assert got.downloaded == len(files["profile"]) + len(files["model"])
    assert got.profile is not None and got.profile.read_bytes() == files["profile"]
    assert got.profile.with_name("deck.classes.onnx").read_bytes() == files["model"]
    assert got.sha256 == {"profile": _sha(files["profile"]), "model": _sha(files["model"])}
    assert "shared v1 plastic" in got.health_text("plastic (abc)")
    cur = json.loads((cache1 / "current.json").read_text())
    assert cur["version"] == 1 and cur["files"]["model"]["size"] == len(files["model"])
    # what the kiosk then reads with: the profile and the adapted classifier beside it
    from vision.adapt import deck_reader

    reader = deck_reader(got.profile)
    assert reader.classifier == got.profile.with_name("deck.classes.onnx")

    # a restart that has it downloads nothing: the manifest answers 304 to its ETag
    got = fetch_deck(server.url, tok1, t1, cache1)
    assert got.status == "current" and got.downloaded == 0 and got.version == 1
    with server.client(tok1) as c:
        r = c.get(f"/api/v1/tables/{t1}/deck")
        assert r.status_code == 200 and r.headers["etag"] == cur["etag"]
        assert (
            c.get(f"/api/v1/tables/{t1}/deck", headers={"If-None-Match": cur["etag"]}).status_code
            == 304
        )
        f = c.get(r.json()["deck"]["files"]["model"]["url"])
        assert f.content == files["model"] and f.headers["x-deck-sha256"] == _sha(files["model"])
        assert c.get(f.url.path, headers={"If-None-Match": f.headers["etag"]}).status_code == 304

    # one enrolment serves every table: table 2 with its own token
    got2 = fetch_deck(server.url, tok2, t2, cache2)
    assert got2.status == "fetched" and got2.version == 1
    # tokens: none, a wrong one, another table's
    with httpx.Client(base_url=server.url) as c:
        assert (
            c.get(f"/api/v1/tables/{t1}/deck", headers={"Authorization": "Bearer nope"}).status_code
            == 401
        )
        assert (
            c.get(
                f"/api/v1/tables/{t1}/deck", headers={"Authorization": f"Bearer {tok2}"}
            ).status_code
            == 403
        )
        assert (
            c.get(
                f"/api/v1/tables/{t1}/deck/1/profile", headers={"Authorization": f"Bearer {tok2}"}
            ).status_code
            == 403
        )
        assert (
            c.get(
                "/api/v1/tables/nosuch/deck", headers={"Authorization": f"Bearer {tok1}"}
            ).status_code
            == 404
        )

    # a new version (the profile alone) is fetched at the next start; the older one is kept
    r = upload(server.url, tid, files["profile2"])
    assert r.status_code == 201 and r.json()["version"] == 2 and "model" not in r.json()["files"]
    got = fetch_deck(server.url, tok1, t1, cache1)
    assert got.status == "fetched" and got.version == 2 and got.name == "plastic-2"
    assert got.downloaded == len(files["profile2"]) and "model" not in got.sha256
    assert got.profile is not None and not got.profile.with_name("deck.classes.onnx").exists()
    assert _versions(server, tid) == [2, 1]
    # v3 repeats v1's files: found in the cache by SHA-256, nothing downloaded
    r = upload(server.url, tid, files["profile"], files["model"])
    assert r.json()["version"] == 3
    got = fetch_deck(server.url, tok1, t1, cache1)
    assert got.status == "fetched" and got.version == 3 and got.downloaded == 0
    # the cache keeps the version in force and the one before it
    assert sorted(d.name.split("-")[0] for d in cache1.iterdir() if d.is_dir()) == ["v2", "v3"]
    # the admin's file download and the list
    with server.client() as c:
        r = c.get(f"/api/v1/tournaments/{tid}/deck/2/profile")
        assert r.status_code == 200 and r.content == files["profile2"]
        assert c.get(f"/api/v1/tournaments/{tid}/deck/2/model").status_code == 404
        assert c.get(f"/api/v1/tournaments/{tid}/deck/9/profile").status_code == 404
        cur = c.get(f"/api/v1/tournaments/{tid}/deck").json()["current"]
        assert cur["version"] == 3


def test_damaged_download_is_refused_and_the_last_good_deck_kept(
    server: Server, tmp_path: Path, files: dict[str, bytes]
) -> None:
    t = new_tournament(server, tables=1)
    tid, table = t["id"], t["tables"][0]
    token = t["tokens"][table]
    cache = tmp_path / "deck"
    assert upload(server.url, tid, files["profile"], files["model"]).status_code == 201
    assert fetch_deck(server.url, token, table, cache).version == 1
    assert upload(server.url, tid, files["profile2"], files["model"]).status_code == 201
    with CorruptingProxy(server.url) as proxy:
        got = fetch_deck(proxy.url, token, table, cache)
        assert got.status == "kept" and got.using and got.version == 1
        assert "checksum mismatch" in got.message and "cached deck v1" in got.message
        assert "newer version refused" in got.health_text()
        asked = [p for p, status, _n in proxy.requests if "/deck/2/" in p and status == 200]
        assert asked == [f"/api/v1/tables/{table}/deck/2/profile"]  # the model was in the cache
        # nothing half-written: v1 in force, no temporary folder left
        assert json.loads((cache / "current.json").read_text())["version"] == 1
        assert not [d for d in cache.iterdir() if d.name.startswith(".tmp-")]
        assert DeckCache(cache).load() is not None
        proxy.corrupt = False  # the network heals: v2 comes through the same way
        got = fetch_deck(proxy.url, token, table, cache)
        assert got.status == "fetched" and got.version == 2 and got.name == "plastic-2"


class _Source:
    """What the deck watcher swaps on: a live source's detector and frame count."""

    frames = 7
    frame_hook = None

    def __init__(self, detector: Any) -> None:
        self.detector = detector


class _Pipe:
    def __init__(self, detector: Any) -> None:
        self.detector = detector


def test_running_kiosk_checks_with_a_304_and_swaps_at_the_boundary(
    server: Server, tmp_path: Path, files: dict[str, bytes]
) -> None:
    """The live swap's check (kiosk/table/deckfetch.py ``DeckWatcher``) on both databases: an
    unchanged deck is one 304, a new version is downloaded once and goes in only when the
    table is between deals; a version downloaded damaged is not taken."""
    t = new_tournament(server, tables=1)
    tid, table = t["id"], t["tables"][0]
    token = t["tokens"][table]
    cache = tmp_path / "deck"
    assert upload(server.url, tid, files["profile"], files["model"]).status_code == 201
    start = fetch_deck(server.url, token, table, cache)
    assert start.version == 1
    built: list[Path] = []

    def build(profile: Path) -> str:
        built.append(profile)
        return f"detector of {profile.parent.name}"

    between = [False]
    source, pipe = _Source("detector v1"), _Pipe("detector v1")
    with CorruptingProxy(server.url) as proxy:
        proxy.corrupt = False
        watch = DeckWatcher(
            None,
            source,
            proxy.url,
            token,
            table,
            cache,
            start=start,
            detector="model",
            build=build,
            boundary=lambda: between[0],
        )
        assert watch.check_once() == "in force"
        assert [s for p, s, _n in proxy.requests] == [304]  # If-None-Match: nothing sent

        assert upload(server.url, tid, files["profile2"], files["model"]).status_code == 201
        proxy.corrupt = True
        assert watch.check_once() == "kept" and watch.pending is None
        assert "checksum mismatch" in (watch.problem or "") and watch.failures == 1
        assert watch.health_fields()["deck_version"] == 1

        proxy.corrupt = False
        del proxy.requests[:]
        assert watch.check_once() == "pending" and watch.problem is None
        assert [p.parent.name for p in built] == [f"v2-{_sha(files['profile2'])[:8]}"]
        # only the profile came down: the model was held by its SHA-256
        assert [p for p, s, _n in proxy.requests if s == 200 and "/deck/2/" in p] == [
            f"/api/v1/tables/{table}/deck/2/profile"
        ]
        assert watch.health_fields() == {
            "deck_source": "shared",
            "deck_version": 1,
            "deck_pending": 2,
            "deck_problem": None,
        }
        watch.between_frames(pipe)  # a deal in progress: it waits
        assert pipe.detector == "detector v1" and watch.in_force.version == 1
        del proxy.requests[:]
        assert watch.check_once() == "pending" and len(built) == 1
        assert [s for p, s, _n in proxy.requests] == [304]

        between[0] = True
        watch.between_frames(pipe)
        assert pipe.detector == source.detector == f"detector of {built[0].parent.name}"
        assert watch.in_force.version == 2 and watch.pending is None and watch.swaps == 1
        assert watch.health_fields()["deck_version"] == 2
        assert "shared v2 plastic-2" in watch.health_text()
        assert watch.check_once() == "in force"


def test_unreachable_scoreboard_uses_the_cached_deck(
    server: Server, tmp_path: Path, files: dict[str, bytes]
) -> None:
    t = new_tournament(server, tables=1)
    tid, table = t["id"], t["tables"][0]
    token = t["tokens"][table]
    assert upload(server.url, tid, files["profile"], files["model"]).status_code == 201
    cache = tmp_path / "deck"
    assert fetch_deck(server.url, token, table, cache).status == "fetched"
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    got = fetch_deck(down, token, table, cache, timeout=3)
    assert got.status == "cached" and got.using and got.version == 1
    assert "scoreboard unreachable" in got.message and "cached deck v1" in got.message
    assert "cached: scoreboard unreachable" in got.health_text()
    # a rotated token: refused, the cached deck still read with
    with server.client() as c:
        c.post(f"/api/v1/tables/{table}/token").raise_for_status()
    got = fetch_deck(server.url, token, table, cache)
    assert got.status == "cached" and "HTTP 401" in got.message
    # no cache and no scoreboard: the shipped model, said clearly
    got = fetch_deck(down, token, table, tmp_path / "empty", timeout=3)
    assert got.status == "unavailable" and got.profile is None
    assert got.health_text().startswith("shipped model: scoreboard unreachable")
    # a cached file damaged on the kiosk's disk is not read with
    good = tmp_path / "deck"
    cur = json.loads((good / "current.json").read_text())
    (good / cur["dir"] / "deck.json").write_text("{}")
    got = fetch_deck(down, token, table, good, timeout=3)
    assert got.status == "unavailable"


BAD: list[tuple[str, Any, Any, int, str]] = [
    ("not JSON", b"\x89PNG not json", None, 422, "profile: not JSON"),
    ("JSON, not a profile", b'{"name": "tigullio", "index_box": [0, 0, 1, 1]}', None, 422,
     "profile: JSON but not a deck profile"),
    ("damaged profile", b'{"kind": "guandan-deck-profile", "format": 1, "name": "x"}', None,
     422, "profile: deck profile is damaged"),
    ("empty profile", b"", None, 422, "profile: the file is empty"),
    ("model not ONNX", "profile", b"not onnx at all", 422, "model: not an ONNX model"),
    ("detector, not classifier", "profile", "corners", 422,
     "model: an ONNX model but not a card classifier"),
    ("shipped, not adapted", "profile", "base", 422, "not one adapted to a deck"),
    ("rejected by adapt", "profile", "rejected", 422, "guandan vision adapt rejected this"),
    ("wrong class count", "profile", "classes40", 422,
     "model: 40 classes, a card classifier has 55"),
    ("profile too large", "big", None, 413, "profile: 16.0 MB is too large (at most 16 MB)"),
]  # fmt: skip


def test_bad_uploads_are_refused_and_store_nothing(server: Server, files: dict[str, bytes]) -> None:
    t = new_tournament(server, tables=1)
    tid = t["id"]
    assert upload(server.url, tid, files["profile"]).status_code == 201
    blobs = {
        "profile": files["profile"],
        "corners": CORNERS.read_bytes(),
        "base": BASE.read_bytes(),
        "big": b" " * (16 * 1024 * 1024) + b"{}",
        **files,
    }
    for what, profile, model, status, says in BAD:
        p = blobs[profile] if isinstance(profile, str) else profile
        m = blobs[model] if isinstance(model, str) else model
        r = upload(server.url, tid, p, m)
        assert r.status_code == status, (what, r.text)
        assert says in r.json()["detail"], (what, r.json()["detail"])
    assert _versions(server, tid) == [1]  # nothing stored on refusal
    with server.client() as c:
        r = c.post(f"/api/v1/tournaments/{tid}/deck", json={"profile": "x"})
        assert r.status_code == 422 and "multipart/form-data" in r.json()["detail"]
        r = c.post(f"/api/v1/tournaments/{tid}/deck", files={"model": ("m", b"x")})
        assert r.status_code == 422 and "'profile' missing" in r.json()["detail"]
        r = c.post("/api/v1/tournaments/999999/deck", files={"profile": ("d", files["profile"])})
        assert r.status_code == 404
    assert _versions(server, tid) == [1]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kiosk", "scoreboard", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_cli_upload_admin_page_and_admin_key(tmp_path: Path, files: dict[str, bytes]) -> None:
    db = str(tmp_path / "sb.db")
    prof = tmp_path / "enrol" / "deck.json"
    prof.parent.mkdir()
    prof.write_bytes(files["profile"])
    (prof.parent / "deck.classes.onnx").write_bytes(files["model"])  # adapt's output beside it
    assert _cli("add-event", "--db", db, "--name", "Cup").stdout.strip() == "1"
    r = _cli("deck", "upload", "--db", db, "--tournament", "1", "--profile", str(prof))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["version"] == 1 and out["files"]["model"]["sha256"] == _sha(files["model"])
    assert "deck v1 plastic (profile" in r.stderr
    r = _cli("deck", "upload", "--db", db, "--event", "1", "--profile", str(prof), "--no-model")
    assert r.returncode == 0 and "model" not in json.loads(r.stdout)["files"]
    r = _cli("deck", "upload", "--db", db, "--event", "1", "--profile", str(BASE))
    assert r.returncode == 2 and "profile: not JSON" in r.stderr
    r = _cli(
        "deck", "upload", "--db", db, "--event", "1", "--profile", str(prof), "--model", str(BASE)
    )
    assert r.returncode == 2 and "not one adapted to a deck" in r.stderr
    r = _cli("deck", "upload", "--db", db, "--event", "1", "--profile", str(tmp_path / "no.json"))
    assert r.returncode == 2 and "file not found" in r.stderr
    r = _cli("deck", "show", "--db", db, "--event", "1")
    shown = json.loads(r.stdout)
    assert shown["current"]["version"] == 2 and [h["version"] for h in shown["history"]] == [2, 1]

    srv = Server(db, admin_key="sekrit", log=tmp_path / "sb.log").start()
    try:
        auth = ("admin", "sekrit")
        assert upload(srv.url, 1, files["profile"]).status_code == 401  # admin only
        with httpx.Client(base_url=srv.url, auth=auth, timeout=60) as c:
            page = c.get("/admin/1").text
            assert 'id="deck-version">v2</b> plastic' in page
            assert "no adapted classifier" in page and "无适配模型" in page
            assert "Share as version 3 共享为第 3 版" in page
            # the admin page's form: multipart, post/redirect/get
            r = c.post(
                "/admin/1/deck",
                files={
                    "profile": ("deck.json", files["profile2"], "application/json"),
                    "model": ("deck.classes.onnx", files["model"], "application/octet-stream"),
                },
                data={"note": "from the form"},
            )
            assert r.status_code == 303 and r.headers["location"] == "/admin/1#deck"
            page = c.get("/admin/1").text
            assert 'id="deck-version">v3</b> plastic-2' in page and "from the form" in page
            assert f"<code>{_sha(files['model'])[:12]}</code>" in page
            r = c.post("/admin/1/deck", files={"profile": ("x.json", b"nope", "text/plain")})
            assert r.status_code == 422 and "profile: not JSON" in r.text
            # the table's token (no admin key) fetches; a table made with the CLI
        r = _cli("add-table", "--db", db, "--event", "1", "--table", "A1")
        token = r.stdout.strip()
        got = fetch_deck(srv.url, token, "A1", tmp_path / "k-deck")
        assert got.status == "fetched" and got.version == 3
    finally:
        srv.stop()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_migration_0010_up_and_down(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """0010 adds the deck tables to a database at 0009 without touching its data, and its
    downgrade drops them again (a tournament and its tables stay)."""
    from sqlalchemy import inspect, text

    from kiosk.scoreboard.db import current_revision, make_engine, upgrade
    from kiosk.scoreboard.settings import normalise_db_url

    if backend == "sqlite":
        url = normalise_db_url(str(tmp_path / "m.db"))
    else:
        url = normalise_db_url(request.getfixturevalue("pg_schema_url"))
        url = url.replace("search_path%3D", "search_path%3Ddeck_")
        import psycopg

        schema = url.split("search_path%3D", 1)[1]
        base = url.split("?", 1)[0].replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            conn.execute(f'CREATE SCHEMA "{schema}"')
    engine = make_engine(url)
    try:
        upgrade(engine, "0009")
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO tournament (id, name, profile, format, lots_seed, created_at) "
                    "VALUES (1, 'cup', 'swiss-421', 'swiss', 1, CURRENT_TIMESTAMP)"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO game_table (id, code, tournament_id, name, position, token_hash, "
                    "created_at) VALUES ('A1', 'A1', 1, '', 1, 'h1', CURRENT_TIMESTAMP)"
                )
            )
        upgrade(engine)
        assert current_revision(engine) == "0010"
        assert {"deck_version", "deck_file"} <= set(inspect(engine).get_table_names())
        from kiosk.scoreboard import decks
        from kiosk.scoreboard.db import session_factory

        prof = make_profile(tmp_path / "deck.json").read_bytes()
        with session_factory(engine)() as s:
            dv, _ = decks.upload(s, 1, prof)
            assert dv.version == 1
            data, sha = decks.read_file(s, 1, 1, "profile")
            assert data == prof and sha == _sha(prof)
        upgrade_down(engine, "0009")
        assert current_revision(engine) == "0009"
        names = set(inspect(engine).get_table_names())
        assert "deck_version" not in names and "deck_file" not in names
        with engine.begin() as conn:
            assert conn.execute(text("SELECT count(*) FROM game_table")).scalar() == 1
            assert conn.execute(text("SELECT name FROM tournament")).scalar() == "cup"
        upgrade(engine)  # and up again
        assert current_revision(engine) == "0010"
    finally:
        engine.dispose()


def upgrade_down(engine: Any, revision: str) -> None:
    from alembic import command

    from kiosk.scoreboard.db import alembic_config

    cfg = alembic_config(engine.url.render_as_string(hide_password=False))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, revision)
