"""The full fuzz run of issue #17 item 7 and issue #27 item 6: N generated
inputs (default 10^4) through each reader: the BVH reader, the SMPL-X npz
reader, the audio loader, ``rigmind walk``'s --path (text and @FILE) and
--pause reading, a spreadsheet's CSV points file, the batch walk manifest,
the glTF reference check and the face eval's LJSpeech metadata.csv.

    .venv/bin/python bench/fuzz_inputs.py [--examples 10000] [--seed 17] [--readers path,gltf] [--json out.json]

The generators are tests/support/fuzz_inputs.py's (the CI run, tests/project/test_fuzz_inputs.py,
uses 300 each). Every input is counted: read, refused with the reader's
documented error (BVHError, SMPLXFileError, AudioError, a UserError), or
"other" -- any other exception or a read result that is not finite / not
the promised shape, which is a failure; the first few of those are printed
with their input. Hypothesis generates without shrinking so the run is not
cut short by the first failure.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import platform
import shutil
import sys
import time
import traceback
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis.errors import HypothesisWarning  # noqa: E402

from support import fuzz_inputs as F  # noqa: E402


def run_one(name, strategy, check, n, rng_seed, folder):
    counts = collections.Counter()
    failures = {}  # "Error at where" -> {"count", "error", "input" (the first)}

    @seed(rng_seed)
    @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(x=strategy)
    def body(x):
        try:
            counts[check(x) if folder is None else check(x, folder)] += 1
        except Exception as e:  # noqa: BLE001 - counted and reported: the point of the run
            counts["other"] += 1
            where = traceback.format_exc().strip().splitlines()[-3].strip()[:200]
            kind = failures.setdefault(f"{type(e).__name__} at {where}", {
                "count": 0, "error": f"{type(e).__name__}: {e}"[:300], "input": repr(x)[:2000]})
            kind["count"] += 1

    t0 = time.perf_counter()
    body()
    return {"reader": name, "inputs": sum(counts.values()), "read": counts["ok"], "refused": counts["refused"],
            "other": counts["other"], "seconds": round(time.perf_counter() - t0, 1), "failures": failures}


#: key -> (row name, strategy, check, whether the check takes the scratch folder)
READERS = {
    "bvh": ("BVH (loads_bvh)", F.bvh_texts, F.check_bvh, False),
    "npz": ("SMPL-X npz (read_smplx_npz)", F.npz_bytes, F.check_npz, True),
    "audio": ("audio (load_audio)", F.audio_files, F.check_audio, True),
    "path": ("walk --path text and @FILE", F.walk_path_args, F.check_walk_path, True),
    "pause": ("walk --pause", F.walk_pause_args, F.check_walk_path, True),
    "csv": ("CSV points file (--path @points.csv)", F.csv_point_files, F.check_csv_points, True),
    "manifest": ("batch walk manifest (batch.walk_items)", F.walk_manifests, F.check_walk_manifest, True),
    "gltf": ("glTF references (check_references)", F.gltf_files, F.check_gltf, True),
    "lj": ("LJSpeech metadata.csv (read_lj_metadata)", F.lj_metadata_files, F.check_lj_metadata, True),
}


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--readers", default=",".join(READERS), help="comma-separated, of: " + ", ".join(READERS))
    ap.add_argument("--json", help="write the totals here")
    args = ap.parse_args(argv)
    keys = [k.strip() for k in args.readers.split(",") if k.strip()]
    unknown = [k for k in keys if k not in READERS]
    if unknown:
        ap.error(f"unknown --readers {', '.join(unknown)}; use {', '.join(READERS)}")
    # Inputs of a few MB: hypothesis warns that their repr (for a failure report) is large.
    warnings.filterwarnings("ignore", category=HypothesisWarning, message=".*overly large repr")
    folder = F.scratch_folder()
    try:
        rows = []
        for key in keys:
            name, strategy, check, takes_folder = READERS[key]
            rows.append(run_one(name, strategy(), check, args.examples, args.seed, folder if takes_folder else None))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"fuzz: {args.examples} examples asked per reader, seed {args.seed}, {cpu_model()}, "
          f"{os.cpu_count()} CPUs, {datetime.date.today()}")
    print("| reader | inputs | read | refused (documented error) | other (failure) | s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['reader']} | {r['inputs']} | {r['read']} | {r['refused']} | {r['other']} | {r['seconds']} |")
    for r in rows:
        for where, f in r["failures"].items():
            print(f"FAILURE {r['reader']}: {f['count']} x {where}: {f['error']}\n    first input: {f['input'][:300]}")
    if args.json:
        Path(args.json).write_text(json.dumps({"seed": args.seed, "examples": args.examples, "rows": rows}, indent=1))
    return 1 if any(r["other"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
