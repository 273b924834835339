//! Every way a TFRecord stream can be damaged gives an error of the right
//! kind naming the file and the offset of the damaged record — never a
//! panic, never a huge allocation, never a silent end.
//!
//! Each case runs through the in-memory reader (whole buffer), the
//! streaming reader over the whole buffer and the streaming reader fed one
//! byte at a time, and for each compression where it applies.

use std::io::{Read, Write};

use bytes::Bytes;
use feedstock::io::tfrecord::{masked_crc32c, ReaderBuilder, WriterBuilder};
use feedstock::io::Compression;
use feedstock::{Error, Kind};

const FILE: &str = "damaged.tfrecord";

/// The records of the clean stream.
fn originals() -> Vec<Vec<u8>> {
    vec![b"first".to_vec(), vec![0xab; 40], b"seventh".to_vec()]
}

/// The offset of each record's header, plus the end of the stream.
fn offsets() -> Vec<u64> {
    let mut out = vec![0];
    for r in originals() {
        out.push(out.last().unwrap() + 16 + r.len() as u64);
    }
    out
}

fn plain_stream() -> Vec<u8> {
    let mut w = WriterBuilder::new().from_writer(Vec::new());
    for r in originals() {
        w.write_record(&r).unwrap();
    }
    w.finish().unwrap()
}

fn compress(c: Compression, plain: &[u8]) -> Vec<u8> {
    let level = flate2::Compression::default();
    match c {
        Compression::None => plain.to_vec(),
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
            e.write_all(plain).unwrap();
            e.finish().unwrap()
        }
        Compression::Zlib => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), level);
            e.write_all(plain).unwrap();
            e.finish().unwrap()
        }
        _ => unreachable!(),
    }
}

struct OneByte<R>(R);

impl<R: Read> Read for OneByte<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(1);
        self.0.read(&mut buf[..n])
    }
}

/// What one way of reading produced: the records before the error, and
/// the error.
type Outcome = (Vec<Vec<u8>>, Error);

fn drain(
    it: impl Iterator<Item = feedstock::Result<feedstock::io::tfrecord::Record>>,
) -> Outcome {
    let mut records = Vec::new();
    for r in it {
        match r {
            Ok(r) => records.push(r.value.to_vec()),
            Err(e) => return (records, e),
        }
    }
    panic!("no error after {} records", records.len())
}

/// Reads `file` every way, checks the ways agree, returns the outcome.
fn read_every_way(file: &[u8], c: Compression, max: Option<u64>) -> Outcome {
    let mut b = ReaderBuilder::new();
    b.compression(c).file_name(FILE);
    if let Some(max) = max {
        b.max_record_len(max);
    }
    let whole = drain(b.from_bytes(Bytes::copy_from_slice(file)));
    let stream = drain(b.from_reader(file));
    let trickle =
        drain(b.clone().buffer_capacity(1).from_reader(OneByte(file)));
    assert_eq!(whole, stream, "in-memory vs streaming ({c})");
    assert_eq!(whole, trickle, "in-memory vs one byte at a time ({c})");
    whole
}

/// A damage to the uncompressed stream, and what it must cause.
struct Case {
    name: &'static str,
    damage: fn(&mut Vec<u8>),
    kind: Kind,
    /// How many records are read before the error.
    good: usize,
    /// The offset the error names, as a function of the clean offsets.
    offset: fn(&[u64]) -> u64,
    max: Option<u64>,
}

fn set_len(s: &mut [u8], at: usize, len: u64, fix_crc: bool) {
    s[at..at + 8].copy_from_slice(&len.to_le_bytes());
    if fix_crc {
        let crc = masked_crc32c(&s[at..at + 8]).to_le_bytes();
        s[at + 8..at + 12].copy_from_slice(&crc);
    }
}

fn cases() -> Vec<Case> {
    // Record 1 starts at offset 21 (16 + 5) and its data at 33.
    vec![
        Case {
            name: "flipped bit in length",
            damage: |s| s[21] ^= 0x04,
            kind: Kind::DataLoss,
            good: 1,
            offset: |o| o[1],
            max: None,
        },
        Case {
            name: "flipped bit in length CRC",
            damage: |s| s[21 + 9] ^= 0x80,
            kind: Kind::DataLoss,
            good: 1,
            offset: |o| o[1],
            max: None,
        },
        Case {
            name: "flipped bit in data",
            damage: |s| s[33 + 17] ^= 0x01,
            kind: Kind::DataLoss,
            good: 1,
            offset: |o| o[1],
            max: None,
        },
        Case {
            name: "flipped bit in data CRC",
            damage: |s| s[33 + 40 + 2] ^= 0x10,
            kind: Kind::DataLoss,
            good: 1,
            offset: |o| o[1],
            max: None,
        },
        Case {
            name: "cut inside header",
            damage: |s| s.truncate(offsets()[2] as usize + 5),
            kind: Kind::DataLoss,
            good: 2,
            offset: |o| o[2],
            max: None,
        },
        Case {
            name: "cut right after the length",
            damage: |s| s.truncate(offsets()[2] as usize + 8),
            kind: Kind::DataLoss,
            good: 2,
            offset: |o| o[2],
            max: None,
        },
        Case {
            name: "cut inside data",
            damage: |s| s.truncate(offsets()[2] as usize + 12 + 3),
            kind: Kind::DataLoss,
            good: 2,
            offset: |o| o[2],
            max: None,
        },
        Case {
            name: "cut inside footer",
            damage: |s| s.truncate(s.len() - 2),
            kind: Kind::DataLoss,
            good: 2,
            offset: |o| o[2],
            max: None,
        },
        Case {
            name: "a few stray bytes after the last record",
            damage: |s| s.extend_from_slice(&[0, 1, 2]),
            kind: Kind::DataLoss,
            good: 3,
            offset: |o| o[3],
            max: None,
        },
        Case {
            name: "many stray bytes after the last record",
            damage: |s| s.extend_from_slice(&[0x55; 40]),
            kind: Kind::DataLoss,
            good: 3,
            offset: |o| o[3],
            max: None,
        },
        Case {
            name: "garbage before the first record",
            damage: |s| {
                s.splice(0..0, b"GARBAGE!".iter().copied());
            },
            kind: Kind::DataLoss,
            good: 0,
            offset: |o| o[0],
            max: None,
        },
        Case {
            name: "length claiming 2^60 bytes",
            damage: |s| set_len(s, 21, 1 << 60, false),
            kind: Kind::DataLoss,
            good: 1,
            offset: |o| o[1],
            max: None,
        },
        Case {
            name: "length claiming 2^60 bytes with a valid CRC",
            damage: |s| set_len(s, 21, 1 << 60, true),
            kind: Kind::ResourceExhausted,
            good: 1,
            offset: |o| o[1],
            max: None,
        },
        Case {
            // No limit at all: only never allocating ahead of the data
            // keeps this from exhausting memory.
            name: "length claiming 2^60 bytes with a valid CRC, no limit",
            damage: |s| set_len(s, 21, 1 << 60, true),
            kind: Kind::DataLoss,
            good: 1,
            offset: |o| o[1],
            max: Some(u64::MAX),
        },
    ]
}

#[test]
fn each_damage_is_reported_with_kind_file_and_offset() {
    let offsets = offsets();
    let originals = originals();
    for case in cases() {
        let mut plain = plain_stream();
        (case.damage)(&mut plain);
        for c in [Compression::None, Compression::Gzip, Compression::Zlib] {
            let file = compress(c, &plain);
            let (records, err) = read_every_way(&file, c, case.max);
            let what = format!("{} ({c}): {err}", case.name);
            assert_eq!(records, originals[..case.good], "{what}");
            assert_eq!(err.kind(), case.kind, "{what}");
            assert_eq!(err.file(), Some(FILE), "{what}");
            assert_eq!(err.offset(), Some((case.offset)(&offsets)), "{what}");
        }
    }
}

#[test]
fn each_cut_of_a_compressed_stream_is_data_loss_at_a_record_boundary() {
    let plain = plain_stream();
    let offsets = offsets();
    let originals = originals();
    for c in [Compression::Gzip, Compression::Zlib] {
        let full = compress(c, &plain);
        // Every cut, from an empty file to one missing its last byte.
        for cut in 0..full.len() {
            let (records, err) = read_every_way(&full[..cut], c, None);
            let what = format!("{c} cut at {cut} of {}: {err}", full.len());
            assert_eq!(records, originals[..records.len()], "{what}");
            assert_eq!(err.kind(), Kind::DataLoss, "{what}");
            assert_eq!(err.file(), Some(FILE), "{what}");
            assert_eq!(err.offset(), Some(offsets[records.len()]), "{what}");
        }
    }
}

#[test]
fn missing_trailer_loses_no_record_but_is_still_an_error() {
    let plain = plain_stream();
    // gzip ends with CRC32 + ISIZE (8 bytes), zlib with Adler-32 (4).
    for (c, trailer) in [(Compression::Gzip, 8), (Compression::Zlib, 4)] {
        let full = compress(c, &plain);
        let (records, err) =
            read_every_way(&full[..full.len() - trailer], c, None);
        assert_eq!(records, originals(), "{c}");
        assert_eq!(err.kind(), Kind::DataLoss, "{c}");
        assert_eq!(err.offset(), Some(plain.len() as u64), "{c}");
        assert!(err.message().contains("cut short"), "{c}: {err}");
    }
}

#[test]
fn bad_trailer_is_data_loss() {
    let plain = plain_stream();
    // Flip a bit in the stored checksum: gzip's CRC32 is 8 bytes from the
    // end, zlib's Adler-32 is the last 4 bytes.
    for (c, from_end) in [(Compression::Gzip, 8), (Compression::Zlib, 1)] {
        let mut full = compress(c, &plain);
        let at = full.len() - from_end;
        full[at] ^= 0x01;
        let (records, err) = read_every_way(&full, c, None);
        assert_eq!(records, originals(), "{c}");
        assert_eq!(err.kind(), Kind::DataLoss, "{c}: {err}");
        assert_eq!(err.file(), Some(FILE), "{c}");
        assert_eq!(err.offset(), Some(plain.len() as u64), "{c}");
    }
    // A wrong ISIZE (the gzip length, last 4 bytes).
    let mut full = compress(Compression::Gzip, &plain);
    let last = full.len() - 1;
    full[last] ^= 0x01;
    let (_, err) = read_every_way(&full, Compression::Gzip, None);
    assert_eq!(err.kind(), Kind::DataLoss, "{err}");
}

#[test]
fn errors_repeat_on_read_record_and_end_iteration() {
    let mut plain = plain_stream();
    plain.truncate(10);
    let mut r = ReaderBuilder::new().file_name(FILE).from_reader(&plain[..]);
    let first = r.read_record().unwrap_err();
    assert_eq!(r.read_record().unwrap_err(), first);
    let mut it = ReaderBuilder::new().file_name(FILE).from_reader(&plain[..]);
    assert!(it.next().unwrap().is_err());
    assert!(it.next().is_none());
}

#[test]
fn opening_a_missing_file_is_not_found_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.tfrecord");
    let err = ReaderBuilder::new().open(&path).unwrap_err();
    assert_eq!(err.kind(), Kind::NotFound);
    assert_eq!(err.file(), Some(path.to_str().unwrap()));
}

#[test]
fn opening_a_directory_is_failed_precondition_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let err = ReaderBuilder::new().open(dir.path()).unwrap_err();
    assert_eq!(err.kind(), Kind::FailedPrecondition);
    assert_eq!(err.file(), Some(dir.path().to_str().unwrap()));
    assert!(err.message().contains("directory"), "{err}");
}
