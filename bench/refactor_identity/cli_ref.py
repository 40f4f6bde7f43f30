import sys, json, io, contextlib
from rigmind.cli import build_parser
out={}
ap=build_parser()
sub=[a for a in ap._actions if a.__class__.__name__=='_SubParsersAction'][0]
def helptext(argv):
    f=io.StringIO()
    with contextlib.redirect_stdout(f), contextlib.redirect_stderr(f):
        try: build_parser().parse_args(argv)
        except SystemExit as e: pass
    return f.getvalue()
out['root']=helptext(['--help'])
for name,p in sub.choices.items():
    out['help '+name]=helptext([name,'--help'])
    out['fmt '+name]=p.format_help()
    out['acts '+name]=repr([(a.dest,a.option_strings,a.default,tuple(a.choices) if a.choices else None,a.required,a.help,a.nargs,getattr(a.type,'__name__',a.type)) for a in p._actions])
for sp in list(sub.choices.values()):
    subs=[a for a in sp._actions if a.__class__.__name__=='_SubParsersAction']
    for s in subs:
        for n2,p2 in s.choices.items():
            out['fmt2 '+n2]=p2.format_help()
argvs=[['info','x.glb'],['info','x.glb','--json','--debug'],['mannequin','--out','a.blend'],
 ['export','--rig','r','--out','o.fbx','--preset','UNREAL','--no-mesh'],['render','--scene','s','--out','o.png','--engine','eevee','--resolution','100x50','--frames','1:10'],
 ['retarget','--src','a','--rig','b','--out','c','--root-mode','IN_PLACE','--no-ik'],['walk','--rig','r','--cycle','--out','o','--style','Active','--gait','run','--controller','neural'],
 ['walk','--rig','r','--path=0,0;1,0','--out','o','--in-place','--seconds','3'],['face','--audio','a.wav','--out','o.json','--method','words','--runtime','torch'],
 ['gesture','--audio','a','--out','o','--base','keep_legs'],['gesture','--audio-dir','d','--out-dir','o','--format','BVH'],['train','face'],['eval','gesture'],['demo'],
 ['--debug','info','x'],['walk','--rig','r','--cycle','--out','o','--controller','bad'],['retarget','--src','a'],['batch','--help'],[]]
for s in list(sub.choices):
    pass
for a in argvs:
    f=io.StringIO()
    with contextlib.redirect_stdout(f), contextlib.redirect_stderr(f):
        try: r=repr(sorted(vars(build_parser().parse_args(a)).items()))
        except SystemExit as e: r='exit%s'%e.code
    out['argv '+' '.join(a)]=r+f.getvalue()
json.dump(out,open(sys.argv[1],'w'),indent=0,sort_keys=True)
print(len(out))
