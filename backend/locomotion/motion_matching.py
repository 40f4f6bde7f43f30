"""Motion matching: the non-neural locomotion baseline.

After Holden's "Code vs Data Driven Displacement" / Motion Matching sample
(Clavet 2016), data-oriented: the database is a handful of plain arrays over
every frame of the training clips.

- Matching features per frame (root space of that frame, faces -Y, left +X):
  future root positions (2D) and facing directions (2D) at +1/3, +2/3, +1 s,
  left/right ankle positions and velocities (3D), hip velocity (3D): 27
  numbers, each group normalised by its mean standard deviation and weighted
  (:data:`DEFAULT_WEIGHTS`).
- Control: desired velocity (m/s, world XY) and facing (world XY unit
  vector); a critically damped spring (:class:`SpringTrajectory`) turns it
  into the future trajectory the search is asked to match.
- Every ``search_interval`` frames (or at once when the control changes a
  lot, the clip ends, or the style changes) the nearest frame is found with a
  ``scipy.spatial.cKDTree`` (or brute force) among the frames of the requested
  style, and playback jumps there if it beats continuing the current clip.
- Jumps are hidden by inertialization: the pose difference at the jump is
  kept as an offset (joint rotations as rotation vectors, the hips' root-space
  position, root velocities) that decays with a half-life of ~0.1 s.
- The character's world root integrates the played clip's root velocity and
  is pulled toward the spring simulation (``adjust_halflife``), which in turn
  is kept within ``max_sim_distance`` of the character.

Units: metres, seconds, radians; Blender Z-up; yaw 0 faces -Y, positive yaw
turns left (counter clockwise seen from above).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import rotations
from ..motion import Motion
from ..skeleton import Skeleton
from . import features

LN2 = float(np.log(2.0))
#: Weights of the feature groups (Holden's defaults, up to the foot joints used).
DEFAULT_WEIGHTS = {"foot_pos": 0.75, "foot_vel": 1.0, "hip_vel": 1.0, "traj_pos": 1.0, "traj_dir": 1.5}
#: Joints whose root-space positions/velocities are matched.
FOOT_JOINTS = ("Foot_L", "Foot_R")
HIP_JOINT = "Hips"


# --- springs (Holden, "Spring-It-On") -------------------------------------------------


def halflife_to_damping(halflife: float) -> float:
    return 4.0 * LN2 / max(halflife, 1e-5)


def decay_spring(x: np.ndarray, v: np.ndarray, halflife: float, dt: float):
    """Critically damped decay of offset ``x`` with velocity ``v`` toward 0
    (implicit, exact for any ``dt``). Returns the new ``(x, v)``."""
    y = 0.5 * halflife_to_damping(halflife)
    j1 = v + x * y
    eydt = np.exp(-y * dt)
    return eydt * (x + j1 * dt), eydt * (v - j1 * y * dt)


def spring_to_goal(x, v, goal, halflife: float, dt):
    """Critically damped spring of ``x`` (velocity ``v``) toward ``goal``
    after ``dt`` (scalar or array, broadcast). Returns ``(x, v)``."""
    y = 0.5 * halflife_to_damping(halflife)
    j0 = x - goal
    j1 = v + j0 * y
    eydt = np.exp(-y * dt)
    return eydt * (j0 + j1 * dt) + goal, eydt * (v - j1 * y * dt)


def spring_velocity(x, v, a, v_goal, halflife: float, dt):
    """Position ``x``, velocity ``v`` and acceleration ``a`` of a point whose
    velocity follows a critically damped spring toward ``v_goal``, after
    ``dt`` (scalar or array ``[T, 1]`` for several horizons at once)."""
    y = 0.5 * halflife_to_damping(halflife)
    j0 = v - v_goal
    j1 = a + j0 * y
    eydt = np.exp(-y * dt)
    x_new = eydt * ((-j1) / (y * y) + (-j0 - j1 * dt) / y) + j1 / (y * y) + j0 / y + v_goal * dt + x
    v_new = eydt * (j0 + j1 * dt) + v_goal
    a_new = eydt * (a - j1 * y * dt)
    return x_new, v_new, a_new


def wrap_angle(a):
    """Angles ``a`` (rad) wrapped to [-pi, pi)."""
    return (np.asarray(a) + np.pi) % (2.0 * np.pi) - np.pi


@dataclass
class Control:
    """What the user asks for.

    ``velocity``: desired root velocity, m/s, world XY. ``facing``: desired
    facing, world XY (any length; None = face along ``velocity``, or keep the
    current facing when standing). ``style``: a ``style_key``
    (:data:`~.dataset.STYLE_VOCAB`) to restrict the search to, None = any.
    """

    velocity: tuple = (0.0, 0.0)
    facing: tuple = None
    style: str = None


def control_goal(control: Control, current_yaw: float):
    """Desired world velocity ``[2]`` (m/s) and yaw (radians) of a control:
    an explicit facing wins; else face along the velocity; when (nearly)
    standing keep ``current_yaw`` so a stop does not spin the character."""
    v = np.asarray(control.velocity, dtype=np.float64).reshape(2)
    if control.facing is not None and np.linalg.norm(control.facing) > 1e-6:
        yaw = float(features.yaw_from_facing(np.asarray(control.facing, dtype=np.float64)))
    elif np.linalg.norm(v) > 0.1:
        yaw = float(features.yaw_from_facing(v))
    else:
        yaw = current_yaw
    return v, yaw


class SpringTrajectory:
    """Holden's spring character: world XY position with a velocity that
    follows the desired velocity through a critically damped spring
    (``velocity_halflife``, s) and a yaw that follows the desired facing
    (``rotation_halflife``, s)."""

    def __init__(self, position=(0.0, 0.0), yaw: float = 0.0, velocity_halflife: float = 0.27, rotation_halflife: float = 0.27):
        self.pos = np.asarray(position, dtype=np.float64).copy()
        self.vel = np.zeros(2)
        self.acc = np.zeros(2)
        self.yaw = float(yaw)
        self.yaw_vel = 0.0
        self.velocity_halflife = velocity_halflife
        self.rotation_halflife = rotation_halflife

    def _goal_yaw(self, yaw_goal: float) -> float:
        # Spring toward the goal the short way round.
        return self.yaw + float(wrap_angle(yaw_goal - self.yaw))

    def predict(self, v_goal, yaw_goal: float, times):
        """World positions ``[T, 2]`` and yaws ``[T]`` at ``times`` (s) ahead."""
        t = np.asarray(times, dtype=np.float64)
        p, _, _ = spring_velocity(self.pos, self.vel, self.acc, np.asarray(v_goal, dtype=np.float64), self.velocity_halflife, t[:, None])
        yaw, _ = spring_to_goal(self.yaw, self.yaw_vel, self._goal_yaw(yaw_goal), self.rotation_halflife, t)
        return p, yaw

    def update(self, v_goal, yaw_goal: float, dt: float) -> None:
        self.pos, self.vel, self.acc = spring_velocity(self.pos, self.vel, self.acc, np.asarray(v_goal, dtype=np.float64), self.velocity_halflife, dt)
        self.yaw, self.yaw_vel = spring_to_goal(self.yaw, self.yaw_vel, self._goal_yaw(yaw_goal), self.rotation_halflife, dt)
        self.yaw, self.yaw_vel = float(self.yaw), float(self.yaw_vel)


# --- database ------------------------------------------------------------------------


def _clip_features(cf, future, feet, hip) -> np.ndarray:
    """One clip's raw matching features ``[F, 4K + 15]``: future trajectory
    positions and directions (``K`` future samples, root frame), the feet's
    positions and velocities and the hips' velocity (metres, m/s)."""
    f = cf.num_frames
    return np.concatenate(
        [
            cf.traj_pos[:, future].reshape(f, -1),
            cf.traj_dir[:, future].reshape(f, -1),
            cf.joint_pos[:, feet].reshape(f, -1),
            cf.joint_vel[:, feet].reshape(f, -1),
            cf.joint_vel[:, hip],
        ],
        axis=1,
    )


def _feature_groups(k: int) -> dict:
    """Slices of the feature vector by group, for ``k`` future samples."""
    return {
        "traj_pos": slice(0, 2 * k),
        "traj_dir": slice(2 * k, 4 * k),
        "foot_pos": slice(4 * k, 4 * k + 6),
        "foot_vel": slice(4 * k + 6, 4 * k + 12),
        "hip_vel": slice(4 * k + 12, 4 * k + 15),
    }


def _feature_normalisation(raw: np.ndarray, groups: dict, weights: dict) -> tuple:
    """(mean, scale) per feature: each group is divided by its mean std over
    its weight, so a group's weight says how much it counts in a match."""
    std = raw.std(axis=0)
    scale = np.ones(raw.shape[1])
    for g, sl in groups.items():
        scale[sl] = max(float(std[sl].mean()), 1e-6) / weights[g]
    return raw.mean(axis=0), scale


def _searchable_frames(f: int, end_margin: int) -> np.ndarray:
    """``[f]`` bool: frames a search may jump to (room to play on)."""
    s = np.zeros(f, dtype=bool)
    s[: max(f - end_margin, 1)] = True
    s[f - 1] = f == 1
    return s


class MotionDatabase:
    """Plain arrays over every frame of a set of clips (``N`` frames, ``J``
    joints, ``D = 27`` features).

    ``features [N, D]`` (normalised and weighted, float32), ``feature_mean
    [D]``, ``feature_scale [D]`` (raw = features * scale + mean), ``groups``
    (name -> column slice); ``local_quats [N, J, 4]`` (root-space local
    rotations, joint 0 identity), ``top_pos [N, K, 3]`` (root-space positions
    of the children of joint 0, the hips), ``root_vel [N, 2]`` (m/s, root
    space), ``root_ang_vel [N]`` (rad/s); ``clip_of [N]``, ``clip_start
    [C]``, ``clip_stop [C]`` (frame ranges), ``clip_names``, ``style_of [N]``
    (index in ``styles``), ``searchable [N]`` (frames whose future trajectory
    is not clamped by the clip end and that leave room to play on).
    """

    def __init__(self, clips, weights=None, fps: float = features.FPS, end_margin: int = None):
        clips = list(clips)
        if not clips:
            raise ValueError("motion matching needs at least one clip")
        self.fps = float(fps)
        first = clips[0]
        self.skeleton = Skeleton(list(first.joint_names), first.parents, first.offsets)
        names = list(first.joint_names)
        self.top = np.nonzero(self.skeleton.parents == 0)[0]
        times = np.asarray(first.traj_times)
        self.future = np.nonzero(times > 1e-9)[0]
        self.future_times = times[self.future]
        if end_margin is None:
            end_margin = int(round(self.future_times.max() * fps))
        feet = [names.index(n) for n in FOOT_JOINTS]
        hip = names.index(HIP_JOINT)

        raw, quats, top_pos, rv, rav, clip_of, style_of, searchable = [], [], [], [], [], [], [], []
        self.clip_names, self.clip_labels = [], []
        styles = []
        stops = np.cumsum([cf.num_frames for cf in clips])
        for c, cf in enumerate(clips):
            if abs(cf.fps - fps) > 1e-6:
                raise ValueError(f"clip {cf.name} is at {cf.fps} fps, the database at {fps}")
            f = cf.num_frames
            style = cf.labels.get("style_key", cf.labels.get("style", ""))
            if style not in styles:
                styles.append(style)
            raw.append(_clip_features(cf, self.future, feet, hip))
            quats.append(cf.local_quats().astype(np.float32))
            top_pos.append(cf.joint_pos[:, self.top])
            rv.append(cf.root_vel)
            rav.append(cf.root_ang_vel)
            clip_of.append(np.full(f, c))
            style_of.append(np.full(f, styles.index(style)))
            searchable.append(_searchable_frames(f, end_margin))
            self.clip_names.append(cf.name + ("" if not cf.mirrored or cf.name.endswith("_mirror") else "_mirror"))
            self.clip_labels.append(dict(cf.labels))
        self.groups = _feature_groups(len(self.future))
        self.weights = dict(DEFAULT_WEIGHTS, **(weights or {}))
        raw = np.concatenate(raw).astype(np.float64)
        self.feature_mean, self.feature_scale = _feature_normalisation(raw, self.groups, self.weights)
        self.features = ((raw - self.feature_mean) / self.feature_scale).astype(np.float32)
        self.local_quats = np.concatenate(quats)
        self.top_pos = np.concatenate(top_pos).astype(np.float32)
        self.root_vel = np.concatenate(rv).astype(np.float32)
        self.root_ang_vel = np.concatenate(rav).astype(np.float32)
        self.clip_of = np.concatenate(clip_of)
        self.style_of = np.concatenate(style_of)
        self.searchable = np.concatenate(searchable)
        self.clip_start = np.concatenate([[0], stops[:-1]]).astype(int)
        self.clip_stop = stops.astype(int)
        self.styles = styles
        self._trees = {}

    def __len__(self) -> int:
        return len(self.features)

    def normalise(self, raw: np.ndarray) -> np.ndarray:
        return (np.asarray(raw, dtype=np.float64) - self.feature_mean) / self.feature_scale

    def candidates(self, style=None) -> np.ndarray:
        """Searchable frame indices of ``style`` (None: all styles)."""
        mask = self.searchable.copy()
        if style is not None:
            if style not in self.styles:
                raise KeyError(f"style {style!r} is not in the database (has {self.styles})")
            mask &= self.style_of == self.styles.index(style)
        return np.nonzero(mask)[0]

    def search(self, query: np.ndarray, style=None, method: str = "kdtree"):
        """Nearest searchable frame to the normalised ``query [D]`` among
        ``style``'s frames: ``(index, squared cost)``. Ties go to the lowest
        index (deterministic) with ``"brute"``; the KD-tree is exact too."""
        key = (style, method)
        if key not in self._trees:
            idx = self.candidates(style)
            from scipy.spatial import cKDTree  # here: the neural controller imports this module's controls only

            tree = cKDTree(self.features[idx].astype(np.float64)) if method == "kdtree" else None
            self._trees[key] = (idx, tree)
        idx, tree = self._trees[key]
        if tree is not None:
            d, i = tree.query(np.asarray(query, dtype=np.float64), k=1)
            return int(idx[i]), float(d) ** 2
        cost = np.sum((self.features[idx] - np.asarray(query, dtype=np.float32)) ** 2, axis=1)
        i = int(np.argmin(cost))
        return int(idx[i]), float(cost[i])


# --- controller ----------------------------------------------------------------------


@dataclass(frozen=True)
class MatchingConfig:
    """How :class:`MotionMatchingController` searches and blends. Seconds,
    m/s, radians, metres.

    - ``search_interval``: frames between searches.
    - ``blend_halflife``: inertialization half-life, s.
    - ``velocity_change``: a change of the desired velocity (m/s) since the
      last search that forces a search now; ``facing_change``: the same for
      the desired facing (radians).
    - ``adjust_halflife``: half-life (s) of pulling the character's root
      toward the simulated trajectory; None disables it.
    - ``max_adjust_ratio``: the pull may move the root at most this fraction
      of the animation's own speed (limits foot sliding).
    - ``max_sim_distance``: the simulation is clamped within this distance
      (m) of the character.
    - ``velocity_halflife``, ``rotation_halflife``: the simulated
      trajectory's springs (s).
    - ``method``: "kdtree" or "brute".
    """

    search_interval: int = 10
    blend_halflife: float = 0.1
    velocity_change: float = 0.5
    facing_change: float = float(np.radians(30.0))
    adjust_halflife: float = 0.2
    max_adjust_ratio: float = 0.5
    max_sim_distance: float = 0.5
    velocity_halflife: float = 0.27
    rotation_halflife: float = 0.27
    method: str = "kdtree"


class MotionMatchingController:
    """Runs motion matching one frame at a time; see the module docstring.

    Args:
        database: a :class:`MotionDatabase`.
        config: :class:`MatchingConfig` (search, blending, the root's pull).
    """

    def __init__(self, database: MotionDatabase, config: MatchingConfig = MatchingConfig()):
        self.db = database
        self.config = config
        self.search_interval = int(config.search_interval)
        self.blend_halflife = config.blend_halflife
        self.velocity_change = config.velocity_change
        self.facing_change = config.facing_change
        self.adjust_halflife = config.adjust_halflife
        self.max_adjust_ratio = config.max_adjust_ratio
        self.max_sim_distance = config.max_sim_distance
        self.velocity_halflife = config.velocity_halflife
        self.rotation_halflife = config.rotation_halflife
        self.method = config.method
        self.reset()

    @classmethod
    def build(cls, source=None, *, split: str = "train", mirrored: bool = True, styles=None, weights=None,
              config: MatchingConfig = MatchingConfig()):
        """A controller over ``source``: a cache folder (default
        ``<repo>/.cache/locomotion``; its ``split`` clips, with mirrored
        copies when ``mirrored``, restricted to ``styles``), a list of
        :class:`~.features.ClipFeatures`, or a list of :class:`Motion` /
        ``(Motion, labels)`` (features computed here, at the motion's fps);
        ``weights``: the database's feature weights; ``config``: the
        controller's (:class:`MatchingConfig`)."""
        if source is None or isinstance(source, (str, Path)):
            keys = ("traj_pos", "traj_dir", "joint_pos", "joint_vel", "rot6d", "root_vel", "root_ang_vel")
            clips = features.load_cache(source, split=split, mirrored=mirrored, styles=styles, keys=keys)
        else:
            clips = []
            for item in source:
                if isinstance(item, features.ClipFeatures):
                    clips.append(item)
                elif isinstance(item, Motion):
                    clips.append(features.compute_features(item))
                else:
                    clips.append(features.compute_features(*item))
            if styles is not None:
                clips = [c for c in clips if c.labels.get("style_key", c.labels.get("style")) in styles]
        fps = clips[0].fps if clips else features.FPS
        return cls(MotionDatabase(clips, weights=weights, fps=fps), config)

    # -- state ---------------------------------------------------------------------
    def reset(self, position=(0.0, 0.0), yaw: float = 0.0, style: str = None, frame: int = None) -> None:
        """Put the character at world ``position`` (m) with ``yaw`` (rad),
        playing ``frame`` (default: the first searchable frame of ``style``);
        the first :meth:`step` searches."""
        db = self.db
        if frame is None:
            frame = int(db.candidates(style)[0])
        self.frame = int(frame)
        self.style = style
        self.root_pos = np.asarray(position, dtype=np.float64).copy()
        self.root_yaw = float(yaw)
        self.sim = SpringTrajectory(self.root_pos, self.root_yaw, self.velocity_halflife, self.rotation_halflife)
        j = db.local_quats.shape[1]
        self.off_rot = np.zeros((j, 3))  # rotation-vector offsets (left-multiplied)
        self.off_rot_vel = np.zeros((j, 3))
        self.off_top = np.zeros((len(db.top), 3))
        self.off_top_vel = np.zeros((len(db.top), 3))
        self.off_root_vel = np.zeros(2)
        self.off_root_ang_vel = 0.0
        self.since_search = self.search_interval  # search on the first step
        self.last_goal = None
        self.num_searches = 0
        self.num_transitions = 0
        self.history = []  # (frame played, clip name) per step

    # -- helpers -------------------------------------------------------------------
    def _goal(self, control: Control):
        return control_goal(control, self.sim.yaw)

    def query(self, v_goal, yaw_goal: float) -> np.ndarray:
        """Normalised query: the current frame's pose features and the
        simulated future trajectory in the character's root frame."""
        db = self.db
        q = db.features[self.frame].astype(np.float64).copy()
        pos, yaw = self.sim.predict(v_goal, yaw_goal, db.future_times)
        rel = features.rotate2d(pos - self.root_pos, -self.root_yaw)
        dirs = features.facing_from_yaw(yaw - self.root_yaw)
        raw = db.feature_mean.copy()
        raw[db.groups["traj_pos"]] = rel.reshape(-1)
        raw[db.groups["traj_dir"]] = dirs.reshape(-1)
        norm = db.normalise(raw)
        for g in ("traj_pos", "traj_dir"):
            q[db.groups[g]] = norm[db.groups[g]]
        return q

    def _ang_vel(self, f: int) -> np.ndarray:
        """Per-joint angular velocity (rotation vectors per second, left
        convention) of database frame ``f``, from the next frame in its clip."""
        db = self.db
        c = db.clip_of[f]
        a, b = (f, f + 1) if f + 1 < db.clip_stop[c] else (f - 1, f)
        if a < db.clip_start[c]:
            return np.zeros((db.local_quats.shape[1], 3))
        d = rotations.mul(db.local_quats[b].astype(np.float64), rotations.inv(db.local_quats[a].astype(np.float64)))
        return rotations.to_axis_angle(d) * db.fps

    def _top_vel(self, f: int) -> np.ndarray:
        db = self.db
        c = db.clip_of[f]
        a, b = (f, f + 1) if f + 1 < db.clip_stop[c] else (f - 1, f)
        if a < db.clip_start[c]:
            return np.zeros((len(db.top), 3))
        return (db.top_pos[b] - db.top_pos[a]).astype(np.float64) * db.fps

    def _transition(self, src: int, dst: int) -> None:
        """Fold the pose difference between ``src`` (with the current
        offsets) and ``dst`` into the offsets."""
        db = self.db
        q_src = rotations.mul(rotations.from_axis_angle(self.off_rot), db.local_quats[src].astype(np.float64))
        q_off = rotations.mul(q_src, rotations.inv(db.local_quats[dst].astype(np.float64)))
        self.off_rot = rotations.to_axis_angle(q_off)
        self.off_rot_vel = (self.off_rot_vel + self._ang_vel(src)) - self._ang_vel(dst)
        self.off_top = (self.off_top + db.top_pos[src]) - db.top_pos[dst]
        self.off_top_vel = (self.off_top_vel + self._top_vel(src)) - self._top_vel(dst)
        self.off_root_vel = (self.off_root_vel + db.root_vel[src]) - db.root_vel[dst]
        self.off_root_ang_vel = (self.off_root_ang_vel + db.root_ang_vel[src]) - db.root_ang_vel[dst]
        self.num_transitions += 1

    def _changed(self, v, yaw) -> bool:
        if self.last_goal is None:
            return True
        v0, yaw0, style0 = self.last_goal
        return (
            np.linalg.norm(v - v0) > self.velocity_change
            or abs(float(wrap_angle(yaw - yaw0))) > self.facing_change
            or style0 != self.style
        )

    # -- the loop --------------------------------------------------------------------
    def step(self, control: Control = None) -> Motion:
        """Advance one frame (``1 / fps`` s) under ``control`` and return the
        pose as a one-frame :class:`Motion` in world space: joint 0 is the
        character root (``root_positions = (x, y, 0)``, rotation = yaw about
        +Z), the hips are placed by ``translations``, every other joint by
        its local rotation on the Bandai skeleton."""
        control = control or Control()
        db = self.db
        dt = 1.0 / db.fps
        if control.style != self.style:
            self.style = control.style
        v_goal, yaw_goal = self._goal(control)

        nxt = self.frame + 1
        end_of_clip = nxt >= db.clip_stop[db.clip_of[self.frame]]
        wrong_style = self.style is not None and db.styles[db.style_of[self.frame]] != self.style
        if self.since_search >= self.search_interval or end_of_clip or wrong_style or self._changed(v_goal, yaw_goal):
            q = self.query(v_goal, yaw_goal)
            best, best_cost = db.search(q, self.style, self.method)
            self.num_searches += 1
            self.since_search = 0
            self.last_goal = (v_goal, yaw_goal, self.style)
            keep = not end_of_clip and not wrong_style and db.searchable[nxt]
            cur_cost = float(np.sum((db.features[nxt] - q) ** 2)) if keep else np.inf
            # A jump a few frames along the same clip would only cause a hitch.
            near = db.clip_of[best] == db.clip_of[self.frame] and abs(best - nxt) <= 3
            if not near and best_cost < cur_cost:
                self._transition(self.frame, best)
                nxt = best + 1 if best + 1 < db.clip_stop[db.clip_of[best]] else best
        self.since_search += 1
        self.frame = int(nxt)
        f = self.frame

        # Inertialization: offsets decay toward the database pose.
        self.off_rot, self.off_rot_vel = decay_spring(self.off_rot, self.off_rot_vel, self.blend_halflife, dt)
        self.off_top, self.off_top_vel = decay_spring(self.off_top, self.off_top_vel, self.blend_halflife, dt)
        decay = np.exp(-LN2 * dt / self.blend_halflife)
        self.off_root_vel = self.off_root_vel * decay
        self.off_root_ang_vel = self.off_root_ang_vel * decay

        # Root: integrate the clip's root motion, then pull toward the simulation.
        vel_local = db.root_vel[f].astype(np.float64) + self.off_root_vel
        ang = float(db.root_ang_vel[f]) + self.off_root_ang_vel
        self.root_yaw += ang * dt
        step = features.rotate2d(vel_local, self.root_yaw) * dt
        self.root_pos = self.root_pos + step
        self.sim.update(v_goal, yaw_goal, dt)
        if self.adjust_halflife is not None:
            alpha = 1.0 - np.exp(-LN2 * dt / self.adjust_halflife)
            adj = (self.sim.pos - self.root_pos) * alpha
            limit = self.max_adjust_ratio * np.linalg.norm(step)
            n = np.linalg.norm(adj)
            if n > limit:
                adj *= limit / n
            self.root_pos = self.root_pos + adj
            dyaw = float(wrap_angle(self.sim.yaw - self.root_yaw)) * alpha
            lim = self.max_adjust_ratio * abs(ang * dt) + 1e-3
            self.root_yaw += float(np.clip(dyaw, -lim, lim))
        gap = self.sim.pos - self.root_pos
        d = np.linalg.norm(gap)
        if d > self.max_sim_distance:
            self.sim.pos = self.root_pos + gap * (self.max_sim_distance / d)

        self.history.append((f, db.clip_names[db.clip_of[f]]))
        return self.pose()

    def pose(self) -> Motion:
        """The current output pose (see :meth:`step`)."""
        db = self.db
        f = self.frame
        rot = rotations.mul(rotations.from_axis_angle(self.off_rot), db.local_quats[f].astype(np.float64))
        rot[0] = features.yaw_quat(self.root_yaw)
        sk = db.skeleton
        trans = sk.offsets.copy()
        trans[db.top] = db.top_pos[f] + self.off_top
        root = np.array([self.root_pos[0], self.root_pos[1], 0.0])
        trans[0] = root
        return Motion(sk, rot[None], root[None], db.fps, trans[None], name="motion_matching")

    def run(self, controls, frames: int = None) -> Motion:
        """Step through ``controls`` (a list, one per frame, or one
        :class:`Control` repeated ``frames`` times) and return the whole
        clip as a :class:`Motion`."""
        if isinstance(controls, Control):
            controls = [controls] * int(frames)
        poses = [self.step(c) for c in controls]
        return Motion(
            self.db.skeleton,
            rotations.make_continuous(np.concatenate([p.rotations for p in poses]), axis=0),
            np.concatenate([p.root_positions for p in poses]),
            self.db.fps,
            np.concatenate([p.translations for p in poses]),
            name="motion_matching",
        )


__all__ = [
    "Control", "SpringTrajectory", "MotionDatabase", "MatchingConfig", "MotionMatchingController", "DEFAULT_WEIGHTS",
    "decay_spring", "spring_to_goal", "spring_velocity", "halflife_to_damping",
]
