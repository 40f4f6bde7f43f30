"""Issue #28: a DeepMimic clip through ``rigmind retarget`` (``rigmind.cli.main``
in this process) onto the mannequin, measured from the BVH it writes: the
jump's hips rise ~25 cm and travel ~1.07 m forward (the source's figures,
scaled by the leg ratio the command prints), 107 frames at 60 fps, the feet
on the floor at the start and never under it."""

from __future__ import annotations

import re

import pytest

from conftest import data_file

JUMP = "deepmimic_motions/humanoid3d_jump.txt"
# The source's own figures (its pelvis, humanoid3d_jump.txt): rise and forward travel, metres.
SOURCE_RISE, SOURCE_TRAVEL = 0.247, 1.066


def test_jump_onto_the_mannequin_through_the_cli(bpy_clean, tmp_path, capsys):
    from rigmind import cli
    from rigmind.backend.bone_mapping import auto_map
    from rigmind.backend.bvh import read_bvh
    from rigmind.operators import mannequin

    src = data_file(JUMP)
    blend = mannequin.save_mannequin(tmp_path / "MANNEQUIN.blend")
    out = tmp_path / "x.bvh"
    assert cli.main(["retarget", "--src", str(src), "--rig", str(blend), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "humanoid3d_jump.txt: 107 frames at 60 fps, mapping 'deepmimic'" in printed
    k = float(re.search(r"leg scale ([\d.]+)", printed).group(1))
    assert 0.8 < k < 1.25

    text = out.read_text()
    assert "Frames: 107\n" in text and re.search(r"Frame Time: 0\.01666", text)
    m = read_bvh(out, up="Y", units="cm")  # the generic export: centimetres, Y up
    assert (m.num_frames, m.fps) == (107, pytest.approx(60.0, rel=1e-4))
    bones = auto_map(m.skeleton).bones
    pos = m.world_positions()
    rest = m.skeleton.rest_positions()

    hips = pos[:, m.skeleton.index(bones["hips"])]
    rise = hips[:, 2].max() - hips[0, 2]
    travel = hips[-1] - hips[0]
    print(f"mannequin jump: leg scale {k:.3f}, hips rise {rise:.3f} m, travel {travel.round(3).tolist()} m")
    assert rise == pytest.approx(SOURCE_RISE * k, abs=0.02)
    assert -travel[1] == pytest.approx(SOURCE_TRAVEL * k, abs=0.03)  # forward is -Y
    assert abs(travel[0]) < 0.1 * SOURCE_TRAVEL * k

    for side in "lr":
        foot = m.skeleton.index(bones[f"foot_{side}"])
        assert abs(pos[0, foot, 2] - rest[foot, 2]) < 0.02, side  # standing at its rest ankle height
        low = pos[:, [m.skeleton.index(bones[c]) for c in (f"foot_{side}", f"toes_{side}")], 2]
        assert low.min() > -0.01, side  # never under the floor


@pytest.mark.parametrize("name,text,expect", [
    ("notes.txt", "walk cycle, take 3\n", "unsupported source: a .txt or .json source must be a DeepMimic clip"),
    ("clip.json", '{"Loop": "wrap"}', 'JSON without "Frames" (keys: Loop)'),
    ("short.txt", '{"Frames": [[0.1, 0, 0.9, 0]]}', "frame 0 holds 4 numbers, a humanoid3d frame 44"),
])
def test_a_txt_source_that_is_not_a_deepmimic_clip_is_one_line(bpy_clean, tmp_path, capsys, name, text, expect):
    from rigmind import cli
    from rigmind.operators import mannequin

    blend = mannequin.save_mannequin(tmp_path / "MANNEQUIN.blend")
    (tmp_path / name).write_text(text)
    out = tmp_path / "x.bvh"
    assert cli.main(["retarget", "--src", str(tmp_path / name), "--rig", str(blend), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert expect in err and name in err and "\n" not in err and "Traceback" not in err
    assert not out.exists()
