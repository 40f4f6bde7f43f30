"""The target rig shared by the benchmarks: the Mixamo X Bot from
shared/data/characters (65 `mixamorig:` bones; local use only, never shipped)
when present, else RigMind's 55-bone mannequin."""

from pathlib import Path


def load_bench_rig(data_dir):
    """Load the rig into a fresh scene and return its armature object."""
    import bpy

    from rigmind.operators import rig_files

    xbot = Path(data_dir) / "characters" / "Xbot.glb"
    if xbot.exists():
        rig_files.load_rig_file(xbot)
        return rig_files.find_armature()
    from rigmind.operators import mannequin

    bpy.ops.wm.read_factory_settings(use_empty=True)
    return mannequin.build_mannequin()["armature"]
