import base64
import json
import pickle

import pytest

from feedstock.example import BytesList, Example, Feature, Features, FloatList, Int64List


def load(golden, name):
    return json.loads((golden / name).read_text())


def build(spec):
    """An Example from a sidecar's decoded feature lists."""
    feature = {}
    for name, f in spec.items():
        if f["kind"] == "int64_list":
            feature[name] = Feature(int64_list=Int64List(value=f["values"]))
        elif f["kind"] == "float_list":
            feature[name] = Feature(float_list=FloatList(value=f["values"]))
        else:
            feature[name] = Feature(bytes_list=BytesList(value=[v.encode() for v in f["values"]]))
    return Example(features=Features(feature=feature))


def test_serialize_is_byte_identical_to_tensorflow(golden):
    side = load(golden, "examples.tfrecord.json")
    assert len(side["records"]) == 8
    for rec in side["records"]:
        wire = base64.b64decode(rec["b64"])
        assert build(rec["example"]).SerializeToString() == wire, rec["index"]


def test_from_string_reads_what_tensorflow_wrote(golden):
    side = load(golden, "examples.tfrecord.json")
    for rec in side["records"]:
        ex = Example.FromString(base64.b64decode(rec["b64"]))
        for name, f in rec["example"].items():
            feat = ex.features.feature[name]
            assert feat.WhichOneof("kind") == f["kind"]
            got = list(getattr(feat, f["kind"]).value)
            if f["kind"] == "bytes_list":
                got = [v.decode() for v in got]
            assert got == f["values"], (rec["index"], name)
        assert ex == build(rec["example"])


def test_the_guides_writing_pattern():
    ex = Example(
        features=Features(
            feature={
                "height": Feature(int64_list=Int64List(value=[32])),
                "image_raw": Feature(bytes_list=BytesList(value=[b"\x00\x01"])),
            }
        )
    )
    back = Example.FromString(ex.SerializeToString())
    assert back.features.feature["height"].int64_list.value == [32]
    assert back.features.feature["image_raw"].bytes_list.value == [b"\x00\x01"]
    assert back == ex


def test_protobuf_style_mutation():
    ex = Example()
    assert not ex.HasField("features")
    ex.features.feature["label"].int64_list.value.append(7)
    ex.features.feature["x"].float_list.value.extend([0.5, 0.1])
    assert ex.HasField("features")
    f = ex.features.feature["label"]
    assert f.HasField("int64_list") and not f.HasField("float_list")
    # floats are held as float32, as protobuf holds them
    assert ex.features.feature["x"].float_list.value[1] == pytest.approx(0.1, abs=1e-8)
    assert ex.features.feature["x"].float_list.value[1] != 0.1
    assert Example.FromString(ex.SerializeToString()) == ex


def test_empty_feature_and_empty_example():
    assert Example().SerializeToString() == b""
    ex = Example(features=Features(feature={"e": Feature()}))
    back = Example.FromString(ex.SerializeToString())
    assert back.features.feature["e"].WhichOneof("kind") is None
    assert back == ex


def test_type_errors_like_protobuf():
    with pytest.raises(TypeError):
        Int64List(value=[1.5])
    with pytest.raises(TypeError):
        BytesList(value=[3])
    with pytest.raises(TypeError):
        FloatList(value=["x"])
    with pytest.raises(ValueError):
        Int64List(value=[2**63])
    with pytest.raises(ValueError):
        Feature(int64_list=Int64List(value=[1]), float_list=FloatList(value=[1.0]))


def test_int64_extremes_and_utf8_bytes():
    ex = Example(
        features=Features(
            feature={
                "i": Feature(int64_list=Int64List(value=[-(2**63), 2**63 - 1])),
                "s": Feature(bytes_list=BytesList(value=["héllo".encode()])),
            }
        )
    )
    back = Example.FromString(ex.SerializeToString())
    assert back.features.feature["i"].int64_list.value == [-(2**63), 2**63 - 1]
    assert back.features.feature["s"].bytes_list.value == ["héllo".encode()]
    # TensorFlow's protobuf takes bytes only.
    with pytest.raises(TypeError, match="expected bytes, str found"):
        BytesList(value=["héllo"])


def test_sub_messages_serialize_alone():
    f = Feature(int64_list=Int64List(value=[1, 2, 3]))
    assert Feature.FromString(f.SerializeToString()) == f
    l = FloatList(value=[1.5, -2.0])
    assert FloatList.FromString(l.SerializeToString()).value == [1.5, -2.0]
    fs = Features(feature={"a": f, "b": Feature(bytes_list=BytesList(value=[b"z"]))})
    assert Features.FromString(fs.SerializeToString()) == fs
    # Features is field 1 of Example: the same bytes behind a tag.
    ex = Example(features=fs).SerializeToString()
    assert ex.endswith(fs.SerializeToString())


def test_malformed_bytes_raise():
    with pytest.raises(ValueError, match="error parsing message"):
        Example.FromString(b"\x0a\x05ab")


def test_pickle_and_repr():
    ex = Example(features=Features(feature={"a": Feature(int64_list=Int64List(value=[1]))}))
    assert pickle.loads(pickle.dumps(ex)) == ex
    assert "int64_list" in repr(ex)
    assert 'key: "a"' in str(ex)
