import sys, json, hashlib, glob, numpy as np
from rigmind.backend import bvh
from rigmind.backend.paths import data_dir
from pathlib import Path
D=str(data_dir())
def H(a):
    if a is None: return None
    a=np.ascontiguousarray(a); return hashlib.sha256(a.tobytes()+str(a.dtype).encode()+str(a.shape).encode()).hexdigest()[:20]
def mh(m):
    sk=m.skeleton
    return [H(m.rotations),H(m.root_positions),H(m.translations),m.fps,m.name,list(sk.names),H(sk.parents),H(sk.offsets),H(sk.rest_rotations),H(sk.tails),json.dumps(sk.meta,sort_keys=True,default=str)]
files=sorted(glob.glob(D+'/**/*.bvh',recursive=True)+glob.glob(D+'/**/*.bvh.gz',recursive=True))
groups={}
for f in files: groups.setdefault(Path(f).relative_to(D).parts[0],[]).append(f)
sel=[]
for g,fs in sorted(groups.items()): sel+=fs[::max(1,len(fs)//60)][:60]
out={}
for i,f in enumerate(sel):
    opts=[{}] if i%5 else [{}, {'units':'m','up':'Z','keep_end_sites':False},{'units':'cm'}]
    for o in opts:
        try: out[f+str(o)]=mh(bvh.read_bvh(f,**o))
        except Exception as e: out[f+str(o)]=repr(e)
# mutations for error paths
texts=[bvh._open_text(f) for f in sel[::25]]
import random
rng=random.Random(0)
for t in texts:
    L=len(t)
    for k in [0,10,50,100,200,400,800,1500,3000,L//2,L-10]:
        try: out['cut%d_%d'%(L,k)]=mh(bvh.loads_bvh(t[:k]))
        except Exception as e: out['cut%d_%d'%(L,k)]=type(e).__name__+str(e)
    toks=t[:4000].split()
    for r in range(40):
        tk=list(toks); j=rng.randrange(len(tk)); op=r%4
        if op==0: del tk[j]
        elif op==1: tk[j]=rng.choice(['{','}','Foo','End','Site','OFFSET','CHANNELS','JOINT','ROOT','MOTION','nan','3','Xrotation','Wrot'])
        elif op==2: tk.insert(j,rng.choice(['{','}','End','JOINT','x']))
        else: tk[j]=tk[j].lower()
        s=' '.join(tk)+'\n'+t[4000:]
        try: out['mut%d_%d'%(L,r)]=mh(bvh.loads_bvh(s,source='x'))
        except Exception as e: out['mut%d_%d'%(L,r)]=type(e).__name__+str(e)
# dumps
for f in sel[::20]:
    m=bvh.read_bvh(f)
    for o in [{}, {'up':None,'units':None,'order':None,'position_channels':None},{'position_channels':'all','decimals':4}]:
        out['dump'+f+str(o)]=hashlib.sha256(bvh.dumps_bvh(m,**o).encode()).hexdigest()
    import tempfile,os
    p=tempfile.mktemp(suffix='.bvh.gz'); bvh.write_bvh(p,m); out['wgz'+f]=hashlib.sha256(bvh._open_text(p).encode()).hexdigest(); os.remove(p)
json.dump(out,open(sys.argv[1],'w'),indent=0,sort_keys=True)
print(len(sel),len(out))
