"""Per-scene RigMind settings, stored on ``bpy.types.Scene.rigmind``.

They live on the scene (not on the preferences) so that they are saved with
the .blend file and each scene can drive its own character.
"""

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

# Style labels of the Bandai Namco motion datasets the locomotion model was
# trained on; identifiers are the dataset's own lowercase labels so operators
# can hand them to the backend unchanged.
STYLES = ("active", "elderly", "exhausted", "feminine", "masculine", "normal", "youthful")

# Identifiers are short names; scene.render.engine wants Blender's own.
RENDER_ENGINES = {
    "EEVEE": "BLENDER_EEVEE",
    "CYCLES": "CYCLES",
    "WORKBENCH": "BLENDER_WORKBENCH",
}


# Blender calls these with (property group, candidate object). Assigning from
# Python does not go through them, so operators must still check the type.
def poll_armature(_self, obj):
    return obj is not None and obj.type == "ARMATURE"


def poll_face_mesh(_self, obj):
    # A lone "Basis" key has nothing to animate, so at least one more is needed.
    if obj is None or obj.type != "MESH":
        return False
    keys = obj.data.shape_keys
    return keys is not None and len(keys.key_blocks) > 1


def poll_path_object(_self, obj):
    # Empties allow a path driven by keyed locations instead of a curve.
    return obj is not None and obj.type in {"CURVE", "EMPTY"}


class RigMindBoneMapItem(bpy.types.PropertyGroup):
    """One row of the editable humanoid mapping: canonical joint -> rig bone."""

    canonical: StringProperty(name="Joint", description="Canonical humanoid joint")
    bone: StringProperty(name="Bone", description="The target rig's bone that plays this joint (empty: none)")
    confidence: FloatProperty(name="Confidence", min=0.0, max=1.0)


class RigMindSceneProperties(bpy.types.PropertyGroup):
    # --- retarget mapping (filled by Detect, edited in the list) ---------------
    bone_map: CollectionProperty(type=RigMindBoneMapItem)
    bone_map_index: IntProperty(name="Active joint", default=0)
    bone_map_name: StringProperty(
        name="Preset Name", description="Name of the user bone-map preset to save", default="my_rig"
    )

    # --- character -------------------------------------------------------------
    target_armature: PointerProperty(
        name="Armature",
        description="Armature that receives the generated animation",
        type=bpy.types.Object,
        poll=poll_armature,
    )
    face_mesh: PointerProperty(
        name="Face Mesh",
        description="Mesh whose shape keys receive the lip-sync and facial animation",
        type=bpy.types.Object,
        poll=poll_face_mesh,
    )
    face_method: EnumProperty(
        name="Lip Sync",
        description="How the mouth is found when there is no transcript (a .txt beside the audio is used when present)",
        items=[
            ("model", "Learned Model", "Fast (under a second per minute of speech), any language"),
            ("words", "Recognise Words (English)", "English word recognition, then alignment: about 3x fewer lip-sync "
                                                   "errors on English, about 15 s per minute of speech"),
            ("table", "Phone Table", "Phone recognition and a viseme table (the Rhubarb-style baseline)"),
        ],
        default="model",
    )

    # --- locomotion ------------------------------------------------------------
    style: EnumProperty(
        name="Style",
        description="Movement style",
        items=[(s, s.capitalize(), f"{s.capitalize()} movement style") for s in STYLES],
        default="normal",
    )
    gait: EnumProperty(
        name="Gait",
        items=(
            ("walk", "Walk", "Walking gait"),
            ("run", "Run", "Running gait"),
        ),
        default="walk",
    )
    speed_from_style: BoolProperty(
        name="Style's Speed",
        description="Walk (or run) at the style's own speed, the median of its motion-capture clips "
                    "(scaled to the rig's legs), instead of Speed",
        default=True,
    )
    speed: FloatProperty(
        name="Speed",
        description="Forward speed of the character, in metres per second",
        min=0.2,
        max=6.0,
        default=1.3,
        step=10,
        precision=2,
        unit="VELOCITY",
    )
    mode: EnumProperty(
        name="Mode",
        items=(
            ("CYCLE", "Cycle", "Bake a looping cycle at a constant speed"),
            ("PATH", "Path", "Walk along a curve or the keyed positions of an empty"),
        ),
        default="CYCLE",
    )
    path_object: PointerProperty(
        name="Path",
        description="Curve, or animated empty, that the character follows",
        type=bpy.types.Object,
        poll=poll_path_object,
    )
    in_place: BoolProperty(
        name="In Place",
        description="No horizontal root motion: a cycle walks on the spot; along a path, the path's walk "
                    "(turns, speed changes, the stop) is played on the spot",
        default=False,
    )

    # --- speech ----------------------------------------------------------------
    audio_path: StringProperty(
        name="Audio",
        description="Speech recording that drives gestures and the face",
        subtype="FILE_PATH",
        default="",
    )
    gesture_amount: FloatProperty(
        name="Gesture Amount",
        description="How animated the gestures are: 0 calm, 0.5 like the training speaker, 1 very animated",
        min=0.0,
        max=1.0,
        default=0.5,
        subtype="FACTOR",
    )

    gesture_base: EnumProperty(
        name="Base",
        description="What the gestures are layered over",
        items=(
            ("idle", "Idle", "The whole body from the gesture model (weight shifts, planted feet)"),
            ("keep_legs", "Keep Legs", "Keep the armature's current action (e.g. a walk) for the hips and legs"),
        ),
        default="idle",
    )
    set_scene_fps: BoolProperty(
        name="Set Scene FPS",
        description="Set the scene to 30 fps (the model's rate) so keys land on whole frames",
        default=True,
    )

    # --- generation --------------------------------------------------------------
    seed: IntProperty(
        name="Seed",
        description="Random seed; the same seed and inputs give the same animation",
        min=0,
        default=0,
    )
    start_frame: IntProperty(
        name="Start Frame",
        description="Frame at which the generated animation begins",
        default=1,
    )

    # --- export & render ---------------------------------------------------------
    export_format: EnumProperty(
        name="Format",
        items=(
            ("BVH", "BVH", "Biovision hierarchy (skeleton and motion only)"),
            ("FBX", "FBX", "Autodesk FBX with baked animation"),
            ("GLB", "glTF Binary", "glTF 2.0 binary (.glb)"),
        ),
        default="FBX",
    )
    export_path: StringProperty(
        name="Export Path",
        description="File to export to; the extension follows the format",
        subtype="FILE_PATH",
        default="//rigmind_export",
    )
    render_engine: EnumProperty(
        name="Engine",
        items=(
            ("EEVEE", "EEVEE", "Real-time rasteriser"),
            ("CYCLES", "Cycles", "Path tracer"),
            ("WORKBENCH", "Workbench", "Fast solid shading for previews"),
        ),
        # Cycles runs anywhere; EEVEE and Workbench abort a headless Blender
        # that has no OpenGL/EGL driver.
        default="CYCLES",
    )
    render_path: StringProperty(
        name="Render Output",
        description="Output file: .png renders the current frame, .mp4 the frame range with sound",
        subtype="FILE_PATH",
        default="//rigmind_render.mp4",
    )


CLASSES = (RigMindBoneMapItem, RigMindSceneProperties)


def attach():
    bpy.types.Scene.rigmind = PointerProperty(type=RigMindSceneProperties)


def detach():
    # Values already stored in scenes stay in their ID properties (and in saved
    # .blend files) and show up again when the add-on is enabled again.
    if hasattr(bpy.types.Scene, "rigmind"):
        del bpy.types.Scene.rigmind
