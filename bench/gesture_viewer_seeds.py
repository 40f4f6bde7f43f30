"""What a viewer sees, over several seeds and versions (issue #29: "no gesture-as-seen line worse").

One seed's viewer measures move with the seed alone (seam ratios by ±0.05-0.1,
the skate by ±0.005): a before/after on seed 0 says little. This runs
``rigmind eval gesture --viewer --rigs R --no-keep-legs --seed S`` for each
version and seed (whole processes; a version is a package root put first on
``PYTHONPATH``) and prints, per voice, each version's mean over seeds: standing
skate, longest frozen stretch (worst seed), seam ratios at 48 and 32 frames
and their height above the off-stride floor, largest arm acceleration.

An older tree needs today's ``evaluation/gesture_viewer.py`` copied in (for
``--seed`` and the floor columns; it only measures).

    python bench/gesture_viewer_seeds.py --version before=/tmp/pk_old --version after=/tmp/pkg \\
        --seeds 5 --out /tmp/viewer_seeds --json bench/results/gesture_viewer_seeds.json
    python bench/gesture_viewer_seeds.py --markdown bench/results/gesture_viewer_seeds.json

``--langs A.wav,B.wav`` (paths, only read) measures other voices, for example
the validation voices. ``--earlier JSON`` puts the versions of an earlier
``--json`` (same voices, seeds and viewer) before the ones measured now,
``--rename OLD=NEW`` relabels one of them (a version once called "today").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from bench_report import add_output_options, finish, reprint  # beside this script, on sys.path with it

COLUMNS = (("skate_cm_per_frame", "skate cm/frame", "{:.4f}"), ("seam48", "seam 48", "{:.3f}"),
           ("seam48_above", "48 above floor", "{:+.3f}"), ("seam32", "seam 32", "{:.3f}"),
           ("seam32_above", "32 above floor", "{:+.3f}"), ("arm_accel_max_mm", "arm accel max mm/f²", "{:.1f}"))


def run(versions: dict, seeds: int, out: Path, rigs: str, data: str, seconds: float, langs: str = "") -> dict:
    """``{version: {seed: rows}}`` from whole viewer processes (JSON kept in ``out``)."""
    out.mkdir(parents=True, exist_ok=True)
    res = {}
    for seed in range(seeds):
        for name, root in versions.items():
            dst = out / f"{name}_s{seed}.json"
            if not dst.is_file():
                env = {**os.environ, "PYTHONPATH": root}
                cmd = [sys.executable, "-m", "rigmind", "eval", "gesture", "--viewer", "--rigs", rigs, "--no-keep-legs",
                       "--seconds", str(seconds), "--seed", str(seed), "--json", str(dst)]
                if data:
                    cmd += ["--data", data]
                if langs:
                    cmd += ["--langs", langs]
                subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
            res.setdefault(name, {})[seed] = json.loads(dst.read_text())["rows"]
            print(name, "seed", seed, flush=True)
    return res


def summary(runs: dict) -> dict:
    """``{version: {(rig, take): {column: mean over seeds, "frozen_max": worst}}}``."""
    out = {}
    for name, per_seed in runs.items():
        cells = {}
        for rows in per_seed.values():
            for r in rows:
                if "seam32" not in r or "real" in r["take"]:
                    continue
                r = {**r, "seam48_above": r["seam48"] - r["seam48_floor"], "seam32_above": r["seam32"] - r["seam32_floor"]}
                cells.setdefault(f"{r['rig']} | {Path(r['take']).stem}", []).append(r)
        out[name] = {k: {**{c: float(np.mean([r[c] for r in rs])) for c, _, _ in COLUMNS},
                         "frozen_max": int(max(r["frozen_frames"] for r in rs)), "seeds": len(rs)}
                     for k, rs in cells.items()}
    return out


def markdown(res: dict) -> str:
    s = res["summary"]
    names = list(s)
    lines = [f"Machine: {res['machine']}; date {res['date']}; {res['seeds']} seeds per version; {res['seconds']:.0f} s.",
             "", "Means over seeds, each cell " + " → ".join(names) + ".", "",
             "| rig | take | frozen (worst seed) | " + " | ".join(h for _, h, _ in COLUMNS) + " |",
             "|---|---|---|" + "---|" * len(COLUMNS)]
    for key in s[names[0]]:
        cells = [" → ".join(str(s[n][key]["frozen_max"]) for n in names)]
        cells += [" → ".join(f.format(s[n][key][c]) for n in names) for c, _, f in COLUMNS]
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return "\n".join(lines + [""])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--version", action="append", default=[], metavar="NAME=PACKAGE_ROOT")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--rigs", default="mannequin")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--data", default="", help="data folder (default: each version's own default)")
    ap.add_argument("--langs", default="", help="passed to the viewer: names under speech_multilingual, or paths")
    ap.add_argument("--out", type=Path, default=Path("/tmp/rigmind_viewer_seeds"))
    add_output_options(ap)
    ap.add_argument("--earlier", type=Path, help="an earlier --json whose versions come first in the table")
    ap.add_argument("--rename", action="append", default=[], metavar="OLD=NEW", help="relabel an earlier version")
    a = ap.parse_args(argv)
    if reprint(a, markdown):
        return 0
    t0 = time.time()
    versions = dict(v.split("=", 1) for v in a.version)
    runs = run(versions, a.seeds, a.out, a.rigs, a.data, a.seconds, a.langs)
    table, earlier = summary(runs), {}
    if a.earlier:
        old = json.loads(a.earlier.read_text())
        if old["seeds"] != a.seeds or old.get("rigs") != a.rigs:
            raise SystemExit(f"{a.earlier} has {old['seeds']} seeds on {old.get('rigs')}, not {a.seeds} on {a.rigs}")
        names = dict(r.split("=", 1) for r in a.rename)
        earlier = {names.get(k, k): {"root": v, "measured": old["date"]} for k, v in old["versions"].items()}
        table = {**{names.get(k, k): v for k, v in old["summary"].items()}, **table}
    res = {"versions": {**earlier, **versions}, "seeds": a.seeds, "rigs": a.rigs,
           "langs": a.langs or "the viewer's default", "seconds_per_take": a.seconds,
           "summary": table}
    return finish(res, a, t0, markdown)


if __name__ == "__main__":
    raise SystemExit(main())
