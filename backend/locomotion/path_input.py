"""A walk's path as the user gives it: ``--path`` text or file, points with optional
speeds, and the polyline of an evaluated curve's edges.

Points are world metres on the ground plane (X, Y); a third column, where
given, is that point's speed in m/s (NaN: the walk's own speed).

Pure Python (no bpy).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import UserError
from ..limits import PATH_MAX_POINTS, check_all

#: The most bytes a ``--path @FILE`` may hold (10 000 points of
#: ``x,y,speed`` with full float precision are about 0.6 MB).
MAX_PATH_FILE_BYTES = 4 * 1024 * 1024


def parse_path(text: str) -> np.ndarray:
    """``"x,y;x,y[,speed];…"`` (metres, m/s) -> ``[N, 2]``, or ``[N, 3]``
    (``x, y, speed``; NaN where a point gives no speed) when any point
    carries a speed. UserError with the expected form."""
    pts = []
    form = 'x,y or x,y,speed (metres, m/s), e.g. --path "0,0;3,0,0.8;3,3"'
    parts = [p for p in (text or "").split(";") if p.strip()]
    if len(parts) > PATH_MAX_POINTS:
        raise UserError(f"the path has {len(parts)} points; RigMind walks paths of up to {PATH_MAX_POINTS} points")
    for k, part in enumerate(parts):
        xs = part.split(",")
        try:
            if len(xs) not in (2, 3):
                raise ValueError
            vals = [float(v) for v in xs]
        except ValueError:
            raise UserError(f"--path point {k + 1} {part.strip()!r} is not {form}") from None
        if not all(math.isfinite(v) for v in vals):
            raise UserError(f"--path point {k + 1} {part.strip()!r} is not finite")
        if len(vals) == 3:
            check_all("speed", vals[2], option=f"--path point {k + 1} {part.strip()!r}: speed")
        pts.append(vals + [math.nan] * (3 - len(vals)))
    p = np.array(pts, dtype=np.float64).reshape(-1, 3)
    p = dedupe_points(p)
    if len(p) < 2:
        raise UserError('--path needs at least two distinct points "x,y;x,y", e.g. --path "0,0;3,0;3,3"')
    return p if np.any(np.isfinite(p[:, 2])) else p[:, :2].copy()


def read_path_argument(value: str) -> np.ndarray:
    """``--path`` as given: the points text, or ``@FILE``, a text file with
    one point per line in the same ``x,y[,speed]`` syntax (blank lines and
    lines starting with ``#`` skipped; ``;`` also separates points), at most
    :data:`MAX_PATH_FILE_BYTES`. Returns what :func:`parse_path` does."""
    if not value.startswith("@"):
        return parse_path(value)
    from pathlib import Path

    path = Path(value[1:]).expanduser()
    try:
        is_file = path.is_file()
        size = path.stat().st_size if is_file else 0
    except OSError as e:  # a name longer than the file system takes, a folder that may not be searched
        raise UserError(f"--path {value}: cannot be opened ({e.strerror or type(e).__name__}); "
                        "give @FILE with one point x,y[,speed] per line") from None
    if not is_file:
        raise UserError(f"--path {value}: no such file; give @FILE with one point x,y[,speed] per line")
    if size > MAX_PATH_FILE_BYTES:
        raise UserError(f"--path {value}: the file is larger than {MAX_PATH_FILE_BYTES // 2**20} MB; "
                        f"a path has at most {PATH_MAX_POINTS} points")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"--path {value}: cannot be read as text ({type(e).__name__})") from None
    lines = (ln.split("#", 1)[0].strip() for ln in text.splitlines())
    return parse_path(";".join(ln for ln in lines if ln))


def path_points_and_speeds(points, speed):
    """``(xy [N, 2], speeds)`` from path points ``[N, 2]`` or ``[N, 3]``
    (``x, y, speed``; a NaN speed means ``speed``), repeated points dropped:
    ``speeds`` is ``speed`` itself when no point carries one, else one per
    point (m/s)."""
    p = np.asarray(points, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] not in (2, 3):
        raise UserError(f"path points must be [N, 2] (x, y) or [N, 3] (x, y, speed), got shape {p.shape}")
    p = dedupe_points(p)
    if p.shape[1] == 2 or np.all(np.isnan(p[:, 2])):
        return p[:, :2], speed
    sp = np.where(np.isnan(p[:, 2]), float(speed), p[:, 2])
    return p[:, :2], sp


def path_xy(points) -> np.ndarray:
    """The ground-plane points ``[N, 2]`` (m) of path points ``[N, 2]`` or
    ``[N, 3]`` (their speeds left out), repeated points dropped."""
    return path_points_and_speeds(points, 1.0)[0]


def dedupe_points(points: np.ndarray) -> np.ndarray:
    """``points [N, 2]`` (x, y) or ``[N, 3]`` (x, y, speed) without the rows
    whose ground-plane point repeats the one before (within 1 µm)."""
    keep = np.ones(len(points), dtype=bool)
    # Points 1e308 apart overflow to an inf distance: distinct all the same, and
    # numpy's warning would print above the one-line refusal of the path's limits.
    with np.errstate(over="ignore"):
        keep[1:] = np.linalg.norm(np.diff(points[:, :2], axis=0), axis=1) > 1e-6
    return points[keep]


def ordered_chains(n_verts: int, edges: np.ndarray) -> list:
    """Vertex index chains of a mesh made of edges only (``edges [E, 2]``,
    one chain per connected piece), each walked from its lowest-index end,
    which for an evaluated curve is the spline's start; a closed loop ends
    where it began."""
    adj = [[] for _ in range(n_verts)]
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)
    seen = np.zeros(n_verts, dtype=bool)
    chains = []
    for start in range(n_verts):
        if seen[start] or not adj[start]:
            continue
        # Find this piece's lowest-index end (degree 1), else (a closed loop) its lowest index.
        piece, stack = [], [start]
        seen[start] = True
        while stack:
            v = stack.pop()
            piece.append(v)
            for w in adj[v]:
                if not seen[w]:
                    seen[w] = True
                    stack.append(w)
        ends = sorted(v for v in piece if len(adj[v]) == 1)
        first = ends[0] if ends else min(piece)
        chain, prev, cur = [first], -1, first
        while True:
            nxt = [w for w in adj[cur] if w != prev]
            if not nxt or nxt[0] == first:
                if nxt and nxt[0] == first:
                    chain.append(first)  # closed: end where it began
                break
            prev, cur = cur, min(nxt)
            chain.append(cur)
            if len(chain) > n_verts + 1:
                break
        chains.append(chain)
    return chains


__all__ = ["MAX_PATH_FILE_BYTES", "parse_path", "read_path_argument", "path_points_and_speeds", "path_xy",
           "dedupe_points", "ordered_chains"]
