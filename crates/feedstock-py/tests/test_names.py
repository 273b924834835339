"""File names with multibyte characters (issue 33, item 1): readers,
writers and pipelines take them; a name that is not UTF-8 is a Python
error, never a panic."""

import os
import pathlib
import sys

import pytest

import feedstock as fs
from feedstock.example import Example, Feature, Features, Int64List
from feedstock import errors
from feedstock.tfrecord import TFRecordWriter, tf_record_iterator


def example(i):
    return Example(features=Features(feature={
        "id": Feature(int64_list=Int64List(value=[i])),
    })).SerializeToString()


@pytest.mark.parametrize("dirname", ["données", "データ", "é"])
def test_reader_writer_and_pipeline_under_a_multibyte_directory(tmp_path, monkeypatch, dirname):
    # Relative names: the multibyte characters come first, where a URL
    # scheme's length falls inside one.
    monkeypatch.chdir(tmp_path)
    d = pathlib.Path(dirname)
    d.mkdir()
    path = d / "donnée.tfrecord"
    with TFRecordWriter(str(path)) as w:
        for i in range(5):
            w.write(example(i))
    assert list(tf_record_iterator(str(path))) == [example(i) for i in range(5)]
    # bytes and path objects name it too.
    assert len(list(tf_record_iterator(path))) == 5
    assert len(list(tf_record_iterator(os.fsencode(path)))) == 5
    spec = {"id": fs.FixedLenFeature([], fs.int64)}
    for files in [str(path), str(d / "*.tfrecord"), [str(path)]]:
        pipe = fs.Pipeline(files, features=spec, batch_size=2, num_epochs=1, shuffle=False)
        ids = [i for batch in pipe for i in batch["id"].tolist()]
        assert ids == list(range(5)), files


@pytest.mark.skipif(sys.platform != "linux", reason="Linux file names are bytes")
def test_a_name_that_is_not_utf8_is_an_error_not_a_panic(tmp_path):
    raw = os.fsencode(tmp_path) + b"/donn\xe9es.tfrecord"
    with open(raw, "wb") as f:
        f.write(b"")
    name = os.fsdecode(raw)
    for call in [
        lambda: list(tf_record_iterator(raw)),
        lambda: list(tf_record_iterator(name)),
        lambda: TFRecordWriter(name),
        lambda: list(fs.Pipeline(name, features={"id": fs.FixedLenFeature([], fs.int64)},
                                 batch_size=1, num_epochs=1)),
    ]:
        with pytest.raises(Exception) as info:
            call()
        assert "Panic" not in type(info.value).__name__
        assert isinstance(info.value, (UnicodeError, ValueError, errors.OpError)), info.value
