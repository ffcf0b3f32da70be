"""Atomic output: a result file, or a folder of results, is either complete or absent.

Files are written to a temporary name and renamed into place; a folder of results is written
into a hidden staging folder beside it and moved into place only when the run has succeeded.

A staging folder is named ``.<out>.staging-<host>-<pid>-<random>``: a run that was killed
(SIGKILL, a power cut) cannot remove its own, so the next run into the same place removes those
whose process is gone (:func:`remove_stale_stages`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from sparsefric import interrupts
from sparsefric.errors import OptionError
from sparsefric.options import mention


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only on success.

    The temporary file lives in the same directory so that the final ``os.replace`` is atomic
    on POSIX file systems. On any exception (including ``KeyboardInterrupt``) it is removed,
    and a Ctrl-C or SIGTERM noted meanwhile is raised before the rename
    (:func:`sparsefric.interrupts.check`).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp_path, 0o666 & ~umask)  # mkstemp makes 0600; results are ordinary files
    try:
        yield tmp_path
        interrupts.check()
        os.replace(tmp_path, target)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (UTF-8)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def publish(stage: Path, out: Path, managed: Sequence[str] = ()) -> None:
    """Move staged files into ``out``; ``model.json`` last so that it marks a complete run.

    Files named in ``managed`` that an earlier run left in ``out`` and this one does not write
    again are removed first, so that a directory never mixes two runs. A Ctrl-C or SIGTERM
    noted during the run is raised first (:func:`sparsefric.interrupts.check`).
    """
    interrupts.check()
    out.mkdir(parents=True, exist_ok=True)
    for name in managed:
        old = out / name
        if not (stage / name).exists() and (old.exists() or old.is_symlink()):
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    entries = sorted(stage.iterdir(), key=lambda p: p.name == "model.json")
    for entry in entries:
        target = out / entry.name
        if target.is_dir() and entry.is_dir():
            shutil.rmtree(target)
        os.replace(entry, target)


def check_out_dir(out: Path) -> None:
    """Fail before any work when ``out`` cannot be a results directory: it, or the nearest
    existing folder above it, is not a directory, or new files cannot be made there (the
    staging folder goes beside ``out``; the results go into it)."""
    if out.exists() and not out.is_dir():
        raise OptionError("out", f"{out}: exists and is not a directory")
    check_writable(out, out.parent)
    if out.is_dir():
        check_writable(out, out)


def check_out_file(path: Path, force: bool = False) -> None:
    """Fail before any work when the output file ``path`` cannot be written atomically (the
    temporary file goes beside it): it is a directory, the nearest existing folder above it is
    not a directory, or new files cannot be made there; or it exists and ``force`` is not
    given (as the result folders of the other commands)."""
    if path.is_dir():
        raise OptionError("out", f"{path}: is a directory, expected a file name")
    if path.exists() and not force:
        raise OptionError("out", f"{path}: exists (use --force to replace it)")
    check_writable(path, path.parent)


def check_writable(out: Path, folder: Path) -> None:
    """:class:`OptionError` naming ``out`` unless ``folder`` takes new files or can be made:
    its nearest existing ancestor (itself if it exists) is a directory in which a folder can
    be created. The check creates an empty folder there and removes it again."""
    existing = folder
    while not (existing.exists() or existing.is_symlink()):
        existing = existing.parent
    if not existing.is_dir():
        raise OptionError("out", f"{out}: {existing} is not a directory")
    try:
        probe = tempfile.mkdtemp(prefix=".sparsefric-probe-", dir=existing)
    except OSError as exc:
        why = ("the file system does not allow it" if exc.errno == errno.ENOENT
               else (exc.strerror or str(exc)).lower())
        raise OptionError("out", f"{out}: cannot create files in {existing} ({why})") from None
    os.rmdir(probe)


def refuse_results(out: Path, names: Sequence[str], force: bool) -> None:
    """Fail before any work when ``out`` holds results of an earlier run and not ``force``.

    Parameters
    ----------
    out : Path
        The results directory.
    names : sequence of str
        The names a run writes; any of them in ``out`` marks an earlier run's results.
    force : bool
        Replace them (the ``force`` option).
    """
    check_out_dir(out)
    found = [n for n in names if (out / n).exists()] if out.is_dir() else []
    if found and not force:
        raise OptionError("out", f"{out}: holds the results of an earlier run ({found[0]}); "
                                 f"add {mention('force')} to replace them, or choose another "
                                 "directory")


#: Staging folders of processes on other hosts (or of older versions, without a pid) are
#: removed once they are this old [s].
STALE_AGE_S = 24 * 3600.0
_STAGE = re.compile(r"^\.(?P<out>.+)\.staging-(?:(?P<host>[A-Za-z0-9_.]+)-(?P<pid>[0-9]+)-)?"
                    r"[A-Za-z0-9_]+$")


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname()) or "host"


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _stale(entry: Path, out_name: str) -> bool:
    m = _STAGE.match(entry.name)
    if m is None or m["out"] != out_name or not entry.is_dir():
        return False
    if m["pid"] is not None and m["host"] == _host():
        return not _process_alive(int(m["pid"]))
    try:
        return time.time() - entry.stat().st_mtime > STALE_AGE_S
    except OSError:
        return False


def remove_stale_stages(out: Path) -> list[Path]:
    """Remove the staging folders beside ``out`` that runs which died left behind.

    A folder is stale when its process (named in it) no longer runs on this host, or, for a
    folder of another host or without a process id, when it is older than
    :data:`STALE_AGE_S`. Returns the folders removed.
    """
    if not out.parent.is_dir():
        return []
    removed = []
    for entry in out.parent.iterdir():
        if _stale(entry, out.name):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def staged(out: Path, work: Callable[[Path], None], managed: Sequence[str] = ()) -> None:
    """Run ``work(stage)`` in a fresh staging folder beside ``out``, then :func:`publish` it
    (``managed``: the names a run may write, see there). Stale staging folders of earlier runs
    into ``out`` are removed first (:func:`remove_stale_stages`)."""
    check_out_dir(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_stages(out)
    prefix = f".{out.name}.staging-{_host()}-{os.getpid()}-"
    stage = Path(tempfile.mkdtemp(prefix=prefix, dir=out.parent))
    try:
        work(stage)
        publish(stage, out, managed)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
