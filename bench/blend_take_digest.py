"""What a .blend animates, per datablock rather than per action (the face's
companions may share one action): ``python bench/blend_take_digest.py FILE.blend``
prints digests of each shape-key set's and armature's assigned action+slot's
keys, of the values Blender evaluates at 200 frames of the scene range, and of
the world matrices, range, fps and sequencer strips; and the action count."""
import sys, hashlib, numpy as np, bpy
from bpy_extras.anim_utils import action_get_channelbag_for_slot
bpy.ops.wm.open_mainfile(filepath=sys.argv[-1])
s = bpy.context.scene
h_keys = hashlib.sha256(); h_eval = hashlib.sha256(); h_scene = hashlib.sha256()
ids = sorted([o.data.shape_keys for o in bpy.data.objects if o.type == "MESH" and o.data.shape_keys], key=lambda k: k.user.name) \
    + sorted([o for o in bpy.data.objects if o.type == "ARMATURE"], key=lambda o: o.name)
for idb in ids:
    ad = idb.animation_data
    h_keys.update(idb.name.encode())
    if ad is None or ad.action is None:
        continue
    cb = action_get_channelbag_for_slot(ad.action, ad.action_slot)
    for fc in sorted(cb.fcurves, key=lambda f: (f.data_path, f.array_index)):
        co = np.empty(2 * len(fc.keyframe_points)); fc.keyframe_points.foreach_get("co", co)
        h_keys.update(fc.data_path.encode()); h_keys.update(co.tobytes())
frames = np.unique(np.linspace(s.frame_start, s.frame_end, 200).astype(int))
for f in frames:
    s.frame_set(int(f))
    for idb in ids:
        if hasattr(idb, "key_blocks"):
            h_eval.update(np.array([kb.value for kb in idb.key_blocks]).tobytes())
        else:
            buf = np.empty(len(idb.pose.bones) * 16, np.float32); idb.pose.bones.foreach_get("matrix", buf); h_eval.update(buf.tobytes())
for o in sorted(bpy.data.objects, key=lambda o: o.name):
    h_scene.update(o.name.encode()); h_scene.update(np.array(o.matrix_world).tobytes())
h_scene.update(repr((s.frame_start, s.frame_end, s.render.fps, s.render.fps_base)).encode())
se = s.sequence_editor
h_scene.update(repr(sorted((st.name, st.frame_start) for st in se.strips_all) if se else []).encode())
print("KEYS", h_keys.hexdigest()[:16], "EVAL", h_eval.hexdigest()[:16], "SCENE", h_scene.hexdigest()[:16],
      "actions", len(bpy.data.actions), "frames", len(frames))
