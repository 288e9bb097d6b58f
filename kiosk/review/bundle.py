"""The appeal bundle: one deal's evidence in a zip that another machine can check and review.

``write_bundle`` (``guandan review bundle --table T --deal N --out dispute.zip``, or the page's
button) writes::

    manifest.json     format, table, deal, when, and for every other file its sha256 and size
    events.jsonl      the deal's events exactly as logged (corrections included, in order)
    deal.json         the desk's view of the deal (voided events marked, disputes, rulings)
    notes.json        the kiosk's notes of the deal: rulings, confirmations, camera outages
    locate.json       per event: the footage segment and offset that held it, or the gap
    footage.json      the segments and gaps of the deal's time span
    clip.webm         the deal's footage (clip time x = session time clip.json t0 + x)
    clip.json         the clip's t0, t1, fps, size
    frames/*.jpg      the frame of each disputed event with the detected corners and zones drawn
    frames.json       per disputed event: its frame file, frame time, the detections

``open_bundle`` checks every file against the manifest before anything is shown: a file that
is missing, added or changed is a :class:`BundleError` naming it. ``BundleDesk`` serves the
checked bundle to the review page offline (read-only: rulings are made on the table kiosk).
"""

from __future__ import annotations

import hashlib
import json
import math
import tempfile
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any

from kiosk.review import log as rlog
from kiosk.table.footage import FootageError, FootageIndex, Segment

FORMAT = "guandan-appeal-bundle"
VERSION = 1
#: footage kept before the deal's first event and after its last
PAD_S = 5.0
#: at most this many disputed frames are drawn into a bundle
MAX_FRAMES = 60


class BundleError(ValueError):
    """A bundle that cannot be written or trusted; the message names the file and what to do."""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _disputed(d: dict[str, Any]) -> list[dict[str, Any]]:
    targets = {str(e.get("target") or e.get("replaces")) for e in d["events"]}
    out = [
        e
        for e in d["events"]
        if e["type"] != "correction"
        and (e["disputed"] or e["rulings"] or e["confirmed"] or e["id"] in targets)
    ]
    return out[:MAX_FRAMES]


def write_bundle(
    out: str | Path,
    *,
    table: str,
    deal: int,
    events: list[dict[str, Any]],
    notes: list[tuple[float, str, dict[str, Any]]],
    footage: FootageIndex | None,
    calibration: Any = None,
    draw: bool = True,
) -> dict[str, Any]:
    """Write the bundle of ``deal`` to ``out`` (a temporary file first, then renamed: never a
    half-written zip). Returns the manifest."""
    out = Path(out)
    if out.is_dir():
        raise BundleError(f"--out {out} is a folder: give a file name like dispute.zip")
    if not out.parent.exists():
        raise BundleError(f"--out {out}: the folder {out.parent} does not exist")
    view = rlog.deals_view(events, notes)
    try:
        d = rlog.deal_of(view, deal)
    except LookupError as exc:
        raise BundleError(str(exc)) from None
    ids = {e["id"] for e in d["events"]}
    files: dict[str, bytes] = {}
    files["events.jsonl"] = "".join(
        json.dumps(e, ensure_ascii=False) + "\n" for e in events if e["id"] in ids
    ).encode()
    files["deal.json"] = json.dumps(d, ensure_ascii=False, indent=1).encode()
    lo, hi = d["t0"] - PAD_S, d["t1"] + PAD_S
    keep = []
    for at, kind, body in notes:
        if kind in ("ruling", "confirm") and (body.get("event_id") or body.get("id")) in ids:
            keep.append([at, kind, body])
        elif kind == "camera" and lo <= float(body.get("t") or 0.0) <= hi:
            keep.append([at, kind, body])
    files["notes.json"] = json.dumps(keep, ensure_ascii=False, indent=1).encode()
    clip_info: dict[str, Any] | None = None
    why_no_clip: str | None = None
    locs: dict[str, Any] = {}
    frames_meta: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="gd-bundle-") as tmp:
        if footage is None:
            why_no_clip = "this table records no footage"
        else:
            segs = footage.segments()
            outages = rlog.camera_outages(notes)
            for e in d["events"]:
                locs[e["id"]] = footage.locate(float(e["t"]), segs)
            files["footage.json"] = json.dumps(
                {
                    "segments": [s.to_json() for s in segs if s.end_t >= lo and s.start_t <= hi],
                    "gaps": footage.gaps(max(0.0, lo), hi, outages, segs),
                },
                indent=1,
            ).encode()
            present = [s for s in segs if s.present and s.end_t >= lo and s.start_t <= hi]
            if present:
                c0 = max(math.floor(max(0.0, lo)), math.floor(min(s.start_t for s in present)))
                c1 = min(math.ceil(hi), math.ceil(max(s.end_t for s in present)))
                clip = Path(tmp) / "clip.webm"
                try:
                    clip_info = footage.write_clip(c0, c1, clip)
                except FootageError as exc:
                    why_no_clip = str(exc)
                else:
                    files["clip.webm"] = clip.read_bytes()
            else:
                why_no_clip = f"no footage between t={lo:.1f} and t={hi:.1f} s"
            if draw:
                from kiosk.review import vision

                for e in _disputed(d):
                    got = footage.frame_at(float(e["t"]))
                    if got is None:
                        frames_meta[e["id"]] = {"t": e["t"], "file": None, "gap": True}
                        continue
                    img, ft = got
                    seen = vision.look(img, calibration)
                    name = f"frames/{e['seq']:05d}-{e['type']}.jpg"
                    caption = f"#{e['seq']} {e['type']} {e.get('seat') or ''} t={ft:.2f}s"
                    files[name] = vision.jpeg(vision.draw(img, seen, caption))
                    frames_meta[e["id"]] = {
                        "t": e["t"],
                        "frame_t": round(ft, 3),
                        "file": name,
                        "seq": e["seq"],
                        "seen": seen,
                    }
    files["locate.json"] = json.dumps(locs, indent=1).encode()
    files["frames.json"] = json.dumps(frames_meta, indent=1).encode()
    files["clip.json"] = json.dumps(clip_info or {"why": why_no_clip}, indent=1).encode()
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "table": table,
        "deal": deal,
        "created": datetime.now().astimezone().isoformat(timespec="seconds"),
        "clip": clip_info is not None,
        "files": {n: {"sha256": _sha(b), "bytes": len(b)} for n, b in sorted(files.items())},
    }
    part = out.with_name(f".{out.name}.part")
    try:
        with zipfile.ZipFile(part, "w") as z:
            z.writestr("manifest.json", json.dumps(manifest, indent=1))
            for name, data in sorted(files.items()):
                kind = (
                    zipfile.ZIP_STORED if name.endswith((".webm", ".jpg")) else zipfile.ZIP_DEFLATED
                )
                z.writestr(name, data, compress_type=kind)
        part.replace(out)
    finally:
        part.unlink(missing_ok=True)
    return manifest


def open_bundle(path: str | Path, into: str | Path) -> dict[str, Any]:
    """Check the bundle at ``path`` against its manifest and extract it into ``into``; returns
    the manifest. Any mismatch is a :class:`BundleError` naming the file."""
    path = Path(path)
    if not path.is_file():
        raise BundleError(
            f"{path}: no such file (give the .zip that `guandan review bundle` wrote)"
        )
    try:
        z = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise BundleError(f"{path} is not a zip file: it is not an appeal bundle") from None
    with z:
        names = set(z.namelist())
        if "manifest.json" not in names:
            raise BundleError(f"{path} has no manifest.json: it is not an appeal bundle")
        try:
            manifest = json.loads(z.read("manifest.json"))
            listed: dict[str, Any] = manifest["files"]
        except (ValueError, KeyError, TypeError):
            raise BundleError(f"{path}: manifest.json is not a bundle manifest") from None
        if manifest.get("format") != FORMAT:
            raise BundleError(f"{path}: manifest.json is not a {FORMAT} manifest")
        if int(manifest.get("version", 0)) > VERSION:
            raise BundleError(
                f"{path} was written by a newer kiosk (version {manifest['version']})"
            )
        extra = sorted(names - set(listed) - {"manifest.json"})
        if extra:
            raise BundleError(
                f"{path}: {', '.join(extra)} is not in manifest.json: the bundle was changed "
                "after it was written; ask for a fresh copy"
            )
        into = Path(into)
        for name, meta in sorted(listed.items()):
            if name not in names:
                raise BundleError(f"{path}: {name} is listed in manifest.json but missing")
            data = z.read(name)
            if _sha(data) != meta.get("sha256") or len(data) != meta.get("bytes"):
                raise BundleError(
                    f"{path}: {name} does not match its checksum in manifest.json (sha256 "
                    f"{_sha(data)[:12]}..., expected {str(meta.get('sha256'))[:12]}...): the "
                    "bundle was changed or damaged after it was written; ask for a fresh copy"
                )
            target = (into / name).resolve()
            if into.resolve() not in target.parents:
                raise BundleError(f"{path}: {name} would be written outside the bundle folder")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return manifest


class _ClipFootage:
    """The bundle's clip seen as the footage (for the desk's routes)."""

    def __init__(self, folder: Path, clip: dict[str, Any], gaps: list[dict[str, Any]]) -> None:
        self.folder = folder
        self.problems: list[str] = []
        self.clip = clip
        self._gaps = gaps

    def segments(self) -> list[Segment]:
        c = self.clip
        if not c.get("frames"):
            return []
        p = self.folder / "clip.webm"
        return [
            Segment(
                "clip.webm",
                float(c["t0"]),
                float(c["t1"]),
                int(c["frames"]),
                float(c["fps"]),
                (int(c["size"][0]), int(c["size"][1])),
                bytes=p.stat().st_size if p.is_file() else 0,
            )
        ]

    def gaps(self, lo: float, hi: float, *_a: Any) -> list[dict[str, Any]]:
        return [g for g in self._gaps if g["end_t"] >= lo and g["start_t"] <= hi]

    def locate(self, t: float, segs: list[Segment] | None = None) -> dict[str, Any]:
        for g in self._gaps:
            if g["start_t"] < t < g["end_t"]:
                return {"t": t, "segment": None, "gap": g}
        for s in segs if segs is not None else self.segments():
            if s.covers(t, 0.5 / s.rate):
                i = s.index_at(t)
                return {"t": t, "segment": s.file, "offset": round(t - s.start_t, 3), "frame": i}
        return {
            "t": t,
            "segment": None,
            "gap": {
                "kind": "not_in_bundle",
                "en": "outside the bundle's clip",
                "zh": "不在申诉包录像内",
            },
        }


class BundleDesk:
    """A checked, extracted bundle as the review desk's data (offline, read-only)."""

    offline = True

    def __init__(self, bundle: str | Path, folder: str | Path) -> None:
        self.bundle_path = Path(bundle).resolve()
        self.folder = Path(folder)
        self.manifest = open_bundle(bundle, self.folder)
        self.table = str(self.manifest["table"])
        self.deal = int(self.manifest["deal"])
        self._events = [
            json.loads(x)
            for x in (self.folder / "events.jsonl").read_text(encoding="utf-8").splitlines()
            if x.strip()
        ]
        self._notes = [
            (float(a), str(k), dict(b))
            for a, k, b in json.loads((self.folder / "notes.json").read_text(encoding="utf-8"))
        ]
        self.clip = json.loads((self.folder / "clip.json").read_text(encoding="utf-8"))
        self.locs = json.loads((self.folder / "locate.json").read_text(encoding="utf-8"))
        self.frames = json.loads((self.folder / "frames.json").read_text(encoding="utf-8"))
        fj = self.folder / "footage.json"
        self._footage = json.loads(fj.read_text(encoding="utf-8")) if fj.is_file() else {}
        self.clip_path = self.folder / "clip.webm"
        self.calibration = None

    def authorised(self, _token: str | None) -> bool:
        return True  # whoever holds the bundle may look at it

    def events(self) -> list[dict[str, Any]]:
        return self._events

    def notes(self) -> list[tuple[float, str, dict[str, Any]]]:
        return self._notes

    def footage(self) -> _ClipFootage | None:
        if not self.clip.get("frames"):
            return None
        return _ClipFootage(self.folder, self.clip, list(self._footage.get("gaps", [])))

    def video_for(self, t: float, ev: dict[str, Any] | None) -> dict[str, Any] | None:
        if not self.clip.get("frames"):
            return None
        t0 = float(self.clip["t0"])
        return {
            "url": "/api/review/clip.webm?t0=0&t1=1",
            "t0": t0,
            "t1": float(self.clip["t1"]),
            "seek": round(max(0.0, t - 3.0 - t0), 3),
            "fps": float(self.clip["fps"]),
            "recorded": self.locs.get(ev["id"]) if ev is not None else None,
        }

    def look_at(self, t: float) -> dict[str, Any] | None:
        fps = float(self.clip.get("fps") or 5.0)
        best = None
        for meta in self.frames.values():
            if meta.get("file") and abs(float(meta["frame_t"]) - t) <= 0.5 / fps + 1e-3:
                if best is None or abs(meta["frame_t"] - t) < abs(best["frame_t"] - t):
                    best = meta
        if best is None:
            return None
        return dict(best["seen"], t=t, frame_t=best["frame_t"], file=best["file"])

    def frame_at(self, t: float) -> tuple[Any, float] | None:
        import cv2

        if not self.clip.get("frames"):
            return None
        t0, fps = float(self.clip["t0"]), float(self.clip["fps"])
        i = int(round((t - t0) * fps))
        if not 0 <= i < int(self.clip["frames"]):
            return None
        cap = cv2.VideoCapture(str(self.clip_path))
        try:
            cap.set(cv2.CAP_PROP_POS_FRAMES, i)
            ok, img = cap.read()
            return (img, t0 + i / fps) if ok else None
        finally:
            cap.release()
