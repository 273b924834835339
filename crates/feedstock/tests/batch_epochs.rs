//! The seed's `input_pipeline` and `shuffle_batch_join` programs over
//! TFRecord files: every example is delivered exactly `num_epochs` times
//! (checked as a multiset over all batches), with 1, 2 and 4 threads,
//! FIFO and shuffling, with and without a smaller final batch.

mod batch_support;

use feedstock::coord::{Coordinator, Pipeline};
use feedstock::input::{
    batch, batch_join, shuffle_batch, shuffle_batch_join,
    string_input_producer, BatchSource,
};
use feedstock::reader::{Reader, TfRecordReader};
use feedstock::DType;

use batch_support::*;

const FILES: usize = 3;
const PER_FILE: usize = 41;
const EPOCHS: u64 = 2;
const BATCH: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Order {
    Fifo,
    Shuffle,
}

/// Builds the pipeline: `threads` clones of one reader's closure
/// (`join == false`) or `threads` readers, one closure each.
fn input_pipeline(
    pipeline: &mut Pipeline,
    files: Vec<String>,
    order: Order,
    threads: usize,
    join: bool,
    smaller: bool,
) -> BatchSource {
    let files = string_input_producer(pipeline, files)
        .num_epochs(EPOCHS)
        .shuffle(true)
        .seed(5)
        .build()
        .unwrap();
    let spec = [DType::I64, DType::F32, DType::I64];
    let names = ["id", "image", "label"];
    macro_rules! finish {
        ($b:expr) => {
            $b.dtypes(spec)
                .names(names)
                .shapes([vec![], vec![Some(PIXELS)], vec![]])
                .batch_size(BATCH)
                .allow_smaller_final_batch(smaller)
        };
    }
    let one = || {
        read_my_file_format(Reader::new(TfRecordReader::new()), files.clone())
    };
    match (order, join) {
        (Order::Fifo, false) => {
            finish!(batch(pipeline, one()).num_threads(threads))
                .build()
                .unwrap()
        }
        (Order::Shuffle, false) => finish!(shuffle_batch(pipeline, one())
            .num_threads(threads)
            .capacity(60)
            .min_after_dequeue(30)
            .seed(9))
        .build()
        .unwrap(),
        (Order::Fifo, true) => {
            finish!(batch_join(pipeline, (0..threads).map(|_| one())))
                .build()
                .unwrap()
        }
        (Order::Shuffle, true) => {
            finish!(shuffle_batch_join(pipeline, (0..threads).map(|_| one()))
                .capacity(60)
                .min_after_dequeue(30)
                .seed(9))
            .build()
            .unwrap()
        }
    }
}

fn run(order: Order, threads: usize, join: bool, smaller: bool) {
    let dir = tempfile::tempdir().unwrap();
    let files = write_files(dir.path(), FILES, PER_FILE);
    let mut pipeline = Pipeline::new();
    let batches =
        input_pipeline(&mut pipeline, files, order, threads, join, smaller);
    let coord = Coordinator::new();
    batches.attach(&coord);
    let threads_h = pipeline.start(&coord).unwrap();
    let got = drain(&batches);

    let total = (FILES * PER_FILE) as u64 * EPOCHS;
    let full = total as usize / BATCH;
    let rest = total as usize % BATCH;
    let case = format!("{order:?}, {threads} threads, join {join}");
    for b in &got[..full] {
        assert_eq!(b.len(), BATCH, "{case}");
        // The components stay aligned: label = id % 10, image from id.
        let ids = ids(b);
        let labels = b.tensor("label").unwrap().as_slice::<i64>().unwrap();
        let images = b.tensor("image").unwrap().as_slice::<f32>().unwrap();
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(labels[i], id % 10, "{case}");
            let first = ((*id as usize) % 256) as f32 / 255.0;
            assert_eq!(images[i * PIXELS], first, "{case}");
        }
    }
    let delivered = multiset(got.iter().flat_map(ids));
    let stats = batches.stats();
    if smaller {
        assert_eq!(got.len(), full + usize::from(rest > 0), "{case}");
        assert_eq!(got.last().unwrap().len(), rest, "{case}");
        assert_eq!(delivered.len(), FILES * PER_FILE, "{case}");
        assert!(delivered.values().all(|&n| n == EPOCHS), "{case}");
        assert_eq!(stats.batching.unwrap().held_back, 0, "{case}");
    } else {
        assert_eq!(got.len(), full, "{case}");
        // Only the remainder is missing, and the pipeline says how many.
        assert_eq!(stats.batching.unwrap().held_back, rest as u64, "{case}");
        let remainder = batches.take_remainder().unwrap().unwrap();
        assert_eq!(remainder.len(), rest, "{case}");
        let all = multiset(got.iter().flat_map(ids).chain(ids(&remainder)));
        assert_eq!(all.len(), FILES * PER_FILE, "{case}");
        assert!(all.values().all(|&n| n == EPOCHS), "{case}");
        assert!(batches.take_remainder().unwrap().is_none(), "{case}");
    }
    assert_eq!(stats.queue.enqueued, total, "{case}");
    stop(&coord, threads_h).unwrap();
}

#[test]
fn fifo_batch_delivers_every_example_num_epochs_times() {
    for threads in [1, 2, 4] {
        for smaller in [true, false] {
            run(Order::Fifo, threads, false, smaller);
        }
    }
}

#[test]
fn shuffle_batch_delivers_every_example_num_epochs_times() {
    for threads in [1, 2, 4] {
        for smaller in [true, false] {
            run(Order::Shuffle, threads, false, smaller);
        }
    }
}

#[test]
fn batch_join_delivers_every_example_num_epochs_times() {
    for threads in [1, 2, 4] {
        for smaller in [true, false] {
            run(Order::Fifo, threads, true, smaller);
        }
    }
}

#[test]
fn shuffle_batch_join_delivers_every_example_num_epochs_times() {
    for threads in [1, 2, 4] {
        for smaller in [true, false] {
            run(Order::Shuffle, threads, true, smaller);
        }
    }
}
