"""The full fuzz run of issue #17 item 7: N generated inputs (default 10^4)
each through the BVH reader, the SMPL-X npz reader and the audio loader.

    .venv/bin/python bench/fuzz_inputs.py [--examples 10000] [--seed 17] [--json out.json]

The generators are tests/support/fuzz_inputs.py's (the CI run, tests/project/test_fuzz_inputs.py,
uses 300 each). Every input is counted: read, refused with the reader's
documented error (BVHError, SMPLXFileError, AudioError), or "other" -- any
other exception or a read result that is not finite / not the promised
shape, which is a failure; the first few of those are printed with their
input. Hypothesis generates without shrinking so the run is not cut short
by the first failure.
"""

from __future__ import annotations

import argparse
import collections
import json
import platform
import shutil
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from support import fuzz_inputs as F  # noqa: E402


def run_one(name, strategy, check, n, rng_seed, folder):
    counts = collections.Counter()
    failures = []

    @seed(rng_seed)
    @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(x=strategy)
    def body(x):
        try:
            counts[check(x) if folder is None else check(x, folder)] += 1
        except Exception as e:  # noqa: BLE001 - counted and reported: the point of the run
            counts["other"] += 1
            if len(failures) < 5:
                failures.append({"error": f"{type(e).__name__}: {e}"[:300], "input": repr(x)[:300],
                                 "where": traceback.format_exc().strip().splitlines()[-3][:200]})

    t0 = time.perf_counter()
    body()
    return {"reader": name, "inputs": sum(counts.values()), "read": counts["ok"], "refused": counts["refused"],
            "other": counts["other"], "seconds": round(time.perf_counter() - t0, 1), "failures": failures}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--json", help="write the totals here")
    args = ap.parse_args(argv)
    folder = F.scratch_folder()
    try:
        rows = [
            run_one("BVH (loads_bvh)", F.bvh_texts(), F.check_bvh, args.examples, args.seed, None),
            run_one("SMPL-X npz (read_smplx_npz)", F.npz_bytes(), F.check_npz, args.examples, args.seed, folder),
            run_one("audio (load_audio)", F.audio_files(), F.check_audio, args.examples, args.seed, folder),
        ]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"fuzz: {args.examples} examples asked per reader, seed {args.seed}, {platform.processor() or platform.machine()}")
    print("| reader | inputs | read | refused (documented error) | other (failure) | s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['reader']} | {r['inputs']} | {r['read']} | {r['refused']} | {r['other']} | {r['seconds']} |")
    for r in rows:
        for f in r["failures"]:
            print(f"FAILURE {r['reader']}: {f['error']} at {f['where']} from {f['input']}")
    if args.json:
        Path(args.json).write_text(json.dumps({"seed": args.seed, "examples": args.examples, "rows": rows}, indent=1))
    return 1 if any(r["other"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
