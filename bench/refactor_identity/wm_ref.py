import sys, json, hashlib, numpy as np, bpy
from rigmind.operators import mannequin as MQ, scene_io as S
from rigmind.backend.motion import Motion
from rigmind.backend import rotations as R
def H(a): a=np.ascontiguousarray(a); return hashlib.sha256(a.tobytes()).hexdigest()[:24]
out={}
bpy.ops.wm.read_factory_settings(use_empty=True)
arm=MQ.build_mannequin()['armature']
modes=['QUATERNION','AXIS_ANGLE','XYZ','ZXY','YZX','XZY','ZYX','YXZ']
for i,pb in enumerate(arm.pose.bones): pb.rotation_mode=modes[i%len(modes)]
sk=S.read_skeleton(arm)
rng=np.random.default_rng(0)
def act_hash(act):
    d={}
    for fc in S_fcurves(act):
        co=np.empty(len(fc.keyframe_points)*2,np.float32); fc.keyframe_points.foreach_get('co',co)
        ip=[k.interpolation for k in fc.keyframe_points][:3]
        d[f'{fc.data_path}[{fc.array_index}]']=[H(co),ip,fc.group.name if fc.group else None]
    return d
def S_fcurves(act):
    fcs=[]
    for layer in act.layers:
        for strip in layer.strips:
            for cb in strip.channelbags: fcs+=list(cb.fcurves)
    return fcs
for case in range(4):
    F=[1,17,40,5][case]
    rot=R.normalize(rng.normal(size=(F,len(sk),4)))
    tr=None
    if case%2: tr=np.broadcast_to(sk.offsets,(F,len(sk),3)).copy(); tr[:,3]+=rng.normal(size=(F,3))*0.01
    m=Motion(sk,rot,rng.normal(size=(F,3)),[30,24,60,25][case],tr,name=f'm{case}')
    kw=[{},dict(frame_start=10,set_scene_fps=True,interpolation='BEZIER'),dict(object_locations=rng.normal(size=(F,3)),set_scene_range='grow'),dict(keep_previous=False,set_scene_range=False,action_name='X')][case]
    a=S.write_motion(arm,m,**kw)
    sc=bpy.context.scene
    out[f'case{case}']=dict(name=a.name,curves=act_hash(a),range=[sc.frame_start,sc.frame_end,sc.render.fps,sc.render.fps_base],n=len(bpy.data.actions),props=dict(a.items()) if hasattr(a,'items') else None, active=arm.animation_data.action.name)
for bad in [Motion(sk,rot[:0],np.zeros((0,3)),30,None,name='e')]:
    try: S.write_motion(arm,bad)
    except Exception as e: out['err0']=repr(e)
json.dump(out,open(sys.argv[1],'w'),indent=0,sort_keys=True,default=str); print(len(out), sum(len(v['curves']) for k,v in out.items() if k.startswith('case')))
