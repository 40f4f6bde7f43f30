"""Each option list is defined once (backend/options.py): the CLI's choices,
the Blender enum items and the backend's own checks agree with it."""

from __future__ import annotations


def _choices(parser, command, flag):
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    p = sub.choices[command]
    return tuple(next(a for a in p._actions if flag in a.option_strings).choices)


def test_cli_choices_come_from_the_option_lists():
    from rigmind.backend import options
    from rigmind.cli import build_parser

    ap = build_parser()
    assert _choices(ap, "retarget", "--root-mode") == options.ROOT_MODES
    assert _choices(ap, "walk", "--gait") == options.GAITS
    assert _choices(ap, "walk", "--controller") == options.CONTROLLER_KINDS
    assert _choices(ap, "face", "--method") == options.FACE_METHODS
    assert _choices(ap, "face", "--runtime") == options.RUNTIMES
    assert _choices(ap, "gesture", "--base") == options.GESTURE_BASES
    assert _choices(ap, "export", "--preset") == options.EXPORT_PRESETS


def test_backend_lists_are_the_option_lists():
    from rigmind.backend import options
    from rigmind.backend import retarget
    from rigmind.backend.face import generate as face_generate
    from rigmind.backend.face import model as face_model
    from rigmind.backend.gesture import generate as gesture_generate
    from rigmind.backend.locomotion import dataset, vector_layout

    assert tuple(retarget.ROOT_MODES) == options.ROOT_MODES
    assert dataset.D2_STYLES == options.STYLES and vector_layout.STYLES == options.STYLES
    assert face_generate.METHODS == options.FACE_METHODS
    assert face_model.RUNTIMES == options.RUNTIMES and gesture_generate.RUNTIMES == options.RUNTIMES


def test_blender_side_uses_the_option_lists():
    from rigmind.backend import options
    from rigmind.blender_addon import properties
    from rigmind.backend.locomotion import controllers
    from rigmind.operators import export

    def ids(items):
        return tuple(i[0] for i in items)

    assert properties.STYLES == options.STYLES and ids(properties.STYLE_ITEMS) == options.STYLES
    assert ids(properties.GAIT_ITEMS) == options.GAITS
    assert ids(properties.CONTROLLER_ITEMS) == options.CONTROLLER_KINDS
    assert ids(properties.ROOT_MODE_ITEMS) == options.ROOT_MODES
    assert ids(properties.FACE_METHOD_ITEMS) == options.FACE_METHODS
    assert ids(properties.BASE_ITEMS) == options.GESTURE_BASES
    assert ids(properties.EXPORT_FORMAT_ITEMS) == options.EXPORT_FORMATS
    assert controllers.KINDS == options.CONTROLLER_KINDS
    assert tuple(export.PRESETS) == options.EXPORT_PRESETS
