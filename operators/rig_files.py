"""Open rig files (.blend, .glb/.gltf, .fbx, .bvh) into the current Blender
session and describe what RigMind sees in them."""

from __future__ import annotations

import os
from pathlib import Path

from ..backend.errors import UserError
from ..backend.fbx_check import FBXFileError, check_fbx
from ..backend.gltf_refs import GLTFReferenceError, check_references
from ..backend.quiet_terminal import redirected

RIG_SUFFIXES = (".blend", ".glb", ".gltf", ".fbx", ".bvh")


class RigFileError(UserError):
    """A rig file that is missing, of an unknown kind, or unreadable."""


def quiet_stdout():
    """Silence Blender's and the importers' progress chatter on stdout (C-level
    prints included) so command output stays readable; stderr is kept."""
    return redirected(os.devnull, fds=(1,))


def _check(path) -> Path:
    p = Path(path)
    if not p.exists():
        raise RigFileError(f"{p}: no such file")
    if not p.is_file():
        raise RigFileError(f"{p}: not a file")
    suffix = "".join(p.suffixes[-2:]).lower() if p.name.lower().endswith(".bvh.gz") else p.suffix.lower()
    if suffix not in RIG_SUFFIXES + (".bvh.gz",):
        raise RigFileError(f"{p}: unsupported file type {suffix or '(none)'}; use one of .blend .glb .gltf .fbx .bvh")
    return p


def load_rig_file(path, *, replace_scene: bool = True) -> list:
    """Load ``path`` and return the objects it brought in.

    ``.blend`` files are opened (replacing the session); other formats are
    imported into an empty scene (or the current one with ``replace_scene=False``)
    with Blender's own importers, except BVH which goes through RigMind's
    reader so ``info`` shows exactly the skeleton RigMind will use.
    """
    import bpy

    p = _check(path)
    suffix = p.suffix.lower()
    if suffix == ".blend":
        try:
            with quiet_stdout():
                bpy.ops.wm.open_mainfile(filepath=str(p))
        except RuntimeError as e:
            raise RigFileError(f"{p}: Blender could not open it ({first_line(e)})") from None
        return list(bpy.data.objects)
    if replace_scene:
        bpy.ops.wm.read_factory_settings(use_empty=True)
    before = set(bpy.data.objects)
    try:
        with quiet_stdout():
            _import_file(bpy, p, suffix)
    except (RigFileError, GLTFReferenceError, FBXFileError):
        raise
    except (UserError, RuntimeError) as e:  # our BVH reader's BVHError; Blender's importers' RuntimeError
        if "KeyboardInterrupt" in str(e):
            raise KeyboardInterrupt from None
        raise RigFileError(f"{p}: could not be read ({first_line(e)})") from None
    return [o for o in bpy.data.objects if o not in before]


def import_foreign(bpy, p: Path) -> None:
    """Blender's FBX or glTF importer on ``p``, once RigMind has checked what
    the importer would read: a glTF's URIs (backend/gltf_refs.py), an FBX's
    declared sizes (backend/fbx_check.py). Both checks raise a UserError."""
    if p.suffix.lower() == ".fbx":
        check_fbx(p)
        bpy.ops.import_scene.fbx(filepath=str(p))
    else:
        check_references(p)
        bpy.ops.import_scene.gltf(filepath=str(p))


def _import_file(bpy, p: Path, suffix: str) -> None:
    if suffix in (".glb", ".gltf", ".fbx"):
        import_foreign(bpy, p)
    else:
        from ..backend.bvh import read_bvh
        from .scene_io import build_armature

        motion = read_bvh(p)
        build_armature(motion.skeleton, name=motion.name or p.stem)


def first_line(e: Exception) -> str:
    """What an importer's error says, in one line. A Python importer that
    failed reports ``Error: Python: Traceback ...`` and the frames: its last
    line (the exception) is the one that says something."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    if any("traceback (most recent call last)" in ln.lower() for ln in lines[:2]):
        told = [ln for ln in lines if not ln.startswith(("File ", "Location: ", "^", "~"))]
        return told[-1][:300]
    for line in lines:
        if not line.lower().startswith("error: python traceback"):
            return line[:300]
    return type(e).__name__


def describe_scene(objects=None) -> dict:
    """Armatures (bones with parents) and meshes with shape keys."""
    import bpy

    objects = list(bpy.data.objects) if objects is None else objects
    out = {"armatures": [], "shape_key_meshes": [], "meshes": []}
    for ob in objects:
        if ob.type == "ARMATURE":
            out["armatures"].append(
                {
                    "name": ob.name,
                    "bones": [
                        {"name": b.name, "parent": b.parent.name if b.parent else None}
                        for b in ob.data.bones
                    ],
                    "rotation_euler_deg": [round(a * 57.29577951308232, 3) for a in ob.rotation_euler],
                    "scale": [round(s, 6) for s in ob.scale],
                }
            )
        elif ob.type == "MESH":
            out["meshes"].append(ob.name)
            key = ob.data.shape_keys
            if key is not None:
                out["shape_key_meshes"].append(
                    {"name": ob.name, "shape_keys": [kb.name for kb in key.key_blocks if kb != key.reference_key]}
                )
    return out


def add_mappings(desc: dict, objects) -> None:
    """Add each armature's detected humanoid mapping (or why there is none)."""
    from ..backend.bone_mapping import NotHumanoidError, auto_map
    from .scene_io import read_skeleton

    by_name = {o.name: o for o in objects}
    for a in desc["armatures"]:
        try:
            m = auto_map(read_skeleton(by_name[a["name"]]))
        except NotHumanoidError as e:
            a["mapping"] = {"error": str(e)}
            continue
        a["mapping"] = {
            "preset": m.preset,
            "confidence": round(float(m.overall), 3),
            "bones": m.bones,
            "joint_confidence": {k: round(float(v), 3) for k, v in m.confidence.items()},
            "unmapped": list(m.unmapped),
        }


def format_description(desc: dict, path=None) -> str:
    lines = []
    if path is not None:
        lines.append(f"{path}")
    arms = desc["armatures"]
    lines.append(f"armatures: {len(arms)}")
    for a in arms:
        lines.append(f"  {a['name']}: {len(a['bones'])} bones (object rotation {a['rotation_euler_deg']} deg, scale {a['scale']})")
        for b in a["bones"]:
            lines.append(f"    {b['name']}" + (f"  <- {b['parent']}" if b["parent"] else "  (root)"))
        m = a.get("mapping")
        if m and "error" in m:
            lines.append(f"  humanoid mapping: none ({m['error']})")
        elif m:
            lines.append(
                f"  humanoid mapping: preset '{m['preset']}', confidence {m['confidence']:.2f}, "
                f"{len(m['bones'])} joints mapped, {len(m['unmapped'])} bones unmapped"
            )
            for joint, bone in m["bones"].items():
                lines.append(f"    {joint:<12} -> {bone}  ({m['joint_confidence'].get(joint, 0.0):.2f})")
    sk = desc["shape_key_meshes"]
    lines.append(f"meshes with shape keys: {len(sk)}")
    for m in sk:
        lines.append(f"  {m['name']}: {len(m['shape_keys'])} shape keys")
        lines.append("    " + ", ".join(m["shape_keys"]))
    return "\n".join(lines)


def find_armature(name: str | None = None):
    """The armature named ``name``, or the only/largest armature in the file."""
    import bpy

    arms = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    if name:
        ob = bpy.data.objects.get(name)
        if ob is None or ob.type != "ARMATURE":
            raise RigFileError(f"no armature named {name!r}; armatures here: {[a.name for a in arms]}")
        return ob
    if not arms:
        raise RigFileError("the file has no armature: RigMind needs a rigged character (an armature object)")
    return max(arms, key=lambda a: len(a.data.bones))
