//! Saved state that is loaded back is sealed and checked: a stream
//! checkpoint, a reader's state and a producer's state that are truncated
//! or have any one bit flipped are refused (never accepted, never a
//! panic), and forged ones (the checksum recomputed, a field out of range
//! for the pipeline they are loaded into) are refused with a message
//! naming the field.

use std::path::Path;

use feedstock::coord::Pipeline;
use feedstock::input::stream::{Checkpoint, Order, RecordStreamBuilder};
use feedstock::input::RecordStream;
use feedstock::input::{range_input_producer, ProducerState};
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::queue::Queue;
use feedstock::reader::{Reader, TfRecordReader, WorkQueue};
use feedstock::{Error, Kind};

/// Two uncompressed files of 300 and 200 records.
fn files(dir: &Path) -> Vec<String> {
    [("a.tfrecord", 300), ("b.tfrecord", 200)]
        .into_iter()
        .map(|(name, n)| {
            let path = dir.join(name);
            let mut w = WriterBuilder::new()
                .from_writer(std::fs::File::create(&path).unwrap());
            for i in 0..n {
                w.write_record(format!("{name}-{i}").as_bytes()).unwrap();
            }
            w.finish().unwrap();
            path.to_str().unwrap().to_owned()
        })
        .collect()
}

/// Two epochs of 500 records through a buffer of 40, blocks of 32: 32
/// blocks in all.
fn stream_builder(files: &[String]) -> RecordStreamBuilder {
    let mut b = RecordStream::builder(files.to_vec());
    b.order(Order::Buffer(40))
        .seed(3)
        .num_epochs(2)
        .block_size(32);
    b
}

/// A checkpoint after 150 records: 6 blocks taken (192 records), 39
/// records in the buffer and 3 left of the last block.
fn stream_checkpoint(b: &RecordStreamBuilder) -> Vec<u8> {
    let mut stream = b.build().unwrap();
    assert_eq!(stream.next_batch(150).unwrap().len(), 150);
    stream.checkpoint().to_bytes()
}

/// Whether `bytes` are refused as a checkpoint of `b`'s stream: by
/// `from_bytes` or by `build`.
fn stream_refuses(b: &RecordStreamBuilder, bytes: &[u8]) -> Option<Error> {
    match Checkpoint::from_bytes(bytes) {
        Err(e) => Some(e),
        Ok(cp) => b.clone().restore(cp).build().err(),
    }
}

/// Every prefix and every one-bit flip of `good`, each of which
/// `refused` must refuse with InvalidArgument; returns the ones it does
/// not, as a message.
fn sweep(
    good: &[u8],
    mut refused: impl FnMut(&[u8]) -> Option<Error>,
) -> Vec<String> {
    let mut bad = Vec::new();
    let mut judge = |what: String, bytes: &[u8]| match refused(bytes) {
        None => bad.push(format!("{what}: accepted")),
        Some(e) if e.kind() != Kind::InvalidArgument => {
            bad.push(format!("{what}: refused as {:?}: {e}", e.kind()))
        }
        Some(_) => {}
    };
    for len in 0..good.len() {
        judge(format!("cut at byte {len}"), &good[..len]);
    }
    for bit in 0..good.len() * 8 {
        let mut b = good.to_vec();
        b[bit / 8] ^= 1 << (bit % 8);
        judge(format!("bit {bit} flipped"), &b);
    }
    bad
}

fn report(what: &str, good: &[u8], bad: &[String]) -> String {
    let cuts = bad.iter().filter(|b| b.starts_with("cut")).count();
    format!(
        "{what}: {cuts} of {} truncations and {} of {} bit flips not \
         refused; first: {:?}",
        good.len(),
        bad.len() - cuts,
        good.len() * 8,
        &bad[..bad.len().min(5)]
    )
}

#[test]
fn every_truncation_and_bit_flip_of_a_stream_checkpoint_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let b = stream_builder(&files);
    let good = stream_checkpoint(&b);
    assert!(stream_refuses(&b, &good).is_none(), "the good one restores");
    let bad = sweep(&good, |bytes| stream_refuses(&b, bytes));
    assert!(bad.is_empty(), "{}", report("stream", &good, &bad));
}

// --- Forged stream checkpoints: a well-formed payload, resealed. ---

/// The stream checkpoint's payload as a forger sees it (the fields of
/// `CheckpointProto`).
#[derive(Clone, PartialEq, prost::Message)]
struct StreamFields {
    #[prost(fixed64, tag = "3")]
    settings: u64,
    #[prost(uint64, tag = "4")]
    next_block: u64,
    #[prost(uint64, repeated, tag = "5")]
    ahead: Vec<u64>,
    #[prost(message, optional, tag = "6")]
    incoming: Option<RefFields>,
    #[prost(message, optional, tag = "7")]
    buffer: Option<RefFields>,
    #[prost(uint64, tag = "8")]
    rng_word_pos_lo: u64,
    #[prost(uint64, tag = "9")]
    rng_word_pos_hi: u64,
    #[prost(uint64, tag = "10")]
    delivered: u64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct RefFields {
    #[prost(uint32, repeated, tag = "1")]
    file: Vec<u32>,
    #[prost(uint64, repeated, tag = "2")]
    ordinal: Vec<u64>,
    #[prost(uint64, repeated, tag = "3")]
    epoch: Vec<u64>,
}

/// Opens sealed bytes of `kind`, as anyone can.
fn unseal(kind: &feedstock::checkpoint::Envelope, bytes: &[u8]) -> Vec<u8> {
    kind.open(bytes).unwrap().to_vec()
}

/// Seals a forged payload with a valid checksum.
fn reseal(kind: &feedstock::checkpoint::Envelope, payload: &[u8]) -> Vec<u8> {
    kind.seal(payload)
}

/// `good` with its fields changed by `f`, resealed.
fn forge_stream(good: &[u8], f: impl FnOnce(&mut StreamFields)) -> Vec<u8> {
    let kind = &feedstock::checkpoint::STREAM;
    let mut fields: StreamFields =
        prost::Message::decode(&unseal(kind, good)[..]).unwrap();
    f(&mut fields);
    reseal(kind, &prost::Message::encode_to_vec(&fields))
}

/// Notes in `fails` how `refused` (the error, if any, for a state forged
/// in `field`) falls short: accepted, or refused without naming it.
fn judge_forged(fails: &mut Vec<String>, field: &str, refused: Option<Error>) {
    match refused {
        None => fails.push(format!("forged {field}: accepted")),
        Some(e) if e.kind() != Kind::InvalidArgument => {
            fails.push(format!("forged {field}: {:?}: {e}", e.kind()))
        }
        Some(e) if !e.to_string().contains(field) => {
            fails.push(format!("forged {field}: not named in: {e}"))
        }
        Some(_) => {}
    }
}

#[test]
fn forged_stream_checkpoints_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let b = stream_builder(&files);
    let good = stream_checkpoint(&b);
    let fields: StreamFields = prost::Message::decode(
        &unseal(&feedstock::checkpoint::STREAM, &good)[..],
    )
    .unwrap();
    assert_eq!(fields.next_block, 6, "{fields:?}");
    assert_eq!(fields.delivered, 150);
    // The same fields resealed restore: the forging itself is sound.
    assert!(stream_refuses(&b, &forge_stream(&good, |_| {})).is_none());

    let mut fails = Vec::new();
    // Blocks: none taken after progress, beyond the 32 there are, one
    // taken ahead that is not ahead, or twice.
    let forged = forge_stream(&good, |f| f.next_block = 0);
    judge_forged(&mut fails, "next_block", stream_refuses(&b, &forged));
    let forged = forge_stream(&good, |f| f.next_block = 33);
    judge_forged(&mut fails, "next_block", stream_refuses(&b, &forged));
    let forged = forge_stream(&good, |f| f.next_block = u64::MAX);
    judge_forged(&mut fails, "next_block", stream_refuses(&b, &forged));
    let forged = forge_stream(&good, |f| f.ahead = vec![3]);
    judge_forged(&mut fails, "ahead", stream_refuses(&b, &forged));
    let forged = forge_stream(&good, |f| f.ahead = vec![40]);
    judge_forged(&mut fails, "ahead", stream_refuses(&b, &forged));
    let forged = forge_stream(&good, |f| f.ahead = vec![9, 9]);
    judge_forged(&mut fails, "ahead", stream_refuses(&b, &forged));
    // An epoch of 10^15 (the stream has 2), alone or with blocks to match.
    let forged = forge_stream(&good, |f| {
        f.buffer.as_mut().unwrap().epoch[0] = 1_000_000_000_000_000
    });
    judge_forged(&mut fails, "epoch", stream_refuses(&b, &forged));
    let forged = forge_stream(&good, |f| {
        f.next_block = 16 * 1_000_000_000_000_000;
        f.buffer.as_mut().unwrap().epoch.fill(1_000_000_000_000_000);
    });
    judge_forged(&mut fails, "next_block", stream_refuses(&b, &forged));
    // Records past a file's end, or of a file that is not there.
    let forged = forge_stream(&good, |f| {
        let buf = f.buffer.as_mut().unwrap();
        buf.ordinal[0] = 300 + 200;
    });
    judge_forged(&mut fails, "ordinal", stream_refuses(&b, &forged));
    let forged =
        forge_stream(&good, |f| f.buffer.as_mut().unwrap().file[0] = 2);
    judge_forged(&mut fails, "file", stream_refuses(&b, &forged));
    // Padding in a stream that drops its remainder.
    let forged =
        forge_stream(&good, |f| f.buffer.as_mut().unwrap().file[0] = u32::MAX);
    judge_forged(&mut fails, "file", stream_refuses(&b, &forged));
    // Counts: more delivered than taken, a record held twice, a record of
    // a block not taken, arrays of unequal lengths.
    let forged = forge_stream(&good, |f| f.delivered += 1);
    judge_forged(&mut fails, "delivered", stream_refuses(&b, &forged));
    let forged = forge_stream(&good, |f| f.delivered = 0);
    judge_forged(&mut fails, "delivered", stream_refuses(&b, &forged));
    let forged = forge_stream(&good, |f| {
        let buf = f.buffer.as_mut().unwrap();
        (buf.file[1], buf.ordinal[1], buf.epoch[1]) =
            (buf.file[0], buf.ordinal[0], buf.epoch[0]);
    });
    judge_forged(&mut fails, "twice", stream_refuses(&b, &forged));
    let forged = forge_stream(&good, |f| {
        // Epoch 1's records are all in blocks 16 and later.
        f.buffer.as_mut().unwrap().epoch[0] = 1;
    });
    judge_forged(&mut fails, "block", stream_refuses(&b, &forged));
    // The last record of either file is at place 299 or later of the
    // first epoch: in block 9 or later, not taken.
    for (file, last) in [(0, 299), (1, 199)] {
        let forged = forge_stream(&good, |f| {
            let buf = f.buffer.as_mut().unwrap();
            (buf.file[0], buf.ordinal[0], buf.epoch[0]) = (file, last, 0);
        });
        judge_forged(&mut fails, "not taken", stream_refuses(&b, &forged));
    }
    let forged = forge_stream(&good, |f| {
        f.buffer.as_mut().unwrap().epoch.pop();
    });
    judge_forged(&mut fails, "buffer", stream_refuses(&b, &forged));
    // More in the buffer than it holds; the rest of a block longer than a
    // block; the shuffle generator far beyond its draws.
    let forged = forge_stream(&good, |f| {
        let inc = f.incoming.take().unwrap();
        let buf = f.buffer.as_mut().unwrap();
        buf.file.extend(inc.file);
        buf.ordinal.extend(inc.ordinal);
        buf.epoch.extend(inc.epoch);
    });
    judge_forged(&mut fails, "buffer", stream_refuses(&b, &forged));
    let forged = forge_stream(&good, |f| f.rng_word_pos_hi = 1);
    judge_forged(&mut fails, "rng", stream_refuses(&b, &forged));
    assert!(fails.is_empty(), "{} forgeries: {fails:#?}", fails.len());
}

#[test]
fn a_stream_checkpoint_of_another_kind_or_version_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let b = stream_builder(&files);
    let good = stream_checkpoint(&b);
    let stream = &feedstock::checkpoint::STREAM;
    // A version-1 checkpoint (a bare protobuf, before checksums).
    let mut v1 = vec![0x0a, 27];
    v1.extend_from_slice(b"feedstock.stream.checkpoint");
    v1.extend_from_slice(&[0x10, 1, 0x20, 6]);
    let e = Checkpoint::from_bytes(&v1).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(e.to_string().contains("version 1"), "{e}");
    // A later version, sealed properly.
    let mut later = good.clone();
    later[8..12].copy_from_slice(&(stream.version() + 1).to_le_bytes());
    let later = reseal_raw(&later);
    let e = Checkpoint::from_bytes(&later).unwrap_err();
    assert!(e.to_string().contains("version"), "{e}");
    // A reader's state offered as a stream checkpoint.
    let reader = feedstock::checkpoint::READER.seal(b"");
    let e = Checkpoint::from_bytes(&reader).unwrap_err();
    assert!(e.to_string().contains("reader state"), "{e}");
    let e = Checkpoint::from_bytes(b"not a checkpoint").unwrap_err();
    assert!(e.to_string().contains("not a stream checkpoint"), "{e}");
}

/// Recomputes the checksum of sealed bytes whose header was changed.
fn reseal_raw(bytes: &[u8]) -> Vec<u8> {
    let (body, _) = bytes.split_at(bytes.len() - 4);
    let mut out = body.to_vec();
    out.extend_from_slice(
        &feedstock::io::tfrecord::masked_crc32c(body).to_le_bytes(),
    );
    out
}

// --- Reader state. ---

struct Files(std::sync::Mutex<Vec<String>>);

impl WorkQueue for Files {
    fn next_work(&self) -> feedstock::Result<String> {
        let mut f = self.0.lock().unwrap();
        if f.is_empty() {
            return Err(Error::out_of_range("no more files"));
        }
        Ok(f.remove(0))
    }
}

/// A TFRecord reader's state after 7 records of the first file.
fn reader_state(files: &[String]) -> Vec<u8> {
    let r = Reader::new(TfRecordReader::new());
    let work = Files(std::sync::Mutex::new(files.to_vec()));
    for _ in 0..7 {
        r.read(&work).unwrap();
    }
    r.serialize_state().unwrap()
}

fn reader_refuses(bytes: &[u8]) -> Option<Error> {
    Reader::new(TfRecordReader::new())
        .restore_state(bytes)
        .err()
}

#[test]
fn every_truncation_and_bit_flip_of_a_reader_state_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let good = reader_state(&files);
    assert!(reader_refuses(&good).is_none(), "the good one restores");
    let bad = sweep(&good, reader_refuses);
    assert!(bad.is_empty(), "{}", report("reader", &good, &bad));
}

/// The reader state's payload (the fields of `ReaderState`).
#[derive(Clone, PartialEq, prost::Message)]
struct ReaderFields {
    #[prost(uint64, tag = "1")]
    work_started: u64,
    #[prost(uint64, tag = "2")]
    work_finished: u64,
    #[prost(uint64, tag = "3")]
    num_records_produced: u64,
    #[prost(string, optional, tag = "4")]
    current_work: Option<String>,
    #[prost(bytes = "vec", optional, tag = "5")]
    reader_state: Option<Vec<u8>>,
}

/// The record reader's position inside the file.
#[derive(Clone, PartialEq, prost::Message)]
struct PositionFields {
    #[prost(string, tag = "1")]
    format: String,
    #[prost(uint64, tag = "2")]
    offset: u64,
    #[prost(uint64, tag = "3")]
    index: u64,
}

fn forge_reader(
    good: &[u8],
    f: impl FnOnce(&mut ReaderFields, &mut PositionFields),
) -> Vec<u8> {
    let kind = &feedstock::checkpoint::READER;
    let mut fields: ReaderFields =
        prost::Message::decode(&unseal(kind, good)[..]).unwrap();
    let mut pos: PositionFields =
        prost::Message::decode(&fields.reader_state.clone().unwrap()[..])
            .unwrap();
    f(&mut fields, &mut pos);
    fields.reader_state = Some(prost::Message::encode_to_vec(&pos));
    reseal(kind, &prost::Message::encode_to_vec(&fields))
}

#[test]
fn forged_reader_states_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let good = reader_state(&files);
    assert!(reader_refuses(&forge_reader(&good, |_, _| {})).is_none());
    let size = std::fs::metadata(&files[0]).unwrap().len();
    let mut fails = Vec::new();
    let mut check = |bytes: Vec<u8>, field: &str| {
        judge_forged(&mut fails, field, reader_refuses(&bytes));
    };
    check(forge_reader(&good, |_, p| p.offset = size + 1), "offset");
    check(forge_reader(&good, |r, _| r.work_finished = 5), "files");
    check(forge_reader(&good, |r, _| r.current_work = None), "current");
    check(
        forge_reader(&good, |_, p| p.format = "TextLineReader".into()),
        "TextLineReader",
    );
    assert!(fails.is_empty(), "{} forgeries: {fails:#?}", fails.len());
}

// --- Producer state. ---

/// A state of a range producer over 6 elements, 3 epochs, shuffled,
/// after 8 elements, and its bytes.
fn producer_state() -> (Vec<u8>, ProducerState) {
    let state = state_after(6, 5, 8);
    (state.to_bytes(), state)
}

/// A state as `Producer::state` makes it, through its bytes.
fn state_after(len: i32, seed: u64, consumed: u64) -> ProducerState {
    let mut pipeline = Pipeline::new();
    let p = range_input_producer(&mut pipeline, len)
        .num_epochs(3)
        .seed(seed)
        .capacity(32)
        .build_resumable()
        .unwrap();
    let coord = feedstock::coord::Coordinator::new();
    let threads = pipeline.start(&coord).unwrap();
    for _ in 0..consumed {
        p.queue()
            .dequeue_timeout(std::time::Duration::from_secs(10))
            .unwrap();
    }
    let state = p.state();
    coord.request_stop();
    coord
        .join(threads, std::time::Duration::from_secs(10))
        .unwrap();
    state
}

/// Loads `bytes` into a producer over 6 elements, 3 epochs, shuffled.
fn producer_refuses(bytes: &[u8], shuffle: bool) -> Option<Error> {
    let state = match ProducerState::from_bytes(bytes) {
        Ok(s) => s,
        Err(e) => return Some(e),
    };
    let mut pipeline = Pipeline::new();
    range_input_producer(&mut pipeline, 6)
        .num_epochs(3)
        .shuffle(shuffle)
        .resume_from(state)
        .build_resumable()
        .err()
}

#[test]
fn every_truncation_and_bit_flip_of_a_producer_state_is_refused() {
    let (good, _) = producer_state();
    assert!(
        producer_refuses(&good, true).is_none(),
        "the good one loads"
    );
    let bad = sweep(&good, |b| producer_refuses(b, true));
    assert!(bad.is_empty(), "{}", report("producer", &good, &bad));
}

/// The producer state's payload (the fields of `StateProto`).
#[derive(Clone, PartialEq, prost::Message)]
struct ProducerFields {
    #[prost(uint64, tag = "2")]
    len: u64,
    #[prost(uint64, tag = "3")]
    seed: u64,
    #[prost(uint64, tag = "4")]
    epoch: u64,
    #[prost(uint64, tag = "5")]
    position: u64,
    #[prost(bool, tag = "6")]
    shuffle: bool,
}

fn forge_producer(
    good: &[u8],
    f: impl FnOnce(&mut ProducerFields),
) -> Vec<u8> {
    let kind = &feedstock::checkpoint::PRODUCER;
    let mut fields: ProducerFields =
        prost::Message::decode(&unseal(kind, good)[..]).unwrap();
    f(&mut fields);
    reseal(kind, &prost::Message::encode_to_vec(&fields))
}

#[test]
fn forged_producer_states_are_refused_naming_the_field() {
    let (good, state) = producer_state();
    assert_eq!((state.epoch(), state.position()), (1, 2));
    assert!(producer_refuses(&forge_producer(&good, |_| {}), true).is_none());
    let mut fails = Vec::new();
    let mut check = |bytes: Vec<u8>, shuffle: bool, field: &str| {
        judge_forged(&mut fails, field, producer_refuses(&bytes, shuffle));
    };
    check(
        forge_producer(&good, |p| p.epoch = 1_000_000_000_000_000),
        true,
        "epoch",
    );
    check(forge_producer(&good, |p| p.epoch = 4), true, "epoch");
    check(forge_producer(&good, |p| p.epoch = u64::MAX), true, "epoch");
    check(forge_producer(&good, |p| p.position = 6), true, "position");
    check(forge_producer(&good, |p| p.len = 7), true, "elements");
    // Saved from a shuffled producer, loaded into one in order.
    check(good.clone(), false, "shuffle");
    assert!(fails.is_empty(), "{} forgeries: {fails:#?}", fails.len());
    // Every epoch consumed: the limit itself, at position 0, is a state.
    let done = forge_producer(&good, |p| (p.epoch, p.position) = (3, 0));
    assert!(producer_refuses(&done, true).is_none());
}

#[test]
fn a_checkpoint_after_a_read_error_reads_the_failed_block_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.tfrecord");
    let path = path.to_str().unwrap().to_owned();
    // Over 128 KiB, so that a byte changed in the middle passes the
    // sidecar's sampled check and fails only when its record is read.
    let mut w = WriterBuilder::new()
        .from_writer(std::fs::File::create(&path).unwrap());
    for i in 0..2000 {
        w.write_record(format!("{i:0>100}").as_bytes()).unwrap();
    }
    w.finish().unwrap();
    let index = feedstock::io::index::RecordIndex::build(
        &feedstock::io::fs::LocalFs,
        &path,
        None,
    )
    .unwrap();
    index.write_sidecar(false).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = index.position(1050).unwrap().offset as usize + 20;
    bytes[mid] ^= 1;
    std::fs::write(&path, &bytes).unwrap();

    let mut b = RecordStream::builder([path.clone()]);
    b.block_size(100);
    let mut stream = b.build().unwrap();
    let mut delivered = 0;
    let e = loop {
        match stream.next_record() {
            Ok(Some(_)) => delivered += 1,
            Ok(None) => panic!("the corrupt record went unnoticed"),
            Err(e) => break e,
        }
    };
    assert_eq!((e.kind(), delivered), (Kind::DataLoss, 1000));
    // The failed block was not taken: a checkpoint now continues with it,
    // and fails on the same record, rather than skipping its 100 records.
    let cp = Checkpoint::from_bytes(&stream.checkpoint().to_bytes()).unwrap();
    assert_eq!(cp.delivered(), 1000);
    let mut resumed = b.clone().restore(cp).build().unwrap();
    let e = resumed.next_record().unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss);
    assert_eq!(e.file(), Some(path.as_str()));
}
