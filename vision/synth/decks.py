"""Card faces: aisleriot deck sheets rendered to per-card PNGs, plus procedurally drawn decks.

Aisleriot (Debian ``gnome-cards-data``, GPL-3+) ships each deck as one 13x5 SVG sheet: rows clubs,
diamonds, hearts, spades (columns A, 2..10, J, Q, K), then black joker, red joker, back. We cut
the rendered sheet on that grid. Each rendered deck directory holds ``<CARD>.png`` for the 54
distinct cards (CONTRACT.md notation; black joker = ``SB``, red joker = ``HR``) and
``deck.json`` with the corner-index box (fractions of the card size) measured from the ink.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

AISLERIOT_DIR = Path("/usr/share/aisleriot/cards")
SUITS = "SHCD"
RANKS = "23456789TJQKA"
#: The 54 classes in CONTRACT notation; class index = position in this tuple.
CARD_NAMES: tuple[str, ...] = tuple(s + r for s in SUITS for r in RANKS) + ("SB", "HR")

#: Left out (issue 4): Swiss suits, 4-colour suits, French letters on courts, identical jokers.
EXCLUDED = {
    "swiss-xvii",
    "anglo_modern_4_color",
    "neoclassical_4_color",
    "ancient_french",
    "dondorf",
    "Атласные",  # byte-identical design to atlasnye
    "atlasnye_skat",  # 4-colour suits
    "slavic_costumes",  # Cyrillic rank letters on aces and courts
    "tarocco",  # Italian rank letters on courts (R for the king)
    "tango_nuevo",  # giant index across half the card: no corner index to find
}
#: Cards whose design carries no corner index at all, by deck (seen on the rendered faces,
#: 2026-11-30): guyenne-classic's J, Q and K show only a large suit sign or the figure's art
#: where the other cards have rank + suit. Scenes label no box there (an "ignore" region
#: instead): there is no index to find, and no corner reader can tell J from Q from K.
NO_INDEX: dict[str, str] = {
    "guyenne-classic": "JQK",
    "proc-serif-picjokers": "BR",
    "proc-serif-wordjokers": "BR",
}
#: (a joker's "rank" is the letter after its suit: SB -> "B", HR -> "R")
#: (paris and guyenne-classic share jokers, so both are held out together.)
#: Deck designs never used for training, only for synthetic validation.
HELD_OUT = ("tigullio", "plastic", "guyenne-classic", "paris", "proc-serif")

_SHEET_ROWS = {"C": 0, "D": 1, "H": 2, "S": 3}
_SHEET_COLS = {"A": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6, "8": 7, "9": 8, "T": 9}
_SHEET_COLS.update({"J": 10, "Q": 11, "K": 12})
CARD_W = 240  # rendered card width in pixels (height follows the deck's aspect)
#: The designs Debian's gnome-cards-data 3.22 ships (``AISLERIOT_DIR/<name>.svgz``): a name here
#: whose sheet is missing asks for that package, any other unknown name is bad input.
AISLERIOT_DESIGNS = (
    "ancient_french anglo anglo_bitmap anglo_modern anglo_modern_4_color anglo_poker atlasnye "
    "atlasnye_skat bellot berlin dondorf gnomangelo gnomangelo_bitmap guyenne-classic lattmann "
    "neoclassical neoclassical_4_color orell ornamental paris plastic rheinland simplistic "
    "swiss-xvii tango tango_nuevo tarocco tigullio"
).split()


class DeckUnavailable(FileNotFoundError):
    """A named deck design that cannot be rendered with what is installed here; the message
    names the deck, what is missing and what to install."""


class UnknownDeck(ValueError):
    """A deck name that is no design this project can render (bad input)."""


@dataclass(frozen=True)
class Deck:
    name: str
    path: Path
    index_box: tuple[float, float, float, float]  # x1, y1, x2, y2 as fractions of card w, h
    #: the cards this design has (KDE decks without jokers lack SB and HR)
    cards: tuple[str, ...] = CARD_NAMES

    def has_index(self, card: str) -> bool:
        """False for this design's cards that carry no corner index (``NO_INDEX``)."""
        return card[1:] not in NO_INDEX.get(self.name, "")

    def image(self, card: str) -> np.ndarray:
        """The BGRA face (cached per process; callers must not modify it)."""
        key = str(self.path / f"{card}.png")
        img = _FACES.get(key)
        if img is None:
            img = cv2.imread(key, cv2.IMREAD_UNCHANGED)
            if img is None:
                raise FileNotFoundError(f"{key} missing: re-run `guandan train decks`")
            _FACES[key] = img
        return img


_FACES: dict[str, np.ndarray] = {}


def aisleriot_sheets() -> list[Path]:
    return sorted(p for p in AISLERIOT_DIR.glob("*.svgz") if p.stem not in EXCLUDED)


def _ink_mask(card: np.ndarray) -> np.ndarray:
    """Pixels that are clearly not card-white paper (and opaque)."""
    rgb = card[:, :, :3].astype(np.int16)
    alpha = card[:, :, 3] if card.shape[2] == 4 else np.full(card.shape[:2], 255, np.uint8)
    dark = (255 - rgb.min(axis=2)) > 70
    sat = (rgb.max(axis=2) - rgb.min(axis=2)) > 60
    return (dark | sat) & (alpha > 200)


def measure_index_box(cards: dict[str, np.ndarray]) -> tuple[float, float, float, float]:
    """Union of the ink near the top-left corner of A, 2, 3 (no pips there), as card fractions."""
    boxes = []
    for suit in SUITS:
        for rank in "A23":
            img = cards[suit + rank]
            h, w = img.shape[:2]
            m = _ink_mask(img)
            mx, my = int(0.035 * w), int(0.025 * h)
            region = m[my : int(0.40 * h), mx : int(0.30 * w)]
            n, lab, stats, _ = cv2.connectedComponentsWithStats(region.astype(np.uint8), 8)
            keep = np.zeros_like(region)
            for i in range(1, n):
                x, y, bw, bh, area = stats[i]
                if area < 4 or bw > 0.25 * w:  # frame lines and specks are not the index
                    continue
                keep |= lab == i
            ys, xs = np.nonzero(keep)
            if len(xs) == 0:
                continue
            boxes.append(
                ((xs.min() + mx) / w, (ys.min() + my) / h, (xs.max() + mx) / w, (ys.max() + my) / h)
            )
    if not boxes:
        return (0.03, 0.02, 0.16, 0.26)
    a = np.array(boxes)
    x1, y1 = np.median(a[:, 0]), np.median(a[:, 1])
    x2, y2 = np.quantile(a[:, 2], 0.9), np.quantile(a[:, 3], 0.9)
    pad = 0.012
    return (
        max(0.0, float(x1) - pad),
        max(0.0, float(y1) - pad),
        min(0.45, float(x2) + pad + 0.02),  # "10" is wider than the single-letter ranks
        min(0.5, float(y2) + pad),
    )


def sheet_renderer() -> str:
    """How this machine renders an aisleriot SVG sheet: ``cairosvg`` (the train extra) when
    importable, else Debian's ``rsvg-convert`` (librsvg2-bin; the same faces to within a grey
    level on 99.9 % of the pixels, tigullio 2026-12-04); DeckUnavailable when neither is."""
    try:
        import cairosvg  # noqa: F401  (train extra)

        return "cairosvg"
    except (ImportError, OSError):  # OSError: the package without its libcairo
        pass
    if shutil.which("rsvg-convert"):
        return "rsvg-convert"
    raise DeckUnavailable(
        "there is no SVG renderer here: install cairosvg (pip install cairosvg, or the train "
        "extra: pip install -e '.[train]') or Debian's rsvg-convert (apt-get install librsvg2-bin)"
    )


def _sheet_png(sheet: Path, width: int) -> bytes:
    """The whole sheet rendered ``width`` pixels wide, as PNG bytes."""
    import subprocess

    how = sheet_renderer()
    if how == "cairosvg":
        import cairosvg

        return bytes(cairosvg.svg2png(url=str(sheet), output_width=width))
    r = subprocess.run(
        ["rsvg-convert", "-w", str(width), str(sheet)], capture_output=True, check=False
    )
    if r.returncode != 0 or not r.stdout:
        msg = r.stderr.decode(errors="replace").strip()[:200]
        raise OSError(f"{sheet}: rsvg-convert could not render it ({msg})")
    return r.stdout


def _staging(out: Path) -> Path:
    """A fresh folder beside ``out`` to render a deck into (``_publish`` renames it to ``out``):
    a reader never sees half a deck, and two renderers at once do not mix their files."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    return tmp


def _publish(tmp: Path, out: Path) -> Deck:
    """Rename the finished ``tmp`` folder to ``out`` (when another process got there first,
    or an unfinished ``out`` without deck.json is in the way, keep the finished one)."""
    if out.exists() and not (out / "deck.json").exists():
        shutil.rmtree(out, ignore_errors=True)  # an interrupted render of the old code
    try:
        tmp.rename(out)
    except OSError:
        if not (out / "deck.json").exists():
            raise
        shutil.rmtree(tmp, ignore_errors=True)
    return load_deck(out)


def render_aisleriot(sheet: Path, out_root: Path) -> Deck:
    """Deck ``<sheet stem>`` cut from its aisleriot sheet (rendered by ``sheet_renderer``)."""
    out = out_root / sheet.stem
    meta = out / "deck.json"
    if meta.exists():
        return load_deck(out)
    png = _sheet_png(sheet, CARD_W * 13)
    arr = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
    if arr is None:
        raise OSError(f"{sheet}: the rendered sheet is not an image")
    if arr.shape[2] == 3:
        arr = cv2.cvtColor(arr, cv2.COLOR_BGR2BGRA)
    sh, sw = arr.shape[:2]
    cw, ch = sw / 13.0, sh / 5.0
    cards: dict[str, np.ndarray] = {}

    def cut(row: int, col: int) -> np.ndarray:
        x1, y1 = int(round(col * cw)), int(round(row * ch))
        x2, y2 = int(round((col + 1) * cw)), int(round((row + 1) * ch))
        cell = arr[y1:y2, x1:x2]
        # trim transparent margins so the card fills its image
        ys, xs = np.nonzero(cell[:, :, 3] > 20)
        return cell[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].copy()

    for suit, row in _SHEET_ROWS.items():
        for rank, col in _SHEET_COLS.items():
            cards[suit + rank] = cut(row, col)
    cards["SB"] = cut(4, 0)
    cards["HR"] = cut(4, 1)
    box = measure_index_box(cards)
    tmp = _staging(out)
    for name, img in cards.items():
        cv2.imwrite(str(tmp / f"{name}.png"), img)
    (tmp / "deck.json").write_text(
        json.dumps({"name": sheet.stem, "source": str(sheet), "index_box": box})
    )
    return _publish(tmp, out)


# --------------------------------------------------------------------------- KDE card decks
KDEGAMES_DIR = Path("/usr/share/carddecks")
#: KDE decks (Debian ``kdegames-card-data-kf5``) for the classifier's corner mini-scenes only,
#: named ``kde-<dir>``. Left out: svg-future (printed-circuit "cards" with hex digits, no suit
#: signs), svg-dondorf (left out of aisleriot too), svg-gm-paris and svg-tigullio-international
#: (the designs of the held-out paris and tigullio), svg-xskat-german (German suits),
#: svg-konqi-modern and svg-xskat-french (no document size: rsvg cannot place their cards),
#: svg-oxygen, svg-oxygen-air and svg-oxygen-white (rank top right, suit top left: no corner
#: index of rank over suit).
KDE_DECKS = (
    "ancient-egyptians",
    "jolly-royal",
    "nicu-ornamental",
    "nicu-white",
    "penguins",
    "standard",
)
_KDE_RANKS = {"A": "1", "T": "10", "J": "jack", "Q": "queen", "K": "king"}
_KDE_SUITS = {"S": "spade", "H": "heart", "C": "club", "D": "diamond"}
_KDE_JOKERS = {"SB": "black_joker", "HR": "red_joker"}


def _rsvg(svg: Path, element: str, zoom: float) -> np.ndarray | None:
    """One element of ``svg`` rendered by ``rsvg-convert -i`` (librsvg2-bin), trimmed to its
    opaque pixels, BGRA; None when the file has no such element."""
    import shutil
    import subprocess

    if shutil.which("rsvg-convert") is None:
        raise DeckUnavailable("rsvg-convert missing: apt-get install librsvg2-bin")
    r = subprocess.run(
        ["rsvg-convert", "-i", element, "-z", f"{zoom:g}", str(svg)],
        capture_output=True,
        check=False,
    )
    if r.returncode != 0 or not r.stdout:
        return None
    img = cv2.imdecode(np.frombuffer(r.stdout, np.uint8), cv2.IMREAD_UNCHANGED)
    if img is None:
        return None
    if img.shape[2] == 3:
        img = cv2.cvtColor(img, cv2.COLOR_BGR2BGRA)
    ys, xs = np.nonzero(img[:, :, 3] > 20)
    if len(xs) == 0:
        return None
    return img[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].copy()


def kde_card_id(card: str) -> str:
    """The element id of ``card`` (CONTRACT notation) in a KDE card-deck SVG."""
    if card in _KDE_JOKERS:
        return _KDE_JOKERS[card]
    return f"{_KDE_RANKS.get(card[1], card[1])}_{_KDE_SUITS[card[0]]}"


def render_kdegames(name: str, out_root: Path) -> Deck:
    """Deck ``kde-<name>`` from ``/usr/share/carddecks/svg-<name>``: each card rendered by its
    element id at CARD_W pixels wide. Jokers only where the design has them (``missing`` in
    deck.json lists the cards it lacks)."""
    out = out_root / f"kde-{name}"
    meta = out / "deck.json"
    if meta.exists():
        return load_deck(out)
    svgs = sorted((KDEGAMES_DIR / f"svg-{name}").glob("*.svgz"))
    if not svgs:
        raise DeckUnavailable(
            f"{KDEGAMES_DIR}/svg-{name} missing: apt-get install kdegames-card-data-kf5"
        )
    svg = svgs[0]
    cards: dict[str, np.ndarray] = {}
    missing = []
    for card in CARD_NAMES:
        first = _rsvg(svg, kde_card_id(card), 1.0)
        if first is None:
            if card in _KDE_JOKERS:
                missing.append(card)
                continue
            raise ValueError(f"{svg}: no element {kde_card_id(card)!r} for {card}")
        img = _rsvg(svg, kde_card_id(card), CARD_W / first.shape[1])
        if img is None:
            raise ValueError(f"{svg}: element {kde_card_id(card)!r} did not render")
        if img.shape[1] != CARD_W:
            img = cv2.resize(
                img,
                (CARD_W, round(img.shape[0] * CARD_W / img.shape[1])),
                interpolation=cv2.INTER_AREA,
            )
        cards[card] = img
    box = measure_index_box(cards)
    tmp = _staging(out)
    for card, img in cards.items():
        cv2.imwrite(str(tmp / f"{card}.png"), img)
    (tmp / "deck.json").write_text(
        json.dumps({"name": out.name, "source": str(svg), "index_box": box, "missing": missing})
    )
    return _publish(tmp, out)


def build_kdegames(out_root: Path, names: tuple[str, ...] = KDE_DECKS) -> list[Deck]:
    return [render_kdegames(n, out_root) for n in names]


def load_deck(path: Path) -> Deck:
    meta = json.loads((path / "deck.json").read_text())
    return Deck(
        meta["name"],
        path,
        tuple(meta["index_box"]),  # type: ignore[arg-type]
        tuple(c for c in CARD_NAMES if c not in meta.get("missing", ())),
    )


# --------------------------------------------------------------------------- procedural decks
_SUIT_GLYPH = {"S": "\u2660", "H": "\u2665", "C": "\u2663", "D": "\u2666"}
_FONTS = {
    "proc-sans": "DejaVuSans-Bold.ttf",
    "proc-serif": "DejaVuSerif-Bold.ttf",
    "proc-cond": "DejaVuSansCondensed-Bold.ttf",
    "proc-mono": "DejaVuSansMono-Bold.ttf",
}
_CJK_FONT = "/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc"  # fonts-noto-cjk
_SYMBOL_FONT = "DejaVuSans.ttf"


def font_path(name: str) -> str:
    """A DejaVu font from Debian's fonts-dejavu-core, else the copy matplotlib ships."""
    system = Path("/usr/share/fonts/truetype/dejavu") / name
    if system.exists():
        return str(system)
    try:
        import matplotlib

        mpl = Path(matplotlib.__file__).parent / "mpl-data" / "fonts" / "ttf"
        if (mpl / name).exists():
            return str(mpl / name)
        return str(mpl / ("DejaVuSans-Bold.ttf" if "Bold" in name else "DejaVuSans.ttf"))
    except ImportError:
        raise FileNotFoundError(f"font {name}: apt-get install fonts-dejavu-core") from None


def pip_grid(
    n: int, w: int, h: int, cols_x: tuple[float, float], rows_y: tuple[float, float]
) -> list[tuple[float, float]]:
    """Centres of ``n`` pips on a w x h face: one column up to 3, else two at ``cols_x`` (left,
    spacing) as fractions of w; rows spread over ``rows_y`` (top, height) as fractions of h."""
    cols = 1 if n <= 3 else 2
    rows = math.ceil(n / cols)
    out = []
    for k in range(n):
        r_, c_ = divmod(k, cols)
        px = w * (0.5 if cols == 1 else (cols_x[0] + cols_x[1] * c_))
        out.append((px, h * (rows_y[0] + rows_y[1] * (r_ + 0.5) / rows)))
    return out


#: Procedural designs drawn like another one (its font and seed, so every other card is the
#: same face) but with other jokers: ``"picture"`` jokers are one large jester picture and no
#: corner index at all, the small joker in black ink, the big one in colour, the same drawing
#: (many printed decks do this; their jokers are read by their whole face, vision/faces.py).
#: ``"word"`` jokers print the word JOKER down each corner, one letter under the other, in the
#: joker's ink (black for the small one, red for the big one), over a smaller jester picture:
#: the Western poker deck's joker, whose corner shows no rank and suit (its J is no jack).
#: Not in ``build_all``: no training set sees them.
PROC_VARIANTS: dict[str, tuple[str, str]] = {
    "proc-serif-picjokers": ("proc-serif", "picture"),
    "proc-serif-wordjokers": ("proc-serif", "word"),
}


def _jester(
    d: Any, w: int, h: int, ink: tuple[int, ...], colours: Sequence[tuple[int, ...]]
) -> None:
    """A joker's picture, no index: a jester's head with a three-pointed hat, a collar and two
    stars, filling most of the face (``colours``: hat, face, collar, stars; ``ink``: lines)."""
    hat, face, collar, star = colours
    cx, cy, r = w * 0.5, h * 0.52, w * 0.2
    lw = max(2, int(w * 0.015))
    tips = [(w * 0.14, h * 0.16), (w * 0.5, h * 0.1), (w * 0.86, h * 0.16)]
    base = [(cx - r * 1.3, cy - r * 0.55), (cx, cy - r * 0.9), (cx + r * 1.3, cy - r * 0.55)]
    d.polygon([base[0], tips[0], base[1]], fill=hat, outline=ink, width=lw)
    d.polygon([base[1], tips[1], base[2]], fill=hat, outline=ink, width=lw)
    d.polygon([base[1], tips[2], base[2]], fill=hat, outline=ink, width=lw)
    for tx, ty in tips:
        d.ellipse(
            [tx - r * 0.22, ty - r * 0.22, tx + r * 0.22, ty + r * 0.22],
            fill=star,
            outline=ink,
            width=lw,
        )
    d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=face, outline=ink, width=lw)
    for ex in (cx - r * 0.4, cx + r * 0.4):
        d.ellipse([ex - r * 0.12, cy - r * 0.3, ex + r * 0.12, cy - r * 0.06], fill=ink)
    d.arc([cx - r * 0.55, cy - r * 0.2, cx + r * 0.55, cy + r * 0.6], 20, 160, fill=ink, width=lw)
    zig = [(cx - r * 1.6 + k * r * 0.4, cy + r * (1.05 if k % 2 else 1.6)) for k in range(9)]
    d.polygon(
        [(cx - r * 1.6, cy + r * 0.95), *zig, (cx + r * 1.6, cy + r * 0.95)],
        fill=collar,
        outline=ink,
        width=lw,
    )
    for sx, sy in ((w * 0.2, h * 0.86), (w * 0.8, h * 0.86)):
        pts = []
        for k in range(10):
            a = math.pi / 2 + k * math.pi / 5
            rr = r * (0.55 if k % 2 == 0 else 0.22)
            pts.append((sx + rr * math.cos(a), sy - rr * math.sin(a)))
        d.polygon(pts, fill=star, outline=ink)


def render_procedural(name: str, out_root: Path, seed: int) -> Deck:
    """A plain deck drawn with a font: corner rank + suit, centre pips/letter, Chinese jokers
    (or, for a ``PROC_VARIANTS`` name, that design with its own jokers)."""
    from PIL import Image, ImageDraw, ImageFont  # train extra

    out = out_root / name
    design, jokers = PROC_VARIANTS.get(name, (name, "index"))
    if (out / "deck.json").exists():
        return load_deck(out)
    rng = np.random.default_rng(seed)
    w, h = CARD_W, int(CARD_W * 1.4)
    fpath = font_path(_FONTS[design])
    rank_font = ImageFont.truetype(fpath, int(w * rng.uniform(0.14, 0.18)))
    suit_font = ImageFont.truetype(font_path(_SYMBOL_FONT), int(w * rng.uniform(0.12, 0.15)))
    pip_font = ImageFont.truetype(font_path(_SYMBOL_FONT), int(w * 0.2))
    big_font = ImageFont.truetype(fpath, int(w * 0.45))
    cjk = ImageFont.truetype(_CJK_FONT, int(w * 0.13)) if Path(_CJK_FONT).exists() else rank_font
    red = (int(rng.integers(170, 225)), int(rng.integers(0, 40)), int(rng.integers(0, 50)), 255)
    black = (int(rng.integers(0, 30)),) * 3 + (255,)
    paper = tuple(int(v) for v in rng.integers(238, 256, 3)) + (255,)
    x0 = int(w * 0.05)
    tmp = _staging(out)

    def blank() -> tuple[Image.Image, ImageDraw.ImageDraw]:
        im = Image.new("RGBA", (w, h), (0, 0, 0, 0))
        d = ImageDraw.Draw(im)
        d.rounded_rectangle([0, 0, w - 1, h - 1], radius=int(w * 0.06), fill=paper, outline=black)
        return im, d

    grey, yellow, blue = (128, 128, 128, 255), (235, 190, 20, 255), (30, 70, 200, 255)
    # the jester's colours (hat, face, collar, stars): the small joker in black and greys
    jester = {"SB": (black, paper, grey, black), "HR": (red, yellow, blue, red)}
    for card in CARD_NAMES:
        im, d = blank()
        if card in ("SB", "HR") and jokers == "picture":
            _jester(d, w, h, black, jester[card])
        elif card in ("SB", "HR") and jokers == "word":
            pic = Image.new("RGBA", (w, h), (0, 0, 0, 0))
            _jester(ImageDraw.Draw(pic), w, h, black, jester[card])
            im.alpha_composite(
                pic.resize((int(w * 0.6), int(h * 0.6))), (int(w * 0.2), int(h * 0.2))
            )
            letters = ImageFont.truetype(fpath, int(w * 0.1))
            strip = Image.new("RGBA", (int(w * 0.16), int(h * 0.4)), (0, 0, 0, 0))
            sd = ImageDraw.Draw(strip)
            for k, glyph in enumerate("JOKER"):
                sd.text(
                    (strip.width / 2, (k + 0.5) * letters.size),
                    glyph,
                    font=letters,
                    fill=black if card == "SB" else red,
                    anchor="mm",
                )
            im.alpha_composite(strip, (x0, int(h * 0.03)))
            im.alpha_composite(
                strip.rotate(180), (w - x0 - strip.width, h - int(h * 0.03) - strip.height)
            )
        elif card in ("SB", "HR"):
            col = black if card == "SB" else red
            # Chinese-style: 小王 / 大王 written vertically in the corner, "JOKER" in the middle
            text = "小王" if card == "SB" else "大王"
            y = int(h * 0.03)
            for glyph in text:
                d.text((x0, y), glyph, font=cjk, fill=col)
                y += int(cjk.size * 1.1)
            d.text((w * 0.5, h * 0.5), "JOKER", font=rank_font, fill=col, anchor="mm")
            d.ellipse([w * 0.3, h * 0.25, w * 0.7, h * 0.42], outline=col, width=4)
        else:
            suit, rank = card[0], card[1]
            col = red if suit in "HD" else black
            label = "10" if rank == "T" else rank
            d.text((x0, int(h * 0.03)), label, font=rank_font, fill=col)
            ry = int(h * 0.03) + int(rank_font.size * 1.05)
            d.text((x0 + int(w * 0.005), ry), _SUIT_GLYPH[suit], font=suit_font, fill=col)
            if rank in "JQKA":
                d.text((w * 0.5, h * 0.5), label, font=big_font, fill=col, anchor="mm")
            else:
                n = 10 if rank == "T" else int(rank)
                for px, py in pip_grid(n, w, h, (0.33, 0.34), (0.2, 0.6)):
                    d.text((px, py), _SUIT_GLYPH[suit], font=pip_font, fill=col, anchor="mm")
        arr = np.array(im)
        if card in ("SB", "HR") and jokers in ("picture", "word"):
            cv2.imwrite(str(tmp / f"{card}.png"), cv2.cvtColor(arr, cv2.COLOR_RGBA2BGRA))
            continue  # no corner index to copy (the word is drawn in both corners)
        # bottom-right index: the card is point-symmetric, so copy the rotated top-left corner
        cw_, ch_ = int(w * 0.3), int(h * 0.32)
        corner = arr[:ch_, :cw_].copy()
        rot = corner[::-1, ::-1]
        region = arr[h - ch_ :, w - cw_ :]
        mask = rot[:, :, 3] > 0
        ink = np.abs(rot[:, :, :3].astype(int) - np.array(paper[:3])).sum(axis=2) > 60
        region[mask & ink] = rot[mask & ink]
        cv2.imwrite(str(tmp / f"{card}.png"), cv2.cvtColor(arr, cv2.COLOR_RGBA2BGRA))
    cards = {c: cv2.imread(str(tmp / f"{c}.png"), cv2.IMREAD_UNCHANGED) for c in CARD_NAMES}
    box = measure_index_box(cards)
    # the CJK joker index is taller than the rank + suit: widen the box to cover both
    box = (box[0], box[1], max(box[2], 0.05 + cjk.size * 1.05 / w), max(box[3], 0.34))
    meta = {"name": name, "source": "procedural", "index_box": box}
    if jokers != "index":
        meta["jokers"] = jokers
    (tmp / "deck.json").write_text(json.dumps(meta))
    return _publish(tmp, out)


def build_all(out_root: Path, include: list[str] | None = None) -> list[Deck]:
    """Render every usable deck (or only those named in ``include``) once; later calls load."""
    if include is None and not AISLERIOT_DIR.exists():
        raise FileNotFoundError(
            f"{AISLERIOT_DIR} missing: apt-get install gnome-cards-data fonts-noto-cjk "
            "(the recipe renders its deck designs)"
        )
    decks = [
        render_aisleriot(s, out_root)
        for s in aisleriot_sheets()
        if include is None or s.stem in include
    ]
    for i, name in enumerate(_FONTS):
        if include is None or name in include:
            decks.append(render_procedural(name, out_root, seed=100 + i))
    return decks


def load_all(out_root: Path) -> list[Deck]:
    return [load_deck(p.parent) for p in sorted(out_root.glob("*/deck.json"))]


def deck_seed(name: str) -> int:
    """The seed ``build_all`` draws procedural deck ``name`` with (proc-serif: 101)."""
    return 100 + list(_FONTS).index(name)


def known_decks() -> list[str]:
    """The deck names ``ensure_deck`` knows how to render (where their packages are installed;
    the classifier's randomised ``rand-NNN`` decks are vision/synth/randdecks.py's, once
    rendered they load like any other)."""
    kde = [f"kde-{n}" for n in KDE_DECKS]
    return sorted(set(AISLERIOT_DESIGNS) - EXCLUDED) + list(_FONTS) + list(PROC_VARIANTS) + kde


def ensure_deck(name: str, out_root: Path) -> Deck:
    """Deck ``name``, rendered into ``out_root/<name>`` on first use (later calls load it).

    Aisleriot designs (``tigullio``, ``plastic``, ...) need Debian's gnome-cards-data and an SVG
    renderer (cairosvg or rsvg-convert), ``proc-*`` decks Pillow and the DejaVu and Noto CJK
    fonts, ``kde-*`` decks kdegames-card-data-kf5 and rsvg-convert. When something
    is missing: ``DeckUnavailable`` (a FileNotFoundError) saying what to install; never another
    deck instead. A name none of these: ``UnknownDeck`` (a ValueError)."""
    out = out_root / name
    if (out / "deck.json").exists():
        return load_deck(out)
    why = f"deck {name!r} is not rendered under {out_root}, and"
    pillow = (
        f"{why} drawing it needs Pillow, which is not installed: pip install pillow "
        "(or the train extra: pip install -e '.[train]')"
    )
    if name in _FONTS or name in PROC_VARIANTS:
        design = PROC_VARIANTS.get(name, (name, ""))[0]
        try:
            import PIL  # noqa: F401  (train extra)
        except ImportError:
            raise DeckUnavailable(pillow) from None
        try:
            fonts = [font_path(_FONTS[design]), font_path(_SYMBOL_FONT), _CJK_FONT]
        except FileNotFoundError:
            fonts = [_FONTS[design], _SYMBOL_FONT, _CJK_FONT]
        missing = [f for f in fonts if not Path(f).exists()]
        if missing:
            raise DeckUnavailable(
                f"{why} drawing it needs the fonts {', '.join(missing)}: apt-get install "
                "fonts-dejavu-core fonts-noto-cjk"
            )
        return render_procedural(name, out_root, seed=deck_seed(design))
    if name.startswith("kde-") and name[4:] in KDE_DECKS:
        try:
            return render_kdegames(name[4:], out_root)
        except DeckUnavailable as exc:
            raise DeckUnavailable(f"{why} {exc}") from None
    sheet = AISLERIOT_DIR / f"{name}.svgz"
    if sheet.exists():
        try:
            return render_aisleriot(sheet, out_root)
        except DeckUnavailable as exc:
            raise DeckUnavailable(f"{why} to render its sheet {sheet} {exc}") from None
    if name in AISLERIOT_DESIGNS:
        raise DeckUnavailable(
            f"{why} its sheet {sheet} is missing: apt-get install gnome-cards-data (then an SVG "
            "renderer: cairosvg from the train extra, or apt-get install librsvg2-bin)"
        )
    raise UnknownDeck(
        f"deck {name!r}: no such design (rendered under {out_root} or known here: "
        f"{', '.join(known_decks())})"
    )
