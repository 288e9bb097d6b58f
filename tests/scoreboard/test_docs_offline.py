"""The API docs (``/docs``) work with no internet (issue 42): the page loads Swagger UI from the
scoreboard itself (the installed ``swagger-ui-py`` package), and headless Chromium, with every
host name but the scoreboard's unresolvable, renders the operations of the spec."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers_browser import chromium, needs_chromium

from .helpers import Server

#: Every host name fails to resolve; the scoreboard is reached by its loopback address.
OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = Path(tmp_path_factory.mktemp("docs"))
    server = Server(str(root / "sb.db"), log=root / "server.log").start()
    try:
        yield server
    finally:
        server.stop()


def test_docs_page_names_only_local_assets(srv: Server) -> None:
    page = httpx.get(f"{srv.url}/docs", timeout=30).text
    assets = re.findall(r"""(?:src|href)=['"]([^'"]+)['"]""", page)
    assert any(a.endswith("swagger-ui-bundle.js") for a in assets), page
    assert all(a.startswith("/") for a in assets), f"an asset off this server: {assets}"
    for path in ("/docs-assets/swagger-ui-bundle.js", "/docs-assets/swagger-ui.css"):
        r = httpx.get(srv.url + path, timeout=30)
        assert r.status_code == 200 and len(r.content) > 10_000, path
    assert httpx.get(f"{srv.url}/redoc", timeout=30).status_code == 404  # no offline ReDoc


@needs_chromium
def test_docs_render_in_chromium_with_the_network_off(srv: Server) -> None:
    dom = chromium(f"{srv.url}/docs", OFFLINE, "--virtual-time-budget=20000", "--dump-dom")
    # Swagger UI ran: the spec's title and its operations are in the DOM.
    assert 'class="swagger-ui"' in dom
    assert "guandan-kiosk scoreboard" in dom
    assert "opblock" in dom and "/api/v1/events/batch" in dom
    assert "/api/v1/tables/{table_id}/assignment" in dom
    assert "Failed to load API definition" not in dom
