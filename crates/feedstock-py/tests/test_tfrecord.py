import base64
import gzip
import json
import zlib

import pytest

from feedstock import errors
from feedstock.tfrecord import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)


def golden_records(golden):
    side = json.loads((golden / "examples.tfrecord.json").read_text())
    return [base64.b64decode(r["b64"]) for r in side["records"]]


def test_writer_output_is_byte_identical_to_tensorflows(golden, tmp_path):
    out = tmp_path / "out.tfrecord"
    with TFRecordWriter(str(out)) as w:
        for r in golden_records(golden):
            w.write(r)
    assert out.read_bytes() == (golden / "examples.tfrecord").read_bytes()


@pytest.mark.parametrize(
    "options,decompress",
    [
        ("GZIP", gzip.decompress),
        ("ZLIB", zlib.decompress),
        (TFRecordOptions(TFRecordCompressionType.GZIP), gzip.decompress),
        (TFRecordOptions(compression_type="ZLIB", compression_level=9), zlib.decompress),
    ],
)
def test_compressed_writers_decompress_to_the_plain_file(golden, tmp_path, options, decompress):
    out = tmp_path / "out.tfrecord"
    w = TFRecordWriter(out, options=options)
    for r in golden_records(golden):
        w.write(r)
    w.close()
    assert decompress(out.read_bytes()) == (golden / "examples.tfrecord").read_bytes()
    assert list(tf_record_iterator(out, options=options)) == golden_records(golden)


@pytest.mark.parametrize(
    "name,options", [("examples.tfrecord", None), ("examples.gzip.tfrecord", "GZIP"), ("examples.zlib.tfrecord", "ZLIB")]
)
def test_iterator_reads_tensorflows_files(golden, name, options):
    assert list(tf_record_iterator(str(golden / name), options)) == golden_records(golden)


def test_truncated_file_yields_good_records_then_data_loss(golden, tmp_path):
    data = (golden / "examples.tfrecord").read_bytes()
    cut = tmp_path / "cut.tfrecord"
    cut.write_bytes(data[:-5])
    it = tf_record_iterator(str(cut))
    got = []
    with pytest.raises(errors.DataLossError) as info:
        for r in it:
            got.append(r)
    assert got == golden_records(golden)[:7]
    assert info.value.file == str(cut)
    assert info.value.offset is not None


def test_corrupt_crc_is_data_loss_naming_file_and_offset(golden, tmp_path):
    data = bytearray((golden / "examples.tfrecord").read_bytes())
    data[20] ^= 0xFF  # inside record 0's data
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(data))
    with pytest.raises(errors.DataLossError) as info:
        list(tf_record_iterator(str(bad)))
    assert info.value.file == str(bad)
    assert info.value.offset == 0
    assert "bad.tfrecord" in str(info.value)


def test_missing_file_is_not_found(tmp_path):
    with pytest.raises(errors.NotFoundError) as info:
        tf_record_iterator(str(tmp_path / "nope.tfrecord"))
    assert "nope.tfrecord" in str(info.value)


def test_write_after_close_fails_cleanly(tmp_path):
    w = TFRecordWriter(str(tmp_path / "a.tfrecord"))
    w.write(b"x")
    w.close()
    w.close()
    with pytest.raises(errors.FailedPreconditionError):
        w.write(b"y")
    assert list(tf_record_iterator(str(tmp_path / "a.tfrecord"))) == [b"x"]


def test_unknown_compression_is_rejected(tmp_path):
    with pytest.raises(ValueError):
        TFRecordWriter(str(tmp_path / "a"), options="BZIP2")
    assert TFRecordOptions.get_compression_type_string(TFRecordOptions("GZIP")) == "GZIP"
    assert TFRecordOptions.get_compression_type_string(None) == ""
