"""The table screen in headless Chromium at the sizes it is used at (1280x800, 1024x768, a tablet
on its side 800x1280, a phone 390x844), in Chinese and English, through the states of a match:
mid-trick, a deal just over (seats out shown by place, never as cards to play), a tribute being
paid and the tribute and return done. Asserts on element boxes from the live DOM (nothing
outside the viewport, nothing overlapping, no text cut off or broken over lines), on the pass
buttons (only the seat on turn answering a trick has one), and on the string catalogue (no key
without a translation; no English shown in Chinese and no Chinese in English)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.observations import dump_observation
from kiosk.table.app import create_app
from kiosk.table.service import UvicornThread, build_kiosk
from tests.helpers_browser import needs_chromium

from .helpers import PROFILE, free_port, get_json, sim_observations
from .helpers_layout import Browser

pytestmark = needs_chromium

SIZES = [(1280, 800), (1024, 768), (800, 1280), (390, 844)]
NAMES = {"N": "Li Na", "E": "Zhao Yi", "S": "Wang Fang", "W": "Sun Jie"}
OBS = sim_observations(2, 31)  # deal 1: obs[0:118]; deal 2 starts at 118, E pays at 119
#: the states the screen is looked at in: how many of OBS have been fed
STATES = {
    "deal_over": 118,
    "tribute_pending": 119,
    "tribute_paid": 120,
    "tribute_done": 121,
    "mid_trick": 184,
}


class Table:
    """A kiosk in this process behind a real uvicorn server, fed OBS step by step."""

    def __init__(self, tmp: Path) -> None:
        self.kiosk = build_kiosk(
            db=tmp / "k.db", table="tp", profile=PROFILE, source=None, pin="2580"
        )
        self.kiosk.start()
        self.port = free_port()
        # on every address, as a kiosk serving a table tablet: see the network test below
        self.server = UvicornThread(create_app(self.kiosk, manage=False), "0.0.0.0", self.port)
        self.server.start()
        self.url = f"http://127.0.0.1:{self.port}"
        self.fed = 0
        self.kiosk.worker.note("seating", NAMES)

    def feed_to(self, n: int) -> dict[str, Any]:
        assert n >= self.fed
        for o in OBS[self.fed : n]:
            raw = json.loads(dump_observation(o))
            raw.pop("t", None)
            self.kiosk.worker.submit("source", raw)
        self.fed = n
        return dict(get_json(self.url + "/api/state"))

    def close(self) -> None:
        self.server.stop()
        self.kiosk.stop()
        self.kiosk.store.close()


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Table]:
    t = Table(tmp_path_factory.mktemp("pages"))
    try:
        yield t
    finally:
        t.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        yield b


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("shots")


BLOCKS = ["header", "#seat-N", "#seat-E", "#seat-S", "#seat-W", "#centre", "aside"]
LINES = [".brand", ".team", ".deallv", ".tool", ".seat .sid", ".seat .count", ".seat .place",
         ".seat .clock", ".seat .pass", "#trickhead"]  # fmt: skip
FITS = ["header", ".brand", ".seat", "#centre", ".seat .name", ".seat .count", ".seat .place",
        ".seat .sub", "#trick", "#tribute"]  # fmt: skip


def _overlap(a: dict[str, float], b: dict[str, float]) -> float:
    dx = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
    dy = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
    return max(0.0, dx) * max(0.0, dy)


def check_layout(b: Browser, w: int, h: int, where: str) -> dict[str, list[dict[str, Any]]]:
    """Nothing outside the viewport, the blocks apart, one-line labels on one line, no
    content larger than its box; returns the boxes."""
    boxes = b.boxes(sorted(set(BLOCKS + LINES + FITS + [".seat .pass", "#unpaired", "#alarms"])))
    doc = b.js("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
    assert doc == [w, h], f"{where}: the page scrolls ({doc[0]}x{doc[1]} in {w}x{h})"
    for sel in BLOCKS:
        assert len(boxes[sel]) == 1, f"{where}: {sel} not shown"
    for sel, items in boxes.items():
        for r in items:
            assert r["x"] >= -0.5 and r["y"] >= -0.5, f"{where}: {sel} starts off screen: {r}"
            assert r["x"] + r["w"] <= w + 0.5, f"{where}: {sel} cut off on the right: {r}"
            assert r["y"] + r["h"] <= h + 0.5, f"{where}: {sel} cut off at the bottom: {r}"
    for i, a in enumerate(BLOCKS):
        for c in BLOCKS[i + 1 :]:
            ov = _overlap(boxes[a][0], boxes[c][0])
            assert ov < 1, f"{where}: {a} and {c} overlap ({ov:.0f} px²)"
    for sel in LINES:
        for r in boxes[sel]:
            assert r["lines"] <= 1.01 or sel in (".team", ".deallv"), (
                f"{where}: {sel} {r['text']!r} breaks over {r['lines']} lines ({r['w']:.0f} px)"
            )
            assert r["lines"] <= 2.6, f"{where}: {sel} {r['text']!r} is {r['lines']:.1f} lines"
    for sel in FITS:
        for r in boxes[sel]:
            assert r["sw"] <= r["cw"] and r["sh"] <= r["ch"] and r["tw"] <= r["w"] + 0.5, (
                f"{where}: {sel} {r['text']!r} does not fit its box ({r['sw']}x{r['sh']} in "
                f"{r['cw']}x{r['ch']}; text {r['tw']:.1f} px in {r['w']:.1f})"
            )
    return boxes


CJK = re.compile(r"[\u3400-\u9fff]")
ASCII_WORD = re.compile(r"[A-Za-z]{3,}")


def check_language(b: Browser, lang: str, st: dict[str, Any], where: str) -> None:
    """No catalogue key missing; in Chinese no English words but names and the profile's own
    title, in English no Chinese but those."""
    missing = b.js("document.documentElement.getAttribute('data-i18n-missing')")
    assert missing is None, f"{where}: no translation for {missing}"
    assert b.js("document.documentElement.lang") == lang
    text = b.js("document.getElementById('app').innerText")
    if not b.js("document.getElementById('refpanel').hidden"):
        text += "\n" + b.js("document.getElementById('refpanel').innerText")
    # the language switch shows the other language's name
    allowed = " ".join(
        [*NAMES.values(), st["table"], st["profile"], st.get("profile_title") or "", "English 中文"]
    )
    if lang == "zh":
        words = {x for x in ASCII_WORD.findall(text) if x not in allowed}
        assert not words, f"{where}: English shown in Chinese: {sorted(words)}"
    else:
        shown = {x for x in CJK.findall(text) if x not in allowed}
        assert not shown, f"{where}: Chinese shown in English: {''.join(sorted(shown))}"


def test_screen_through_a_match_at_every_size_in_both_languages(
    table: Table, browser: Browser, shots: Path
) -> None:
    for name, n in STATES.items():
        st = table.feed_to(n)
        d = st["deal"]
        for w, h in SIZES:
            for lang in ("zh", "en"):
                where = f"{name} {w}x{h} {lang}"
                browser.open(f"{table.url}/?lang={lang}", w, h)
                browser.screenshot(shots / f"{name}-{w}x{h}-{lang}.png")
                boxes = check_layout(browser, w, h, where)
                check_language(browser, lang, st, where)
                passes = browser.js(
                    "[...document.querySelectorAll('button.pass')].map(b => b.dataset.pass)"
                )
                answering = d and not d["over"] and d["trick"] and d["owner"] != d["turn"]
                assert passes == ([d["turn"]] if answering else []), (where, passes)
                if answering:
                    (btn,) = boxes[".seat .pass"]
                    seat = boxes[f"#seat-{d['turn']}"][0]
                    assert _overlap(btn, seat) == btn["w"] * btn["h"], f"{where}: the pass button"
                check_state(browser, name, st, lang, where)


def _seat_text(b: Browser, seat: str) -> str:
    return str(b.js(f"document.getElementById('seat-{seat}').innerText"))


def check_state(b: Browser, name: str, st: dict[str, Any], lang: str, where: str) -> None:
    d = st["deal"]
    fouls = b.js("document.getElementById('foulsNS').innerText")
    assert fouls == ("犯规 " if lang == "zh" else "fouls ") + f"{st['team_fouls']['NS']}/3", where
    if name == "deal_over":
        assert d["over"] and len(d["order"]) == 4
        for place, seat in enumerate(d["order"], 1):
            text = _seat_text(b, seat)
            label = (
                ["上游", "二游", "三游", "下游"] if lang == "zh" else ["1st", "2nd", "3rd", "4th"]
            )
            assert label[place - 1] in text, (where, seat, text)
            # out: no count of cards to play and no report badge, whatever it still held
            assert b.js(f"document.querySelectorAll('#seat-{seat} .count').length") == 0
            assert ("报牌" if lang == "zh" else "report") not in text, (where, seat, text)
            held = d["counts"][seat]
            if held:
                assert (f"手中余 {held} 张" if lang == "zh" else f"{held} still in hand") in text
    if name == "tribute_pending":
        centre = b.js("document.getElementById('centre').innerText")
        assert ("等待 东 进贡" if lang == "zh" else "waiting for E's tribute") in centre, centre
        assert ("等待开局" if lang == "zh" else "Waiting for a deal") not in centre, centre
    if name == "tribute_paid":  # paid, the return still to come
        text = b.js("document.getElementById('tribute').innerText")
        assert ("东 进贡 西" if lang == "zh" else "E pays W") in text, text
        assert ("等待 西 还贡" if lang == "zh" else "waiting for W to return a card") in text, text
    if name == "tribute_done":
        tb = st["tribute"]["events"]
        assert [e["type"] for e in tb] == ["tribute", "tribute_returned"]
        html = b.js("document.getElementById('tribute').innerHTML")
        text = b.js("document.getElementById('tribute').innerText")
        assert f'data-card="{tb[0]["card"]}"' in html and f'data-card="{tb[1]["card"]}"' in html
        assert ("东 进贡 西" if lang == "zh" else "E pays W") in text, text
        assert ("西 还贡 东" if lang == "zh" else "W returns to E") in text, text
        assert ("等待" if lang == "zh" else "waiting") not in text, text
    if name == "mid_trick" and d["trick"]:
        head = b.js("document.getElementById('trickhead').innerText")
        kinds = {"full_house": ("三带二", "full house"), "single": ("单张", "single")}
        zh, en = kinds.get(d["trick"]["kind"], (None, None))
        if zh:
            assert (zh if lang == "zh" else en) in head, head
        assert d["trick"]["kind"] not in head or lang == "en", f"{where}: a raw kind code"


def test_referee_mode_in_both_languages_fits_and_corrects_with_the_card_grid(
    table: Table, browser: Browser, shots: Path
) -> None:
    """Referee mode: events with times, words and card pictures (no raw codes), the card grid
    for a correction instead of prompt() boxes; a correction made with it is an event."""
    table.feed_to(STATES["mid_trick"])
    for w, h in SIZES:
        for lang in ("zh", "en"):
            where = f"referee {w}x{h} {lang}"
            browser.open(f"{table.url}/?lang={lang}", w, h)
            browser.js("document.getElementById('refbtn').click()")
            browser.js("document.getElementById('pin').value = '2580'")
            browser.js("document.getElementById('pinok').click()")
            _wait(browser, "!document.getElementById('refbody').hidden", where)
            _wait(browser, "document.querySelectorAll('#reflist .ev').length > 0", where)
            check_language(browser, lang, table.feed_to(table.fed), where)
            first = browser.js("document.querySelector('#reflist .ev').innerText")
            assert re.match(r"\d+:\d\d", first), f"{where}: no time on {first!r}"
            assert browser.js("document.querySelectorAll('#reflist svg[data-card]').length") > 0
            box = browser.boxes([".refbox"])[".refbox"][0]
            assert box["x"] >= 0 and box["x"] + box["w"] <= w and box["y"] + box["h"] <= h
            browser.js("document.querySelector('#reflist [data-act=correct]').click()")
            assert browser.js("document.querySelectorAll('#grid .gc').length") == 54
            browser.screenshot(shots / f"referee-{w}x{h}-{lang}.png")
            browser.js("sessionStorage.clear()")
    # a correction through the grid: the last play becomes what the referee taps
    browser.open(f"{table.url}/?lang=en", 1280, 800)
    browser.js("document.getElementById('refbtn').click()")
    browser.js("document.getElementById('pin').value = '2580'")
    browser.js("document.getElementById('pinok').click()")
    _wait(browser, "document.querySelectorAll('#reflist [data-act=correct]').length > 0", "ref")
    ev = browser.js("document.querySelector('#reflist [data-act=correct]').dataset.id")
    browser.js("document.querySelector('#reflist [data-act=correct]').click()")
    browser.js("document.getElementById('corrpass').click()")
    _wait(browser, "document.getElementById('refmsg').innerText !== ''", "correction answer")
    assert browser.js("document.getElementById('refmsg').innerText") == "Recorded"
    events = get_json(table.url + "/api/events")
    assert any(e["type"] == "correction" and e["replaces"] == ev for e in events)
    browser.js("sessionStorage.clear()")


def test_referee_mode_opens_the_review_desk_already_signed_in(
    table: Table, browser: Browser
) -> None:
    """The referee's 'review footage' button takes the session to /review in the same language
    (the desk, not its PIN box)."""
    table.feed_to(max(table.fed, STATES["mid_trick"]))
    browser.open(f"{table.url}/?lang=en", 1280, 800)
    browser.js("document.getElementById('refbtn').click()")
    browser.js("document.getElementById('pin').value = '2580'")
    browser.js("document.getElementById('pinok').click()")
    _wait(browser, "!document.getElementById('refbody').hidden", "referee mode")
    assert browser.js("document.getElementById('reviewbtn').innerText") == "Review footage"
    browser.js("document.getElementById('reviewbtn').click()")
    at_desk = "location.pathname === '/review' && !!document.getElementById('desk')"
    _wait(browser, at_desk, "/review")
    _wait(browser, "!document.getElementById('desk').hidden", "the review desk signed in")
    assert browser.js("document.getElementById('login').hidden")
    assert browser.js("document.documentElement.lang") == "en"
    browser.js("sessionStorage.clear()")


def _wait(b: Browser, cond: str, what: str, timeout: float = 10.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not b.js(cond):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: timed out waiting for {cond}")
        time.sleep(0.05)


def _video_frame(w: int, h: int) -> Any:
    """A frame of the bundled recording (a drawn stand-in when it cannot be read), w x h BGR."""
    import cv2
    import numpy as np

    cap = cv2.VideoCapture(str(Path(__file__).resolve().parents[2] / "datasets/demo/game.mp4"))
    ok, frame = cap.read()
    cap.release()
    if not ok:
        rng = np.random.default_rng(5)
        frame = rng.integers(0, 255, (h, w, 3), dtype=np.uint8)
    return cv2.resize(frame, (w, h))


OVERLAY_BLOCKS = [".bar", "#s-N", "#s-E", "#s-S", "#s-W", "#trickbox", ".info"]


def test_broadcast_overlay_over_a_video_frame(table: Table, browser: Browser, shots: Path) -> None:
    """The overlay at 1080p and 720p, full-screen and lower-third, both languages: its panels
    inside the picture and apart, sized for reading at a distance (cards, names, counts), the
    rest transparent so the video shows through unchanged; the pairs by name, fouls in words."""
    import cv2
    import numpy as np

    st = table.feed_to(STATES["mid_trick"])
    d = st["deal"]
    seen: dict[tuple[str, int], dict[str, Any]] = {}
    for w, h in [(1920, 1080), (1280, 720)]:
        frame = _video_frame(w, h)
        for layout in ("full", "lower"):
            for lang in ("zh", "en"):
                where = f"overlay {layout} {w}x{h} {lang}"
                browser.call(
                    "Emulation.setDefaultBackgroundColorOverride",
                    color={"r": 0, "g": 0, "b": 0, "a": 0},
                )
                browser.open(f"{table.url}/overlay/table?delay=0&layout={layout}&lang={lang}", w, h)
                shot = cv2.imread(
                    str(browser.screenshot(shots / f"{layout}-{w}x{h}-{lang}.png")),
                    cv2.IMREAD_UNCHANGED,
                )
                assert shot.shape == (h, w, 4), f"{where}: expected an RGBA screenshot"
                missing = browser.js("document.documentElement.getAttribute('data-i18n-missing')")
                assert missing is None, f"{where}: no translation for {missing}"
                text = browser.js("document.getElementById('ov').innerText")
                names = " ".join(NAMES.values())
                if lang == "zh":
                    words = {x for x in ASCII_WORD.findall(text) if x not in names}
                    assert not words, f"{where}: English on a Chinese overlay: {words}"
                else:
                    assert not CJK.search(text), f"{where}: Chinese on an English overlay"
                assert "Li Na · Wang Fang" in text and "Zhao Yi · Sun Jie" in text, where
                boxes = browser.boxes([*OVERLAY_BLOCKS, "#trick svg", ".s .who", ".s .c"])
                for sel in OVERLAY_BLOCKS[:-1]:
                    assert len(boxes[sel]) == 1, f"{where}: {sel} not shown"
                shown = [s for s in OVERLAY_BLOCKS if boxes[s]]
                for sel in shown:
                    r = boxes[sel][0]
                    assert r["x"] >= 0 and r["y"] >= 0, f"{where}: {sel} off the picture {r}"
                    assert r["x"] + r["w"] <= w and r["y"] + r["h"] <= h, f"{where}: {sel} {r}"
                    assert r["sw"] <= r["cw"] + 1, f"{where}: {sel} text cut off {r}"
                for i, a in enumerate(shown):
                    for c in shown[i + 1 :]:
                        assert _overlap(boxes[a][0], boxes[c][0]) < 1, f"{where}: {a} over {c}"
                # read at a distance: card images, names and counts large for the frame
                if d["trick"]:
                    cards = boxes["#trick svg"]
                    assert len(cards) == len(d["trick"]["cards"]), where
                    least = 0.12 if layout == "full" else 0.095
                    assert min(c["h"] for c in cards) >= least * h, f"{where}: cards {cards[0]}"
                size = browser.js(
                    "parseFloat(getComputedStyle(document.querySelector('.s .who')).fontSize)"
                )
                assert size >= 0.0145 * w, f"{where}: seat labels {size} px"
                count = browser.js(
                    "parseFloat(getComputedStyle(document.querySelector('.s .c')).fontSize)"
                )
                assert count >= 0.025 * w, f"{where}: cards-left {count} px"
                seen[(layout, w)] = boxes
                # transparent outside the panels: the video shows through unchanged
                alpha = shot[:, :, 3].astype(np.float32) / 255.0
                clear = (alpha == 0).mean()
                assert clear > (0.45 if layout == "full" else 0.6), f"{where}: {clear:.2f} clear"
                if layout == "lower":
                    assert (alpha[: int(0.55 * h)] == 0).all(), f"{where}: not a lower third"
                out = frame * (1 - alpha[..., None]) + shot[:, :, :3] * alpha[..., None]
                out = out.astype(np.uint8)
                cv2.imwrite(str(shots / f"{layout}-{w}x{h}-{lang}-over-video.png"), out)
                assert (out[alpha == 0] == frame[alpha == 0]).all()
                panel = alpha > 0.8
                assert (
                    panel.mean() > 0.03
                    and np.abs(out[panel].astype(int) - frame[panel].astype(int)).mean() > 20
                ), f"{where}: the panels do not show over the video"
    # 720p is 1080p scaled: the same picture
    for layout in ("full", "lower"):
        big, small = seen[(layout, 1920)], seen[(layout, 1280)]
        for sel in ("#s-N", "#s-W", ".bar"):
            for k in ("x", "y", "w"):
                assert abs(big[sel][0][k] * 2 / 3 - small[sel][0][k]) <= 3, (layout, sel, k)
    browser.call("Emulation.setDefaultBackgroundColorOverride")
    # a bad layout or language is refused, saying what to give
    import urllib.error
    import urllib.request

    for q in ("layout=side", "lang=fr"):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{table.url}/overlay/table?{q}", timeout=10)
        assert err.value.code == 422


def test_a_tablet_on_the_network_is_read_only_until_a_referee_pairs_it(
    table: Table, browser: Browser, shots: Path
) -> None:
    """A device that is not the kiosk itself sees the table with a notice and no pass button;
    a referee pairs it from its own screen (referee mode, "Pair this screen"); then the seat
    on turn has its pass button there and a press is recorded."""
    from .test_screen_access import lan_address

    ip = lan_address()
    if ip is None:
        pytest.skip("no network address besides loopback on this machine")
    lan = f"http://{ip}:{table.port}"
    st = table.feed_to(table.fed)
    while not (st["deal"] and st["deal"]["trick"] and st["deal"]["owner"] != st["deal"]["turn"]):
        st = table.feed_to(table.fed + 1)
    for lang, notice in (("zh", "本屏未配对"), ("en", "not paired")):
        browser.open(f"{lan}/?lang={lang}", 390, 844)
        assert notice in browser.js("document.getElementById('unpaired').innerText")
        assert browser.js("document.querySelectorAll('button.pass').length") == 0
        check_layout(browser, 390, 844, f"unpaired 390x844 {lang}")
        check_language(browser, lang, st, f"unpaired {lang}")
    browser.screenshot(shots / "unpaired-390x844-en.png")
    browser.js("document.getElementById('refbtn').click()")
    browser.js("document.getElementById('pin').value = '2580'")
    browser.js("document.getElementById('pinok').click()")
    _wait(browser, "!document.getElementById('refbody').hidden", "referee mode")
    browser.js("document.getElementById('pairname').value = 'table tp tablet'")
    browser.js("document.getElementById('pairok').click()")
    _wait(browser, "document.getElementById('pairstate').innerText !== ''", "the pairing")
    assert "table tp tablet" in browser.js("document.getElementById('pairstate').innerText")
    browser.js("document.getElementById('logout').click()")  # the referee leaves
    browser.open(f"{lan}/?lang=en", 390, 844)  # a reload keeps the pairing
    _wait(browser, "document.getElementById('unpaired').hidden", "the notice to go")
    turn = st["deal"]["turn"]
    assert browser.js("[...document.querySelectorAll('button.pass')].map(b => b.dataset.pass)") == [
        turn
    ]
    before = len([e for e in get_json(table.url + "/api/events") if e["type"] == "pass"])
    browser.js("document.querySelector('button.pass').click()")
    _wait(
        browser,
        f"document.querySelectorAll('#seat-{turn}.turn').length === 0",
        "the turn to move on",
    )
    passes = [e for e in get_json(table.url + "/api/events") if e["type"] == "pass"]
    assert len(passes) == before + 1 and passes[-1]["seat"] == turn
