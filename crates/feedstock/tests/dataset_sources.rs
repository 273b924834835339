//! The file sources of the dataset (text lines, fixed-length records,
//! whole files): the same records, keys and errors as the classic
//! readers on the same files, read by position in any order.

mod reader_support;

use std::io::Write;
use std::sync::Arc;

use feedstock::dataset::source::{Fetched, Fnv, Source};
use feedstock::dataset::{FixedLengthSource, TextLineSource, WholeFileSource};
use feedstock::io::fs::{FileSystem, LocalFs};
use feedstock::io::Compression;
use feedstock::reader::{
    FixedLengthRecordReader, Reader, TextLineReader, WholeFileReader,
};
use feedstock::{Error, Kind};
use reader_support::{read_all, write, Files};

fn fs() -> Arc<dyn FileSystem> {
    Arc::new(LocalFs)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e =
        flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Every record of every file of `source`, in order, as (key, value).
fn all(source: &dyn Source) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (file, &n) in source.counts().iter().enumerate() {
        let ordinals: Vec<u64> = (0..n).collect();
        let Fetched::Records(records) =
            source.read(file as u32, &ordinals).unwrap()
        else {
            panic!("rows from a file source")
        };
        for (k, r) in records.iter().enumerate() {
            assert_eq!(r.position.index, k as u64);
            out.push((source.key(file as u32, r), r.value.to_vec()));
        }
    }
    out
}

/// What the classic `reader` gives for `files`, as (key, value).
fn classic(reader: &Reader, files: &[String]) -> Vec<(String, Vec<u8>)> {
    read_all(reader, &Files::new(files.to_vec()))
        .into_iter()
        .map(|r| (r.key, r.value.to_vec()))
        .collect()
}

/// Reads each file's records in a scrambled order with repeats, from
/// several threads at once, and checks them against `want` (the records
/// in order).
fn check_random_reads(source: &dyn Source, want: &[(String, Vec<u8>)]) {
    let mut first = 0;
    for (file, &n) in source.counts().iter().enumerate() {
        let expect = &want[first..first + n as usize];
        first += n as usize;
        // A fixed scramble: a stride coprime with most counts, repeats.
        let mut ordinals: Vec<u64> =
            (0..n).map(|i| (i * 7919 + 3) % n.max(1)).collect();
        ordinals.extend((0..n).rev().step_by(3));
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    let Fetched::Records(records) =
                        source.read(file as u32, &ordinals).unwrap()
                    else {
                        panic!("rows")
                    };
                    assert_eq!(records.len(), ordinals.len());
                    for (&k, r) in ordinals.iter().zip(&records) {
                        let (key, value) = &expect[k as usize];
                        assert_eq!(&r.value[..], &value[..], "{key}");
                        assert_eq!(&source.key(file as u32, r), key);
                    }
                });
            }
        });
    }
}

fn fingerprint(source: &dyn Source) -> u64 {
    let mut h = Fnv::default();
    source.fingerprint(&mut h);
    h.finish()
}

/// Text files with every line-ending case the reader defines.
fn text_files() -> Vec<(&'static str, Vec<u8>)> {
    let mut long = String::from("header\n");
    for i in 0..20_000 {
        // Lines of many lengths, so that lines and "\r\n" pairs straddle
        // the reader's 64 KiB chunks.
        let end = if i % 3 == 0 { "\r\n" } else { "\n" };
        long.push_str(&format!("{i},{}{end}", "v".repeat(i % 17)));
    }
    vec![
        ("crlf.csv", b"h\na\r\nb\n\nc\r\r\nlast".to_vec()),
        ("cr-after.csv", b"h\nx\n\r".to_vec()),
        ("cr-last.csv", b"h\nfirst\nlast\r".to_vec()),
        ("headers-only.csv", b"h\n".to_vec()),
        ("empty.csv", Vec::new()),
        ("données-ünï-日本.csv", "h\nçà\n€,✓\n".as_bytes().to_vec()),
        ("long.csv", long.into_bytes()),
    ]
}

#[test]
fn text_lines_are_the_readers_lines_plain_and_gzip() {
    let dir = tempfile::tempdir().unwrap();
    for c in [Compression::None, Compression::Gzip] {
        let files: Vec<String> = text_files()
            .into_iter()
            .map(|(name, bytes)| match c {
                Compression::None => write(dir.path(), name, &bytes),
                _ if bytes.is_empty() => {
                    write(dir.path(), &format!("{name}.gz"), &bytes)
                }
                _ => write(dir.path(), &format!("{name}.gz"), &gzip(&bytes)),
            })
            .collect();
        let reader = Reader::new(
            TextLineReader::builder()
                .skip_header_lines(1)
                .allow_empty_files(true)
                .compression(c)
                .build(),
        );
        let want = classic(&reader, &files);
        assert!(want.len() > 20_000, "{}", want.len());
        // The compression from the extension, as by default.
        let source = TextLineSource::builder()
            .skip_header_lines(1)
            .allow_empty_files(true)
            .open(fs(), &files, 2, 4)
            .unwrap();
        assert_eq!(all(&source), want, "{c}");
        check_random_reads(&source, &want);
    }
}

#[test]
fn text_line_errors_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = b"short\n".to_vec();
    bytes.extend(std::iter::repeat_n(b'x', 100_000));
    bytes.extend(b"\nafter\n");
    let long = write(dir.path(), "lång.txt", &bytes);
    let e = TextLineSource::builder()
        .max_line_bytes(1000)
        .open(fs(), std::slice::from_ref(&long), 1, 4)
        .unwrap_err();
    assert_eq!(e.kind(), Kind::ResourceExhausted, "{e}");
    assert_eq!(e.file(), Some(long.as_str()), "{e}");
    assert_eq!(e.key(), Some(format!("{long}:2").as_str()), "{e}");
    assert!(e.message().contains("line 2"), "{e}");
    // The reader fails on the same line.
    let reader =
        Reader::new(TextLineReader::builder().max_line_bytes(1000).build());
    let work = Files::new([long.clone()]);
    reader.read(&work).unwrap();
    let classic = reader.read(&work).unwrap_err();
    assert_eq!(classic.kind(), e.kind());
    assert_eq!(classic.message(), e.message());

    // An empty file, refused as the reader refuses it.
    let empty = write(dir.path(), "empty.txt", b"");
    let e = TextLineSource::builder()
        .open(fs(), std::slice::from_ref(&empty), 1, 4)
        .unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss, "{e}");
    assert_eq!(e.file(), Some(empty.as_str()), "{e}");

    // A file that shrinks after the source is opened: the read names the
    // file and the line.
    let path = write(dir.path(), "shrinks.txt", b"a\nbb\nccc\n");
    let source = TextLineSource::builder()
        .open(fs(), std::slice::from_ref(&path), 1, 4)
        .unwrap();
    std::fs::write(&path, b"a\nbb\n").unwrap();
    let e = source.read(0, &[0, 2]).unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss, "{e}");
    assert_eq!(e.file(), Some(path.as_str()), "{e}");
    assert_eq!(e.key(), Some(format!("{path}:3").as_str()), "{e}");
    // A record past the end is refused, naming the file.
    let e = source.read(0, &[3]).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
    assert_eq!(e.file(), Some(path.as_str()), "{e}");
}

fn missing_file_named(e: Error, path: &str) {
    assert_eq!(e.kind(), Kind::NotFound, "{e}");
    assert_eq!(e.file(), Some(path), "{e}");
}

#[test]
fn a_missing_file_is_not_found_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let ok = write(dir.path(), "ok.bin", b"0123456789");
    let missing = dir.path().join("nöne.bin").to_str().unwrap().to_owned();
    let files = [ok, missing.clone()];
    missing_file_named(
        TextLineSource::builder()
            .open(fs(), &files, 2, 4)
            .unwrap_err(),
        &missing,
    );
    missing_file_named(
        FixedLengthSource::builder(5)
            .open(fs(), &files, 2, 4)
            .unwrap_err(),
        &missing,
    );
    missing_file_named(
        WholeFileSource::open(fs(), &files, 2, 4).unwrap_err(),
        &missing,
    );
}

/// (header, record, footer, hop) layouts: adjacent, overlapping, gaps.
const LAYOUTS: [(u64, u64, u64, u64); 4] =
    [(0, 4, 0, 0), (3, 5, 2, 0), (3, 5, 2, 2), (1, 3, 4, 7)];

#[test]
fn fixed_length_records_are_the_readers_records_plain_and_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
    for (l, &(header, record, footer, hop)) in LAYOUTS.iter().enumerate() {
        let step = if hop == 0 { record } else { hop };
        // Sizes that the layout cuts exactly: no records, one, many.
        let sizes = [header + footer, header + record + footer]
            .into_iter()
            .chain(
                [11, 400].map(|n| header + (n - 1) * step + record + footer),
            );
        for c in [Compression::None, Compression::Gzip] {
            let files: Vec<String> = sizes
                .clone()
                .enumerate()
                .map(|(i, size)| {
                    let bytes = &data[..size as usize];
                    match c {
                        Compression::None => {
                            write(dir.path(), &format!("{l}-{i}-ß.bin"), bytes)
                        }
                        _ => write(
                            dir.path(),
                            &format!("{l}-{i}-ß.bin.gz"),
                            &gzip(bytes),
                        ),
                    }
                })
                .collect();
            let reader = Reader::new(
                FixedLengthRecordReader::builder(record)
                    .header_bytes(header)
                    .footer_bytes(footer)
                    .hop_bytes(hop)
                    .compression(c)
                    .build()
                    .unwrap(),
            );
            let want = classic(&reader, &files);
            let source = FixedLengthSource::builder(record)
                .header_bytes(header)
                .footer_bytes(footer)
                .hop_bytes(hop)
                .open(fs(), &files, 2, 4)
                .unwrap();
            assert_eq!(source.counts(), &[0, 1, 11, 400], "{l} {c}");
            assert_eq!(all(&source), want, "layout {l} {c}");
            check_random_reads(&source, &want);
        }
    }
}

#[test]
fn a_truncated_fixed_length_file_fails_as_the_reader_fails() {
    let dir = tempfile::tempdir().unwrap();
    let (header, record, footer) = (3u64, 5u64, 2u64);
    // A partial last record, and a file shorter than its header; plain
    // and gzip.
    for (i, size) in [header + 2 * record + 3 + footer, 2]
        .into_iter()
        .enumerate()
    {
        let bytes = vec![7u8; size as usize];
        for (name, stored) in [
            (format!("cut-{i}-π.bin"), bytes.clone()),
            (format!("cut-{i}-π.bin.gz"), gzip(&bytes)),
        ] {
            let path = write(dir.path(), &name, &stored);
            let c = Compression::from_path(&path);
            let reader = Reader::new(
                FixedLengthRecordReader::builder(record)
                    .header_bytes(header)
                    .footer_bytes(footer)
                    .compression(c)
                    .build()
                    .unwrap(),
            );
            let work = Files::new([path.clone()]);
            let classic = loop {
                match reader.read(&work) {
                    Ok(_) => {}
                    Err(e) => break e,
                }
            };
            let e = FixedLengthSource::builder(record)
                .header_bytes(header)
                .footer_bytes(footer)
                .open(fs(), std::slice::from_ref(&path), 1, 4)
                .unwrap_err();
            assert_eq!(e.kind(), Kind::DataLoss, "{e}");
            assert_eq!(e.file(), Some(path.as_str()), "{e}");
            assert_eq!(e.message(), classic.message(), "{name}");
            assert_eq!(e.offset(), classic.offset(), "{name}");
            if i == 0 {
                assert!(e.message().contains("truncated record 2"), "{e}");
            }
        }
    }
}

#[test]
fn whole_files_are_the_readers_records() {
    let dir = tempfile::tempdir().unwrap();
    let big: Vec<u8> = (0..5_000_000u32).map(|i| (i % 251) as u8).collect();
    let files = vec![
        write(dir.path(), "a.jpg", b"\xff\xd8 not really a jpeg"),
        write(dir.path(), "empty", b""),
        write(dir.path(), "画像-ü.png", b"png bytes"),
        write(dir.path(), "big.bin", &big),
    ];
    let want = classic(&Reader::new(WholeFileReader::new()), &files);
    let source = WholeFileSource::open(fs(), &files, 2, 2).unwrap();
    assert_eq!(source.counts(), &[1, 1, 1, 1]);
    assert_eq!(all(&source), want);
    assert_eq!(want[2].0, files[2]);
    check_random_reads(&source, &want);
    let e = source.read(0, &[1]).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
    assert_eq!(e.file(), Some(files[0].as_str()), "{e}");
}

#[test]
fn a_fingerprint_follows_the_contents_and_the_settings() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "f.csv", b"h\n1,2\n3,4\n");
    let files = std::slice::from_ref(&path);
    let text = |skip| {
        fingerprint(
            &TextLineSource::builder()
                .skip_header_lines(skip)
                .open(fs(), files, 1, 4)
                .unwrap(),
        )
    };
    let fixed = |hop| {
        fingerprint(
            &FixedLengthSource::builder(2)
                .hop_bytes(hop)
                .open(fs(), files, 1, 4)
                .unwrap(),
        )
    };
    let whole =
        || fingerprint(&WholeFileSource::open(fs(), files, 1, 4).unwrap());
    let before = [text(0), text(1), fixed(0), fixed(1), whole()];
    // Same settings, same file: the same fingerprint.
    assert_eq!(before[0], text(0));
    // Settings and kinds are told apart.
    for (i, a) in before.iter().enumerate() {
        for b in &before[i + 1..] {
            assert_ne!(a, b, "{before:?}");
        }
    }
    // The same size, one byte changed: every fingerprint changes.
    std::fs::write(&path, b"h\n1,2\n3,5\n").unwrap();
    let after = [text(0), text(1), fixed(0), fixed(1), whole()];
    for (a, b) in before.iter().zip(&after) {
        assert_ne!(a, b);
    }
}
