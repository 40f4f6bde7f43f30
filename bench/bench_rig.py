"""The target rig shared by the benchmarks: the Mixamo X Bot from
shared/data/characters (65 `mixamorig:` bones; local use only, never shipped)
when present, else RigMind's 55-bone mannequin."""

import argparse
from pathlib import Path


def data_parser() -> argparse.ArgumentParser:
    """A benchmark's argument parser with ``--data``, the data folder
    (default: RigMind's, ``$RIGMIND_DATA`` or ../shared/data)."""
    from rigmind.backend.paths import data_dir

    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(data_dir()))
    return ap


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
