"""Table pipeline accuracy and speed on rendered games (issue 5 targets).

For each of ``--games`` games (seeds ``--seed`` .. ``--seed + games - 1``, none used by the tests
or the demo; deck designs held out of detector training, cycled): render the simulated game at
``--size`` (default 1280x720; 2304x1296 is the Pi Camera Module 3's full view, drawn at that
resolution, vision/synth/video.py), replay it through the whole pipeline (vision/pipeline.py:
file camera, detector on a reduced copy of a frame larger than 1280x720 and classifier on the
full frame, tracker, referee) and compare with the referee's events on the truth log. With
``--enrol`` the deck's enrolment frames are rendered at the same size (as a kiosk capturing at
that size would film them).

Figures (one JSON line each, then a summary line):

* ``plays_exact_pct``: truth plays (seat + card multiset) found in the pipeline's plays in effect
  (corrections applied), in order (difflib alignment), / truth plays. Target >= 99.5 %.
* ``plays_exact_but_suit_pct``: the same, a play whose one error is a suit within its colour (a
  club read as a spade, a heart as a diamond) counted right: what the pipeline reads when the
  classifier names the suits of an unseen design right (``suit_only``: how many such plays).
* ``played_observations_exact_pct``: the same count on the pipeline's ``played`` observations,
  before the referee (a misread counts once there; in the referee's events it can cascade:
  an illegal play is a foul, three fouls end the match and every later play is ignored).
* ``deals_wrong_order``: deals whose ``deal_ended`` order differs (or is missing). Target 0.
* ``exposed_reported``: exposed observations of the truth found (seat + cards) / all. Target all.
* ``latency_s``: pipeline observation time - truth time (video seconds) for matched plays,
  passes and exposures: max, p95, mean. Target max <= 0.5 s.
* ``pipeline_fps``: frames processed per second of wall time (decoding included), at
  ``--size``. Target >= 10.

``--detector oracle`` (default) uses the renderer's corner labels (a perfect detector), so the
figures are those of calibration + motion + tracking + interpretation; ``--detector model`` runs
models/card-corners.onnx (skipped with a message when it is not shipped).

    python bench/table_accuracy.py --games 10 [--deals 1] [--seed 9001] [--detector oracle]
        [--mischief 0.01] [--fouls-limit N] [--keep DIR [--det-cache]] [--enrol] [--decks D1,D2]
        [--misses] [--size 2304x1296]

``--det-cache`` (with ``--detector model`` and ``--keep``) keeps every detector answer beside the
kept render, keyed by the image bytes, the classifier file (with ``--adapted``, the adapted one),
the deck profile and the detector's code and settings: replaying the same videos with other tracker
or referee settings then runs no detector (an answer is looked up only for the very pixels it was
computed on, so the figures are those of a plain run; the frames/s are not).

``--enrol`` (with ``--detector model``) first enrols each game's deck as a referee would
(vision/enrol.py; the shots rendered on a table of their own, seed + 500,000) and reads the game
with that deck profile.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.deal import effective_events  # noqa: E402
from engine.observations import Observation, merge_amends  # noqa: E402
from engine.profiles import load_profile  # noqa: E402
from engine.referee import Referee  # noqa: E402


def emit(**kw: object) -> None:
    print(json.dumps(kw), flush=True)


def _key(o: Observation) -> tuple[str, str | None, tuple[str, ...]]:
    return (o.type, o.seat, tuple(sorted(str(c) for c in o.cards)))


#: enrolment tables are seeded apart from the games' (a table of their own: camera, felt, light)
ENROL_SEED_OFFSET = 500_000
#: the renders' size unless ``--size`` says otherwise (kept renders of this size keep their names)
DEFAULT_SIZE = (1280, 720)


def _size_tag(size: tuple[int, int]) -> str:
    """``""`` at the default size, else ``-WxH`` (in the names of kept renders and shots)."""
    return "" if tuple(size) == DEFAULT_SIZE else f"-{size[0]}x{size[1]}"


def enrol_deck(deck: str, seed: int, tmp: Path, size: tuple[int, int] = DEFAULT_SIZE) -> object:
    """The deck enrolled as a referee would (vision/enrol.py): its shots rendered on a table of
    their own at ``size``, read by the shipped models as `guandan vision enrol` reads them."""
    import cv2

    from vision.detector import enrolment_detector
    from vision.enrol import enrol, missing_cards
    from vision.synth.video import render_enrolment

    where = tmp / f"enrol-{deck}-{seed}{_size_tag(size)}"
    shots = render_enrolment(where, seed=seed + ENROL_SEED_OFFSET, deck=deck, size=size)
    frames = [(cv2.imread(str(p)), kind) for p, kind in shots]
    det = enrolment_detector()
    if _size_tag(size):
        # stills of a larger capture read as the kiosk reads its frames: corners on a copy
        # reduced to 1280x720, cards named from the frame itself (`guandan vision enrol` reads
        # them whole, where the corner stage's scale differs: at 2304x1296 it found no corner
        # of tigullio's jokers, seed 546001)
        from vision.pipeline import ReducedDetector

        det = ReducedDetector(det)
    prof = enrol(det, frames, name=deck)
    if sum(1 for c in missing_cards(prof) if c[1] in "JQK") >= 3:
        # as `guandan vision enrol` tells the referee: court cards without an index are enrolled
        # by their faces, from one court frame per suit filmed on the same table
        courts = render_enrolment(
            where, seed=seed + ENROL_SEED_OFFSET, deck=deck, courts=True, size=size
        )
        frames += [(cv2.imread(str(p)), kind) for p, kind in courts]
        prof = enrol(det, frames, name=deck)
    return prof


class CachedDetector:
    """A detector's answers kept by the exact image they answered (``--det-cache``)."""

    def __init__(self, det: object, path: Path) -> None:
        self.det = det
        self.path = path
        self.hits = self.misses = 0
        self.answers: dict[bytes, list[object]] = {}
        if path.exists():
            with path.open("rb") as f:
                self.answers = pickle.load(f)

    def __getattr__(self, name: str) -> object:
        return getattr(self.det, name)

    def detect(self, image: object) -> list[object]:
        import numpy as np

        a = np.ascontiguousarray(image)
        key = hashlib.blake2b(a.tobytes(), digest_size=16, person=str(a.shape).encode()[:16])
        k = key.digest()
        got = self.answers.get(k)
        if got is None:
            self.misses += 1
            got = self.answers[k] = list(self.det.detect(a))  # type: ignore[attr-defined]
        else:
            self.hits += 1
        return got

    def _kept(self, what: str, arrays: tuple[object, ...], work: object) -> object:
        """The answer kept for exactly these arrays (``what``: which stage), else ``work()``."""
        import numpy as np

        key = hashlib.blake2b(digest_size=16, person=what.encode()[:16])
        for x in arrays:
            a = np.ascontiguousarray(x)
            key.update(str((a.shape, a.dtype.str)).encode())
            key.update(a.tobytes())
        k = key.digest()
        if k in self.answers:
            self.hits += 1
            return self.answers[k]
        self.misses += 1
        got = self.answers[k] = work()  # type: ignore[operator]
        return got

    # a frame larger than 1280x720: the pipeline finds the corners on a reduced copy and names
    # them on the frame itself (vision/pipeline.py ``_detect_reduced``), the two stages apart
    def corners(self, image: object) -> object:
        return self._kept("corners", (image,), lambda: self.det.corners(image))  # type: ignore[attr-defined]

    def label(self, image: object, boxes: object, scores: object) -> list[object]:
        return self._kept(  # type: ignore[return-value]
            "label",
            (image, boxes, scores),
            lambda: list(self.det.label(image, boxes, scores)),  # type: ignore[attr-defined]
        )

    def save(self) -> None:
        tmp = self.path.with_suffix(".part")
        with tmp.open("wb") as f:
            pickle.dump(self.answers, f)
        tmp.replace(self.path)


def cache_tag(det: object, deck_profile: object | None) -> str:
    """What a detector cache's answers depend on: the detector and classifier files, the deck
    profile, and the detector's own code and settings; any change there makes another cache
    (the corner detector file since 2026-12-02: an int8 copy put in its place would have reused the
    float model's answers)."""
    from vision import crops, enrol, suits
    from vision import detector as detector_module
    from vision.pipeline import PIPELINE_DETECTOR

    key = hashlib.sha256(str(det.classifier_id).encode())  # type: ignore[attr-defined]
    key.update(Path(det.model_path).read_bytes())  # type: ignore[attr-defined]
    key.update(json.dumps(PIPELINE_DETECTOR, sort_keys=True, default=str).encode())
    for mod in (detector_module, crops, enrol, suits):
        key.update(Path(str(mod.__file__)).read_bytes())
    if deck_profile is not None:
        key.update(json.dumps(deck_profile.to_json(), sort_keys=True).encode())  # type: ignore[attr-defined]
    return key.hexdigest()[:16]


def kept_render(
    prof: object,
    seed: int,
    deals: int,
    deck: str,
    mischief: float,
    folder: Path,
    size: tuple[int, int] = DEFAULT_SIZE,
) -> tuple[Path, object]:
    """The game rendered into ``folder``: its video and its ``render_game`` info. A kept render
    (--keep) is reused when it was made with the same arguments: replaying the same videos with
    other pipeline settings then costs no rendering. The file is named by every argument that
    shapes it, so another run into the same folder (another deck for the seed: a game's deck
    comes from its place in the run; one deal for bench/corner_names.py) renders beside it and
    never over it. ``size``: the frame size (named in the file only when it is not 1280x720, so
    the renders kept before sizes existed are still found)."""
    from vision.synth.video import render_game

    name = prof.name  # type: ignore[attr-defined]
    tag = _size_tag(size)
    out = folder / f"g{seed}-{deck}-{deals}d-m{mischief:g}-{name}{tag}.mp4"
    made_with = json.dumps([name, seed, deals, deck, mischief] + ([list(size)] if tag else []))
    cache = out.with_suffix(".info.pkl")
    if cache.exists() and out.exists():
        with cache.open("rb") as f:
            key, kept = pickle.load(f)
        if key == made_with:
            return out, kept
    sized = {"size": tuple(size)} if tag else {}  # the default: render_game's own
    info = render_game(prof, seed=seed, deals=deals, out=out, deck=deck, mischief=mischief, **sized)
    with cache.open("wb") as f:
        pickle.dump((made_with, info), f)
    return out, info


def game(
    seed: int,
    deals: int,
    deck: str,
    detector: str,
    profile: str,
    mischief: float,
    tmp: Path,
    enrolled: bool = False,
    det_cache: bool = False,
    adapted: str | None = None,
    size: tuple[int, int] = DEFAULT_SIZE,
) -> dict[str, object]:
    from kiosk.replay import replay

    prof = load_profile(profile)
    t0 = time.perf_counter()
    out, info = kept_render(prof, seed, deals, deck, mischief, tmp, size)
    render_s = time.perf_counter() - t0
    truth = info.observations
    ref = Referee(prof)
    ref.feed_all(truth)
    deck_profile = enrol_deck(info.deck, seed, tmp, size) if enrolled else None
    deck_arg: object = deck_profile
    if adapted:  # the classifier adapted to the deck (vision/adapt.py), with the game's profile
        from vision.adapt import deck_reader, with_adapted

        deck_arg = (
            with_adapted(deck_profile, Path(adapted))
            if deck_profile is not None
            else deck_reader(adapted)
        )
    cached = None
    if det_cache:
        from vision.pipeline import resolve_detector

        # the adapted classifier and its rebound profile where one is given (--adapted), so a
        # cached run reads as the uncached one does (before 2026-12-07 it read with the base
        # classifier and the enrolled profile, whatever --adapted said)
        det = resolve_detector(detector, out, deck_arg)
        tag = cache_tag(det, getattr(deck_arg, "profile", deck_arg))
        cached = CachedDetector(det, out.with_suffix(f".dets-{tag}.pkl"))
        res = replay(out, profile=prof, detector=cached)
        cached.save()
    else:
        res = replay(out, profile=prof, detector=detector, deck=deck_arg)
    # the events in effect: a correction (the referee's second look at a play, or a person's)
    # replaces the events from the one it names on
    effective = effective_events(res.events)
    tplays = [e for e in ref.events if e.type == "play"]
    pplays = [e for e in effective if e.type == "play"]

    def pk(e: object) -> tuple[str, tuple[str, ...]]:
        return (e.data["seat"], tuple(sorted(e.data["cards"])))  # type: ignore[attr-defined]

    sm = difflib.SequenceMatcher(
        a=[pk(e) for e in tplays], b=[pk(e) for e in pplays], autojunk=False
    )
    matched = sum(b.size for b in sm.get_matching_blocks())
    # where the plays differ (--misses): truth's plays against the pipeline's, with video times;
    # and the plays whose one error is a suit within its colour (a club for a spade, a heart
    # for a diamond: the naming of a design the classifier never saw, not the pipeline)
    misses = []
    suit_only = 0
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:
            suit_only += sum(
                1
                for a, b in zip(tplays[i1:i2], pplays[j1:j2], strict=True)
                if _by_colour(pk(a)) == _by_colour(pk(b))
            )
        if tag != "equal":
            misses.append(
                {
                    "truth": [_play(e) for e in tplays[i1:i2]],
                    "pipeline": [_play(e) for e in pplays[j1:j2]],
                }
            )
    # The pipeline's own output, before the referee: played observations (seat + multiset).
    # One misread can make the referee flag an illegal play and, three fouls later, end the
    # match, so the referee-event figure above compounds what this one counts once.
    tobs = [_key(o) for o in truth if o.type == "played"]
    # cards the camera found late (a ``played`` that amends an earlier one) count in that play
    seen_obs = merge_amends(res.observations)
    pobs = [_key(o) for o in seen_obs if o.type == "played"]
    sm_obs = difflib.SequenceMatcher(a=tobs, b=pobs, autojunk=False)
    obs_matched = sum(b.size for b in sm_obs.get_matching_blocks())
    # where they differ (--misses): seat and cards, the truth's against the pipeline's
    obs_misses = [
        {
            "truth": [f"{s} {' '.join(c)}" for _, s, c in tobs[i1:i2]],
            "pipeline": [f"{s} {' '.join(c)}" for _, s, c in pobs[j1:j2]],
        }
        for tag, i1, i2, j1, j2 in sm_obs.get_opcodes()
        if tag != "equal"
    ]
    tords = {e.deal: e.data["order"] for e in ref.events if e.type == "deal_ended"}
    pords = {e.deal: e.data["order"] for e in effective if e.type == "deal_ended"}
    wrong = sum(1 for d, o in tords.items() if pords.get(d) != o)
    texp = [o for o in truth if o.type == "exposed"]
    pexp = [_key(o) for o in seen_obs if o.type == "exposed"]
    found = 0
    for o in texp:
        if _key(o) in pexp:
            pexp.remove(_key(o))
            found += 1
    # latency: align the observation streams (plays, passes, exposures)
    kinds = ("played", "pass", "exposed")
    ta = [o for o in truth if o.type in kinds]
    pa = [o for o in seen_obs if o.type in kinds]
    sm2 = difflib.SequenceMatcher(a=[_key(o) for o in ta], b=[_key(o) for o in pa], autojunk=False)
    lat = []
    for blk in sm2.get_matching_blocks():
        for k in range(blk.size):
            lat.append(pa[blk.b + k].t - ta[blk.a + k].t)
    rep = res.report
    return {
        "seed": seed,
        "deck": info.deck,
        "size": f"{size[0]}x{size[1]}",
        "detect_scale": round(rep.detect_scale, 4),
        "frames": info.frames,
        "video_s": round(info.duration_s, 1),
        "render_s": round(render_s, 1),
        "plays": len(tplays),
        "plays_matched": matched,
        "plays_suit_only": suit_only,
        "plays_pipeline": len(pplays),
        "played_obs": len(tobs),
        "played_obs_matched": obs_matched,
        "deals": len(tords),
        "deals_wrong_order": wrong,
        "exposed": len(texp),
        "exposed_found": found,
        "latency": lat,
        "pipeline_fps": round(rep.fps, 1),
        "pipeline_s": round(rep.seconds, 1),
        "detector_calls": rep.detector_calls,
        "face_looks": rep.face_looks,
        "pair_faces": rep.pair_faces,
        "corrections": sum(1 for e in res.events if e.type == "correction"),
        "gaps": len(rep.gaps),
        "suit_weights": rep.suit_weights,
        "enrol_weight": None if deck_profile is None else str(deck_profile.weight),  # type: ignore[attr-defined]
        "adapted": Path(adapted).name if adapted else None,
        "det_cache": None if cached is None else {"hits": cached.hits, "misses": cached.misses},
        "warnings": rep.warnings,
        "misses": misses,
        "obs_misses": obs_misses,
    }


def _by_colour(play: tuple[str, tuple[str, ...]]) -> tuple[str, tuple[str, ...]]:
    """A play (seat, cards) with each suit replaced by its colour (jokers kept)."""
    colour = {"S": "b", "C": "b", "H": "r", "D": "r"}
    seat, cards = play
    return seat, tuple(sorted(c if c in ("SB", "HR") else colour[c[0]] + c[1:] for c in cards))


def _play(e: object) -> str:
    """A play event as ``t seat cards`` (t in video seconds), for --misses."""
    d = e.data  # type: ignore[attr-defined]
    return f"{float(e.t):.1f} {d['seat']} {' '.join(d['cards'])}"  # type: ignore[attr-defined]


def main() -> int:
    from vision.synth.video import EVAL_DECKS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--deals", type=int, default=1)
    ap.add_argument("--seed", type=int, default=9001)
    ap.add_argument("--detector", default="oracle", help="oracle or model")
    ap.add_argument("--profile", default="standard")
    ap.add_argument("--mischief", type=float, default=0.02, help="foul rate (exposed cards etc.)")
    ap.add_argument(
        "--enrol",
        action="store_true",
        help="with --detector model: enrol each game's deck first (its shots rendered on a "
        "table of their own) and read with the profile (vision/enrol.py)",
    )
    ap.add_argument(
        "--decks",
        help="only the games whose deck is in this comma-separated list (seeds keep their deck)",
    )
    ap.add_argument(
        "--deck",
        help="render every game with this one design instead (any the renderer knows, e.g. "
        "proc-serif-wordjokers; not with --decks)",
    )
    ap.add_argument(
        "--keep",
        help="keep the rendered games here; a rerun with the same arguments reuses them",
    )
    ap.add_argument(
        "--det-cache",
        action="store_true",
        help="with --keep: keep the detector's answers there too (a rerun with other tracker "
        "or referee settings runs no detector; frames/s then mean nothing)",
    )
    ap.add_argument(
        "--fouls-limit",
        type=int,
        help="play under the profile with this team foul limit (a run with many exposed cards "
        "must not end its deals on fouls)",
    )
    ap.add_argument(
        "--adapted",
        metavar="FILE",
        help="with --detector model: read with this classifier adapted to the games' deck "
        "(guandan vision adapt; pick its deck with --decks); with --enrol each game's profile "
        "goes with it (vision/adapt.py with_adapted)",
    )
    ap.add_argument(
        "--misses",
        action="store_true",
        help="after each game, one line per stretch where its plays differ from the truth's "
        "(figure miss) and one where its played observations do (obs_miss)",
    )
    ap.add_argument(
        "--size",
        default="1280x720",
        metavar="WxH",
        help="render and read the games (and with --enrol the enrolment frames) at this frame "
        "size, e.g. 2304x1296 (the Pi Camera Module 3's full view); default 1280x720",
    )
    args = ap.parse_args()
    from vision.framesize import FrameSizeError, parse_frame_size

    try:
        size = parse_frame_size(args.size, "--size")
    except FrameSizeError as exc:
        raise SystemExit(f"table_accuracy.py: {exc}") from None
    if args.det_cache and not (args.keep and args.detector == "model"):
        raise SystemExit("--det-cache needs --detector model and --keep DIR (answers lie there)")
    if args.adapted and args.detector != "model":
        raise SystemExit("--adapted needs --detector model")
    if args.enrol and args.detector != "model":
        raise SystemExit("--enrol needs --detector model (the oracle reads no cards)")
    only = set(args.decks.split(",")) if args.decks else None
    if only and not only <= set(EVAL_DECKS):
        raise SystemExit(f"--decks: choose from {', '.join(EVAL_DECKS)}")
    if args.deck:
        from vision.synth.decks import known_decks

        if only:
            raise SystemExit("--deck and --decks: give one of them")
        if args.deck not in known_decks():
            raise SystemExit(f"--deck {args.deck}: no such design; choose from {known_decks()}")
    if args.detector == "model":
        from vision.detector import DEFAULT_MODEL

        if not DEFAULT_MODEL.exists():
            emit(figure="skipped", detector="model", reason=f"{DEFAULT_MODEL} not shipped yet")
            return 0
    rows = []
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(args.keep) if args.keep else Path(td)
        tmp.mkdir(parents=True, exist_ok=True)
        if args.fouls_limit:
            base = load_profile(args.profile)
            lenient = tmp / "bench-lenient.toml"
            lenient.write_text(
                f'name = "bench-lenient"\ntitle = "{base.name} with a foul limit of '
                f'{args.fouls_limit} (bench)"\n[fouls]\nlimit = {args.fouls_limit}\n'
            )
            if base.name != "standard":
                raise SystemExit("--fouls-limit works on the standard profile only")
            args.profile = str(lenient)
        for i in range(args.games):
            deck = args.deck or EVAL_DECKS[i % len(EVAL_DECKS)]
            if only and deck not in only:
                continue
            row = game(
                args.seed + i,
                args.deals,
                deck,
                args.detector,
                args.profile,
                args.mischief,
                tmp,
                args.enrol,
                args.det_cache,
                args.adapted,
                size,
            )
            lat = row.pop("latency")
            assert isinstance(lat, list)
            row["latency_max_s"] = round(max(lat), 3) if lat else None
            rows.append((row, lat))
            misses = row.pop("misses")
            obs_misses = row.pop("obs_misses")
            emit(figure="game", detector=args.detector, **row)
            if args.misses:
                for m in misses:  # type: ignore[union-attr]
                    emit(figure="miss", seed=row["seed"], deck=row["deck"], **m)
                for m in obs_misses:  # type: ignore[union-attr]
                    emit(figure="obs_miss", seed=row["seed"], deck=row["deck"], **m)

    def total(key: str) -> int:
        return sum(int(str(r[key])) for r, _ in rows)

    plays, matched = total("plays"), total("plays_matched")
    lats = sorted(x for _, lat in rows for x in lat)
    secs = sum(float(str(r["pipeline_s"])) for r, _ in rows)
    common = {
        "detector": args.detector,
        "games": len(rows),
        "deals_per_game": args.deals,
        "enrolled": args.enrol,
        "size": f"{size[0]}x{size[1]}",
    }
    pct = round(100.0 * matched / max(plays, 1), 3)
    emit(figure="plays_exact_pct", value=pct, plays=plays, target=99.5, **common)
    suits = total("plays_suit_only")
    emit(
        figure="plays_exact_but_suit_pct",
        value=round(100.0 * (matched + suits) / max(plays, 1), 3),
        suit_only=suits,
        note="as plays_exact_pct, a play whose one error is a suit within its colour counted right",
        **common,
    )
    # per deck design: the held-out decks differ in kind (guyenne-classic's court cards carry no
    # index, plastic's clubs and spades look alike to the classifier), so the total hides where
    # the plays are lost
    by_deck: dict[str, list[int]] = {}
    for r, _ in rows:
        got = by_deck.setdefault(str(r["deck"]), [0, 0])
        got[0] += int(str(r["plays_matched"]))
        got[1] += int(str(r["plays"]))
    emit(
        figure="plays_exact_pct_by_deck",
        value={d: round(100.0 * m / max(n, 1), 1) for d, (m, n) in by_deck.items()},
        plays={d: n for d, (_, n) in by_deck.items()},
        **common,
    )
    obs, obs_ok = total("played_obs"), total("played_obs_matched")
    emit(
        figure="played_observations_exact_pct",
        value=round(100.0 * obs_ok / max(obs, 1), 3),
        observations=obs,
        note="the pipeline's played observations before the referee (seat + card multiset)",
        **common,
    )
    emit(
        figure="deals_wrong_order",
        value=total("deals_wrong_order"),
        deals=total("deals"),
        target=0,
        **common,
    )
    emit(
        figure="exposed_reported",
        value=total("exposed_found"),
        of=total("exposed"),
        target="all",
        **common,
    )
    if lats:
        emit(
            figure="latency_s",
            max=round(lats[-1], 3),
            p95=round(lats[int(0.95 * (len(lats) - 1))], 3),
            mean=round(statistics.fmean(lats), 3),
            n=len(lats),
            target_max=0.5,
            **common,
        )
    emit(
        figure="pipeline_fps",
        value=round(total("frames") / max(secs, 1e-9), 1),
        frames=total("frames"),
        cpus=os.cpu_count(),
        target=10,
        **common,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
