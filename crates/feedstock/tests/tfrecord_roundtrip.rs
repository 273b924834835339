//! What feedstock writes it reads back identically, through every reader
//! and compression, and a reader can resume at a saved position.

use std::io::Cursor;

use bytes::Bytes;
use feedstock::io::tfrecord::{
    framed_len, Position, Reader, ReaderBuilder, Record, WriterBuilder,
};
use feedstock::io::Compression;
use feedstock::Kind;
use proptest::prelude::*;

const ALL: [Compression; 3] =
    [Compression::None, Compression::Gzip, Compression::Zlib];

fn write(c: Compression, records: &[Vec<u8>]) -> Vec<u8> {
    let mut w = WriterBuilder::new().compression(c).from_writer(Vec::new());
    for r in records {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap()
}

fn collect(
    it: impl Iterator<Item = feedstock::Result<Record>>,
) -> Vec<Record> {
    it.collect::<Result<_, _>>().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn written_records_read_back_identically(
        records in prop::collection::vec(
            prop::collection::vec(any::<u8>(), 0..600),
            0..12,
        ),
        chunk in 1usize..64,
    ) {
        for c in ALL {
            let file = write(c, &records);
            let mut b = ReaderBuilder::new();
            b.compression(c);
            let streamed = collect(b.from_reader(&file[..]));
            let small = collect(
                b.clone().buffer_capacity(chunk).from_reader(&file[..]),
            );
            let in_memory = collect(b.from_bytes(Bytes::from(file)));
            prop_assert_eq!(&streamed, &in_memory);
            prop_assert_eq!(&streamed, &small);
            let data: Vec<Vec<u8>> =
                streamed.iter().map(|r| r.value.to_vec()).collect();
            prop_assert_eq!(&data, &records);
            let mut offset = 0;
            for (i, r) in streamed.iter().enumerate() {
                prop_assert_eq!(r.position.index, i as u64);
                prop_assert_eq!(r.position.offset, offset);
                offset += framed_len(r.value.len() as u64);
            }
        }
    }
}

fn sample() -> Vec<Vec<u8>> {
    (0..10u8).map(|i| vec![i; 10 * i as usize + 1]).collect()
}

#[test]
fn resuming_at_a_saved_position_reads_exactly_the_rest() {
    let records = sample();
    for c in ALL {
        let file = write(c, &records);
        for k in 0..=records.len() {
            let mut b = ReaderBuilder::new();
            b.compression(c);
            let mut first = b.from_reader(&file[..]);
            for _ in 0..k {
                first.read_record().unwrap().unwrap();
            }
            let saved = first.next_position();
            let rest = collect(
                b.from_reader_at(Cursor::new(&file[..]), saved).unwrap(),
            );
            let data: Vec<Vec<u8>> =
                rest.iter().map(|r| r.value.to_vec()).collect();
            assert_eq!(data, records[k..], "{c} resumed at {k}");
            if let Some(r) = rest.first() {
                assert_eq!(r.position, saved, "{c}");
            }
        }
    }
}

#[test]
fn resuming_a_file_by_path_reads_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let records = sample();
    for (name, c) in [("a.tfrecord", None), ("b.tfrecord.gz", Some(()))] {
        let path = dir.path().join(name);
        let mut w = WriterBuilder::new().create(&path).unwrap();
        for r in &records {
            w.write_record(r).unwrap();
        }
        w.finish().unwrap();
        let all = collect(ReaderBuilder::new().open(&path).unwrap());
        assert_eq!(all.len(), records.len());
        let at = all[4].position;
        let rest = collect(ReaderBuilder::new().open_at(&path, at).unwrap());
        assert_eq!(rest, all[4..], "{name} (compressed: {c:?})");
    }
    // The .gz file really is gzip.
    let gz = std::fs::read(dir.path().join("b.tfrecord.gz")).unwrap();
    assert_eq!(&gz[..2], &[0x1f, 0x8b]);
}

#[test]
fn resuming_a_compressed_stream_at_a_wrong_offset_is_refused() {
    let records = sample();
    for c in [Compression::Gzip, Compression::Zlib] {
        let file = write(c, &records);
        let mut b = ReaderBuilder::new();
        b.compression(c).file_name("f.gz");
        let wrong = Position {
            offset: 5,
            index: 2,
        };
        let err = b.from_reader_at(Cursor::new(&file[..]), wrong).unwrap_err();
        assert_eq!(err.kind(), Kind::InvalidArgument, "{err}");
        assert_eq!(err.file(), Some("f.gz"));
        let beyond = Position {
            offset: 0,
            index: 99,
        };
        let err = b
            .from_reader_at(Cursor::new(&file[..]), beyond)
            .unwrap_err();
        assert_eq!(err.kind(), Kind::InvalidArgument, "{err}");
    }
}

#[test]
fn writer_position_tracks_the_uncompressed_stream() {
    for c in ALL {
        let mut w =
            WriterBuilder::new().compression(c).from_writer(Vec::new());
        w.write_record(b"abc").unwrap();
        w.write_record(b"").unwrap();
        let pos = w.position();
        assert_eq!(pos.index, 2);
        assert_eq!(pos.offset, framed_len(3) + framed_len(0));
        let file = w.finish().unwrap();
        let mut r = ReaderBuilder::new().compression(c).from_reader(&file[..]);
        while r.read_record().unwrap().is_some() {}
        assert_eq!(r.next_position(), pos, "{c}");
    }
}

#[test]
fn flushed_compressed_output_is_readable_before_finish() {
    for c in [Compression::Gzip, Compression::Zlib] {
        let mut w =
            WriterBuilder::new().compression(c).from_writer(Vec::new());
        w.write_record(b"early").unwrap();
        w.flush().unwrap();
        // What reached the sink so far holds the whole record; the stream
        // itself is (correctly) reported as cut short after it.
        let so_far = w.get_ref().clone();
        let mut r: Reader<&[u8]> =
            ReaderBuilder::new().compression(c).from_reader(&so_far[..]);
        assert_eq!(&r.read_record().unwrap().unwrap().value[..], b"early");
        let err = r.read_record().unwrap_err();
        assert_eq!(err.kind(), Kind::DataLoss, "{c}: {err}");
        let file = w.finish().unwrap();
        let mut r = ReaderBuilder::new().compression(c).from_reader(&file[..]);
        assert_eq!(&r.read_record().unwrap().unwrap().value[..], b"early");
        assert!(r.read_record().unwrap().is_none());
    }
}
