"""``tf.io.gfile`` (and TensorFlow 1's ``tf.gfile``) for local files:
the file helpers TF1 input code uses around its pipelines. ``glob``
matches as the pipeline's ``match_filenames_once`` does, and also lists
object-store URLs."""

from __future__ import annotations

import fnmatch
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
    """The paths matching ``pattern`` (or each pattern of a list, in
    turn), ``[]`` if none, in TensorFlow's order: a local pattern lists
    each directory in the order the file system gives its entries, as
    TensorFlow's ``GetMatchingPaths`` does, so that a program reading
    ``string_input_producer(tf.gfile.Glob(p), shuffle=False)`` reads its
    files in the order it does under TensorFlow. (The pipeline's
    ``match_filenames_once`` and ``matching_files`` sort, as TensorFlow's
    kernel does.) An object-store URL is listed sorted."""
    if not isinstance(pattern, (str, bytes, os.PathLike)):
        return [path for one in pattern for path in glob(one)]
    pattern = os.fsdecode(pattern)
    if "://" in pattern:
        try:
            return _glob(pattern)
        except errors.NotFoundError:
            return []
    return _local_matches(pattern)


def _local_matches(pattern):
    """TensorFlow's ``GetMatchingPaths`` over local files, written again
    because its order (and its ``./`` before a pattern with no
    directory) is what TF1 programs see: a pattern with no wildcard is
    itself if it exists; otherwise the directories are walked breadth
    first from the part of the pattern before its first wildcard, each
    level's entries in listing order, matched as ``fnmatch`` matches."""
    wildcard = min((i for i in map(pattern.find, "*?[\\") if i >= 0), default=-1)
    if wildcard < 0:
        return [pattern] if os.path.exists(pattern) else []
    root = os.path.dirname(pattern[:wildcard])
    if not root:
        root, pattern = ".", os.path.join(".", pattern)
    wants_dir = pattern.endswith("/")
    levels = [] if wants_dir else [pattern]
    parent = os.path.dirname(pattern)
    while len(parent) > len(root):
        levels.append(parent)
        parent = os.path.dirname(parent)
    levels.reverse()
    found, current = [], [root]
    for depth, level in enumerate(levels):
        last = depth == len(levels) - 1
        following = []
        for directory in current:
            try:
                names = os.listdir(directory)
            except OSError:
                continue
            for name in names:
                path = os.path.join(directory, name)
                if not fnmatch.fnmatchcase(path, level):
                    continue
                if last and not wants_dir:
                    found.append(path)
                elif os.path.isdir(path):
                    (found if last else following).append(path)
        current = following
    return found


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


def walk(top, topdown=True, onerror=None):
    """``(directory, subdirectories, files)`` for ``top`` and every
    directory under it, as TensorFlow's ``walk``: names in listing order,
    a directory before its subdirectories when ``topdown`` (after them
    otherwise); a missing ``top`` yields nothing, or is passed to
    ``onerror``."""
    try:
        names = listdir(top)
    except errors.NotFoundError as e:
        if onerror is not None:
            onerror(e)
        return
    subdirs = [n for n in names if os.path.isdir(os.path.join(top, n))]
    files = [n for n in names if n not in subdirs]
    if topdown:
        yield top, subdirs, files
    for name in subdirs:
        yield from walk(os.path.join(top, name), topdown, onerror)
    if not topdown:
        yield top, subdirs, files


def Walk(top, in_order=True):  # noqa: N802 (TensorFlow 1's name)
    """TensorFlow 1's ``tf.gfile.Walk``: :func:`walk` with ``in_order``
    for ``topdown``."""
    return walk(top, topdown=in_order)


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
Remove, DeleteRecursively, Rename, Copy, Open, FastGFile = remove, rmtree, rename, copy, GFile, GFile
