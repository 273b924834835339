"""feedstock.ray.read_tfrecords on a real local Ray: every record read
exactly once, values equal to the native Pipeline's, real dtypes and
shapes, schema and row counts from the spec and the record index, large
files split by record range, damaged records and bad Examples reported
by file and record."""

import os
import sys

import numpy as np
import pytest

import feedstock as fs
import feedstock.ray as fray
from feedstock.example import BytesList, Example, Feature, Features, FloatList, Int64List
from feedstock.tfrecord import TFRecordWriter

SPEC = {
    "id": fs.FixedLenFeature([], fs.int64),
    "x": fs.FixedLenFeature([16], fs.float32),
    "name": fs.FixedLenFeature([], fs.string),
    "pair": fs.FixedLenFeature([2], fs.string),
    "tags": fs.VarLenFeature(fs.int64),
    "w": fs.VarLenFeature(fs.float32),
    "words": fs.VarLenFeature(fs.string),
}


def example(k):
    return Example(features=Features(feature={
        "id": Feature(int64_list=Int64List(value=[k])),
        "x": Feature(float_list=FloatList(value=[k + j / 16 for j in range(16)])),
        "name": Feature(bytes_list=BytesList(value=[b"n%d" % k])),
        "pair": Feature(bytes_list=BytesList(value=[b"a%d" % k, b"b%d" % k])),
        # 1 value in some records, 2 in others, none in some.
        "tags": Feature(int64_list=Int64List(value=list(range(k, k + k % 3)))),
        "w": Feature(float_list=FloatList(value=[k / 2] * (k % 2 + 1))),
        "words": Feature(bytes_list=BytesList(value=[b"w"] * (k % 4))),
    })).SerializeToString()


def write(path, ids, gz=False):
    with TFRecordWriter(str(path), options="GZIP" if gz else None) as w:
        for k in ids:
            w.write(example(k))
    return str(path)


@pytest.fixture
def files(tmp_path):
    # Two small files and one much larger.
    return [write(tmp_path / "a.tfrecord", range(0, 5)), write(tmp_path / "b.tfrecord", range(100, 107)),
            write(tmp_path / "c.tfrecord", range(1000, 1300))]


def native_rows(files, **kw):
    """Each record's values as the native Pipeline gives them, by key."""
    out = {}
    pipe = fs.Pipeline(files, features=SPEC, batch_size=7, shuffle=False, keys=True, **kw)
    for b in pipe:
        n = len(b["__key__"])
        for i in range(n):
            row = {}
            for name, v in b.items():
                if hasattr(v, "dense_shape"):
                    row[name] = np.asarray(v.values)[np.asarray(v.indices)[:, 0] == i]
                else:
                    row[name] = v[i]
            out[b["__key__"][i]] = row
    return out


def assert_rows_equal(got_rows, want):
    got = {}
    for r in got_rows:
        assert r["__key__"] not in got, f"{r['__key__']} read twice"
        got[r["__key__"]] = r
    assert sorted(got) == sorted(want)
    for key, w in want.items():
        g = got[key]
        assert g["id"] == w["id"]
        assert g["x"].dtype == np.float32 and np.array_equal(g["x"], w["x"])
        assert g["name"] == w["name"]
        assert list(g["pair"]) == list(w["pair"])
        assert g["tags"].dtype == np.int64 and np.array_equal(g["tags"], w["tags"])
        assert g["w"].dtype == np.float32 and np.array_equal(g["w"], w["w"])
        assert list(g["words"]) == list(w["words"])


def test_every_record_once_with_the_pipelines_values(ray_local, files):
    ds = fray.read_tfrecords(files, features=SPEC, keys=True, override_num_blocks=6)
    assert ds.count() == 312
    assert_rows_equal(ds.take_all(), native_rows(files))


def test_columns_have_real_dtypes_and_shapes_and_the_schema_is_the_specs(ray_local, files):
    ds = fray.read_tfrecords(files, features=SPEC)
    schema = ds.schema()
    assert schema.names == list(SPEC)
    # Fixed-length [16] float: an (n, 16) float32 column.
    batches = list(ds.iter_batches(batch_size=50, batch_format="numpy"))
    assert sum(len(b["id"]) for b in batches) == 312
    for b in batches:
        n = len(b["id"])
        assert b["id"].dtype == np.int64 and b["id"].shape == (n,)
        assert b["x"].dtype == np.float32 and b["x"].shape == (n, 16)
        assert b["name"].dtype == object and isinstance(b["name"][0], bytes)
        # VarLen: one 1-D array of the dtype per row, however many values.
        assert {len(t) for t in b["tags"]} <= {0, 1, 2}
        assert all(t.dtype == np.int64 for t in b["tags"])
    lengths = {len(t) for b in batches for t in b["tags"]}
    assert lengths == {0, 1, 2}


def test_the_schema_comes_from_the_spec_before_any_read(tmp_path):
    # A VarLen column whose rows all have one value is still variable-shaped.
    path = write(tmp_path / "one.tfrecord", [1, 4, 7])
    src = fray.TFRecordDatasource([path], features={"tags": fs.VarLenFeature(fs.int64),
                                                    "x": fs.FixedLenFeature([16], fs.float32)})
    import pyarrow as pa
    from ray.data.extensions import ArrowVariableShapedTensorType

    assert src._schema.field("tags").type == ArrowVariableShapedTensorType(pa.int64(), 1)
    block = next(iter(src.get_read_tasks(1)[0]()))
    assert block.schema == src._schema


def test_row_counts_come_from_the_index_and_a_large_file_is_split(files):
    src = fray.TFRecordDatasource(files, features=SPEC)
    assert src.num_rows() == 312
    tasks = src.get_read_tasks(6)
    assert sum(t.metadata.num_rows for t in tasks) == 312
    # ceil(312 / 6) = 52 records a task: the two small files share one,
    # the large one is cut into six.
    assert [t.metadata.num_rows for t in tasks] == [12, 52, 52, 52, 52, 52, 40]
    assert sum(1 for t in tasks if t.metadata.input_files == (files[2],)) == 6
    # Every task's blocks hold what its metadata promised, in record order.
    ids = []
    for t in tasks:
        blocks = list(t())
        assert sum(b.num_rows for b in blocks) == t.metadata.num_rows
        for b in blocks:
            ids.extend(b.column("id").to_pylist())
    assert ids == list(range(5)) + list(range(100, 107)) + list(range(1000, 1300))


def test_blocks_are_at_most_block_rows(files):
    src = fray.TFRecordDatasource(files[2:], features=SPEC, block_rows=64)
    (task,) = src.get_read_tasks(1)
    assert [b.num_rows for b in task()] == [64, 64, 64, 64, 44]


def test_a_gzip_file_is_one_task_read_from_its_start(ray_local, tmp_path, files):
    gz = write(tmp_path / "d.tfrecord.gz", range(2000, 2100), gz=True)
    src = fray.TFRecordDatasource([gz, files[0]], features=SPEC)
    assert [t.metadata.num_rows for t in src.get_read_tasks(10)] == [100, 5]
    ds = fray.read_tfrecords([gz, files[0]], features=SPEC, keys=True, override_num_blocks=10)
    assert_rows_equal(ds.take_all(), native_rows([gz, files[0]]))


def test_a_damaged_record_fails_the_read_naming_file_and_offset(ray_local, tmp_path):
    path = write(tmp_path / "bad.tfrecord", range(10))
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(path, "wb").write(bytes(data))
    # Indexing checks every CRC: the driver refuses the file.
    with pytest.raises(fs.errors.DataLossError) as e:
        fray.read_tfrecords(path, features=SPEC)
    assert "bad.tfrecord" in str(e.value)


def test_damaged_regions_are_skipped_within_a_budget_and_counted(ray_local, tmp_path):
    path = write(tmp_path / "bad.tfrecord", range(10))
    good = write(tmp_path / "good.tfrecord", range(100, 110))
    offsets = fs._native.tfrecord_offsets(path)
    data = bytearray(open(path, "rb").read())
    data[int(offsets[4]) + 12 + 3] ^= 0xFF  # the data of record 4
    open(path, "wb").write(bytes(data))
    # Cut into several tasks, record 4's damage inside one of them.
    ds = fray.read_tfrecords([path, good], features=SPEC, skip_corrupt={"max_per_file": 1},
                             override_num_blocks=4)
    assert ds.count() == 19
    ids = sorted(int(i) for i in ds.to_pandas()["id"])
    assert ids == [i for i in range(10) if i != 4] + list(range(100, 110))
    stats = fray.skip_stats(ds)
    assert stats["skipped"] == 1 and stats["skipped_bytes"] > 0
    assert [f["file"] for f in stats["files"]] == [path]
    # Past the budget, the driver refuses the file, naming it.
    with pytest.raises(fs.errors.DataLossError) as e:
        fray.read_tfrecords(path, features=SPEC, skip_corrupt={"max_per_file": 0})
    assert "bad.tfrecord" in str(e.value)


def test_a_file_damaged_after_indexing_fails_the_task_naming_file_and_offset(ray_local, tmp_path):
    path = write(tmp_path / "late.tfrecord", range(10))
    ds = fray.read_tfrecords(path, features=SPEC)
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(path, "wb").write(bytes(data))
    with pytest.raises(Exception) as e:
        ds.take_all()
    assert "late.tfrecord" in str(e.value) and "offset" in str(e.value).lower()
    assert "DataLoss" in str(e.value) or "corrupt" in str(e.value).lower() or "crc" in str(e.value).lower()


def test_an_example_that_does_not_fit_the_spec_names_its_record(tmp_path):
    path = write(tmp_path / "short.tfrecord", range(3))
    spec = {"x": fs.FixedLenFeature([15], fs.float32)}
    (task,) = fray.TFRecordDatasource(path, features=spec).get_read_tasks(1)
    with pytest.raises(fs.errors.InvalidArgumentError) as e:
        list(task())
    assert "short.tfrecord:0" in str(e.value)


def test_features_it_cannot_represent_are_refused(tmp_path):
    path = write(tmp_path / "s.tfrecord", range(3))
    with pytest.raises(ValueError, match="FixedLenSequenceFeature"):
        fray.TFRecordDatasource(path, features={"t": fs.FixedLenSequenceFeature([], fs.int64, allow_missing=True)})
    with pytest.raises(ValueError, match="SparseFeature"):
        fray.TFRecordDatasource(path, features={"t": fs.SparseFeature("tags", "tags", fs.int64, 10)})


def test_no_tensorflow_in_the_read_tasks(ray_local, files):
    ds = fray.read_tfrecords(files, features={"id": fs.FixedLenFeature([], fs.int64)})
    seen = ds.map_batches(lambda b: {"tf": np.array(["tensorflow" in sys.modules] * len(b["id"]))}).take_all()
    assert len(seen) == 312 and not any(r["tf"] for r in seen)


def test_relative_paths_are_read_by_workers_elsewhere(ray_local, files, monkeypatch):
    monkeypatch.chdir(os.path.dirname(files[0]))
    ds = fray.read_tfrecords("*.tfrecord", features={"id": fs.FixedLenFeature([], fs.int64)}, keys=True)
    rows = ds.take_all()
    assert sorted(r["id"] for r in rows) == list(range(5)) + list(range(100, 107)) + list(range(1000, 1300))
    assert all(r["__key__"].startswith(os.path.dirname(files[0]).encode() + b"/") for r in rows)


def test_count_needs_no_read(ray_local, tmp_path):
    path = write(tmp_path / "counted.tfrecord", range(10))
    ds = fray.read_tfrecords(path, features=SPEC)
    # Damaged after indexing: a read would fail, the count does not read.
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(path, "wb").write(bytes(data))
    assert ds.count() == 10
