"""Write a user's output file all at once or not at all.

Every writer (Blender's exporters, ``save_as_mainfile``, NumPy, plain text)
writes to a hidden temporary path in the target's own folder; only when it
has finished is the file flushed to disk and renamed over the target with
``os.replace``, which is atomic on one file system. So:

* an interrupted (Ctrl-C) or failed run leaves the previous file untouched
  and no partial file behind;
* two processes writing the same path each write their own temporary file,
  and the last rename wins: the target is always one complete file.

The temporary path keeps the target's suffix, so writers that pick the
format from the suffix (Blender's exporters) still do. A ``.gltf`` is
several files (the ``.gltf``, its ``.bin`` and textures named after it), so
it is written into a hidden temporary folder under its real name and the
files are moved out, the ``.gltf`` itself last.

No bpy here: callers pass a function or use the context manager around
whatever writes.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
from pathlib import Path

from . import interrupts
from .errors import UserError

#: Suffixes written as several files side by side.
MULTI_FILE_SUFFIXES = (".gltf",)
#: What a temporary name starts with (hidden on Unix, easy to spot).
TEMP_PREFIX = ".rigmind-"


class OutputPathError(UserError):
    """The output path cannot be written (a folder, a parent that is a file,
    no permission). Its message is one line naming the path and the fix."""


def check_output_path(target, example_suffix: str = ".fbx") -> Path:
    """Refuse, before any work, an output path that cannot be written.

    Returns the absolute path. Creates missing parent folders (as the
    exporters always did). Raises :class:`OutputPathError`;
    ``example_suffix`` names the file a folder given as the target could
    hold, in the message.
    """
    target = Path(os.path.abspath(os.path.expanduser(str(target))))
    _check_name_length(target)
    try:
        return _check_writable(target, example_suffix)
    except OutputPathError:
        raise
    except OSError as e:  # e.g. a path through a file, a loop of links
        raise OutputPathError(f"cannot write {target}: {e.strerror or e}; choose another output path") from None


def _check_name_length(target: Path) -> None:
    """The file name, and the temporary name written first (a prefix and 8
    hex digits longer), must fit the file system's limit (usually 255 bytes)."""
    longest = len(_temp_name(target).encode("utf-8", "surrogateescape"))
    try:
        limit = os.pathconf("/", "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        limit = 255
    if longest > limit:
        extra = longest - len(target.name.encode("utf-8", "surrogateescape"))
        raise OutputPathError(f"the output file name is {len(target.name)} characters long; names here can be "
                              f"{limit - extra} at most (RigMind writes a temporary file first): choose a shorter name")


def _check_writable(target: Path, example_suffix: str = ".fbx") -> Path:
    if target.is_dir():
        raise OutputPathError(f"{target} is a folder; give a file name, e.g. "
                              f"{target / ('take' + (target.suffix or example_suffix))}")
    parent = target.parent
    # The first existing ancestor must be a folder we may write in.
    probe = parent
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise OutputPathError(f"cannot write {target}: {probe} is a file, not a folder; choose another output folder")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputPathError(f"cannot create the folder {parent}: {e.strerror or e}; choose another output folder") from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputPathError(f"cannot write in {parent} (permission denied); choose a folder you can write to")
    if target.exists() and not os.access(target, os.W_OK) and not target.is_symlink():
        # os.replace would succeed in a writable folder, but a read-only file
        # says the user means to keep it.
        raise OutputPathError(f"{target} is read-only; make it writable or choose another name")
    return target


def _temp_name(target: Path) -> str:
    return f"{TEMP_PREFIX}{target.name}.{secrets.token_hex(4)}{target.suffix}"


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # e.g. Windows: folders cannot be opened; the rename is still atomic
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _final_mode(target: Path) -> int:
    """Keep an overwritten file's permissions; a new file gets 0666 & ~umask
    like any ``open(..., 'w')``."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _remove_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def _leftovers(tmp: Path) -> list:
    """The temporary path and what a writer may make beside it (Blender saves
    through ``FILE@`` and may keep a ``FILE.blend1`` backup)."""
    return [tmp, tmp.with_name(tmp.name + "@"), tmp.with_name(tmp.name + "1")]


@contextlib.contextmanager
def atomic_output(target):
    """Yield a temporary path to write instead of ``target``; on a clean exit
    move it over ``target`` (fsync, then ``os.replace``). On any exception,
    KeyboardInterrupt included, remove the temporary file(s) and re-raise;
    the previous ``target`` is untouched.

    Raises :class:`OutputPathError` before yielding if ``target`` cannot be
    written, and after the writer if it wrote nothing.
    """
    target = check_output_path(target)
    if interrupts.interrupted():
        raise KeyboardInterrupt  # a Ctrl-C that Blender swallowed earlier
    folder = target.parent
    multi = target.suffix.lower() in MULTI_FILE_SUFFIXES
    if multi:
        tmp_dir = folder / _temp_name(target).removesuffix(target.suffix)
        tmp_dir.mkdir()
        tmp = tmp_dir / target.name
        leftovers = [tmp_dir]
    else:
        tmp = folder / _temp_name(target)
        leftovers = _leftovers(tmp)
    hold = interrupts.deferred()
    hold.__enter__()  # until the rename is done: see backend.interrupts
    try:
        try:
            yield tmp
        except RuntimeError as e:
            if interrupts.is_blender_interrupt(e):
                raise KeyboardInterrupt from None
            raise
        except OSError as e:
            # A Python writer refused by the file system (full disk, no
            # permission); an error about some other file is not ours to word.
            if e.filename is not None and not str(e.filename).startswith(str(folder)):
                raise
            raise OutputPathError(f"cannot write {target}: {e.strerror or e}") from None
        except Exception as e:
            raise _naming_target(e, tmp, target) from None
        if interrupts.interrupted():
            raise KeyboardInterrupt
        if not tmp.is_file() or tmp.stat().st_size == 0:
            raise OutputPathError(f"{target}: the writer produced no file; nothing was written")
        mode = _final_mode(target)
        if multi:
            _commit_folder(tmp_dir, target, mode)
        else:
            _fsync_file(tmp)
            os.chmod(tmp, mode)
            os.replace(tmp, target)
        _fsync_dir(folder)
    except BaseException:
        for p in leftovers:
            _remove_quietly(p)
        raise
    else:
        for p in (leftovers if multi else leftovers[1:]):
            _remove_quietly(p)
    finally:
        hold.__exit__(None, None, None)


def _naming_target(exc: Exception, tmp: Path, target: Path) -> Exception:
    """The same error with the user's path in its message instead of the
    temporary one (the user never sees ``.rigmind-…`` names)."""
    text = str(exc)
    if str(tmp) not in text:
        return exc
    try:
        return type(exc)(text.replace(str(tmp), str(target)))
    except Exception:
        return exc


def _commit_folder(tmp_dir: Path, target: Path, mode: int) -> None:
    """Move a multi-file output's side files (``.bin``, textures) into place,
    then the main file last, so a reader never finds a main file pointing at
    missing side files."""
    main = tmp_dir / target.name
    for f in sorted(tmp_dir.rglob("*")):
        if f.is_file():
            _fsync_file(f)
    for f in sorted(tmp_dir.iterdir()):
        if f == main:
            continue
        dest = target.parent / f.name
        if f.is_dir():
            if dest.exists():
                shutil.rmtree(dest) if dest.is_dir() else dest.unlink()
            os.replace(f, dest)
        else:
            os.replace(f, dest)
    os.chmod(main, mode)
    os.replace(main, target)


@contextlib.contextmanager
def replaced(target, suffix: str = ".tmp"):
    """For RigMind's own files (checkpoints, manifests, caches, logs), not
    the user's outputs (those go through :func:`atomic_output`, which checks
    the path and honours Ctrl-C): yield ``target``'s name + ``suffix`` beside
    it to write; on a clean exit move it over ``target`` (``os.replace``), so
    a reader never sees half a file. ``suffix`` keeps writers that add their
    own extension (``np.savez``: ".tmp.npz") on the name given."""
    target = Path(target)
    tmp = target.with_name(target.name + suffix)
    yield tmp
    os.replace(tmp, target)


def write_atomically(target, write, *args, **kwargs) -> Path:
    """``write(tmp_path, *args, **kwargs)`` inside :func:`atomic_output`;
    returns the final ``target`` path."""
    with atomic_output(target) as tmp:
        write(tmp, *args, **kwargs)
    return Path(os.path.abspath(os.path.expanduser(str(target))))
