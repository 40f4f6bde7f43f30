"""A procedural humanoid mannequin, built entirely by code (no asset file).

Frame and units: metres, Blender's right-handed frame with Z up; the character
stands on Z = 0, faces -Y and holds a T-pose with the arms along +-X. Blender's
left (+X) is the character's own left, so ``Left*`` bones and ``*Left`` shape
keys sit at +X.

What :func:`build_mannequin` makes:

- an armature of 55 Mixamo-style bones (no ``mixamorig:`` prefix), 1.75 m tall,
  ``Hips`` as the root;
- a body mesh of tapered capsules (torso loft, limbs, palms, phalanges, feet)
  deformed by an Armature modifier through vertex groups named after the bones;
- a head mesh (skull, nose, brows, lips, chin, ears and two eyeballs with an
  iris) weighted to Head / Jaw / LeftEye / RightEye, with a ``Basis`` shape key
  and the 52 ARKit shape keys built as compact displacement fields in NumPy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import bpy
import numpy as np

from ..presets import arkit52_names

__all__ = ["build_mannequin", "save_mannequin", "BONE_NAMES", "HEAD_CENTRE"]

# ---------------------------------------------------------------------------
# Skeleton layout. Positions are armature space (= world, the armature object
# sits at the origin). Only the left side is written; the right is its mirror.
# ---------------------------------------------------------------------------

# Centre of the head ellipsoid; the face features and ARKit fields are placed
# relative to it, and the Jaw / eye bones are derived from it.
HEAD_CENTRE = (0.0, -0.01, 1.635)
_HEAD_RADII = (0.076, 0.098, 0.115)  # half width (X), half depth (Y), half height (Z)
_EYE_X, _EYE_Z, _EYE_R = 0.032, 0.004, 0.012  # head-local eye centre (+-X) and eyeball radius
_BROW_Z = _EYE_Z + 0.023  # head-local height of the brows
_NOSE_Z = -0.037  # head-local height of the nose tip
_MOUTH_Z = -0.064  # head-local height of the mouth line
_CHIN_Z = -0.097
_JAW_HINGE = (0.0, 0.012, -0.022)  # head-local hinge of the jaw (the Jaw bone's head)
_JAW_CHIN = (0.0, -0.085, -0.100)


def _eye_centre_local(side: float) -> np.ndarray:
    a, b, c = _HEAD_RADII
    # Eyeball front sits 3 mm behind the un-indented ellipsoid surface, so the
    # socket (11 mm deep) shows it and the blink field can cover it.
    y0 = -b * math.sqrt(1.0 - (_EYE_X / a) ** 2 - (_EYE_Z / c) ** 2)
    return np.array([side * _EYE_X, y0 + 0.004 + _EYE_R, _EYE_Z])


def _bone_table() -> list:
    """``(name, parent, head, tail, z_axis_hint)`` in topological order."""
    C = np.array(HEAD_CENTRE)
    up, fwd = (0, 0, 1), (0, -1, 0)
    t = [
        ("Hips", None, (0, 0, 0.95), (0, 0, 1.05), fwd),
        ("Spine", "Hips", (0, 0, 1.05), (0, 0, 1.16), fwd),
        ("Spine1", "Spine", (0, 0, 1.16), (0, 0, 1.28), fwd),
        ("Spine2", "Spine1", (0, 0, 1.28), (0, 0, 1.42), fwd),
        ("Neck", "Spine2", (0, 0, 1.42), (0, -0.01, 1.55), fwd),
        ("Head", "Neck", (0, -0.01, 1.55), (0, -0.01, 1.75), fwd),
        ("Jaw", "Head", tuple(C + _JAW_HINGE), tuple(C + _JAW_CHIN), up),
    ]
    for side, pre in ((1.0, "Left"), (-1.0, "Right")):
        e = C + _eye_centre_local(side)
        t.append((pre + "Eye", "Head", tuple(e), tuple(e + (0, -0.025, 0)), up))
    for side, pre in ((1.0, "Left"), (-1.0, "Right")):

        def m(p, s=side):
            return (s * p[0], p[1], p[2])

        t += [
            (pre + "Shoulder", "Spine2", m((0.025, 0, 1.40)), m((0.17, 0, 1.42)), up),
            (pre + "Arm", pre + "Shoulder", m((0.17, 0, 1.42)), m((0.44, 0, 1.42)), up),
            (pre + "ForeArm", pre + "Arm", m((0.44, 0, 1.42)), m((0.69, 0, 1.42)), up),
            (pre + "Hand", pre + "ForeArm", m((0.69, 0, 1.42)), m((0.78, 0, 1.42)), up),
        ]
        # Thumb first (Mixamo order), from near the wrist, forward and out.
        base = np.array([0.705, -0.022, 1.41])
        d = np.array([0.65, -0.75, -0.10])
        d /= np.linalg.norm(d)
        parent = pre + "Hand"
        for k, ln in enumerate((0.040, 0.032, 0.026), 1):
            tip = base + d * ln
            t.append((f"{pre}HandThumb{k}", parent, m(base), m(tip), up))
            parent, base = f"{pre}HandThumb{k}", tip
        # Knuckle (x, y), spread angle towards +Y (degrees), phalanx lengths.
        fingers = (
            ("Index", 0.775, -0.027, -4.0, (0.040, 0.024, 0.020)),
            ("Middle", 0.780, -0.008, 0.0, (0.044, 0.028, 0.021)),
            ("Ring", 0.776, 0.011, 4.0, (0.041, 0.026, 0.020)),
            ("Pinky", 0.768, 0.028, 9.0, (0.032, 0.019, 0.017)),
        )
        for fname, kx, ky, ang, lens in fingers:
            a = math.radians(ang)
            d = np.array([math.cos(a), math.sin(a), 0.0])
            base = np.array([kx, ky, 1.42])
            parent = pre + "Hand"
            for k, ln in enumerate(lens, 1):
                tip = base + d * ln
                t.append((f"{pre}Hand{fname}{k}", parent, m(base), m(tip), up))
                parent, base = f"{pre}Hand{fname}{k}", tip
        t += [
            # The knee sits 5 mm forward so IK solvers know which way it bends.
            (pre + "UpLeg", "Hips", m((0.09, 0, 0.93)), m((0.09, -0.005, 0.50)), fwd),
            (pre + "Leg", pre + "UpLeg", m((0.09, -0.005, 0.50)), m((0.09, 0, 0.085)), fwd),
            (pre + "Foot", pre + "Leg", m((0.09, 0, 0.085)), m((0.09, -0.13, 0.022)), up),
            (pre + "ToeBase", pre + "Foot", m((0.09, -0.13, 0.022)), m((0.09, -0.20, 0.022)), up),
        ]
    return t


BONE_NAMES = tuple(b[0] for b in _bone_table())

# ---------------------------------------------------------------------------
# NumPy geometry helpers
# ---------------------------------------------------------------------------


def _smoothstep(e0, e1, x):
    """Hermite step from 0 at ``e0`` to 1 at ``e1`` (``e0 > e1`` flips it)."""
    t = np.clip((x - e0) / (e1 - e0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def _bump(u, v, cu, cv, su, sv):
    """Compact C1 bump: 1 at (cu, cv), exactly 0 outside the ellipse of
    half-axes (su, sv). Compact support keeps each field in its region."""
    r2 = ((u - cu) / su) ** 2 + ((v - cv) / sv) ** 2
    return np.clip(1.0 - r2, 0.0, None) ** 2


def _loft(centres, sides, ups, rx, ry, pole0, pole1, n_seg, power=2.0):
    """Closed tube through rings, capped by two poles.

    Ring ``i`` is ``centres[i] + rx[i]*c*sides[i] + ry[i]*s*ups[i]`` with a
    superellipse (c, s) of exponent ``power``. ``sides[i] x ups[i]`` must point
    from ring ``i`` towards ring ``i+1`` so the faces wind outwards.
    Returns ``(verts [K*n+2, 3], quads [., 4], tris [., 3])``."""
    K = len(centres)
    phi = np.arange(n_seg) * (2.0 * math.pi / n_seg)
    c, s = np.cos(phi), np.sin(phi)
    if power != 2.0:
        e = 2.0 / power
        c, s = np.sign(c) * np.abs(c) ** e, np.sign(s) * np.abs(s) ** e
    ring = (
        centres[:, None, :]
        + (rx[:, None] * c[None, :])[..., None] * sides[:, None, :]
        + (ry[:, None] * s[None, :])[..., None] * ups[:, None, :]
    )
    verts = np.concatenate([ring.reshape(-1, 3), [pole0, pole1]])
    i = np.arange(K - 1)[:, None]
    k = np.arange(n_seg)[None, :]
    k1 = (k + 1) % n_seg
    quads = np.stack(
        [i * n_seg + k, i * n_seg + k1, (i + 1) * n_seg + k1, (i + 1) * n_seg + k], axis=-1
    ).reshape(-1, 4)
    p0, p1 = K * n_seg, K * n_seg + 1
    kk = np.arange(n_seg)
    last = (K - 1) * n_seg
    tris = np.concatenate(
        [
            np.stack([np.full(n_seg, p0), (kk + 1) % n_seg, kk], axis=-1),
            np.stack([np.full(n_seg, p1), last + kk, last + (kk + 1) % n_seg], axis=-1),
        ]
    )
    return verts, quads, tris


def _frame(d, up_hint):
    up = np.asarray(up_hint, float)
    up = up - np.dot(up, d) * d
    if np.linalg.norm(up) < 1e-6:
        up = np.array([0.0, 0.0, 1.0]) - d[2] * d
    up /= np.linalg.norm(up)
    return np.cross(up, d), up


@dataclass(frozen=True)
class CapsuleShape:
    """How a :func:`_capsule` is divided and shaped."""

    #: Vertices around each ring.
    n_seg: int = 20
    #: Rings along the body between the caps (the ends excluded).
    n_body: int = 6
    #: Rings in each end cap.
    n_cap: int = 4
    #: Length of the end caps, as a share of their radius.
    cap: float = 1.0
    #: The radius along ``up_hint``, as a share of the radius across.
    flat: float = 1.0
    #: Exponent of the superellipse cross-section (2: an ellipse).
    power: float = 2.0


def _capsule(p0, p1, r0, r1, up_hint=(0, 0, 1), shape: CapsuleShape = CapsuleShape()):
    """Tapered capsule from ``p0`` (radius ``r0``) to ``p1`` (``r1``), metres,
    its rings and caps as ``shape`` says (``shape.flat`` scales the radius
    along ``up_hint``). Returns ``(verts, quads, tris, s)`` where ``s`` is
    each vertex's distance along the axis from ``p0`` (negative in the
    first cap)."""
    n_seg, n_body, n_cap = shape.n_seg, shape.n_body, shape.n_cap
    cap, flat, power = shape.cap, shape.flat, shape.power
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    L = float(np.linalg.norm(p1 - p0))
    d = (p1 - p0) / L
    side, up = _frame(d, up_hint)
    al = np.linspace(0.0, math.pi / 2, n_cap + 1)[1:]
    s_list = [-r0 * cap * np.cos(al)]
    r_list = [r0 * np.sin(al)]
    u = np.linspace(0.0, 1.0, n_body + 1)[1:-1]
    s_list.append(u * L)
    r_list.append(r0 + (r1 - r0) * u)
    al = al[::-1]
    s_list.append(L + r1 * cap * np.cos(al))
    r_list.append(r1 * np.sin(al))
    s = np.concatenate(s_list)
    r = np.concatenate(r_list)
    K = len(s)
    centres = p0 + s[:, None] * d
    verts, quads, tris = _loft(
        centres, np.tile(side, (K, 1)), np.tile(up, (K, 1)), r, r * flat,
        p0 - d * r0 * cap, p1 + d * r1 * cap, n_seg, power,
    )
    s_v = np.concatenate([np.repeat(s, n_seg), [-r0 * cap, L + r1 * cap]])
    return verts, quads, tris, s_v


class _MeshBuilder:
    """Accumulates pieces and per-bone weights, then makes one Blender mesh."""

    def __init__(self):
        self.verts, self.quads, self.tris, self.qmats, self.tmats = [], [], [], [], []
        self.weights = {}  # bone -> list of (vertex indices, weights)
        self.n = 0

    def add(self, verts, quads, tris, weights, mat=0):
        """Append a piece; ``weights`` maps bone -> scalar or per-vertex
        weights; ``mat`` is a material index or a (per-quad, per-triangle)
        pair of index arrays. Returns the piece's vertex indices."""
        off = self.n
        self.verts.append(np.asarray(verts, float))
        self.quads.append(np.asarray(quads, np.int64) + off)
        self.tris.append(np.asarray(tris, np.int64) + off)
        if np.isscalar(mat):
            mat = (np.full(len(quads), mat), np.full(len(tris), mat))
        self.qmats.append(np.asarray(mat[0]))
        self.tmats.append(np.asarray(mat[1]))
        idx = np.arange(off, off + len(verts))
        for bone, w in weights.items():
            w = np.broadcast_to(np.asarray(w, float), (len(verts),))
            keep = w > 1e-4
            if keep.any():
                self.weights.setdefault(bone, []).append((idx[keep], w[keep]))
        self.n += len(verts)
        return idx

    def make_object(self, name, collection):
        V = np.concatenate(self.verts)
        Q = np.concatenate(self.quads) if self.quads else np.zeros((0, 4), np.int64)
        T = np.concatenate(self.tris) if self.tris else np.zeros((0, 3), np.int64)
        me = bpy.data.meshes.new(name)
        me.vertices.add(len(V))
        me.vertices.foreach_set("co", V.astype(np.float32).ravel())
        loops = np.concatenate([Q.ravel(), T.ravel()]).astype(np.int32)
        me.loops.add(len(loops))
        me.loops.foreach_set("vertex_index", loops)
        starts = np.concatenate([np.arange(len(Q)) * 4, len(Q) * 4 + np.arange(len(T)) * 3])
        me.polygons.add(len(starts))
        me.polygons.foreach_set("loop_start", starts.astype(np.int32))
        # Polygons are all quads first, then all triangles.
        mats = np.concatenate(self.qmats + self.tmats).astype(np.int32)
        me.polygons.foreach_set("material_index", mats)
        me.update(calc_edges=True)
        me.validate()
        me.shade_smooth()
        obj = bpy.data.objects.new(name, me)
        collection.objects.link(obj)
        return obj, V

    def write_groups(self, obj, bone_names):
        """One vertex group per bone (empty where no vertex uses it). Weights
        are quantised to 1/256 so ``VertexGroup.add`` runs once per distinct
        weight instead of once per vertex."""
        for bone in bone_names:
            vg = obj.vertex_groups.new(name=bone)
            for idx, w in self.weights.get(bone, ()):
                q = np.round(w * 256).astype(np.int64)
                for val in np.unique(q):
                    if val <= 0:
                        continue
                    vg.add(idx[q == val].tolist(), float(val) / 256.0, "REPLACE")


def _chain_weights(s, L, bone, parent=None, child=None, blend=0.04):
    """Per-vertex weights for a limb piece: its own bone, shading off to 50/50
    with ``parent`` at the head end and ``child`` at the tail end over
    ``blend`` metres, so joints bend smoothly but stay mostly rigid."""
    w = {}
    wp = 0.5 * np.clip(1.0 - s / blend, 0.0, 1.0) if parent else np.zeros_like(s)
    wc = 0.5 * np.clip(1.0 - (L - s) / blend, 0.0, 1.0) if child else np.zeros_like(s)
    if parent:
        w[parent] = wp
    if child:
        w[child] = wc
    w[bone] = 1.0 - wp - wc
    return w


def _limb_tube(points, profile, up_hint, n_seg=20, ring_step=0.015, n_cap=4):
    """One smooth tube along the joint chain ``points`` (e.g. shoulder, elbow,
    wrist; metres), rounded caps at both ends. ``profile`` is ``[(s, radius)]``
    with ``s`` the distance along the chain; radii between keys are
    interpolated. Ring frames follow the chain's smoothed direction, so the
    tube bends through a joint instead of ending there. Returns ``(verts,
    quads, tris, s)`` with each vertex's ``s`` (negative in the first cap)."""
    P = np.asarray(points, float)
    seg = np.linalg.norm(np.diff(P, axis=0), axis=1)
    knots = np.concatenate([[0.0], np.cumsum(seg)])
    L = float(knots[-1])
    ks, kr = np.array(profile, float).T

    def centre(s):
        return np.stack([np.interp(s, knots, P[:, i]) for i in range(3)], axis=-1)

    def radius(s):
        return np.interp(s, ks, kr)

    n_body = max(int(math.ceil(L / ring_step)), 2)
    body = np.linspace(0.0, L, n_body + 1)
    al = np.linspace(0.0, math.pi / 2, n_cap + 1)[1:]
    r0, r1 = radius(0.0), radius(L)
    s = np.concatenate([-r0 * np.cos(al), body[1:-1], L + r1 * np.cos(al[::-1])])
    r = np.concatenate([r0 * np.sin(al), radius(body[1:-1]), r1 * np.sin(al[::-1])])
    sc = np.clip(s, 0.0, L)
    C = centre(sc)
    # Direction: the chord over +-4 cm, which rounds the corner at each joint.
    d = centre(np.clip(sc + 0.04, 0, L)) - centre(np.clip(sc - 0.04, 0, L))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    C = C + np.where(s < 0, s, np.where(s > L, s - L, 0.0))[:, None] * d
    frames = [_frame(di, up_hint) for di in d]
    sides = np.array([f[0] for f in frames])
    ups = np.array([f[1] for f in frames])
    pole0, pole1 = P[0] - d[0] * r0, P[-1] + d[-1] * r1
    verts, quads, tris = _loft(C, sides, ups, r, r, pole0, pole1, n_seg)
    s_v = np.concatenate([np.repeat(s, n_seg), [-r0, L + r1]])
    return verts, quads, tris, s_v


def _joint_weights(s, joints, bones, parent, child, blends, start_offset=0.0):
    """Per-vertex weights along a limb tube: ``bones[i]`` owns ``s`` in
    ``[joints[i], joints[i+1]]``; at each inner joint the two bones cross
    50/50 over ``blends[i]`` metres, and the ends shade to 50 % ``parent`` /
    ``child`` like :func:`_chain_weights`. ``start_offset``: how far the
    tube starts before the first joint (inside the torso)."""
    s = np.asarray(s, float) - start_offset
    w = {b: np.zeros_like(s) for b in bones}
    own = np.clip(np.searchsorted(np.asarray(joints[1:-1]) - start_offset, s), 0, len(bones) - 1)
    for i, b in enumerate(bones):
        w[b][own == i] = 1.0
    for i in range(1, len(bones)):
        j = joints[i] - start_offset
        t = np.clip((s - (j - blends[i])) / (2 * blends[i]), 0.0, 1.0)
        near = np.abs(s - j) < blends[i]
        w[bones[i - 1]][near] = 1.0 - t[near]
        w[bones[i]][near] = t[near]
    wp = 0.5 * np.clip(1.0 - s / blends[0], 0.0, 1.0)
    wc = 0.5 * np.clip(1.0 - (joints[-1] - start_offset - s) / blends[-1], 0.0, 1.0)
    w[bones[0]] = w[bones[0]] * (1.0 - wp)
    w[bones[-1]] = w[bones[-1]] * (1.0 - wc)
    w[parent] = wp
    w[child] = wc
    return w


# ---------------------------------------------------------------------------
# Body
# ---------------------------------------------------------------------------


def _smooth_profile(z_keys, table, n):
    z = np.linspace(z_keys[0], z_keys[-1], n)
    cols = [np.interp(z, z_keys, table[:, j]) for j in range(table.shape[1])]
    out = np.stack(cols, axis=1)
    # Two passes of a [1 2 1] filter round off the piecewise-linear kinks.
    for _ in range(2):
        out[1:-1] = 0.25 * out[:-2] + 0.5 * out[1:-1] + 0.25 * out[2:]
    return z, out


def _bone_ends(bones: dict, name: str) -> tuple:
    """Head and tail (metres, armature space) of bone ``name``."""
    return np.array(bones[name][2]), np.array(bones[name][3])


def _add_torso(mb: _MeshBuilder) -> None:
    # Torso: a loft of super-ellipses along +Z (z, half width X, half depth Y, y centre).
    prof = np.array([
        [0.850, 0.080, 0.070, 0.000],
        [0.900, 0.150, 0.100, 0.000],
        [0.960, 0.170, 0.110, 0.005],
        [1.020, 0.165, 0.105, 0.000],
        [1.100, 0.140, 0.095, -0.005],
        [1.180, 0.145, 0.100, -0.010],
        [1.260, 0.160, 0.110, -0.015],
        [1.330, 0.170, 0.115, -0.015],
        [1.390, 0.175, 0.105, -0.010],
        [1.430, 0.160, 0.085, -0.005],
        [1.460, 0.110, 0.065, 0.000],
        [1.480, 0.060, 0.050, 0.000],
    ])
    z, p = _smooth_profile(prof[:, 0], prof[:, 1:], 30)
    K = len(z)
    centres = np.stack([np.zeros(K), p[:, 2], z], axis=1)
    # side x up must be +Z: up = -Y (front), side = up x Z = -X.
    sides = np.tile([-1.0, 0.0, 0.0], (K, 1))
    ups = np.tile([0.0, -1.0, 0.0], (K, 1))
    V, Q, T = _loft(centres, sides, ups, p[:, 0], p[:, 1], (0, 0, 0.835), (0, 0, 1.49), 36, 2.4)
    vz, vx = V[:, 2], V[:, 0]
    # Spine weights: hat functions between bone mid-heights.
    mids = [("Hips", 0.96), ("Spine", 1.105), ("Spine1", 1.22), ("Spine2", 1.35)]
    zs = np.array([m for _, m in mids])
    w = {}
    for i, (b, _) in enumerate(mids):
        y = np.zeros(len(zs))
        y[i] = 1.0
        w[b] = np.interp(vz, zs, y)  # np.interp clamps, so the ends stay 1
    for side, pre in ((1.0, "Left"), (-1.0, "Right")):
        sx = side * vx
        ws = 0.6 * _smoothstep(0.07, 0.15, sx) * _smoothstep(1.30, 1.38, vz)
        wl = 0.5 * _smoothstep(0.97, 0.87, vz) * _smoothstep(0.02, 0.08, sx)
        for b in list(w):
            if b.startswith(("Left", "Right")):
                continue
            w[b] = w[b] * (1.0 - ws - wl)
        w[pre + "Shoulder"] = ws
        w[pre + "UpLeg"] = wl
    mb.add(V, Q, T, w)


def _add_neck(mb: _MeshBuilder, bones: dict) -> None:
    hd, tl = _bone_ends(bones, "Neck")
    V, Q, T, s = _capsule(hd - (0, 0, 0.03), tl + np.array((0, 0, 0.02)), 0.056, 0.047,
                          (0, -1, 0), CapsuleShape(n_seg=24, n_body=5, n_cap=3))
    L = np.linalg.norm(tl - hd) + 0.05
    mb.add(V, Q, T, _chain_weights(s, L, "Neck", "Spine2", "Head", 0.05))


def _add_arm_and_hand(mb: _MeshBuilder, bones: dict, side: float, pre: str) -> None:
    """Arm tube, hand and fingers of one side (``side`` +1 left, -1 right)."""
    def B(n):
        return _bone_ends(bones, pre + n)

    # Upper arm and forearm: ONE tube through the elbow (no seam where two
    # capsules would meet). It starts inside the torso so its cap reads as
    # a deltoid; radii (metres) along its length give biceps and forearm.
    sh, el = B("Arm")
    wr = B("ForeArm")[1]
    h0 = sh - np.array([side * 0.04, 0, 0])
    V, Q, T, s = _limb_tube([h0, el, wr], [(0.0, 0.046), (0.06, 0.048), (0.17, 0.046), (0.27, 0.041),
                                            (0.33, 0.038), (0.38, 0.040), (0.46, 0.035), (0.56, 0.027)],
                            (0, 0, 1))
    mb.add(V, Q, T, _joint_weights(s, [0.0, 0.04 + np.linalg.norm(el - sh), 0.56],
                                   [pre + "Arm", pre + "ForeArm"], pre + "Shoulder", pre + "Hand",
                                   (0.07, 0.05, 0.035), start_offset=0.04))
    h, t = B("Hand")
    V, Q, T, s = _capsule(h - np.array([side * 0.005, 0, 0]), t + np.array([side * 0.005, 0, 0]),
                          0.032, 0.042, (0, 0, 1),
                          CapsuleShape(n_seg=20, n_body=4, n_cap=3, cap=0.4, flat=0.33, power=3.0))
    mb.add(V, Q, T, _chain_weights(s - 0.005, np.linalg.norm(t - h), pre + "Hand",
                                   pre + "ForeArm", None, 0.02))
    for fname, r in (("Thumb", 0.011), ("Index", 0.0095), ("Middle", 0.0098),
                     ("Ring", 0.0092), ("Pinky", 0.008)):
        for k in (1, 2, 3):
            h, t = B(f"Hand{fname}{k}")
            rr = r * (1.0 - 0.07 * (k - 1))
            V, Q, T, _ = _capsule(h, t, rr, rr * 0.93, (0, 0, 1), CapsuleShape(n_seg=10, n_body=2, n_cap=3, flat=0.85))
            mb.add(V, Q, T, {f"{pre}Hand{fname}{k}": 1.0})


def _add_leg_and_foot(mb: _MeshBuilder, bones: dict, side: float, pre: str) -> None:
    """Leg tube and foot of one side (``side`` +1 left, -1 right)."""
    def B(n):
        return _bone_ends(bones, pre + n)

    # Thigh and shin: ONE tube through the knee, from inside the pelvis.
    hp, kn = B("UpLeg")
    an = B("Leg")[1]
    h0 = hp + np.array([0, 0, 0.02])
    L1 = 0.02 + np.linalg.norm(kn - hp)
    L = L1 + np.linalg.norm(an - kn)
    V, Q, T, s = _limb_tube([h0, kn, an], [(0.0, 0.085), (0.10, 0.082), (0.25, 0.068), (0.40, 0.054),
                                            (L1, 0.049), (L1 + 0.07, 0.052), (L1 + 0.15, 0.055),
                                            (L1 + 0.28, 0.043), (L, 0.036)],
                            (0, -1, 0), n_seg=24)
    mb.add(V, Q, T, _joint_weights(s, [0.0, L1, L], [pre + "UpLeg", pre + "Leg"], "Hips", pre + "Foot",
                                   (0.06, 0.05, 0.04), start_offset=0.02))
    # Foot and toes: one flat-bottomed loft along -Y (y, half width, half height).
    fp = np.array([
        [0.050, 0.028, 0.030], [0.035, 0.034, 0.042], [0.000, 0.038, 0.050],
        [-0.050, 0.043, 0.040], [-0.100, 0.046, 0.030], [-0.130, 0.047, 0.024],
        [-0.160, 0.046, 0.020], [-0.190, 0.040, 0.016], [-0.205, 0.032, 0.012],
    ])
    Kf = len(fp)
    x = side * 0.09
    centres = np.stack([np.full(Kf, x), fp[:, 0], fp[:, 2]], axis=1)
    ups = np.tile([0.0, 0.0, 1.0], (Kf, 1))
    sides = np.tile([1.0, 0.0, 0.0], (Kf, 1))  # (0,0,1) x (0,-1,0) = +X
    V, Q, T = _loft(centres, sides, ups, fp[:, 1], fp[:, 2], (x, 0.062, 0.03),
                    (x, -0.212, 0.012), 20, 3.0)
    wt = _smoothstep(-0.11, -0.15, V[:, 1])
    mb.add(V, Q, T, {pre + "Foot": 1.0 - wt, pre + "ToeBase": wt})


def _build_body(mb: _MeshBuilder, bones: dict):
    """Every body piece into ``mb``, in a fixed order (vertex indices depend on it)."""
    _add_torso(mb)
    _add_neck(mb, bones)
    for side, pre in ((1.0, "Left"), (-1.0, "Right")):
        _add_arm_and_hand(mb, bones, side, pre)
        _add_leg_and_foot(mb, bones, side, pre)


# ---------------------------------------------------------------------------
# Head
# ---------------------------------------------------------------------------


def _uv_sphere(n_seg, n_ring, pole_axis="Z"):
    """Unit sphere as a loft (rings bottom to top); mirror-symmetric in X
    because ``n_seg`` is even and ring points start on +X."""
    th = np.linspace(math.pi, 0.0, n_ring + 1)[1:-1]
    K = len(th)
    centres = np.stack([np.zeros(K), np.zeros(K), np.cos(th)], axis=1)
    r = np.sin(th)
    V, Q, T = _loft(centres, np.tile([1.0, 0, 0], (K, 1)), np.tile([0, 1.0, 0], (K, 1)), r, r,
                    (0, 0, -1.0), (0, 0, 1.0), n_seg)
    if pole_axis == "-Y":  # +90 deg about X: (x, y, z) -> (x, -z, y)
        V = np.stack([V[:, 0], -V[:, 2], V[:, 1]], axis=1)
    return V, Q, T


def _head_surface(n):
    """Head skin in head-local metres from unit directions ``n`` [N, 3]."""
    a, b, c = _HEAD_RADII
    nx, ny, nz = n[:, 0], n[:, 1], n[:, 2]
    low = _smoothstep(0.0, -1.0, nz)
    x = a * nx * (1.0 - 0.2 * low)  # jaw and neck narrower than the cranium
    y = b * ny * np.where(ny > 0, 1.0 + 0.05 * _smoothstep(-0.2, 0.6, nz) - 0.15 * low, 1.0)
    z = c * nz
    F = _smoothstep(-0.15, -0.55, ny)  # front of the face
    ex = _EYE_X
    dy = np.zeros_like(x)
    for s in (1.0, -1.0):
        dy += 0.010 * _bump(x, z, s * ex, _EYE_Z - 0.001, 0.021, 0.012)  # eye sockets
        dy -= 0.005 * _bump(x, z, s * 0.030, _BROW_Z, 0.030, 0.012)  # brow ridge
        dy -= 0.005 * _bump(x, z, s * 0.013, _NOSE_Z - 0.004, 0.009, 0.008)  # nose wings
        dy -= 0.004 * _bump(x, z, s * 0.046, _EYE_Z - 0.022, 0.022, 0.016)  # cheekbones
    # The lower face of an ellipsoid recedes far too fast: push the muzzle
    # (mouth and chin) forward so lips and chin line up under the brows.
    dy -= 0.022 * _bump(x, z, 0.0, -0.090, 0.050, 0.050)
    ramp = np.clip((_EYE_Z + 0.01 - z) / 0.045, 0.25, 1.0)
    dy -= 0.013 * _bump(x, z, 0.0, _EYE_Z - 0.023, 0.011, 0.032) * ramp  # nose bridge
    dy -= 0.012 * _bump(x, z, 0.0, _NOSE_Z, 0.014, 0.013)  # nose tip
    dy -= 0.006 * _bump(x, z, 0.0, _MOUTH_Z + 0.007, 0.027, 0.010)  # upper lip
    dy -= 0.006 * _bump(x, z, 0.0, _MOUTH_Z - 0.008, 0.024, 0.011)  # lower lip
    dy += 0.0045 * _bump(x, z, 0.0, _MOUTH_Z, 0.026, 0.0035)  # mouth line
    dy -= 0.006 * _bump(x, z, 0.0, _CHIN_Z, 0.024, 0.014)  # chin
    y = y + F * dy
    # Ears: flat bumps on the sides.
    S = _smoothstep(0.55, 0.85, np.abs(nx))
    x = x + np.sign(nx) * S * 0.012 * _bump(y, z, 0.008, _EYE_Z - 0.016, 0.012, 0.028)
    return np.stack([x, y, z], axis=1), F


def _jaw_mask(P, skin):
    x, y, z = P[:, 0], P[:, 1], P[:, 2]
    g = np.maximum(np.abs(x) - 0.02, 0.0)
    zb = _MOUTH_Z - 0.3 * g  # the parting line slopes down past the mouth corners
    w = 0.0015 + 0.6 * g  # and softens over the cheeks
    return _smoothstep(zb + w, zb - w, z) * _smoothstep(0.02, -0.03, y) * skin


def _rotate_about(P, centre, axis, ang):
    """Rotate rows of ``P`` about ``axis`` ('x' or 'z') through ``centre``."""
    Q = P - centre
    c, s = math.cos(ang), math.sin(ang)
    out = Q.copy()
    if axis == "x":
        out[:, 1] = c * Q[:, 1] - s * Q[:, 2]
        out[:, 2] = s * Q[:, 1] + c * Q[:, 2]
    else:
        out[:, 0] = c * Q[:, 0] - s * Q[:, 1]
        out[:, 1] = s * Q[:, 0] + c * Q[:, 1]
    return out + centre


def _vec(w, d):
    """Per-vertex weights ``w [N]`` times one displacement ``d`` (3,): [N, 3]."""
    return w[:, None] * np.asarray(d, float)[None, :]


def _face_region(P, F, cx, cz, sx, sz):
    """A bump on the front of the face centred at (cx, cz) (head-local X, Z)."""
    return _bump(P[:, 0], P[:, 2], cx, cz, sx, sz) * F


def _mouth_corner(P, F, s):
    return _face_region(P, F, s * 0.026, _MOUTH_Z, 0.016, 0.014)


def _arkit_fields(P, F, skin, eyes):
    """Displacement [N, 3] (metres, head-local = armature axes) of every ARKit
    shape key. ``P``: head-local vertices; ``F``: front-of-face mask (0 off the
    skin); ``skin``: 1 on the skin, 0 on the eyeballs; ``eyes[side]``: boolean
    mask of each eyeball. Each field is a compact bump, so it moves only its
    region; the Right keys are the X-mirror of the Left ones."""
    x, z = P[:, 0], P[:, 2]
    zm = _MOUTH_Z
    N = len(P)
    vec = _vec

    up_side = _smoothstep(zm - 0.0015, zm + 0.0015, z)
    U = _bump(x, z, 0.0, zm + 0.006, 0.030, 0.011) * up_side * F
    Lw = _bump(x, z, 0.0, zm - 0.007, 0.028, 0.012) * (1.0 - up_side) * F
    M = _face_region(P, F, 0.0, zm, 0.040, 0.026)
    J = _jaw_mask(P, skin)

    def corner(s):
        return _mouth_corner(P, F, s)

    out = {}
    hinge = np.array(_JAW_HINGE)
    out["jawOpen"] = J[:, None] * (_rotate_about(P, hinge, "x", math.radians(8.5)) - P)
    out["jawForward"] = vec(J, (0, -0.006, 0))
    out["mouthClose"] = vec(U, (0, 0, -0.003)) + vec(Lw, (0, 0, 0.0035))
    out["mouthFunnel"] = (vec(U + Lw, (0, -0.006, 0)) + vec(U, (0, 0, 0.0015)) + vec(Lw, (0, 0, -0.0015))
                          + vec(corner(1), (-0.004, 0, 0)) + vec(corner(-1), (0.004, 0, 0)))
    out["mouthPucker"] = (vec(U + Lw, (0, -0.005, 0)) + vec(corner(1), (-0.007, -0.002, 0))
                          + vec(corner(-1), (0.007, -0.002, 0)))
    out["mouthRollLower"] = vec(Lw, (0, 0.005, 0.002))
    out["mouthRollUpper"] = vec(U, (0, 0.005, -0.002))
    out["mouthShrugLower"] = vec(Lw, (0, -0.003, 0.004))
    out["mouthShrugUpper"] = vec(U, (0, -0.002, 0.004))
    inner = sum(_bump(x, z, s * 0.014, _BROW_Z - 0.002, 0.016, 0.014) for s in (1, -1)) * F
    out["browInnerUp"] = vec(inner, (0, 0, 0.006))
    # Cheeks puff outwards, horizontally away from the head's vertical axis.
    cheeks = sum(_bump(x, z, s * 0.042, _MOUTH_Z + 0.008, 0.024, 0.024) for s in (1, -1)) * F
    rad = P[:, :2] / np.maximum(np.linalg.norm(P[:, :2], axis=1, keepdims=True), 1e-9)
    out["cheekPuff"] = 0.008 * cheeks[:, None] * np.concatenate([rad, np.zeros((N, 1))], axis=1)
    tongue = _bump(x, z, 0.0, zm - 0.005, 0.016, 0.009) * (1.0 - up_side) * F
    out["tongueOut"] = vec(tongue, (0, -0.010, -0.003))

    mouth = MouthWeights(upper_lip=U, lower_lip=Lw, mouth=M, jaw=J)
    for s, sfx in ((1.0, "Left"), (-1.0, "Right")):
        _arkit_side_fields(out, P, F, eyes, (s, sfx), mouth)
    return {k: out[k] for k in arkit52_names()}


class MouthWeights(NamedTuple):
    """Per-vertex weights ``[N]`` (0..1) of the regions the mouth keys move."""

    upper_lip: np.ndarray
    lower_lip: np.ndarray
    mouth: np.ndarray
    jaw: np.ndarray


def _arkit_side_fields(out, P, F, eyes, side, mouth: MouthWeights):
    """The keys of one side into ``out``: ``side`` is ``(s, sfx)``, ``s`` +1
    Left or -1 Right and ``sfx`` its name; ``mouth``: the lip, mouth and
    jaw weights both sides share."""
    s, sfx = side
    U, Lw, M, J = mouth
    vec = _vec

    def region(cx, cz, sx, sz):
        return _face_region(P, F, cx, cz, sx, sz)

    ex = s * _EYE_X
    ec = _eye_centre_local(s)
    sock = region(ex, _EYE_Z - 0.001, 0.021, 0.012)
    # A blink fills the socket and bulges a little past the eyeball front.
    out["eyeBlink" + sfx] = vec(sock, (0, -0.016, -0.002))
    em = eyes[s].astype(float)
    for nm, ax, ang in (("Down", "x", 20.0), ("Up", "x", -20.0),
                        ("Out", "z", 25.0 * s), ("In", "z", -25.0 * s)):
        out[f"eyeLook{nm}{sfx}"] = em[:, None] * (_rotate_about(P, ec, ax, math.radians(ang)) - P)
    lid_lo = region(ex, _EYE_Z - 0.010, 0.020, 0.007)
    lid_up = region(ex, _EYE_Z + 0.010, 0.020, 0.007)
    out["eyeSquint" + sfx] = vec(lid_lo, (0, -0.0015, 0.004))
    out["eyeWide" + sfx] = vec(lid_up, (0, 0.0015, 0.004))
    out["jaw" + sfx] = vec(J, (s * 0.006, 0, 0))
    out["mouth" + sfx] = vec(M, (s * 0.007, 0, 0))
    cn = _mouth_corner(P, F, s)
    out["mouthSmile" + sfx] = vec(cn, (s * 0.003, 0.003, 0.006))
    out["mouthFrown" + sfx] = vec(cn, (s * 0.001, 0, -0.006))
    out["mouthDimple" + sfx] = vec(cn, (s * 0.002, 0.005, 0))
    out["mouthStretch" + sfx] = vec(cn, (s * 0.006, 0.001, -0.002))
    h = _smoothstep(-0.004, 0.012, s * P[:, 0])
    out["mouthPress" + sfx] = vec(U * h, (0, 0.004, -0.0025)) + vec(Lw * h, (0, 0.004, 0.0025))
    out["mouthLowerDown" + sfx] = vec(Lw * h, (0, -0.001, -0.006))
    out["mouthUpperUp" + sfx] = vec(U * h, (0, -0.001, 0.006))
    out["browDown" + sfx] = vec(region(s * 0.030, _BROW_Z, 0.026, 0.013), (-s * 0.002, -0.001, -0.005))
    out["browOuterUp" + sfx] = vec(region(s * 0.046, _BROW_Z - 0.004, 0.018, 0.013), (0, 0, 0.006))
    out["cheekSquint" + sfx] = vec(region(s * 0.040, _EYE_Z - 0.022, 0.020, 0.013), (0, -0.002, 0.004))
    out["noseSneer" + sfx] = vec(region(s * 0.012, _NOSE_Z + 0.007, 0.010, 0.014), (0, 0.001, 0.004))


def _build_head(collection, name, materials):
    C = np.array(HEAD_CENTRE)
    n_dirs, Q, T = _uv_sphere(128, 128)
    P_skin, F_skin = _head_surface(n_dirs)
    mb = _MeshBuilder()
    J = _jaw_mask(P_skin, 1.0)
    skin_idx = mb.add(P_skin + C, Q, T, {"Head": 1.0 - J, "Jaw": J}, mat=0)
    ev, eq, et = _uv_sphere(32, 20, pole_axis="-Y")
    cosf = -ev[:, 1]  # cosine of the angle from the gaze direction
    ev = ev * (_EYE_R + 0.0015 * _smoothstep(math.cos(math.radians(30)), 1.0, cosf))[:, None]
    eye_idx = {}
    for s in (1.0, -1.0):
        # The right eyeball is the exact X-mirror of the left one, so the
        # eyeLook keys mirror too; mirroring needs reversed winding.
        V = ev * np.array([s, 1.0, 1.0]) + _eye_centre_local(s)
        q, t = (eq, et) if s > 0 else (eq[:, ::-1], et[:, ::-1])
        # Iris (material 2): faces whose vertices are all near the gaze pole.
        iris = math.cos(math.radians(27))
        mats = (np.where((cosf[eq] > iris).all(axis=1), 2, 1), np.where((cosf[et] > iris).all(axis=1), 2, 1))
        bone = ("LeftEye" if s > 0 else "RightEye")
        eye_idx[s] = mb.add(V + C, q, t, {bone: 1.0}, mat=mats)

    obj, V = mb.make_object(name, collection)
    P = V - C
    N = len(P)
    skin = np.zeros(N)
    skin[skin_idx] = 1.0
    F = np.zeros(N)
    F[skin_idx] = F_skin
    eyes = {s: np.isin(np.arange(N), eye_idx[s]) for s in (1.0, -1.0)}
    for m in materials:
        obj.data.materials.append(m)
    mb.write_groups(obj, ("Head", "Jaw", "LeftEye", "RightEye"))

    obj.shape_key_add(name="Basis", from_mix=False)
    base = V.astype(np.float32)
    for key, d in _arkit_fields(P, F, skin, eyes).items():
        kb = obj.shape_key_add(name=key, from_mix=False)
        kb.data.foreach_set("co", (base + d.astype(np.float32)).ravel())
    return obj


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def _material(name, rgba, roughness):
    m = bpy.data.materials.new(name)
    m.diffuse_color = rgba
    bsdf = m.node_tree.nodes.get("Principled BSDF") if m.node_tree else None
    if bsdf is not None:
        bsdf.inputs["Base Color"].default_value = rgba
        bsdf.inputs["Roughness"].default_value = roughness
    return m


def _build_armature(name, collection):
    data = bpy.data.armatures.new(name)
    data.display_type = "OCTAHEDRAL"
    arm = bpy.data.objects.new(name, data)
    arm.show_in_front = True
    collection.objects.link(arm)
    view_layer = bpy.context.view_layer
    if bpy.context.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    eb = data.edit_bones
    table = _bone_table()
    for bname, parent, head, tail, zhint in table:
        b = eb.new(bname)
        b.head, b.tail = head, tail
        # Z hints have no X part, so mirrored bones get opposite rolls.
        b.align_roll(zhint)
        if parent:
            b.parent = eb[parent]
            # Connect only where the head already is the parent's tail, so
            # connecting never moves a joint.
            b.use_connect = bool(np.allclose(eb[parent].tail, head, atol=1e-6))
    bpy.ops.object.mode_set(mode="OBJECT")
    return arm, {b[0]: b for b in table}


def build_mannequin(name: str = "RigMind Mannequin", collection=None) -> dict:
    """Build the mannequin into the current scene and return
    ``{"armature": obj, "body": obj, "head": obj}``.

    The armature object (named ``name``) sits at the origin, 1.75 m tall, in a
    T-pose facing -Y with Z up; the meshes are its children, deformed through
    Armature modifiers. ``collection`` (default: the scene's master collection)
    must be in the current view layer, because the bones are made in Edit
    Mode. The armature is left active, in Object Mode."""
    scene = bpy.context.scene
    collection = collection or scene.collection
    arm, bones = _build_armature(name, collection)

    # A neutral clay: reads as a mannequin under any light, not as skin.
    skin = _material(f"{name} Skin", (0.50, 0.49, 0.47, 1.0), 0.5)
    eye_white = _material(f"{name} Eye", (0.92, 0.92, 0.9, 1.0), 0.25)
    iris = _material(f"{name} Iris", (0.05, 0.08, 0.12, 1.0), 0.2)

    mb = _MeshBuilder()
    _build_body(mb, bones)
    body, _ = mb.make_object(f"{name} Body", collection)
    body.data.materials.append(skin)
    mb.write_groups(body, BONE_NAMES)

    head = _build_head(collection, f"{name} Head", (skin, eye_white, iris))
    for obj in (body, head):
        obj.parent = arm
        mod = obj.modifiers.new("Armature", "ARMATURE")
        mod.object = arm
    return {"armature": arm, "body": body, "head": head}


def save_mannequin(path) -> Path:
    """Reset Blender to an empty factory scene, build the mannequin and save it
    to ``path`` (a .blend; parent folders are created). This discards the
    current file. Returns the path written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    build_mannequin()
    bpy.ops.wm.save_as_mainfile(filepath=str(path), check_existing=False, compress=True)
    return path
