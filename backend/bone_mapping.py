"""Map an arbitrary humanoid rig onto RigMind's canonical humanoid.

The canonical humanoid (``presets/humanoid.json``) names semantic joints
(``hips``, ``spine``, ``upperarm_l`` ...). A :class:`BoneMapping` says which
rig bone plays each of them.

:func:`auto_map` first tries the bone-map presets of known rig families
(``presets/bone_maps/*.json``: exact names, then namespace/prefix stripped,
then case-insensitive). When no preset covers the required joints it falls
back to heuristics that combine

* topology: the hips are where two leg chains and a spine leave; the chest is
  where two mirrored arm chains leave the spine; hands are where finger
  chains branch;
* rest geometry: the up axis is hips->chest against hips->feet (so rigs lying
  in another frame still map), forward is heel->toe, the character's left is
  ``up x forward``; segment lengths decide elbows and knees;
* names (normalised: case, separators, namespaces and rig prefixes, side
  tokens, synonyms) which vote inside each chain and settle the sides.

Names alone are never trusted for structure, so a rig with meaningless bone
names ("Bone.017") still maps from topology + geometry.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import rotations
from .skeleton import Skeleton
from .errors import UserError
from . import paths

PRESETS_DIR = paths.PRESETS_DIR
BONE_MAPS_DIR = PRESETS_DIR / "bone_maps"

# Ties between presets that name the same bones (Mixamo-style rigs, Rigify's
# DEF- and FK layers living in one armature) go to the earlier entry.
_PRESET_PRIORITY = [
    "rigmind_mannequin", "mixamo", "ready_player_me", "rigify_def", "rigify_fk", "blender_metarig",
    "unreal_mannequin", "unity_humanoid", "vrm", "auto_rig_pro", "smplx", "lafan_bvh", "bandai_namco",
    "cmu", "games105", "robot_expressive", "deepmimic",
]

FINGERS = ("thumb", "index", "middle", "ring", "pinky")


class NotHumanoidError(UserError):
    """The rig has no humanoid structure (or a preset does not fit it)."""


# --------------------------------------------------------------------------
# presets
# --------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _humanoid_cached() -> str:
    return (PRESETS_DIR / "humanoid.json").read_text()


def load_humanoid() -> dict:
    """The canonical humanoid definition (joints, parents, required, optional, mirror)."""
    return json.loads(_humanoid_cached())


def list_presets() -> list:
    """Names of the bundled bone-map presets, in tie-break priority order."""
    names = {p.stem for p in BONE_MAPS_DIR.glob("*.json")}
    ordered = [n for n in _PRESET_PRIORITY if n in names]
    return ordered + sorted(names - set(ordered))


def load_preset(name) -> dict:
    """A bone-map preset by name (bundled) or by path to a JSON file.

    A preset is ``{"name", "description", "prefixes": [...], "bones":
    {canonical: bone}, "variants": {variant: {canonical: bone or null}}}``.
    A saved :class:`BoneMapping` JSON also loads as a preset.
    """
    p = Path(str(name))
    if p.suffix.lower() != ".json" or not p.exists():
        p = BONE_MAPS_DIR / f"{name}.json"
    if not p.exists():
        raise KeyError(f"no bone-map preset {name!r}; bundled presets: {', '.join(list_presets())}")
    data = json.loads(p.read_text())
    data.setdefault("name", p.stem)
    data.setdefault("prefixes", [""])
    data.setdefault("variants", {})
    data.setdefault("bones", {})
    return data


# --------------------------------------------------------------------------
# the mapping
# --------------------------------------------------------------------------
@dataclass
class BoneMapping:
    bones: dict  # canonical joint -> rig bone name
    confidence: dict = field(default_factory=dict)  # canonical joint -> 0..1
    overall: float = 0.0
    unmapped: list = field(default_factory=list)  # rig bones that play no canonical joint
    missing_optional: list = field(default_factory=list)
    preset: str = "auto"  # preset name, "auto" (heuristics) or "user"
    variant: str = ""
    skeleton_name: str = ""

    @property
    def missing_required(self) -> list:
        return [j for j in load_humanoid()["required"] if j not in self.bones]

    def rig_to_canonical(self) -> dict:
        return {b: c for c, b in self.bones.items()}

    def get(self, canonical: str, default=None):
        return self.bones.get(canonical, default)

    def __getitem__(self, canonical: str) -> str:
        return self.bones[canonical]

    def __contains__(self, canonical) -> bool:
        return canonical in self.bones

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> "BoneMapping":
        d = json.loads(text)
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        if "bones" not in known:
            raise ValueError("bone-mapping JSON has no 'bones' table")
        return cls(**known)

    def save(self, path) -> None:
        """Write as a user preset (loadable by :func:`load_preset`/``auto_map(preset=path)``)."""
        Path(path).write_text(self.to_json())


# --------------------------------------------------------------------------
# name normalisation
# --------------------------------------------------------------------------
_STRIP_PREFIXES = re.compile(
    r"^(?:def|org|mch|cc_base|j_bip|j_adj|bip0*1|mixamorig\d*|armature|skeleton|rig)(?=[_\-. :]|$)[_\-. :]*",
    re.IGNORECASE,
)
_HELPER_TOKENS = {
    "twist", "roll", "ik", "pole", "target", "end", "nub", "helper", "tip", "ctrl", "mch", "tweak",
    "corrective", "jiggle", "bend", "bendy", "vis", "prop", "weapon", "attach", "socket", "share", "poletarget",
    "null", "dummy", "aux",
}
_SIDE_L = {"l", "left", "lft", "lt"}
_SIDE_R = {"r", "right", "rgt", "rt"}


def _tokens(name: str) -> list:
    n = name.split(":")[-1] if ":" in name else name
    n = n.replace("|", " ")
    while True:  # stacked prefixes, e.g. "DEF-" after "Bip01 "; never strip a whole name
        stripped = _STRIP_PREFIXES.sub("", n, count=1)
        if stripped == n or not stripped:
            break
        n = stripped
    n = re.sub(r"([a-z])([A-Z])", r"\1 \2", n)
    n = re.sub(r"([A-Z])([A-Z][a-z])", r"\1 \2", n)
    n = re.sub(r"([A-Za-z])(\d)", r"\1 \2", n)
    n = re.sub(r"(\d)([A-Za-z])", r"\1 \2", n)
    return [t for t in re.split(r"[_\-.\s:]+", n.lower()) if t]


def _side_of_tokens(toks: list):
    if any(t in _SIDE_L for t in toks):
        return "l"
    if any(t in _SIDE_R for t in toks):
        return "r"
    return None


def name_info(name: str) -> dict:
    """Normalised reading of a bone name: ``side`` ('l'/'r'/None), ``helper``
    (twist/IK/end... bone), ``roles`` {role: score} and ``finger``."""
    toks = _tokens(name)
    side = _side_of_tokens(toks)
    core = [t for t in toks if t not in _SIDE_L and t not in _SIDE_R]
    words = [t for t in core if not t.isdigit()]
    joined = "".join(words)
    helper = any(t in _HELPER_TOKENS for t in words) or joined.endswith("end") or joined.endswith("nub")
    roles = {}

    def put(role, s):
        roles[role] = max(roles.get(role, 0.0), s)

    finger = None
    for f, pats in (("thumb", ("thumb",)), ("index", ("index", "pointer", "forefinger")),
                    ("middle", ("middle", "mid")), ("ring", ("ring",)), ("pinky", ("pinky", "little", "pinkie"))):
        if any(w in pats for w in words):
            finger = f
            break
    if finger:
        put("finger", 1.0)
    elif any(t in ("palm", "metacarpal", "meta") for t in words):
        put("hand", 0.5)
        put("metacarpal", 1.0)
    else:
        has = lambda *ws: any(w in joined for w in ws)  # noqa: E731
        if has("pelvis") or (has("hip", "hips") and side is None and not has("thigh")):
            put("hips", 1.0)
        if has("hip") and side is not None:
            put("upperleg", 0.8)
        if words == ["root"] or joined == "root":
            put("hips", 0.3)
        if has("upperchest", "chest", "torso", "ribcage", "thorax"):
            put("chest", 1.0)
            put("spine", 0.6)
        if has("spine", "back", "abdomen", "waist", "lumbar", "belly"):
            put("spine", 1.0)
        if has("neck"):
            put("neck", 1.0)
        if has("head") and not has("headtop", "forehead"):
            put("head", 1.0)
        if has("jaw", "chin", "mandible"):
            put("jaw", 1.0)
        if has("eye") and not has("brow", "lid", "lash"):
            put("eye", 1.0)
        if has("clavicle", "collar", "clav", "scapula"):
            put("clavicle", 1.0)
        if has("shoulder"):
            put("clavicle", 0.7)
            put("upperarm", 0.5)
        if has("forearm", "lowerarm", "lowarm", "elbow", "ulna", "radius"):
            put("lowerarm", 1.0)
        elif has("upperarm", "uparm", "humerus", "bicep") or ("arm" in words and not has("fore", "lower")):
            put("upperarm", 1.0)
        if has("hand", "wrist"):
            put("hand", 1.0)
        if has("thigh", "upleg", "upperleg", "femur"):
            put("upperleg", 1.0)
        elif has("shin", "calf", "lowerleg", "knee", "crus", "tibia") or ("leg" in words and not has("up", "upper")):
            put("lowerleg", 1.0)
        if has("foot", "ankle") and not has("forefoot"):
            put("foot", 1.0)
        if has("toe", "ball", "forefoot"):
            put("toes", 1.0)
    return {"side": side, "helper": helper, "roles": roles, "finger": finger, "tokens": toks}


# canonical joint -> role used by name scores
def _role_of(canonical: str) -> str:
    base = canonical[:-2] if canonical.endswith(("_l", "_r")) else canonical
    if base in ("spine", "spine1"):
        return "spine"
    if base == "spine2":
        return "chest"
    if base.startswith(("eye",)):
        return "eye"
    if base[:-1] in FINGERS:
        return "finger"
    return base


# --------------------------------------------------------------------------
# preset matching
# --------------------------------------------------------------------------
def _lookup_table(names: list) -> tuple:
    exact = {n: n for n in names}
    stripped = {}
    lower = {}
    for n in names:
        s = n.split(":")[-1]
        stripped.setdefault(s, n)
        lower.setdefault(s.lower(), n)
        lower.setdefault(n.lower(), n)
    return exact, stripped, lower


def _apply_preset(skeleton: Skeleton, preset: dict, tables=None):
    """Best (score, bones, variant, exactness) of a preset over its prefixes and variants."""
    exact, stripped, lower = tables or _lookup_table(skeleton.names)
    base = dict(preset.get("bones", {}))
    variants = [("", base)]
    for vname, over in preset.get("variants", {}).items():
        v = dict(base)
        for k, b in over.items():
            if b is None:
                v.pop(k, None)
            else:
                v[k] = b
        variants.append((vname, v))
    parents = skeleton.parents
    idx = {n: i for i, n in enumerate(skeleton.names)}
    canon_parent = load_humanoid()["parents"]
    best = None
    for prefix in preset.get("prefixes", [""]) or [""]:
        for vname, table in variants:
            bones, exactness = {}, []
            missing = 0
            for c, b in table.items():
                full = prefix + b
                hit = exact.get(full)
                q = 1.0
                if hit is None:
                    hit = stripped.get(full) or stripped.get(b)
                    q = 0.97
                if hit is None:
                    hit = lower.get(full.lower()) or lower.get(b.lower())
                    q = 0.9
                if hit is None or hit in bones.values():
                    missing += 1
                    continue
                bones[c] = hit
                exactness.append(q)
            # Fewer rig bones skipped between a joint and its canonical parent
            # separates variants that name the same bones differently (UE4/UE5 spines).
            skips = 0
            for c, b in bones.items():
                p = canon_parent.get(c)
                while p is not None and p not in bones:
                    p = canon_parent.get(p)
                if p is None:
                    continue
                j, target, n = parents[idx[b]], idx[bones[p]], 0
                while j >= 0 and j != target:
                    j, n = parents[j], n + 1
                skips += n if j == target else 5
            score = len(bones) - 0.5 * missing - 0.01 * skips
            cand = (score, bones, vname, float(np.mean(exactness)) if exactness else 0.0, prefix)
            if best is None or cand[0] > best[0]:
                best = cand
    return best


def _finish(skeleton: Skeleton, bones: dict, conf: dict, preset: str, variant: str = "") -> BoneMapping:
    hum = load_humanoid()
    used = set(bones.values())
    conf = {c: float(np.clip(conf.get(c, 0.5), 0.0, 1.0)) for c in bones}
    req = hum["required"]
    req_cov = sum(1 for j in req if j in bones) / len(req)
    overall = float(np.mean([conf[c] for c in bones])) * req_cov if bones else 0.0
    return BoneMapping(
        bones={c: bones[c] for c in hum["joints"] if c in bones},
        confidence={c: round(conf[c], 3) for c in hum["joints"] if c in bones},
        overall=round(overall, 3),
        unmapped=[n for n in skeleton.names if n not in used],
        missing_optional=[j for j in hum["optional"] if j not in bones],
        preset=preset,
        variant=variant,
        skeleton_name=str(skeleton.meta.get("name", "")),
    )


def _rig_label(skeleton: Skeleton) -> str:
    return str(skeleton.meta.get("name") or skeleton.meta.get("armature") or "the armature")


def match_preset(skeleton: Skeleton, preset) -> BoneMapping:
    """Map with one preset (name, path or dict); raises :class:`NotHumanoidError`
    naming the missing bones when the preset does not fit."""
    p = preset if isinstance(preset, dict) else load_preset(preset)
    best = _apply_preset(skeleton, p)
    bones = best[1] if best else {}
    missing = [j for j in load_humanoid()["required"] if j not in bones]
    if missing:
        table = p.get("bones", {})
        want = ", ".join(f"{j} ({table.get(j, '?')!s})" for j in missing[:8])
        raise NotHumanoidError(
            f"preset {p.get('name', '?')!r} does not fit {_rig_label(skeleton)!r}: no bone for {want}"
            f"{' ...' if len(missing) > 8 else ''}. Pick another preset, map these bones by hand in the panel, "
            f"or leave the preset empty to map automatically."
        )
    conf = {c: best[3] for c in bones}
    return _finish(skeleton, bones, conf, p.get("name", "user"), best[2])


# --------------------------------------------------------------------------
# public entry point
# --------------------------------------------------------------------------
def auto_map(skeleton: Skeleton, preset=None, use_presets: bool = True) -> BoneMapping:
    """Map ``skeleton`` onto the canonical humanoid.

    ``preset``: a preset name/path/dict or a :class:`BoneMapping` to apply
    as is (errors if it does not fit). Otherwise every bundled preset is
    tried (``use_presets``) and the best one that covers all required joints
    wins; failing that, topology + geometry + name heuristics map the rig.
    Raises :class:`NotHumanoidError` when the rig is not a humanoid.
    """
    if isinstance(preset, BoneMapping):
        preset = {"name": preset.preset if preset.preset not in ("auto", "") else "user", "bones": preset.bones}
    if preset is not None:
        return match_preset(skeleton, preset)
    if use_presets:
        tables = _lookup_table(skeleton.names)
        required = load_humanoid()["required"]
        best = None
        for rank, name in enumerate(list_presets()):
            p = load_preset(name)
            res = _apply_preset(skeleton, p, tables)
            if res is None or any(j not in res[1] for j in required):
                continue
            key = (res[0], res[3], -rank)
            if best is None or key > best[0]:
                best = (key, name, res)
        if best is not None:
            _, name, res = best
            return _finish(skeleton, res[1], {c: res[3] for c in res[1]}, name, res[2])
    return _Heuristic(skeleton).run()


# --------------------------------------------------------------------------
# heuristics
# --------------------------------------------------------------------------
def _unit(v):
    v = np.asarray(v, dtype=np.float64)
    n = np.linalg.norm(v)
    return v / n if n > 1e-12 else np.zeros_like(v)


class _Heuristic:
    NAME_W = 1.5  # weight of a name vote against the geometric score inside a chain

    def __init__(self, skel: Skeleton):
        self.s = skel
        self.n = len(skel)
        rot, pos = skel.rest_world()
        self.pos = pos
        self.tail = pos + rotations.rotate(rot, skel.tails)
        self.info = [name_info(nm) for nm in skel.names]
        self.helper = np.array([i["helper"] for i in self.info], dtype=bool)
        # Core tree: helper bones (twist, IK, end...) are see-through.
        self.cparent = np.full(self.n, -1)
        for j in range(self.n):
            p = skel.parents[j]
            while p >= 0 and self.helper[p]:
                p = skel.parents[p]
            self.cparent[j] = p
        self.cchildren = [[] for _ in range(self.n)]
        for j in range(self.n):
            if not self.helper[j] and self.cparent[j] >= 0:
                self.cchildren[self.cparent[j]].append(j)
        self.roots = [j for j in range(self.n) if not self.helper[j] and self.cparent[j] < 0]
        self.sub = [None] * self.n
        for j in reversed(range(self.n)):
            if self.helper[j]:
                continue
            s = [j]
            for c in self.cchildren[j]:
                s.extend(self.sub[c])
            self.sub[j] = s
        self.scale = max(float(np.ptp(np.vstack([pos, self.tail]), axis=0).max()), 1e-6)
        par = np.maximum(skel.parents, 0)
        self.zero_len = (np.linalg.norm(pos - pos[par], axis=1) < 1e-6 * self.scale) & (skel.parents >= 0)
        self.bones = {}
        self.conf = {}

    # -- small helpers ------------------------------------------------------
    def points(self, j):
        """Heads (and non-degenerate tails) of j's core subtree."""
        ids = self.sub[j]
        pts = [self.pos[ids]]
        t = self.tail[ids]
        keep = np.linalg.norm(t - self.pos[ids], axis=1) > 1e-6 * self.scale
        if keep.any():
            pts.append(t[keep])
        return np.vstack(pts)

    def centroid(self, j):
        return self.points(j).mean(axis=0)

    def far_path(self, start, origin=None, metric=None):
        """Core path from ``start`` to its descendant farthest from ``origin``."""
        origin = self.pos[start] if origin is None else origin
        ids = self.sub[start]
        d = np.linalg.norm(self.pos[ids] - origin, axis=1) if metric is None else metric(ids)
        end = ids[int(np.argmax(d))]
        path = [end]
        while path[-1] != start:
            path.append(self.cparent[path[-1]])
        return path[::-1]

    def trunk_dir(self, hips, j):
        """Hips -> the first joint up the spine where limbs branch (the chest):
        the body's centroid can hang below the hips when long arms droop."""
        while len(self.fingerish_children(j)) < 2 and self.cchildren[j]:
            j = max(self.cchildren[j], key=lambda c: len(self.sub[c]))
        # the chest joint may sit on the hips (one spine bone); its limbs' roots do not
        ids = [j] + self.cchildren[j]
        return _unit(self.pos[ids].mean(axis=0) - self.pos[hips])

    def chain_dir(self, j):
        """Unit vector from joint j to the farthest point of its subtree."""
        pts = self.points(j)
        far = pts[int(np.argmax(np.linalg.norm(pts - self.pos[j], axis=1)))]
        return _unit(far - self.pos[j])

    def mirrored_leaves(self, j):
        """Children of j that come as a left/right pair of small subtrees (eyes, ears)."""
        out = set()
        kids = self.cchildren[j]
        for p, q in itertools.combinations(kids, 2):
            if len(self.sub[p]) > 2 or len(self.sub[q]) > 2:
                continue
            dp, dq = self.pos[p] - self.pos[j], self.pos[q] - self.pos[j]
            lp, lq = np.dot(dp, self.left), np.dot(dq, self.left)
            if lp * lq >= 0:
                continue
            if np.linalg.norm((dp - lp * self.left) - (dq - lq * self.left)) <= 0.3 * (abs(lp) + abs(lq)):
                out |= {p, q}
        return out

    def fingerish_children(self, j):
        return [c for c in self.cchildren[j] if len(self.sub[c]) >= 2]

    def name_score(self, j, role):
        return self.info[j]["roles"].get(role, 0.0)

    def label(self):
        return _rig_label(self.s)

    def assign(self, canonical, j, geo_conf):
        role = _role_of(canonical)
        ns = self.name_score(j, role)
        other = max(self.info[j]["roles"].values(), default=0.0)
        if ns >= 0.5:
            c = 0.75 + 0.25 * geo_conf
        elif other >= 1.0:
            c = 0.35 + 0.3 * geo_conf  # the name says something else
        else:
            c = 0.5 + 0.35 * geo_conf
        self.bones[canonical] = self.s.names[j]
        self.conf[canonical] = c

    # -- steps --------------------------------------------------------------
    def run(self) -> BoneMapping:
        if self.n < 3 or not self.roots:
            raise NotHumanoidError(
                f"armature {self.label()!r} has {self.n} bone(s): RigMind needs a humanoid (hips, spine, head, "
                f"two arms, two legs). Map the bones by hand in the panel or pick a preset.")
        self.find_hips()
        self.find_legs()
        self.find_frame()
        self.find_spine_and_arms()
        self.find_head()
        for side, arm in self.arms.items():
            self.map_arm(side, arm)
        for side, leg in self.legs.items():
            self.map_leg(side, leg)
        return _finish(self.s, self.bones, self.conf, "auto")

    def not_humanoid(self, problem):
        raise NotHumanoidError(
            f"armature {self.label()!r} {problem}: RigMind needs a humanoid (hips, spine, head, two arms, two legs). "
            f"Map the bones by hand in the panel or pick a preset.")

    def find_hips(self):
        best = None
        diag = {}  # joints with a leg pair but no spine going up: for the error message
        for j in range(self.n):
            kids = self.cchildren[j]
            if self.helper[j] or len(kids) < 3:
                continue
            ext = {c: float(np.linalg.norm(self.points(c) - self.pos[j], axis=1).max()) for c in kids}
            for a, b in itertools.combinations(kids, 2):
                na, nb = len(self.sub[a]), len(self.sub[b])
                if min(na, nb) < 2 or abs(na - nb) > max(1, 0.25 * max(na, nb)):
                    continue
                la, lb = ext[a], ext[b]
                if min(la, lb) < 0.6 * max(la, lb) or min(la, lb) < 0.05 * self.scale:
                    continue
                # a leg's direction is its own chain's, root joint to far end:
                # cartoon hips can be wider than the legs are long
                ca, cb = self.chain_dir(a), self.chain_dir(b)
                if np.dot(ca, cb) < 0.3:  # two legs hang the same way
                    continue
                rest = [c for c in kids if c not in (a, b)]
                sp = max(rest, key=lambda c: len(self.sub[c]))
                down = _unit(ca + cb)
                cos = float(np.dot(self.trunk_dir(j, sp), down))
                leglen = la + lb
                if len(self.sub[sp]) < 5 or cos > -0.5:
                    diag.setdefault(j, (len(self.sub[sp]), cos))
                    continue
                key = (leglen, -abs(na - nb))
                if best is None or key > best[0]:
                    best = (key, j, a, b, sp)
        if best is None:
            self.explain_failure(diag)
        _, self.hips, la, lb, self.spine_root = best
        self.leg_roots = [la, lb]
        self.assign("hips", self.hips, 1.0)

    def explain_failure(self, diag):
        branching = [j for j in range(self.n) if len(self.cchildren[j]) >= 2]
        if not branching:
            self.not_humanoid(f"has {self.n} bones in one chain and no two legs/arms")
        ends = [j for j in range(self.n) if not self.helper[j] and not self.cchildren[j]]
        if diag:
            at = sorted(diag, key=lambda j: -diag[j][0])  # the pair with the most body above it first
            cos = diag[at[0]][1]
            ang = float(np.degrees(np.arccos(np.clip(cos, -1, 1))))
            where = " and ".join(repr(self.s.names[j]) for j in at)
            self.not_humanoid(
                f"has {2 * len(at)} leg-like chains (pairs at {where}) and its body leaves the legs at {ang:.0f} "
                f"degrees instead of going straight up from them (about 180): a quadruped, or a rig lying down")
        self.not_humanoid(f"has no joint where two legs and a spine branch ({len(ends)} chain ends, "
                          f"{len(branching)} branching joints)")

    def find_legs(self):
        hip = self.pos[self.hips]
        self.leg_paths = {}
        for r in self.leg_roots:
            self.leg_paths[r] = self.far_path(r, origin=hip)
        # Legs end in feet pointing forward, so they tilt; the trunk is the better up.
        self.up = self.trunk_dir(self.hips, self.spine_root)

    def find_frame(self):
        """Forward from the feet (heel->toe), left = up x forward."""
        up = self.up
        hip = self.pos[self.hips]
        # Hips -> toe tip: the sideways parts of the two legs cancel, the toes' reach forward adds up.
        fw = np.zeros(3)
        leglen = 0.0
        for path in self.leg_paths.values():
            e = path[-1]
            tip = self.tail[e] if np.linalg.norm(self.tail[e] - self.pos[e]) > 1e-9 else self.pos[e]
            v = tip - hip
            fw += v - np.dot(v, up) * up
            leglen += abs(float(np.dot(v, up)))
        if np.linalg.norm(fw) < 0.1 * leglen:
            fw = np.zeros(3)
        if np.linalg.norm(fw) < 1e-6:
            # No feet to read: fall back to the armature axes (Blender: faces -Y, Y-up exports face +Z).
            guess = np.array([0.0, -1.0, 0.0]) if abs(up[2]) >= abs(up[1]) else np.array([0.0, 0.0, 1.0])
            fw = guess - np.dot(guess, up) * up
        self.forward = _unit(fw - np.dot(fw, up) * up)
        self.left = _unit(np.cross(up, self.forward))
        a, b = self.leg_roots
        geo = np.dot(self.centroid(a) - self.centroid(b), self.left)
        sides = self.side_pair(a, b, geo)
        self.legs = {sides[0]: a, sides[1]: b}

    def subtree_side_vote(self, j):
        v = 0
        for k in self.sub[j]:
            s = self.info[k]["side"]
            v += 1 if s == "l" else -1 if s == "r" else 0
        return v

    def side_pair(self, a, b, geo_a_minus_b):
        va, vb = self.subtree_side_vote(a), self.subtree_side_vote(b)
        if va > 0 > vb:
            return ("l", "r")
        if vb > 0 > va:
            return ("r", "l")
        return ("l", "r") if geo_a_minus_b >= 0 else ("r", "l")

    def find_spine_and_arms(self):
        up, left = self.up, self.left
        chain = []
        j = self.spine_root
        found = None
        while True:
            chain.append(j)
            kids = self.cchildren[j]
            pair = None
            for a, b in itertools.combinations(kids, 2):
                na, nb = len(self.sub[a]), len(self.sub[b])
                if min(na, nb) < 2 or abs(na - nb) > max(2, 0.3 * max(na, nb)):
                    continue
                ca, cb = self.centroid(a) - self.pos[j], self.centroid(b) - self.pos[j]
                lat_a, lat_b = np.dot(ca, left), np.dot(cb, left)
                if lat_a * lat_b >= 0:
                    continue
                la, lb = np.linalg.norm(ca), np.linalg.norm(cb)
                if min(la, lb) < 0.5 * max(la, lb):
                    continue
                # Arms reach out sideways; mirrored legs/tentacles would not.
                if min(abs(lat_a) / la, abs(lat_b) / lb) < 0.3:
                    continue
                key = abs(lat_a) + abs(lat_b)
                if pair is None or key > pair[0]:
                    pair = (key, a, b, lat_a - lat_b)
            if pair is not None:
                found = pair
                break
            if not kids:
                break
            j = max(kids, key=lambda c: len(self.sub[c]))
        if found is None:
            self.not_humanoid("has legs but no pair of arms branching from the spine")
        _, a, b, geo = found
        self.chest = j
        sides = self.side_pair(a, b, geo)
        self.arms = {sides[0]: a, sides[1]: b}
        rest = [c for c in self.cchildren[j] if c not in (a, b)]
        self.neck_root = max(rest, key=lambda c: np.dot(self.centroid(c) - self.pos[j], up)) if rest else None
        self.spine_chain = chain
        n = len(chain)
        if n == 1:
            self.assign("spine", chain[0], 0.8)
        elif n == 2:
            self.assign("spine", chain[0], 0.9)
            self.assign("spine2", chain[1], 0.9)
        else:
            self.assign("spine", chain[0], 0.9)
            self.assign("spine1", chain[int((n - 1) / 2 + 0.5)] if n > 3 else chain[1], 0.8)
            self.assign("spine2", chain[-1], 0.9)

    # generic ordered assignment: roles along a path, brute force (paths are short)
    MAX_PATH = 10  # brute force over (n+1)^roles; long hair/skirt chains add nothing

    def best_assignment(self, path, roles, required, score):
        n = len(path)
        best = (-np.inf, None)
        opts = []
        for r in roles:
            opts.append(([None] if r not in required else []) + list(range(n)))
        for combo in itertools.product(*opts):
            idx = [i for i in combo if i is not None]
            if any(b <= a for a, b in zip(idx, idx[1:])):
                continue
            s = score(dict(zip(roles, combo)))
            if s > best[0]:
                best = (s, dict(zip(roles, combo)))
        return best[1]

    def chain_name_score(self, path, asg, role_names):
        s = 0.0
        for r, i in asg.items():
            if i is not None:
                s += self.NAME_W * self.name_score(path[i], role_names[r])
        # bones left out that clearly carry one of these roles cost as much
        used = {i for i in asg.values() if i is not None}
        for i, j in enumerate(path):
            if i not in used:
                s -= self.NAME_W * max((self.name_score(j, rn) for rn in role_names.values()), default=0.0) * 0.5
        return s

    def find_head(self):
        if self.neck_root is None:
            self.not_humanoid("has arms but no neck/head above them")
        up = self.up
        root = self.neck_root
        pairs = set()
        for j in self.sub[root]:
            pairs |= self.mirrored_leaves(j)
        # toward the top of the head, not into an eye; deeper joints win ties (a head without a tail)
        def height(ids):
            h = np.maximum(self.pos[ids] @ up, self.tail[ids] @ up) + 1e-6 * self.scale * np.arange(len(ids))
            return np.where(np.isin(ids, list(pairs)), -np.inf, h)

        path = self.far_path(root, metric=height)[: self.MAX_PATH]
        n = len(path)
        branch = [i for i, j in enumerate(path) if len(self.cchildren[j]) >= 2]
        base = self.pos[path[0]]
        torso = max(float(np.dot(base - self.pos[self.hips], up)), 1e-9)

        def score(a):
            s = self.chain_name_score(path, a, {"neck": "neck", "head": "head"})
            h, k = a["head"], a["neck"]
            if branch:
                s += 1.0 if h == branch[0] else 0.0
            else:
                s += 0.3 if h == n - 1 else 0.0
            # the head joint sits about a quarter of the hips->neck distance above the neck base
            s -= 2.0 * abs(float(np.dot(self.pos[path[h]] - base, up)) - 0.25 * torso) / torso
            if k is not None:
                s += 0.5 if k == 0 else -0.3 * k
                if self.zero_len[path[k]] and k + 1 < h:
                    s -= 1.2  # CMU's lowerneck: a pivot sitting on the chest, the real neck joint follows
            s -= 0.3 * sum(1 for i in range(n) if i not in a.values())
            return s

        a = self.best_assignment(path, ["neck", "head"], {"head"}, score)
        if a["neck"] is not None:
            self.assign("neck", path[a["neck"]], 0.8)
        head = path[a["head"]]
        self.assign("head", head, 0.9)
        # eyes / jaw among the head's other children
        kids = list(self.cchildren[head])
        eyes_named = {self.info[c]["side"]: c for c in kids
                      if self.name_score(c, "eye") >= 1.0 and self.info[c]["side"]}
        if "l" in eyes_named and "r" in eyes_named:
            self.assign("eye_l", eyes_named["l"], 1.0)
            self.assign("eye_r", eyes_named["r"], 1.0)
        else:
            best = None
            for p, q in itertools.combinations(kids, 2):
                dp, dq = self.pos[p] - self.pos[head], self.pos[q] - self.pos[head]
                lp, lq = np.dot(dp, self.left), np.dot(dq, self.left)
                if lp * lq >= 0 or len(self.sub[p]) > 2 or len(self.sub[q]) > 2:
                    continue
                mirrored = np.linalg.norm((dp - lp * self.left) - (dq - lq * self.left))
                if mirrored > 0.3 * (abs(lp) + abs(lq)) + 1e-9 or np.dot(dp, self.forward) <= 0:
                    continue
                if best is None or mirrored < best[0]:
                    best = (mirrored, p, q, lp)
            if best is not None:
                _, p, q, lp = best
                l, r = (p, q) if lp > 0 else (q, p)
                self.assign("eye_l", l, 0.7)
                self.assign("eye_r", r, 0.7)
        used = {self.s.index(self.bones[k]) for k in ("eye_l", "eye_r") if k in self.bones}
        rest = [c for c in kids if c not in used]
        jaw = [c for c in rest if self.name_score(c, "jaw") >= 1.0]
        if not jaw:
            jaw = [c for c in rest
                   if abs(np.dot(self.pos[c] - self.pos[head], self.left)) < 0.02 * self.scale
                   and np.dot(self.points(c).mean(0) - self.pos[head], self.forward)
                   > 0.3 * np.linalg.norm(self.points(c).mean(0) - self.pos[head])
                   and not any(self.info[c]["roles"].values())]
        if len(jaw) == 1:
            self.assign("jaw", jaw[0], 0.7)

    def map_arm(self, side, root):
        chest = self.pos[self.chest]
        path = self.far_path(root, origin=chest)[: self.MAX_PATH]
        n = len(path)
        branch = [i for i, j in enumerate(path) if len(self.fingerish_children(j)) >= 2]
        lat = np.array([abs(np.dot(self.pos[j] - chest, self.left)) for j in path])
        d = lambda i, k: float(np.linalg.norm(self.pos[path[i]] - self.pos[path[k]]))  # noqa: E731
        names = {"clavicle": "clavicle", "upperarm": "upperarm", "lowerarm": "lowerarm", "hand": "hand"}

        def clav_like(c, u, e):
            # a clavicle is short next to the upper arm and starts near the midline
            return d(c, u) < 0.8 * d(u, e) and lat[c] < 0.5 * lat[u]

        def score(a):
            c, u, e, h = a["clavicle"], a["upperarm"], a["lowerarm"], a["hand"]
            s = self.chain_name_score(path, a, names)
            ue, eh = d(u, e), d(e, h)
            s -= 2.0 * abs(ue - eh) / max(ue + eh, 1e-9)
            if branch:
                s += 1.5 if h == branch[0] else -1.0 if h > branch[0] else -0.5
            else:
                s -= 0.3 * (n - 1 - h)  # an unnamed leaf past the hand may be an end bone, so no more
            first = c if c is not None else u
            s -= 0.6 * first  # joints before the first mapped one are unusual
            s -= 0.4 * sum(1 for i in range(first, h + 1) if i not in a.values())
            if c is not None:
                s += 0.4 if clav_like(c, u, e) else -0.6
            elif u == 0 and n >= 3 and clav_like(0, 1, 2):
                s -= 0.5
            return s

        a = self.best_assignment(path, ["clavicle", "upperarm", "lowerarm", "hand"],
                                 {"upperarm", "lowerarm", "hand"}, score)
        if a is None:
            self.not_humanoid(f"has a {side} arm of {n} bone(s); an arm needs upper arm, forearm and hand")
        lower = path[a["lowerarm"]]
        palms = self.fingerish_children(lower)
        if a["hand"] == a["lowerarm"] + 1 and len(palms) >= 3:
            # No hand bone: one palm bone per finger hangs off the forearm
            # (RobotExpressive). The middle finger's palm stands in for the hand.
            fingers = self.identify_fingers(palms, self.pos[path[a["hand"]]])
            hand = fingers.get("middle", fingers.get("index", path[a["hand"]]))
            a["hand"] = None
            self.assign(f"hand_{side}", hand, 0.4)
        else:
            hand = path[a["hand"]]
            fingers = self.identify_fingers(list(self.cchildren[hand]), self.pos[hand])
        for r in ("clavicle", "upperarm", "lowerarm"):
            if a[r] is not None:
                self.assign(f"{r}_{side}", path[a[r]], 0.8)
        if a["hand"] is not None:
            self.assign(f"hand_{side}", hand, 0.8)
        self.map_fingers(side, hand, fingers)

    def finger_name(self, c):
        for k in self.far_path(c):
            if self.info[k]["finger"]:
                return self.info[k]["finger"]
        return None

    def identify_fingers(self, kids, hp) -> dict:
        if not kids:
            return {}
        named = {c: self.finger_name(c) for c in kids}
        fingers = {}
        if len({f for f in named.values() if f}) == len(kids):
            return {f: c for c, f in named.items()}
        else:
            if len(kids) < 2:
                return {}
            # thumb: the chain reaching furthest forward; others ordered front to back
            fwd = {c: float(np.dot(self.centroid(c) - hp, self.forward)) for c in kids}
            along = _unit(sum(self.centroid(c) - hp for c in kids))
            spread = {c: 1.0 - float(np.dot(_unit(self.centroid(c) - hp), along)) for c in kids}
            thumb = max(kids, key=lambda c: fwd[c] + 0.5 * spread[c] * np.linalg.norm(self.centroid(c) - hp))
            others = sorted((c for c in kids if c != thumb), key=lambda c: -np.dot(self.pos[c] - hp, self.forward))
            fingers["thumb"] = thumb
            # a single mitten bone (CMU's LFingers) is best driven as the middle finger
            order = ("middle",) if len(others) == 1 else ("index", "middle", "ring", "pinky")
            for f, c in zip(order, others):
                fingers[f] = c
        return fingers

    def map_fingers(self, side, hand, fingers):
        hp = self.pos[hand]
        for f, c in fingers.items():
            chain = self.far_path(c)
            if len(chain) >= 2:
                # a metacarpal/palm bone starts at the wrist; a 4th unnamed joint is a tip
                d0 = np.linalg.norm(self.pos[chain[0]] - hp)
                d1 = np.linalg.norm(self.pos[chain[1]] - hp)
                if (self.info[chain[0]]["roles"].get("metacarpal") or chain[0] == hand or d0 < 0.1 * d1
                        or (f != "thumb" and len(chain) >= 4 and d0 < 0.4 * d1)):
                    chain = chain[1:]
            for k, j in enumerate(chain[:3]):
                self.assign(f"{f}{k + 1}_{side}", j, 0.7)

    def map_leg(self, side, root):
        hip = self.pos[self.hips]
        up = self.up
        path = self.leg_paths[root][: self.MAX_PATH]
        n = len(path)
        h = np.array([np.dot(self.pos[j] - hip, up) for j in path])
        d = lambda i, k: float(np.linalg.norm(self.pos[path[i]] - self.pos[path[k]]))  # noqa: E731
        names = {"upperleg": "upperleg", "lowerleg": "lowerleg", "foot": "foot", "toes": "toes"}
        ends = []
        for j in path:
            t = self.tail[j]
            p = t if np.linalg.norm(t - self.pos[j]) > 1e-9 else self.pos[j]
            ends.append(np.dot(p - hip, up))
        lowest = min(h.min(), min(ends))

        def score(a):
            u, k, f, t = a["upperleg"], a["lowerleg"], a["foot"], a["toes"]
            s = self.chain_name_score(path, a, names)
            uk, kf = d(u, k), d(k, f)
            s -= 2.0 * abs(uk - kf) / max(uk + kf, 1e-9)
            s -= 0.6 * u
            if np.linalg.norm(self.pos[path[u]] - hip) < 0.15 * uk:
                s -= 1.0  # a zero-length pelvis helper, not the hip joint
            leg = max(h[u] - lowest, 1e-9)
            s -= 2.0 * max(0.0, (h[f] - lowest) / leg - 0.2)  # the ankle is near the ground
            if t is not None:
                s += 0.5 if t == f + 1 else -0.5
            elif f < n - 1:
                s -= 0.4
            s -= 0.4 * sum(1 for i in range(u, f + 1) if i not in a.values())
            return s

        if n >= 3:
            a = self.best_assignment(path, ["upperleg", "lowerleg", "foot", "toes"],
                                     {"upperleg", "lowerleg", "foot"}, score)
        else:
            a = None
        if a is None:
            if n < 2:
                self.not_humanoid(f"has a {side} leg of {n} bone(s)")
            self.assign(f"upperleg_{side}", path[0], 0.6)
            self.assign(f"lowerleg_{side}", path[1], 0.6)
            self.find_detached_foot(side, path)
            return
        for r in ("upperleg", "lowerleg", "foot", "toes"):
            if a[r] is not None:
                self.assign(f"{r}_{side}", path[a[r]], 0.8)

    def find_detached_foot(self, side, path):
        """Feet driven by IK are sometimes parented to the root, not to the shin."""
        last = path[-1]
        end = self.tail[last] if np.linalg.norm(self.tail[last] - self.pos[last]) > 1e-9 else self.pos[last]
        legl = np.linalg.norm(self.pos[path[0]] - end)
        used = {self.s.index(b) for b in self.bones.values()}
        best = None
        for j in range(self.n):
            if j in used or self.helper[j] or j in self.sub[self.hips]:
                continue
            dist = np.linalg.norm(self.pos[j] - end) / max(legl, 1e-9)
            s = 1.5 * self.name_score(j, "foot") - dist
            if self.info[j]["side"] not in (None, side):
                s -= 2.0
            near = dist < 0.35 or (self.name_score(j, "foot") >= 1.0 and self.info[j]["side"] == side and dist < 1.5)
            if near and (best is None or s > best[0]):
                best = (s, j)
        if best is None:
            self.not_humanoid(f"has a {side} leg ({len(path)} bones) with no foot")
        self.assign(f"foot_{side}", best[1], 0.5)
