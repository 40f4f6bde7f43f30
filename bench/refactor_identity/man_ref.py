import sys, json, hashlib, numpy as np, bpy
from rigmind.operators import mannequin as MQ
def H(a): a=np.ascontiguousarray(a); return hashlib.sha256(a.tobytes()+str(a.shape).encode()+str(a.dtype).encode()).hexdigest()[:24]
bpy.ops.wm.read_factory_settings(use_empty=True)
r=MQ.build_mannequin()
out={}
for k,ob in r.items():
    if ob.type=='MESH':
        me=ob.data
        co=np.empty(len(me.vertices)*3,np.float32); me.vertices.foreach_get('co',co); out[k+' co']=H(co)
        lv=np.empty(len(me.loops),np.int32); me.loops.foreach_get('vertex_index',lv); out[k+' loops']=H(lv)
        ls=np.empty(len(me.polygons),np.int32); me.polygons.foreach_get('loop_start',ls); out[k+' ls']=H(ls)
        mi=np.empty(len(me.polygons),np.int32); me.polygons.foreach_get('material_index',mi); out[k+' mi']=H(mi)
        ed=np.empty(len(me.edges)*2,np.int32); me.edges.foreach_get('vertices',ed); out[k+' edges']=H(ed)
        if me.shape_keys:
            for kb in me.shape_keys.key_blocks:
                c=np.empty(len(kb.data)*3,np.float32); kb.data.foreach_get('co',c); out[k+' sk '+kb.name]=[H(c),kb.relative_key.name,kb.slider_min,kb.slider_max,kb.value]
        out[k+' vgroups']=[vg.name for vg in ob.vertex_groups]
        w={}
        for v in me.vertices:
            for g in v.groups: w.setdefault(ob.vertex_groups[g.group].name,[]).append((v.index,round(g.weight,9)))
        out[k+' weights']=hashlib.sha256(json.dumps(w,sort_keys=True).encode()).hexdigest()
        out[k+' mats']=[m.name for m in me.materials]; out[k+' parent']=ob.parent.name; out[k+' mods']=[(m.name,m.type) for m in ob.modifiers]
        out[k+' mw']=H(np.array(ob.matrix_world))
    else:
        out[k+' bones']=[(b.name,b.parent.name if b.parent else None,H(np.array(b.head_local)),H(np.array(b.tail_local)),H(np.array(b.matrix_local))) for b in ob.data.bones]
# direct pure fields
P=np.random.default_rng(0).normal(size=(500,3))*0.05+np.array([0,0,0])
F=np.random.default_rng(1).uniform(size=500); skin=(F>0.2).astype(float); eyes={1.0:F>0.9,-1.0:F<0.05}
fl=MQ._arkit_fields(P,F,skin,eyes); out['fields order']=list(fl); out['fields']={k:H(v) for k,v in fl.items()}
mb=MQ._MeshBuilder(); bones={b:None for b in []}
json.dump(out,open(sys.argv[1],'w'),indent=0,sort_keys=True); print(len(out))
