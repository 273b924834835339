"""feedstock.grain.TFRecordSource: Grain's random-access protocol
(``__len__``, ``__getitem__``, picklable) over TFRecord files, without
Grain installed (duck-typed)."""

import pickle

import pytest

import feedstock as fs
from feedstock.grain import TFRecordSource
from feedstock.tfrecord import TFRecordWriter


@pytest.fixture()
def files(tmp_path):
    out = []
    for f, n in enumerate([3, 0, 5]):
        path = str(tmp_path / f"part-{f}.tfrecord")
        with TFRecordWriter(path) as w:
            for i in range(n):
                w.write(f"{f}/{i}".encode())
        out.append(path)
    return out


def test_records_by_number_across_files(files):
    s = TFRecordSource(files)
    assert len(s) == 8
    assert [s[i] for i in range(8)] == [b"0/0", b"0/1", b"0/2", b"2/0", b"2/1", b"2/2", b"2/3", b"2/4"]
    assert s[-1] == b"2/4"
    with pytest.raises(IndexError):
        s[8]


def test_it_pickles_as_its_file_list_and_reopens(files):
    s = pickle.loads(pickle.dumps(TFRecordSource(files)))
    assert len(s) == 8 and s[5] == b"2/2"


def test_a_damaged_record_is_an_error_naming_the_file(files):
    data = bytearray(open(files[2], "rb").read())
    data[-3] ^= 1
    open(files[2], "wb").write(bytes(data))
    with pytest.raises(fs.errors.DataLossError) as e:
        TFRecordSource(files)
    assert e.value.file == files[2]
