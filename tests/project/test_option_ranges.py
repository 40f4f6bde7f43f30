"""One table of option ranges (backend/limits.py RANGES): the CLI, the
add-on's properties (their hard limits, read from the registered RNA) and
batch refuse exactly the values outside it (issue #25)."""

from __future__ import annotations

import json

import pytest

from rigmind.backend import limits

#: Blender keeps an IntProperty in 32 bits: the seed's 2**32 - 1 is clamped to this.
INT_MAX = 2**31 - 1

#: option -> the command line that sets it ({} is the value), with the
#: arguments each command requires.
CLI = {
    "speed": ["walk", "--rig", "r.blend", "--out", "o.fbx", "--cycle", "--speed", "{}"],
    "amount": ["gesture", "--audio", "a.wav", "--out", "o.npz", "--amount", "{}"],
    "smile": ["face", "--audio", "a.wav", "--out", "o.json", "--smile", "{}"],
    "fps": ["face", "--audio", "a.wav", "--out", "o.json", "--fps", "{}"],
    "seed": ["gesture", "--audio", "a.wav", "--out", "o.npz", "--seed", "{}"],
    "start_frame": ["gesture", "--audio", "a.wav", "--out", "o.npz", "--start-frame", "{}"],
    "samples": ["render", "--scene", "s.blend", "--out", "o.png", "--samples", "{}"],
    "resolution": ["render", "--scene", "s.blend", "--out", "o.png", "--resolution", "{0}x{0}"],
    "workers": ["batch", "walk", "--paths", "p.json", "--rig", "r.blend", "--out-dir", "o", "--workers", "{}"],
    "cycle_seconds": ["walk", "--rig", "r.blend", "--out", "o.fbx", "--cycle", "--seconds", "{}"],
}

#: option -> the properties (struct, property) that take it in Blender.
PROPERTIES = {
    "emotion_weight": [("RigMindSceneProperties", f"emotion_{e}")
                       for e in ("happy", "sad", "angry", "surprised", "afraid", "disgusted")],
    "speed": [("RigMindSceneProperties", "speed"), ("RIGMIND_OT_bake_walk_cycle", "speed"),
              ("RIGMIND_OT_walk_along_path", "speed")],
    "amount": [("RigMindSceneProperties", "gesture_amount"), ("RIGMIND_OT_generate_gesture", "amount")],
    "seed": [("RigMindSceneProperties", "seed"), ("RIGMIND_OT_generate_gesture", "seed"),
             ("RIGMIND_OT_generate_face", "seed")],
    "start_frame": [("RigMindSceneProperties", "start_frame"), ("RIGMIND_OT_bake_walk_cycle", "start_frame"),
                    ("RIGMIND_OT_walk_along_path", "start_frame"), ("RIGMIND_OT_generate_gesture", "start_frame"),
                    ("RIGMIND_OT_generate_face", "start_frame"), ("RIGMIND_OT_apply_bvh", "start_frame"),
                    ("RIGMIND_OT_retarget_motion", "start_frame")],
    "samples": [("RIGMIND_OT_render", "samples")],
    "resolution": [("RIGMIND_OT_render", "resolution")],
}
#: Numeric properties with a range that is no command-line option.
NOT_OPTIONS = {("RigMindBoneMapItem", "confidence")}


def _rna_props(bpy, name):
    """The RNA properties of a registered RigMind class by name: a property
    group's from its class, an operator's from its bpy.ops entry (where
    Blender keeps operator properties)."""
    from rigmind.blender_addon import properties

    cls = getattr(properties, name, None) or getattr(bpy.types, name)
    assert cls.is_registered, name
    if issubclass(cls, bpy.types.Operator):
        module, _, op = cls.bl_idname.partition(".")
        return getattr(getattr(bpy.ops, module), op).get_rna_type().properties
    return cls.bl_rna.properties


def _outside(name):
    lo, hi, _ = limits.RANGES[name]
    step = 1 if isinstance(lo, int) else 1e-3 * max(1.0, abs(hi))
    return lo - step, hi + step


def _cli_check(name, value):
    from rigmind import cli

    argv = [a.format(value) for a in CLI[name]]
    args, _ = cli.build_parser().parse_known_args(argv)
    limits.check_options(args)


@pytest.mark.parametrize("name", sorted(CLI))
def test_cli_takes_the_tables_range(name):
    lo, hi, _ = limits.RANGES[name]
    for ok in (lo, hi):
        _cli_check(name, ok)
    for bad in _outside(name):
        with pytest.raises(limits.OutOfRange, match="must be between"):
            _cli_check(name, bad)


def test_every_shared_option_is_in_the_table():
    for name in set(CLI) | set(PROPERTIES):
        assert name in limits.RANGES, name


@pytest.mark.parametrize("name", sorted(PROPERTIES))
def test_properties_hard_limits_are_the_tables(registered, name):
    bpy = registered
    lo, hi, _ = limits.RANGES[name]
    for struct, prop in PROPERTIES[name]:
        rna = _rna_props(bpy, struct)[prop]
        want_hi = min(hi, INT_MAX) if rna.type == "INT" else hi
        assert (rna.hard_min, rna.hard_max) == pytest.approx((lo, want_hi), rel=1e-6), (struct, prop)
        # The slider may span less, never more.
        assert lo <= rna.soft_min <= rna.soft_max <= want_hi + 1e-6 * abs(want_hi), (struct, prop)


def test_no_property_has_a_range_of_its_own(registered):
    """A numeric RigMind property with a range is one of the table's options
    (or a listed non-option): a new hard-coded range fails here."""
    bpy = registered
    covered = {sp for pairs in PROPERTIES.values() for sp in pairs} | NOT_OPTIONS
    from rigmind.blender_addon import properties

    structs = [c.__name__ for c in properties.CLASSES] + [n for n in dir(bpy.types) if n.startswith("RIGMIND_OT_")]
    assert "RigMindSceneProperties" in structs and "RIGMIND_OT_render" in structs
    stray = []
    for struct in structs:
        for rna in _rna_props(bpy, struct):
            if rna.type == "INT":
                ranged = (rna.hard_min, rna.hard_max) != (-2**31, INT_MAX)
            elif rna.type == "FLOAT":
                ranged = max(abs(rna.hard_min), abs(rna.hard_max)) < 1e30
            else:
                continue
            if ranged and (struct, rna.identifier) not in covered:
                stray.append((struct, rna.identifier, rna.hard_min, rna.hard_max))
    assert not stray, stray


def test_a_property_refuses_past_the_table(registered):
    bpy = registered
    s = bpy.context.scene.rigmind
    lo, hi, _ = limits.RANGES["speed"]
    s.speed = hi
    assert s.speed == pytest.approx(hi)   # 8 m/s, which the CLI takes, the panel takes too
    s.speed = hi + 5.0
    assert s.speed == pytest.approx(hi)   # Blender clamps to the hard limit
    s.speed = lo
    assert s.speed == pytest.approx(lo)


def _manifest(tmp_path, speed):
    p = tmp_path / "walks.json"
    p.write_text(json.dumps([{"name": "a", "path": "0,0;3,0", "speed": speed}]))
    return p


def test_batch_manifest_speed_takes_the_tables_range(tmp_path):
    from rigmind import batch

    lo, hi, _ = limits.RANGES["speed"]
    for ok in (lo, hi):
        assert batch.walk_items(_manifest(tmp_path, ok))[0].params["speed"] == ok
    for bad in _outside("speed"):
        with pytest.raises(limits.OutOfRange, match=r"entry 0: 'speed' must be between 0\.1 and 8 m/s"):
            batch.walk_items(_manifest(tmp_path, bad))


@pytest.mark.parametrize("name, field", [("amount", "amount"), ("seed", "base_seed"), ("workers", None)])
def test_batch_settings_take_the_tables_range(tmp_path, name, field):
    from rigmind import batch

    def config(value):
        return batch.WorkerConfig(kind="walk", fmt="fbx", **({field: value} if field else {}))

    lo, hi, _ = limits.RANGES[name]
    for ok in (lo, hi):
        batch.check_settings(config(ok), None if field else ok)
    for bad in _outside(name):
        with pytest.raises(limits.OutOfRange, match="must be between"):
            batch.check_settings(config(bad), None if field else bad)
    # run_batch refuses before it writes anything.
    bad = _outside(name)[1]
    out = tmp_path / "out"
    with pytest.raises(limits.OutOfRange):
        batch.run_batch(config(bad), [], out, workers=None if field else bad)
    assert not out.exists()


def test_path_point_speeds_take_the_tables_range():
    from rigmind.backend.locomotion import path_input

    lo, hi, _ = limits.RANGES["speed"]
    assert path_input.parse_path(f"0,0;3,0,{hi};3,3,{lo}").shape == (3, 3)
    with pytest.raises(limits.OutOfRange, match=r"point 2 .*speed must be between 0\.1 and 8 m/s, got 9"):
        path_input.parse_path("0,0;3,0,9")
    with pytest.raises(limits.OutOfRange, match=r"speed must be between 0\.1 and 8 m/s, got 9 \(value 2 of 3\)"):
        limits.check_all("speed", [1.0, 9.0, 1.2], option="speed")
