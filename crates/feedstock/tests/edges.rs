//! The library at its edges: inputs that are not regular files, buffers
//! that inflate hugely, compressed text (issue 10).

mod reader_support;

use std::io::Write;

use bytes::Bytes;
use feedstock::io::tfrecord::{
    CorruptRecords, ReaderBuilder, SkipBudget, WriterBuilder,
};
use feedstock::io::Compression;
use feedstock::reader::{
    FixedLengthRecordReader, Reader, TextLineReader, WholeFileReader,
};
use feedstock::Kind;
use reader_support::{read_all, write, Files};

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    );
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

#[test]
fn from_bytes_decompresses_no_more_than_its_limit() {
    let mut w = WriterBuilder::new().from_writer(Vec::new());
    for _ in 0..100 {
        w.write_record(&[7u8; 100]).unwrap();
    }
    let plain = w.finish().unwrap();
    let gz = Bytes::from(gzip(&plain));
    // 116 bytes a record: a limit of 1000 holds 8 whole records.
    let mut b = ReaderBuilder::new();
    b.compression(Compression::Gzip).max_decompressed_len(1000);
    let mut r = b.from_bytes(gz.clone());
    for i in 0..8 {
        assert_eq!(r.read_record().unwrap().unwrap().position.index, i);
    }
    let e = r.read_record().unwrap_err();
    assert_eq!(e.kind(), Kind::ResourceExhausted);
    assert!(e.message().contains("limit of 1000 bytes"), "{e}");
    // The default limit reads it all.
    let mut b = ReaderBuilder::new();
    b.compression(Compression::Gzip);
    assert_eq!(b.from_bytes(gz).count(), 100);
}

/// A gzip stream of `n` bytes of `byte`, built from a few KiB of deflate
/// output however large `n` is.
fn gzip_of_repeated(byte: u8, n: usize) -> Vec<u8> {
    let mut gz =
        flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let block = vec![byte; 1 << 20];
    for _ in 0..n / block.len() {
        gz.write_all(&block).unwrap();
    }
    gz.finish().unwrap()
}

#[test]
fn from_bytes_stops_inflating_at_a_bad_first_header() {
    // 64 MiB of 0xff, gzipped (~64 KB): not TFRecord framing, and the
    // first header says so. The reader fails at offset 0 having
    // inflated a few chunks, not the whole limit (issue 33, item 6).
    let gz = Bytes::from(gzip_of_repeated(0xff, 64 << 20));
    let mut b = ReaderBuilder::new();
    b.compression(Compression::Gzip);
    let mut r = b.from_bytes(gz);
    let e = r.read_record().unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss, "{e}");
    assert_eq!(e.offset(), Some(0), "{e}");
    assert!(
        r.stream_len() <= 1 << 20,
        "inflated {} bytes",
        r.stream_len()
    );
    // A skipping reader still inflates it all (its resync may find
    // records past the damage).
    let gz = Bytes::from(gzip_of_repeated(0xff, 4 << 20));
    let mut b = ReaderBuilder::new();
    b.compression(Compression::Gzip)
        .corrupt_records(CorruptRecords::Skip(SkipBudget::new()));
    let r = b.from_bytes(gz);
    assert_eq!(r.stream_len(), 4 << 20);
}

#[cfg(unix)]
#[test]
fn a_fixed_length_or_whole_file_reader_refuses_a_device() {
    // /dev/zero never ends: TensorFlow sizes a file first (0 here) and
    // reads nothing; feedstock says the file has no size.
    let work = || Files::new(["/dev/zero"]);
    let fixed =
        Reader::new(FixedLengthRecordReader::builder(4).build().unwrap());
    let e = fixed.read_up_to(&work(), 10).unwrap_err();
    assert_eq!(e.kind(), Kind::FailedPrecondition);
    assert!(e.message().contains("not a regular file"), "{e}");
    assert_eq!(e.file(), Some("/dev/zero"));
    let whole = Reader::new(WholeFileReader::new());
    let e = whole.read(&work()).unwrap_err();
    assert_eq!(e.kind(), Kind::FailedPrecondition);
    assert!(e.message().contains("not a regular file"), "{e}");
}

#[test]
fn a_fixed_length_reader_reads_a_file_up_to_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "a.bin", b"aabbcc");
    let reader =
        Reader::new(FixedLengthRecordReader::builder(2).build().unwrap());
    let records = read_all(&reader, &Files::new([f]));
    let values: Vec<&[u8]> = records.iter().map(|r| &r.value[..]).collect();
    assert_eq!(values, [b"aa", b"bb", b"cc"]);
}

#[test]
fn a_text_line_reader_reads_compressed_lines() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.csv.gz");
    std::fs::write(&f, gzip(b"h\n1,2\n3,4\n")).unwrap();
    let f = f.to_str().unwrap().to_owned();
    let reader = Reader::new(
        TextLineReader::builder()
            .compression(Compression::Gzip)
            .skip_header_lines(1)
            .build(),
    );
    let records = read_all(&reader, &Files::new([f.clone()]));
    let values: Vec<&[u8]> = records.iter().map(|r| &r.value[..]).collect();
    assert_eq!(values, [&b"1,2"[..], b"3,4"]);
    assert_eq!(records[0].key, format!("{f}:2"));
    // Resuming inside a compressed file decompresses up to the offset.
    let state = {
        let r = Reader::new(
            TextLineReader::builder()
                .compression(Compression::Gzip)
                .build(),
        );
        let work = Files::new([f.clone()]);
        r.read(&work).unwrap();
        r.serialize_state().unwrap()
    };
    let r = Reader::new(
        TextLineReader::builder()
            .compression(Compression::Gzip)
            .build(),
    );
    r.restore_state(&state).unwrap();
    let rest = read_all(&r, &Files::new(Vec::<String>::new()));
    let values: Vec<&[u8]> = rest.iter().map(|r| &r.value[..]).collect();
    assert_eq!(values, [&b"1,2"[..], b"3,4"]);
}

#[test]
fn a_file_too_big_for_memory_is_resource_exhausted_not_an_abort() {
    // A sparse 8 TiB file: sized, never written. 8 TiB fits every
    // filesystem CI may run on (ext4's limit with 4 KiB blocks is 16 TiB;
    // 64 TiB did not fit, and the test used to return early there).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.bin");
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(1 << 43).expect("a sparse 8 TiB file");
    let path = path.to_str().unwrap().to_owned();
    let whole = Reader::new(WholeFileReader::new());
    let e = whole.read(&Files::new([path.clone()])).unwrap_err();
    assert_eq!(e.kind(), Kind::ResourceExhausted, "{e}");
    assert_eq!(e.file(), Some(path.as_str()));
}

#[test]
fn layouts_whose_sums_overflow_are_errors_not_panics() {
    let e = FixedLengthRecordReader::builder(u64::MAX)
        .footer_bytes(1)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "a.bin", b"aabbcc");
    for (header, footer, hop) in [
        (u64::MAX, u64::MAX - 2, 0),
        (0, 0, u64::MAX),
        (u64::MAX - 1, 0, 2),
    ] {
        let reader = Reader::new(
            FixedLengthRecordReader::builder(2)
                .header_bytes(header)
                .footer_bytes(footer)
                .hop_bytes(hop)
                .build()
                .unwrap(),
        );
        let work = Files::new([f.clone()]);
        let mut got = Vec::new();
        let err = loop {
            match reader.read(&work) {
                Ok(r) => got.push(r.value),
                Err(e) => break e,
            }
        };
        let layout = format!("{header}/{footer}/{hop}");
        if hop == u64::MAX {
            // One record; the next would start past any file, so the
            // bytes after it are a gap, as between records of a smaller
            // hop.
            assert_eq!(got.len(), 1, "{layout}");
            assert_eq!(err.kind(), Kind::OutOfRange, "{layout}: {err}");
        } else {
            assert!(got.is_empty(), "{layout}");
            assert_eq!(err.kind(), Kind::DataLoss, "{layout}: {err}");
        }
    }
}
