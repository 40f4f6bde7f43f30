import sys, pathlib, torch, numpy as np, pickle
from rigmind.backend.locomotion import eval as E, features as FT, style_classifier as SC
from rigmind.backend.paths import data_dir
data=data_dir(); cache=pathlib.Path('/tmp/rigmind_identity_cache')
train_i, val_i = E._select_clips(data, E.QUICK_STYLES, 20)
if not cache.exists(): FT.build_cache(data, cache, clips=train_i + val_i)
train = E._load_stems(cache, train_i, mirrored=True)
few = [c for st in ("normal", "elderly") for c in [c for c in train if c.labels["style_key"] == st][:6]]
res={}
for tag,args,kw in [('few',few,dict(seed=3,epochs=3,styles=("normal","elderly"))),('all',train,dict(seed=0,epochs=2)),('nod1',train,dict(seed=1,epochs=1,include_d1=False,batch_size=64,lr=1e-3))]:
    m=SC.train_style_classifier(args,SC.StyleTrainConfig(**kw)) if hasattr(SC,'StyleTrainConfig') else SC.train_style_classifier(args,**kw)
    res[tag]=dict(sd={k:v.clone() for k,v in m.net.state_dict().items()},styles=m.styles,mean=m.mean,std=m.std,info=m.info,window=m.window,hop=m.hop)
try: SC.train_style_classifier(few,SC.StyleTrainConfig(styles=("nope",))) if hasattr(SC,"StyleTrainConfig") else SC.train_style_classifier(few,styles=("nope",))
except Exception as e: res['err']=repr(e)
torch.save(res,sys.argv[1])
if len(sys.argv)>2:
    a=torch.load(sys.argv[2],weights_only=False)
    for t in ['few','all','nod1']:
        assert all(torch.equal(a[t]['sd'][k],res[t]['sd'][k]) for k in a[t]['sd']) and a[t]['sd'].keys()==res[t]['sd'].keys()
        assert np.array_equal(a[t]['mean'],res[t]['mean']) and np.array_equal(a[t]['std'],res[t]['std']) and a[t]['info']==res[t]['info'] and a[t]['styles']==res[t]['styles']
    assert a['err']==res['err']; print('IDENTICAL', {t:len(res[t]['sd']) for t in ['few','all','nod1']}, res['err'])
