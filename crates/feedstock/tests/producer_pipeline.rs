//! The file pipeline end to end: the seed's CSV program, readers sharing
//! one filename queue, and the clean shut-down chain of the seed's
//! "Aside" with 1, 2 and 8 reader threads.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use feedstock::coord::{Coordinator, Pipeline, QueueRunner};
use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use feedstock::input::string_input_producer;
use feedstock::queue::{FifoQueue, Queue, QueueSpec};
use feedstock::reader::{Reader, TextLineReader, WorkQueue};
use feedstock::{DType, Kind, Result, Tensor};

const JOIN: Duration = Duration::from_secs(10);

/// Writes `n` CSV files of `lines` rows of five integers each.
fn csv_files(dir: &Path, n: usize, lines: usize) -> Vec<String> {
    (0..n)
        .map(|f| {
            let body: String = (0..lines)
                .map(|l| format!("{f},{l},{},{},{}\n", l * 2, l * 3, f + l))
                .collect();
            let path = dir.join(format!("file{f}.csv"));
            std::fs::write(&path, body).unwrap();
            path.to_str().unwrap().to_owned()
        })
        .collect()
}

/// The seed's CSV program: `string_input_producer` over two CSV files,
/// a `TextLineReader`, and `decode_csv` with `record_defaults` of five
/// ints (four features and a label).
#[test]
fn the_seed_csv_program_reads_every_line_exactly_num_epochs_times() {
    let dir = tempfile::tempdir().unwrap();
    let files = csv_files(dir.path(), 2, 25);
    let epochs = 3;
    let mut pipeline = Pipeline::new();
    let filename_queue = string_input_producer(&mut pipeline, files)
        .num_epochs(epochs)
        .build()
        .unwrap();
    let reader = Reader::new(TextLineReader::new());
    let record_defaults = vec![RecordDefault::i32(1); 5];
    let decode_csv = CsvDecoder::new(record_defaults).unwrap();
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord).unwrap();

    let mut seen: BTreeMap<String, u64> = BTreeMap::new();
    let end = loop {
        let record = match reader.read(&filename_queue) {
            Ok(r) => r,
            Err(e) => break e,
        };
        let cols: Vec<i32> = decode_csv
            .decode(&record.value, &record.key)
            .unwrap()
            .iter()
            .map(|c| c.scalar_value::<i32>().unwrap())
            .collect();
        let (features, label) = (&cols[..4], cols[4]);
        assert_eq!(label, features[0] + features[1]);
        *seen.entry(record.key).or_default() += 1;
    };
    assert_eq!(end.kind(), Kind::OutOfRange, "{end}");
    assert_eq!(seen.len(), 50);
    assert!(seen.values().all(|&n| n == epochs), "{seen:?}");
    assert_eq!(reader.num_work_units_completed(), 2 * epochs);
    coord.request_stop();
    coord.join(threads, JOIN).unwrap();
}

/// A filename queue that logs, in dequeue order, the files handed out.
struct Logged {
    inner: Arc<FifoQueue>,
    log: Mutex<Vec<String>>,
}

impl WorkQueue for Logged {
    fn next_work(&self) -> Result<String> {
        // Held across the dequeue so that the log order is the queue's.
        let mut log = self.log.lock().unwrap();
        let file = self.inner.next_work()?;
        log.push(file.clone());
        Ok(file)
    }
}

#[test]
fn readers_sharing_a_queue_start_every_file_of_an_epoch_before_repeating() {
    let dir = tempfile::tempdir().unwrap();
    let files = csv_files(dir.path(), 6, 30);
    let epochs = 4;
    let mut pipeline = Pipeline::new();
    let queue = string_input_producer(&mut pipeline, files.clone())
        .num_epochs(epochs)
        .seed(11)
        .build()
        .unwrap();
    let logged = Logged {
        inner: queue,
        log: Mutex::new(Vec::new()),
    };
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord).unwrap();
    let per_reader: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let logged = &logged;
                s.spawn(move || {
                    let reader = Reader::new(TextLineReader::new());
                    let mut keys = Vec::new();
                    loop {
                        match reader.read(logged) {
                            Ok(r) => keys.push(r.key),
                            Err(e) if e.is_out_of_range() => return keys,
                            Err(e) => panic!("{e}"),
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    coord.join(threads, JOIN).unwrap();

    let log = logged.log.into_inner().unwrap();
    assert_eq!(log.len(), files.len() * epochs as usize);
    let mut sorted = files.clone();
    sorted.sort();
    for epoch in log.chunks(files.len()) {
        let mut e = epoch.to_vec();
        e.sort();
        assert_eq!(e, sorted, "a file was started twice in one epoch");
    }
    // Each reader reads whole files: its keys of one file are contiguous
    // runs of 30 lines, so no two readers split a file.
    let total: usize = per_reader.iter().map(Vec::len).sum();
    assert_eq!(total, 6 * 30 * epochs as usize);
    for keys in &per_reader {
        assert_eq!(keys.len() % 30, 0);
        for run in keys.chunks(30) {
            let file = run[0].rsplit_once(':').unwrap().0;
            assert!(run.iter().all(|k| k.starts_with(file)));
        }
    }
}

/// The seed's "Aside": filename queue (epoch-limited) → `threads` reader
/// threads in one runner → example queue → the training loop. Returns
/// every value the loop received.
fn shut_down_chain(threads: usize) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let files = csv_files(dir.path(), 5, 40);
    let mut pipeline = Pipeline::new();
    let filenames = string_input_producer(&mut pipeline, files)
        .num_epochs(2)
        .seed(3)
        .capacity(3)
        .build()
        .unwrap();
    let examples = FifoQueue::builder(
        16,
        QueueSpec::dtypes([DType::String, DType::String]),
    )
    .name("examples")
    .build()
    .unwrap();
    let dyn_examples: Arc<dyn Queue> = examples.clone();
    let mut runner = QueueRunner::new(dyn_examples);
    for _ in 0..threads {
        let reader = Reader::new(TextLineReader::new());
        let (filenames, examples) = (filenames.clone(), examples.clone());
        runner.add_op(move || {
            let records = reader.read_up_to(&filenames, 7)?;
            let keys: Vec<Bytes> =
                records.iter().map(|r| Bytes::from(r.key.clone())).collect();
            let values: Vec<Bytes> =
                records.iter().map(|r| r.value.clone()).collect();
            examples.enqueue_many(vec![
                Tensor::vector(keys).into(),
                Tensor::vector(values).into(),
            ])
        });
    }
    pipeline.add_runner(runner).unwrap();
    let coord = Coordinator::new();
    let handles = pipeline.start(&coord).unwrap();

    let mut got = Vec::new();
    let end = loop {
        match examples.dequeue() {
            Ok(e) => {
                let v = e[1].dense().unwrap().as_slice::<Bytes>().unwrap()[0]
                    .clone();
                got.push(String::from_utf8(v.to_vec()).unwrap());
            }
            Err(e) => break e,
        }
    };
    // The example queue was closed by the last reader thread, after the
    // filename queue ran dry: the loop sees OutOfRange, not a hang or an
    // error, and the coordinator joins cleanly without a stop request.
    assert_eq!(end.kind(), Kind::OutOfRange, "{end}");
    coord.join(handles, JOIN).unwrap();
    assert!(coord.error().is_none());
    got
}

fn assert_every_line_twice(values: Vec<String>) {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for v in values {
        *counts.entry(v).or_default() += 1;
    }
    assert_eq!(counts.len(), 5 * 40);
    assert!(counts.values().all(|&c| c == 2), "{counts:?}");
}

#[test]
fn clean_shut_down_chain_with_one_reader_thread() {
    assert_every_line_twice(shut_down_chain(1));
}

#[test]
fn clean_shut_down_chain_with_two_reader_threads() {
    assert_every_line_twice(shut_down_chain(2));
}

#[test]
fn clean_shut_down_chain_with_eight_reader_threads() {
    assert_every_line_twice(shut_down_chain(8));
}
