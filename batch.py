"""``rigmind batch``: many takes from one command, on local cores or a Ray cluster.

A batch is a list of :class:`BatchItem` (one per speech file, or one per
entry of a walk manifest) and one :class:`WorkerConfig` (the rig, the face
mesh, the output format, the options every take shares). Workers
(:class:`rigmind.operators.batch_worker.TakeWorker`, one per process or Ray
actor) load the rig and the models once and then make takes; each take's seed
comes from its name (:func:`.backend.take_seeds.derive_seed`), so a take is the same whatever
worker or order made it.

Only this driver writes into the output folder: a worker returns the take's
bytes, the driver writes them to ``NAME.EXT.partial`` in the output folder,
fsyncs and renames (:func:`write_atomic`). So an interrupted batch never leaves
a partial file under a final name. ``batch_report.json`` records each input's
status, seconds and error, and each finished take's ``sha256`` and ``bytes``;
it is rewritten after every take, before the take's rename, so even a driver
killed with SIGKILL leaves a report that names every finished take. A rerun
skips the outputs that report names with the same sha256; any other file in
a take's place fails that take unless ``force`` replaces it (a folder or a
link is never replaced). :func:`exit_code` is 0 when every input has its take,
1 when any input failed or was cancelled.

This module imports neither bpy nor torch: workers do, in their own process.
The one exception is a ``--style-clip``: the driver reads it once, before any
take (Blender's readers, as ``rigmind gesture --style-clip`` reads it), so a
clip that cannot be used is one error and the workers get the clip's style,
not its path (a Ray node need not see the file).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import shutil
import stat
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .backend import limits, options
from .backend.emotion.timeline import parse_emotions
from .backend.gesture.style_layer import check_style
from .backend.errors import Cancelled, UserError
from .backend.stop_signals import StopSignals
from .backend.take_seeds import derive_seed

KINDS = ("gesture", "face", "walk", "track")
#: Output formats per kind (suffix without the dot). ``csv``/``json`` are the
#: face's ARKit curves (Live Link Face CSV / JSON); ``npz`` is the gesture in
#: the EMAGE / BEAT2 SMPL-X schema (no rig needed).
FORMATS = {
    "gesture": ("fbx", "bvh", "glb", "blend", "npz", "csv"),
    "face": ("csv", "json", "blend"),
    "walk": ("fbx", "bvh", "glb", "blend"),
    "track": ("fbx", "bvh", "glb", "blend"),
}
#: Tracker files a track batch reads (backend/tracking/trackers.py).
TRACKER_SUFFIXES = (".csv",)
AUDIO_SUFFIXES = (".wav", ".flac", ".mp3", ".ogg", ".opus", ".m4a", ".aiff", ".aif")
ENGINES = ("local", "ray")
REPORT_NAME = "batch_report.json"
PARTIAL_SUFFIX = ".partial"
# A walk manifest is read whole; 10 000 walks of 1 000 points fit in this.
MAX_MANIFEST_BYTES = 64 * 2**20
#: A local batch's scratch folder in the system's temp folder: this, the driver's pid, "-", random letters.
SCRATCH_PREFIX = "rigmind-batch-"


class BatchError(UserError):
    """A batch the user must fix before it can start (bad folder, manifest, format)."""


class BatchStopped(Cancelled):
    """The batch was stopped (Ctrl-C, SIGTERM) after it had started: unlike
    other cancels, finished takes and the report are on disk. ``outcome``
    is the one line that says so (the CLI prints it); ``report`` the report."""

    def __init__(self, outcome: str, report: dict):
        super().__init__(outcome)
        self.outcome, self.report = outcome, report


@dataclass(frozen=True)
class BatchItem:
    """One take to make. ``name`` is the output's stem and the seed's source;
    ``source`` the speech file (empty for a walk); ``params`` what differs
    per take (a walk's path, style, speed, gait)."""

    name: str
    source: str = ""
    params: dict = field(default_factory=dict)
    #: Why this input can make no take (a dangling link, a folder named like
    #: a speech file): it is reported as failed with this reason, no worker sees it.
    problem: str = ""


@dataclass(frozen=True)
class WorkerConfig:
    """What every take of a batch shares.

    ``rig``: rig file (.blend .glb .gltf .fbx) or None where the format needs
    none; ``face``: face mesh object name, ``"auto"`` (the mesh with the most
    ARKit keys) or None; ``amount`` 0..1, ``base_seed`` mixed into every
    take's seed; ``emotion``: ``--emotion`` texts every take follows
    (``backend.emotion.timeline``); ``style``/``style_clip``: the
    gesture's style name and style clip path; ``method``: the track
    batch's method (``options.TRACK_METHODS``) and placement
    (``options.TRACK_PLACEMENTS``); ``threads``: intra-op threads per worker (1 keeps results
    identical whatever the worker count)."""

    kind: str
    fmt: str
    rig: str | None = None
    armature: str | None = None
    face: str | None = None
    amount: float = 0.5
    base_seed: int = 0
    face_method: str = "model"
    base: str = "idle"
    controller: str = "auto"
    data: str | None = None
    emotion: tuple = ()
    style: str = ""
    style_clip: str | None = None
    method: str = "model"
    placement: str = "rig"
    threads: int = 1


@dataclass
class ItemReport:
    name: str
    input: str
    output: str
    status: str = "pending"     # done | skipped | failed | cancelled
    seconds: float = 0.0
    error: str = ""
    seed: int = 0
    worker: str = ""
    started_at: float = 0.0     # wall clock (time.time()) in the worker
    finished_at: float = 0.0    # wall clock when the driver had the output
    # The output file this batch wrote for this input (made now or by an
    # earlier run; kept while a --force redo has not replaced it, or after
    # the user changed the file): its SHA-256 (hex) and size in bytes.
    sha256: str = ""
    bytes: int = 0


# --- inputs ---------------------------------------------------------------------


def audio_items(folder) -> list:
    """One item per speech file directly in ``folder`` (sorted by name)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise BatchError(f"--audio-dir {folder}: not a folder; give the folder that holds the speech files")
    # Every entry with a speech suffix is an input, also one that is no
    # file (a dangling link, a folder): it fails with its reason instead of
    # silently missing from the report.
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in AUDIO_SUFFIXES)
    if not files:
        raise BatchError(f"--audio-dir {folder}: no speech files ({' '.join(AUDIO_SUFFIXES)}) in it")
    stems = {}
    for p in files:
        if p.stem in stems:
            raise BatchError(f"--audio-dir {folder}: {stems[p.stem].name} and {p.name} would both write "
                             f"'{p.stem}'; rename one")
        stems[p.stem] = p
    return [_audio_item(p) for p in files]


def _audio_item(p: Path) -> BatchItem:
    """The input for the entry ``p`` of ``--audio-dir``: a regular file, or a
    link to one (named after the link), is a speech file; anything else is
    an input with its ``problem``."""
    problem = _not_a_speech_file(p)
    return BatchItem(name=p.stem, source=str(p if problem else p.resolve()), problem=problem)


def tracker_items(folder) -> list:
    """One item per tracker file (``.csv``) directly in ``folder`` (sorted by name)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise BatchError(f"--trackers-dir {folder}: not a folder; give the folder that holds the tracker files")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in TRACKER_SUFFIXES)
    if not files:
        raise BatchError(f"--trackers-dir {folder}: no tracker files ({' '.join(TRACKER_SUFFIXES)}) in it")
    items = []
    for p in files:
        problem = _not_an_input_file(p, "a tracker file", "--trackers-dir")
        items.append(BatchItem(name=p.stem, source=str(p if problem else p.resolve()), problem=problem))
    return items


def _not_a_speech_file(p: Path) -> str:
    """Why the folder entry ``p`` cannot be read as a speech file ("" when it can)."""
    return _not_an_input_file(p, "a speech file", "--audio-dir")


def _not_an_input_file(p: Path, what_file: str, option: str) -> str:
    """Why the folder entry ``p`` of ``option`` cannot be read as
    ``what_file`` ("" when it can)."""
    link = " (a symbolic link)" if p.is_symlink() else ""
    try:
        st = p.stat()  # follows a link: its target is what a worker would read
    except FileNotFoundError:
        return f"{p.name} is a symbolic link to {os.readlink(p)}, which does not exist; fix or remove the link"
    except OSError as e:
        return f"{p.name}{link} cannot be read ({e.strerror or e}); fix it or move it out of {option}"
    if stat.S_ISREG(st.st_mode):
        return ""
    what = "a folder" if stat.S_ISDIR(st.st_mode) else "a pipe, socket or device"
    return f"{p.name}{link} is {what}, not {what_file}; move it out of {option}"


_SAFE_NAME = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_. ")


def walk_items(manifest) -> list:
    """Items from a JSON list of ``{name, path, style, speed, gait, actions,
    start}``: ``path`` is ``"x,y;x,y;..."`` (a point may add its speed,
    ``x,y,speed``) or ``[[x, y], ...]`` in metres (Blender world XY);
    ``style``/``speed``/``gait`` are optional (the walk command's defaults),
    ``actions`` is ``"jump@3; crouch@7-10"`` or a list of such strings and
    ``start`` ``standing``/``lying-up``/``lying-down`` (``rigmind walk
    --action/--start``). Every entry is checked as
    ``rigmind walk`` checks its options, before any take: a bad one refuses
    the manifest, naming the entry."""
    manifest = Path(manifest)
    try:
        size = manifest.stat().st_size
        if size > MAX_MANIFEST_BYTES:
            raise BatchError(f"--paths {manifest}: {size} bytes, over the {MAX_MANIFEST_BYTES // 2**20} MB "
                             "a walk manifest may have; split it into several batches")
        with manifest.open("rb") as f:  # bounded even if the file grows after the stat
            data = f.read(MAX_MANIFEST_BYTES + 1)
        if len(data) > MAX_MANIFEST_BYTES:
            raise BatchError(f"--paths {manifest}: over the {MAX_MANIFEST_BYTES // 2**20} MB a walk manifest "
                             "may have; split it into several batches")
        entries = json.loads(data.decode("utf-8"))
    except FileNotFoundError:
        raise BatchError(f"--paths {manifest}: file not found") from None
    # ValueError covers JSONDecodeError and integers past Python's digit
    # limit; RecursionError a list nested thousands deep.
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        reason = "nested too deep" if isinstance(e, RecursionError) else str(e)[:200]
        raise BatchError(f"--paths {manifest}: not a JSON file ({reason}); write a JSON list of "
                         "{\"name\": ..., \"path\": \"0,0;4,0\"}") from None
    if not isinstance(entries, list) or not entries:
        raise BatchError(f"--paths {manifest}: expected a non-empty JSON list of walks")
    items, seen = [], set()
    for k, e in enumerate(entries):
        where = f"--paths {manifest}: entry {k}"
        if not isinstance(e, dict):
            raise BatchError(f"{where} is not an object with name and path")
        name = e.get("name")
        if not isinstance(name, str) or not name or not set(name) <= _SAFE_NAME or name.startswith("."):
            raise BatchError(f"{where}: 'name' must be a file-name-safe string (letters, digits, - _ . space)")
        if name in seen:
            raise BatchError(f"{where}: name {name!r} used twice")
        seen.add(name)
        unknown = set(e) - {"name", "path", "style", "speed", "gait", "actions", "start"}
        if unknown:
            raise BatchError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
        items.append(BatchItem(name=name, params=_walk_params(e, where)))
    return items


def _walk_params(entry: dict, where: str) -> dict:
    """A manifest entry's ``{path, style, speed, gait}`` (path as text),
    checked: the types, the speed's range, the style and gait names, and the
    path by the walk command's own parser and limits."""
    path = entry.get("path")
    if isinstance(path, list):
        path = ";".join(_point_text(pt, where) for pt in path)
    if not isinstance(path, str) or not path.strip():
        raise BatchError(f"{where}: 'path' is missing; give \"x,y;x,y;...\" in metres")
    params = {"path": path}
    for key, kind in (("style", str), ("gait", str), ("speed", (int, float))):
        if key in entry and entry[key] is not None:
            if not isinstance(entry[key], kind) or isinstance(entry[key], bool):
                raise BatchError(f"{where}: {key!r} has the wrong type")
            params[key] = entry[key]
    params.update(_walk_actions(entry, where))
    if "speed" in params:  # the walk command's range (backend/limits.py), refused before any take
        limits.check("speed", params["speed"], option=f"{where}: 'speed'")
    where = f"{where} ({entry['name']!r})"
    # Names as `rigmind walk --style/--gait` take them (any case).
    for key, names in (("style", options.STYLES), ("gait", options.GAITS)):
        if key in params:
            params[key] = params[key].lower()
            if params[key] not in names:
                raise BatchError(f"{where}: unknown {key} {entry[key]!r}; use one of {', '.join(names)}")
    _check_walk_path(path, params.get("speed"), where)
    return params


def _walk_actions(entry: dict, where: str) -> dict:
    """A manifest entry's ``actions`` (a string ``"jump@3; crouch@7-10"`` or a
    list of such strings) and ``start`` (``options.START_POSES``), read as
    ``rigmind walk --action/--start`` reads them (their fit to the path and
    the rig is the walk job's check)."""
    from .backend.locomotion.actions.action_plan import parse_actions

    out = {}
    actions = entry.get("actions")
    if actions is not None:
        if isinstance(actions, str):
            actions = [actions]
        if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
            raise BatchError(f"{where}: 'actions' must be a string like \"jump@3; crouch@7-10\" or a list of them")
        out["actions"] = list(actions)
    start = entry.get("start")
    if start is not None and not isinstance(start, str):
        raise BatchError(f"{where}: 'start' must be one of {', '.join(options.START_POSES)}")
    if start is not None:
        out["start"] = start.lower()
    if out:
        try:
            parse_actions(out.get("actions", ()), out.get("start", "standing"))
        except UserError as e:
            raise BatchError(f"{where}: {e}") from None
    return out


def _point_text(point, where: str) -> str:
    """One ``[x, y]`` or ``[x, y, speed]`` point of a manifest's list path
    as ``rigmind walk --path`` text. Only JSON numbers count: a string,
    boolean or object is refused rather than read character by character
    or key by key, and a number past float range rather than overflowing."""
    bad = BatchError(f"{where}: 'path' must be [[x, y], ...] or [[x, y, speed], ...] numbers (metres, m/s)")
    if not isinstance(point, list) or len(point) not in (2, 3):
        raise bad
    coords = []
    for c in point:
        if isinstance(c, bool) or not isinstance(c, (int, float)):
            raise bad
        try:
            c = float(c)
        except OverflowError:
            raise bad from None
        if not math.isfinite(c):
            raise bad
        coords.append(f"{c:.17g}")
    return ",".join(coords)


def _check_walk_path(text: str, speed, where: str) -> None:
    """``text`` as ``rigmind walk --path`` reads and checks it (points,
    point speeds, the path's size and, given ``speed`` m/s, its duration)."""
    from .backend.locomotion.path_input import parse_path, path_xy

    try:
        limits.check_path(path_xy(parse_path(text)), speed)
    except UserError as e:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise BatchError(f"{where}: 'path' {shown!r}: {str(e).removeprefix('--path ')}") from None


def output_path(out_dir, item: BatchItem, fmt: str) -> Path:
    return Path(out_dir) / f"{item.name}.{fmt}"


# --- writing --------------------------------------------------------------------


def write_atomic(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` via ``path.partial`` in the same folder,
    fsync and rename: readers see the old file or the whole new one."""
    path = Path(path)
    tmp = write_partial(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_partial(path, data: bytes) -> Path:
    """Write ``data`` to ``path.partial`` (replacing a file or link there,
    never writing through one) and fsync it; returns that path, for the
    caller to rename onto ``path``."""
    path = Path(path)
    tmp = path.with_name(path.name + PARTIAL_SUFFIX)
    try:
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        with open(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        with contextlib.suppress(OSError):  # e.g. a folder there: the first error is the one to report
            tmp.unlink(missing_ok=True)
        raise
    return tmp


def file_digest(path) -> tuple:
    """``(sha256 hex, size in bytes)`` of the file at ``path``."""
    h, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
            size += len(block)
    return h.hexdigest(), size


# --- progress -------------------------------------------------------------------


def _clock(seconds: float) -> str:
    seconds = max(int(round(seconds)), 0)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Progress:
    """A one-line bar (count, rate, ETA) on a terminal; one plain line per
    finished input otherwise (logs, CI)."""

    def __init__(self, total: int, stream=None, *, tty: bool = None):
        self.total, self.done, self.failed = total, 0, 0
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.t0 = time.perf_counter()

    def line(self) -> str:
        elapsed = time.perf_counter() - self.t0
        rate = self.done / elapsed * 60.0 if elapsed > 0 and self.done else 0.0
        eta = (self.total - self.done) / (rate / 60.0) if rate > 0 else float("nan")
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        bar = "#" * filled + "." * (width - filled)
        eta_text = _clock(eta) if eta == eta else "?"
        fail = f", {self.failed} failed" if self.failed else ""
        return f"[{bar}] {self.done}/{self.total}{fail}  {rate:.1f} takes/min  ETA {eta_text}"

    def update(self, report: ItemReport) -> None:
        self.done += 1
        self.failed += report.status == "failed"
        if self.tty:
            self.stream.write("\r" + self.line())
            if self.done == self.total:
                self.stream.write("\n")
        else:
            what = report.status if report.status != "failed" else f"FAILED: {report.error}"
            self.stream.write(f"[{self.done}/{self.total}] {report.name}: {what} ({report.seconds:.1f} s)\n")
        self.stream.flush()


# --- engines --------------------------------------------------------------------


def _local_pool(config: WorkerConfig, workers: int, scratch: str, clip=None):
    """A process pool whose workers each build one TakeWorker (spawned:
    bpy and torch are not fork-safe). Each worker knows this process's pid,
    to end when it ends (however it ends: kill -9 too), keeps its
    scratch files under ``scratch``, which this process removes, and gets
    the style ``clip`` as the driver read it."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from .operators import batch_worker

    ctx = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=batch_worker.init_process,
                               initargs=(config, os.getpid(), scratch, clip))


#: Seconds a terminated worker gets to exit before it is killed.
STOP_GRACE_S = 10.0


def _stop_workers(pool) -> None:
    """Terminate the pool's processes and wait for them (kill what does not
    exit): no worker may outlive the batch, whatever stopped it."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(STOP_GRACE_S)
        if proc.is_alive():
            proc.kill()
            proc.join(STOP_GRACE_S)
    pool.shutdown(wait=False, cancel_futures=True)


def _run_local(config, todo, workers, on_result, clip=None):
    """``todo`` on a local pool of ``workers`` processes (``clip``: the
    batch's style clip, read); returns the worker stats."""
    # The workers' scratch copies of the rig live here, so they go with the
    # batch even when a worker is terminated (it cannot clean up itself).
    # Only a driver killed with SIGKILL leaves it; its pid in the name says whose.
    scratch = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")
    try:
        return _run_pool(_local_pool(config, workers, scratch, clip), todo, on_result)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run_pool(pool, todo, on_result):
    """Every item of ``todo`` through ``pool``; returns the worker stats.
    Whatever ends it early, the pool's processes have ended when it returns."""
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    from .operators import batch_worker

    stats = {}
    try:
        futures = {pool.submit(batch_worker.run_in_process, item): item for item in todo}
        for fut in as_completed(futures):
            try:
                result = fut.result()
            except BrokenProcessPool:
                # A worker died (killed, out of memory, a crash in Blender):
                # its take and those still queued fail, with that reason.
                result = batch_worker.TakeResult(futures[fut].name, error="internal error: the worker process died")
            _check_setup(result)
            stats.setdefault(result.worker, result)
            on_result(futures[fut], result)
    except BaseException:
        # Ctrl-C, SIGTERM, a set-up failure or a crash: stop the workers now
        # (a take in progress is lost; nothing of it was written under a
        # final name).
        _stop_workers(pool)
        raise
    pool.shutdown(wait=True)
    return [_worker_stats(r) for r in stats.values() if r.worker]


def _worker_stats(result) -> dict:
    return {"worker": result.worker, "startup_s": round(result.startup_s, 3), "load_s": round(result.load_s, 3)}


def _check_setup(result) -> None:
    """A worker that could not load the rig or the models fails the whole
    batch as a bad argument, not each take."""
    if result.setup_error:
        raise BatchError(result.error)


def _run_ray(config, todo, workers, address, on_result, clip=None):
    try:
        import ray
        from ray.util import ActorPool
    except ImportError:
        raise BatchError("--engine ray needs Ray: run `python3 install.py setup --with ray` "
                         "(or pip install ray) first") from None
    from .operators import batch_worker

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 **({} if address else {"num_cpus": workers}))
    # The rig travels through the object store, so workers on other nodes
    # need no shared folder; speech files too (their bytes, per take).
    rig_ref = ray.put(Path(config.rig).read_bytes()) if config.rig else None
    remote = ray.remote(num_cpus=1)(batch_worker.RayTakeWorker)
    clip_ref = ray.put(clip) if clip is not None else None
    actors = [remote.remote(config, rig_ref, Path(config.rig).suffix if config.rig else "", clip_ref)
              for _ in range(workers)]
    pool = ActorPool(actors)
    by_name = {}

    def submit(actor, item):
        data = Path(item.source).read_bytes() if item.source else None
        by_name[item.name] = item
        return actor.run.remote(item, data)

    try:
        for result in pool.map_unordered(submit, todo):
            on_result(by_name[result.name], result)
        return [ray.get(a.stats.remote()) for a in actors]
    except ray.exceptions.RayActorError as e:
        # An actor that could not start (the rig or the models failed to load).
        cause = getattr(e, "cause", None) or e
        raise BatchError(f"a Ray worker could not start: {str(cause).strip().splitlines()[-1]}") from None
    except BaseException:
        # Stopped: the actors' takes in progress are dropped, not waited for.
        for a in actors:
            ray.kill(a)
        raise


# --- the batch ------------------------------------------------------------------


def check_settings(config: WorkerConfig, workers: int = None) -> None:
    """The batch's numbers against the CLI's table (backend/limits.py), so a
    script calling :func:`run_batch` is refused what ``rigmind batch`` is."""
    limits.check("amount", config.amount, option="--amount")
    if config.method not in options.TRACK_METHODS:
        raise BatchError(f"--method {config.method!r}: use one of {', '.join(options.TRACK_METHODS)}")
    limits.check("seed", config.base_seed, option="--seed")
    parse_emotions(list(config.emotion))
    check_style(config.style)
    if workers is not None:
        limits.check("workers", workers, option="--workers")


def _checked_batch(config: WorkerConfig, engine: str, workers):
    """The kind, format, engine and settings checked, then the style clip
    read (:func:`~.operators.batch_worker.read_clip`): its style, or None
    without one. Any of them wrong is one :class:`UserError`, before the
    output folder exists."""
    if config.kind not in KINDS:
        raise BatchError(f"batch kind must be one of {', '.join(KINDS)}")
    if config.fmt not in FORMATS[config.kind]:
        raise BatchError(f"--format {config.fmt}: batch {config.kind} writes {', '.join(FORMATS[config.kind])}")
    if engine not in ENGINES:
        raise BatchError(f"--engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    check_settings(config, workers)
    from .operators import batch_worker

    return batch_worker.read_clip(config)


def _made_out_dir(out_dir) -> Path:
    """``out_dir`` made (the batch is known good by then)."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise BatchError(f"--out-dir {out_dir} is a file; give a folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    what = _not_a_regular_file(out_dir / REPORT_NAME)
    if what:
        raise BatchError(f"{out_dir / REPORT_NAME} is {what}, where the batch writes its report; move it away")
    return out_dir


def _not_a_regular_file(path: Path) -> str:
    """What is at ``path`` when it is neither absent nor a regular file (a
    link is a link, whatever it points to); "" otherwise."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return ""
    if stat.S_ISREG(mode):
        return ""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a pipe, socket or device"


def _name_max(folder: Path) -> int:
    """The longest file name ``folder``'s file system takes, in bytes (255 where it cannot say)."""
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):  # AttributeError: no pathconf (Windows)
        return 255


def _previous_takes(out_dir: Path) -> dict:
    """``{take name: its item}`` for every take the previous ``batch_report.json``
    says this batch wrote (an item with a sha256, whatever its status: a
    take redone with --force and stopped, or edited since, keeps the record
    of the file the batch wrote); {} without a readable report."""
    try:
        items = json.loads((out_dir / REPORT_NAME).read_text(encoding="utf-8"))["items"]
        return {i["name"]: i for i in items if isinstance(i, dict) and isinstance(i.get("sha256"), str)
                and i["sha256"] and isinstance(i.get("name"), str)}
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return {}


@dataclass
class _Plan:
    """What :func:`_plan` needs besides the item: the previous report's
    takes (:func:`_previous_takes`), ``force``, the folder's ``name_max``
    (bytes) and the format."""

    previous: dict
    force: bool
    name_max: int
    fmt: str


def _plan(config: WorkerConfig, items: list, out_dir: Path, force: bool):
    """``(reports by name, items still to make)``. An item is failed now
    when it has a ``problem``, a name the folder cannot hold or the report's,
    or something other than this batch's output in its place; skipped when
    its output is the file the previous report recorded (unless ``force``);
    made otherwise. A ``.partial`` left by an interrupted run goes."""
    plan = _Plan(_previous_takes(out_dir), force, _name_max(out_dir), config.fmt)
    reports, todo = {}, []
    for item in items:
        out = output_path(out_dir, item, config.fmt)
        rep = ItemReport(item.name, item.source or item.params.get("path", ""), str(out),
                         seed=derive_seed(item.name, config.base_seed))
        reports[item.name] = rep
        problem = item.problem or _name_problem(item, out, plan) or _clear_partial(out)
        if problem:
            rep.status, rep.error = "failed", problem
        elif _existing_output(rep, out, plan) == "make":
            todo.append(item)
    return reports, todo


def _name_problem(item: BatchItem, out: Path, plan: _Plan) -> str:
    """Why ``out`` cannot be this take's file name: the report's (compared
    without case: macOS and Windows file systems ignore it), or too long
    for the folder with the ``.partial`` written first."""
    what = "file" if item.source else "entry"
    if out.name.casefold() == REPORT_NAME.casefold():
        return f"{out.name}: name reserved for the batch report; rename the {what}"
    longest = len(os.fsencode(out.name + PARTIAL_SUFFIX))
    if longest > plan.name_max:
        shown = item.name if len(item.name) <= 24 else item.name[:24] + "..."
        return (f"the name {shown} is {len(item.name)} characters; with .{plan.fmt}{PARTIAL_SUFFIX} "
                f"its file name is {longest} bytes, over this folder's limit of {plan.name_max}: rename the {what}")
    return ""


def _clear_partial(out: Path) -> str:
    """Remove a ``.partial`` left by an interrupted run; a reason when it cannot go."""
    partial = out.with_name(out.name + PARTIAL_SUFFIX)
    if _not_a_regular_file(partial) == "a folder":
        return f"{partial.name} is a folder, where the batch writes this take first; move it away"
    try:
        partial.unlink(missing_ok=True)
    except OSError as e:
        return f"cannot remove the leftover {partial.name} ({e.strerror or e}); remove it"
    return ""


def _existing_output(rep: ItemReport, out: Path, plan: _Plan) -> str:
    """What to do with the take whose output path is ``out``: "make" it (no
    file there, or ``force`` on a regular file), or leave it "skipped" (the
    file the previous report recorded) or "failed" (a folder, a link or
    another file there), with ``rep`` updated to say so."""
    what = _not_a_regular_file(out)
    if what:
        rep.status, rep.error = "failed", f"{out.name} exists and is {what}; move it away (--force replaces only files)"
        return "failed"
    if not out.exists():
        return "make"
    record = plan.previous.get(rep.name)
    if record is not None and Path(str(record.get("output", ""))).name != out.name:
        record = None  # the report's take of that name wrote another file (another format)
    if plan.force and record is None:
        return "make"
    try:
        sha, size = file_digest(out)
    except OSError as e:
        rep.status, rep.error = "failed", f"{out.name} exists and cannot be read ({e.strerror or e}); move it away"
        return "failed"
    if record is not None and record.get("sha256") == sha:
        # This batch's file; the report keeps saying so until a new take
        # replaces it (a --force redo stopped before that leaves it ours).
        rep.sha256, rep.bytes = sha, size
        if plan.force:
            return "make"
        rep.status = "skipped"
        return "skipped"
    if plan.force:
        return "make"
    why = "was not written by this batch"
    if record is not None:
        why = "changed since this batch wrote it"
        # Still the record of what the batch wrote: the next run says the same, or skips it if undone.
        rep.sha256, rep.bytes = record["sha256"], record.get("bytes", 0)
    rep.status, rep.error = "failed", f"{out.name} exists and {why}; move it away or pass --force to replace it"
    return "failed"


def _keep_take(rep: ItemReport, payload: bytes, checkpoint) -> None:
    """Write a finished take (its bytes ``payload``) to ``rep.output``: the
    ``.partial`` first, then the report (``checkpoint()``) with the take
    done and its sha256, then the rename. A driver killed at any point
    leaves either no file under the final name (a rerun makes it) or the
    file the report records (a rerun skips it), never a take the report
    does not know. A file system error fails this take only."""
    out = Path(rep.output)
    try:
        tmp = write_partial(out, payload)
    except OSError as e:
        rep.status, rep.error = "failed", _write_error(out, e)
        return
    before = rep.sha256, rep.bytes
    rep.status, rep.sha256, rep.bytes = "done", hashlib.sha256(payload).hexdigest(), len(payload)
    checkpoint()
    try:
        os.replace(tmp, out)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        rep.status, rep.error = "failed", _write_error(out, e)
        rep.sha256, rep.bytes = before


def _write_error(out: Path, e: OSError) -> str:
    return f"cannot write {out}: {e.strerror or e}; check the output folder (free space, permissions, what is in the way)"


def _report(config: WorkerConfig, reports: dict, engine: str, workers: int, seconds: float,
            interrupted: bool, stats: list, *, in_progress: bool = False) -> dict:
    """The batch report (``batch_report.json``'s content); takes never started
    are "cancelled". ``in_progress``: a checkpoint written while takes are
    still being made, whose unfinished takes stay "pending"."""
    statuses = ("done", "skipped", "failed", "cancelled") + (("pending",) if in_progress else ())
    if not in_progress:
        for rep in reports.values():
            if rep.status == "pending":
                rep.status = "cancelled"
    return {
        "kind": config.kind, "format": config.fmt, "engine": engine, "workers": workers,
        "config": asdict(config), "wall_seconds": round(seconds, 3),
        "interrupted": interrupted, "in_progress": in_progress,
        "counts": {s: sum(r.status == s for r in reports.values()) for s in statuses},
        "worker_stats": stats,
        "items": [asdict(r) for r in reports.values()],
    }


def _report_bytes(report: dict) -> bytes:
    return (json.dumps(report, indent=2) + "\n").encode("utf-8")


def _write_report(report: dict, out_dir: Path, interrupted: bool) -> dict:
    """Write the report; a stopped batch raises :class:`BatchStopped` with the
    line that says what is on disk (also when the report itself could not be
    written)."""
    report_path = out_dir / REPORT_NAME
    try:
        write_atomic(report_path, _report_bytes(report))
    except OSError as e:
        if not interrupted:
            raise
        raise BatchStopped(stopped_line(report, out_dir, None, e), report) from None
    if interrupted:
        raise BatchStopped(stopped_line(report, out_dir, report_path), report)
    return report


def run_batch(config: WorkerConfig, items: list, out_dir, *, engine: str = "local", workers: int = None,
              address: str = None, force: bool = False, progress_stream=None, tty: bool = None) -> dict:
    """Make every take in ``items`` that has no finished output in
    ``out_dir`` (all of them with ``force``); returns the report (also
    written to ``out_dir/batch_report.json``)."""
    clip = _checked_batch(config, engine, workers)
    out_dir = _made_out_dir(out_dir)
    workers = max(1, int(workers or os.cpu_count() or 1))
    t0 = time.perf_counter()
    reports, todo = _plan(config, items, out_dir, force)
    workers = min(workers, max(len(todo), 1))
    progress = Progress(len(todo), progress_stream, tty=tty)

    # SIGINT and SIGTERM stop the batch the same way: no new take, the
    # workers stopped, the report written. From the first one on, the rest
    # of this function cannot be interrupted (a second Ctrl-C must not lose
    # the report), and a take being written is finished first.
    stop = StopSignals()

    def checkpoint():
        report = _report(config, reports, engine, workers, time.perf_counter() - t0, False, [], in_progress=True)
        try:
            write_atomic(out_dir / REPORT_NAME, _report_bytes(report))
        except OSError:
            pass  # the batch's end writes the report again, or says why it cannot

    def on_result(item, result):
        rep = reports[item.name]
        rep.seconds, rep.worker, rep.started_at = round(result.seconds, 3), result.worker, result.started_at
        if result.error:
            rep.status, rep.error = "failed", result.error
        else:
            with stop.held():
                _keep_take(rep, result.payload, checkpoint)
        rep.finished_at = time.time()
        progress.update(rep)

    stats, interrupted = [], False
    try:
        try:
            stop.install()
            if todo:
                if engine == "local":
                    stats = _run_local(config, todo, workers, on_result, clip)
                else:
                    stats = _run_ray(config, todo, workers, address, on_result, clip)
        finally:
            stop.disarm()
        # A signal after the last take changes nothing: the batch is whole.
    except KeyboardInterrupt:
        interrupted = True
    except BaseException:
        stop.restore()
        raise
    try:
        report = _report(config, reports, engine, workers, time.perf_counter() - t0, interrupted, stats)
        return _write_report(report, out_dir, interrupted)
    finally:
        stop.restore()


def stopped_line(report: dict, out_dir, report_path, error: OSError = None) -> str:
    """What a stopped batch left: ``cancelled: 3 of 8 takes kept in OUT,
    report written to OUT/batch_report.json`` (or why the report is not)."""
    c = report["counts"]
    kept, total = c["done"] + c["skipped"], len(report["items"])
    failed = f" ({c['failed']} failed)" if c["failed"] else ""
    line = f"cancelled: {kept} of {total} takes kept in {Path(out_dir).resolve()}{failed}"
    if report_path is None:
        return f"{line}; the report could not be written ({getattr(error, 'strerror', None) or error})"
    return f"{line}, report written to {Path(report_path).resolve()}"


#: The statuses of an input that has its take: made now, or found made.
PRODUCED = ("done", "skipped")


def exit_code(report: dict) -> int:
    """0 when every input has its take (done, or skipped: made before), 1
    when any has not (failed, cancelled, or anything else)."""
    return 0 if all(r["status"] in PRODUCED for r in report["items"]) else 1


def summary_table(report: dict) -> str:
    """The end-of-batch table: one row per input that did not simply finish,
    then the totals."""
    rows = [r for r in report["items"] if r["status"] != "done"]
    lines = []
    if rows:
        w = max(len(r["name"]) for r in rows)
        lines.append(f"{'input':<{w}}  status     reason")
        for r in rows:
            lines.append(f"{r['name']:<{w}}  {r['status']:<9}  {r['error'] or ('output exists' if r['status'] == 'skipped' else '')}")
    c = report["counts"]
    done = [r for r in report["items"] if r["status"] == "done"]
    work = sum(r["seconds"] for r in done)
    lines.append(f"{c['done']} done, {c['skipped']} skipped, {c['failed']} failed, {c['cancelled']} cancelled "
                 f"in {report['wall_seconds']:.1f} s ({report['engine']}, {report['workers']} worker"
                 f"{'s' if report['workers'] != 1 else ''}; {work:.1f} s of take work)")
    return "\n".join(lines)
