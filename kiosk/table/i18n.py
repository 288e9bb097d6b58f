"""The table kiosk's string catalogue and the pages' inline state, shared by the table app
(``kiosk/table/app.py``) and the overlay pages mounted on it (``kiosk/overlay/routes.py``).

Every string a person reads comes from one catalogue, ``static/i18n.json`` (``{key: {zh, en}}``);
a page gets it, with its first state, inlined as ``window.GD_I18N`` / ``window.GD_STATE``. It lives
here, not in the app, so the overlay needs nothing of the app that mounts it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

CATALOGUE = Path(__file__).parent / "static" / "i18n.json"


@lru_cache(maxsize=1)
def catalogue() -> dict[str, dict[str, str]]:
    """The string catalogue ``{key: {"zh": ..., "en": ...}}`` shared by the pages and the server."""
    data: dict[str, dict[str, str]] = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    return data


def say(key: str, **params: Any) -> dict[str, str]:
    """The catalogue's entry ``key`` with ``{name}`` filled in, in both languages."""
    entry = catalogue()[key]
    return {lang: entry[lang].format(**params) for lang in ("en", "zh")}


def _js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False).replace("</", "<\\/")


def inline_state(page: Path, state: Any, **extra: Any) -> str:
    """The page with ``window.GD_STATE`` set to ``state`` and ``window.GD_I18N`` to the string
    catalogue (JSON, safe inside <script>); each ``extra`` becomes ``window.GD_<NAME>``."""
    html = page.read_text(encoding="utf-8")
    js = f"window.GD_STATE = {_js(state)};window.GD_I18N = {_js(catalogue())};"
    for k, v in extra.items():
        js += f"window.GD_{k.upper()} = {_js(v)};"
    return html.replace("<!--STATE-->", f"<script>{js}</script>", 1)
