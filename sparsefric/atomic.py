"""Atomic output: a result file, or a folder of results, is either complete or absent.

Files are written to a temporary name and renamed into place; a folder of results is written
into a hidden staging folder beside it and moved into place only when the run has succeeded.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from sparsefric.errors import OptionError


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only on success.

    The temporary file lives in the same directory so that the final ``os.replace`` is atomic
    on POSIX file systems. On any exception (including ``KeyboardInterrupt``) it is removed.
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
    again are removed first, so that a directory never mixes two runs.
    """
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
    """Fail before any work when ``out`` cannot be a results directory."""
    if out.exists() and not out.is_dir():
        raise OptionError("out", f"{out}: exists and is not a directory")


def staged(out: Path, work: Callable[[Path], None], managed: Sequence[str] = ()) -> None:
    """Run ``work(stage)`` in a fresh staging folder beside ``out``, then :func:`publish` it
    (``managed``: the names a run may write, see there)."""
    check_out_dir(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-", dir=out.parent))
    try:
        work(stage)
        publish(stage, out, managed)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
