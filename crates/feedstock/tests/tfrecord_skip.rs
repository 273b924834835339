//! The skip policy for corrupt TFRecord records: a damaged region is
//! skipped and counted, reading resynchronises at the next intact frame,
//! every intact record is delivered exactly once and in order, and the
//! budget is enforced.
//!
//! Each case runs through every reader (in-memory, streaming, streaming
//! one byte at a time, a file opened by path) and, where the damage is to
//! the decompressed stream, through gzip and zlib as well; all must agree.

use std::io::{Read, Write};
use std::sync::Arc;

use bytes::Bytes;
use feedstock::io::tfrecord::{
    encode_record, framed_len, masked_crc32c, CorruptRecords, ReaderBuilder,
    SkipBudget, SkipLog,
};
use feedstock::io::Compression;
use feedstock::Kind;
use proptest::prelude::*;

const FILE: &str = "damaged.tfrecord";

/// Records of varied lengths, each different from the others.
fn originals() -> Vec<Vec<u8>> {
    (0..8u8)
        .map(|i| {
            let len = [5usize, 40, 0, 7, 300, 1, 64, 9][i as usize];
            (0..len).map(|j| i.wrapping_mul(31) ^ j as u8).collect()
        })
        .collect()
}

/// The offset of each record's header, plus the end of the stream.
fn offsets(records: &[Vec<u8>]) -> Vec<u64> {
    let mut out = vec![0];
    for r in records {
        out.push(out.last().unwrap() + framed_len(r.len() as u64));
    }
    out
}

fn stream(records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records {
        encode_record(r, &mut out);
    }
    out
}

fn compress(c: Compression, plain: &[u8]) -> Vec<u8> {
    let level = flate2::Compression::default();
    match c {
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
        _ => plain.to_vec(),
    }
}

struct OneByte<R>(R);

impl<R: Read> Read for OneByte<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(1);
        self.0.read(&mut buf[..n])
    }
}

/// What one reading produced: records (data, offset), skips (offset,
/// len), and the error that ended it, if any.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    records: Vec<(Vec<u8>, u64)>,
    skips: Vec<(u64, u64)>,
    error: Option<feedstock::Error>,
}

fn drain(
    it: impl Iterator<Item = feedstock::Result<feedstock::io::tfrecord::Record>>,
    log: &SkipLog,
) -> Outcome {
    let mut records = Vec::new();
    let mut error = None;
    for r in it {
        match r {
            Ok(r) => records.push((r.value.to_vec(), r.position.offset)),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let stats = log.stats();
    let skips = stats
        .file(FILE)
        .map(|f| f.regions.iter().map(|r| (r.offset, r.len)).collect())
        .unwrap_or_default();
    Outcome {
        records,
        skips,
        error,
    }
}

fn builder(c: Compression, budget: SkipBudget) -> ReaderBuilder {
    let mut b = ReaderBuilder::new();
    b.compression(c)
        .file_name(FILE)
        .corrupt_records(CorruptRecords::Skip(budget))
        .skip_log(SkipLog::new());
    b
}

/// Records, as every reader yields them.
type Records = Box<
    dyn Iterator<Item = feedstock::Result<feedstock::io::tfrecord::Record>>,
>;

/// Makes one kind of reader from a builder.
type MakeReader<'a> = dyn Fn(&ReaderBuilder) -> Records + 'a;

/// Reads `file` every way with `budget`; checks they agree.
fn read_every_way(file: &[u8], c: Compression, budget: SkipBudget) -> Outcome {
    read_every_way_knowing(file, c, budget, None)
}

/// As [`read_every_way`], the readers told where records start (as a
/// record index of the file before its damage says).
fn read_every_way_knowing(
    file: &[u8],
    c: Compression,
    budget: SkipBudget,
    starts: Option<Arc<[u64]>>,
) -> Outcome {
    let run = |make: &MakeReader<'_>| {
        let mut b = builder(c, budget);
        b.record_starts(starts.clone());
        drain(make(&b), b.get_skip_log())
    };
    let whole = run(&|b| Box::new(b.from_bytes(Bytes::copy_from_slice(file))));
    let owned = file.to_vec();
    let stream =
        run(&|b| Box::new(b.from_reader(std::io::Cursor::new(owned.clone()))));
    let trickle = run(&|b| {
        Box::new(
            b.clone()
                .buffer_capacity(1)
                .from_reader(OneByte(std::io::Cursor::new(owned.clone()))),
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.tfrecord");
    std::fs::write(&path, file).unwrap();
    let opened = run(&|b| Box::new(b.open(&path).unwrap()));
    assert_eq!(whole, stream, "in-memory vs streaming ({c})");
    assert_eq!(whole, trickle, "in-memory vs one byte at a time ({c})");
    assert_eq!(whole, opened, "in-memory vs opened by path ({c})");
    whole
}

/// A damage to the uncompressed stream, and what it must cause.
struct Case {
    name: &'static str,
    damage: fn(&mut Vec<u8>, &[u64]),
    /// The indices of the records that stay intact.
    kept: Vec<usize>,
    /// The skipped regions, from the clean offsets.
    skips: fn(&[u64]) -> Vec<(u64, u64)>,
    /// The offset of each kept record in the damaged stream.
    shift: fn(usize, &[u64]) -> i64,
}

fn all_but(lost: &[usize]) -> Vec<usize> {
    (0..8).filter(|i| !lost.contains(i)).collect()
}

/// A 12-byte header that checks, claiming `len` bytes of data.
fn header(len: u64) -> Vec<u8> {
    let l = len.to_le_bytes();
    let mut h = l.to_vec();
    h.extend_from_slice(&masked_crc32c(&l).to_le_bytes());
    h
}

fn cases() -> Vec<Case> {
    let no_shift: fn(usize, &[u64]) -> i64 = |_, _| 0;
    vec![
        Case {
            name: "flipped bit in a length",
            damage: |s, o| s[o[3] as usize + 2] ^= 0x10,
            kept: all_but(&[3]),
            skips: |o| vec![(o[3], o[4] - o[3])],
            shift: no_shift,
        },
        Case {
            name: "flipped bit in a length CRC",
            damage: |s, o| s[o[1] as usize + 9] ^= 0x01,
            kept: all_but(&[1]),
            skips: |o| vec![(o[1], o[2] - o[1])],
            shift: no_shift,
        },
        Case {
            name: "flipped bit in a payload",
            damage: |s, o| s[o[4] as usize + 12 + 150] ^= 0x80,
            kept: all_but(&[4]),
            skips: |o| vec![(o[4], o[5] - o[4])],
            shift: no_shift,
        },
        Case {
            name: "flipped bit in a data CRC",
            damage: |s, o| s[o[6] as usize - 1] ^= 0x02,
            kept: all_but(&[5]),
            skips: |o| vec![(o[5], o[6] - o[5])],
            shift: no_shift,
        },
        Case {
            name: "the first record damaged",
            damage: |s, _| s[0] ^= 0xff,
            kept: all_but(&[0]),
            skips: |o| vec![(0, o[1])],
            shift: no_shift,
        },
        Case {
            name: "two damaged records in a row make one region",
            damage: |s, o| {
                s[o[1] as usize + 12] ^= 1;
                s[o[2] as usize + 3] ^= 1;
            },
            kept: all_but(&[1, 2]),
            skips: |o| vec![(o[1], o[3] - o[1])],
            shift: no_shift,
        },
        Case {
            name: "adjacent records with bad data are one region each",
            damage: |s, o| {
                s[o[4] as usize + 12] ^= 1;
                s[o[5] as usize + 12] ^= 1;
            },
            kept: all_but(&[4, 5]),
            skips: |o| vec![(o[4], o[5] - o[4]), (o[5], o[6] - o[5])],
            shift: |_, _| 0,
        },
        Case {
            name: "two damaged records apart make two regions",
            damage: |s, o| {
                s[o[1] as usize + 12] ^= 1;
                s[o[6] as usize + 12] ^= 1;
            },
            kept: all_but(&[1, 6]),
            skips: |o| vec![(o[1], o[2] - o[1]), (o[6], o[7] - o[6])],
            shift: no_shift,
        },
        Case {
            name: "cut inside the last header",
            damage: |s, o| s.truncate(o[7] as usize + 5),
            kept: all_but(&[7]),
            skips: |o| vec![(o[7], 5)],
            shift: no_shift,
        },
        Case {
            name: "cut inside the last payload",
            damage: |s, o| s.truncate(o[7] as usize + 14),
            kept: all_but(&[7]),
            skips: |o| vec![(o[7], 14)],
            shift: no_shift,
        },
        Case {
            name: "cut inside the last footer",
            damage: |s, o| s.truncate(o[8] as usize - 2),
            kept: all_but(&[7]),
            skips: |o| vec![(o[7], o[8] - o[7] - 2)],
            shift: no_shift,
        },
        Case {
            name: "stray bytes after the last record",
            damage: |s, _| s.extend_from_slice(b"stray"),
            kept: all_but(&[]),
            skips: |o| vec![(o[8], 5)],
            shift: no_shift,
        },
        Case {
            name: "garbage inserted between records",
            damage: |s, o| {
                let at = o[4] as usize;
                let junk: Vec<u8> =
                    (0..100u8).map(|i| i.wrapping_mul(7)).collect();
                s.splice(at..at, junk);
            },
            kept: all_but(&[]),
            skips: |o| vec![(o[4], 100)],
            shift: |i, _| if i >= 4 { 100 } else { 0 },
        },
        Case {
            name: "garbage inserted inside a payload",
            damage: |s, o| {
                let at = o[4] as usize + 12 + 10;
                s.splice(at..at, [0xeeu8; 33]);
            },
            kept: all_but(&[4]),
            skips: |o| vec![(o[4], o[5] - o[4] + 33)],
            shift: |i, _| if i > 4 { 33 } else { 0 },
        },
        Case {
            name: "a record cut short in the middle of the file",
            damage: |s, o| {
                // Record 4 keeps its header and 20 bytes; record 5
                // follows at once.
                s.drain(o[4] as usize + 32..o[5] as usize);
            },
            kept: all_but(&[4]),
            skips: |o| vec![(o[4], 32)],
            shift: |i, o| {
                if i > 4 {
                    32 - (o[5] - o[4]) as i64
                } else {
                    0
                }
            },
        },
    ]
}

fn check_case(case: &Case, c: Compression) {
    let recs = originals();
    let o = offsets(&recs);
    let mut plain = stream(&recs);
    (case.damage)(&mut plain, &o);
    let file = compress(c, &plain);
    let out = read_every_way(&file, c, SkipBudget::new());
    assert!(out.error.is_none(), "{} ({c}): {:?}", case.name, out.error);
    let want: Vec<(Vec<u8>, u64)> = case
        .kept
        .iter()
        .map(|&i| {
            let at = o[i] as i64 + (case.shift)(i, &o);
            (recs[i].clone(), at as u64)
        })
        .collect();
    assert_eq!(out.records, want, "{} ({c})", case.name);
    assert_eq!(out.skips, (case.skips)(&o), "{} ({c})", case.name);
}

#[test]
fn every_intact_record_is_delivered_once_and_every_skip_counted() {
    for case in cases() {
        for c in [Compression::None, Compression::Gzip, Compression::Zlib] {
            check_case(&case, c);
        }
    }
}

#[test]
fn the_default_policy_still_fails_at_the_first_damage() {
    let recs = originals();
    let o = offsets(&recs);
    let mut plain = stream(&recs);
    plain[o[3] as usize + 12] ^= 1;
    let mut b = ReaderBuilder::new();
    b.file_name(FILE);
    let got: Vec<_> = b.from_reader(&plain[..]).collect();
    assert_eq!(got.len(), 4);
    let e = got[3].clone().unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss);
    assert_eq!(e.offset(), Some(o[3]));
    assert_eq!(e.file(), Some(FILE));
    assert_eq!(b.get_skip_log().skipped(), 0);
}

#[test]
fn a_fake_header_inside_a_payload_is_not_taken_for_a_record() {
    // Record 1's payload holds a header that checks, claiming 8 bytes,
    // followed by 8 bytes and a footer whose CRC does not match.
    let mut inner = header(8);
    inner.extend_from_slice(b"12345678");
    inner.extend_from_slice(&[0; 4]);
    inner.extend_from_slice(b"tail");
    let recs = vec![b"zero".to_vec(), inner.clone(), b"two".to_vec()];
    let o = offsets(&recs);
    // Intact, the record reads as itself.
    let out =
        read_every_way(&stream(&recs), Compression::None, SkipBudget::new());
    assert_eq!(out.records.len(), 3);
    assert_eq!(out.records[1].0, inner);
    // Damaged (its data CRC flipped), the scan meets the fake header
    // first and must pass over it to record 2.
    let mut s = stream(&recs);
    s[o[2] as usize - 1] ^= 1;
    let out = read_every_way(&s, Compression::None, SkipBudget::new());
    let data: Vec<_> = out.records.iter().map(|r| r.0.clone()).collect();
    assert_eq!(data, vec![b"zero".to_vec(), b"two".to_vec()]);
    assert_eq!(out.skips, vec![(o[1], o[2] - o[1])]);
}

/// The frame of `data`, as a writer writes it.
fn frame(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_record(data, &mut out);
    out
}

/// The data of each record of an outcome.
fn data_of(out: &Outcome) -> Vec<Vec<u8>> {
    out.records.iter().map(|r| r.0.clone()).collect()
}

#[test]
fn a_frame_nested_in_a_damaged_payload_is_not_taken_for_a_record() {
    // Record 1's payload holds a whole valid frame: at its start, in its
    // middle, at its end. Record 1's header is damaged, so the scan
    // meets the inner frame; what follows the inner frame (more of the
    // payload, or record 1's footer) is not a frame, so the scan passes
    // over it to record 2.
    let inner = frame(b"an inner record, never written as one");
    let placements: [(&str, Vec<u8>); 3] = [
        ("at the start", [&inner[..], b"after it, no frame"].concat()),
        (
            "in the middle",
            [&b"before"[..], &inner, b"after it, no frame"].concat(),
        ),
        ("at the end", [&b"before it, no frame"[..], &inner].concat()),
    ];
    for (where_, payload) in placements {
        let recs = vec![
            b"zero".to_vec(),
            payload,
            b"two".to_vec(),
            b"three".to_vec(),
        ];
        let o = offsets(&recs);
        for damage in [2, 9] {
            // A bit of the length, then of the length CRC.
            let mut s = stream(&recs);
            s[o[1] as usize + damage] ^= 0x04;
            for c in [Compression::None, Compression::Gzip, Compression::Zlib]
            {
                let out =
                    read_every_way(&compress(c, &s), c, SkipBudget::new());
                assert!(out.error.is_none(), "{where_} ({c}): {out:?}");
                assert_eq!(
                    data_of(&out),
                    [&b"zero"[..], b"two", b"three"],
                    "{where_}, byte {damage} ({c})"
                );
                assert_eq!(
                    out.skips,
                    [(o[1], o[2] - o[1])],
                    "{where_}, byte {damage} ({c})"
                );
            }
        }
    }
}

/// Records 0 to 3, record 1's payload holding two whole valid frames
/// followed by bytes that are not one, and record 1's length damaged:
/// the damaged stream, the clean offsets and the inner frames' data.
fn two_nested_frames() -> (Vec<u8>, Vec<u64>, [Vec<u8>; 2]) {
    let inner = [b"inner one".to_vec(), b"inner two".to_vec()];
    let payload =
        [frame(&inner[0]), frame(&inner[1]), b"no frame".to_vec()].concat();
    let recs = vec![
        b"zero".to_vec(),
        payload,
        b"two".to_vec(),
        b"three".to_vec(),
    ];
    let o = offsets(&recs);
    let mut s = stream(&recs);
    s[o[1] as usize + 2] ^= 0x04;
    (s, o, inner)
}

#[test]
fn two_frames_nested_in_a_damaged_payload_pass_for_records_without_an_index() {
    // The limit of the rule, as docs/corrupt-records.md states it: the first inner
    // frame is followed by a frame that checks (the second), so the scan
    // takes it; the frames after it are decoded as records. Both inner
    // frames are delivered: nothing in the stream tells them from
    // records. The bytes around them are skipped.
    let (s, o, inner) = two_nested_frames();
    let out = read_every_way(&s, Compression::None, SkipBudget::new());
    assert!(out.error.is_none(), "{out:?}");
    let want = [
        b"zero".to_vec(),
        inner[0].clone(),
        inner[1].clone(),
        b"two".to_vec(),
        b"three".to_vec(),
    ];
    assert_eq!(data_of(&out), want);
    let after_inner = o[1] + 12 + framed_len(9) * 2;
    assert_eq!(out.skips, [(o[1], 12), (after_inner, o[2] - after_inner)]);
}

#[test]
fn with_the_record_starts_of_an_index_a_resync_is_exact() {
    // With the offsets where records start (a record index of the file,
    // taken before the damage), the scan resumes only at one of them:
    // the nested frames are skipped with their record.
    let (s, o, _) = two_nested_frames();
    let starts: Arc<[u64]> = o.clone().into();
    for c in [Compression::None, Compression::Gzip, Compression::Zlib] {
        let out = read_every_way_knowing(
            &compress(c, &s),
            c,
            SkipBudget::new(),
            Some(starts.clone()),
        );
        assert!(out.error.is_none(), "{c}: {out:?}");
        assert_eq!(data_of(&out), [&b"zero"[..], b"two", b"three"], "{c}");
        assert_eq!(out.skips, [(o[1], o[2] - o[1])], "{c}");
    }
    // Every case of the table agrees with the index too.
    for case in cases() {
        let recs = originals();
        let o = offsets(&recs);
        let mut plain = stream(&recs);
        (case.damage)(&mut plain, &o);
        if (0..8).any(|i| (case.shift)(i, &o) != 0) {
            // Bytes inserted or lost: the index no longer describes the
            // records after them (which then are skipped).
            continue;
        }
        let known = read_every_way_knowing(
            &plain,
            Compression::None,
            SkipBudget::new(),
            Some(o.clone().into()),
        );
        let unknown =
            read_every_way(&plain, Compression::None, SkipBudget::new());
        assert_eq!(known, unknown, "{}", case.name);
    }
}

#[test]
fn a_fake_header_claiming_more_than_the_file_is_not_a_header() {
    // Garbage holding a header that checks and claims 1 MiB: a reader
    // that knows the stream's length rejects it at once, one that does
    // not reads to the end; both go on at the next record.
    let recs = originals();
    let o = offsets(&recs);
    let mut s = stream(&recs);
    let mut junk = vec![0xaa; 3];
    junk.extend(header(1 << 20));
    junk.extend_from_slice(&[0x55; 20]);
    let at = o[2] as usize;
    let n = junk.len() as u64;
    s.splice(at..at, junk);
    let out = read_every_way(&s, Compression::None, SkipBudget::new());
    assert_eq!(out.records.len(), 8);
    assert_eq!(out.skips, vec![(o[2], n)]);
}

#[test]
fn a_length_above_the_limit_is_skipped_as_damage() {
    let recs = originals();
    let o = offsets(&recs);
    let s = stream(&recs);
    let mut b = builder(Compression::None, SkipBudget::new());
    b.max_record_len(100);
    let got: Vec<_> = b.from_reader(&s[..]).collect::<Result<_, _>>().unwrap();
    assert_eq!(got.len(), 7);
    let stats = b.get_skip_log().stats();
    let r = &stats.files[0].regions;
    assert_eq!((r[0].offset, r[0].len), (o[4], o[5] - o[4]));
}

/// Damages records 1, 3 and 5 of the clean stream.
fn three_damaged() -> (Vec<u8>, Vec<u64>) {
    let recs = originals();
    let o = offsets(&recs);
    let mut s = stream(&recs);
    for i in [1, 3, 5] {
        s[o[i] as usize + 12] ^= 1;
    }
    (s, o)
}

#[test]
fn the_per_file_budget_fails_at_the_skip_past_it() {
    let (s, o) = three_damaged();
    let out = read_every_way(
        &s,
        Compression::None,
        SkipBudget::new().max_per_file(2),
    );
    // Records 0, 2 and 4 are read; the third skip fails.
    assert_eq!(out.records.len(), 3);
    let e = out.error.unwrap();
    assert_eq!(e.kind(), Kind::DataLoss);
    assert_eq!(e.file(), Some(FILE));
    assert_eq!(e.offset(), Some(o[5]));
    let m = e.message();
    assert!(m.contains("max_per_file = 2"), "{m}");
    for i in [1, 3, 5] {
        assert!(
            m.contains(&format!("{} ({} bytes)", o[i], o[i + 1] - o[i])),
            "{m}"
        );
    }
    // Within the budget, nothing fails.
    let out = read_every_way(
        &s,
        Compression::None,
        SkipBudget::new().max_per_file(3),
    );
    assert!(out.error.is_none());
    assert_eq!(out.records.len(), 5);
    assert_eq!(out.skips.len(), 3);
}

#[test]
fn the_fraction_budget_is_checked_at_the_end_of_the_file() {
    // 3 of 8 records lost: 37.5%.
    let (s, _) = three_damaged();
    let out = read_every_way(
        &s,
        Compression::None,
        SkipBudget::new().max_fraction(0.3),
    );
    // Every intact record came first; then the end fails.
    assert_eq!(out.records.len(), 5);
    let e = out.error.unwrap();
    assert_eq!(e.kind(), Kind::DataLoss);
    assert!(e.message().contains("3 of 8 records"), "{e}");
    assert!(e.message().contains("max_fraction = 0.3"), "{e}");
    let out = read_every_way(
        &s,
        Compression::None,
        SkipBudget::new().max_fraction(0.375),
    );
    assert!(out.error.is_none(), "{:?}", out.error);
}

#[test]
fn the_per_run_budget_counts_every_file_read_with_one_log() {
    let (s, o) = three_damaged();
    let log = SkipLog::new();
    let mut b = ReaderBuilder::new();
    b.corrupt_records(CorruptRecords::Skip(SkipBudget::new().max_per_run(4)))
        .skip_log(log.clone());
    b.file_name("a");
    let first: Vec<_> = b.from_reader(&s[..]).collect();
    assert!(first.iter().all(Result::is_ok));
    b.file_name("b");
    let second: Vec<_> = b.from_reader(&s[..]).collect();
    // One more skip fits the run's budget; the second does not.
    assert_eq!(second.len(), 3);
    let e = second[2].clone().unwrap_err();
    assert!(e.message().contains("max_per_run = 4"), "{e}");
    assert_eq!(e.file(), Some("b"));
    assert_eq!(e.offset(), Some(o[3]));
    let stats = log.stats();
    assert_eq!(stats.skipped, 5);
    assert_eq!(stats.file("a").unwrap().skipped, 3);
    assert_eq!(stats.file("b").unwrap().skipped, 2);
    let bytes: u64 = [1, 3, 5].iter().map(|&i| o[i + 1] - o[i]).sum();
    assert_eq!(stats.file("a").unwrap().skipped_bytes, bytes);
}

#[test]
fn a_broken_compressed_stream_is_one_skip_to_the_end() {
    let recs = originals();
    let plain = stream(&recs);
    for c in [Compression::Gzip, Compression::Zlib] {
        let full = compress(c, &plain);
        // Cut the trailer: every record is there, the stream is not whole.
        let cut = &full[..full.len() - 3];
        let out = read_every_way(cut, c, SkipBudget::new());
        assert!(out.error.is_none(), "{c}: {:?}", out.error);
        assert_eq!(out.records.len(), 8, "{c}");
        let end = offsets(&recs)[8];
        assert_eq!(out.skips, vec![(end, 0)], "{c}");
        // Cut in the middle: a prefix of the records, then one skip.
        let cut = &full[..full.len() / 2];
        let b = builder(c, SkipBudget::new());
        let got: Vec<_> =
            b.from_reader(cut).collect::<Result<Vec<_>, _>>().unwrap();
        for (r, orig) in got.iter().zip(&recs) {
            assert_eq!(&r.value[..], &orig[..]);
        }
        let stats = b.get_skip_log().stats();
        assert_eq!(stats.skipped, 1, "{c}");
        assert!(stats.files[0].regions[0].unreadable_rest, "{c}");
        // Under the default policy, the same cut is an error.
        let mut strict = ReaderBuilder::new();
        strict.compression(c);
        let e = strict.from_reader(cut).find_map(Result::err).unwrap();
        assert_eq!(e.kind(), Kind::DataLoss);
    }
}

/// Whether `sub` is a subsequence of `all`.
fn is_subsequence(sub: &[Vec<u8>], all: &[Vec<u8>]) -> bool {
    let mut it = all.iter();
    sub.iter().all(|s| it.any(|a| a == s))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        if cfg!(miri) { 4 } else { 200 }
    ))]

    /// Random records, random bits flipped, maybe a cut at the end: the
    /// records delivered are exactly the untouched ones, in order, but
    /// for an untouched one met by the scan whose next record is not
    /// untouched and whole (a frame found by the scan is taken only when
    /// the frame after it checks too, or it ends the stream); the
    /// skipped regions are the runs of damaged records, a record hit
    /// only in its data ending its run when the next header is intact.
    #[test]
    fn flipped_bits_cost_exactly_the_damaged_records(
        recs in prop::collection::vec(
            prop::collection::vec(any::<u8>(), 0..200), 1..12),
        flips in prop::collection::vec((any::<prop::sample::Index>(), 0u8..8), 0..6),
        cut in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let o = offsets(&recs);
        let mut s = stream(&recs);
        let mut hit = vec![false; recs.len()];
        let mut header_hit = vec![false; recs.len()];
        let record_at = |at: u64| o.iter().rposition(|&x| x <= at).unwrap();
        let original = s.clone();
        for (i, bit) in &flips {
            let at = i.index(s.len());
            s[at] ^= 1 << bit;
        }
        // Judge the damage by the bytes that differ: the same bit
        // flipped twice is no damage at all.
        for at in (0..s.len()).filter(|&at| s[at] != original[at]) {
            let k = record_at(at as u64);
            hit[k] = true;
            header_hit[k] |= (at as u64) < o[k] + 12;
        }
        let mut end = s.len() as u64;
        if let Some(c) = cut {
            end = c.index(s.len()) as u64;
            s.truncate(end as usize);
        }
        // A record survives when untouched and whole before the cut.
        let mut want = Vec::new();
        let mut skips = Vec::new();
        let mut open: Option<u64> = None;
        for (k, r) in recs.iter().enumerate() {
            let whole = o[k + 1] <= end;
            // A record a scan meets (a region is open) is taken only
            // when the next record is untouched and whole too, or it
            // ends the stream.
            let next_sound = o[k + 1] == end
                || (k + 1 < recs.len() && !hit[k + 1] && o[k + 2] <= end);
            if !hit[k] && whole && (open.is_none() || next_sound) {
                if let Some(start) = open.take() {
                    skips.push((start, o[k] - start));
                }
                want.push((r.clone(), o[k]));
            } else if o[k] < end {
                // Decoded from its own header (not met by a scan), only
                // its data was hit, it is whole, and a header that checks
                // (or the end) follows it: the region ends with it.
                let fresh = open.is_none();
                let start = *open.get_or_insert(o[k]);
                let next_ok = o[k + 1] == end
                    || (k + 1 < recs.len()
                        && !header_hit[k + 1]
                        && o[k + 1] + 12 <= end);
                if fresh && !header_hit[k] && o[k + 1] <= end && next_ok {
                    skips.push((start, o[k + 1] - start));
                    open = None;
                }
            }
        }
        if let Some(start) = open {
            skips.push((start, end - start));
        }
        let out = read_every_way(&s, Compression::None, SkipBudget::new());
        prop_assert!(out.error.is_none());
        prop_assert_eq!(&out.records, &want);
        prop_assert_eq!(&out.skips, &skips);
    }

    /// Random damage of any kind (flips, inserted and deleted bytes) in
    /// plain and compressed files: never an error under an unlimited
    /// budget, never a panic, and every record delivered is one of the
    /// originals. When the damage was done before compression, they are
    /// a subsequence of the originals: none altered, none twice, in
    /// order. Damage to the compressed bytes can make inflate repeat
    /// earlier output (a back-reference into good data), which may hold
    /// a whole valid frame: a streaming reader cannot tell such a copy
    /// from a record before the stream's trailer check fails, so there
    /// only "none altered" is promised (strict readers, TensorFlow's
    /// included, hand out such copies too).
    #[test]
    fn random_damage_delivers_a_subsequence_of_the_originals(
        recs in prop::collection::vec(
            prop::collection::vec(any::<u8>(), 0..100), 1..10),
        edits in prop::collection::vec(
            (any::<prop::sample::Index>(), 0u8..3, any::<u8>()), 1..5),
        comp in 0usize..3,
        on_compressed in any::<bool>(),
    ) {
        let c = [Compression::None, Compression::Gzip, Compression::Zlib][comp];
        let plain = stream(&recs);
        let mut file = if on_compressed { compress(c, &plain) } else { plain };
        for (i, op, byte) in &edits {
            if file.is_empty() {
                break;
            }
            let at = i.index(file.len());
            match op {
                0 => file[at] ^= byte | 1,
                1 => file.insert(at, *byte),
                _ => {
                    file.remove(at);
                }
            }
        }
        if !on_compressed {
            file = compress(c, &file);
        }
        let out = read_every_way(&file, c, SkipBudget::new());
        prop_assert!(out.error.is_none(), "{:?}", out.error);
        let got: Vec<Vec<u8>> =
            out.records.into_iter().map(|r| r.0).collect();
        if on_compressed && c != Compression::None {
            prop_assert!(got.iter().all(|r| recs.contains(r)));
        } else {
            prop_assert!(is_subsequence(&got, &recs));
        }
    }
}
