"""The end the result-writing bench scripts share: ``--json`` / ``--markdown``,
the machine and date stamped beside the numbers, the JSON written, the
tables printed.

A script beside this one imports it by name (a script's own folder is first
on ``sys.path``)::

    from bench_report import add_output_options, finish, reprint

    ap = argparse.ArgumentParser(...)
    add_output_options(ap)
    a = ap.parse_args(argv)
    if reprint(a, markdown):
        return 0
    started = time.time()
    res = run(...)
    return finish(res, a, started, markdown)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path


def machine() -> str:
    """What ran the bench, in the words the results pages use."""
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, no GPU"


def add_output_options(ap: argparse.ArgumentParser) -> None:
    """``--json PATH`` (where the results go) and ``--markdown PATH`` (print
    the tables of an earlier ``--json`` and stop)."""
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--markdown", type=Path, help="print the tables of an earlier --json and stop")


def reprint(args: argparse.Namespace, markdown) -> bool:
    """With ``--markdown``: print ``markdown(results)`` of that file; True when it did."""
    if not args.markdown:
        return False
    print(markdown(json.loads(Path(args.markdown).read_text())))
    return True


def finish(res: dict, args: argparse.Namespace, started: float, markdown) -> int:
    """Stamp ``res`` with the run's seconds (since ``started``, ``time.time()``),
    the date and the machine (unless it has them), write it to ``--json``,
    print ``markdown(res)``; 0, the script's exit status."""
    res.setdefault("date", time.strftime("%Y-%m-%d"))
    res.setdefault("machine", machine())
    res["seconds"] = time.time() - started
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    print(markdown(res))
    return 0
