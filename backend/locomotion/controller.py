"""Neural locomotion controller: the trained MANN (:mod:`.model`) run frame by
frame under user control, with the same API as
:class:`~.motion_matching.MotionMatchingController` (``reset`` / ``step`` /
``run``, :class:`~.motion_matching.Control` in, world-space
:class:`~rigmind.backend.motion.Motion` frames out).

Each :meth:`LocomotionController.step`:

1. turns the control (desired world velocity and facing) into a future
   trajectory with :class:`~.motion_matching.SpringTrajectory` (Holden's
   critically damped spring character), expressed in the character's root
   frame, and blends it with the trajectory the model predicted on the
   previous step: ``w_i * control + (1 - w_i) * model`` with the control
   weight ``w_i`` rising with the sample's time (:data:`CONTROL_WEIGHTS`), as
   PFNN/MANN do, so the near future follows the motion and the far future the
   user;
2. the past trajectory samples come from the character's own root history;
3. packs the input (:func:`.vector_layout.pack_input`: current pose, trajectory,
   style weights, contacts, root velocity), runs the model (torch or
   onnxruntime, batch 1) and unpacks the next pose, the root displacement
   (integrated into the world root), the contacts and the model's future
   trajectory, all fed back on the next step.

The spring simulation is kept within ``max_sim_distance`` of the character
(like motion matching's), so a character that cannot keep up is pulled along
but never chases a point far away.

Idle stand (``idle_stand=True``, the default): the network cannot stand
still (its data has almost no idle frames: asked for zero velocity it
creeps at ~0.3 m/s), so once the control asks for no motion and the
simulated root has slowed down, the controller blends
(:func:`.inertialize.blend_to_pose`, :data:`STAND_BLEND_SECONDS`) into its
standing pose and holds it without running the network; a fresh ``reset``
stands too. Asked to move again (after the blend has finished), the network
starts from that standing pose. ``idle_stand=False`` runs the network on
every frame.

Units: metres, seconds, radians; Blender Z-up; yaw 0 faces -Y, positive yaw
turns left (counter clockwise seen from above); 30 fps.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .. import rotations
from ..model_files import ModelFileError
from ..model_files.loading import fitting, onnx_session
from ..motion import Motion
from ..skeleton import Skeleton
from . import features
from . import vector_layout
from .inertialize import blend_to_pose
from .stance import idle_stance, settle_frames, settle_steps
from .motion_matching import Control, SpringTrajectory, control_goal, spring_to_goal, spring_velocity, wrap_angle
from .. import paths

#: Default engine: onnxruntime runs a step's network 2-3x faster than torch at
#: batch 1 on one thread (see the timings in bench/results/locomotion.md).
DEFAULT_ENGINE = "onnxruntime"
DEFAULT_PT = paths.model_path("locomotion.pt")
DEFAULT_ONNX = paths.model_path("locomotion.onnx")
#: Control weight of each future trajectory sample (+1/3, +2/3, +1 s): (t / 1 s) ** 0.5.
CONTROL_WEIGHTS = tuple(float((t / max(vector_layout.FUTURE_TIMES)) ** 0.5) for t in vector_layout.FUTURE_TIMES)
#: Output smoothing of the displayed pose (0 = raw network output); see
#: :meth:`LocomotionController._update_shown`.
DEFAULT_SMOOTHING = 0.6
#: Idle standing: below this goal speed (m/s), with the facing reached
#: (:data:`IDLE_FACING`, rad) and the simulated root slowed below
#: :data:`IDLE_SETTLE_SPEED` (m/s), the controller blends into its standing
#: pose over :data:`STAND_BLEND_SECONDS` and holds it; see
#: :meth:`LocomotionController._start_standing`.
IDLE_SPEED = 0.05
IDLE_FACING = 0.3
IDLE_SETTLE_SPEED = 0.25
STAND_BLEND_SECONDS = 0.5
#: Positions of the contact joints in the pose vector.
_FEET_IN_POSE = [vector_layout.POSE_JOINTS.index(j) for j in features.CONTACT_INDEX]


# Shepperd's quaternion candidates are linear in the matrix entries: row k of
# ``cands = m.reshape(9) @ _Q_LIN + _Q_CONST`` (reshaped [4, 4]) is 4*|q_k| * q.
_Q_LIN = np.zeros((9, 16))
_Q_CONST = np.zeros(16)


def _init_q_tables():
    # m index: (r, c) -> 3 r + c. Candidate rows: from w, x, y, z.
    rows = [
        [("1", [(0, 0), (1, 1), (2, 2)], []), ([(2, 1)], [(1, 2)]), ([(0, 2)], [(2, 0)]), ([(1, 0)], [(0, 1)])],
        [([(2, 1)], [(1, 2)]), ("1", [(0, 0)], [(1, 1), (2, 2)]), ([(0, 1), (1, 0)], []), ([(0, 2), (2, 0)], [])],
        [([(0, 2)], [(2, 0)]), ([(0, 1), (1, 0)], []), ("1", [(1, 1)], [(0, 0), (2, 2)]), ([(1, 2), (2, 1)], [])],
        [([(1, 0)], [(0, 1)]), ([(0, 2), (2, 0)], []), ([(1, 2), (2, 1)], []), ("1", [(2, 2)], [(0, 0), (1, 1)])],
    ]
    for k, row in enumerate(rows):
        for i, entry in enumerate(row):
            col = 4 * k + i
            if entry[0] == "1":
                _Q_CONST[col] = 1.0
                entry = entry[1:]
            plus, minus = entry
            for r, c in plus:
                _Q_LIN[3 * r + c, col] += 1.0
            for r, c in minus:
                _Q_LIN[3 * r + c, col] -= 1.0


_init_q_tables()
_C1, _C2, _I4 = np.array([1, 2, 0]), np.array([2, 0, 1]), np.arange(4)


def quats_from_6d(d6: np.ndarray) -> np.ndarray:
    """6D rotations ``[N, 6]`` (raw network output: Gram-Schmidt first) to
    unit quaternions ``[N, 4]`` (w, x, y, z; ``w >= 0``). The same result as
    :func:`.features.quat_from_6d` in a third of the time (this runs every
    frame): Shepperd's method with the candidates as one matmul."""
    d6 = np.asarray(d6, dtype=np.float64)
    a, b = d6[:, :3], d6[:, 3:]
    x = a / np.sqrt(np.einsum("ij,ij->i", a, a) + 1e-30)[:, None]
    b = b - np.einsum("ij,ij->i", x, b)[:, None] * x
    y = b / np.sqrt(np.einsum("ij,ij->i", b, b) + 1e-30)[:, None]
    n = len(d6)
    m = np.empty((n, 3, 3))  # columns x, y, z = x cross y
    m[:, :, 0] = x
    m[:, :, 1] = y
    m[:, :, 2] = x[:, _C1] * y[:, _C2] - x[:, _C2] * y[:, _C1]
    return quats_from_matrices(m)


def quats_from_matrices(m: np.ndarray) -> np.ndarray:
    """Rotation matrices ``[N, 3, 3]`` (orthonormal) to unit quaternions
    ``[N, 4]`` (w, x, y, z; ``w >= 0``): Shepperd's method as one matmul, no
    orthonormalisation (see :func:`quats_from_6d`)."""
    n = len(m)
    cands = (np.asarray(m, dtype=np.float64).reshape(n, 9) @ _Q_LIN + _Q_CONST).reshape(n, 4, 4)
    k = np.argmax(cands[:, _I4, _I4], axis=1)  # the largest |q_k|: best conditioned row
    q = cands[np.arange(n), k]
    q /= np.sqrt(np.einsum("ij,ij->i", q, q))[:, None]
    q[q[:, 0] < 0] *= -1.0
    return q


# --- engines ---------------------------------------------------------------------------------


class TorchEngine:
    """The checkpoint's model in torch, eval mode, expert weights blended
    (MANN's formulation, the same graph as the ONNX export), batch 1.
    ``threads`` sets ``torch.set_num_threads`` (process-wide)."""

    name = "torch"

    def __init__(self, ck: dict, threads: int = 1):
        import torch

        from .train import model_from_checkpoint

        self._torch = torch
        torch.set_num_threads(int(threads))
        self.model = model_from_checkpoint(ck).set_mode("blend")

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Raw input ``[INPUT_SIZE]`` float32 -> raw output ``[OUTPUT_SIZE]``."""
        with self._torch.inference_mode():
            return self.model(self._torch.from_numpy(x).reshape(1, -1))[0].numpy()


class OnnxEngine:
    """The exported ONNX graph in onnxruntime (CPU, ``threads`` intra-op
    threads, sequential execution), batch 1. No torch import."""

    name = "onnxruntime"

    def __init__(self, path, threads: int = 1):
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = int(threads)
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = onnx_session(path, "locomotion model", options=so)
        self.metadata = dict(self.session.get_modelmeta().custom_metadata_map)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.session.run(["y"], {"x": x.reshape(1, -1)})[0][0]


def _meta_from_checkpoint(ck: dict) -> dict:
    return {
        "config": ck["config"],
        "io": ck["io"],
        "skeleton": ck["skeleton"],
        "start_poses": {k: v.numpy().astype(np.float32) for k, v in ck["start_poses"].items()},
        "training": ck.get("training", {}),
    }


def _meta_from_onnx(md: dict, path) -> dict:
    if md.get("rigmind_format") != "rigmind-locomotion-mann":
        raise ModelFileError(f"{path} is not a RigMind locomotion model (no rigmind metadata)")
    meta = {k: json.loads(md["rigmind_" + k]) for k in ("config", "io", "skeleton", "training")}
    meta["start_poses"] = {k: np.asarray(v, dtype=np.float32) for k, v in json.loads(md["rigmind_start_poses"]).items()}
    return meta


# --- controller ------------------------------------------------------------------------------


class LocomotionController:
    """Runs the neural locomotion model one frame at a time (see the module
    docstring). Build with :meth:`load`.

    Args:
        engine: a callable raw input ``[INPUT_SIZE]`` float32 -> raw output.
        meta: ``config``, ``io``, ``skeleton`` (names, parents, offsets),
            ``start_poses`` (style -> ``[POSE_SIZE + 4]``).
        velocity_halflife, rotation_halflife: spring half-lives (s) of the
            trajectory simulation (:class:`SpringTrajectory`).
        control_weights: control weight of each future sample (default
            :data:`CONTROL_WEIGHTS`).
        max_sim_distance: the simulation is kept within this distance (m).
    """

    def __init__(self, engine, meta: dict, velocity_halflife: float = 0.27, rotation_halflife: float = 0.27,
                 control_weights=None, max_sim_distance: float = 0.5, smoothing: float = DEFAULT_SMOOTHING,
                 idle_stand: bool = True):
        io = meta["io"]
        if io["input_size"] != vector_layout.INPUT_SIZE or io["output_size"] != vector_layout.OUTPUT_SIZE or list(io["traj_times"]) != list(vector_layout.TRAJ_TIMES):
            raise ModelFileError("the model was trained with another input/output layout than this code's")
        self.engine = engine
        self.meta = meta
        self.fps = float(io["fps"])
        sk = meta["skeleton"]
        self.skeleton = Skeleton(list(sk["names"]), np.asarray(sk["parents"]), np.asarray(sk["offsets"], dtype=np.float64))
        self.top = np.nonzero(self.skeleton.parents == 0)[0]  # the hips
        self.top_in_pose = [vector_layout.POSE_JOINTS.index(int(j)) for j in self.top]
        self.start_poses = meta["start_poses"]
        self.velocity_halflife = velocity_halflife
        self.rotation_halflife = rotation_halflife
        w = CONTROL_WEIGHTS if control_weights is None else control_weights
        self.control_weights = np.asarray(w, dtype=np.float64).reshape(vector_layout.NF, 1)
        self.max_sim_distance = max_sim_distance
        if not 0.0 <= smoothing < 1.0:
            raise ValueError(f"smoothing must be in [0, 1), got {smoothing}")
        self.smoothing = float(smoothing)
        self.idle_stand = bool(idle_stand)
        self._hist_off = np.rint(np.asarray([vector_layout.TRAJ_TIMES[i] for i in vector_layout.PAST]) * self.fps).astype(np.int64)  # < 0
        self._hist_len = int(-self._hist_off.min()) + 1
        self._past_index = self._hist_len - 1 + self._hist_off  # rows of the history buffer
        self._spring_times = np.array(list(vector_layout.FUTURE_TIMES) + [1.0 / self.fps])
        self._current = np.array([[0.0, 0.0, 0.0, -1.0]])  # the current sample: root, facing -Y
        self.reset()

    @classmethod
    def load(cls, path=None, engine: str = DEFAULT_ENGINE, threads: int = 1, **kwargs) -> "LocomotionController":
        """A controller for a trained model.

        ``engine``: "torch" (reads the ``.pt`` checkpoint, default
        ``models/locomotion.pt``) or "onnxruntime" (reads the ``.onnx``
        export, default ``models/locomotion.onnx``; a ``.pt`` path is taken
        to mean the ``.onnx`` next to it). ``threads``: inference threads.
        ``kwargs`` go to the constructor."""
        if engine == "torch":
            from .train import load_checkpoint

            path = Path(path) if path is not None else DEFAULT_PT
            if path.suffix == ".onnx":
                path = path.with_suffix(".pt")
            if not path.exists():
                raise FileNotFoundError(f"no locomotion model at {path}: train one with `rigmind train locomotion`")
            ck = load_checkpoint(path)
            with fitting(path, "locomotion model"):
                return cls(TorchEngine(ck, threads), _meta_from_checkpoint(ck), **kwargs)
        if engine == "onnxruntime":
            path = Path(path) if path is not None else DEFAULT_ONNX
            if path.suffix == ".pt":
                path = path.with_suffix(".onnx")
            if not path.exists():
                raise FileNotFoundError(
                    f"no locomotion model at {path}: train one with `rigmind train locomotion` "
                    "(or export a .pt with backend.locomotion.train.export_onnx)"
                )
            eng = OnnxEngine(path, threads)
            with fitting(path, "locomotion model"):
                return cls(eng, _meta_from_onnx(eng.metadata, path), **kwargs)
        raise ValueError(f"engine must be 'torch' or 'onnxruntime', got {engine!r}")

    # -- state -----------------------------------------------------------------------
    def reset(self, position=(0.0, 0.0), yaw: float = 0.0, style="normal", pose: Motion = None) -> None:
        """Put the character at world ``position`` (m, XY) facing ``yaw``
        (rad), standing still, with ``style`` (a style name or a ``{name:
        weight}`` blend, see :func:`.vector_layout.style_vector`).

        The starting pose is the idle stance of the dominant style
        (:meth:`_stance`: :func:`.stance.idle_stance` of its stored start
        pose, the stillest two-feet-down training frame), or the last frame of
        ``pose`` (a :class:`Motion` on the Bandai skeleton; its root-space
        pose, velocities and contacts are used, placed at ``position`` /
        ``yaw``; a one-frame motion starts with zero velocities and both feet
        down)."""
        self.style = vector_layout.style_vector(style)
        self.root_pos = np.asarray(position, dtype=np.float64).reshape(2).copy()
        self.root_yaw = float(yaw)
        self.sim = SpringTrajectory(self.root_pos, self.root_yaw, self.velocity_halflife, self.rotation_halflife)
        if pose is None:
            name = vector_layout.STYLES[int(np.argmax(self.style))]
            self.joint_pos, self.joint_vel, self.rot6d, self.contacts = (a.copy() for a in self._stance(name))
            self.root_vel = np.zeros(3, dtype=np.float32)
        else:
            self._set_pose(pose)
        self.joint_pos, self.joint_vel, self.rot6d = (np.array(a, dtype=np.float32) for a in (self.joint_pos, self.joint_vel, self.rot6d))
        # Past root positions/yaws (oldest first, the current one last): standing still so far.
        self.hist_pos = np.tile(self.root_pos, (self._hist_len, 1))
        self.hist_yaw = np.full(self._hist_len, self.root_yaw)
        # The model's own future trajectory (root space): standing still.
        self.pred_pos = np.zeros((vector_layout.NF, 2))
        self.pred_dir = np.tile(features.facing_from_yaw(0.0), (vector_layout.NF, 1))
        self.frame = 0
        self.last_input = None
        self.last_output = None
        self._shown = None  # the displayed (smoothed) local rotations and hips position
        # Idle standing: (blend frames still to show [Motion], the standing
        # pose [Motion], its contacts) or None while the network walks. A
        # fresh reset stands (its pose is the standing pose, unless given one).
        self._stand = None
        self._prev_shown = self._last_shown = None
        shown = self.pose()
        if pose is None and self.idle_stand:
            self._stand = ([], shown, self.contacts.copy())
        self._feet_from(shown)

    def _start_motion(self, name: str) -> Motion:
        """The stored start pose of style ``name`` (the stillest two-feet-down
        training frame) as a one-frame Motion at the origin, facing -Y."""
        start = self.start_poses.get(name, self.start_poses.get("normal", next(iter(self.start_poses.values()))))
        parts = vector_layout.unpack_pose(start[: vector_layout.POSE_SIZE])
        sk = self.skeleton
        rot = np.empty((len(sk), 4))
        rot[0] = (1.0, 0.0, 0.0, 0.0)
        rot[1:] = quats_from_6d(parts["rot6d"])
        trans = sk.offsets.copy()
        trans[self.top] = parts["joint_pos"][self.top_in_pose]
        trans[0] = 0.0
        return Motion(sk, rot[None], np.zeros((1, 3)), self.fps, trans[None])

    def _stance(self, name: str):
        """The standing pose of style ``name`` as the network's state
        ``(joint_pos, joint_vel, rot6d, contacts)``: :func:`.stance.idle_stance`
        of the style's start pose (its upper body, legs at a hip-width
        stance), feet flat as in the normal style's start pose (frame 0 of
        ``walk_normal_001``, the one real standing frame the data has).
        Computed once per style."""
        cache = self.__dict__.setdefault("_stances", {})
        if name not in cache:
            pose = idle_stance(self._start_motion(name), self._start_motion("normal"))
            keys = ("joint_pos", "joint_vel", "rot6d", "contacts", "root_vel")
            saved = {k: getattr(self, k, None) for k in keys}
            self._set_pose(pose)
            cache[name] = tuple(np.asarray(a, dtype=np.float32).copy() for a in (self.joint_pos, self.joint_vel, self.rot6d, self.contacts))
            self.__dict__.update(saved)
        return cache[name]

    def _set_pose(self, motion: Motion) -> None:
        if list(motion.skeleton.names) != list(self.skeleton.names):
            raise ValueError("reset(pose=...) needs a Motion on the model's (Bandai) skeleton")
        if motion.num_frames == 1:
            # compute_features needs two frames for velocities: repeat the frame (zero velocity).
            motion = Motion(motion.skeleton, np.repeat(motion.rotations, 2, 0), np.repeat(motion.root_positions, 2, 0),
                            motion.fps, None if motion.translations is None else np.repeat(motion.translations, 2, 0))
            single = True
        else:
            single = False
        cf = features.compute_features(motion)
        self.joint_pos, self.joint_vel, self.rot6d = cf.joint_pos[-1, 1:], cf.joint_vel[-1, 1:], cf.rot6d[-1, 1:]
        if single:
            self.joint_vel = np.zeros_like(self.joint_vel)
            self.contacts = np.ones(vector_layout.CONTACT_SIZE, dtype=np.float32)
            self.root_vel = np.zeros(3, dtype=np.float32)
        else:
            self.contacts = cf.contacts[-1].astype(np.float32)
            self.root_vel = np.array([*cf.root_vel[-1], cf.root_ang_vel[-1]], dtype=np.float32)

    # -- helpers ---------------------------------------------------------------------
    def _goal(self, control: Control):
        """Desired world velocity ``[2]`` and yaw, as in motion matching:
        facing None = along the velocity, or keep the current facing when
        (nearly) standing."""
        return control_goal(control, self.sim.yaw)

    def _spring(self, v_goal, yaw_goal: float):
        """The spring simulation at the future sample times and one frame
        ahead, in one evaluation (the closed forms are exact for any time
        step): ``SpringTrajectory.predict`` and ``.update`` from the same
        state. Returns world ``(pos [NF + 1, 2], vel, acc, yaw [NF + 1],
        yaw_vel)``; the last row is ``dt`` ahead."""
        sim = self.sim
        t = self._spring_times
        p, v, a = spring_velocity(sim.pos, sim.vel, sim.acc, v_goal, sim.velocity_halflife, t[:, None])
        yaw, yaw_v = spring_to_goal(sim.yaw, sim.yaw_vel, sim._goal_yaw(yaw_goal), sim.rotation_halflife, t)
        return p, v, a, yaw, yaw_v

    def trajectory(self, v_goal, yaw_goal: float):
        """Root-space trajectory ``(pos [7, 2], dir [7, 2])`` of the current
        frame: history, current root, and the blend of the control's spring
        prediction with the model's previous prediction."""
        p, _, _, yaw, _ = self._spring(np.asarray(v_goal, dtype=np.float64), yaw_goal)
        return self._trajectory(p[: vector_layout.NF], yaw[: vector_layout.NF])

    def _trajectory(self, ctrl_pos, ctrl_yaw):
        # Written with few NumPy calls: it runs every frame.
        past = self._past_index
        c, s = np.cos(self.root_yaw), np.sin(self.root_yaw)
        to_root = np.array([[c, -s], [s, c]])  # row vectors @ this = rotate by -yaw
        rel = (np.concatenate([self.hist_pos[past], ctrl_pos]) - self.root_pos) @ to_root
        ang = np.concatenate([self.hist_yaw[past], ctrl_yaw]) - self.root_yaw
        dirs = np.stack([np.sin(ang), -np.cos(ang)], -1)  # facing_from_yaw
        n = len(past)
        w = self.control_weights
        fpos = w * rel[n:] + (1.0 - w) * self.pred_pos
        fdir = w * dirs[n:] + (1.0 - w) * self.pred_dir
        fdir /= np.maximum(np.sqrt(np.sum(fdir * fdir, axis=-1, keepdims=True)), 1e-6)
        pos = np.concatenate([rel[:n], self._current[:, :2], fpos])
        dirs = np.concatenate([dirs[:n], self._current[:, 2:], fdir])
        return pos, dirs

    # -- the loop ----------------------------------------------------------------------
    def step(self, control: Control = None) -> Motion:
        """Advance one frame (``1 / fps`` s) under ``control`` and return the
        pose as a one-frame :class:`Motion` in world space: joint 0 is the
        character root (``root_positions = (x, y, 0)``, rotation = yaw about
        +Z), the hips are placed by ``translations``, every other joint by its
        local rotation on the Bandai skeleton. ``control.style`` (a style
        name or ``{name: weight}``), when given, switches the style weights.

        This is the live stepper: call it once per frame with the current
        input (e.g. :class:`~.drive_input.DriveInput` turns key events into
        controls; docs/drive.md has an example)."""
        control = control or Control()
        if control.style is not None:
            self.style = vector_layout.style_vector(control.style)
        v_goal, yaw_goal = self._goal(control)
        if self.idle_stand:
            idle = float(np.hypot(v_goal[0], v_goal[1])) < IDLE_SPEED and abs(float(wrap_angle(yaw_goal - self.root_yaw))) < IDLE_FACING
            if self._stand is not None and (idle or self._stand[0]):
                return self._standing_step()  # hold, or finish the blend before walking off
            if self._stand is not None:
                self._stand = None  # walk off: the network state is the standing pose already
            elif idle and self._last_shown is not None and float(np.hypot(*self.sim.vel)) < IDLE_SETTLE_SPEED:
                self._start_standing()
                return self._standing_step()
        sp, sv, sa, syaw, syaw_v = self._spring(v_goal, yaw_goal)
        traj_pos, traj_dir = self._trajectory(sp[: vector_layout.NF], syaw[: vector_layout.NF])
        x = vector_layout.pack_input(self.joint_pos, self.joint_vel, self.rot6d, traj_pos, traj_dir, self.style, self.contacts, self.root_vel)
        x = np.ascontiguousarray(x, dtype=np.float32)
        y = np.asarray(self.engine(x), dtype=np.float32)
        self.last_input, self.last_output = x, y
        out = vector_layout.unpack_output(y)

        # Root: the predicted displacement is in the current root frame.
        dx, dy, dyaw = (float(v) for v in out["root_delta"])
        c, s = np.cos(self.root_yaw), np.sin(self.root_yaw)
        self.root_pos = self.root_pos + np.array([c * dx - s * dy, s * dx + c * dy])
        self.root_yaw += dyaw
        self.hist_pos = np.concatenate([self.hist_pos[1:], self.root_pos[None]])
        self.hist_yaw = np.concatenate([self.hist_yaw[1:], [self.root_yaw]])

        # Everything fed back is what the model produced (as in training).
        self.joint_pos, self.joint_vel, self.rot6d = out["joint_pos"], out["joint_vel"], out["rot6d"]
        self.contacts = out["contacts"]
        self.root_vel = vector_layout.root_velocity_from_delta(out["root_delta"], self.fps).astype(np.float32)
        self.pred_pos = out["future_pos"].astype(np.float64)
        self.pred_dir = out["future_dir"].astype(np.float64)

        # = self.sim.update(v_goal, yaw_goal, dt), evaluated in _spring.
        self.sim.pos, self.sim.vel, self.sim.acc = sp[-1], sv[-1], sa[-1]
        self.sim.yaw, self.sim.yaw_vel = float(syaw[-1]), float(syaw_v[-1])
        gap = self.sim.pos - self.root_pos
        d = float(np.hypot(gap[0], gap[1]))
        if d > self.max_sim_distance:
            self.sim.pos = self.root_pos + gap * (self.max_sim_distance / d)
        self.frame += 1
        self._update_shown()
        shown = self.pose()
        self._prev_shown, self._last_shown = self._last_shown, shown
        self._update_feet()
        return shown

    def _feet_from(self, shown: Motion) -> None:
        """:attr:`feet` (and its root-space filter state) from a shown pose's
        forward kinematics: while standing, and where walking starts."""
        self.feet = shown.world_positions()[0][list(features.CONTACT_INDEX)]
        self._feet_rs = np.column_stack([features.rotate2d(self.feet[:, :2] - self.root_pos, -self.root_yaw), self.feet[:, 2]])

    def _update_feet(self) -> None:
        """:attr:`feet` ``[4, 3]``: world positions (m) of ``Foot_L, Toes_L,
        Foot_R, Toes_R`` as the network predicts them (its root-space joint
        positions, filtered like the shown pose). The shown pose comes from
        the predicted rotations, whose small errors add up along the leg:
        those feet skate about twice as much as the predicted positions
        (2.2 against 1.0 cm/frame on the evaluation paths), so a foot
        cleanup should place the feet here (:func:`.cleanup.pin_feet`'s
        ``feet``)."""
        jp = np.asarray(self.joint_pos, dtype=np.float64)[_FEET_IN_POSE]
        a = 1.0 - self.smoothing
        self._feet_rs = self._feet_rs + a * (jp - self._feet_rs)
        f = self._feet_rs
        self.feet = np.column_stack([features.rotate2d(f[:, :2], self.root_yaw) + self.root_pos, f[:, 2]])

    def _start_standing(self) -> None:
        """Begin the idle stand: an inertialised blend (:func:`.inertialize.blend_to_pose`)
        from the last two shown frames into the standing pose of the current
        style, placed where a body decelerating uniformly from the current
        root velocity comes to rest (``v T / 2`` ahead) and facing the
        current direction.

        Why: the network was trained on locomotion clips with almost no idle
        frames, so asked for zero velocity it keeps creeping (~0.3 m/s); an
        animator pressing nothing expects the character to stop. The
        network's state is reset to that standing pose, so walking off again
        starts the network from exactly what is shown. Meanwhile the feet
        step into the stance one at a time (:func:`.stance.settle_steps`):
        :attr:`feet` and :attr:`contacts` say where and which is planted, and
        the blend lasts as long as the steps need when that is longer."""
        n = max(int(round(STAND_BLEND_SECONDS * self.fps)), 1)
        prev = self._prev_shown if self._prev_shown is not None else self._last_shown
        last = self._last_shown
        v = (last.root_positions[0, :2] - prev.root_positions[0, :2]) * self.fps
        rest = last.root_positions[0, :2] + v * (0.5 * n / self.fps)
        yaw, style, frame = self.root_yaw, self.style.copy(), self.frame
        start_feet, lifted = self.feet.copy(), np.asarray(self.contacts)[[0, 2]] < 0.5
        self.reset(position=rest, yaw=yaw, style=style)
        self.frame = frame
        target = self._stand[1]
        # The feet step into the stance one at a time (:func:`.stance.settle_steps`)
        # while the body blends: blended, they would slide over the floor.
        n = max(n, settle_frames(start_feet, self.feet, self.fps))
        feet, contacts = settle_steps(start_feet, self.feet, n, self.fps, lifted)
        self._stand = (list(_frames(blend_to_pose(prev, last, target, n))), target, self._stand[2], list(feet), list(contacts))
        self._last_shown = last

    def _standing_step(self) -> Motion:
        """One frame of the idle stand: the next blend frame, else the
        standing pose. While blending, :attr:`contacts` is 0 (the blend's
        feet move; a cleanup should detect, not trust, them); standing, both
        feet are down (the standing pose's contacts)."""
        frames, target, contacts = self._stand[:3]
        steps = self._stand[3:] if len(self._stand) > 3 else ([], [])
        shown = frames.pop(0) if frames else target
        self.root_pos = shown.root_positions[0, :2].copy()
        self.frame += 1
        held = shown is self._last_shown  # the same standing pose again: its feet are known
        self._prev_shown, self._last_shown = self._last_shown, shown
        if steps[0]:
            feet, self.contacts = steps[0].pop(0), steps[1].pop(0).astype(np.float32)
            self._feet_from(shown)
            self.feet = feet
        else:
            self.contacts = contacts.copy()
            if not held:
                self._feet_from(shown)
        return shown

    def _update_shown(self) -> None:
        """Output smoothing: the displayed pose follows the prediction with a
        one-pole filter (slerp per joint, lerp for the hips). Each frame's
        pose is predicted afresh, so small frame-to-frame disagreements show
        as jitter; the filter removes them at the cost of ~``smoothing /
        (1 - smoothing)`` frames of lag. Only the display is filtered: the
        network keeps receiving its own raw output, exactly as in training."""
        rot = quats_from_6d(self.rot6d).astype(np.float64)
        hips = np.asarray(self.joint_pos[self.top_in_pose], dtype=np.float64)
        if self._shown is None or self.smoothing == 0.0:
            self._shown = (rot, hips)
            return
        a = 1.0 - self.smoothing
        prev_rot, prev_hips = self._shown
        self._shown = (rotations.slerp(prev_rot, rot, np.full(len(rot), a)), prev_hips + a * (hips - prev_hips))

    def pose(self) -> Motion:
        """The current pose as a one-frame world-space :class:`Motion` (see :meth:`step`)."""
        if getattr(self, "_stand", None) is not None and self._last_shown is not None:
            return self._last_shown
        sk = self.skeleton
        if self._shown is None:
            self._update_shown()
        rot = np.empty((len(sk), 4))
        rot[1:] = self._shown[0]
        rot[0] = (np.cos(0.5 * self.root_yaw), 0.0, 0.0, np.sin(0.5 * self.root_yaw))  # yaw about +Z
        trans = sk.offsets.copy()
        trans[self.top] = self._shown[1]
        root = np.array([self.root_pos[0], self.root_pos[1], 0.0])
        trans[0] = root
        return Motion(sk, rot[None], root[None], self.fps, trans[None], name="locomotion")

    def run(self, controls, frames: int = None) -> Motion:
        """Step through ``controls`` (a list, one per frame, or one
        :class:`Control` repeated ``frames`` times) and return the whole clip
        as a :class:`Motion`."""
        if isinstance(controls, Control):
            controls = [controls] * int(frames)
        elif frames is not None:
            controls = list(controls)[: int(frames)]
        poses = [self.step(c) for c in controls]
        return Motion(
            self.skeleton,
            rotations.make_continuous(np.concatenate([p.rotations for p in poses]), axis=0),
            np.concatenate([p.root_positions for p in poses]),
            self.fps,
            np.concatenate([p.translations for p in poses]),
            name="locomotion",
        )


def _frames(motion: Motion):
    """The frames of ``motion`` as one-frame Motions."""
    return (motion.slice(k, k + 1) for k in range(motion.num_frames))


__all__ = ["LocomotionController", "quats_from_6d", "quats_from_matrices", "TorchEngine", "OnnxEngine", "CONTROL_WEIGHTS", "DEFAULT_ENGINE", "DEFAULT_PT", "DEFAULT_ONNX"]
