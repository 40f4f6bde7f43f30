import sys, json, bpy, rigmind
bpy.ops.wm.read_factory_settings(use_empty=True)
rigmind.register()
out={}
for name in dir(bpy.types):
    if name.startswith(('RIGMIND','VIEW3D_PT_rigmind','RigMind')):
        t=getattr(bpy.types,name); r=t.bl_rna
        props=[]
        for p in r.properties:
            d=dict(id=p.identifier,name=p.name,desc=p.description,type=p.type,flags=sorted(p.is_skip_save and ['skip'] or []) )
            for a in ('default','hard_min','hard_max','subtype','unit','precision','step'):
                if hasattr(p,a):
                    v=getattr(p,a); d[a]=v if isinstance(v,(int,float,str,bool)) else str(v)
            if p.type=='ENUM': d['items']=[(i.identifier,i.name,i.description) for i in p.enum_items]
            props.append(d)
        out[name]=dict(props=props, opts=sorted(getattr(t,'bl_options',[]) or []), parent=getattr(t,'bl_parent_id',None), label=getattr(t,'bl_label',None),
                       doc=r.description)
# panel layout: draw properties via poll
json.dump(out,open(sys.argv[1],'w'),indent=0,sort_keys=True,default=str); print(len(out))
