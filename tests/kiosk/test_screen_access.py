"""Who may press, against a real kiosk process (``guandan table run`` on 0.0.0.0): a pass comes
only from the table's paired screen or referee mode; a device elsewhere on the network is
refused with a clear error in both languages and nothing is recorded; the overlay and the
read-only state stay open. The kiosk's own screen (a loopback browser) is paired with the page
and fetches the new pairing after a restart; a tablet paired in referee mode keeps its pairing
across a restart until it is unpaired. And the string catalogue: every key the pages and the
server use has both languages."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.combos import KINDS
from engine.events import EVENT_FIELDS, FOUL_KINDS
from kiosk.table.i18n import catalogue
from tests.helpers_server import REPO

from .helpers import Proc, free_port, get_json, kiosk_proc, post_json, wait_for

STATIC = REPO / "kiosk" / "table" / "static"
OVERLAY = REPO / "kiosk" / "overlay" / "static"
CJK = re.compile(r"[\u3400-\u9fff]")


def lan_address() -> str | None:
    """This machine's address on its network (not loopback), or None without one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.200", 9))  # no packet is sent: only the route is looked up
            ip = str(s.getsockname()[0])
        except OSError:
            return None
    return None if ip.startswith("127.") else ip


def get_text(url: str, headers: dict[str, str] | None = None) -> str:
    import urllib.request

    req = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read().decode("utf-8")


@pytest.fixture(scope="module")
def kiosk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proc]:
    d = tmp_path_factory.mktemp("access")
    lines = [
        {"t": 1.0, "type": "deal_start", "first_leader": "S"},
        {"t": 3.0, "type": "played", "seat": "S", "cards": ["D3"]},
    ]
    obs = d / "obs.jsonl"
    obs.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    k = kiosk_proc(d / "k.db", free_port(), d / "k.log", obs=obs, table="ta", speed=0,
                   extra=["--host", "0.0.0.0"])  # fmt: skip
    k.start()
    try:
        wait_for(lambda: get_json(k.url + "/api/state")["source"]["done"], 30, "the replay")
        yield k
    finally:
        k.stop()


def _passes(k: Proc) -> list[dict[str, Any]]:
    return [e for e in get_json(k.url + "/api/events") if e["type"] == "pass"]


def _local_token(k: Proc) -> str:
    page = get_text(k.url + "/")
    m = re.search(r"window\.GD_PAIRING = (\{.*?\});", page)
    assert m, "the kiosk's own screen gets no pairing with the page"
    pairing = json.loads(m.group(1))
    assert pairing["local"] is True and pairing["token"]
    return str(pairing["token"])


def test_a_pass_from_a_device_on_the_network_is_refused_in_both_languages(kiosk: Proc) -> None:
    ip = lan_address()
    if ip is None:
        pytest.skip("no network address besides loopback on this machine")
    lan = f"http://{ip}:{kiosk.port}"
    assert get_json(kiosk.url + "/api/state")["deal"]["turn"] == "E"
    # a phone on the venue's Wi-Fi: the page shows the table, without a pairing
    page = get_text(lan + "/")
    assert '"token": null' in page and '"local": false' in page
    for headers in ({}, {"X-Table-Pairing": "guessed-token"}, {"X-Referee-Token": "forged"}):
        status, body = post_json(lan + "/api/seat/E/pass", {}, headers)
        assert status == 403, (headers, status, body)
        assert body["code"] == "err.not_paired"
        assert "not paired with table ta" in body["detail"] and "referee mode" in body["detail"]
        assert "配对" in body["detail_zh"] and "裁判模式" in body["detail_zh"]
    # it cannot fetch the local pairing either
    status, body = post_json(lan + "/api/pairing/local", {})
    assert status == 403 and body["code"] == "err.not_local" and CJK.search(body["detail_zh"])
    assert _passes(kiosk) == []  # nothing was recorded
    # read-only pages and the overlay stay open
    assert get_json(lan + "/api/state")["table"] == "ta"
    assert get_json(lan + "/overlay/state?delay=0")["state"]["deal"]["turn"] == "E"
    assert "GDOverlay" in get_text(lan + "/overlay/table")
    # a tablet paired at set-up by the referee presses from the network
    _s, login = post_json(lan + "/api/referee/login", {"pin": "1357"})
    ref = {"X-Referee-Token": login["token"]}
    status, dev = post_json(lan + "/api/referee/pair", {"name": "table ta tablet"}, ref)
    assert status == 200 and dev["token"] and dev["name"] == "table ta tablet"
    tablet = {"X-Table-Pairing": dev["token"]}
    assert get_json(lan + "/api/pairing", headers=tablet)["paired"] == "table ta tablet"
    status, body = post_json(lan + "/api/seat/E/pass", {}, tablet)
    assert status == 200 and body["events"][0]["type"] == "pass", body
    assert [e["seat"] for e in _passes(kiosk)] == ["E"]
    # the log keeps only the hash of the token
    assert dev["token"] not in (kiosk.log_tail(10**6) + get_text(lan + "/api/events"))
    kiosk.tablet = tablet  # type: ignore[attr-defined]
    kiosk.device = dev["id"]  # type: ignore[attr-defined]


def test_the_kiosk_s_own_screen_is_paired_and_re_paired_after_a_restart(kiosk: Proc) -> None:
    token = _local_token(kiosk)
    assert get_json(kiosk.url + "/api/pairing", headers={"X-Table-Pairing": token})["paired"] == (
        "local"
    )
    turn = get_json(kiosk.url + "/api/state")["deal"]["turn"]
    status, body = post_json(kiosk.url + f"/api/seat/{turn}/pass", {}, {"X-Table-Pairing": token})
    assert status == 200 and body["events"][0]["seat"] == turn
    # referee mode may press too
    _s, login = post_json(kiosk.url + "/api/referee/login", {"pin": "1357"})
    turn = get_json(kiosk.url + "/api/state")["deal"]["turn"]
    r = post_json(kiosk.url + f"/api/seat/{turn}/pass", {}, {"X-Referee-Token": login["token"]})
    assert r[0] == 200, r
    kiosk.stop()
    kiosk.start()
    # a restart: the old local token is refused, the page (loopback) fetches the new one
    status, body = post_json(kiosk.url + "/api/seat/N/pass", {}, {"X-Table-Pairing": token})
    assert status == 403 and body["code"] == "err.not_paired"
    status, fresh = post_json(kiosk.url + "/api/pairing/local", {})
    assert status == 200 and fresh["token"] != token and fresh["token"] == _local_token(kiosk)
    tablet = getattr(kiosk, "tablet", None)
    if tablet is None:
        return  # no network address: the tablet part was skipped
    # the tablet's pairing survived the restart (its hash is in the log's notes) ...
    assert get_json(kiosk.url + "/api/pairing", headers=tablet)["paired"] == "table ta tablet"
    _s, login = post_json(kiosk.url + "/api/referee/login", {"pin": "1357"})
    ref = {"X-Referee-Token": login["token"]}
    status, listing = 200, get_json(kiosk.url + "/api/referee/pairings", headers=ref)
    assert [d["name"] for d in listing["devices"]] == ["table ta tablet"]
    # ... until the referee unpairs it
    status, body = post_json(kiosk.url + "/api/referee/unpair", {"id": kiosk.device}, ref)  # type: ignore[attr-defined]
    assert status == 200
    assert get_json(kiosk.url + "/api/pairing", headers=tablet)["paired"] is None
    status, body = post_json(kiosk.url + "/api/referee/unpair", {"id": "nope"}, ref)
    assert status == 404 and body["code"] == "err.no_device"
    assert post_json(kiosk.url + "/api/referee/pair", {"name": "x"}, {})[0] == 401


def test_referee_answers_are_honest(tmp_path: Path) -> None:
    """Referee mode's answers are honest: a foul marked with no deal in progress, or a void of
    an event already voided, is refused (409, both languages), not answered OK."""
    from fastapi.testclient import TestClient

    from kiosk.table.app import create_app
    from kiosk.table.service import build_kiosk

    from .helpers import PROFILE

    k = build_kiosk(db=tmp_path / "k.db", table="tf", profile=PROFILE, source=None, pin="4321")
    with TestClient(create_app(k)) as c:
        h = {"X-Referee-Token": c.post("/api/referee/login", json={"pin": "4321"}).json()["token"]}
        r = c.post("/api/referee/foul", json={"kind": "slow_play", "seat": "N"}, headers=h)
        assert r.status_code == 409, r.text
        assert r.json()["code"] == "err.no_deal" and "没有进行中的一局" in r.json()["detail_zh"]
        c.post("/api/referee/deal/start", json={"first_leader": "N"}, headers=h)
        r = c.post("/api/referee/foul", json={"kind": "slow_play", "seat": "N"}, headers=h)
        assert r.status_code == 200 and r.json()["events"][-1]["kind"] == "slow_play"
        # voiding it twice: the second is refused, not answered OK
        foul = r.json()["events"][-1]["id"]
        assert c.post("/api/referee/void", json={"event_id": foul}, headers=h).status_code == 200
        r = c.post("/api/referee/void", json={"event_id": foul}, headers=h)
        assert r.status_code == 409 and r.json()["code"] == "err.already_replaced", r.text
        assert "已被更正或作废" in r.json()["detail_zh"]
        r = c.post("/api/referee/correct", json={"event_id": foul, "seat": "N", "cards": "D3"},
                   headers=h)  # fmt: skip
        assert r.status_code == 409 and "already corrected or voided" in r.json()["detail"]
        # a malformed request is answered in both languages too
        r = c.post("/api/referee/foul", json={"kind": "slow_play", "seat": "X"}, headers=h)
        assert r.status_code == 422 and r.json()["code"] == "err.bad_request"
        assert "seat" in r.json()["detail"] and "请求有误" in r.json()["detail_zh"]


# ---------------------------------------------------------------------- the string catalogue
def _used_keys() -> set[str]:
    """Catalogue keys named literally in the pages' scripts and HTML and in the server."""
    keys: set[str] = set()
    for f in [*STATIC.glob("*.js"), *STATIC.glob("*.html"), *OVERLAY.glob("*.js"),
              *OVERLAY.glob("*.html")]:  # fmt: skip
        text = f.read_text(encoding="utf-8")
        keys |= set(re.findall(r"""\btr\(\s*["']([\w.]+)["']""", text))
        keys |= set(re.findall(r"""data-i18n(?:-placeholder)?=["']([\w.]+)["']""", text))
        keys |= set(re.findall(r"""\bT\(\s*["']([\w.]+)["']""", text))
    for f in [REPO / "kiosk" / "table" / "app.py", REPO / "kiosk" / "overlay" / "routes.py"]:
        keys |= set(re.findall(r"""["'](err\.\w+)["']""", f.read_text(encoding="utf-8")))
    # "foul." + kind and the like are built from data: see _built_keys
    return {k for k in keys if "." in k and not k.endswith(".")}


def _built_keys() -> set[str]:
    """Keys the scripts build from data (``"foul." + kind``): every value they can take."""
    keys = {f"seat.{s}" for s in "NESW"} | {f"place.{i}" for i in range(1, 5)}
    keys |= {f"team.{t}" for t in ("NS", "EW")} | {f"kind.{k}" for k in KINDS}
    keys |= {f"foul.{k}" for k in FOUL_KINDS} | {"kind.unknown", "card.SB", "card.HR"}
    keys |= {f"ev.{t}" for t in EVENT_FIELDS}
    keys |= {f"src.{k}" for k in ("camera", "video", "observations", "simulation", "none")}
    return keys


def test_every_string_the_screens_show_has_both_languages() -> None:
    cat = catalogue()
    needed = _used_keys() | _built_keys()
    missing = sorted(k for k in needed if k not in cat)
    assert not missing, f"keys used but not in static/i18n.json: {missing}"
    for key, entry in cat.items():
        assert set(entry) == {"zh", "en"}, f"{key}: give exactly zh and en"
        assert entry["zh"].strip() and entry["en"].strip(), f"{key}: an empty text"
        fields = {lang: sorted(re.findall(r"\{(\w+)", entry[lang])) for lang in ("zh", "en")}
        assert fields["zh"] == fields["en"], f"{key}: the languages fill in {fields}"
        # Chinese text in zh; none in en (the language switch names the other language)
        if key not in ("ui.lang", "ui.none", "card.HR", "card.SB") and not key.startswith("seat."):
            assert CJK.search(entry["zh"]) or entry["zh"] == entry["en"], f"{key}: zh {entry}"
        if key != "ui.lang":
            assert not CJK.search(entry["en"]), f"{key}: Chinese in the English text"
