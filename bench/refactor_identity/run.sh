#!/usr/bin/env bash
# Issue #16: the refactors of s6-issue-16c leave behaviour identical.
# Runs each check on an OLD commit's tree and on this checkout and compares:
#   bench/refactor_identity/run.sh [OLD_COMMIT]   (default b4faae0, before the refactors)
# bvh_ref: 250 BVH under the data folder (+3 option sets), 451 truncated/mutated texts,
#   39 dumps: SHA-256 of every array, names, meta, error messages.
# cli_ref: --help of every subcommand, parse_args of 19 argv lists.
# man_ref: the built mannequin (vertices, faces, shape keys, weights, bones).
# wm_ref: write_motion, 4 takes x bones in all 8 rotation modes: every fcurve's keys.
# sc_ref: style classifier, 3 seeds/option sets: torch.equal weights.
# (bvh_ref: the dumps_bvh(position_channels="all", decimals=4) text of ONE file can differ between
#  two runs of the SAME code - a 4th-decimal rounding that depends on the run; see bench/results/code_and_identity.md.)
# ui_ref: registered RNA of every RigMind operator, panel and property group.
# ckpt_ref: one checkpoint format (#16): each tree loads its own models/ (old layouts vs converted):
#   locomotion (torch, ONNX), gesture and face (torch, ONNX, default choice), motion-encoder
#   embeddings, a style classifier trained/saved/loaded, the ONNX graphs: SHA-256 of every output.
set -euo pipefail
rm -rf /tmp/rigmind_identity_cache  # sc_ref builds its small feature cache afresh
OLD=${1:-b4faae0}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PY:-$HERE/.venv/bin/python}
T=$(mktemp -d)
git -C "$HERE" archive "$OLD" | (mkdir -p "$T/old/rigmind" && tar -x -C "$T/old/rigmind")
cd "$HERE"
# The old tree sits elsewhere: both read the data folder this checkout resolves.
export RIGMIND_DATA=${RIGMIND_DATA:-$("$PY" -c 'from rigmind.backend.paths import data_dir; print(data_dir())')}
ln -s "$HERE/.cache" "$T/old/rigmind/.cache"  # ckpt_ref: both read this checkout's locomotion feature cache
fail=0
for s in bvh_ref cli_ref man_ref wm_ref ui_ref ckpt_ref; do
  PYTHONPATH="$T/old" "$PY" "bench/refactor_identity/$s.py" "$T/$s.old.json" >/dev/null 2>&1
  "$PY" "bench/refactor_identity/$s.py" "$T/$s.new.json" >/dev/null 2>&1
  if cmp -s "$T/$s.old.json" "$T/$s.new.json"; then echo "$s: identical"; else
    "$PY" -c 'import json, sys; a, b = (json.load(open(p)) for p in sys.argv[2:]); d = [k for k in a if a[k] != b.get(k)]
print(sys.argv[1] + ": DIFFERENT in", len(d), "of", len(a), "keys:", *d[:5], sep="\n  ")' "$s" "$T/$s.old.json" "$T/$s.new.json"
    fail=1
  fi
done
PYTHONPATH="$T/old" "$PY" bench/refactor_identity/sc_ref.py "$T/sc.old.pt" >/dev/null 2>&1
"$PY" bench/refactor_identity/sc_ref.py "$T/sc.new.pt" "$T/sc.old.pt" 2>/dev/null | tail -1 || fail=1
exit $fail
