"""Python on object stores and file:// URLs: the TFRecord writer and
iterator, and Pipeline globs, against a real S3 server (SeaweedFS,
started by the ``s3_bucket`` fixture)."""

import collections

import pytest

import feedstock as fs
from feedstock import _native, errors
from feedstock.example import Example, Feature, Features, Int64List
from feedstock.tfrecord import TFRecordWriter, tf_record_iterator

SPEC = {"id": fs.FixedLenFeature([], fs.int64)}


def example(i):
    return Example(features=Features(feature={"id": Feature(int64_list=Int64List(value=[i]))})).SerializeToString()


def write(url, ids, options=None):
    with TFRecordWriter(url, options) as w:
        for i in ids:
            w.write(example(i))


def test_a_written_object_appears_only_when_closed_and_reads_back(s3_bucket):
    url = f"s3://{s3_bucket}/writer/one.tfrecord"
    w = TFRecordWriter(url)
    for i in range(5):
        w.write(example(i))
    w.flush()
    with pytest.raises(errors.NotFoundError) as e:
        list(tf_record_iterator(url))
    assert e.value.file == url
    w.close()
    assert list(tf_record_iterator(url)) == [example(i) for i in range(5)]
    # Compressed, the same.
    gz = f"s3://{s3_bucket}/writer/one.tfrecord.gz"
    write(gz, range(3), "GZIP")
    assert list(tf_record_iterator(gz, "GZIP")) == [example(i) for i in range(3)]


def test_a_pipeline_globs_a_bucket_prefix_and_reads_every_example(s3_bucket):
    for f in range(3):
        write(f"s3://{s3_bucket}/train/part-{f}.tfrecord", range(f * 7, f * 7 + 7))
    write(f"s3://{s3_bucket}/train/other.tfrecord", [99])
    pattern = f"s3://{s3_bucket}/train/part-*.tfrecord"
    assert _native.glob(pattern) == [f"s3://{s3_bucket}/train/part-{f}.tfrecord" for f in range(3)]
    pipe = fs.Pipeline(pattern, features=SPEC, batch_size=4, num_epochs=2, seed=1, keys=True)
    ids, keys = [], set()
    for b in pipe:
        ids.extend(b["id"].tolist())
        keys.update(k.decode().rsplit(":", 1)[0] for k in b["__key__"].tolist())
    assert collections.Counter(ids) == collections.Counter(list(range(21)) * 2)
    assert keys == set(_native.glob(pattern))


def test_missing_objects_and_patterns_are_not_found_naming_the_url(s3_bucket):
    url = f"s3://{s3_bucket}/nowhere/x.tfrecord"
    with pytest.raises(errors.NotFoundError) as e:
        list(tf_record_iterator(url))
    assert e.value.file == url
    pattern = f"s3://{s3_bucket}/nowhere/*.tfrecord"
    with pytest.raises(errors.NotFoundError) as e:
        fs.Pipeline(pattern, features=SPEC)
    assert pattern in str(e.value)


def test_file_urls_read_and_write_the_local_disk(tmp_path):
    root = f"file://{tmp_path}"
    write(f"{root}/a.tfrecord", [1, 2])
    write(f"{root}/b.tfrecord", [3])
    assert (tmp_path / "a.tfrecord").is_file()
    assert list(tf_record_iterator(f"{root}/b.tfrecord")) == [example(3)]
    files = _native.glob(f"{root}/*.tfrecord")
    assert files == [f"{root}/a.tfrecord", f"{root}/b.tfrecord"]
    ids = [i for b in fs.Pipeline(f"{root}/*.tfrecord", features=SPEC, shuffle=False) for i in b["id"].tolist()]
    assert ids == [1, 2, 3]
    # A local pattern with no match names it.
    with pytest.raises(errors.NotFoundError):
        fs.Pipeline(str(tmp_path / "none-*.tfrecord"), features=SPEC)
