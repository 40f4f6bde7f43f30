"""Jumps, crouches and the crouched cycle on the user's rigs, read from the
file `rigmind walk` wrote (issue #28's acceptance; the scores are
evaluation/locomotion_action_scores.py's, the full table is
bench/bench_actions.py's)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import data_file
from rigmind.backend.bvh import read_bvh
from rigmind.evaluation import locomotion_action_scores as S

PATH = "0,0;6,0;6,5;1,5"
ACTIONS = ["--action", "jump@3", "--action", "crouch@7-10", "--action", "jump@13"]
MOCAP = "bandai_namco_d2_locomotion/bvh/dataset-2_walk_normal_001.bvh.gz"


def _rigmind(*args):
    r = subprocess.run([sys.executable, "-m", "rigmind", *map(str, args)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return r


@pytest.fixture(scope="module")
def rigs(tmp_path_factory):
    d = tmp_path_factory.mktemp("rigs")
    _rigmind("mannequin", "--out", d / "mannequin.blend")
    return {"mannequin": d / "mannequin.blend", "xbot": None}


def _rig(rigs, name):
    return rigs[name] if rigs[name] is not None else data_file("characters/Xbot.glb")


@pytest.fixture(scope="module", params=["mannequin", "xbot"])
def take(request, rigs, tmp_path_factory):
    """``(scores, rig name)`` of the acceptance take on a rig."""
    rig = _rig(rigs, request.param)
    d = tmp_path_factory.mktemp(request.param)
    _rigmind("retarget", "--src", data_file(MOCAP), "--rig", rig, "--out", d / "mocap.bvh")
    reference = float(np.percentile(S.joint_steps(read_bvh(d / "mocap.bvh").world_positions()), 99.9))
    _rigmind("walk", "--rig", rig, "--path", PATH, *ACTIONS, "--out", d / "x.bvh")
    points = np.array([[float(v) for v in p.split(",")] for p in PATH.split(";")])
    scores = S.score_take(read_bvh(d / "x.bvh"), points, [(3.0, 0.6), (13.0, 0.6)], [(7.0, 10.0)],
                          reference_step=reference)
    return scores, request.param


def test_each_jump_leaves_the_floor_and_rises(take):
    scores, rig = take
    assert len(scores["jumps"]) == 2
    for j in scores["jumps"]:
        assert j["air_s"] >= 0.25, (rig, j)
        assert j["apex_over_walking_m"] >= 0.12, (rig, j)
        # the flight is ballistic: its time is what gravity gives for its heights
        assert abs(j["flight_s"] - j["physics_s"]) < 0.07, (rig, j)
        assert abs(j["fitted_g"] - 9.81) < 1.0, (rig, j)  # on the rig, whatever its size


def test_the_crouch_keeps_the_hips_low(take):
    scores, rig = take
    (c,) = scores["crouches"]
    assert c["hips_ratio_max"] <= 0.8, (rig, c)


def test_the_hips_follow_the_path_and_arrive(take):
    scores, rig = take
    assert scores["path_error_mean_m"] <= 0.08 and scores["arrival_m"] <= 0.10, (rig, scores)


def test_transitions_step_no_more_than_the_mocap(take):
    scores, rig = take
    assert scores["transition_step_ratio"] <= 1.5, (rig, scores["transition_step_max_m"])


def test_the_crouched_cycle_loops_seamlessly(rigs, tmp_path):
    out = tmp_path / "c.bvh"
    _rigmind("walk", "--rig", rigs["mannequin"], "--cycle", "--gait", "crouch", "--out", out)
    seam = S.seam(read_bvh(out))
    assert seam["wrap_step_m"] <= seam["inner_step_max_m"] and seam["closure_m"] < 1e-3, seam
