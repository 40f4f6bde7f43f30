"""What the user asked an export for: one frozen value per file.

Built by the Export Character operator from its properties
(:func:`from_properties`) and by ``rigmind export`` from its arguments;
passed whole to ``operators.export.export_requested``.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import JobRequest


@dataclass(frozen=True)
class ExportRequest(JobRequest):
    """A character and one take into a file.

    ``path``: the file to write; its suffix picks the format (.bvh .fbx .glb
    .gltf .blend). ``preset``: the target's conventions
    (``backend.options.EXPORT_PRESETS``). ``take``: the action to export
    (None: the armature's active one). ``frame_range``: inclusive scene
    frames ``(first, last)`` (None: the take's keyed range). ``with_mesh``:
    FBX/glTF carry the character's meshes too."""

    path: object = None
    preset: str = "generic"
    take: str | None = None
    frame_range: tuple | None = None
    with_mesh: bool = True


def from_properties(props: dict, path) -> ExportRequest:
    """A request from the Export Character operator's properties, passed
    whole as Blender's ``Operator.as_keywords()`` gives them, with ``path``:
    the operator's file path made absolute and given the suffix of its
    ``format`` (BVH, FBX, GLB)."""
    return ExportRequest(path=path, preset=props.get("preset", "generic"), take=props.get("take") or None)


__all__ = ["ExportRequest", "from_properties"]
