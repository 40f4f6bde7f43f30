"""Synthetic humanoid rigs with known ground truth, for mapping/retarget tests.

``make_humanoid(rng)`` builds a random humanoid :class:`Skeleton` in
Blender's frame (Z up, facing -Y, character's left = +X) with the canonical
joint each bone plays; ``make_renamed_humanoid(rng)`` also renames it in a
random rig "dialect" (case, separators, side conventions, prefixes,
synonyms) or, with ``scramble=True``, with meaningless names.

Random bone orientations (rest rotations) are used on purpose: a mapper must
read positions from ``rest_world()``, not assume BVH-style identity frames.
"""

from __future__ import annotations

import numpy as np

from rigmind.backend import rotations
from rigmind.backend.skeleton import Skeleton

FINGERS = ("thumb", "index", "middle", "ring", "pinky")


class _Builder:
    def __init__(self, rng):
        self.rng = rng
        self.desc = []  # (semantic key, parent index, world position)

    def add(self, key, parent, pos):
        self.desc.append((key, parent, np.asarray(pos, dtype=np.float64)))
        return len(self.desc) - 1


def _rot_x(angle):
    return rotations.from_axis_angle(np.array([angle, 0.0, 0.0]))


def make_humanoid(rng, **force):
    """A random humanoid. Returns ``(skeleton, keys)`` where ``keys[j]`` is a
    semantic key: ``(canonical, side_or_None, extra)``; canonical is None for
    bones that play no canonical joint (twist, ends, extra spine/neck, root).

    ``force`` overrides the random choices (``spine_bones``, ``clavicles``,
    ``fingers``, ``twist``, ``a_pose``, ``ends``, ``root``, ``jaw_eyes``,
    ``pelvis_helpers``, ``frame`` in {"z_up", "yaw", "y_up"}).
    """
    o = dict(
        spine_bones=int(rng.integers(1, 5)),
        clavicles=bool(rng.random() < 0.75),
        fingers=bool(rng.random() < 0.6),
        twist=str(rng.choice(["none", "leaf", "chain"], p=[0.5, 0.3, 0.2])),
        a_pose=bool(rng.random() < 0.4),
        ends=bool(rng.random() < 0.4),
        root=bool(rng.random() < 0.4),
        jaw_eyes=bool(rng.random() < 0.4),
        pelvis_helpers=bool(rng.random() < 0.15),
        neck_bones=int(rng.integers(1, 3)),
        frame=str(rng.choice(["z_up", "yaw", "y_up"], p=[0.7, 0.2, 0.1])),
        extras=bool(rng.random() < 0.25),
    )
    o.update(force)
    H = float(rng.uniform(1.2, 2.1))
    u = lambda a, b: float(rng.uniform(a, b)) * H  # noqa: E731
    b = _Builder(rng)
    root = b.add((None, None, "root"), -1, (0, 0, 0)) if o["root"] else -1
    hz = u(0.5, 0.56)
    hips = b.add(("hips", None, ""), root, (0, u(-0.01, 0.01), hz))
    # spine
    torso = u(0.26, 0.31)
    ns = o["spine_bones"]
    if ns == 1:
        roles = ["spine"]
    elif ns == 2:
        roles = ["spine", "spine2"]
    else:
        roles = ["spine"] + [None] * (ns - 2) + ["spine2"]
        roles[int((ns - 1) / 2 + 0.5) if ns > 3 else 1] = "spine1"
    p = hips
    z = hz
    chest_top = hz + torso
    for i in range(ns):
        z = hz + u(0.0, 0.02) if i == 0 else hz + torso * (0.1 + 0.75 * i / ns)
        p = b.add((roles[i], None, f"spine{i}"), p, (0, u(-0.005, 0.005), z))
    chest = p
    # neck / head
    p = b.add(("neck", None, "neck0"), chest, (0, 0, chest_top))
    for k in range(1, o["neck_bones"]):
        p = b.add((None, None, f"neck{k}"), p, (0, 0, chest_top + u(0.02, 0.035) * k))
    head_z = chest_top + u(0.07, 0.09)
    head = b.add(("head", None, ""), p, (0, 0, head_z))
    if o["ends"]:
        b.add((None, None, "head_end"), head, (0, 0, head_z + u(0.11, 0.14)))
    if o["jaw_eyes"]:
        b.add(("jaw", None, ""), head, (0, -u(0.01, 0.02), head_z + u(0.01, 0.02)))
        ey = head_z + u(0.05, 0.07)
        for s, sx in (("l", 1), ("r", -1)):
            b.add((f"eye_{s}", s, ""), head, (sx * u(0.03, 0.036), -u(0.05, 0.06), ey))
    if o["extras"]:
        # VRoid-style secondary chains: hair hanging from the head, a breast pair on the chest
        for _k in range(int(rng.integers(2, 6))):
            ang = rng.uniform(0.3, np.pi - 0.3)
            q = head
            base = np.array([0.06 * H * np.cos(ang), 0.05 * H * np.sin(ang), head_z + u(0.06, 0.1)])
            for i in range(3):
                q = b.add((None, None, "hair"), q, base + np.array([0, 0, -u(0.03, 0.05) * i]))
        for s, sx in (("l", 1.0), ("r", -1.0)):
            q = b.add((None, s, "breast"), chest, (sx * u(0.04, 0.06), -u(0.05, 0.07), chest_top - u(0.1, 0.12)))
            b.add((None, s, "breast_end"), q, (sx * u(0.05, 0.07), -u(0.09, 0.11), chest_top - u(0.11, 0.13)))
    # arms
    sh_w = u(0.1, 0.13)
    droop = np.radians(rng.uniform(30, 45)) if o["a_pose"] else np.radians(rng.uniform(-3, 3))
    la, lf, lh = u(0.16, 0.19), u(0.14, 0.17), u(0.09, 0.11)
    for s, sx in (("l", 1.0), ("r", -1.0)):
        d = np.array([sx * np.cos(droop), 0.0, -np.sin(droop)])
        fw = np.array([0.0, -1.0, 0.0])
        sh = np.array([sx * sh_w, u(0.0, 0.02), chest_top - u(0.02, 0.04)])
        p = chest
        if o["clavicles"]:
            p = b.add((f"clavicle_{s}", s, ""), p, (sx * u(0.01, 0.03), u(-0.02, 0.0), chest_top - u(0.03, 0.05)))
        up_arm = b.add((f"upperarm_{s}", s, ""), p, sh)
        el = sh + la * d
        wr = el + lf * d
        parent_fore = up_arm
        if o["twist"] == "leaf":
            b.add((None, s, "upperarm_twist"), up_arm, sh + 0.5 * la * d)
        elif o["twist"] == "chain":
            parent_fore = b.add((None, s, "upperarm_twist"), up_arm, sh + 0.5 * la * d)
        fore = b.add((f"lowerarm_{s}", s, ""), parent_fore, el)
        parent_hand = fore
        if o["twist"] == "leaf":
            b.add((None, s, "lowerarm_twist"), fore, el + 0.5 * lf * d)
        elif o["twist"] == "chain":
            parent_hand = b.add((None, s, "lowerarm_twist"), fore, el + 0.6 * lf * d)
        hand = b.add((f"hand_{s}", s, ""), parent_hand, wr)
        if o["fingers"]:
            for fi, f in enumerate(FINGERS):
                if f == "thumb":
                    base = wr + 0.22 * lh * d + 0.22 * lh * fw
                    fd = _norm(d + 1.2 * fw)
                    seg = [0.3 * lh, 0.25 * lh, 0.2 * lh]
                else:
                    base = wr + 0.5 * lh * d + (0.12 - 0.08 * (fi - 1)) * lh * fw
                    fd = d
                    seg = [0.28 * lh, 0.2 * lh, 0.16 * lh]
                q = hand
                pt = base
                for k in range(3):
                    q = b.add((f"{f}{k + 1}_{s}", s, ""), q, pt)
                    pt = pt + seg[k] * fd
                if o["ends"]:
                    b.add((None, s, f"{f}_end"), q, pt)
        elif o["ends"]:
            b.add((None, s, "hand_end"), hand, wr + lh * d)
    # legs
    hw = u(0.08, 0.1)
    top_z = hz - u(0.02, 0.05)
    ank_z = u(0.04, 0.055)
    lt = (top_z - ank_z) * float(rng.uniform(0.47, 0.54))
    for s, sx in (("l", 1.0), ("r", -1.0)):
        p = hips
        if o["pelvis_helpers"]:
            p = b.add((None, s, "pelvis_helper"), hips, b.desc[hips][2])
        top = np.array([sx * hw, 0.0, top_z])
        th = b.add((f"upperleg_{s}", s, ""), p, top)
        knee = top + np.array([0.0, -u(0.0, 0.01), -lt])
        parent_shin = th
        if o["twist"] == "leaf":
            b.add((None, s, "thigh_twist"), th, 0.5 * (top + knee))
        sh = b.add((f"lowerleg_{s}", s, ""), parent_shin, knee)
        ank = np.array([sx * (hw + u(-0.01, 0.01)), u(0.0, 0.02), ank_z])
        ft = b.add((f"foot_{s}", s, ""), sh, ank)
        toe = np.array([ank[0], -u(0.09, 0.12), u(0.01, 0.02)])
        tb = b.add((f"toes_{s}", s, ""), ft, toe)
        if o["ends"]:
            b.add((None, s, "toe_end"), tb, toe + np.array([0, -u(0.04, 0.06), 0]))
    if o["extras"]:
        # skirt chains: shorter than the legs, hanging around the hips
        for _k in range(int(rng.integers(2, 7))):
            ang = rng.uniform(0, 2 * np.pi)
            q = hips
            for i in range(3):
                at = (0.12 * H * np.cos(ang), 0.1 * H * np.sin(ang), hz - u(0.05, 0.07) * (i + 1))
                q = b.add((None, None, "skirt"), q, at)
    # global frame
    if o["frame"] == "yaw":
        g = rotations.from_axis_angle(np.array([0.0, 0.0, rng.uniform(-np.pi, np.pi)]))
    elif o["frame"] == "y_up":
        g = _rot_x(-np.pi / 2)  # Z-up -> Y-up, the character then faces +Z
    else:
        g = rotations.identity()
    keys = [d[0] for d in b.desc]
    parents = [d[1] for d in b.desc]
    world = np.array([rotations.rotate(g, d[2]) for d in b.desc])
    rots = rotations.normalize(rng.normal(size=(len(keys), 4)))  # arbitrary bone frames
    offsets, rests, tails = [], [], []
    for j, p in enumerate(parents):
        if p < 0:
            offsets.append(world[j])
            rests.append(rots[j])
        else:
            inv_p = rotations.inv(rots[p])
            offsets.append(rotations.rotate(inv_p, world[j] - world[p]))
            rests.append(rotations.mul(inv_p, rots[j]))
        kids = [k for k, q in enumerate(parents) if q == j]
        tails.append(rotations.rotate(rotations.inv(rots[j]), world[kids[0]] - world[j]) if kids else np.zeros(3))
    names = [f"j{j}" for j in range(len(keys))]
    skel = Skeleton(names, parents, np.array(offsets), np.array(rests), np.array(tails), {"name": "generated"})
    return skel, keys


def _norm(v):
    return v / np.linalg.norm(v)


# -- naming dialects ---------------------------------------------------------
_SYN = {
    "hips": ["hips", "pelvis", "hip"],
    "spine": ["spine", "spine", "back", "lowerback", "abdomen"],
    "neck": ["neck"],
    "head": ["head"],
    "jaw": ["jaw"],
    "eye": ["eye"],
    "clavicle": ["clavicle", "shoulder", "collar", "clav"],
    "upperarm": ["upperarm", "arm", "upper_arm", "uparm"],
    "lowerarm": ["forearm", "lowerarm", "lower_arm", "elbow"],
    "hand": ["hand", "wrist"],
    "upperleg": ["thigh", "upleg", "upperleg", "upper_leg"],
    "lowerleg": ["shin", "calf", "leg", "lowerleg", "knee"],
    "foot": ["foot", "ankle"],
    "toes": ["toe", "toes", "ball", "toebase"],
    "thumb": ["thumb"],
    "index": ["index", "pointer"],
    "middle": ["middle", "mid"],
    "ring": ["ring"],
    "pinky": ["pinky", "little"],
    "root": ["root", "Armature_root", "ground"],
}


def _pick(rng, xs):
    return xs[int(rng.integers(len(xs)))]


def make_renamed_humanoid(rng, scramble: bool = False, **force):
    """``(skeleton, truth)``: a random humanoid named in a random dialect (or
    scrambled), and ``truth[bone_name] -> canonical joint or None``."""
    if scramble and "twist" not in force:
        # Collinear twist bones inside a chain are indistinguishable from
        # elbows without names; real rigs name them, which the named variant covers.
        force["twist"] = str(rng.choice(["none", "leaf"]))
    skel, keys = make_humanoid(rng, **force)
    n = len(keys)
    if scramble:
        perm = rng.permutation(n)
        names = [f"Bone.{int(perm[j]):03d}" for j in range(n)]
    else:
        names = _dialect_names(rng, keys)
    truth = {nm: k[0] for nm, k in zip(names, keys)}
    skel = Skeleton(names, skel.parents, skel.offsets, skel.rest_rotations, skel.tails,
                    {"name": "scrambled" if scramble else "renamed"})
    return skel, truth


def _dialect_names(rng, keys):
    case = _pick(rng, ["lower", "upper", "title", "camel"])
    sep = _pick(rng, ["", "_", ".", "-", " "]) if case in ("title", "camel") else _pick(rng, ["_", ".", "-", " "])
    side_style = _pick(rng, ["Left/Right", "L/R pre", ".L", "_l", "_L", " L", "l_", "_left"])
    prefix = _pick(rng, ["", "", "mixamorig:", "DEF-", "ORG-", "Bip01 ", "CC_Base_", "J_Bip_", "rig:"])
    syn = {k: _pick(rng, v) for k, v in _SYN.items()}
    if syn["clavicle"] != "collar" and syn["upperarm"] == "shoulder":
        syn["upperarm"] = "arm"
    fing_num = _pick(rng, ["{k}", "_0{k}", "{k}", ".0{k}"])
    fing_hand = rng.random() < 0.4  # LeftHandIndex1 style

    def words_case(words):
        ws = [w for part in words for w in part.split("_")]
        if case == "lower":
            return sep.join(w.lower() for w in ws)
        if case == "upper":
            return sep.join(w.upper() for w in ws)
        if case == "title":
            return sep.join(w.capitalize() for w in ws)
        return ws[0].lower() + "".join(w.capitalize() for w in ws[1:]) if sep == "" else sep.join(
            w.capitalize() for w in ws)

    def sided(base, side):
        if side is None:
            return base
        L = side == "l"
        if side_style == "Left/Right":
            return ("Left" if L else "Right") + (sep if sep not in ("",) else "") + base
        if side_style == "L/R pre":
            return ("L" if L else "R") + (sep or "_") + base
        if side_style == "l_":
            return ("l_" if L else "r_") + base
        if side_style == "_left":
            return base + ("_left" if L else "_right")
        suffix = {".L": (".L", ".R"), "_l": ("_l", "_r"), "_L": ("_L", "_R"), " L": (" L", " R")}[side_style]
        return base + suffix[0 if L else 1]

    used = set()
    out = []
    for canonical, side, extra in keys:
        if extra == "root":
            base = syn["root"]
        elif extra.startswith("spine"):
            i = int(extra[5:])
            base = words_case([syn["spine"]]) + ("" if i == 0 else str(i))
        elif canonical is None and extra.startswith("neck"):
            base = words_case(["neck"]) + str(int(extra[4:]))
        elif canonical is None and extra.endswith("twist"):
            part = extra[:-6]
            stem = {"upperarm": "upperarm", "lowerarm": "lowerarm", "thigh": "upperleg"}[part]
            base = words_case([syn.get(stem, part),
                               _pick(rng, ["twist", "roll", "twist_01"])])
        elif canonical is None and extra.endswith("_end"):
            base = words_case([extra[:-4] if extra[:-4] not in _SYN else syn[extra[:-4]], "end"])
        elif canonical is None and extra == "pelvis_helper":
            base = words_case(["hip", "helper"])
        elif extra in ("hair", "skirt", "breast", "breast_end"):
            choices = {"hair": ["hair", "j_sec_hair"], "skirt": ["skirt", "j_sec_skirt"],
                       "breast": ["bust", "breast"], "breast_end": ["bust_end", "breast_tip"]}
            base = words_case([_pick(rng, choices[extra])])
        else:
            stem = canonical[:-2] if canonical.endswith(("_l", "_r")) else canonical
            if stem[:-1] in FINGERS:
                f, k = stem[:-1], stem[-1]
                base = words_case((["hand"] if fing_hand else []) + [syn[f]]) + fing_num.format(k=k)
            else:
                base = words_case([syn.get(stem[:3] if stem.startswith("eye") else stem, stem)])
        name = prefix + sided(base, side)
        while name in used:
            name += "_x"
        used.add(name)
        out.append(name)
    return out
