"""Path actions as the user writes them (`rigmind walk --action`, the panel's
Actions field, batch manifests): read, and refused in one line where they do
not fit the path (issue #28)."""

from __future__ import annotations

import pytest

from rigmind.backend.errors import UserError
from rigmind.backend.locomotion.actions.action_plan import (
    JUMP_CLEARANCE_M, ActionPlan, Crouch, Jump, check_plan, parse_actions,
)

pytestmark = pytest.mark.pure

CLIP_LENGTH = 0.63  # a jump's air travel where it gives none (m)


def test_the_issue_example_reads_in_path_order():
    plan = parse_actions(["jump@13", "crouch@7-10", "jump@3"])
    assert plan.jumps == (Jump(3.0), Jump(13.0)) and plan.crouches == (Crouch(7.0, 10.0),)
    assert plan.text() == "jump@3; crouch@7-10; jump@13"
    assert check_plan(plan, 20.0, CLIP_LENGTH) is plan


def test_one_field_with_semicolons_reads_like_repeated_options():
    assert parse_actions("JUMP@3 ; crouch@7-10;") == parse_actions(["jump@3", "crouch@7-10"])


def test_a_jump_takes_height_and_length():
    plan = parse_actions(["jump@4,height=0.3,length=1.2"])
    assert plan.jumps == (Jump(4.0, 0.3, 1.2),)
    assert parse_actions([plan.text()]) == plan


def test_start_poses():
    assert parse_actions([], "lying-down").start == "lying-down"
    assert parse_actions([]).empty and not parse_actions([], "lying-up").empty


@pytest.mark.parametrize("text,words", [
    ("fly@3", "unknown action 'fly'"),
    ("jump", "say where along the path"),
    ("jump@", "say where along the path"),
    ("jump@x", "'x' is not a number"),
    ("jump@nan", "finite"),
    ("jump@3,height=2", "height must be between 0.1 and 0.7 m"),
    ("jump@3,length=-1", "length must be between 0 and 2.5 m"),
    ("jump@3,height=0.3,height=0.4", "height given twice"),
    ("jump@3,spin=1", "a jump takes height=METRES and length=METRES"),
    ("crouch@5", "a crouch takes a range START-END"),
    ("crouch@6-4", "start must be before its end"),
    ("crouch@6-6.2", "at least 0.5 m"),
    ("crouch@2-x", "'x' is not a number"),
])
def test_bad_actions_are_one_line(text, words):
    with pytest.raises(UserError) as e:
        parse_actions([text])
    assert words in str(e.value) and "\n" not in str(e.value)


def test_an_unknown_start_is_refused():
    with pytest.raises(UserError, match="use one of standing, lying-up, lying-down"):
        parse_actions([], "sitting")


@pytest.mark.parametrize("texts,words", [
    (["jump@19.5"], "past the path's end"),
    (["jump@0.2"], f"needs {JUMP_CLEARANCE_M:g} m of path before it"),
    (["crouch@15-25"], "the path is 20.00 m long"),
    (["crouch@2-6", "crouch@5-8"], "overlap"),
    (["crouch@2-6", "jump@4"], "inside or next to the crouch"),
    (["crouch@2-6", "jump@6.2"], "inside or next to the crouch"),
    (["jump@3", "jump@3.5"], "before the first has landed"),
])
def test_actions_that_do_not_fit_the_path_are_one_line(texts, words):
    with pytest.raises(UserError) as e:
        check_plan(parse_actions(texts), 20.0, CLIP_LENGTH)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_a_crouched_gait_takes_no_crouch_ranges():
    with pytest.raises(UserError, match="already crouches the whole path"):
        check_plan(parse_actions(["crouch@2-6"]), 20.0, CLIP_LENGTH, gait="crouch")
    check_plan(parse_actions(["jump@3"]), 20.0, CLIP_LENGTH, gait="crouch")


def test_the_jump_length_counts_towards_the_end():
    check_plan(parse_actions(["jump@18"]), 20.0, CLIP_LENGTH)
    with pytest.raises(UserError, match="lands at 20.00 m"):
        check_plan(parse_actions(["jump@18,length=2"]), 20.0, CLIP_LENGTH)


def test_an_empty_plan_fits_any_path():
    assert check_plan(ActionPlan(), 1.0, CLIP_LENGTH).empty
