"""Deck files for the shared-deck tests (tests/scoreboard/test_deck_share.py,
tests/table/test_table_deck_share.py): a deck profile as ``guandan vision enrol`` writes it and
an "adapted" classifier (the shipped models/card-classes.onnx with the metadata ``guandan vision
adapt`` stamps on its output), both real files the kiosk's pipeline loads."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from tests.helpers_server import REPO

BASE = REPO / "models" / "card-classes.onnx"
CORNERS = REPO / "models" / "card-corners.onnx"


def make_profile(path: Path, name: str = "plastic", classifier: str | None = None) -> Path:
    """A small deck profile of the shipped classifier (160-d prototypes of three cards)."""
    from vision.enrol import DeckProfile, classifier_id

    rng = np.random.default_rng(len(name))
    vec = rng.normal(size=(3, 160)).astype(np.float32)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    cid = classifier or classifier_id(BASE)
    DeckProfile(name, cid, ["S2", "C2", "HR"], vec, [2, 2, 1], weight=1.0).save(path)
    return path


def make_adapted(
    path: Path,
    *,
    deck: str = "plastic",
    accepted: bool = True,
    class_names: list[str] | None = None,
    seconds: float = 1.0,
) -> Path:
    """The shipped classifier stamped as ``guandan vision adapt`` stamps its output."""
    import onnx

    model = onnx.load(str(BASE))
    props = {
        "guandan_adapted": "1",
        "guandan_adapted_deck": deck,
        "guandan_adapted_from": "card-classes.onnx test",
        "guandan_adapted_at": "2026-12-04T23:00:00Z",
        "guandan_adapted_accepted": "1" if accepted else "0",
        "guandan_adapted_val": json.dumps(
            {"crops": 10, "base_acc": 0.8, "adapted_acc": 0.9 if accepted else 0.7, "s": seconds}
        ),
    }
    if class_names is not None:
        props["class_names"] = json.dumps(class_names)
    existing = {p.key: p for p in model.metadata_props}
    for k, v in props.items():
        if k in existing:
            existing[k].value = v
        else:
            entry = model.metadata_props.add()
            entry.key, entry.value = k, v
    onnx.save(model, str(path))
    return path


def upload(
    url: str,
    tid: int,
    profile: bytes,
    model: bytes | None = None,
    note: str = "",
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    files: dict[str, Any] = {"profile": ("deck.json", profile, "application/json")}
    if model is not None:
        files["model"] = ("deck.classes.onnx", model, "application/octet-stream")
    with httpx.Client(base_url=url, timeout=60.0, headers=headers or {}) as c:
        return c.post(f"/api/v1/tournaments/{tid}/deck", files=files, data={"note": note})


class CorruptingProxy:
    """A real HTTP server in a thread that passes requests on to ``upstream`` and, while
    ``corrupt`` is set, flips a byte of every deck file it passes back (a damaged download);
    ``requests`` lists the paths asked and each answer's status."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.corrupt = True
        self.requests: list[tuple[str, int, int]] = []  # path, status, body bytes
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_a: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                keep = ("Authorization", "If-None-Match", "Accept")
                headers = {k: v for k, v in self.headers.items() if k in keep}
                req = urllib.request.Request(proxy.upstream + self.path, headers=headers)
                try:
                    with urllib.request.urlopen(req, timeout=30) as resp:
                        status, body, out = resp.status, resp.read(), resp.headers
                except urllib.error.HTTPError as exc:
                    status, body, out = exc.code, exc.read(), exc.headers
                if proxy.corrupt and status == 200 and "/deck/" in self.path and body:
                    body = body[:-1] + bytes([body[-1] ^ 0xFF])
                proxy.requests.append((self.path, status, len(body)))
                self.send_response(status)
                for k in ("Content-Type", "ETag", "X-Deck-Sha256"):
                    if out.get(k):
                        self.send_header(k, out[k])
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> CorruptingProxy:
        self.thread.start()
        return self

    def __exit__(self, *_a: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
