"""``tf.io.gfile`` (and TensorFlow 1's ``tf.gfile``) for local files:
the file helpers TF1 input code uses around its pipelines. ``glob``
matches as the pipeline's ``match_filenames_once`` does, and also lists
object-store URLs."""

from __future__ import annotations

import os
import shutil
import tempfile

from . import errors
from ._native import glob as _glob


def write_atomic(path, data):
    """Writes ``data`` (bytes) to ``path`` atomically: into a temporary
    file beside it, synced, then renamed over it, so that a crash while
    writing leaves the previous file."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".feedstock-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def glob(pattern):
    """The paths matching ``pattern``, sorted; ``[]`` if none."""
    try:
        return _glob(os.fsdecode(pattern))
    except errors.NotFoundError:
        return []


def exists(path):
    """Whether ``path`` exists."""
    return os.path.exists(path)


def isdir(path):
    """Whether ``path`` is a directory."""
    return os.path.isdir(path)


def listdir(path):
    """The names in directory ``path`` (``NotFoundError`` if there is
    none)."""
    if not os.path.isdir(path):
        raise errors.NotFoundError(None, None, f"could not find directory {path}")
    return os.listdir(path)


def makedirs(path):
    """Makes ``path`` and its parents; nothing if it exists."""
    os.makedirs(path, exist_ok=True)


def mkdir(path):
    """Makes the directory ``path``."""
    os.mkdir(path)


def remove(path):
    """Deletes the file ``path``."""
    os.remove(path)


def rmtree(path):
    """Deletes the directory ``path`` and everything in it."""
    shutil.rmtree(path)


def rename(src, dst, overwrite=False):
    """Renames ``src`` to ``dst`` (an existing ``dst`` only if
    ``overwrite``)."""
    if not overwrite and os.path.exists(dst):
        raise errors.AlreadyExistsError(None, None, f"file already exists: {dst}")
    os.replace(src, dst)


def copy(src, dst, overwrite=False):
    """Copies ``src`` to ``dst`` (an existing ``dst`` only if
    ``overwrite``)."""
    if not overwrite and os.path.exists(dst):
        raise errors.AlreadyExistsError(None, None, f"file already exists: {dst}")
    shutil.copyfile(src, dst)


class GFile:
    """A local file, opened as ``open`` opens it (``mode`` ``r``, ``rb``,
    ``w``, ``wb``, ``a``...), and a context manager."""

    def __init__(self, name, mode="r"):
        try:
            self._f = open(name, mode)  # noqa: SIM115 (closed by close/__exit__)
        except FileNotFoundError as e:
            raise errors.NotFoundError(None, None, f"{name}; No such file or directory") from e

    def __getattr__(self, attr):
        return getattr(self._f, attr)

    def __iter__(self):
        return iter(self._f)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


# TensorFlow 1's ``tf.gfile`` names.
Glob, Exists, IsDirectory, ListDirectory, MakeDirs, MkDir = glob, exists, isdir, listdir, makedirs, mkdir
Remove, DeleteRecursively, Rename, Copy, Open = remove, rmtree, rename, copy, GFile
