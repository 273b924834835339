"""tf.train.Example / SequenceExample messages and the feature spec classes
as TensorFlow 2.21 (tf.compat.v1) gives them: every expected byte string,
value and error class here was observed running the same code under
TensorFlow."""

import math

import numpy as np
import pytest

import feedstock
import feedstock.compat.v1 as tf
from compat_support import run

T = tf.train


def ser(m):
    return m.SerializeToString().hex()


# ------------------------------------------------- map entries: key and value


def test_an_empty_feature_is_written_with_its_value():
    # TensorFlow's parser refuses a map entry without its value field.
    ex = T.Example(features=T.Features(feature={"e": T.Feature()}))
    assert ser(ex) == "0a070a050a01651200"
    assert ser(T.Features(feature={"e": T.Feature()})) == "0a050a01651200"


def test_an_empty_name_is_written_with_its_key():
    ex = T.Example(features=T.Features(feature={"": T.Feature(int64_list=T.Int64List(value=[7]))}))
    assert ser(ex) == "0a0b0a090a0012051a030a0107"
    assert ser(T.Example(features=T.Features(feature={"": T.Feature()}))) == "0a060a040a001200"


def test_a_feature_only_read_is_written_as_an_empty_feature():
    e = T.Example()
    e.features.feature["a"].int64_list.value.append(1)
    e.features.feature["probe"]  # a read creates an empty Feature, as in protobuf
    assert ser(e) == "0a170a0a0a016112051a030a01010a090a0570726f62651200"
    back = T.Example.FromString(e.SerializeToString())
    assert back.features.feature["probe"].WhichOneof("kind") is None
    assert back == e


def test_examples_with_empty_parts_parse_in_the_graph():
    e = T.Example()
    e.features.feature["a"].int64_list.value.append(1)
    e.features.feature["probe"]
    e.features.feature[""].int64_list.value.append(7)
    out = tf.parse_single_example(
        tf.constant(e.SerializeToString()),
        {
            "a": tf.FixedLenFeature([], tf.int64),
            "probe": tf.VarLenFeature(tf.float32),
            "": tf.FixedLenFeature([], tf.int64),
            "p2": tf.FixedLenFeature([], tf.float32, default_value=0.5),
        },
    )
    got = run(out)
    assert got["a"] == 1 and got[""] == 7 and got["p2"] == 0.5
    assert got["probe"].values.tolist() == [] and got["probe"].dense_shape.tolist() == [0]


# ------------------------------------------------------------ numpy values


def test_lists_take_numpy_arrays():
    img = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    e = T.Example(
        features=T.Features(
            feature={
                "img": T.Feature(float_list=T.FloatList(value=img.flatten() / 255.0)),
                "shape": T.Feature(int64_list=T.Int64List(value=np.array(img.shape))),
            }
        )
    )
    assert ser(e) == (
        "0a4f0a3b0a03696d67123412320a30000000008180803b8180003cc1c0403c8180803ca1a0a03cc1c0c03ce1e0e03c"
        "8180003d9190103da1a0203db1b0303d0a100a05736861706512071a050a03020203"
    )
    assert list(e.features.feature["shape"].int64_list.value) == [2, 2, 3]
    assert T.Int64List(value=np.array([1, 2])).value == [1, 2]
    b = T.BytesList(value=np.array([b"x", b"yz"]))
    assert b.value == [b"x", b"yz"] and all(type(v) is bytes for v in b.value)
    e = T.Example(features=T.Features(feature={"b": T.Feature(bytes_list=b)}))
    assert ser(e) == "0a100a0e0a016212090a070a01780a02797a"


def test_a_float_beyond_float32_is_an_infinity():
    assert list(T.FloatList(value=[1e40, -1e40, np.float64(1e40)]).value) == [math.inf, -math.inf, math.inf]
    assert math.isnan(T.FloatList(value=[math.nan]).value[0])
    with pytest.raises(OverflowError):
        T.FloatList(value=[10**400])  # as TF: int too large to convert to float


@pytest.mark.parametrize(
    "make",
    [
        lambda: T.Int64List(value=[True]),
        lambda: T.Int64List().value.append(True),
        lambda: T.Int64List(value=[np.bool_(True)]),
        lambda: T.BytesList(value=["str"]),
        lambda: T.BytesList().value.append("s"),
        lambda: T.BytesList(value=[bytearray(b"ab")]),
        lambda: T.FloatList(value=np.zeros((2, 2))),
        lambda: T.Int64List(value=5),
    ],
)
def test_type_errors_as_tensorflow(make):
    with pytest.raises(TypeError):
        make()


def test_bools_in_a_float_list_are_numbers():
    assert T.FloatList(value=[True]).value == [1.0]


# --------------------------------------------------- presence of sub-messages


def test_reading_features_does_not_set_it():
    e = T.Example()
    e.features
    e.features.feature
    e.features.feature.get("x")
    assert "x" not in e.features.feature and len(e.features.feature) == 0
    assert e.SerializeToString() == b"" and e.ByteSize() == 0
    assert not e.HasField("features")
    e = T.Example.FromString(b"")
    e.features
    assert e.ByteSize() == 0


@pytest.mark.parametrize(
    "change",
    [
        lambda f: f.CopyFrom(T.Features()),
        lambda f: f.Clear(),
        lambda f: f.MergeFrom(T.Features()),
        lambda f: f.ParseFromString(b""),
    ],
)
def test_changing_features_sets_it(change):
    e = T.Example()
    change(e.features)
    assert e.SerializeToString() == b"\n\x00" and e.HasField("features")


def test_writes_through_a_held_reference_set_it():
    e = T.Example()
    f = e.features
    f.feature["a"].int64_list.value.append(1)
    assert e.SerializeToString() == b"\n\x0c\n\n\n\x01a\x12\x05\x1a\x03\n\x01\x01"
    e = T.Example()
    e.features.feature["a"]
    assert e.SerializeToString() == b"\n\x07\n\x05\n\x01a\x12\x00"
    assert T.Example(features=T.Features()).SerializeToString() == b"\n\x00"


def test_sequence_example_parts_are_set_only_when_changed():
    se = T.SequenceExample()
    se.context
    se.feature_lists
    se.feature_lists.feature_list
    assert se.SerializeToString() == b""
    se.feature_lists.feature_list["x"]
    assert se.SerializeToString() == b"\x12\x07\n\x05\n\x01x\x12\x00"
    assert se.HasField("feature_lists") and not se.HasField("context")


# ------------------------------------------------------------ SequenceExample

SEQ_HEX = (
    "0a230a0f0a066c656e67746812051a030a01030a100a057469746c6512070a050a0361626312620a090a05656d707479"
    "12000a340a0673636f726573122a0a0c120a0a080000003f0000c03f0a0c120a0a0800002040000060400a0c120a0a08"
    "000090400000b0400a1f0a06746f6b656e7312150a080a060a01610a01620a020a000a050a030a0163"
)


def seq_by_mutation():
    se = T.SequenceExample()
    se.context.feature["length"].int64_list.value.append(3)
    se.context.feature["title"].bytes_list.value.append(b"abc")
    toks = se.feature_lists.feature_list["tokens"]
    for t in ([b"a", b"b"], [], [b"c"]):
        toks.feature.add().bytes_list.value.extend(t)
    scores = se.feature_lists.feature_list["scores"]
    for v in ([0.5, 1.5], [2.5, 3.5], [4.5, 5.5]):
        scores.feature.add(float_list=T.FloatList(value=v))
    se.feature_lists.feature_list["empty"]
    return se


def seq_by_constructor():
    return T.SequenceExample(
        context=T.Features(
            feature={
                "length": T.Feature(int64_list=T.Int64List(value=[3])),
                "title": T.Feature(bytes_list=T.BytesList(value=[b"abc"])),
            }
        ),
        feature_lists=T.FeatureLists(
            feature_list={
                "tokens": T.FeatureList(
                    feature=[T.Feature(bytes_list=T.BytesList(value=t)) for t in ([b"a", b"b"], [], [b"c"])]
                ),
                "scores": T.FeatureList(
                    feature=[{"float_list": {"value": v}} for v in ([0.5, 1.5], [2.5, 3.5], [4.5, 5.5])]
                ),
                "empty": T.FeatureList(),
            }
        ),
    )


def test_sequence_example_bytes_are_tensorflows():
    a, b = seq_by_mutation(), seq_by_constructor()
    assert ser(a) == SEQ_HEX and ser(b) == SEQ_HEX
    assert a == b
    back = T.SequenceExample.FromString(bytes.fromhex(SEQ_HEX))
    assert back == a and ser(back) == SEQ_HEX
    assert [list(f.bytes_list.value) for f in back.feature_lists.feature_list["tokens"].feature] == [
        [b"a", b"b"],
        [],
        [b"c"],
    ]
    assert back.context.feature["length"].int64_list.value == [3]
    assert back.ByteSize() == len(SEQ_HEX) // 2


def test_sequence_example_parts_alone():
    assert ser(T.SequenceExample(feature_lists=T.FeatureLists(feature_list={"e": T.FeatureList()}))) == (
        "12070a050a01651200"
    )
    fl = T.FeatureList(feature=[T.Feature(int64_list=T.Int64List(value=[1])), {"float_list": {"value": [2.0]}}])
    assert ser(fl) == "0a051a030a01010a0812060a0400000040"
    assert T.FeatureList.FromString(fl.SerializeToString()) == fl
    fls = T.FeatureLists(feature_list={"a": fl})
    assert T.FeatureLists.FromString(fls.SerializeToString()) == fls
    assert T.FeatureList().SerializeToString() == b""
    assert T.FeatureList(feature=[T.Feature()]).SerializeToString() == b"\n\x00"


def test_sequence_example_parses_as_tensorflow():
    c, lists = tf.parse_single_sequence_example(
        tf.constant(seq_by_mutation().SerializeToString()),
        {"length": tf.FixedLenFeature([], tf.int64), "title": tf.FixedLenFeature([], tf.string)},
        {
            "tokens": tf.VarLenFeature(tf.string),
            "scores": tf.FixedLenSequenceFeature([2], tf.float32),
            "empty": tf.FixedLenSequenceFeature([], tf.int64, allow_missing=True),
        },
    )
    assert lists["scores"].shape.as_list() == [None, 2]
    assert lists["empty"].shape.as_list() == [None]
    got_c, got_l = run((c, lists))
    assert got_c["length"] == 3 and got_c["title"] == b"abc"
    assert got_l["tokens"].indices.tolist() == [[0, 0], [0, 1], [2, 0]]
    assert got_l["tokens"].values.tolist() == [b"a", b"b", b"c"]
    assert got_l["tokens"].dense_shape.tolist() == [3, 2]
    assert got_l["scores"].tolist() == [[0.5, 1.5], [2.5, 3.5], [4.5, 5.5]]
    assert got_l["scores"].dtype == np.float32
    assert got_l["empty"].tolist() == [] and got_l["empty"].dtype == np.int64


def test_feature_list_container_api():
    fl = T.FeatureList()
    a = fl.feature.add(int64_list=T.Int64List(value=[3]))
    assert isinstance(a, T.Feature)
    a.int64_list.value.append(4)
    f = T.Feature(int64_list=T.Int64List(value=[5]))
    fl.feature.append(f)
    f.int64_list.value.append(6)  # append stored a copy
    assert [list(x.int64_list.value) for x in fl.feature] == [[3, 4], [5]]
    fl.feature.extend([T.Feature()])
    assert len(fl.feature) == 3
    del fl.feature[0]
    assert len(fl.feature) == 2
    with pytest.raises(TypeError):
        fl.feature.append(5)
    with pytest.raises(TypeError):
        fl.feature[0] = T.Feature()
    with pytest.raises(TypeError):
        fl.feature.add(5)
    with pytest.raises(AttributeError):
        fl.feature = []
    se = T.SequenceExample()
    with pytest.raises(AttributeError):
        se.context = T.Features()
    with pytest.raises(ValueError):
        se.HasField("x")
    with pytest.raises(TypeError):
        T.SequenceExample(context=5)


def test_sequence_example_merge_and_copy():
    se = seq_by_mutation()
    s = T.SequenceExample()
    s.MergeFrom(se)
    assert s == se
    s.MergeFrom(se)  # map entries are replaced, not appended
    assert ser(s) == SEQ_HEX
    x = T.SequenceExample()
    x.CopyFrom(se)
    assert x == se


def test_sequence_classes_are_exported():
    assert T.SequenceExample is feedstock.example.SequenceExample
    assert T.FeatureList is feedstock.example.FeatureList
    assert T.FeatureLists is feedstock.example.FeatureLists


# --------------------------------------------------------- feature specs


def test_spec_classes_are_namedtuples_like_tensorflows():
    assert tf.FixedLenFeature([], tf.int64) == tf.FixedLenFeature([], tf.int64)
    f = tf.FixedLenFeature([2], tf.float32)
    assert tuple(f) == ([2], tf.float32, None)
    assert f._replace(default_value=[1.0, 2.0]).default_value == [1.0, 2.0]
    s = tf.SparseFeature("ix", "v", tf.float32, 3)
    assert s.index_key == "ix" and s.size == 3 and s.already_sorted is False
    assert s._fields == ("index_key", "value_key", "dtype", "size", "already_sorted")
    assert tf.FixedLenSequenceFeature([], tf.int64)._fields == ("shape", "dtype", "allow_missing", "default_value")
    assert tf.FixedLenSequenceFeature([], tf.int64).allow_missing is False
    assert tf.VarLenFeature(tf.int64)._fields == ("dtype",)
    assert tf.io.FixedLenFeature is tf.FixedLenFeature


def test_specs_take_numpy_sizes_tensor_shapes_and_constant_defaults():
    s = tf.constant(b"")
    out = tf.parse_single_example(
        s,
        {
            "s": tf.SparseFeature("ix", "v", tf.float32, np.int64(3)),
            "a": tf.FixedLenFeature(tf.TensorShape([2]), tf.float32, default_value=tf.constant([1.0, 2.0])),
            "b": tf.FixedLenFeature([np.int64(2)], tf.float32, default_value=[3.0, 4.0]),
            "c": tf.FixedLenFeature(np.int32(2), tf.int64, default_value=np.array([1.0, 2.0])),
            "d": tf.FixedLenFeature((2, 2), "float32", default_value=[1.0, 2.0, 3.0, 4.0]),
            "e": tf.FixedLenFeature([], tf.int64, default_value=True),
        },
    )
    assert out["s"].shape.as_list() == [3]
    assert out["a"].shape.as_list() == [2] and out["d"].shape.as_list() == [2, 2]
    got = run(out)
    assert got["a"].tolist() == [1.0, 2.0] and got["b"].tolist() == [3.0, 4.0]
    assert got["c"].tolist() == [1, 2] and got["c"].dtype == np.int64
    assert got["d"].tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert got["e"] == 1
    assert got["s"].dense_shape.tolist() == [3]


def test_a_sparse_feature_of_size_zero():
    out = tf.parse_single_example(tf.constant(b""), {"s": tf.SparseFeature("ix", "v", tf.float32, 0)})
    assert out["s"].shape.as_list() == [0]
    got = run(out)["s"]
    assert got.dense_shape.tolist() == [0] and got.values.tolist() == []


def parse(spec):
    return tf.parse_single_example(tf.constant(b""), spec)


@pytest.mark.parametrize(
    "default, dtype",
    [
        (1.5, tf.int64),  # lossy
        ([1.0, 2.5], tf.int64),
        ("x", tf.float32),
        (b"x", tf.int64),
        (1, tf.string),
    ],
)
def test_a_default_that_does_not_convert_is_a_type_error(default, dtype):
    shape = [2] if isinstance(default, list) else []
    with pytest.raises(TypeError):
        parse({"a": tf.FixedLenFeature(shape, dtype, default_value=default)})


@pytest.mark.parametrize(
    "shape, default",
    [([3], [1.0, 2.0]), ([2, 3], 1.0)],
)
def test_a_default_of_the_wrong_size_is_a_value_error(shape, default):
    with pytest.raises(ValueError, match="Cannot reshape a tensor with"):
        parse({"a": tf.FixedLenFeature(shape, tf.float32, default_value=default)})


@pytest.mark.parametrize("dtype", [tf.int32, tf.float64, tf.uint8, tf.bool])
def test_unsupported_dtypes_are_type_errors(dtype):
    with pytest.raises(TypeError, match="not in list of allowed values: float32, int64, string"):
        parse({"a": tf.FixedLenFeature([], dtype)})
    with pytest.raises(TypeError):
        parse({"a": tf.VarLenFeature(dtype)})
    with pytest.raises(TypeError):
        parse({"a": tf.SparseFeature("i", "v", dtype, 3)})
    with pytest.raises(TypeError):
        tf.parse_single_sequence_example(tf.constant(b""), {}, {"a": tf.FixedLenSequenceFeature([], dtype)})


def test_shapes_refused_as_tensorflow():
    with pytest.raises(ValueError, match="First dimension of shape for feature a unknown. Consider using FixedLenSequenceFeature"):
        parse({"a": tf.FixedLenFeature([None], tf.float32)})
    with pytest.raises(ValueError, match="All dimensions of shape for feature a need to be known"):
        parse({"a": tf.FixedLenFeature([2, None], tf.float32)})
    with pytest.raises(ValueError, match="All dimensions of shape for feature a need to be known"):
        parse({"a": tf.FixedLenFeature(tf.TensorShape(None), tf.float32)})
    with pytest.raises(ValueError, match="Dimension -1 must be >= 0"):
        parse({"a": tf.FixedLenFeature([-1], tf.float32)})
    with pytest.raises(ValueError, match="Missing shape for feature a"):
        parse({"a": tf.FixedLenFeature(None, tf.float32)})
    with pytest.raises(ValueError):
        tf.parse_single_sequence_example(tf.constant(b""), {}, {"a": tf.FixedLenSequenceFeature([None], tf.float32)})
    with pytest.raises(ValueError, match="Dimension -2 must be >= 0"):
        tf.parse_single_sequence_example(tf.constant(b""), {}, {"a": tf.FixedLenSequenceFeature([-2], tf.float32)})


def test_no_features_is_a_value_error():
    with pytest.raises(ValueError):
        tf.parse_single_example(tf.constant(b""), {})
    with pytest.raises(ValueError):
        tf.parse_example(tf.constant([b""]), {})
    with pytest.raises(ValueError):
        tf.parse_single_example(tf.constant(b""), None)
    with pytest.raises(ValueError):
        tf.parse_example(tf.constant([b""]), features=None)


def test_bad_spec_entries():
    with pytest.raises(ValueError, match="Unsupported int 5 for key 'a'"):
        parse({"a": 5})
    for size in ([5], 5.0, None):
        with pytest.raises(TypeError, match="vocab_size has to be a Tensor or Python int"):
            parse({"s": tf.SparseFeature("i", "v", tf.float32, size)})
