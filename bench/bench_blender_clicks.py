"""Generate Gesture, Generate Face and Walk Along Path inside Blender: the
first click (models and modules loaded on demand) and the second click, in
one fresh Blender (bpy) process with the add-on registered, on the
mannequin, with 60 s of speech (the file given) and a 22 m path. Prints JSON.

Runs with any checkout's interpreter, so before/after can be compared:

    /work/main/.venv/bin/python bench/bench_blender_clicks.py SPEECH.wav
    .venv/bin/python bench/bench_blender_clicks.py SPEECH.wav

(bench/bench_commands.py --blender runs it for every tree it times.)
"""

import json
import os
import sys
import tempfile
import time

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-bench-clicks-"))
T0 = time.perf_counter()

import bpy  # noqa: E402

PATH_22M = [(0, 0), (10, 0), (10, 6), (16, 6)]


def _polyline(points):
    cu = bpy.data.curves.new("Path22m", "CURVE")
    sp = cu.splines.new("POLY")
    sp.points.add(len(points) - 1)
    for p, (x, y) in zip(sp.points, points):
        p.co = (x, y, 0.0, 1.0)
    ob = bpy.data.objects.new("Path22m", cu)
    bpy.context.scene.collection.objects.link(ob)
    return ob


def _click(idname, **kw):
    """A button click: the operator with the properties the panel fills from the scene settings."""
    from rigmind.operators.op_common import call_as_panel

    t = time.perf_counter()
    res = call_as_panel(idname, **kw)
    assert res == {"FINISHED"}, res
    return time.perf_counter() - t


def main():
    wav = os.path.abspath(sys.argv[1])
    out = {"import_bpy": time.perf_counter() - T0}
    t = time.perf_counter()
    import rigmind

    rigmind.register()
    out["register"] = time.perf_counter() - t
    bpy.ops.wm.read_factory_settings(use_empty=True)
    out["add_mannequin"] = _click("rigmind.add_mannequin")
    s = bpy.context.scene.rigmind
    s.audio_path = wav
    for k in (1, 2):
        out[f"generate_gesture_click{k}"] = _click("rigmind.generate_gesture")
    for k in (1, 2):
        out[f"generate_face_click{k}"] = _click("rigmind.generate_face")
    s.path_object = _polyline(PATH_22M)
    bpy.ops.object.select_all(action="DESELECT")
    for k in (1, 2):
        out[f"walk_along_path_click{k}"] = _click("rigmind.walk_along_path")
    out["torch_imported"] = "torch" in sys.modules
    out["whole_process"] = time.perf_counter() - T0
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()
