"""Runs every ```python block of README.md and docs/*.md, so that none
can rot.

Each block runs in a fresh namespace with the current directory a
temporary one holding the files the docs name: ``train-0.tfrecord`` and
``train-1.tfrecord`` (the shipped digits as ``tf.train.Example``s with
``pixels``, 64 int64, and ``label``) and ``data/`` (the repository's
shipped data). A block that imports a package that is not installed
(torch, jax) is skipped, saying which; a failing block fails with its
file and line.
"""

from __future__ import annotations

import gzip
import importlib.util
import re
from pathlib import Path

import pytest

import feedstock as fs

ROOT = Path(__file__).resolve().parents[3]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
OPTIONAL = ("torch", "jax", "ray")
# Sections whose blocks another test runs, with the fixtures they need
# (a local Ray, files of their own).
RUN_ELSEWHERE = {("many-hosts.md", "On Ray"), ("many-hosts.md", "Training on many hosts")}


def python_blocks(path):
    """(line of the block's first code line, code) for each ```python
    block of `path`, dedented as the fence is indented."""
    blocks, lines = [], path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = len(m.group(1)), m.group(2)
        start, i = i + 1, i + 1
        while i < len(lines) and not FENCE.match(lines[i]):
            i += 1
        section = next((h[3:].strip() for h in reversed(lines[:start]) if h.startswith("## ")), "")
        if lang == "python" and (path.name, section) not in RUN_ELSEWHERE:
            blocks.append((start + 1, "\n".join(line[indent:] for line in lines[start:i])))
        i += 1
    return blocks


BLOCKS = [(p, line, code) for p in DOCS for line, code in python_blocks(p)]


def test_the_docs_have_python_blocks():
    # The extraction finds the blocks it should: the README's three at least.
    assert sum(p.name == "README.md" for p, _, _ in BLOCKS) >= 3, BLOCKS


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("docs")
    rows = gzip.decompress((ROOT / "data" / "digits.csv.gz").read_bytes()).decode().splitlines()
    for shard in range(2):
        with fs.tfrecord.TFRecordWriter(str(d / f"train-{shard}.tfrecord")) as w:
            for line in rows[shard::2]:
                v = [int(x) for x in line.split(",")]
                ex = fs.example.Example(features=fs.example.Features(feature={
                    "pixels": fs.example.Feature(int64_list=fs.example.Int64List(value=v[:64])),
                    "label": fs.example.Feature(int64_list=fs.example.Int64List(value=[v[64]]))}))
                w.write(ex.SerializeToString())
    (d / "data").symlink_to(ROOT / "data")
    return d


@pytest.mark.parametrize(
    "path,line,code", BLOCKS, ids=[f"{p.relative_to(ROOT)}:{line}" for p, line, _ in BLOCKS])
def test_python_block(path, line, code, data_dir, monkeypatch):
    for name in OPTIONAL:
        if re.search(rf"^\s*(import|from) {name}\b", code, re.M) and importlib.util.find_spec(name) is None:
            pytest.skip(f"{path.name}:{line} needs {name}, which is not installed")
    monkeypatch.chdir(data_dir)
    where = f"{path.relative_to(ROOT)}:{line}"
    try:
        # Padded so that a traceback gives the line in the Markdown file.
        exec(compile("\n" * (line - 1) + code, str(path), "exec"), {"__name__": "__docs__"})  # noqa: S102
    except Exception as e:
        raise AssertionError(f"the python block at {where} failed: {e!r}") from e
