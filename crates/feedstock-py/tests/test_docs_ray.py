"""The "On Ray" and "Training on many hosts" examples of
docs/many-hosts.md run as written (on files written here, on the
session's local Ray); test_docs.py leaves them to this test."""

import os
import pathlib
import re

import pytest

from feedstock.example import Example, Feature, Features, FloatList, Int64List
from feedstock.tfrecord import TFRecordWriter

DOC = pathlib.Path(__file__).resolve().parents[3] / "docs" / "many-hosts.md"


def blocks(section):
    text = DOC.read_text()
    start = text.index(f"\n## {section}\n")
    end = text.find("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start:] if end < 0 else text[start:end], re.S)


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.makedirs("data")
    for f in range(2):
        with TFRecordWriter(f"data/train-{f}.tfrecord") as w:
            for i in range(f * 40, (f + 1) * 40):
                w.write(Example(features=Features(feature={
                    "x": Feature(float_list=FloatList(value=[i] * 16)),
                    "label": Feature(int64_list=Int64List(value=[i % 10])),
                    "tags": Feature(int64_list=Int64List(value=[i] * (i % 3))),
                })).SerializeToString())
    return tmp_path


def test_on_ray_and_on_many_hosts_run_as_written(ray_local, data, capsys):
    ray_blocks = blocks("On Ray")
    hosts = blocks("Training on many hosts")
    assert len(ray_blocks) == 1 and len(hosts) == 2
    ns = {"__name__": "__main__"}  # functions pickled by value for Ray Train
    exec(ray_blocks[0], ns)
    assert capsys.readouterr().out.strip() == "80"
    exec(hosts[0], ns)
    assert ns["pipe"].examples == 80
    code = hosts[1].replace('"/tmp/runs"', repr(str(data / "runs")))
    exec(code, ns)
    # Two workers, one checkpoint of both workers' input states.
    ckpts = [p for p in (data / "runs" / "train").rglob("feedstock-input-rank*.pkl")]
    assert {p.name for p in ckpts} == {"feedstock-input-rank00000-of-00002.pkl",
                                       "feedstock-input-rank00001-of-00002.pkl"}
