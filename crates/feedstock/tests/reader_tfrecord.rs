//! TfRecordReader over the golden TFRecord files (none, GZIP, ZLIB), and
//! compressed fixed-length files.

mod reader_support;

use std::io::Write;

use base64::Engine;
use feedstock::io::Compression;
use feedstock::reader::{FixedLengthRecordReader, Reader, TfRecordReader};
use feedstock::Kind;
use reader_support::{
    golden, read_all, restore_is_exact, sidecar, write, Files,
};

fn tfrecord(c: Compression) -> Reader {
    Reader::new(TfRecordReader::builder().compression(c).build())
}

/// The golden records' data, and their keys' offsets: each record takes
/// 12 header bytes, its data and 4 footer bytes.
fn golden_records() -> Vec<(u64, Vec<u8>)> {
    let side = sidecar("examples.tfrecord");
    let mut offset = 0;
    side["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let data = base64::engine::general_purpose::STANDARD
                .decode(r["b64"].as_str().unwrap())
                .unwrap();
            assert_eq!(data.len() as u64, r["length"].as_u64().unwrap());
            let at = offset;
            offset += 16 + data.len() as u64;
            (at, data)
        })
        .collect()
}

#[test]
fn golden_tfrecords_read_with_offset_keys_in_every_compression() {
    let want = golden_records();
    assert_eq!(want.len(), 8);
    for (name, c) in [
        ("examples.tfrecord", Compression::None),
        ("examples.gzip.tfrecord", Compression::Gzip),
        ("examples.zlib.tfrecord", Compression::Zlib),
    ] {
        let path = golden(name);
        let got = read_all(&tfrecord(c), &Files::new([path.clone()]));
        assert_eq!(got.len(), want.len(), "{name}");
        for (g, (offset, data)) in got.iter().zip(&want) {
            assert_eq!(g.key, format!("{path}:{offset}"));
            assert_eq!(&g.value[..], &data[..], "{}", g.key);
        }
    }
}

#[test]
fn restored_tfrecord_reader_resumes_at_the_next_record() {
    for (name, c) in [
        ("examples.tfrecord", Compression::None),
        ("examples.gzip.tfrecord", Compression::Gzip),
    ] {
        let path = golden(name);
        restore_is_exact(|| tfrecord(c), vec![path.clone(), path]);
    }
}

#[test]
fn a_corrupt_tfrecord_is_data_loss_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(golden("examples.tfrecord")).unwrap();
    bytes[20] ^= 0xff; // inside the first record's data
    let bad = write(dir.path(), "bad.tfrecord", &bytes);
    let cut = write(dir.path(), "cut.tfrecord", &bytes[..30]);
    for f in [bad, cut] {
        let e = tfrecord(Compression::None)
            .read(&Files::new([f.clone()]))
            .unwrap_err();
        assert_eq!(e.kind(), Kind::DataLoss, "{e}");
        assert_eq!(e.file(), Some(f.as_str()));
        assert!(e.offset().is_some(), "every DataLoss names an offset: {e}");
    }
}

#[test]
fn an_empty_tfrecord_file_is_data_loss_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "empty.tfrecord", b"");
    let e = tfrecord(Compression::None)
        .read(&Files::new([f.clone()]))
        .unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss, "{e}");
    assert_eq!(e.file(), Some(f.as_str()));
    assert_eq!(e.offset(), Some(0), "{e}");
}

#[test]
fn an_allowed_empty_tfrecord_file_has_no_records_in_every_compression() {
    // TensorFlow reads a 0-byte file as no records whatever its
    // compression_type; allow_empty_files(true) means the same here.
    for c in [Compression::None, Compression::Gzip, Compression::Zlib] {
        let dir = tempfile::tempdir().unwrap();
        let f = write(dir.path(), "empty.tfrecord", b"");
        let r = Reader::new(
            TfRecordReader::builder()
                .compression(c)
                .allow_empty_files(true)
                .build(),
        );
        assert!(read_all(&r, &Files::new([f])).is_empty(), "{c:?}");
        assert_eq!(r.num_work_units_completed(), 1, "{c:?}");
        // Without the option it is still DataLoss naming the file.
        let f = write(dir.path(), "empty2.tfrecord", b"");
        let e = tfrecord(c).read(&Files::new([f.clone()])).unwrap_err();
        assert_eq!(e.kind(), Kind::DataLoss, "{c:?}: {e}");
        assert_eq!((e.file(), e.offset()), (Some(f.as_str()), Some(0)));
    }
}

#[test]
fn an_allowed_empty_tfrecord_file_has_no_records() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "empty.tfrecord", b"");
    let r =
        Reader::new(TfRecordReader::builder().allow_empty_files(true).build());
    assert!(read_all(&r, &Files::new([f])).is_empty());
    assert_eq!(r.num_work_units_completed(), 1);
}

fn compress(c: Compression, data: &[u8]) -> Vec<u8> {
    let level = flate2::Compression::default();
    match c {
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Compression::Zlib => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), level);
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        _ => data.to_vec(),
    }
}

fn cifar(c: Compression) -> Reader {
    Reader::new(
        FixedLengthRecordReader::builder(3073)
            .compression(c)
            .build()
            .unwrap(),
    )
}

#[test]
fn compressed_fixed_length_files_read_as_the_plain_one() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(golden("cifar_like.bin")).unwrap();
    let want: Vec<Vec<u8>> = read_all(
        &cifar(Compression::None),
        &Files::new([golden("cifar_like.bin")]),
    )
    .iter()
    .map(|r| r.value.to_vec())
    .collect();
    assert_eq!(want.len(), 4);
    for c in [Compression::Gzip, Compression::Zlib] {
        let f = write(dir.path(), &format!("c.{c}"), &compress(c, &plain));
        let got = read_all(&cifar(c), &Files::new([f.clone()]));
        let keys: Vec<_> = got.iter().map(|r| r.key.clone()).collect();
        assert_eq!(
            keys,
            (0..4).map(|i| format!("{f}:{i}")).collect::<Vec<_>>()
        );
        let values: Vec<_> = got.iter().map(|r| r.value.to_vec()).collect();
        assert!(values == want, "{c}");
        restore_is_exact(|| cifar(c), vec![f]);
    }
}

#[test]
fn a_cut_compressed_fixed_length_file_is_data_loss_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(golden("cifar_like.bin")).unwrap();
    let gz = compress(Compression::Gzip, &plain);
    let f = write(dir.path(), "cut.gz", &gz[..gz.len() / 2]);
    let r = cifar(Compression::Gzip);
    let files = Files::new([f.clone()]);
    let e = loop {
        match r.read(&files) {
            Ok(_) => continue,
            Err(e) => break e,
        }
    };
    assert_eq!(e.kind(), Kind::DataLoss, "{e}");
    assert_eq!(e.file(), Some(f.as_str()));
    assert!(e.offset().is_some(), "every DataLoss names an offset: {e}");
}
