"""Drive's input mapping (no bpy): a scripted event stream in, controls out;
the tick-rate governor; the controller stepped live from those controls."""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend.locomotion import drive_input
from rigmind.backend.locomotion.vector_layout import STYLES

E = drive_input.InputEvent


def _vel(c):
    return np.asarray(c.velocity)


def test_keys_move_relative_to_the_view_with_run_and_slow():
    d = drive_input.DriveInput()
    fwd = (1.0, 0.0)  # the view looks along +X
    assert np.allclose(_vel(d.control(fwd)), 0.0)
    d.handle(E("W"))
    assert np.allclose(_vel(d.control(fwd)), (1.3, 0.0))
    d.handle(E("LEFT_SHIFT"))
    assert np.allclose(_vel(d.control(fwd)), (3.0, 0.0)) and d.gait == "run"
    d.handle(E("LEFT_SHIFT", "RELEASE"))
    d.handle(E("RIGHT_CTRL"))
    assert np.allclose(_vel(d.control(fwd)), (0.6, 0.0)) and d.gait == "slow"
    d.handle(E("RIGHT_CTRL", "RELEASE"))
    d.handle(E("A"))  # forward + left: diagonal, still walking speed
    v = _vel(d.control(fwd))
    assert np.linalg.norm(v) == pytest.approx(1.3)
    assert v[0] > 0 and v[1] > 0 and v[0] == pytest.approx(v[1])  # left of +X is +Y
    d.handle(E("W", "RELEASE"))
    d.handle(E("A", "RELEASE"))
    d.handle(E("DOWN_ARROW"))
    assert np.allclose(_vel(d.control(fwd)), (-1.3, 0.0))
    d.handle(E("DOWN_ARROW", "RELEASE"))
    d.handle(E("RIGHT_ARROW"))
    assert np.allclose(_vel(d.control(fwd)), (0.0, -1.3))
    d.handle(E("RIGHT_ARROW", "RELEASE"))
    assert np.allclose(_vel(d.control(fwd)), 0.0)


def test_commands_and_what_is_consumed():
    d = drive_input.DriveInput()
    assert d.handle(E("R")) == drive_input.RECORD and d.recording
    assert d.handle(E("R", "RELEASE")) is None and d.consumed
    assert d.handle(E("R")) == drive_input.RECORD and not d.recording
    assert d.handle(E("RET")) == drive_input.FINISH
    assert d.handle(E("RIGHTMOUSE")) == drive_input.FINISH
    assert d.handle(E("NUMPAD_ENTER")) == drive_input.FINISH
    assert d.handle(E("ESC")) == drive_input.CANCEL
    for other in ("MOUSEMOVE", "MIDDLEMOUSE", "WHEELUPMOUSE", "TIMER", "Q"):
        assert d.handle(E(other)) is None and not d.consumed, other  # left to Blender (orbit, zoom, ...)
    assert d.handle(E("W")) is None and d.consumed
    # What the operator leaves to Blender: navigating the view, not shortcuts.
    for t in ("MOUSEMOVE", "MIDDLEMOUSE", "WHEELUPMOUSE", "TRACKPADPAN", "NDOF_BUTTON_FIT", "WINDOW_DEACTIVATE"):
        assert drive_input.passes_to_view(t), t
    for t in ("Z", "X", "DEL", "TAB", "NUMPAD_1", "F12"):
        assert not drive_input.passes_to_view(t), t


def test_style_keys_blend_over_half_a_second():
    d = drive_input.DriveInput(style="normal")
    assert d.style_weights[STYLES.index("normal")] == 1.0
    d.handle(E("TWO"))  # the second style
    assert d.style == STYLES[1] == "elderly"
    d.advance(0.25)
    w = d.style_weights
    assert w[STYLES.index("normal")] == pytest.approx(0.5) and w[1] == pytest.approx(0.5)
    assert "→" in d.style_label()
    c = d.control(dt=0.25)
    assert np.allclose(c.style, np.eye(len(STYLES))[1]) and d.style_label() == "elderly"
    d.handle(E("NUMPAD_7"))
    assert d.style == STYLES[6]
    d.handle(E("NDOF_BUTTON_1"))
    assert d.style == STYLES[0]


def test_ndof_cap_is_an_analogue_stick():
    d = drive_input.DriveInput()
    d.handle(E("NDOF_MOTION", "NOTHING", (0.0, 0.0, -1.0)))  # pushed away from the user, full scale
    assert np.allclose(_vel(d.control((0.0, 1.0))), (0.0, 1.3))
    d.handle(E("NDOF_MOTION", "NOTHING", (0.55, 0.3, 0.0)))  # half-way right (after the 10 % dead zone)
    assert np.allclose(_vel(d.control((0.0, 1.0))), (0.65, 0.0))
    d.handle(E("NDOF_MOTION", "NOTHING", (0.05, 0.0, 0.05)))  # inside the dead zone
    assert np.allclose(_vel(d.control((0.0, 1.0))), 0.0)
    d.handle(E("NDOF_MOTION", "NOTHING", (0.0, 0.0, -1.0)))
    d.handle(E("D"))  # keys win over the cap
    assert np.allclose(_vel(d.control((0.0, 1.0))), (1.3, 0.0))


def test_view_forward_from_the_view_rotation():
    s = np.sqrt(0.5)
    assert np.allclose(drive_input.view_forward((1.0, 0.0, 0.0, 0.0)), (0.0, 1.0))  # top view: screen up is +Y
    assert np.allclose(drive_input.view_forward((s, s, 0.0, 0.0)), (0.0, 1.0))  # front view looks along +Y
    # Front view turned 90° about world Z (right view): looks along -X.
    qz = np.array([s, 0.0, 0.0, s])
    qx = np.array([s, s, 0.0, 0.0])
    w1, x1, y1, z1 = qz
    w2, x2, y2, z2 = qx
    q = (w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
         w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)
    assert np.allclose(drive_input.view_forward(q), (-1.0, 0.0), atol=1e-9)
    assert drive_input.yaw_of_direction((0.0, -1.0)) == pytest.approx(0.0)
    assert drive_input.yaw_of_direction((1.0, 0.0)) == pytest.approx(-np.pi / 2)


def test_scripted_event_stream():
    script = [(0.0, E("R")), (0.0, E("W")), (1.0, E("W", "RELEASE")), (1.0, E("D")), (1.5, E("THREE")),
              (2.0, E("D", "RELEASE")), (2.0, E("RET"))]
    controls, commands = drive_input.scripted_controls(script, 2.5, fps=30.0)
    assert len(controls) == 75
    assert commands == [(0, drive_input.RECORD), (60, drive_input.FINISH)]
    v = np.array([c.velocity for c in controls])
    assert np.allclose(v[:30], (0.0, 1.3)) and np.allclose(v[30:60], (1.3, 0.0)) and np.allclose(v[60:], 0.0)
    st = np.array([c.style for c in controls])
    k = STYLES.index("normal")
    assert np.all(st[:45, k] == 1.0) and st[-1, 2] == 1.0
    assert 0.0 < st[50, 2] < 1.0  # mid-blend
    assert np.allclose(st.sum(axis=1), 1.0)


def test_tick_rate_drops_on_a_slow_machine_and_recovers():
    r = drive_input.TickRate(30.0)
    assert r.rate == 30.0 and r.interval == pytest.approx(1 / 30)
    for _ in range(30):
        r.update(0.030)  # 30 ms per tick: more than half of a 33 ms slot
    assert r.rate < 30.0 and 0.030 <= r.budget * r.interval
    slow = r.rate
    for _ in range(60):
        r.update(0.001)
    assert r.rate == 30.0 > slow
    r2 = drive_input.TickRate(30.0, min_fps=8.0)
    for _ in range(100):
        r2.update(1.0)
    assert r2.rate >= 8.0


def test_controller_steps_live_from_scripted_input():
    """The Python API's manual mode: LocomotionController.step fed by DriveInput."""
    from rigmind.backend.locomotion.controller import DEFAULT_ONNX, LocomotionController

    if not DEFAULT_ONNX.exists():
        pytest.skip("models/locomotion.onnx is absent: train one with `rigmind train locomotion`")
    ctl = LocomotionController.load()
    ctl.reset(position=(0.0, 0.0), yaw=0.0, style="normal")
    script = [(0.0, E("W")), (3.0, E("W", "RELEASE")), (3.0, E("D")), (6.0, E("D", "RELEASE"))]
    controls, _ = drive_input.scripted_controls(script, 8.0, fps=ctl.fps)
    roots = np.array([ctl.step(c).root_positions[0, :2] for c in controls])
    assert np.isfinite(roots).all()
    d1 = roots[90] - roots[0]
    d2 = roots[180] - roots[90]
    assert d1[1] > 2.0 and abs(d1[0]) < 0.5 * d1[1]  # forward = +Y (the default view forward)
    assert d2[0] > 2.0 and abs(d2[1]) < 0.6 * d2[0]  # then right = +X
    assert np.linalg.norm(roots[-1] - roots[-15]) < 0.15  # released: it stops


def test_jump_is_one_request_per_press():
    d = drive_input.DriveInput()
    assert not d.take_jump()
    assert d.handle(E("SPACE")) == drive_input.JUMP and d.consumed
    assert d.handle(E("SPACE")) is None and d.consumed  # Blender's auto-repeat while held
    assert d.take_jump() and not d.take_jump()  # consumed once
    assert d.handle(E("SPACE", "RELEASE")) is None and d.consumed
    assert d.handle(E("NDOF_BUTTON_8")) == drive_input.JUMP and d.take_jump()
    assert d.handle(E("NDOF_BUTTON_8", "RELEASE")) is None
    assert d.handle(E("SPACE")) == drive_input.JUMP  # re-armed by the release


def test_crouch_toggles_and_caps_the_speed():
    d = drive_input.DriveInput()
    fwd = (0.0, 1.0)
    d.handle(E("W"))
    d.handle(E("LEFT_SHIFT"))
    assert d.handle(E("C")) == drive_input.CROUCH and d.crouched and d.gait == "crouch"
    assert np.linalg.norm(_vel(d.control(fwd))) == pytest.approx(d.config.crouch_speed)  # run asked, sneak given
    d.handle(E("C"))  # auto-repeat: still crouched
    assert d.crouched
    d.handle(E("C", "RELEASE"))
    d.handle(E("LEFT_SHIFT", "RELEASE"))
    d.handle(E("LEFT_CTRL"))  # the slow walk is already under the cap
    assert np.linalg.norm(_vel(d.control(fwd))) == pytest.approx(min(0.6, d.config.crouch_speed))
    d.handle(E("LEFT_CTRL", "RELEASE"))
    d.handle(E("W", "RELEASE"))
    d.handle(E("NDOF_MOTION", "NOTHING", (0.0, 0.0, -1.0)))  # full push on the cap
    assert np.linalg.norm(_vel(d.control(fwd))) == pytest.approx(d.config.crouch_speed)
    assert d.handle(E("NDOF_BUTTON_9")) == drive_input.CROUCH and not d.crouched
    assert np.linalg.norm(_vel(d.control(fwd))) == pytest.approx(1.3)


def test_jump_and_crouch_buttons_are_real_blender_event_types():
    bpy = pytest.importorskip("bpy")
    known = {e.identifier for e in bpy.types.Event.bl_rna.properties["type"].enum_items}
    assert drive_input.JUMP_KEYS <= known and drive_input.CROUCH_KEYS <= known
    assert not (drive_input.JUMP_KEYS | drive_input.CROUCH_KEYS) & set(drive_input.STYLE_KEYS)


def test_window_switch_rearms_a_held_jump_key():
    d = drive_input.DriveInput()
    d.handle(E("SPACE"))
    d.handle(E("WINDOW_DEACTIVATE"))  # the release went to another window
    assert d.handle(E("SPACE")) == drive_input.JUMP
