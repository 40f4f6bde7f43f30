"""Drive input: keyboard / NDOF events -> locomotion controls, no bpy.

The Drive operator (``operators/drive_scene.py``) steers the locomotion
controller live. Its input handling is this module, so it can be tested with
a scripted event stream and used from the Python API: :class:`DriveInput`
keeps what is held (keys, the NDOF cap's deflection), answers
:meth:`DriveInput.handle` for each event (returning a session command such as
"record", "finish" or "cancel") and gives, once per controller frame, the
:class:`~.motion_matching.Control` to step with (:meth:`DriveInput.control`).

Events are :class:`InputEvent` (Blender's ``event.type`` / ``event.value``
names, so the operator passes Blender's events through as they are).

Bindings (``type`` names as in ``bpy.types.Event.type``):

- W / S / A / D or the arrow keys: forward / back / left / right, relative
  to the view (the view's forward direction projected on the ground);
- Shift: run (:attr:`DriveConfig.run_speed`), Ctrl: walk slowly
  (:attr:`DriveConfig.slow_speed`), else :attr:`DriveConfig.walk_speed`;
- 1-7 (top row or numpad) and NDOF buttons 1-7: switch style
  (:data:`~.vector_layout.STYLES` in order), blended linearly over
  :attr:`DriveConfig.style_blend_seconds`;
- NDOF_MOTION (a 3Dconnexion SpaceMouse, the only analogue device Blender's
  event system delivers to an add-on): the cap's horizontal deflection is an
  analogue stick (direction and speed, up to the walk or run speed);
- Space or NDOF button 8: jump (one request per press: a held key's
  auto-repeat does not jump again; :meth:`DriveInput.take_jump` hands the
  request to the session once);
- C or NDOF button 9: crouch toggle; while crouched the commanded speed is
  capped at :attr:`DriveConfig.crouch_speed` (the sneak's, the controller's
  legs), whatever Shift / the NDOF cap ask;
- R: toggle recording; Enter / right-click: finish and keep the take;
  Esc: cancel.

NDOF buttons 8 and 9 (``NDOF_BUTTON_8`` / ``NDOF_BUTTON_9`` in Blender 5.0's
event enum) exist on the larger SpaceMice (Enterprise: 12 numbered
buttons); a two-button SpaceMouse sends MENU / FIT, which stay Blender's.

Gamepads / joysticks: Blender 5.0 has no gamepad events (they went with the
game engine); XR controller actions (``XR_ACTION``) exist only inside a VR
session and are not handled.

Units: metres, seconds, radians; Blender Z-up world, yaw as in the
controller (0 faces -Y, positive turns left).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .vector_layout import STYLES
from .motion_matching import Control

FORWARD_KEYS = frozenset({"W", "UP_ARROW"})
BACK_KEYS = frozenset({"S", "DOWN_ARROW"})
LEFT_KEYS = frozenset({"A", "LEFT_ARROW"})
RIGHT_KEYS = frozenset({"D", "RIGHT_ARROW"})
RUN_KEYS = frozenset({"LEFT_SHIFT", "RIGHT_SHIFT"})
SLOW_KEYS = frozenset({"LEFT_CTRL", "RIGHT_CTRL"})
MOVE_KEYS = FORWARD_KEYS | BACK_KEYS | LEFT_KEYS | RIGHT_KEYS
_DIGITS = ("ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN")
#: Event type -> style index (into :data:`~.vector_layout.STYLES`).
STYLE_KEYS = {
    **{d: i for i, d in enumerate(_DIGITS)},
    **{f"NUMPAD_{i + 1}": i for i in range(7)},
    **{f"NDOF_BUTTON_{i + 1}": i for i in range(7)},
}
JUMP_KEYS = frozenset({"SPACE", "NDOF_BUTTON_8"})
CROUCH_KEYS = frozenset({"C", "NDOF_BUTTON_9"})
RECORD_KEYS = frozenset({"R"})
FINISH_KEYS = frozenset({"RET", "NUMPAD_ENTER", "RIGHTMOUSE"})
CANCEL_KEYS = frozenset({"ESC"})
NDOF_MOTION = "NDOF_MOTION"

# What handle() returns besides None.
RECORD, FINISH, CANCEL = "record", "finish", "cancel"
JUMP, CROUCH = "jump", "crouch"


@dataclass(frozen=True)
class InputEvent:
    """One input event, as Blender names it. ``type``: ``event.type`` (e.g.
    "W", "LEFT_SHIFT", "ONE", "NDOF_MOTION"); ``value``: "PRESS", "RELEASE"
    (or "NOTHING" for NDOF motion); ``ndof``: the NDOF translation ``(x, y,
    z)`` in [-1, 1] for NDOF_MOTION (Blender's ``event.ndof_motion.translation``:
    x right, y up, z toward the user)."""

    type: str
    value: str = "PRESS"
    ndof: tuple = None


@dataclass(frozen=True)
class DriveConfig:
    """Speeds (m/s) and timings (s) of the Drive input."""

    walk_speed: float = 1.3
    run_speed: float = 3.0
    slow_speed: float = 0.6
    style_blend_seconds: float = 0.5
    #: NDOF deflections below this (of full scale) count as centred.
    ndof_deadzone: float = 0.1
    #: Speed cap (m/s, the controller's frame) while crouched: the sneak
    #: clip's speed on the controller's legs
    #: (``clip_bank.default_crouch_speed(controller_leg_length(ctl))``,
    #: 0.38 m/s for the shipped model; the Drive session sets the exact one).
    crouch_speed: float = 0.38


#: Event types Drive leaves to Blender while it runs (orbit, pan and zoom
#: the view, window events): the mouse, wheel, trackpad and NDOF buttons
#: Drive does not bind. Every other key is swallowed, so that shortcuts
#: (undo, delete, mode switches) cannot change the scene under a drive.
_VIEW_PREFIXES = ("MOUSE", "INBETWEEN_MOUSE", "WHEEL", "TRACKPAD", "WINDOW_", "TIMER", "NDOF_BUTTON", "EVT_",
                  "ACTIONZONE", "XR_")


def passes_to_view(event_type: str) -> bool:
    """Whether the Drive operator passes an event it does not use on to
    Blender (see :data:`_VIEW_PREFIXES`)."""
    t = str(event_type)
    return t.startswith(_VIEW_PREFIXES) or t.endswith("MOUSE")


def view_forward(view_rotation) -> np.ndarray:
    """The ground direction ``[2]`` (unit, world XY) that "forward" means for
    a 3D view with rotation quaternion ``view_rotation`` (w, x, y, z:
    ``RegionView3D.view_rotation``, view space -> world): the view direction
    (-Z of the view) projected on the ground, or for a view looking (nearly)
    straight down or up, the screen's up direction (+Y of the view)."""
    w, x, y, z = (float(v) for v in view_rotation)

    def rotate(v):
        q = np.array([x, y, z])
        v = np.asarray(v, dtype=np.float64)
        t = 2.0 * np.cross(q, v)
        return v + w * t + np.cross(q, t)

    look = rotate((0.0, 0.0, -1.0))
    d = look[:2]
    if np.hypot(*d) < 0.2:  # top / bottom view: screen up is forward
        up = rotate((0.0, 1.0, 0.0))
        d = up[:2] if look[2] < 0 else -up[:2]
    n = float(np.hypot(*d))
    return np.array([0.0, 1.0]) if n < 1e-9 else d / n


def yaw_of_direction(d) -> float:
    """Controller yaw (0 faces -Y, positive turns left) of a ground direction."""
    return float(np.arctan2(-float(d[0]), -float(d[1])))


@dataclass
class DriveInput:
    """Held keys and the style blend; see the module docstring.

    Args:
        config: speeds and timings.
        style: the starting style (a name in :data:`~.vector_layout.STYLES`).
    """

    config: DriveConfig = field(default_factory=DriveConfig)
    style: str = "normal"

    def __post_init__(self):
        self.held = set()
        self.ndof = np.zeros(2)  # stick (right, forward), in [-1, 1]
        self.recording = False
        i = STYLES.index(self.style)
        self.style_weights = np.eye(len(STYLES))[i]
        self._blend_from = self.style_weights.copy()
        self._blend_to = self.style_weights.copy()
        self._blend_t = None  # seconds into the current style blend, None when done
        self.time = 0.0
        self.consumed = False
        self.crouched = False
        self._jump_pending = False
        self._buttons_down = set()  # jump / crouch keys held: their auto-repeat PRESS is ignored

    # -- events ------------------------------------------------------------------
    def handle(self, event: InputEvent):
        """Take one event; return RECORD / FINISH / CANCEL for the session,
        else None. Returns a bool in :attr:`consumed` too: whether Drive uses
        the event (the operator passes the others through, e.g. to orbit the
        view)."""
        t, v = event.type, event.value
        self.consumed = True
        if t == NDOF_MOTION:
            tx, _, tz = (float(a) for a in (event.ndof or (0.0, 0.0, 0.0)))
            stick = np.array([tx, -tz])  # push the cap away from you: forward
            m = float(np.hypot(*stick))
            dz = self.config.ndof_deadzone
            self.ndof = np.zeros(2) if m < dz else stick / m * min((m - dz) / (1.0 - dz), 1.0)
            return None
        if t in MOVE_KEYS or t in RUN_KEYS or t in SLOW_KEYS:
            if v == "PRESS":
                self.held.add(t)
            elif v == "RELEASE":
                self.held.discard(t)
            return None
        if t in JUMP_KEYS or t in CROUCH_KEYS:
            return self._button(t, v)
        if t == "WINDOW_DEACTIVATE":
            self._buttons_down.clear()  # a RELEASE sent to another window is never seen
        if v != "PRESS":
            self.consumed = t in STYLE_KEYS or t in RECORD_KEYS or t in FINISH_KEYS or t in CANCEL_KEYS
            return None
        if t in STYLE_KEYS:
            self.set_style(STYLES[STYLE_KEYS[t]])
            return None
        if t in RECORD_KEYS:
            self.recording = not self.recording
            return RECORD
        if t in FINISH_KEYS:
            return FINISH
        if t in CANCEL_KEYS:
            return CANCEL
        self.consumed = False
        return None

    def _button(self, t: str, v: str):
        """Jump / crouch keys: act on the first PRESS only (Blender repeats
        PRESS while a key is held), re-armed by its RELEASE."""
        if v == "RELEASE":
            self._buttons_down.discard(t)
            return None
        if v != "PRESS" or t in self._buttons_down:
            return None
        self._buttons_down.add(t)
        if t in JUMP_KEYS:
            self._jump_pending = True
            return JUMP
        self.crouched = not self.crouched
        return CROUCH

    def take_jump(self) -> bool:
        """Whether a jump was asked for since the last call (the request is
        consumed: one press, one jump)."""
        pending, self._jump_pending = self._jump_pending, False
        return pending

    def set_style(self, style: str) -> None:
        """Start blending toward ``style`` from the current weights."""
        self._blend_from = self.style_weights.copy()
        self._blend_to = np.eye(len(STYLES))[STYLES.index(style)]
        self._blend_t = 0.0
        self.style = style

    # -- state ---------------------------------------------------------------------
    def stick(self) -> np.ndarray:
        """Requested direction ``[2]`` (right, forward) in the view frame,
        length 0..1: the keys (unit length) or the NDOF cap."""
        h = self.held
        keys = np.array([
            float(bool(h & RIGHT_KEYS)) - float(bool(h & LEFT_KEYS)),
            float(bool(h & FORWARD_KEYS)) - float(bool(h & BACK_KEYS)),
        ])
        n = float(np.hypot(*keys))
        if n > 0:
            return keys / n
        return self.ndof.copy()

    @property
    def gait(self) -> str:
        """"crouch" (toggled on), "run" (Shift held), "slow" (Ctrl held) or "walk"."""
        if self.crouched:
            return "crouch"
        if self.held & RUN_KEYS:
            return "run"
        if self.held & SLOW_KEYS:
            return "slow"
        return "walk"

    def target_speed(self) -> float:
        """The speed (m/s) asked for by the held modifiers, at full
        deflection; while crouched, the lower of that and the crouch speed
        (Ctrl's slow walk may be slower still)."""
        c = self.config
        held = "run" if self.held & RUN_KEYS else "slow" if self.held & SLOW_KEYS else "walk"
        speed = {"run": c.run_speed, "slow": c.slow_speed, "walk": c.walk_speed}[held]
        return min(speed, c.crouch_speed) if self.crouched else speed

    def advance(self, dt: float) -> None:
        """Move the style blend on by ``dt`` seconds."""
        self.time += dt
        if self._blend_t is None:
            return
        self._blend_t += dt
        a = min(self._blend_t / max(self.config.style_blend_seconds, 1e-9), 1.0)
        self.style_weights = (1.0 - a) * self._blend_from + a * self._blend_to
        if a >= 1.0:
            self._blend_t = None

    def control(self, view_forward_xy=(0.0, 1.0), dt: float = None) -> Control:
        """The :class:`~.motion_matching.Control` for the next controller
        frame: velocity = speed x the stick turned into the world by the
        view's ground forward ``view_forward_xy [2]`` (see
        :func:`view_forward`); facing along the velocity (None: the
        controller keeps its facing when standing); style = the current
        weights. ``dt`` (s), when given, first moves the style blend on."""
        if dt is not None:
            self.advance(dt)
        f = np.asarray(view_forward_xy, dtype=np.float64).reshape(2)
        f = f / max(float(np.hypot(*f)), 1e-9)
        right = np.array([f[1], -f[0]])
        s = self.stick()
        vel = self.target_speed() * (s[0] * right + s[1] * f)
        return Control(velocity=(float(vel[0]), float(vel[1])), facing=None, style=self.style_weights.copy())

    def style_label(self) -> str:
        """The dominant style, with the blend when one is under way."""
        k = int(np.argmax(self.style_weights))
        if self._blend_t is None:
            return STYLES[k]
        return f"{STYLES[int(np.argmax(self._blend_from))]} → {self.style}"


class TickRate:
    """The viewport tick rate of a live session: the scene's frame rate
    while ticks fit in their slot, else a whole fraction of it (fps / 2,
    fps / 3, ... down to ``min_fps``), so a slow machine shows fewer,
    on-time frames instead of falling behind (the controller itself keeps
    stepping at its own rate in game time, see the Drive operator).

    :meth:`update` takes each tick's measured cost (s); the rate drops when
    the smoothed cost passes ``budget`` of the tick interval and climbs back
    when it falls under a quarter of ``budget`` of the faster interval."""

    def __init__(self, fps: float, min_fps: float = 8.0, budget: float = 0.5, smoothing: float = 0.8):
        self.fps = float(fps)
        self.min_fps = float(min_fps)
        self.budget = float(budget)
        self.smoothing = float(smoothing)
        self.divisor = 1
        self.cost = None  # smoothed tick cost (s)

    @property
    def interval(self) -> float:
        """Seconds between ticks."""
        return self.divisor / self.fps

    @property
    def rate(self) -> float:
        """Ticks per second."""
        return self.fps / self.divisor

    def update(self, tick_seconds: float) -> bool:
        """Take one tick's cost; return whether the interval changed."""
        c = float(tick_seconds)
        self.cost = c if self.cost is None else self.smoothing * self.cost + (1.0 - self.smoothing) * c
        if self.cost > self.budget * self.interval and self.fps / (self.divisor + 1) >= self.min_fps:
            self.divisor += 1
            return True
        if self.divisor > 1 and self.cost < 0.25 * self.budget * (self.divisor - 1) / self.fps:
            self.divisor -= 1
            return True
        return False


def scripted_controls(script, seconds: float, fps: float = 30.0, view_forward_xy=(0.0, 1.0), drive=None):
    """Controls for ``seconds`` of game time at ``fps`` from a timed event
    stream: ``script`` is a list of ``(time_s, InputEvent)``; events at or
    before a frame's time are handled before that frame's control. Returns
    ``(controls, commands)``: one Control per frame (``round(seconds * fps)``)
    and the ``(frame, command)`` list of what :meth:`DriveInput.handle`
    returned. ``drive``: a :class:`DriveInput` to use (default a new one)."""
    drive = drive or DriveInput()
    events = sorted(script, key=lambda e: e[0])
    n = int(round(seconds * fps))
    dt = 1.0 / fps
    k = 0
    controls, commands = [], []
    for f in range(n):
        t = f * dt
        while k < len(events) and events[k][0] <= t + 1e-9:
            cmd = drive.handle(events[k][1])
            if cmd is not None:
                commands.append((f, cmd))
            k += 1
        controls.append(drive.control(view_forward_xy, dt))
    return controls, commands


__all__ = [
    "InputEvent", "DriveConfig", "DriveInput", "view_forward", "yaw_of_direction", "scripted_controls",
    "TickRate", "passes_to_view", "STYLE_KEYS", "JUMP_KEYS", "CROUCH_KEYS", "RECORD", "FINISH", "CANCEL", "JUMP",
    "CROUCH",
]
