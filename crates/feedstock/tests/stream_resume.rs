//! The resumable record stream: every order delivers every record exactly
//! once per epoch, a checkpoint taken anywhere restores into a fresh
//! stream (and a fresh process, after a SIGKILL) that continues exactly,
//! and stale indexes are refused.

mod child_support;

use std::collections::HashMap;
use std::io::Write;

use bytes::Bytes;
use feedstock::input::shard::{Remainder, Shard};
use feedstock::input::stream::{
    Checkpoint, Order, RecordStream, RecordStreamBuilder,
};
use feedstock::io::fs::{LocalFs, OutputOptions};
use feedstock::io::index::{IndexCheck, RecordIndex};
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::io::Compression;
use feedstock::Kind;
use rand::{Rng, SeedableRng};

/// Three files, one of them gzip: 400 + 250 + 333 records.
fn files(dir: &std::path::Path) -> Vec<String> {
    let specs = [
        ("a.tfrecord", Compression::None, 400),
        ("b.tfrecord.gz", Compression::Gzip, 250),
        ("c.tfrecord", Compression::None, 333),
    ];
    let mut out = Vec::new();
    for (f, (name, c, n)) in specs.into_iter().enumerate() {
        let path = dir.join(name);
        let mut w = WriterBuilder::new()
            .compression(c)
            .from_writer(std::fs::File::create(&path).unwrap());
        for i in 0..n {
            let pad = "x".repeat(i % 37);
            w.write_record(format!("f{f}-r{i}-{pad}").as_bytes())
                .unwrap();
        }
        w.finish().unwrap();
        out.push(path.to_str().unwrap().to_owned());
    }
    out
}

const TOTAL: usize = 400 + 250 + 333;

type Seen = Vec<(Bytes, u64)>;

fn drain(stream: RecordStream) -> Seen {
    stream
        .map(|r| {
            let r = r.unwrap();
            (r.value, r.epoch)
        })
        .collect()
}

fn take(stream: &mut RecordStream, n: usize) -> Seen {
    let batch = stream.next_batch(n).unwrap();
    batch.into_iter().map(|r| (r.value, r.epoch)).collect()
}

fn counts(seen: &Seen) -> HashMap<(Bytes, u64), usize> {
    let mut m = HashMap::new();
    for s in seen {
        *m.entry(s.clone()).or_insert(0) += 1;
    }
    m
}

const ORDERS: [Order; 3] =
    [Order::Sequential, Order::Buffer(64), Order::Global];

#[test]
fn every_order_delivers_every_record_once_per_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    for order in ORDERS {
        let mut b = RecordStream::builder(files.clone());
        b.num_epochs(2).seed(3).order(order).threads(2);
        let seen = drain(b.build().unwrap());
        assert_eq!(seen.len(), 2 * TOTAL, "{order:?}");
        let c = counts(&seen);
        assert_eq!(c.len(), 2 * TOTAL, "{order:?}: a record twice");
        for epoch in 0..2 {
            let in_epoch = seen.iter().filter(|s| s.1 == epoch).count();
            assert_eq!(in_epoch, TOTAL);
        }
        let in_order = seen.windows(2).all(|w| w[0].1 <= w[1].1);
        if order == Order::Global || order == Order::Sequential {
            assert!(in_order, "{order:?}: epochs interleaved");
        }
        if order != Order::Sequential {
            let e0: Vec<_> = seen.iter().filter(|s| s.1 == 0).collect();
            let e1: Vec<_> = seen.iter().filter(|s| s.1 == 1).collect();
            let same = e0.iter().zip(&e1).filter(|(a, b)| a.0 == b.0);
            assert!(same.count() < TOTAL / 10, "{order:?}: epochs alike");
        }
    }
}

#[test]
fn global_shuffle_mixes_files_from_the_first_records() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let mut b = RecordStream::builder(files);
    b.order(Order::Global).seed(11);
    let first: Vec<_> = drain(b.build().unwrap())
        .into_iter()
        .take(60)
        .map(|s| s.0[1])
        .collect();
    for f in [b'0', b'1', b'2'] {
        assert!(first.contains(&f), "file {} absent", f as char);
    }
}

#[test]
fn shards_split_every_epoch_into_equal_disjoint_parts() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    for order in ORDERS {
        for remainder in [Remainder::Drop, Remainder::Pad] {
            let mut union = Vec::new();
            let mut pads = 0;
            let mut sizes = Vec::new();
            for host in 0..4 {
                let mut b = RecordStream::builder(files.clone());
                b.order(order)
                    .seed(5)
                    .num_epochs(2)
                    .shard(Shard::new(host, 4).unwrap())
                    .remainder(remainder);
                let recs: Vec<_> =
                    b.build().unwrap().map(|r| r.unwrap()).collect();
                sizes.push(recs.len());
                for r in recs {
                    if r.is_pad() {
                        pads += 1;
                        assert!(r.value.is_empty());
                        assert_eq!(r.key(), "<pad>");
                    } else {
                        union.push((r.value, r.epoch));
                    }
                }
            }
            assert!(sizes.iter().all(|&s| s == sizes[0]), "{sizes:?}");
            let c = counts(&union);
            assert_eq!(c.len(), union.len(), "{order:?} a record twice");
            match remainder {
                // 983 = 4 * 245 + 3: three records dropped per epoch.
                Remainder::Drop => assert_eq!(union.len(), 2 * (TOTAL - 3)),
                // ... or one pad record per epoch.
                Remainder::Pad => {
                    assert_eq!(union.len(), 2 * TOTAL);
                    assert_eq!(pads, 2);
                }
            }
        }
    }
}

#[test]
fn deterministic_order_depends_on_neither_threads_nor_block_size() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    for order in ORDERS {
        let run = |threads, block| {
            let mut b = RecordStream::builder(files.clone());
            b.order(order)
                .seed(9)
                .num_epochs(2)
                .threads(threads)
                .block_size(block);
            drain(b.build().unwrap())
        };
        let one = run(1, 256);
        assert_eq!(run(4, 256), one, "{order:?}");
        assert_eq!(run(3, 7), one, "{order:?}");
        let mut b = RecordStream::builder(files.clone());
        b.order(order).seed(10).num_epochs(2);
        if order != Order::Sequential {
            assert_ne!(drain(b.build().unwrap()), one, "{order:?} seed");
        }
    }
}

/// Stops `builder`'s stream after `k` records, through the checkpoint's
/// bytes, and continues in a fresh stream built by `resume`.
fn stop_and_resume(
    builder: &RecordStreamBuilder,
    resume: &RecordStreamBuilder,
    k: usize,
) -> Seen {
    let mut stream = builder.build().unwrap();
    // Take the records in uneven batches, as a training loop might.
    let mut before = Vec::new();
    while before.len() < k {
        let n = (k - before.len()).min(13);
        before.extend(take(&mut stream, n));
    }
    let bytes = stream.checkpoint().to_bytes();
    drop(stream);
    let cp = Checkpoint::from_bytes(&bytes).unwrap();
    assert_eq!(cp.delivered(), k as u64);
    let mut resume = resume.clone();
    before.extend(drain(resume.restore(cp).build().unwrap()));
    before
}

#[test]
fn a_checkpoint_anywhere_continues_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    for order in ORDERS {
        let mut b = RecordStream::builder(files.clone());
        b.order(order)
            .seed(21)
            .num_epochs(2)
            .threads(2)
            .block_size(50);
        let all = drain(b.build().unwrap());
        assert_eq!(all.len(), 2 * TOTAL);
        // The edges, the gzip file (records 400..650 of the first epoch
        // in order), an epoch boundary, and random points.
        let mut points = vec![0, 1, 399, 400, 401, 520, TOTAL, 2 * TOTAL];
        points.extend((0..12).map(|_| rng.gen_range(0..2 * TOTAL)));
        for k in points {
            // Restored with another thread count: the order holds.
            let mut resume = b.clone();
            resume.threads(1 + k % 3);
            let got = stop_and_resume(&b, &resume, k);
            assert!(got == all, "{order:?}: resumed after {k} differs");
        }
    }
}

#[test]
fn a_checkpoint_holds_the_shuffle_buffer_as_positions() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let mut b = RecordStream::builder(files);
    b.order(Order::Buffer(500)).seed(2);
    let mut stream = b.build().unwrap();
    take(&mut stream, 100);
    let cp = stream.checkpoint();
    // The buffer, and the rest of the last block of 256 taken: 600
    // records were moved into the buffer out of 3 blocks.
    assert_eq!(cp.pending(), 500 + 3 * 256 - 600);
    let size = cp.to_bytes().len();
    // Positions, not payloads: a few bytes per buffered record.
    assert!(size < 8 * cp.pending(), "{size} bytes");
}

#[test]
fn checkpoints_chain_across_several_restores() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let mut b = RecordStream::builder(files);
    b.order(Order::Buffer(100)).seed(4).num_epochs(3).threads(3);
    let all = drain(b.build().unwrap());
    let mut got = Vec::new();
    let mut builder = b.clone();
    loop {
        let mut stream = builder.build().unwrap();
        let part = take(&mut stream, 377);
        if part.is_empty() {
            break;
        }
        got.extend(part);
        let cp = Checkpoint::from_bytes(&stream.checkpoint().to_bytes());
        builder = b.clone();
        builder.restore(cp.unwrap());
    }
    assert!(got == all);
}

#[test]
fn without_determinism_a_resume_delivers_the_rest_as_a_multiset() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    for order in ORDERS {
        let mut b = RecordStream::builder(files.clone());
        b.order(order)
            .seed(8)
            .num_epochs(2)
            .threads(4)
            .block_size(16)
            .deterministic(false);
        let all = counts(&drain(b.build().unwrap()));
        assert_eq!(all.len(), 2 * TOTAL);
        for k in [0, 37, 333, 1200, 2 * TOTAL - 5] {
            let got = stop_and_resume(&b, &b, k);
            assert_eq!(got.len(), 2 * TOTAL, "{order:?} at {k}");
            assert!(counts(&got) == all, "{order:?} at {k}");
        }
    }
}

#[test]
fn a_checkpoint_is_refused_by_another_stream() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let mut b = RecordStream::builder(files.clone());
    b.order(Order::Buffer(10)).seed(1);
    let mut stream = b.build().unwrap();
    take(&mut stream, 5);
    let cp = stream.checkpoint();
    let mut other = b.clone();
    other.seed(2).restore(cp.clone());
    let e = other.build().unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    let mut fewer = RecordStream::builder(files[..2].to_vec());
    fewer.order(Order::Buffer(10)).seed(1).restore(cp);
    assert_eq!(fewer.build().unwrap_err().kind(), Kind::InvalidArgument);
    let e = Checkpoint::from_bytes(b"not a checkpoint").unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
}

#[test]
fn a_stale_index_is_refused_never_used() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.tfrecord");
    let path = path.to_str().unwrap();
    // Over 128 KiB, so that the middle is outside the sampled check.
    let mut w =
        WriterBuilder::new().from_writer(std::fs::File::create(path).unwrap());
    for i in 0..2000 {
        w.write_record(format!("{i:0>100}").as_bytes()).unwrap();
    }
    w.finish().unwrap();
    let index = RecordIndex::build(&LocalFs, path, None).unwrap();
    index.write_sidecar(false).unwrap();
    let again = index.write_sidecar(false).unwrap_err();
    assert_eq!(again.kind(), Kind::FailedPrecondition);
    let loaded = RecordIndex::open(&LocalFs, path, None).unwrap();
    assert_eq!(loaded, index);

    // A byte changed in the middle: the sampled check cannot see it, the
    // full one does, and a read through the index fails on the CRC.
    let mut bytes = std::fs::read(path).unwrap();
    let mid = index.position(1000).unwrap().offset as usize + 20;
    bytes[mid] ^= 1;
    std::fs::write(path, &bytes).unwrap();
    let e =
        RecordIndex::load(&LocalFs, path, None, IndexCheck::Full).unwrap_err();
    assert_eq!(e.kind(), Kind::FailedPrecondition);
    assert_eq!(e.file(), Some(path));
    let sampled = RecordIndex::open(&LocalFs, path, None).unwrap();
    let e = sampled.read(&LocalFs, 1000).unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss);
    assert_eq!(e.file(), Some(path));

    // A record appended: the size differs and every opener refuses.
    bytes[mid] ^= 1;
    let mut more = WriterBuilder::new().from_writer(Vec::new());
    more.write_record(b"new").unwrap();
    bytes.extend(more.finish().unwrap());
    std::fs::write(path, &bytes).unwrap();
    let e = RecordIndex::open(&LocalFs, path, None).unwrap_err();
    assert_eq!(e.kind(), Kind::FailedPrecondition);
    assert!(e.message().contains("stale"), "{e}");
    let e = RecordStream::builder([path]).build().unwrap_err();
    assert_eq!(e.kind(), Kind::FailedPrecondition);
}

#[test]
fn a_corrupt_record_fails_the_stream_naming_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let mut bytes = std::fs::read(&files[2]).unwrap();
    bytes[12 + 3] ^= 0x40; // the first record's data
    std::fs::write(&files[2], &bytes).unwrap();
    let e = RecordStream::builder(files.clone()).build().unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss);
    assert_eq!(e.file(), Some(files[2].as_str()));
    assert_eq!(e.offset(), Some(0));
}

#[test]
fn cancel_ends_waiting_and_later_calls() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let mut stream = RecordStream::builder(files).build().unwrap();
    assert!(stream.next_record().unwrap().is_some());
    let canceller = stream.canceller();
    let t = std::thread::spawn(move || canceller.cancel());
    t.join().unwrap();
    // The rest of the first block may still be handed out; then the stream
    // says it was cancelled, and keeps saying so.
    let e = loop {
        match stream.next_record() {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("a cancelled stream ended cleanly"),
            Err(e) => break e,
        }
    };
    assert_eq!(e.kind(), Kind::Cancelled);
    assert_eq!(stream.next_record().unwrap_err().kind(), Kind::Cancelled);
}

/// The settings the process-kill test's child streams with.
fn child_builder(files: Vec<String>) -> RecordStreamBuilder {
    let mut b = RecordStream::builder(files);
    b.order(Order::Buffer(200))
        .seed(77)
        .num_epochs(3)
        .threads(2);
    b
}

const CHILD_ENV: &str = "FEEDSTOCK_STREAM_CHILD_DIR";

/// The child process of `a_killed_process_resumes_from_its_last_checkpoint`
/// (does nothing when run as a test): streams, prints each record as a
/// line `@@R <data> <epoch>`, and after every 37th writes a checkpoint
/// atomically to `DIR/checkpoint`. Restores from it if it exists.
#[test]
fn child_streams_and_checkpoints() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let dir = std::path::Path::new(&dir);
    let files: Vec<String> = std::fs::read_to_string(dir.join("files"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let mut b = child_builder(files);
    let cp_path = dir.join("checkpoint");
    let cp_path = cp_path.to_str().unwrap();
    if let Ok(bytes) = std::fs::read(cp_path) {
        b.restore(Checkpoint::from_bytes(&bytes).unwrap());
    }
    let mut stream = b.build().unwrap();
    let stdout = std::io::stdout();
    while let Some(r) = stream.next_record().unwrap() {
        let line =
            format!("@@R {} {}\n", String::from_utf8_lossy(&r.value), r.epoch);
        stdout.lock().write_all(line.as_bytes()).unwrap();
        if stream.delivered().is_multiple_of(37) {
            let mut out =
                OutputOptions::new().force(true).create(cp_path).unwrap();
            out.write_all(&stream.checkpoint().to_bytes()).unwrap();
            out.commit().unwrap();
        }
    }
}

/// Runs the child; kills it (SIGKILL) once it has printed `kill_after`
/// lines, if given.
fn run_child(dir: &std::path::Path, kill_after: Option<usize>) -> Vec<String> {
    child_support::run_child(
        "child_streams_and_checkpoints",
        CHILD_ENV,
        dir,
        "@@R ",
        kill_after,
    )
}

#[test]
fn a_killed_process_resumes_from_its_last_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    std::fs::write(dir.path().join("files"), files.join("\n")).unwrap();
    let all: Vec<String> = drain(child_builder(files).build().unwrap())
        .into_iter()
        .map(|(d, e)| format!("{} {e}", String::from_utf8_lossy(&d)))
        .collect();
    assert_eq!(all.len(), 3 * TOTAL);

    let printed = run_child(dir.path(), Some(500));
    assert!(printed.len() >= 500 && printed.len() < all.len());
    let cp = std::fs::read(dir.path().join("checkpoint")).unwrap();
    let done = Checkpoint::from_bytes(&cp).unwrap().delivered() as usize;
    assert!(done <= printed.len() && done > 400, "{done}");
    let first_diff = (0..done).find(|&i| printed[i] != all[i]);
    assert_eq!(
        first_diff,
        None,
        "{:?}",
        first_diff.map(|i| (&printed[i], &all[i]))
    );

    // The records after the checkpoint, each exactly once, in order.
    let rest = run_child(dir.path(), None);
    let mut got = printed[..done].to_vec();
    got.extend(rest);
    assert!(got == all, "{} records after resume", got.len());
}

/// A file system whose reads block, in the stream's reader threads only,
/// until released: a stand-in for a stalled network store.
#[derive(Debug, Default)]
struct Stalled {
    released: parking_lot::Mutex<bool>,
    cv: parking_lot::Condvar,
    /// Reader threads waiting inside the file system.
    waiting: parking_lot::Mutex<usize>,
    waiting_cv: parking_lot::Condvar,
}

impl Stalled {
    fn gate(&self) {
        let reader = std::thread::current()
            .name()
            .is_some_and(|n| n.starts_with("feedstock-read"));
        if !reader {
            return;
        }
        *self.waiting.lock() += 1;
        self.waiting_cv.notify_all();
        let mut released = self.released.lock();
        while !*released {
            self.cv.wait(&mut released);
        }
    }

    fn release(&self) {
        *self.released.lock() = true;
        self.cv.notify_all();
    }

    fn wait_for_a_reader(&self) {
        let mut n = self.waiting.lock();
        while *n == 0 {
            self.waiting_cv.wait(&mut n);
        }
    }
}

impl feedstock::io::fs::FileSystem for Stalled {
    fn open(
        &self,
        path: &str,
    ) -> feedstock::Result<Box<dyn std::io::Read + Send>> {
        self.gate();
        LocalFs.open(path)
    }
    fn open_at(
        &self,
        path: &str,
        offset: u64,
    ) -> feedstock::Result<Box<dyn std::io::Read + Send>> {
        self.gate();
        LocalFs.open_at(path, offset)
    }
    fn size(&self, path: &str) -> feedstock::Result<u64> {
        LocalFs.size(path)
    }
    fn glob(&self, pattern: &str) -> feedstock::Result<Vec<String>> {
        LocalFs.glob(pattern)
    }
}

#[test]
fn next_timeout_expires_while_the_readers_are_stalled() {
    let dir = tempfile::tempdir().unwrap();
    let fs = std::sync::Arc::new(Stalled::default());
    let mut b = RecordStream::builder(files(dir.path()));
    b.file_system(fs.clone()).threads(2);
    let mut stream = b.build().unwrap();
    let e = stream
        .next_timeout(std::time::Duration::from_millis(20))
        .unwrap_err();
    assert_eq!(e.kind(), Kind::DeadlineExceeded);
    // The stream is unchanged and goes on once the store answers.
    fs.release();
    assert_eq!(drain(stream).len(), TOTAL);
}

#[test]
fn cancel_wakes_a_next_blocked_on_stalled_readers() {
    let dir = tempfile::tempdir().unwrap();
    let fs = std::sync::Arc::new(Stalled::default());
    let mut b = RecordStream::builder(files(dir.path()));
    b.file_system(fs.clone());
    let mut stream = b.build().unwrap();
    let canceller = stream.canceller();
    let fs2 = fs.clone();
    let t = std::thread::spawn(move || {
        fs2.wait_for_a_reader();
        canceller.cancel();
    });
    let e = stream.next_record().unwrap_err();
    assert_eq!(e.kind(), Kind::Cancelled);
    t.join().unwrap();
    // Dropping joins the reader threads once the store lets them go.
    fs.release();
    drop(stream);
}

/// Counts what a stream asks of the local disk: opens for forward
/// reads, positioned-read handles opened and dropped (and the most alive
/// at once), and positioned reads. With `positioned` false it offers no
/// positioned reads, as a file system that cannot seek.
#[derive(Debug, Default)]
struct Counting {
    positioned: bool,
    opens: std::sync::atomic::AtomicUsize,
    handles: std::sync::atomic::AtomicUsize,
    live: std::sync::Arc<parking_lot::Mutex<(usize, usize)>>,
    reads: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

#[derive(Debug)]
struct CountedHandle {
    inner: std::sync::Arc<dyn feedstock::io::fs::ReadAt>,
    live: std::sync::Arc<parking_lot::Mutex<(usize, usize)>>,
    reads: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl feedstock::io::fs::ReadAt for CountedHandle {
    fn read_at(&self, offset: u64, len: usize) -> feedstock::Result<Bytes> {
        self.reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.read_at(offset, len)
    }
    fn merge_gap(&self) -> u64 {
        self.inner.merge_gap()
    }
}

impl Drop for CountedHandle {
    fn drop(&mut self) {
        self.live.lock().0 -= 1;
    }
}

impl Counting {
    fn count(n: &std::sync::atomic::AtomicUsize) -> usize {
        n.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl feedstock::io::fs::FileSystem for Counting {
    fn open(
        &self,
        path: &str,
    ) -> feedstock::Result<Box<dyn std::io::Read + Send>> {
        self.opens
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        LocalFs.open(path)
    }
    fn open_at(
        &self,
        path: &str,
        offset: u64,
    ) -> feedstock::Result<Box<dyn std::io::Read + Send>> {
        self.opens
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        LocalFs.open_at(path, offset)
    }
    fn open_read_at(
        &self,
        path: &str,
    ) -> feedstock::Result<Option<std::sync::Arc<dyn feedstock::io::fs::ReadAt>>>
    {
        if !self.positioned {
            return Ok(None);
        }
        self.handles
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let inner = LocalFs.open_read_at(path)?.expect("a local file");
        {
            let mut live = self.live.lock();
            live.0 += 1;
            live.1 = live.1.max(live.0);
        }
        Ok(Some(std::sync::Arc::new(CountedHandle {
            inner,
            live: std::sync::Arc::clone(&self.live),
            reads: std::sync::Arc::clone(&self.reads),
        })))
    }
    fn size(&self, path: &str) -> feedstock::Result<u64> {
        LocalFs.size(path)
    }
    fn glob(&self, pattern: &str) -> feedstock::Result<Vec<String>> {
        LocalFs.glob(pattern)
    }
}

#[test]
fn a_global_shuffle_keeps_one_handle_per_file_and_never_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let fs = std::sync::Arc::new(Counting {
        positioned: true,
        ..Counting::default()
    });
    let mut b = RecordStream::builder(files.clone());
    b.file_system(fs.clone())
        .order(Order::Global)
        .seed(4)
        .num_epochs(3)
        .block_size(16);
    let stream = b.build().unwrap();
    let opens_to_index = Counting::count(&fs.opens);
    let seen = drain(stream);
    assert_eq!(seen.len(), 3 * TOTAL);
    // The two plain files: one handle each for the stream's whole life,
    // over 3 × 62 blocks; the gzip file is inflated forward (one open
    // per block that touches it), never through a handle.
    assert_eq!(Counting::count(&fs.handles), 2);
    assert_eq!(fs.live.lock().0, 0, "handles outlive the stream");
    let plain_records = 3 * (400 + 333);
    let reads = Counting::count(&fs.reads);
    assert!(reads > 0 && reads <= plain_records, "{reads} reads");
    let forward = Counting::count(&fs.opens) - opens_to_index;
    assert!(forward <= 3 * TOTAL.div_ceil(16), "{forward} opens");

    // The same order as a file system without positioned reads gives.
    let plain = std::sync::Arc::new(Counting::default());
    b.file_system(plain.clone());
    assert_eq!(drain(b.build().unwrap()), seen);
    assert_eq!(Counting::count(&plain.handles), 0);
}

#[test]
fn max_open_files_bounds_the_handles_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for f in 0..5 {
        let path = dir.path().join(format!("p{f}.tfrecord"));
        let mut w = WriterBuilder::new()
            .from_writer(std::fs::File::create(&path).unwrap());
        for i in 0..60 {
            w.write_record(format!("p{f}-{i}").as_bytes()).unwrap();
        }
        w.finish().unwrap();
        files.push(path.to_str().unwrap().to_owned());
    }
    let fs = std::sync::Arc::new(Counting {
        positioned: true,
        ..Counting::default()
    });
    let mut b = RecordStream::builder(files.clone());
    b.order(Order::Global).seed(2).num_epochs(2).block_size(32);
    let want = drain(b.build().unwrap());
    b.file_system(fs.clone()).max_open_files(2);
    assert_eq!(drain(b.build().unwrap()), want);
    // Five files through two slots: reopened, and never more alive than
    // the slots plus the one the single reader thread holds.
    assert!(Counting::count(&fs.handles) > 5);
    assert!(fs.live.lock().1 <= 3, "{:?}", *fs.live.lock());
    assert_eq!(fs.live.lock().0, 0);
}
