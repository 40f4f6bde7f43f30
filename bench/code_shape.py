"""The longest functions of the shipped tree and tools (tests excluded), for
issue #16's "no function over 80 lines outside tests".

    python3 bench/code_shape.py [--top 10] [--over 80]

Counts lines from ``def`` to the function's last line (docstring included),
nested functions on their own. Pairs of repeated lines: run ``duplicates``.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

from rigmind.backend.paths import PACKAGE_ROOT as ROOT
SKIP = ("tests/", ".venv", "rigmind.egg-info", ".cache")


def function_lengths(root: Path = ROOT) -> list:
    """``[(lines, "path", "name")]``, longest first."""
    rows = []
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        if rel.startswith(SKIP):
            continue
        try:
            tree = ast.parse(p.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                rows.append((n.end_lineno - n.lineno + 1, rel, n.name))
    return sorted(rows, key=lambda r: (-r[0], r[1], r[2]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--over", type=int, default=80)
    args = ap.parse_args()
    rows = function_lengths()
    print("| lines | file | function |\n|---|---|---|")
    for n, path, name in rows[: args.top]:
        print(f"| {n} | `{path}` | `{name}` |")
    over = [r for r in rows if r[0] > args.over]
    print(f"\n{len(over)} function(s) over {args.over} lines outside tests")


if __name__ == "__main__":
    main()
