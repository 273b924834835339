//! Resumable position: a producer's state (epoch, place in the epoch's
//! order, seed) saved with a reader's state lets a fresh pipeline carry
//! on exactly where the first stopped — no line repeated, none skipped,
//! the same sequence as a run that was never interrupted.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use feedstock::coord::{Coordinator, Pipeline, ThreadHandle};
use feedstock::input::{
    range_input_producer, slice_input_producer, string_input_producer,
    Producer, ProducerState,
};
use feedstock::queue::Queue;
use feedstock::reader::{Reader, TextLineReader};
use feedstock::{Kind, Tensor};

const JOIN: Duration = Duration::from_secs(10);
const EPOCHS: u64 = 3;
const SEED: u64 = 11;

/// Writes `n` text files of `lines` distinct lines each.
fn text_files(dir: &Path, n: usize, lines: usize) -> Vec<String> {
    (0..n)
        .map(|f| {
            let body: String =
                (0..lines).map(|l| format!("f{f}-l{l}\n")).collect();
            let path = dir.join(format!("part{f}.txt"));
            std::fs::write(&path, body).unwrap();
            path.to_str().unwrap().to_owned()
        })
        .collect()
}

fn start(pipeline: &mut Pipeline) -> (Coordinator, Vec<ThreadHandle>) {
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord).unwrap();
    (coord, threads)
}

/// A filename producer over `files`, resumed from `state` if given.
fn producer(
    pipeline: &mut Pipeline,
    files: &[String],
    state: Option<ProducerState>,
) -> Producer {
    let mut builder = string_input_producer(pipeline, files.to_vec());
    builder.num_epochs(EPOCHS).seed(SEED).capacity(2);
    if let Some(state) = state {
        builder.resume_from(state);
    }
    builder.build_resumable().unwrap()
}

/// Reads lines until `limit` (or the end of input); returns them and
/// whether the input ended.
fn read_lines(
    reader: &Reader,
    files: &Producer,
    limit: usize,
) -> (Vec<String>, bool) {
    let mut lines = Vec::new();
    while lines.len() < limit {
        match reader.read(files) {
            Ok(r) => lines.push(String::from_utf8(r.value.to_vec()).unwrap()),
            Err(e) => {
                assert_eq!(e.kind(), Kind::OutOfRange, "{e}");
                return (lines, true);
            }
        }
    }
    (lines, false)
}

/// Every line of a run that is never interrupted.
fn uninterrupted(files: &[String]) -> Vec<String> {
    let mut pipeline = Pipeline::new();
    let queue = producer(&mut pipeline, files, None);
    let reader = Reader::new(TextLineReader::new());
    let (coord, threads) = start(&mut pipeline);
    let (lines, ended) = read_lines(&reader, &queue, usize::MAX);
    assert!(ended);
    coord.join(threads, JOIN).unwrap();
    lines
}

/// Reads `cut` lines, saves both states (as bytes), stops the pipeline,
/// then builds a fresh one from the saved bytes and reads to the end.
fn interrupted(files: &[String], cut: usize) -> Vec<String> {
    let mut pipeline = Pipeline::new();
    let queue = producer(&mut pipeline, files, None);
    let reader = Reader::new(TextLineReader::new());
    let (coord, threads) = start(&mut pipeline);
    let (mut lines, ended) = read_lines(&reader, &queue, cut);
    assert!(!ended, "cut {cut} is past the end");
    // The runner has enqueued filenames ahead of the reader; they are
    // not consumed and the resumed producer enqueues them again.
    let saved_producer = queue.state().to_bytes();
    let saved_reader = reader.serialize_state().unwrap();
    coord.request_stop();
    coord.join(threads, JOIN).unwrap();
    drop((queue, reader));

    let mut pipeline = Pipeline::new();
    let state = ProducerState::from_bytes(&saved_producer).unwrap();
    let queue = producer(&mut pipeline, files, Some(state));
    let reader = Reader::new(TextLineReader::new());
    reader.restore_state(&saved_reader).unwrap();
    let (coord, threads) = start(&mut pipeline);
    let (rest, ended) = read_lines(&reader, &queue, usize::MAX);
    assert!(ended);
    coord.join(threads, JOIN).unwrap();
    lines.extend(rest);
    lines
}

#[test]
fn a_resumed_file_pipeline_reads_the_same_sequence_as_an_uninterrupted_one() {
    let dir = tempfile::tempdir().unwrap();
    let files = text_files(dir.path(), 4, 5);
    let whole = uninterrupted(&files);
    assert_eq!(whole.len(), 4 * 5 * EPOCHS as usize);
    // Cuts mid-file, at a file boundary, across the first epoch's end and
    // inside the last epoch.
    for cut in [1, 7, 10, 20, 23, 41, 59] {
        let resumed = interrupted(&files, cut);
        assert_eq!(resumed, whole, "cut after {cut} lines");
        let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
        for line in &resumed {
            *counts.entry(line).or_default() += 1;
        }
        assert_eq!(counts.len(), 20);
        assert!(counts.values().all(|&n| n == EPOCHS), "{counts:?}");
    }
}

#[test]
fn the_state_counts_what_consumers_took_not_what_the_runner_enqueued() {
    let mut pipeline = Pipeline::new();
    let queue = range_input_producer(&mut pipeline, 5)
        .num_epochs(4)
        .seed(1)
        .capacity(8)
        .build_resumable()
        .unwrap();
    let (coord, threads) = start(&mut pipeline);
    for _ in 0..7 {
        queue.queue().dequeue_timeout(JOIN).unwrap();
    }
    let state = queue.state();
    assert_eq!((state.epoch(), state.position()), (1, 2));
    assert_eq!(state.consumed(), 7);
    assert_eq!(state.seed(), 1);
    assert_eq!(state.len(), 5);
    coord.request_stop();
    coord.join(threads, JOIN).unwrap();
}

/// Every index a range producer hands out, optionally resumed.
fn range_sequence(state: Option<ProducerState>, take: usize) -> Vec<i32> {
    let mut pipeline = Pipeline::new();
    let mut builder = range_input_producer(&mut pipeline, 6);
    builder.num_epochs(2).seed(99);
    if let Some(state) = state {
        builder.resume_from(state);
    }
    let producer = builder.build_resumable().unwrap();
    let (coord, threads) = start(&mut pipeline);
    let mut got = Vec::new();
    while got.len() < take {
        match producer.queue().dequeue_timeout(JOIN) {
            Ok(e) => got.push(e[0].dense().unwrap().scalar_value().unwrap()),
            Err(e) => {
                assert_eq!(e.kind(), Kind::OutOfRange, "{e}");
                break;
            }
        }
    }
    if got.len() == take {
        // Leave the rest for the resumed run.
        let state = producer.state();
        coord.request_stop();
        coord.join(threads, JOIN).unwrap();
        got.extend(range_sequence(Some(state), usize::MAX));
    } else {
        coord.join(threads, JOIN).unwrap();
    }
    got
}

#[test]
fn a_range_producer_resumes_mid_epoch_with_the_same_order() {
    let whole = range_sequence(None, usize::MAX);
    assert_eq!(whole.len(), 12);
    for cut in [1, 5, 6, 11] {
        assert_eq!(range_sequence(None, cut), whole, "cut {cut}");
    }
}

#[test]
fn a_slice_producer_resumes_from_its_state_with_the_batched_path() {
    let values = Tensor::vector((0..20i64).collect());
    let run = |state: Option<ProducerState>, batches: usize| {
        let mut pipeline = Pipeline::new();
        let mut builder =
            slice_input_producer(&mut pipeline, vec![values.clone()]);
        builder.num_epochs(2).seed(4).capacity(16);
        if let Some(state) = state {
            builder.resume_from(state);
        }
        let rows = builder.build().unwrap();
        let (coord, threads) = start(&mut pipeline);
        let mut got = Vec::new();
        for _ in 0..batches {
            match rows.dequeue_up_to(3) {
                Ok(b) => {
                    got.extend_from_slice(b[0].as_slice::<i64>().unwrap())
                }
                Err(e) => {
                    assert_eq!(e.kind(), Kind::OutOfRange, "{e}");
                    break;
                }
            }
        }
        let state = rows.state();
        coord.request_stop();
        coord.join(threads, JOIN).unwrap();
        (got, state)
    };
    let (whole, end) = run(None, usize::MAX);
    assert_eq!(whole.len(), 40);
    assert_eq!((end.epoch(), end.position()), (2, 0));
    let (mut first, state) = run(None, 5);
    assert_eq!(state.consumed(), 15);
    let (rest, _) = run(Some(state), usize::MAX);
    first.extend(rest);
    assert_eq!(first, whole);
}

#[test]
fn resuming_after_the_last_epoch_ends_at_once() {
    let mut pipeline = Pipeline::new();
    let done = range_input_producer(&mut pipeline, 3)
        .num_epochs(1)
        .build_resumable()
        .unwrap();
    let (coord, threads) = start(&mut pipeline);
    for _ in 0..3 {
        done.queue().dequeue_timeout(JOIN).unwrap();
    }
    let state = done.state();
    coord.join(threads, JOIN).unwrap();

    let mut pipeline = Pipeline::new();
    let resumed = range_input_producer(&mut pipeline, 3)
        .num_epochs(1)
        .resume_from(state)
        .build_resumable()
        .unwrap();
    let (coord, threads) = start(&mut pipeline);
    let err = resumed.queue().dequeue_timeout(JOIN).unwrap_err();
    assert_eq!(err.kind(), Kind::OutOfRange, "{err}");
    coord.join(threads, JOIN).unwrap();
}

#[test]
fn a_state_saved_for_another_input_length_is_refused() {
    let mut pipeline = Pipeline::new();
    let five = range_input_producer(&mut pipeline, 5)
        .build_resumable()
        .unwrap();
    let state = five.state();
    let err = string_input_producer(&mut pipeline, ["a", "b"])
        .resume_from(state)
        .build_resumable()
        .unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument, "{err}");
    assert!(err.to_string().contains("5 elements"), "{err}");
}
