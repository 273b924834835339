//! FixedLengthRecordReader: layouts (header, footer, hop), keys, the
//! golden CIFAR-like file, and the errors TensorFlow hides.

mod reader_support;

use base64::Engine;
use feedstock::io::Compression;
use feedstock::reader::{FixedLengthRecordReader, Reader};
use feedstock::Kind;
use reader_support::{golden, read_all, sidecar, write, Files};

fn reader(record: u64, header: u64, footer: u64, hop: u64) -> Reader {
    Reader::new(
        FixedLengthRecordReader::builder(record)
            .header_bytes(header)
            .footer_bytes(footer)
            .hop_bytes(hop)
            .build()
            .unwrap(),
    )
}

fn values(reader: &Reader, file: &str) -> Vec<String> {
    read_all(reader, &Files::new([file]))
        .iter()
        .map(|r| String::from_utf8(r.value.to_vec()).unwrap())
        .collect()
}

#[test]
fn golden_cifar_like_records_and_keys_match_tensorflow() {
    let side = sidecar("cifar_like.bin");
    let cfg = &side["reader"]["FixedLengthRecordReader"];
    let get = |k: &str| cfg[k].as_u64().unwrap();
    let r = reader(
        get("record_bytes"),
        get("header_bytes"),
        get("footer_bytes"),
        get("hop_bytes"),
    );
    let path = golden("cifar_like.bin");
    let records = read_all(&r, &Files::new([path.clone()]));
    let want = side["records"].as_array().unwrap();
    assert_eq!(records.len(), want.len());
    assert_eq!(records.len() as u64, side["num_records"].as_u64().unwrap());
    for (got, want) in records.iter().zip(want) {
        let key = want["key"].as_str().unwrap();
        assert_eq!(got.key, key.replacen("cifar_like.bin", &path, 1));
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(want["value_b64"].as_str().unwrap())
            .unwrap();
        assert_eq!(&got.value[..], &bytes[..]);
        assert_eq!(u64::from(got.value[0]), want["label"].as_u64().unwrap());
    }
}

#[test]
fn header_and_footer_are_skipped_and_keys_count_from_zero() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "a.bin", b"HHaabbccFFF");
    let r = reader(2, 2, 3, 0);
    let records = read_all(&r, &Files::new([f.clone()]));
    let got: Vec<_> = records
        .iter()
        .map(|r| (r.key.clone(), r.value.to_vec()))
        .collect();
    assert_eq!(
        got,
        [
            (format!("{f}:0"), b"aa".to_vec()),
            (format!("{f}:1"), b"bb".to_vec()),
            (format!("{f}:2"), b"cc".to_vec()),
        ]
    );
}

#[test]
fn a_hop_smaller_than_the_record_makes_overlapping_windows() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "w.bin", b"abcdefF");
    assert_eq!(
        values(&reader(3, 0, 1, 1), &f),
        ["abc", "bcd", "cde", "def"]
    );
    let f = write(dir.path(), "w2.bin", b"abcdefg");
    assert_eq!(values(&reader(3, 0, 0, 2), &f), ["abc", "cde", "efg"]);
}

#[test]
fn an_overlapping_layout_with_uncovered_tail_bytes_is_data_loss() {
    let dir = tempfile::tempdir().unwrap();
    // Windows of 3 every 2 bytes cover "abc" and "cde"; the "f" would be
    // silently dropped by TensorFlow.
    let f = write(dir.path(), "w.bin", b"abcdef");
    let r = reader(3, 0, 0, 2);
    let files = Files::new([f.clone()]);
    assert_eq!(&r.read(&files).unwrap().value[..], b"abc");
    assert_eq!(&r.read(&files).unwrap().value[..], b"cde");
    // The error names the unfinished third record, "ef", at its start.
    let e = r.read(&files).unwrap_err();
    assert_eq!(
        (e.kind(), e.file(), e.offset()),
        (Kind::DataLoss, Some(&*f), Some(4))
    );
}

#[test]
fn a_hop_larger_than_the_record_skips_the_gaps() {
    let dir = tempfile::tempdir().unwrap();
    // Records of 2 every 3 bytes; the gap after the last one may be absent
    // or present.
    let f = write(dir.path(), "g.bin", b"ab.cd.ef");
    assert_eq!(values(&reader(2, 0, 0, 3), &f), ["ab", "cd", "ef"]);
    let f = write(dir.path(), "g2.bin", b"ab.cd.ef.");
    assert_eq!(values(&reader(2, 0, 0, 3), &f), ["ab", "cd", "ef"]);
}

#[test]
fn a_file_with_only_header_and_footer_has_no_records() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "hf.bin", b"HHFF");
    assert!(values(&reader(4, 2, 2, 0), &f).is_empty());
}

#[test]
fn record_bytes_zero_is_rejected_when_built() {
    let e = FixedLengthRecordReader::builder(0).build().unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(e.message().contains("record_bytes"), "{e}");
}

#[test]
fn a_truncated_last_record_is_data_loss_naming_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "cut.bin", b"HaaabbbccF");
    let r = reader(3, 1, 1, 0);
    let files = Files::new([f.clone()]);
    assert_eq!(&r.read(&files).unwrap().value[..], b"aaa");
    assert_eq!(&r.read(&files).unwrap().value[..], b"bbb");
    let e = r.read(&files).unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss);
    assert_eq!(e.file(), Some(f.as_str()));
    assert_eq!(e.offset(), Some(7));
    assert!(e.to_string().contains("truncated record 2"), "{e}");
}

#[test]
fn an_unfinished_overlapping_record_is_named_at_its_start() {
    // Windows of 4 bytes every 3: records start at 0, 3, ..., 15 (6 of
    // them, as TensorFlow reads); the 7th starts at 18 with 2 bytes.
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "slide.bin", b"abcdefghijklmnopqrst");
    let r = reader(4, 0, 0, 3);
    let files = Files::new([f.clone()]);
    for _ in 0..6 {
        r.read(&files).unwrap();
    }
    let e = r.read(&files).unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss);
    assert_eq!(e.offset(), Some(18));
    assert!(e.to_string().contains("only 2 of its 4 bytes"), "{e}");
}

#[test]
fn a_file_shorter_than_its_header_is_data_loss_and_later_files_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let short = write(dir.path(), "short.bin", b"HH");
    let empty = write(dir.path(), "empty.bin", b"");
    let good = write(dir.path(), "good.bin", b"HHHHxy");
    let r = reader(2, 4, 0, 0);
    let files = Files::new([short.clone(), empty.clone(), good.clone()]);
    for (bad, size) in [(&short, 2), (&empty, 0)] {
        let e = r.read(&files).unwrap_err();
        assert_eq!(e.kind(), Kind::DataLoss, "{e}");
        assert_eq!(e.file(), Some(bad.as_str()));
        // The offset where the file ended, inside the header.
        assert_eq!(e.offset(), Some(size), "{e}");
        assert!(e.message().contains("header"), "{e}");
    }
    // Unlike TensorFlow, a short file does not end the input.
    let rec = r.read(&files).unwrap();
    assert_eq!(
        (rec.key.as_str(), &rec.value[..]),
        (&*format!("{good}:0"), &b"xy"[..])
    );
}

#[test]
fn an_empty_file_has_no_records_in_every_compression() {
    // TensorFlow's FixedLengthRecordReader (encoding "", GZIP or ZLIB)
    // reads a 0-byte file as no records; so does an uncompressed one
    // here, and a compressed one too (it is not a gzip or zlib stream).
    // With a header it is too short, whatever the compression.
    for c in [Compression::None, Compression::Gzip, Compression::Zlib] {
        let dir = tempfile::tempdir().unwrap();
        let empty = write(dir.path(), "empty.bin", b"");
        let layout = |header: u64| {
            Reader::new(
                FixedLengthRecordReader::builder(4)
                    .header_bytes(header)
                    .compression(c)
                    .build()
                    .unwrap(),
            )
        };
        let r = layout(0);
        assert!(
            read_all(&r, &Files::new([empty.clone()])).is_empty(),
            "{c:?}"
        );
        assert_eq!(r.num_work_units_completed(), 1, "{c:?}");
        let e = layout(2).read(&Files::new([empty.clone()])).unwrap_err();
        assert_eq!(e.kind(), Kind::DataLoss, "{c:?}: {e}");
        assert_eq!((e.file(), e.offset()), (Some(empty.as_str()), Some(0)));
        assert!(e.message().contains("header"), "{c:?}: {e}");
    }
}

#[test]
fn a_file_shorter_than_header_plus_footer_is_data_loss() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "hf.bin", b"HHF");
    let e = reader(4, 2, 2, 0)
        .read(&Files::new([f.clone()]))
        .unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss);
    assert_eq!(e.file(), Some(f.as_str()));
    assert_eq!(e.offset(), Some(3), "{e}");
}
