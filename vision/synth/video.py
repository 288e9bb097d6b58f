"""Rendered games: a simulated match as an overhead table video, with its ground truth.

``render_game(profile, seed=, deals=, out=)`` plays the match with ``engine.sim.simulate`` and
films it from above (default 1280x720 at 10 fps, mp4v; ``size=(2304, 1296)`` films the Pi
Camera Module 3's full view, the table drawn at that resolution: ``BASE_SIDE``): the four ArUco
corner markers of vision/table.py, cards slid into the zones by hands and arms that pass over
the table, tricks cleared by the players, a slowly changing light level, a static light gradient
and camera noise.

What is filmed, and how (vision/track.py reads it back the same way):

* ``played {seat, cards}``: the seat's arm slides the cards (fanned) into its play zone, between
  the band along its edge and the centre square, and withdraws. An out-of-turn play
  (simulator mischief) is taken back a moment later.
* ``pass {seat}``: the seat's lamp lights green for a second (the kiosk's pass button lights a
  lamp at the seat's edge; hardware/buttons.py) - lamp positions: ``vision.track.lamp_positions``.
* ``deal_start``: the deal lamp lights blue for 1.5 s; on a first deal the seat that drew the
  face-up card has its lamp yellow meanwhile (``first_leader``); a random-level profile's cut
  card is laid in the centre while the deal lamp is lit.
* ``trick_cleared``: every seat takes its cards off the table (also done before each new deal).
* ``tribute`` / ``tribute_return {seat, card, to}``: the giver lays the card in the centre on its
  side, the receiver pulls it across to its own side and picks it up.
* ``shown {seat, cards}``: the jokers are laid in the centre on the seat's side, then taken back.
* ``exposed {seat, cards}``: a card lies face up in the band at the seat's edge, then taken back.
* ``count_report`` (spoken) is not filmed and is left out of the truth log.

Time: the simulator's pauses are kept but bounded (at least what the animation needs, at most
``max_gap_s``), so a game films in a few minutes; the truth log carries the video times
(``t`` = the moment the cards settle and the hand is gone, the lamp lights, ...). The referee on
the truth log is the reference event log (``guandan referee --profile P game.mp4.truth.jsonl``).

Files written beside ``out``: ``<out>.truth.jsonl`` (observations), ``<out>.oracle.jsonl.gz``
(per frame, every corner index that is at least 70 % uncovered: card and image box - the labels a
perfect detector would give; vision/pipeline.py's ``OracleDetector`` reads it) and
``<out>.calibration.json`` (from the first frame, as ``guandan table calibrate`` would).

``render_enrolment`` films a deck laid out for ``guandan vision enrol`` (vision/enrol.py): each
suit, then the jokers, the cards apart in the four play zones, one PNG still per shot.
Deck faces come from vision/synth/decks.py (``datasets/generated/decks/<name>``, or
``$GUANDAN_DECKS_DIR/<name>``; default a deck held out of detector training, ``tigullio``). A deck
not rendered there yet is rendered on first use (``decks.ensure_deck``: an aisleriot design needs
Debian's gnome-cards-data and cairosvg or rsvg-convert, a ``proc-*`` deck Pillow); when that
cannot be done here the error says what to install, and no other deck is used instead. A plain
OpenCV-drawn face (``cv-plain``; tests only) only when asked for by that name.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine.observations import Observation, dump_observation

__all__ = [
    "RenderInfo",
    "render_game",
    "render_enrolment",
    "DEFAULT_DECK",
    "EVAL_DECKS",
    "load_faces",
    "decks_root",
]

DEFAULT_DECK = "tigullio"
#: deck designs held out of detector training (vision/synth/decks.py HELD_OUT)
EVAL_DECKS = ("tigullio", "plastic", "guyenne-classic", "paris", "proc-serif")
DECKS_DIR = Path(__file__).resolve().parents[2] / "datasets" / "generated" / "decks"
CARD_MM = (63.0, 88.0)
SKIN = (120, 160, 215)
SLEEVES = ((90, 50, 30), (40, 40, 40), (50, 90, 140), (110, 110, 110))
LAMP_BGR = {"pass": (60, 255, 60), "lead": (40, 230, 255), "deal": (255, 140, 40)}
#: card face width (px) the cards are drawn from at 1280x720, where a card is ~47 px wide
FACE_W = 96
#: the frame height the renderer's pixel sizes are set for: a larger frame (its short side over
#: this) draws the same table scaled up, every size in pixels times its short side / 720 (the
#: faces, the lamps, the felt's grain, the palms), so a 2304x1296 render is what a camera of that
#: resolution films, not a 1280x720 frame enlarged; a render at or under 720 is drawn as it was
BASE_SIDE = 720


# ------------------------------------------------------------------------------ card faces
@dataclass
class Faces:
    name: str
    images: dict[str, np.ndarray]  # BGRA, card width ~ 96 px
    index_box: tuple[float, float, float, float]


def _cv_face(card: str, w: int = 96) -> np.ndarray:
    """A plain face: rank above suit letter in two corners, a disc in the middle."""
    h = int(w * 1.4)
    img = np.zeros((h, w, 4), np.uint8)
    cv2.rectangle(img, (0, 0), (w - 1, h - 1), (245, 245, 245, 255), -1)
    cv2.rectangle(img, (0, 0), (w - 1, h - 1), (30, 30, 30, 255), 1)
    red = card[0] in "HD" or card == "HR"
    col = (30, 30, 200, 255) if red else (20, 20, 20, 255)
    rank, suit = {"SB": ("jk", "s"), "HR": ("JK", "B")}.get(card, (card[1], card[0]))
    rank = "10" if rank == "T" else rank

    def index(im: np.ndarray) -> None:
        cv2.putText(im, rank, (3, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.45, col, 2)
        cv2.putText(im, suit, (4, 34), cv2.FONT_HERSHEY_SIMPLEX, 0.45, col, 2)

    index(img)
    rot = img[::-1, ::-1].copy()
    index(rot)
    img = rot[::-1, ::-1].copy()
    cv2.circle(img, (w // 2, h // 2), w // 5, col, -1)
    return img


def decks_root() -> Path:
    """Where rendered decks live: ``$GUANDAN_DECKS_DIR``, else ``DECKS_DIR``."""
    return Path(os.environ.get("GUANDAN_DECKS_DIR") or DECKS_DIR)


def load_faces(
    name: str = DEFAULT_DECK, decks_dir: Path | None = None, width: int = FACE_W
) -> Faces:
    """Faces of deck ``name``, rendered on first use (see the module doc), ``width`` px wide.
    ``cv-plain`` only by name. Raises ``decks.DeckUnavailable`` (a FileNotFoundError) naming
    what to install, or ``decks.UnknownDeck`` (a ValueError) for a name that is no design."""
    from vision.synth.decks import CARD_NAMES, ensure_deck

    if name == "cv-plain":
        if width == FACE_W:
            images = {c: _cv_face(c) for c in CARD_NAMES}
        else:  # drawn at the usual width and scaled, so the index keeps its proportions
            images = {
                c: cv2.resize(
                    _cv_face(c),
                    (width, int(round(width * 1.4))),
                    interpolation=cv2.INTER_CUBIC,
                )
                for c in CARD_NAMES
            }
        return Faces("cv-plain", images, (0.0, 0.0, 0.25, 0.28))
    deck = ensure_deck(name, decks_dir or decks_root())
    lacking = [c for c in CARD_NAMES if c not in deck.cards]
    if lacking:  # kde-penguins & co.: no jokers
        raise ValueError(
            f"deck {name!r} has no {' '.join(lacking)}: a Guandan game needs all 54 cards; "
            "choose another deck"
        )
    images = {}
    for c in CARD_NAMES:
        img = deck.image(c)
        h, w = img.shape[:2]
        images[c] = cv2.resize(
            img, (width, int(round(width * h / w))), interpolation=cv2.INTER_AREA
        )
    return Faces(deck.name, images, deck.index_box)


# ------------------------------------------------------------------------------ the scene
@dataclass
class _Card:
    card: str
    keys: list[tuple[float, float, float, float]]  # (t, x_mm, y_mm, angle_rad)
    t_on: float
    t_off: float = math.inf
    uid: int = 0

    def pose(self, t: float) -> tuple[float, float, float] | None:
        if t < self.t_on or t >= self.t_off:
            return None
        k = self.keys
        if t <= k[0][0]:
            return k[0][1:]
        for a, b in zip(k, k[1:], strict=False):
            if a[0] <= t <= b[0]:
                u = (t - a[0]) / max(b[0] - a[0], 1e-9)
                u = u * u * (3 - 2 * u)
                return tuple(a[i] + (b[i] - a[i]) * u for i in (1, 2, 3))  # type: ignore[return-value]
        return k[-1][1:]


@dataclass
class _Arm:
    seat: str
    keys: list[tuple[float, float, float]]  # (t, x_mm, y_mm) of the hand; off outside
    sleeve: tuple[int, int, int]

    def hand(self, t: float) -> tuple[float, float] | None:
        k = self.keys
        if t < k[0][0] or t > k[-1][0]:
            return None
        for a, b in zip(k, k[1:], strict=False):
            if a[0] <= t <= b[0]:
                u = (t - a[0]) / max(b[0] - a[0], 1e-9)
                return (a[1] + (b[1] - a[1]) * u, a[2] + (b[2] - a[2]) * u)
        return k[-1][1:]


@dataclass
class _Scene:
    w: float
    h: float
    rng: np.random.Generator
    cards: list[_Card] = field(default_factory=list)
    arms: list[_Arm] = field(default_factory=list)
    lamps: list[tuple[str, str, float, float]] = field(default_factory=list)
    on_table: dict[str, list[_Card]] = field(default_factory=dict)  # play zone cards per seat
    sleeves: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    # geometry of a seat: edge centre, inward normal, along-edge unit, card angle
    def frame(self, seat: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        w, h = self.w, self.h
        return {
            "N": (np.array([w / 2, 0.0]), np.array([0.0, 1.0]), np.array([-1.0, 0.0]), math.pi),
            "S": (np.array([w / 2, h]), np.array([0.0, -1.0]), np.array([1.0, 0.0]), 0.0),
            "E": (np.array([w, h / 2]), np.array([-1.0, 0.0]), np.array([0.0, -1.0]), -math.pi / 2),
            "W": (np.array([0.0, h / 2]), np.array([1.0, 0.0]), np.array([0.0, 1.0]), math.pi / 2),
        }[seat]

    def spot(self, seat: str, depth: float, along: float) -> np.ndarray:
        e, n, a, _ = self.frame(seat)
        return e + n * depth + a * along

    def arm(self, seat: str, keys: list[tuple[float, float, float]]) -> None:
        sleeve = self.sleeves.setdefault(seat, SLEEVES["NESW".index(seat)])
        self.arms.append(_Arm(seat, keys, sleeve))

    def lay(
        self,
        seat: str,
        cards: list[str],
        t_start: float,
        t_end: float,
        target: np.ndarray,
        spacing: float = 17.0,
    ) -> list[_Card]:
        """The seat's hand slides ``cards`` (fanned ``spacing`` mm apart) from its edge to
        ``target``, settled at ``t_end - 0.5``, hand gone at ``t_end``."""
        e, n, a, base = self.frame(seat)
        ang = base + self.rng.uniform(-0.2, 0.2)
        fan = np.array([math.cos(ang), math.sin(ang)])
        if seat in "NE":
            fan = -fan
        start = self.spot(seat, 15.0, float(np.dot(target - e, a)))
        out = []
        k = len(cards)
        settle = t_end - 0.5
        for i, c in enumerate(cards):
            off = fan * (i - (k - 1) / 2) * spacing
            p0, p1 = start + off, target + off
            card = _Card(c, [(t_start, *p0, ang), (settle, *p1, ang)], t_start)
            self.cards.append(card)
            out.append(card)
        out_pt = self.spot(seat, -150.0, float(np.dot(target - e, a)))
        self.arm(
            seat,
            [(t_start - 0.2, *out_pt), (t_start, *start), (settle, *target), (t_end, *out_pt)],
        )
        return out

    def take(self, seat: str, cards: list[_Card], t_start: float, t_end: float) -> None:
        """The seat's hand comes over ``cards`` and takes them (gone at the midpoint)."""
        live = [c for c in cards if c.t_off > t_start]
        if not live:
            return
        pts = [c.pose(t_start) for c in live]
        xy = np.mean([[p[0], p[1]] for p in pts if p is not None], axis=0)
        e, n, a, _ = self.frame(seat)
        out_pt = self.spot(seat, -150.0, float(np.dot(xy - e, a)))
        mid = (t_start + t_end) / 2
        self.arm(seat, [(t_start, *out_pt), (mid, *xy), (t_end, *out_pt)])
        for c in live:
            c.t_off = mid


# ------------------------------------------------------------------------------ timeline
_LEAD = {"played": 1.3, "exposed": 1.2, "tribute": 1.2, "tribute_return": 1.2, "shown": 1.2}
_LEAD.update({"trick_cleared": 1.1, "pass": 0.2, "deal_start": 0.3})
_TAIL = {"exposed": 2.2, "tribute": 3.4, "tribute_return": 3.4, "shown": 2.2, "pass": 1.1}
_TAIL.update({"deal_start": 3.0, "played": 0.1, "trick_cleared": 0.1})


def _retime(observations: list[Observation], max_gap_s: float, start: float) -> list[float]:
    times: list[float] = []
    prev: Observation | None = None
    tv = start
    for o in observations:
        if prev is None:
            tv = start
        else:
            need = _TAIL.get(prev.type, 0.5) + _LEAD.get(o.type, 0.5) + 0.3
            if prev.type == "played" and prev.extra.get("mischief") == "out_of_turn":
                need += 1.6
            if o.type == "deal_start":
                need += 1.6  # the table is cleared first
            tv += max(need, min(o.t - prev.t, max_gap_s))
        times.append(round(tv, 2))
        prev = o
    return times


def _build(scene: _Scene, obs: list[Observation], times: list[float]) -> None:
    rng = scene.rng
    cx, cy = scene.w / 2, scene.h / 2
    last_turn_cards: dict[str, list[_Card]] = {s: [] for s in "NESW"}
    plays_in_trick: dict[str, int] = dict.fromkeys("NESW", 0)

    def clear(t_end: float) -> None:
        for s in "NESW":
            if any(c.t_off > t_end - 1.0 for c in scene.on_table.get(s, [])):
                scene.take(s, scene.on_table[s], t_end - 1.0, t_end)
            scene.on_table[s] = []
            plays_in_trick[s] = 0

    for o, t in zip(obs, times, strict=True):
        ty = o.type
        if ty == "deal_start":
            clear(t - 0.4)
            scene.lamps.append(("deal", "deal", t, t + 1.5))
            if o.first_leader:
                scene.lamps.append((o.first_leader, "lead", t, t + 1.5))
            if o.level != "":
                label = "HR" if o.level is None else "S" + str(o.level)
                spot = np.array([cx, cy - 90.0])
                cards = scene.lay("N", [label], t + 0.1, t + 1.0, spot)
                scene.take("N", cards, t + 1.9, t + 2.6)
        elif ty == "pass":
            assert o.seat is not None
            scene.lamps.append((o.seat, "pass", t, t + 1.0))
        elif ty == "played":
            s = o.seat
            assert s is not None
            k = plays_in_trick[s]
            plays_in_trick[s] += 1
            depth = 200.0 + rng.uniform(-15, 15) + (k % 2) * 25.0
            along = rng.uniform(-40, 40) + ((k % 3) - 1) * 70.0
            spot = scene.spot(s, depth, along)
            spacing = float(o.extra.get("spacing_mm", 17.0))  # enrolment: cards laid apart
            cards = scene.lay(s, [str(c) for c in o.cards], t - 1.3, t, spot, spacing)
            scene.on_table.setdefault(s, []).extend(cards)
            last_turn_cards[s] = cards
            if o.extra.get("mischief") == "out_of_turn":
                scene.take(s, cards, t + 0.8, t + 1.6)
        elif ty == "trick_cleared":
            clear(t)
        elif ty == "exposed":
            s = o.seat or "S"
            spot = scene.spot(s, 55.0, rng.uniform(-80, 80))
            cards = scene.lay(s, [str(c) for c in o.cards], t - 1.2, t, spot)
            scene.take(s, cards, t + 1.2, t + 1.9)
        elif ty in ("tribute", "tribute_return", "shown"):
            s = o.seat
            assert s is not None
            here = np.array([cx, cy]) + scene.frame(s)[1] * -95.0
            cards = scene.lay(s, [str(c) for c in o.cards], t - 1.2, t, here)
            if ty == "shown" or o.to is None:
                scene.take(s, cards, t + 1.2, t + 1.9)
                continue
            to = o.to
            there = np.array([cx, cy]) + scene.frame(to)[1] * -95.0
            e, n, a, _ = scene.frame(to)
            out_pt = scene.spot(to, -150.0, float(np.dot(here - e, a)))
            scene.arm(
                to, [(t + 0.5, *out_pt), (t + 1.0, *here), (t + 1.6, *there), (t + 2.1, *out_pt)]
            )
            for c in cards:
                p = c.keys[-1]
                c.keys.append((t + 1.0, *p[1:]))
                c.keys.append((t + 1.6, there[0], there[1], p[3] + math.pi / 2))
            scene.take(to, cards, t + 2.5, t + 3.2)
    clear(times[-1] + 3.0 if times else 1.0)


# ------------------------------------------------------------------------------ drawing
@dataclass
class RenderInfo:
    out: Path
    truth: Path
    oracle: Path
    calibration: Path
    frames: int
    fps: float
    duration_s: float
    deck: str
    observations: list[Observation]
    seconds: float = 0.0


def _table_corners(rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
    w, h = size
    s = min(w, h) * 0.94
    cx, cy = w / 2, h / 2
    base = np.array([(cx - s / 2, cy - s / 2), (cx + s / 2, cy - s / 2)])
    base = np.vstack([base, [(cx + s / 2, cy + s / 2), (cx - s / 2, cy + s / 2)]])
    k = h / 720.0
    base[0] += (8 * k, 0)
    base[1] += (-8 * k, 0)  # a little perspective: the far edge looks shorter
    return base + rng.uniform(-10 * k, 10 * k, base.shape)


def render_game(
    profile: Any,
    *,
    seed: int,
    deals: int,
    out: str | Path,
    fps: float = 10.0,
    size: tuple[int, int] = (1280, 720),
    deck: str = DEFAULT_DECK,
    mischief: float = 0.0,
    max_gap_s: float = 3.0,
    noise: float = 3.0,
    decks_dir: Path | None = None,
    max_observations: int | None = None,
    script: list[Observation] | None = None,
    key_interval: int = 100,
    light: tuple[float, float] = (0.86, 1.12),
) -> RenderInfo:
    """Simulate ``deals`` deals with ``seed`` and film them (see the module doc).

    ``max_observations`` films only the first observations (short test videos); ``script``
    films the given observations instead of a simulated match (their gaps are kept, bounded).
    ``key_interval``: frames between key frames (long: small files; the table is mostly still).
    ``light``: the range the light level (a gain on every colour: table, cards) is drawn from
    every 20 s."""
    import time

    from engine.sim import simulate
    from vision.table import TableGeometry, calibrate, render_table_view

    t0 = time.perf_counter()
    out = Path(out)
    if not out.parent.exists():
        raise ValueError(f"--out {out}: the folder {out.parent} does not exist")
    if deals < 1:
        raise ValueError(f"deals must be at least 1, got {deals}")
    if fps <= 0 or fps > 60:
        raise ValueError(f"fps must be between 0 and 60, got {fps}")
    if not 0.05 <= light[0] <= light[1] <= 3.0:
        raise ValueError(f"light {light}: a range (low, high) within 0.05..3 expected")
    # pixel sizes scale with a frame larger than 1280x720 (``BASE_SIDE``); at or under, zoom = 1
    zoom = max(1.0, min(size) / BASE_SIDE)
    faces = load_faces(deck, decks_dir, FACE_W if zoom == 1.0 else int(round(FACE_W * zoom)))
    if script is None:
        sim = simulate(profile, deals=deals, seed=seed, mischief=mischief, table="t1")
        script = sim.observations
    obs = [o for o in script if o.type != "count_report"][:max_observations]
    times = _retime(obs, max_gap_s, start=2.0)
    truth = [
        Observation(
            t,
            o.type,
            seat=o.seat,
            cards=o.cards,
            to=o.to,
            first_leader=o.first_leader,
            level=o.level,
            count=o.count,
            extra=dict(o.extra),
        )
        for o, t in zip(obs, times, strict=True)
    ]
    rng = np.random.default_rng(seed + 7919)
    geometry = TableGeometry()
    scene = _Scene(geometry.width_mm, geometry.height_mm, rng)
    _build(scene, obs, times)
    duration = (times[-1] if times else 0.0) + 5.0
    n_frames = int(math.ceil(duration * fps))

    corners_px = _table_corners(rng, size)
    felt = tuple(int(v) for v in rng.choice([[60, 110, 40], [110, 70, 30], [40, 60, 120]]))
    bg, h_t2i = render_table_view(corners_px, size, geometry, px_per_mm=2.0, felt_bgr=felt)  # type: ignore[arg-type]
    yy, xx = np.mgrid[0 : size[1], 0 : size[0]].astype(np.float32)
    ang = rng.uniform(0, 2 * math.pi)
    grad = 0.85 + 0.25 * ((xx * math.cos(ang) + yy * math.sin(ang)) / max(size) + 0.5)
    # the felt's grain, the same in mm at any size (blurred white noise loses 1/zoom of its
    # spread under a zoom times wider blur)
    tex = cv2.GaussianBlur(
        rng.normal(0, 9 * zoom, (size[1], size[0])).astype(np.float32), (0, 0), 1.5 * zoom
    )[..., None]
    bg = np.clip(bg.astype(np.float32) * grad[..., None] + tex, 0, 255).astype(np.uint8)
    noises = [
        np.clip(rng.normal(0, noise, (size[1], size[0], 3)), -12, 12).astype(np.int16)
        for _ in range(4)
    ]
    light_phase = rng.uniform(0, 20.0)
    levels = [float(v) for v in rng.uniform(light[0], light[1], 16)]
    lamp_xy = _lamp_pixels(h_t2i, geometry)
    # card px -> table mm for each face size
    cw_px = next(iter(faces.images.values())).shape[1]
    mm_per_px = CARD_MM[0] / cw_px

    writer = cv2.VideoWriter(
        str(out),
        cv2.CAP_FFMPEG,
        cv2.VideoWriter.fourcc(*"mp4v"),
        fps,
        size,
        [cv2.VIDEOWRITER_PROP_KEY_INTERVAL, int(key_interval)],
    )
    if not writer.isOpened():
        raise OSError(f"cannot write video {out}: OpenCV has no mp4v encoder here")
    oracle_path = Path(f"{out}.oracle.jsonl.gz")
    ofh = gzip.open(oracle_path, "wt", encoding="utf-8")
    owner = np.empty((size[1], size[0]), np.int16)
    first_frame: np.ndarray | None = None
    for uid, c in enumerate(scene.cards):
        c.uid = uid
    try:
        for fi in range(n_frames):
            t = fi / fps
            # the light changes every 20 s (clouds, a lamp switched), ramping over 2 s
            k, u = divmod(t + light_phase, 20.0)
            gain = levels[int(k) % len(levels)]
            if u < 2.0:
                prev = levels[(int(k) - 1) % len(levels)]
                gain = prev + (gain - prev) * u / 2.0
            frame = cv2.convertScaleAbs(bg, alpha=gain)
            owner.fill(-1)
            visible = []
            for c in scene.cards:
                p = c.pose(t)
                if p is None:
                    continue
                face = faces.images[c.card]
                fh, fw = face.shape[:2]
                a = _card_to_table(p, fw, fh, mm_per_px)
                hm = h_t2i @ a
                quad = _apply(hm, np.array([(0, 0), (fw, 0), (fw, fh), (0, fh)], np.float64))
                x0, y0 = np.floor(quad.min(0)).astype(int)
                x1, y1 = np.ceil(quad.max(0)).astype(int)
                x0, y0 = max(x0, 0), max(y0, 0)
                x1, y1 = min(x1, size[0]), min(y1, size[1])
                if x1 <= x0 or y1 <= y0:
                    continue
                shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
                warped = cv2.warpPerspective(face, shift @ hm, (x1 - x0, y1 - y0))
                frame[y0:y1, x0:x1] = _composite(frame[y0:y1, x0:x1], warped, gain)
                cv2.fillConvexPoly(owner, np.round(quad).astype(np.int32), c.uid)
                visible.append((c, hm, fw, fh))
            for arm in scene.arms:
                hand = arm.hand(t)
                if hand is None:
                    continue
                _draw_arm(frame, owner, arm, hand, h_t2i, scene, zoom)
            for name, state, on, off in scene.lamps:
                if on <= t < off:
                    x, y = lamp_xy[name]
                    r = 10 if zoom == 1.0 else int(round(10 * zoom))
                    cv2.circle(frame, (round(x), round(y)), r, LAMP_BGR[state], -1, cv2.LINE_AA)
            noisy = cv2.add(frame.astype(np.int16), noises[int(rng.integers(4))])
            frame = np.clip(noisy, 0, 255).astype(np.uint8)
            if first_frame is None:
                first_frame = frame.copy()
            writer.write(frame)
            labels = []
            for c, hm, fw, fh in visible:
                for box in _index_boxes(faces.index_box, fw, fh):
                    q = _apply(hm, box)
                    if _uncovered(owner, q, c.uid) >= 0.7:
                        x_a, y_a = q.min(0)
                        x_b, y_b = q.max(0)
                        if x_a < 0 or y_a < 0 or x_b > size[0] or y_b > size[1]:
                            continue
                        labels.append([c.card, *(round(float(v), 1) for v in (x_a, y_a, x_b, y_b))])
            ofh.write(json.dumps({"i": fi, "t": round(t, 3), "c": labels}) + "\n")
    finally:
        writer.release()
        ofh.close()
    truth_path = Path(f"{out}.truth.jsonl")
    truth_path.write_text("".join(dump_observation(o) + "\n" for o in truth), encoding="utf-8")
    cal_path = Path(f"{out}.calibration.json")
    assert first_frame is not None
    calibrate(first_frame, geometry).save(cal_path)
    return RenderInfo(
        out,
        truth_path,
        oracle_path,
        cal_path,
        n_frames,
        fps,
        duration,
        faces.name,
        truth,
        time.perf_counter() - t0,
    )


def _composite(roi: np.ndarray, face: np.ndarray, gain: float) -> np.ndarray:
    """A warped BGRA card ``face`` laid over ``roi`` (BGR) under the light level ``gain``: the
    light scales the card's colours, as it scales the table's; its alpha channel alone says how
    much of what lies beneath shows (only at the anti-aliased edge and outside the card)."""
    alpha = face[:, :, 3:4].astype(np.float32) / 255.0
    lit = face[:, :, :3].astype(np.float32) * gain
    out = roi.astype(np.float32) * (1 - alpha) + lit * alpha
    return np.clip(out, 0, 255).astype(np.uint8)


def _lamp_pixels(h_t2i: np.ndarray, geometry: Any) -> dict[str, tuple[float, float]]:
    from vision.track import lamp_positions

    pos = lamp_positions(geometry.width_mm, geometry.height_mm)
    pts = _apply(h_t2i, np.array(list(pos.values()), np.float64))
    return {k: (float(p[0]), float(p[1])) for k, p in zip(pos, pts, strict=True)}


def _apply(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.asarray(pts, np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(p, h).reshape(-1, 2)


def _card_to_table(pose: tuple[float, float, float], fw: int, fh: int, mm: float) -> np.ndarray:
    x, y, ang = pose
    c, s = math.cos(ang) * mm, math.sin(ang) * mm
    ox, oy = fw / 2, fh / 2
    return np.array(
        [[c, -s, x - (c * ox - s * oy)], [s, c, y - (s * ox + c * oy)], [0, 0, 1.0]], np.float64
    )


def _index_boxes(box: tuple[float, float, float, float], fw: int, fh: int) -> list[np.ndarray]:
    x1, y1, x2, y2 = box
    tl = np.array([(x1 * fw, y1 * fh), (x2 * fw, y1 * fh), (x2 * fw, y2 * fh), (x1 * fw, y2 * fh)])
    br = np.array([(fw, fh)]) - tl
    return [tl, br]


def _uncovered(owner: np.ndarray, quad: np.ndarray, uid: int) -> float:
    h, w = owner.shape
    a, b, c, d = quad
    hits = total = 0
    for u in (0.2, 0.5, 0.8):
        for v in (0.2, 0.5, 0.8):
            p = a + (b - a) * u + (d - a) * v
            x, y = int(p[0]), int(p[1])
            total += 1
            if 0 <= x < w and 0 <= y < h and owner[y, x] == uid:
                hits += 1
    return hits / total


def _draw_arm(
    frame: np.ndarray,
    owner: np.ndarray,
    arm: _Arm,
    hand: tuple[float, float],
    h_t2i: np.ndarray,
    scene: _Scene,
    zoom: float = 1.0,
) -> None:
    e, n, a, _ = scene.frame(arm.seat)
    tip = np.array(hand)
    root = tip - n * (float(np.dot(tip - e, n)) + 400.0)
    d = tip - root
    d = d / max(float(np.linalg.norm(d)), 1e-9)
    side = np.array([-d[1], d[0]])
    wrist = tip - d * 60.0
    sleeve = [root + side * 45, wrist + side * 38, wrist - side * 38, root - side * 45]
    forearm = [wrist + side * 30, tip + side * 34, tip - side * 34, wrist - side * 30]
    for poly_mm, col in ((sleeve, arm.sleeve), (forearm, SKIN)):
        poly = np.round(_apply(h_t2i, np.array(poly_mm))).astype(np.int32)
        cv2.fillConvexPoly(frame, poly, col, cv2.LINE_AA)
        cv2.fillConvexPoly(owner, poly, -2)
    palm = np.round(_apply(h_t2i, np.array([tip + d * 20]))).astype(int)[0]
    axes = (int(abs(h_t2i[0, 0]) * 40 + 12 * zoom), int(abs(h_t2i[0, 0]) * 48 + 14 * zoom))
    angle = math.degrees(math.atan2(d[1], d[0]))
    cv2.ellipse(frame, (int(palm[0]), int(palm[1])), axes, angle, 0, 360, SKIN, -1, cv2.LINE_AA)
    cv2.ellipse(owner, (int(palm[0]), int(palm[1])), axes, angle, 0, 360, -2, -1)


#: the enrolment shots a referee takes (vision/enrol.py): each suit, then the two jokers, laid
#: apart in rows of 3-4 in the four play zones (both corner indices of every card in view, at
#: four angles)
ENROL_SHOTS = ("S", "H", "C", "D", "J")


def render_enrolment(
    out_dir: str | Path,
    *,
    seed: int,
    deck: str = DEFAULT_DECK,
    decks_dir: Path | None = None,
    size: tuple[int, int] = (1280, 720),
    courts: bool = False,
) -> list[tuple[Path, str]]:
    """Film a deck's enrolment on a table of its own (camera, light and felt from ``seed``): for
    each shot the cards are laid out, filmed and cleared; one still per shot (PNG, read back
    from the video as the kiosk would) in ``out_dir``. Returns ``[(png, kind), ...]``.
    ``courts``: film the court frames instead (a deck whose J, Q and K print no index; kinds
    ``court-S`` ..: the suit's J, Q, K in one row in S's zone, J on the camera's left)."""
    from engine import load_profile
    from engine.cards import parse_cards
    from vision.enrol import SHOT_KINDS

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    script: list[Observation] = []
    t = 2.0
    last: list[int] = []  # index in the script of each shot's last lay
    kinds = tuple(f"court-{s}" for s in "SHCD") if courts else ENROL_SHOTS
    for kind in kinds:
        names = ["SB", "HR"] if kind == "J" else [kind + r for r in "23456789TJQKA"]
        groups = [names[i::4] for i in range(4)] if kind != "J" else [names[:1], names[1:]]
        if courts:  # S faces the camera's bottom edge: its row runs left to right in the image
            groups = [[kind[-1] + r for r in "JQK"]]
        for seat, group in zip("SENW", groups, strict=False):
            cards = tuple(parse_cards(" ".join(group)))
            script.append(
                Observation(t, "played", seat=seat, cards=cards, extra={"spacing_mm": 75.0})
            )
            t += 1.5
        last.append(len(script) - 1)
        script.append(Observation(t + 1.0, "trick_cleared"))
        t += 3.0
    video = out_dir / ("enrol-courts.mp4" if courts else "enrol.mp4")
    # every file is written under a name of this run's own and then renamed into place: a
    # reader (or a second run filming the same folder) never finds one half-written (two bench
    # reads filming one enrolment side by side failed on a half-written PNG, 2026-12-07)
    run = f".{os.getpid()}-{uuid.uuid4().hex[:8]}"
    part = video.with_name(video.stem + run + video.suffix)
    shots: list[tuple[Path, str]] = []
    try:
        info = render_game(
            load_profile("standard"),  # not played: the script is filmed
            seed=seed,
            deals=1,
            out=part,
            deck=deck,
            decks_dir=decks_dir,
            size=size,
            script=script,
        )
        cap = cv2.VideoCapture(str(part))
        try:
            for kind, k in zip(kinds, last, strict=True):
                when = info.observations[k].t + 0.3
                cap.set(cv2.CAP_PROP_POS_FRAMES, int(round(when * info.fps)))
                ok, frame = cap.read()
                shot = SHOT_KINDS.get(kind, kind)
                if not ok:
                    raise OSError(f"{video}: cannot read back the {shot} shot")
                png = out_dir / f"enrol-{kind}.png"
                tmp = png.with_name(png.stem + run + png.suffix)
                if not cv2.imwrite(str(tmp), frame):
                    raise OSError(f"{png}: cannot write the {shot} shot")
                os.replace(tmp, png)
                shots.append((png, kind))
        finally:
            cap.release()
        for made in out_dir.glob(f"{part.name}*"):  # the video and render_game's files beside it
            os.replace(made, out_dir / (video.name + made.name[len(part.name) :]))
    finally:
        for leftover in out_dir.glob(f"*{run}*"):
            leftover.unlink(missing_ok=True)
    return shots
