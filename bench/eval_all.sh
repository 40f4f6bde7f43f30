#!/usr/bin/env bash
# bench/eval_all.sh TREE OUTDIR: every evaluation table of the checkout TREE (with its .venv) into OUTDIR,
# for before/after comparisons (issue #16); compare two runs with bench/eval_diff.py BEFORE AFTER.
set -u
T=$1; O=$2; mkdir -p $O; cd $T
R=.venv/bin/rigmind; P=.venv/bin/python
run() { local n=$1; shift; local s=$(date +%s); nice -n 5 "$@" >$O/$n.log 2>&1; echo "$n rc=$? $(( $(date +%s)-s ))s" >>$O/times.txt; }
run loco_fixed $R eval locomotion --json $O/loco_fixed.json --out $O/loco_fixed.md
run loco_rigs $R eval locomotion --rigs --set held-out --count 8 --json $O/loco_rigs.json --out $O/loco_rigs.md
run gesture $R eval gesture --json $O/gesture.json
run face $R eval face --out $O/face.md
run retarget $P bench/eval_retarget.py
echo done >>$O/times.txt
