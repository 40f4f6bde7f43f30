"""Each option list is defined once (backend/options.py): the CLI's choices,
the Blender enum items and the backend's own checks agree with it."""

from __future__ import annotations


def _choices(parser, command, flag):
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    p = sub.choices[command]
    return tuple(next(a for a in p._actions if flag in a.option_strings).choices)


def test_cli_choices_come_from_the_option_lists():
    from rigmind.backend import options as O
    from rigmind.cli import build_parser

    ap = build_parser()
    assert _choices(ap, "retarget", "--root-mode") == O.ROOT_MODES
    assert _choices(ap, "walk", "--gait") == O.GAITS
    assert _choices(ap, "walk", "--controller") == O.CONTROLLER_KINDS
    assert _choices(ap, "face", "--method") == O.FACE_METHODS
    assert _choices(ap, "face", "--runtime") == O.RUNTIMES
    assert _choices(ap, "gesture", "--base") == O.GESTURE_BASES
    assert _choices(ap, "export", "--preset") == O.EXPORT_PRESETS


def test_backend_lists_are_the_option_lists():
    from rigmind.backend import options as O
    from rigmind.backend import retarget
    from rigmind.backend.face import generate as face_generate
    from rigmind.backend.face import model as face_model
    from rigmind.backend.gesture import generate as gesture_generate
    from rigmind.backend.locomotion import dataset, vector_layout

    assert tuple(retarget.ROOT_MODES) == O.ROOT_MODES
    assert dataset.D2_STYLES == O.STYLES and vector_layout.STYLES == O.STYLES
    assert face_generate.METHODS == O.FACE_METHODS
    assert face_model.RUNTIMES == O.RUNTIMES and gesture_generate.RUNTIMES == O.RUNTIMES


def test_blender_side_uses_the_option_lists():
    from rigmind.backend import options as O
    from rigmind.blender_addon import properties as P
    from rigmind.backend.locomotion import controllers
    from rigmind.operators import export

    def ids(items):
        return tuple(i[0] for i in items)

    assert P.STYLES == O.STYLES and ids(P.STYLE_ITEMS) == O.STYLES
    assert ids(P.GAIT_ITEMS) == O.GAITS
    assert ids(P.CONTROLLER_ITEMS) == O.CONTROLLER_KINDS
    assert ids(P.ROOT_MODE_ITEMS) == O.ROOT_MODES
    assert ids(P.FACE_METHOD_ITEMS) == O.FACE_METHODS
    assert ids(P.BASE_ITEMS) == O.GESTURE_BASES
    assert ids(P.EXPORT_FORMAT_ITEMS) == O.EXPORT_FORMATS
    assert controllers.KINDS == O.CONTROLLER_KINDS
    assert tuple(export.PRESETS) == O.EXPORT_PRESETS
