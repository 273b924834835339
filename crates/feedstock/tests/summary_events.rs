//! Queue-fullness summaries: the scalars a Monitor reports, and event
//! files read back with feedstock's own TFRecord reader.

mod batch_support;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use feedstock::coord::{Coordinator, Pipeline};
use feedstock::input::{batch, shuffle_batch, string_input_producer};
use feedstock::proto::event::What;
use feedstock::proto::Event;
use feedstock::queue::{FifoQueue, Queue, QueueSpec};
use feedstock::summary::{
    read_events, scalar, EventWriter, Monitor, Scalar, SummaryWriter,
    FILE_VERSION,
};
use feedstock::{DType, Error, Kind, Tensor};

use batch_support::*;

fn value(scalars: &[Scalar], tag: &str) -> f64 {
    scalars
        .iter()
        .find(|s| s.tag == tag)
        .unwrap_or_else(|| panic!("no {tag} in {scalars:?}"))
        .value
}

#[test]
fn an_event_file_starts_with_the_version_and_reads_back_its_scalars() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = EventWriter::create(dir.path().join("logs")).unwrap();
    let name = w.path().file_name().unwrap().to_str().unwrap().to_owned();
    let parts: Vec<&str> = name.splitn(5, '.').collect();
    assert_eq!(&parts[..3], ["events", "out", "tfevents"]);
    assert_eq!(parts[3].len(), 10);
    assert!(parts[3].bytes().all(|b| b.is_ascii_digit()), "{name}");
    assert!(!parts[4].is_empty(), "{name}");
    let scalars = [
        Scalar {
            tag: "q/fraction_of_10_full".into(),
            value: 0.5,
        },
        Scalar {
            tag: "q/size".into(),
            value: 5.0,
        },
    ];
    w.write_scalars(3, &scalars).unwrap();
    let path = w.path().to_owned();
    w.finish().unwrap();

    let events = read_events(&path).unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(
        events[0].what,
        Some(What::FileVersion(FILE_VERSION.to_owned()))
    );
    assert!(events[0].wall_time > 1.0e9);
    assert_eq!(events[1].step, 3);
    assert_eq!(scalar(&events[1], "q/fraction_of_10_full"), Some(0.5));
    assert_eq!(scalar(&events[1], "q/size"), Some(5.0));
    assert_eq!(scalar(&events[1], "q/other"), None);
}

#[test]
fn two_event_writers_in_one_directory_do_not_overwrite_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let a = EventWriter::create(dir.path()).unwrap();
    let b = EventWriter::create(dir.path()).unwrap();
    assert_ne!(a.path(), b.path());
    assert!(b.path().to_str().unwrap().contains("tfevents"));
}

#[test]
fn an_event_file_with_a_record_that_is_not_an_event_is_data_loss() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.out.tfevents.0.x");
    let mut w = feedstock::io::tfrecord::WriterBuilder::new()
        .create(&path)
        .unwrap();
    w.write_record(b"\x0a\x05").unwrap();
    w.finish().unwrap();
    let err = read_events(&path).unwrap_err();
    assert_eq!(err.kind(), Kind::DataLoss);
    assert!(err.file().unwrap().ends_with("events.out.tfevents.0.x"));
}

#[test]
fn the_monitor_reports_tensorflow_fullness_tags_and_counts() {
    let q = FifoQueue::builder(8, QueueSpec::dtypes([DType::I64]))
        .name("plain")
        .build()
        .unwrap();
    q.enqueue_many(vec![Tensor::vector(vec![1i64, 2]).into()])
        .unwrap();
    let mut pipeline = Pipeline::new();
    let next = Arc::new(AtomicI64::new(0));
    let shuffled = shuffle_batch(&mut pipeline, move || {
        let i = next.fetch_add(1, Ordering::SeqCst);
        if i >= 30 {
            return Err(Error::out_of_range("done"));
        }
        Ok(vec![Tensor::scalar(i).into()])
    })
    .dtypes([DType::I64])
    .batch_size(4)
    .capacity(20)
    .min_after_dequeue(10)
    .build()
    .unwrap();
    let monitor = Monitor::new()
        .watch_pipeline(&pipeline)
        .watch_batches(&shuffled)
        .watch_queue(q.clone() as Arc<dyn Queue>)
        .watch_queue(q.clone() as Arc<dyn Queue>);
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord).unwrap();
    // Let the runner fill the queue: it blocks at 20.
    let deadline = std::time::Instant::now() + JOIN;
    while shuffled.stats().queue.size < 20 {
        assert!(std::time::Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(1));
    }
    shuffled.next_batch().unwrap();
    let s = monitor.scalars();
    // The shuffling stage, reported once despite being watched twice.
    let size = value(&s, "shuffle_batch/size");
    assert!((16.0..=20.0).contains(&size), "{s:?}");
    assert_eq!(value(&s, "shuffle_batch/fraction_of_20_full"), size / 20.0);
    assert_eq!(
        value(&s, "shuffle_batch/fraction_over_10_of_10_full"),
        (size - 10.0) / 10.0
    );
    assert_eq!(value(&s, "shuffle_batch/dequeued"), 4.0);
    assert_eq!(value(&s, "shuffle_batch/batches"), 1.0);
    assert_eq!(
        s.iter().filter(|x| x.tag == "shuffle_batch/size").count(),
        1
    );
    // The plain queue, watched twice through one handle, reported once.
    assert_eq!(value(&s, "plain/fraction_of_8_full"), 0.25);
    assert_eq!(value(&s, "plain/enqueued"), 2.0);
    assert!(!s.iter().any(|x| x.tag.starts_with("plain_1/")));
    stop(&coord, threads).unwrap();
}

#[test]
fn queues_sharing_a_name_get_numbered_tags() {
    let make = || {
        FifoQueue::builder(4, QueueSpec::dtypes([DType::I64]))
            .name("q")
            .build()
            .unwrap() as Arc<dyn Queue>
    };
    let monitor = Monitor::new().watch_queue(make()).watch_queue(make());
    let tags: Vec<String> =
        monitor.scalars().into_iter().map(|s| s.tag).collect();
    assert!(tags.contains(&"q/size".to_owned()), "{tags:?}");
    assert!(tags.contains(&"q_1/size".to_owned()), "{tags:?}");
}

#[test]
fn the_summary_writer_records_a_pipeline_until_the_coordinator_stops() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_files(dir.path(), 2, 25);
    let mut pipeline = Pipeline::new();
    let queue = string_input_producer(&mut pipeline, files)
        .num_epochs(1)
        .build()
        .unwrap();
    let reader = feedstock::reader::Reader::new(
        feedstock::reader::TfRecordReader::new(),
    );
    let batches = batch(&mut pipeline, read_my_file_format(reader, queue))
        .dtypes([DType::I64, DType::F32, DType::I64])
        .batch_size(8)
        .build()
        .unwrap();
    let monitor = Monitor::new()
        .watch_pipeline(&pipeline)
        .watch_batches(&batches);
    let coord = Coordinator::new();
    let mut threads = pipeline.start(&coord).unwrap();
    let writer = SummaryWriter::new(dir.path().join("logs"), monitor)
        .interval(Duration::from_millis(5))
        .start(&coord)
        .unwrap();
    let path = writer.path().to_owned();
    threads.push(writer.into_thread());
    assert_eq!(drain(&batches).len(), 6);
    stop(&coord, threads).unwrap();

    let events: Vec<Event> = read_events(&path).unwrap();
    assert_eq!(
        events[0].what,
        Some(What::FileVersion(FILE_VERSION.to_owned()))
    );
    let snapshots = &events[1..];
    assert!(!snapshots.is_empty());
    let steps: Vec<i64> = snapshots.iter().map(|e| e.step).collect();
    assert_eq!(steps, (0..steps.len() as i64).collect::<Vec<_>>());
    for e in snapshots {
        let f = scalar(e, "batch/fraction_of_32_full").unwrap();
        assert!((0.0..=1.0).contains(&f), "{f}");
        // The filename queue is reported too.
        assert!(scalar(e, "input_producer/fraction_of_32_full").is_some());
    }
    // The last snapshot is taken at the stop, after the end of input.
    let last = snapshots.last().unwrap();
    assert_eq!(scalar(last, "batch/enqueued"), Some(50.0));
    assert_eq!(scalar(last, "batch/dequeued"), Some(48.0));
    assert_eq!(scalar(last, "batch/batches"), Some(6.0));
    assert_eq!(scalar(last, "batch/held_back"), Some(2.0));
}

#[test]
fn a_summary_writer_that_cannot_create_its_file_fails_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, b"x").unwrap();
    let coord = Coordinator::new();
    let err = SummaryWriter::new(blocker.join("logs"), Monitor::new())
        .start(&coord)
        .unwrap_err();
    assert!(err.file().unwrap().contains("not-a-dir"), "{err}");
}

#[test]
fn pipeline_stats_report_every_queue_and_its_batching_stage_in_one_view() {
    let mut pipeline = Pipeline::new();
    let next = Arc::new(AtomicI64::new(0));
    let shuffled = shuffle_batch(&mut pipeline, move || {
        let i = next.fetch_add(1, Ordering::SeqCst);
        if i >= 30 {
            return Err(Error::out_of_range("done"));
        }
        Ok(vec![Tensor::scalar(i).into()])
    })
    .dtypes([DType::I64])
    .batch_size(4)
    .capacity(20)
    .min_after_dequeue(10)
    .name("shuffled")
    .build()
    .unwrap();
    // Watching the pipeline alone is enough to see the stage's counters.
    let monitor = Monitor::new().watch_pipeline(&pipeline);
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord).unwrap();
    let batches = drain(&shuffled);
    stop(&coord, threads).unwrap();
    // 30 examples: 7 full batches, 2 held back.
    assert_eq!(batches.len(), 7);
    let stats = pipeline.stats();
    assert_eq!(stats.stages.len(), 1);
    let stage = stats.get("shuffled").unwrap();
    assert_eq!(*stage, shuffled.stats());
    assert_eq!(stage.queue.min_after_dequeue, Some(10));
    assert_eq!(stage.queue.enqueued, 30);
    assert_eq!(stage.queue.dequeued, 28);
    assert_eq!(stage.queue.size, 2);
    assert_eq!(stage.fraction_full(), 0.1);
    assert_eq!(stage.fraction_over_min(), Some(0.0));
    let b = stage.batching.unwrap();
    assert_eq!((b.batch_size, b.batches, b.held_back), (4, 7, 2));
    assert_eq!(monitor.stats(), stats.stages);
    let s = monitor.scalars();
    assert_eq!(value(&s, "shuffled/batches"), 7.0);
    assert_eq!(value(&s, "shuffled/held_back"), 2.0);
    assert_eq!(value(&s, "shuffled/fraction_over_10_of_10_full"), 0.0);
}

#[test]
fn a_plain_shuffle_queue_reports_its_min_after_dequeue() {
    let q = feedstock::queue::RandomShuffleQueue::builder(
        10,
        QueueSpec::dtypes([DType::I64]),
    )
    .min_after_dequeue(4)
    .name("pool")
    .build()
    .unwrap();
    q.enqueue_many(vec![Tensor::vector((0..7i64).collect()).into()])
        .unwrap();
    let stats = q.stats();
    assert_eq!(stats.min_after_dequeue, Some(4));
    assert_eq!(stats.fraction_over_min(), Some(0.5));
    let s = Monitor::new().watch_queue(q as Arc<dyn Queue>).scalars();
    assert_eq!(value(&s, "pool/fraction_over_4_of_6_full"), 0.5);
    assert!(!s.iter().any(|x| x.tag == "pool/batches"), "{s:?}");
}
