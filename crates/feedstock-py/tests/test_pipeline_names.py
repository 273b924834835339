"""feedstock.Pipeline on the engine names each component by its own
feature, whatever the order of a spec that mixes VarLen and FixedLen
features (the engine delivers them in the spec's order)."""

import numpy as np

import feedstock as fs
from feedstock.example import BytesList, Example, Feature, Features, FloatList, Int64List
from feedstock.tfrecord import TFRecordWriter


def test_mixed_spec_components_carry_their_own_names(tmp_path):
    path = str(tmp_path / "m.tfrecord")
    with TFRecordWriter(path) as w:
        for k in range(4):
            w.write(Example(features=Features(feature={
                "id": Feature(int64_list=Int64List(value=[k])),
                "x": Feature(float_list=FloatList(value=[k, k + 0.5])),
                "tags": Feature(int64_list=Int64List(value=[k] * k)),
                "name": Feature(bytes_list=BytesList(value=[b"n%d" % k])),
            })).SerializeToString())
    spec = {"id": fs.FixedLenFeature([], fs.int64), "x": fs.FixedLenFeature([2], fs.float32),
            "tags": fs.VarLenFeature(fs.int64), "name": fs.FixedLenFeature([], fs.string)}
    (b,) = list(fs.Pipeline(path, features=spec, batch_size=4, shuffle=False))
    assert b["id"].tolist() == [0, 1, 2, 3]
    assert b["x"].dtype == np.float32 and b["x"].shape == (4, 2) and b["x"][3].tolist() == [3, 3.5]
    assert b["name"].tolist() == [b"n0", b"n1", b"n2", b"n3"]
    assert b["tags"].values.tolist() == [1, 2, 2, 3, 3, 3]
    assert b["tags"].dense_shape.tolist() == [4, 3]
