"""A rig in other units is refused with its scale and the fix, never with a
speed the user did not give (issue #27; the add-on and the CLI share it)."""

from __future__ import annotations

import pytest

from rigmind.backend.locomotion.walk_speeds import RigScaleError, check_rig_scale

pytestmark = pytest.mark.pure


@pytest.mark.parametrize("leg", [0.1, 0.45, 0.85, 1.2, 10.0])
def test_characters_from_toys_to_giants_walk(leg):
    check_rig_scale(leg, "Rig")


@pytest.mark.parametrize("leg,words", [
    (84.5, "built in centimetres: scale it by 0.01"),
    (845.0, "built in millimetres: scale it by 0.001"),
    (33.3, "built in inches: scale it by 0.0254"),
    (0.009, "scale it by 100"),
])
def test_other_units_are_named_with_the_fix(leg, words):
    with pytest.raises(RigScaleError) as e:
        check_rig_scale(leg, "Rig")
    text = str(e.value)
    assert words in text and "m/s" not in text and "\n" not in text
