#!/usr/bin/env bash
# Issue #16, one checkpoint format: every model computes the same before and after.
#   bench/refactor_identity/ckpt_run.sh [OLD_COMMIT]   (default 475cfc3, before the format)
# Runs ckpt_ref.py on the OLD commit's tree (its own old-layout models/) and on this
# checkout (the converted models/), diffs the JSON of SHA-256es, and checks that each
# ONNX export's graph is byte-identical (only the re-stamped source hash changed).
set -euo pipefail
OLD=${1:-475cfc3}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PY:-$HERE/.venv/bin/python}
T=$(mktemp -d)
git -C "$HERE" archive "$OLD" | (mkdir -p "$T/old/rigmind" && tar -x -C "$T/old/rigmind")
cd "$HERE"
export RIGMIND_DATA=${RIGMIND_DATA:-$("$PY" -c 'from rigmind.backend.paths import data_dir; print(data_dir())')}
# Both trees read this checkout's locomotion feature cache (the style-classifier inputs).
ln -s "$HERE/.cache" "$T/old/rigmind/.cache"
PYTHONPATH="$T/old" "$PY" bench/refactor_identity/ckpt_ref.py "$T/ckpt.old.json" >/dev/null 2>&1
"$PY" bench/refactor_identity/ckpt_ref.py "$T/ckpt.new.json" >/dev/null 2>&1
"$PY" - "$T" <<'PYEOF'
import json, sys, onnx
t = sys.argv[1]
a, b = (json.load(open(f"{t}/ckpt.{k}.json")) for k in ("old", "new"))
d = [k for k in a if a[k] != b.get(k)]
print(f"ckpt_ref: {len(a) - len(d)} of {len(a)} outputs identical", *(["DIFFERENT:"] + d if d else []))
bad = len(d)
for f in ("face", "gesture", "locomotion"):
    o, n = onnx.load(f"{t}/old/rigmind/models/{f}.onnx"), onnx.load(f"models/{f}.onnx")
    mo, mn = ({e.key: e.value for e in m.metadata_props} for m in (o, n))
    same = o.graph.SerializeToString() == n.graph.SerializeToString()
    print(f"{f}.onnx: graph {'identical' if same else 'DIFFERENT'}; metadata changed: {[k for k in mo if mo[k] != mn.get(k)]}")
    bad += not same
sys.exit(1 if bad else 0)
PYEOF
