"""The action clips RigMind ships (models/locomotion_actions.npz): checked
like the other model files, what they measure, and rebuilt the same from the
DeepMimic data (issue #28)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from rigmind.backend.locomotion.actions import clip_bank
from rigmind.backend.model_files import ModelFileError
from rigmind.backend.model_files.manifest import MANIFEST_NAME, file_sha256


def test_the_shipped_bank_loads_with_every_clip():
    bank = clip_bank.load_clip_bank()
    assert set(bank.clips) == set(clip_bank.CLIPS)
    for m in bank.clips.values():
        assert m.fps == clip_bank.BANK_FPS and np.all(np.isfinite(m.rotations)) and np.all(np.isfinite(m.root_positions))
    jump = bank.meta["jump"]
    # DeepMimic's jump: the hips rise ~25 cm over standing, ~0.45 s in the air, ~1.07 m travelled.
    assert 0.2 < jump["apex_rise"] < 0.3 and 0.3 < (jump["touch_down"] - jump["take_off"]) / 30 < 0.6
    assert 1.0 < jump["length"] < 1.15
    sneak = bank.meta["sneak"]
    assert 0.75 < sneak["hips_ratio"] < 0.85 and 0.3 < sneak["speed"] < 0.5


def test_a_replaced_bank_is_refused(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    src = clip_bank.bank_path()
    shutil.copy(src, folder / src.name)
    (folder / MANIFEST_NAME).write_text(f"{'0' * 64}  {src.name}\n")
    with pytest.raises(ModelFileError, match="does not match"):
        clip_bank.load_clip_bank(folder)


def test_a_missing_bank_says_how_to_rebuild(tmp_path):
    with pytest.raises(ModelFileError, match="rigmind train actions"):
        clip_bank.load_clip_bank(tmp_path)


@pytest.mark.data
def test_the_bank_rebuilds_from_the_data(tmp_path, data_dir):
    if not (data_dir / "deepmimic_motions").is_dir():
        pytest.skip(f"no deepmimic_motions in {data_dir}")
    (tmp_path / MANIFEST_NAME).write_text("")  # a folder with a manifest gets the new bank's hash recorded
    out = clip_bank.build_clip_bank(data_dir, tmp_path)
    assert (tmp_path / MANIFEST_NAME).read_text().split()[0] == file_sha256(out)
    fresh, shipped = clip_bank.load_clip_bank(tmp_path), clip_bank.load_clip_bank()
    for clip, measures in shipped.meta.items():
        assert fresh.meta[clip] == pytest.approx(measures, abs=1e-5)
    for name, m in shipped.clips.items():
        np.testing.assert_allclose(fresh.clips[name].rotations, m.rotations, atol=1e-6)
        np.testing.assert_allclose(fresh.clips[name].root_positions, m.root_positions, atol=1e-6)


def test_clips_go_onto_the_controller_skeleton():
    from rigmind.backend.locomotion.controllers import controller_skeleton, load_controller
    from rigmind.backend.locomotion.path_follow import standing_pose

    ctl = load_controller("neural", styles=["normal"], gait="walk")
    sk = controller_skeleton(ctl)
    stand = standing_pose(ctl, (0.0, 0.0), 0.0, "normal")
    jump = clip_bank.clip_on(sk, "jump", stand)
    assert jump.skeleton is sk and jump.num_frames == clip_bank.load_clip_bank().clips["jump"].num_frames
    assert clip_bank.clip_on(sk, "jump", stand) is jump  # cached
    pos = jump.world_positions()
    names = list(sk.names)
    hips = pos[:, names.index("Hips"), 2]
    assert hips.max() - np.median(hips[:3]) > 0.15  # still a jump on the Bandai legs
    # On the standing pose as its rest, the pelvis faces where the feet point
    # (on the Bandai rest, every bone along X, it came out turned ~35 degrees).
    side = (pos[:, names.index("UpperLeg_L")] - pos[:, names.index("UpperLeg_R")])[:, :2]
    pelvis = np.arctan2(-side[:, 0], side[:, 1])
    for s in "LR":
        toe = (pos[:, names.index(f"Toes_{s}")] - pos[:, names.index(f"Foot_{s}")])[:, :2]
        turn = np.degrees(np.angle(np.exp(1j * (np.arctan2(toe[:, 1], toe[:, 0]) - pelvis))))
        assert abs(np.median(turn)) < 15, np.median(turn)
    # ... and stands on the pose's feet (ankles within 1 cm of the stand's at the start)
    ankle = pos[0, names.index("Foot_L"), 2]
    assert abs(ankle - stand.world_positions()[0, names.index("Foot_L"), 2]) < 0.01
