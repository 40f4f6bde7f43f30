"""Per-scene RigMind settings, stored on ``bpy.types.Scene.rigmind``.

They live on the scene (not on the preferences) so that they are saved with
the .blend file and each scene can drive its own character.
"""

import json

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

from ..backend import options, paths

# Style labels of the Bandai Namco motion datasets the locomotion model was
# trained on; identifiers are the dataset's own lowercase labels so operators
# can hand them to the backend unchanged.
STYLES = options.STYLES

# Identifiers are short names; scene.render.engine wants Blender's own.
RENDER_ENGINES = {
    "EEVEE": "BLENDER_EEVEE",
    "CYCLES": "CYCLES",
    "WORKBENCH": "BLENDER_WORKBENCH",
}

# --- option ranges: options.RANGES (limits.RANGES), the CLI's and batch's table --------------

#: Blender stores an IntProperty in 32 bits: a range past this is clamped to it.
BLENDER_INT_MAX = 2**31 - 1


def hard_range(name: str, *, integer: bool = False) -> dict:
    """``min``/``max`` keywords for a property of the option ``name``: the
    limits of ``options.RANGES[name]`` (its unit is the table's; the CLI and
    batch check the same table through ``backend/limits.py``), so the panel, the
    CLI and batch refuse the same values. ``integer``: for an IntProperty
    (the seed's 2**32 - 1 becomes Blender's 32-bit largest int)."""
    lo, hi, _unit = options.RANGES[name]
    if integer:
        return dict(min=int(lo), max=min(int(hi), BLENDER_INT_MAX))
    return dict(min=float(lo), max=float(hi))


# --- option lists, shared by the scene settings and the operators' properties ------------


def _labels() -> dict:
    """Menu names and tooltips of every option list (presets/option_labels.json): data, kept beside the
    other presets so each list is written once here and its identifiers once in backend/options.py."""
    return json.loads((paths.PRESETS_DIR / "option_labels.json").read_text(encoding="utf-8"))


_LABELS = _labels()
_STYLE_LOOKS = _LABELS["style_looks"]


def _style_speeds() -> dict:
    """Each style's own walk / run speed (m/s, the median of its clips) from presets/locomotion_speeds.json."""
    try:
        data = json.loads((paths.PRESETS_DIR / "locomotion_speeds.json").read_text())
        return {k: (v["walk"]["default"], v["run"]["default"]) for k, v in data["styles"].items()}
    except (OSError, KeyError, ValueError):
        return {}


def _style_items():
    speeds = _style_speeds()
    items = []
    for s in STYLES:
        desc = _STYLE_LOOKS[s] + " (Bandai Namco motion-capture style"
        if s in speeds:
            desc += f"; own speed {speeds[s][0]:.2f} m/s walking, {speeds[s][1]:.2f} m/s running"
        items.append((s, s.capitalize(), desc + ")"))
    return items


STYLE_ITEMS = _style_items()


def _items(ids, key: str) -> tuple:
    """Enum items ``(identifier, name, description)`` for the option list
    ``ids`` (``backend/options.py``), in its order; ``_LABELS[key]`` maps each
    identifier to its ``[name, description]`` and must cover exactly ``ids``."""
    labels = _LABELS[key]
    if set(labels) != set(ids):
        raise KeyError(f"labels {sorted(labels)} do not match the option list {list(ids)}")
    return tuple((i, *labels[i]) for i in ids)


GAIT_ITEMS = _items(options.GAITS, "gaits")
START_POSE_ITEMS = _items(options.START_POSES, "start_poses")
FACE_METHOD_ITEMS = _items(options.FACE_METHODS, "face_methods")
BASE_ITEMS = _items(options.GESTURE_BASES, "gesture_bases")
EXPORT_FORMAT_ITEMS = _items(options.EXPORT_FORMATS, "export_formats")
RENDER_ENGINE_ITEMS = _items(tuple(RENDER_ENGINES), "render_engines")
CONTROLLER_ITEMS = _items(options.CONTROLLER_KINDS, "controller_kinds")
ROOT_MODE_ITEMS = _items(options.ROOT_MODES, "root_modes")
UP_AXIS_ITEMS = _items(("Y", "Z"), "up_axes")
MODE_ITEMS = _items(("CYCLE", "PATH"), "bake_modes")
TRACK_METHOD_ITEMS = _items(options.TRACK_METHODS, "track_methods")
TRACK_PLACEMENT_ITEMS = _items(options.TRACK_PLACEMENTS, "track_placements")
#: The gesture styles: "none" (the model's own), then the Bandai Namco labels.
GESTURE_STYLE_ITEMS = (("none", "None", "The model's own way of moving"),) + tuple(
    (s, s.replace("-", " ").capitalize(), f"Move like the Bandai Namco '{s}' gesture clips (learned from them)")
    for s in options.GESTURE_STYLES)


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


def _emotion(name: str) -> dict:
    """An emotion weight's keywords: 0..1 (the CLI's range), keyable."""
    return dict(name=name.capitalize(), default=0.0, subtype="FACTOR", **hard_range("emotion_weight"),
                description=f"How {name} the face and body are (0 neutral … 1 fully); key it to change over "
                            "the take: Generate Face and Generate Gesture follow its curve frame by frame")


class RigMindBoneMapItem(bpy.types.PropertyGroup):
    """One row of the editable humanoid mapping: canonical joint -> rig bone."""

    canonical: StringProperty(name="Joint", description="Canonical humanoid joint (RigMind's name, e.g. upperarm_l)")
    bone: StringProperty(name="Bone", description="The target rig's bone that plays this joint (empty: none)")
    confidence: FloatProperty(name="Confidence", min=0.0, max=1.0,
                              description="How sure the automatic mapping was of this joint (0 guess, 1 certain)")


class RigMindSceneProperties(bpy.types.PropertyGroup):
    # --- retarget mapping (filled by Detect, edited in the list) ---------------
    bone_map: CollectionProperty(
        type=RigMindBoneMapItem, name="Bone Mapping",
        description="Canonical joint -> rig bone, filled by Detect Mapping, edited in the list")
    bone_map_index: IntProperty(name="Active joint", default=0, description="Row selected in the bone mapping list")
    bone_map_name: StringProperty(name="Preset Name", description="Name of the user bone-map preset to save",
                                  default="my_rig")

    # --- character -------------------------------------------------------------
    target_armature: PointerProperty(name="Armature", description="Armature that receives the generated animation",
                                     type=bpy.types.Object, poll=poll_armature)
    face_mesh: PointerProperty(name="Face Mesh",
                               description="Mesh whose ARKit shape keys receive the lip-sync and facial animation "
                                           "(used when Auto Face is off)", type=bpy.types.Object, poll=poll_face_mesh)
    face_auto: BoolProperty(name="Auto Face",
                            description="Animate the character's mesh with the most ARKit shape keys (its head, "
                                        "never eyes or teeth) instead of Face Mesh", default=True)
    face_method: EnumProperty(name="Lip Sync",
                              description="How the mouth is found when there is no transcript (a .txt beside the "
                                          "audio is used when present)", items=FACE_METHOD_ITEMS, default="model")

    # --- locomotion ------------------------------------------------------------
    style: EnumProperty(name="Style",
                        description="Movement style of the walk or run (a Bandai Namco motion-capture style; each "
                                    "has its own speed)", items=STYLE_ITEMS, default="normal")
    gait: EnumProperty(name="Gait", description="Walk, run or crouch: picks the style's clips and its own speed",
                       items=GAIT_ITEMS, default="walk")
    speed_from_style: BoolProperty(name="Style's Speed",
                                   description="Walk (or run) at the style's own speed, the median of its "
                                               "motion-capture clips (scaled to the rig's legs), instead of Speed",
                                   default=True)
    # The slider spans everyday speeds; typed values may use the table's whole range.
    speed: FloatProperty(name="Speed", description="Forward speed of the character, in metres per second",
                         **hard_range("speed"), soft_min=0.2, soft_max=6.0, default=1.3, step=10, precision=2,
                         unit="VELOCITY")
    mode: EnumProperty(name="Mode", description="A looping cycle on the spot or in a line, or a walk along a path",
                       items=MODE_ITEMS, default="CYCLE")
    path_pauses: StringProperty(name="Pauses", default="",
                                description="Stops along the path: metres along it and seconds to stand there, "
                                            "pauses separated by ';' (e.g. 4,1.5; 9,2); empty: no stop")
    path_actions: StringProperty(name="Actions", default="",
                                 description="Jumps and crouches along the path, in metres along it, separated by "
                                             "';': jump@4 (take off 4 m along; jump@4,height=0.3,length=1.2 sets the "
                                             "hips' rise and air travel), crouch@7-10 (crouched from 7 to 10 m); "
                                             "empty: walk only")
    path_start: EnumProperty(name="Start", description="How the walk along the path begins",
                             items=START_POSE_ITEMS, default="standing")
    path_object: PointerProperty(name="Path", description="Curve, or animated empty, that the character follows",
                                 type=bpy.types.Object, poll=poll_path_object)
    in_place: BoolProperty(name="In Place",
                           description="No horizontal root motion: a cycle walks on the spot; along a path, the "
                                       "path's walk (turns, speed changes, the stop) is played on the spot",
                           default=False)

    # --- speech ----------------------------------------------------------------
    audio_path: StringProperty(name="Audio",
                               description="Speech recording (.wav, .flac, .ogg, .mp3) that drives gestures and "
                                           "the face; empty: the scene's first sound strip", subtype="FILE_PATH",
                               default="")
    gesture_amount: FloatProperty(name="Gesture Amount",
                                  description="How animated the gestures are: 0 calm, 0.5 like the training "
                                              "speaker, 1 very animated", **hard_range("amount"), default=0.5,
                                  subtype="FACTOR")

    # Animatable (no SKIP_SAVE): key them over the take; Generate Face and
    # Generate Gesture sample their curves at every frame (operators/emotion_keys.py).
    emotion_happy: FloatProperty(**_emotion("happy"))
    emotion_sad: FloatProperty(**_emotion("sad"))
    emotion_angry: FloatProperty(**_emotion("angry"))
    emotion_surprised: FloatProperty(**_emotion("surprised"))
    emotion_afraid: FloatProperty(**_emotion("afraid"))
    emotion_disgusted: FloatProperty(**_emotion("disgusted"))

    gesture_base: EnumProperty(name="Base", description="What the gestures are layered over", items=BASE_ITEMS,
                               default="idle")
    gesture_style: EnumProperty(name="Style", description="Move like one of the Bandai Namco styles",
                                items=GESTURE_STYLE_ITEMS, default="none")
    gesture_style_clip: StringProperty(name="Style Clip", subtype="FILE_PATH", default="",
                                       description="A clip (.bvh .fbx .glb .gltf .npz) of the speaker gesturing: the "
                                                   "take takes on its hand places, energy and hand shapes; empty: none")
    set_scene_fps: BoolProperty(name="Set Scene FPS",
                                description="Switch the scene to 30 fps (the gesture model's rate) so keys land on "
                                            "whole frames. Off: the scene keeps its frame rate and the keys are "
                                            "placed at the right times (seconds) on it", default=False)

    # --- tracking (head and hand trackers -> a full body) --------------------------
    track_head: PointerProperty(name="Head", type=bpy.types.Object,
                                description="Object that follows the head tracker (headset): an animated empty, "
                                            "upright with no rotation looking along -Y")
    track_hand_l: PointerProperty(name="Left Hand", type=bpy.types.Object,
                                  description="Object that follows the left hand tracker (controller)")
    track_hand_r: PointerProperty(name="Right Hand", type=bpy.types.Object,
                                  description="Object that follows the right hand tracker (controller)")
    track_head_bone: StringProperty(name="Bone", default="",
                                    description="When Head is an armature: the bone that follows the head tracker "
                                                "(empty: the object)")
    track_hand_l_bone: StringProperty(name="Bone", default="",
                                      description="When Left Hand is an armature: the bone that follows the left "
                                                  "hand tracker (empty: the object)")
    track_hand_r_bone: StringProperty(name="Bone", default="",
                                      description="When Right Hand is an armature: the bone that follows the right "
                                                  "hand tracker (empty: the object)")
    track_method: EnumProperty(name="Method", description="How the body is made from the three trackers",
                               items=TRACK_METHOD_ITEMS, default="model")
    track_placement: EnumProperty(name="Placement", description="Whose the tracker positions are: this rig's "
                                  "(its hands are put on them) or a performer's of another size (scaled onto it)",
                                  items=TRACK_PLACEMENT_ITEMS, default="rig")

    # --- generation --------------------------------------------------------------
    seed: IntProperty(name="Seed", description="Random seed; the same seed and inputs give the same animation",
                      **hard_range("seed", integer=True), default=0)
    start_frame: IntProperty(name="Start Frame",
                             description="Scene frame at which generated animation begins (with Audio empty, the "
                                         "sound strip's own start is used)",
                             **hard_range("start_frame", integer=True), default=1)

    # --- export & render ---------------------------------------------------------
    export_format: EnumProperty(name="Format", description="File format of Export Character",
                                items=EXPORT_FORMAT_ITEMS, default="FBX")
    export_path: StringProperty(name="Export Path",
                                description="File to export to (// is the .blend's folder); the extension follows "
                                            "Format", subtype="FILE_PATH", default="//rigmind_export")
    # Cycles runs anywhere; EEVEE and Workbench abort a headless Blender
    # that has no OpenGL/EGL driver.
    render_engine: EnumProperty(name="Engine",
                                description="Render engine of Render (Cycles works everywhere; EEVEE and Workbench "
                                            "need OpenGL)", items=RENDER_ENGINE_ITEMS, default="CYCLES")
    render_path: StringProperty(name="Render Output",
                                description="Output file: .png renders the current frame, .mp4 the frame range "
                                            "with sound", subtype="FILE_PATH", default="//rigmind_render.mp4")


CLASSES = (RigMindBoneMapItem, RigMindSceneProperties)


def attach():
    bpy.types.Scene.rigmind = PointerProperty(
        type=RigMindSceneProperties, name="RigMind", description="RigMind settings of this scene (saved with the .blend)")


def detach():
    # Values already stored in scenes stay in their ID properties (and in saved
    # .blend files) and show up again when the add-on is enabled again.
    if hasattr(bpy.types.Scene, "rigmind"):
        del bpy.types.Scene.rigmind
