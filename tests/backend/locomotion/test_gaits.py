"""A "run" that means what it says (issue #12: "Run at its default speed has
a flight phase in every stride"). The Bandai data has no elderly running:
the elderly style's "run" clips never leave the ground. RigMind makes what
the data has, a grounded run, names the action for it and warns when a run
is asked of that style. No bpy."""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend.locomotion import gaits
from rigmind.backend.locomotion.dataset import D2_STYLES


def test_only_the_elderly_run_is_grounded():
    for style in D2_STYLES:
        assert not gaits.is_grounded_run(style, "walk")
        assert gaits.is_grounded_run(style, "run") == (style == "elderly"), style
        assert gaits.gait_title(style, "run") == ("Grounded Run" if style == "elderly" else "Run")
        assert gaits.gait_title(style, "walk") == "Walk"


def test_action_names_and_the_warning_say_what_was_made():
    from rigmind.backend.locomotion import walk_names, walk_speeds

    assert walk_names.path_action_name("elderly", 1.47, "run").startswith("RigMind Grounded Run Along Path · elderly")
    assert walk_names.cycle_action_name("elderly", 1.47, "run").startswith("RigMind Grounded Run · elderly")
    assert walk_names.path_action_name("normal", 2.88, "run").startswith("RigMind Run Along Path · normal")
    speed, warning = walk_speeds.resolve_speed(None, "elderly", "run")
    assert speed == pytest.approx(walk_speeds.style_speeds("elderly", "run")[0], abs=1e-3)
    assert "no flight phase" in warning and "grounded run" in warning and "\n" not in warning
    # Clamping still says the range, and the gait note comes with it.
    _, warning = walk_speeds.resolve_speed(9.0, "elderly", "run")
    assert "clamped" in warning and "grounded run" in warning
    assert walk_speeds.resolve_speed(None, "normal", "run")[1] is None
    assert walk_speeds.resolve_speed(None, "elderly", "walk")[1] is None


def _lowest_foot_peak(motion) -> float:
    """Median over strides of the highest the lower foot gets above its
    planted level (m): ~0 when a foot is always down."""
    from rigmind.backend.locomotion.metrics import BANDAI_PLANTED_HEIGHT, FOOT_JOINTS

    P = motion.world_positions()
    n = motion.skeleton.names
    lift = np.stack([P[:, n.index(j), 2] - BANDAI_PLANTED_HEIGHT[j] for j in FOOT_JOINTS], 1)
    lift = lift - np.percentile(lift, 2, axis=0)
    left = (lift[:, 0] < 0.02) | (lift[:, 1] < 0.02)
    td = np.nonzero(left[1:] & ~left[:-1])[0] + 1
    low = lift.min(axis=1)
    return float(np.median([low[a:b].max() for a, b in zip(td[:-1], td[1:]) if b - a > 5]))


def test_the_data_has_no_elderly_flight(data_dir):
    """The claim behind the grounded run, on the clips themselves: the
    elderly run clips keep a foot within ~1 cm of the floor in every stride,
    the normal style's runs lift both feet several cm."""
    from rigmind.backend.locomotion import dataset
    from rigmind.backend.locomotion import features

    clips = [c for c in dataset.list_clips(data_dir, datasets=("d2",)) if c.content == "run"]
    elderly = [c for c in clips if c.style_key == "elderly"][:4]
    normal = [c for c in clips if c.style_key == "normal"][:2]
    if not elderly or not normal:
        pytest.skip("no Bandai d2 run clips in the data folder")
    assert all(_lowest_foot_peak(features.load_clip(c)) < 0.02 for c in elderly)
    assert all(_lowest_foot_peak(features.load_clip(c)) > 0.03 for c in normal)
