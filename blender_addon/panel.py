"""Side panel: 3D View ▸ Sidebar (N) ▸ RigMind."""

import bpy

CATEGORY = "RigMind"
PARENT_ID = "VIEW3D_PT_rigmind"

# Operators owned by operators/blender_ops.py, by idname. A button is drawn only
# while its operator is registered: `bpy.ops.<x>.<y>` resolves lazily and exists
# for any name, so the check goes through `bpy.types`, where a registered
# operator appears as `RIGMIND_OT_<name>` whatever its Python class is called.
OPERATORS = {
    "add_mannequin": "rigmind.add_mannequin",
    "apply_bvh": "rigmind.apply_bvh",
    "retarget_motion": "rigmind.retarget_motion",
    "detect_bone_map": "rigmind.detect_bone_map",
    "save_bone_map": "rigmind.save_bone_map",
    "bake_walk_cycle": "rigmind.bake_walk_cycle",
    "walk_along_path": "rigmind.walk_along_path",
    "drive": "rigmind.drive",
    "generate_gesture": "rigmind.generate_gesture",
    "track_body": "rigmind.track_body",
    "track_live": "rigmind.track_live",
    "generate_face": "rigmind.generate_face",
    "export": "rigmind.export",
    "render": "rigmind.render",
}

# Scene properties each sub-panel shows; tests check that every name exists.
CHARACTER_PROPS = ("target_armature",)
LOCOMOTION_PROPS = ("mode", "gait", "style", "speed_from_style", "speed", "in_place", "path_object", "path_pauses", "path_actions",
                    "path_start")
SPEECH_PROPS = ("audio_path", "gesture_amount", "face_auto", "face_mesh", "face_method")
EMOTION_PROPS = tuple(f"emotion_{e}" for e in ("happy", "sad", "angry", "surprised", "afraid", "disgusted"))
GENERATION_PROPS = ("seed", "start_frame")
TRACK_PROPS = ("track_head", "track_hand_l", "track_hand_r", "track_method", "track_placement")
#: Each tracker object's bone setting, shown when the object is an armature.
TRACK_BONE_PROPS = {"track_head": "track_head_bone", "track_hand_l": "track_hand_l_bone",
                    "track_hand_r": "track_hand_r_bone"}
EXPORT_PROPS = ("export_format", "export_path")
RENDER_PROPS = ("render_engine", "render_path")


def operator_type_name(idname: str) -> str:
    """``rigmind.export`` -> ``RIGMIND_OT_export``, the name under ``bpy.types``."""
    module, _, name = idname.partition(".")
    return f"{module.upper()}_OT_{name}"


def operator_available(idname: str) -> bool:
    return hasattr(bpy.types, operator_type_name(idname))


def _button(layout, key, text=None, icon="NONE"):
    """Draw the operator button if its operator is registered; return whether it did."""
    idname = OPERATORS[key]
    if not operator_available(idname):
        return False
    if text is None:
        op = layout.operator(idname, icon=icon)
    else:
        op = layout.operator(idname, text=text, icon=icon)
    # The button carries the panel's values as the operator's properties
    # (what a script would pass; the redo panel then shows them).
    from ..operators.op_common import scene_args

    cls = getattr(bpy.types, operator_type_name(idname), None)
    for prop, value in scene_args(getattr(cls, "scene_props", {}), bpy.context).items():
        setattr(op, prop, value)
    return True


def _props(context):
    return getattr(context.scene, "rigmind", None)


class _RigMindPanel:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = CATEGORY

    @classmethod
    def poll(cls, context):
        return context.scene is not None and _props(context) is not None

    def _split_layout(self, context):
        """The panel's layout, labels beside the fields, and the scene's RigMind properties."""
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        return layout, _props(context)


class _RigMindSubPanel(_RigMindPanel):
    bl_parent_id = PARENT_ID


class VIEW3D_PT_rigmind(_RigMindPanel, bpy.types.Panel):
    bl_idname = PARENT_ID
    bl_label = "RigMind"

    def draw(self, context):
        layout, props = self._split_layout(context)
        _button(layout, "add_mannequin", icon="OUTLINER_OB_ARMATURE")
        layout.prop(props, "target_armature")
        col = layout.column(align=True)
        for name in GENERATION_PROPS:
            col.prop(props, name)


class VIEW3D_PT_rigmind_locomotion(_RigMindSubPanel, bpy.types.Panel):
    bl_idname = "VIEW3D_PT_rigmind_locomotion"
    bl_label = "Locomotion"

    def draw(self, context):
        layout, props = self._split_layout(context)
        layout.prop(props, "mode", expand=True)
        col = layout.column()
        col.prop(props, "gait")
        col.prop(props, "style")
        col.prop(props, "speed_from_style")
        sub = col.column()
        sub.active = not props.speed_from_style
        sub.prop(props, "speed")
        col.prop(props, "in_place")
        if props.mode == "PATH":
            col.prop(props, "path_object")
            col.prop(props, "path_pauses")
            col.prop(props, "path_actions")
            col.prop(props, "path_start")
            _button(layout, "walk_along_path", icon="CURVE_PATH")
        else:
            _button(layout, "bake_walk_cycle", icon="ARMATURE_DATA")
        _button(layout, "drive", text="Drive (live, R records)", icon="PLAY")


class RIGMIND_UL_bone_map(bpy.types.UIList):
    """Canonical joint on the left, the rig's bone (searchable) on the right."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        props = _props(context)
        arm = props.target_armature if props is not None else None
        row = layout.row(align=True)
        split = row.split(factor=0.4)
        split.label(text=item.canonical, icon="BONE_DATA" if item.bone else "BLANK1")
        if arm is not None and arm.type == "ARMATURE":
            split.prop_search(item, "bone", arm.data, "bones", text="")
        else:
            split.prop(item, "bone", text="")


class VIEW3D_PT_rigmind_retarget(_RigMindSubPanel, bpy.types.Panel):
    bl_idname = "VIEW3D_PT_rigmind_retarget"
    bl_label = "Retarget"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        props = _props(context)
        row = layout.row(align=True)
        _button(row, "detect_bone_map", icon="VIEWZOOM")
        _button(row, "save_bone_map", icon="FILE_TICK")
        if len(props.bone_map):
            layout.template_list("RIGMIND_UL_bone_map", "", props, "bone_map", props, "bone_map_index", rows=8)
            layout.prop(props, "bone_map_name")
        _button(layout, "apply_bvh", icon="IMPORT")
        _button(layout, "retarget_motion", icon="ARMATURE_DATA")


class VIEW3D_PT_rigmind_speech(_RigMindSubPanel, bpy.types.Panel):
    bl_idname = "VIEW3D_PT_rigmind_speech"
    bl_label = "Speech"

    def draw(self, context):
        layout, props = self._split_layout(context)
        layout.prop(props, "audio_path")
        # One face choice for both buttons: auto (the character's mesh with
        # the most ARKit keys) or the mesh picked here.
        col = layout.column()
        col.prop(props, "face_auto")
        sub = col.column()
        sub.active = not props.face_auto
        sub.prop(props, "face_mesh")
        col.prop(props, "face_method")

        # Keyable: the decorator column shows each weight's keyframe diamond.
        box = layout.box()
        box.use_property_decorate = True
        box.label(text="Emotion (keyable)", icon="MONKEY")
        col = box.column(align=True)
        for name in EMOTION_PROPS:
            col.prop(props, name, slider=True)

        box = layout.box()
        box.label(text="Gesture", icon="OUTLINER_OB_ARMATURE")
        box.prop(props, "gesture_amount", slider=True)
        box.prop(props, "gesture_base")
        box.prop(props, "gesture_style")
        box.prop(props, "gesture_style_clip")
        box.prop(props, "set_scene_fps")
        _button(box, "generate_gesture", icon="PLAY")

        box = layout.box()
        box.label(text="Face only", icon="SHAPEKEY_DATA")
        _button(box, "generate_face", icon="PLAY")


class VIEW3D_PT_rigmind_track(_RigMindSubPanel, bpy.types.Panel):
    bl_idname = "VIEW3D_PT_rigmind_track"
    bl_label = "Track Body"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout, props = self._split_layout(context)
        col = layout.column()
        for name in TRACK_PROPS:
            col.prop(props, name)
            ob = getattr(props, name) if name in TRACK_BONE_PROPS else None
            if ob is not None and ob.type == "ARMATURE":
                col.prop_search(props, TRACK_BONE_PROPS[name], ob.data, "bones")
        _button(layout, "track_body", icon="ARMATURE_DATA")
        _button(layout, "track_live", text="Track Live (playback, Esc stops)", icon="PLAY")


class VIEW3D_PT_rigmind_output(_RigMindSubPanel, bpy.types.Panel):
    bl_idname = "VIEW3D_PT_rigmind_output"
    bl_label = "Export & Render"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout, props = self._split_layout(context)

        box = layout.box()
        box.label(text="Export", icon="EXPORT")
        for name in EXPORT_PROPS:
            box.prop(props, name)
        _button(box, "export", icon="EXPORT")

        box = layout.box()
        box.label(text="Render", icon="RENDER_ANIMATION")
        for name in RENDER_PROPS:
            box.prop(props, name)
        _button(box, "render", icon="RENDER_ANIMATION")


# Parents before children: Blender resolves bl_parent_id at registration.
CLASSES = (
    VIEW3D_PT_rigmind,
    VIEW3D_PT_rigmind_locomotion,
    RIGMIND_UL_bone_map,
    VIEW3D_PT_rigmind_retarget,
    VIEW3D_PT_rigmind_speech,
    VIEW3D_PT_rigmind_track,
    VIEW3D_PT_rigmind_output,
)
