"""bench/eval_diff.py BEFORE_DIR AFTER_DIR: compare two bench/eval_all.sh runs key by key (JSON) and
line by line (reports), with wall-clock fields and lines dropped."""
import json, re, sys
from pathlib import Path

TIMING = re.compile(r"(_s$|bake_s|per_10s|^command$|time|second|_ms|ms_|per_step|date|machine|host|elapsed|duration|load|git|commit|python|torch_version|wall|threads)", re.I)


def strip(x, path=""):
    if isinstance(x, dict):
        return {k: strip(v, path + "/" + k) for k, v in x.items() if not TIMING.search(k)}
    if isinstance(x, list):
        return [strip(v, path) for v in x]
    return x


def walk(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}/{k}: only in {'after' if k in b else 'before'}")
            else:
                walk(a[k], b[k], f"{path}/{k}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(f"{path}: {str(a)[:80]} -> {str(b)[:80]}")


A, B = Path(sys.argv[1]), Path(sys.argv[2])
for f in sorted(A.glob("*.json")):
    g = B / f.name
    if not g.exists():
        print(f"{f.name}: missing after"); continue
    out = []
    walk(strip(json.loads(f.read_text())), strip(json.loads(g.read_text())), "", out)
    print(f"{f.name}: {'IDENTICAL' if not out else f'{len(out)} differences'}")
    for line in out[:40]:
        print("   ", line)
for f in sorted(A.glob("*.md")) + sorted(A.glob("*.log")):
    g = B / f.name
    if not g.exists():
        continue
    la = [l for l in f.read_text().splitlines() if not TIMING.search(l)]
    lb = [l for l in g.read_text().splitlines() if not TIMING.search(l)]
    print(f"{f.name} (lines without timings): {'IDENTICAL' if la == lb else 'DIFFERENT'}")
    if la != lb:
        import difflib
        for l in list(difflib.unified_diff(la, lb, lineterm="", n=0))[:30]:
            print("   ", l)
