//! `feedstock bench`: the throughput of a pipeline over files, stage by
//! stage.
//!
//! Each stage is a fresh pipeline over the same files: a
//! `string_input_producer` (no shuffle, `--epochs` epochs) feeding
//! `--threads` worker threads, each with its own reader of the format
//! (as `shuffle_batch_join` pipelines are built, so threads read different
//! files in parallel). Workers take records 256 (or 32 MiB) at a time with
//! `read_batch_bytes` (keys are built only for an error).
//!
//! - `read`: the records only.
//! - `read+parse`: each batch of records decoded too: `parse_example`
//!   with a spec inferred from the first file's first records, or
//!   `decode_csv`, or `decode_raw` as bytes.
//! - `read+parse+batch` (or `read+parse+shuffle` with `--shuffle`): the
//!   whole pipeline of the seed guide. The workers become the runner
//!   threads of a `batch_join` (`shuffle_batch_join`) stage, one reader
//!   each, enqueueing each parsed batch of records with `enqueue_many`;
//!   the main thread takes `--batch-size` batches until the end, as a
//!   training loop would, sampling the batching queue's fullness before
//!   each one (where TensorFlow's summary of it would be taken).
//!
//! Rates are over wall time, from starting the pipeline to the last
//! record (or batch); MB/s counts the records' data (decompressed), 10^6
//! bytes.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use feedstock::coord::{Coordinator, Pipeline};
use feedstock::dataset::{
    Dataset, FixedLengthSource, Shuffle, TextLineSource,
};
use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use feedstock::decode::example::{parse_example, FeatureKind, FeatureSpec};
use feedstock::decode::raw::{decode_raw_batch, ByteOrder};
use feedstock::input::stream::{Order, RecordStream};
use feedstock::input::{
    batch_join, shuffle_batch_join, string_input_producer,
};
use feedstock::io::fs::STDIO;
use feedstock::io::store::AnyFs;
use feedstock::io::Compression;
use feedstock::queue::{ComponentSpec, FifoQueue, QueueSpec};
use feedstock::reader::{
    FixedLengthRecordReader, Reader, RecordBatch, TextLineReader,
    TfRecordReader,
};
use feedstock::{DType, Error, Result, Value};

use crate::args::{
    compression_of, name_of, open_records, parse_compression, parse_delim,
    parse_max_line, parse_threads, Lines,
};
use crate::inspect::infer_spec;

/// `feedstock bench --help`.
pub(crate) const LONG_ABOUT: &str = "\
Measure the throughput of an input pipeline over the given files, stage by
stage. Each stage runs a fresh pipeline: a filename queue (no shuffle,
--epochs epochs) feeding --threads reader threads, each with its own
reader. Stages:
  read        read the records only
  read+parse  also decode each batch of records: parse_example with a spec
              inferred from the first file's first 1000 records (tfrecord),
              decode_csv with --columns or a schema inferred from the first
              line (csv), decode_raw as uint8 (fixed)
  read+parse+batch
              the whole pipeline: the reader threads parse as above and
              enqueue into a batch queue (--shuffle: a shuffle_batch
              queue keeping --min-after-dequeue examples), from which
              the main thread takes --batch-size batches; every example
              is delivered (the last batch may be smaller)
  --stream    (tfrecord) the resumable record stream, records only:
              stream-seq in order; stream-buffer through a shuffle buffer
              of --stream-buffer records; stream-global a permutation of
              every record per epoch; -nd: not deterministic (blocks are
              taken as they are read)
Reports records/s and MB/s (record data, decompressed) for each stage, and
how full the batching queue was on average when a batch was taken (a queue
that is often empty means the readers are the bottleneck).";

/// Records read per `read_batch` call.
const READ_BATCH: usize = 256;

/// The most record bytes a worker reads per call (a batch ends at the
/// record that reaches it): with records of up to the 1 GiB limit,
/// [`READ_BATCH`] records could be far more than any machine holds.
const READ_BATCH_BYTES: u64 = 32 << 20;

/// Records of the first file used to infer an Example spec.
const INFER_RECORDS: usize = 1000;

/// The most record bytes kept to infer an Example spec: inference stops
/// at [`INFER_RECORDS`] records or once this much is held (the first
/// record is always kept, so it is bounded by the record limit).
const INFER_BYTES: u64 = 64 << 20;

/// Arguments of `feedstock bench`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The files to read (`-` for standard input, which is saved to a
    /// temporary file first: every stage reads the files again).
    #[arg(required = true, value_parser = crate::args::Utf8Path)]
    files: Vec<PathBuf>,
    /// The record format.
    #[arg(long, default_value = "tfrecord")]
    format: Format,
    /// Reader threads (1 to 256).
    #[arg(long, default_value_t = 2, value_parser = parse_threads)]
    threads: u32,
    /// Passes over the files (1 to 1000000).
    #[arg(long, default_value_t = 1, value_parser = parse_epochs)]
    epochs: u64,
    /// The compression of every file (tfrecord, csv and fixed); by
    /// default it is detected from the first file's extension.
    #[arg(long, value_parser = parse_compression)]
    compression: Option<Compression>,
    /// csv: the column spec, as for `convert csv`; by default each field
    /// of the first line is int64 if it parses as one, else float if it
    /// parses as one, else bytes.
    #[arg(long)]
    columns: Option<String>,
    /// csv: skip the first line of each file.
    #[arg(long)]
    header: bool,
    /// csv: the field delimiter: one character, or `tab`.
    #[arg(long, default_value = ",", value_parser = parse_delim)]
    delim: u8,
    /// csv: the longest line accepted, in bytes (1 to 1073741824, the
    /// default).
    #[arg(long, value_parser = parse_max_line)]
    max_line_bytes: Option<u64>,
    /// fixed: the length of each record in bytes (1 to 1073741824).
    #[arg(long, value_parser = parse_record_bytes)]
    record_bytes: Option<u64>,
    /// fixed: bytes of header before the first record.
    #[arg(long, default_value_t = 0)]
    header_bytes: u64,
    /// fixed: bytes of footer after the last record.
    #[arg(long, default_value_t = 0)]
    footer_bytes: u64,
    /// Examples per batch in the batching stage (1 to 1000000).
    #[arg(long, default_value_t = 32, value_parser = parse_count)]
    batch_size: u64,
    /// Batch through a shuffling queue (shuffle_batch_join) instead of a
    /// FIFO one (batch_join).
    #[arg(long)]
    shuffle: bool,
    /// With --shuffle: examples the queue keeps back while its input
    /// lasts, so that each batch is drawn from at least this many (0 to
    /// 10000000).
    #[arg(long, requires = "shuffle", default_value_t = 1000, value_parser = parse_min_after)]
    min_after_dequeue: usize,
    /// The batching queue's capacity (1 to 10000000); by default
    /// min_after_dequeue (with --shuffle) + 3 × batch size, as the seed
    /// guide suggests.
    #[arg(long, value_parser = parse_capacity)]
    capacity: Option<u64>,
    /// tfrecord: also run the resumable record stream over the files
    /// (records only): in order, through a shuffle buffer, and globally
    /// shuffled, the last two deterministic and not.
    #[arg(long)]
    stream: bool,
    /// With --stream: the shuffle buffer's size in records (1 to
    /// 10000000).
    #[arg(long, requires = "stream", default_value_t = 10_000, value_parser = parse_stream_buffer)]
    stream_buffer: usize,
}

/// Parses `--stream-buffer`: 1 to ten million records.
fn parse_stream_buffer(s: &str) -> std::result::Result<usize, String> {
    crate::args::in_range(s, 1, 10_000_000)
}

/// Parses `--epochs` or `--batch-size`: 1 to a million.
fn parse_count(s: &str) -> std::result::Result<u64, String> {
    crate::args::in_range(s, 1, 1_000_000)
}

/// Parses `--epochs`: 1 to a million.
fn parse_epochs(s: &str) -> std::result::Result<u64, String> {
    parse_count(s)
}

/// Parses `--capacity`: 1 to ten million examples.
fn parse_capacity(s: &str) -> std::result::Result<u64, String> {
    crate::args::in_range(s, 1, 10_000_000)
}

/// Parses `--min-after-dequeue`: 0 to ten million examples.
fn parse_min_after(s: &str) -> std::result::Result<usize, String> {
    crate::args::in_range(s, 0, 10_000_000)
}

/// Parses `--record-bytes`: 1 byte to the 1 GiB record limit.
fn parse_record_bytes(s: &str) -> std::result::Result<u64, String> {
    crate::args::in_range(
        s,
        1,
        feedstock::io::tfrecord::DEFAULT_MAX_RECORD_LEN,
    )
}

impl Args {
    /// The batching queue's `min_after_dequeue`: 0 without `--shuffle`.
    fn min_after(&self) -> usize {
        if self.shuffle {
            self.min_after_dequeue
        } else {
            0
        }
    }

    /// The batching queue's capacity.
    fn queue_capacity(&self) -> Result<usize> {
        let too_big =
            || Error::invalid_argument("--capacity or --batch-size too big");
        match self.capacity {
            Some(c) => usize::try_from(c).map_err(|_| too_big()),
            None => usize::try_from(self.batch_size)
                .ok()
                .and_then(|b| b.checked_mul(3))
                .and_then(|b| b.checked_add(self.min_after()))
                .ok_or_else(too_big),
        }
    }
}

/// The record formats `bench` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// TFRecord files of Examples.
    TfRecord,
    /// CSV lines.
    Csv,
    /// Fixed-length records.
    Fixed,
}

impl FromStr for Format {
    type Err = Error;

    fn from_str(s: &str) -> Result<Format> {
        match s {
            "tfrecord" => Ok(Format::TfRecord),
            "csv" => Ok(Format::Csv),
            "fixed" => Ok(Format::Fixed),
            _ => Err(Error::invalid_argument(format!(
                "unknown format {s:?}: expected tfrecord, csv or fixed"
            ))),
        }
    }
}

/// What one stage measured.
#[derive(Debug, Clone, Copy)]
struct Measure {
    /// Records (or examples) through the stage.
    records: u64,
    /// Their data bytes.
    bytes: u64,
    /// Wall time.
    elapsed: Duration,
    /// For the batching stage, the batching queue's mean fraction full
    /// when a batch was taken.
    fullness: Option<f64>,
}

impl fmt::Display for Measure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        write!(
            f,
            "{:>10}  {:>9.3}  {:>12.0}  {:>9.1}",
            self.records,
            secs,
            self.records as f64 / secs,
            self.bytes as f64 / secs / 1e6,
        )?;
        match self.fullness {
            Some(x) => write!(f, "  {:>9.1}%", x * 100.0),
            None => write!(f, "  {:>10}", "-"),
        }
    }
}

/// How a worker decodes a batch of records (the `read+parse` stage).
#[derive(Debug, Clone)]
enum Parser {
    /// Read only.
    None,
    /// `parse_example` with this spec.
    Example(FeatureSpec),
    /// `decode_csv`.
    Csv(Arc<CsvDecoder>),
    /// `decode_raw` as bytes.
    Raw,
}

impl Parser {
    /// Decodes a batch of records into components with a leading batch
    /// axis (none for [`Parser::None`]).
    fn parse(&self, batch: &RecordBatch) -> Result<Vec<Value>> {
        match self {
            Parser::None => Ok(Vec::new()),
            Parser::Example(spec) => Ok(batch
                .decode(|records| parse_example(records, spec))?
                .into_values()),
            Parser::Csv(dec) => {
                let columns =
                    batch.decode(|records| dec.decode_batch(records))?;
                Ok(columns.into_iter().map(Value::from).collect())
            }
            Parser::Raw => {
                let t = batch.decode(|records| {
                    decode_raw_batch(
                        records,
                        DType::U8,
                        ByteOrder::LittleEndian,
                    )
                })?;
                Ok(vec![t.into()])
            }
        }
    }

    /// The components of one parsed example, for the batching queue.
    /// `record_bytes` is the length of a fixed-length record.
    fn queue_spec(&self, record_bytes: u64) -> Result<QueueSpec> {
        let mut q = QueueSpec::new();
        match self {
            Parser::None => {}
            Parser::Example(spec) => {
                for (name, kind) in spec.iter() {
                    q = q.component(feature_component(name, kind)?);
                }
            }
            Parser::Csv(dec) => {
                for (i, dtype) in dec.dtypes().into_iter().enumerate() {
                    q = q.component(
                        ComponentSpec::new(dtype)
                            .shape(vec![])
                            .name(format!("column {i}")),
                    );
                }
            }
            Parser::Raw => {
                let len = usize::try_from(record_bytes).map_err(|_| {
                    Error::invalid_argument("--record-bytes is too big")
                })?;
                q = q.component(
                    ComponentSpec::new(DType::U8)
                        .shape(vec![Some(len)])
                        .name("record"),
                );
            }
        }
        Ok(q)
    }
}

/// The queue component of one parsed Example feature.
fn feature_component(name: &str, kind: &FeatureKind) -> Result<ComponentSpec> {
    Ok(match kind {
        FeatureKind::Fixed { dtype, shape, .. } => {
            ComponentSpec::new(*dtype).shape(shape).name(name)
        }
        FeatureKind::VarLen { dtype } | FeatureKind::Sparse { dtype, .. } => {
            ComponentSpec::sparse(*dtype).name(name)
        }
        // Sequences are padded to the longest in each parsed batch, so
        // one example's shape depends on its neighbours: not batchable
        // without padding again. The inferred specs never hold one.
        _ => {
            return Err(Error::invalid_argument(format!(
                "the batching stage cannot batch feature {name:?} of kind \
                 {kind:?}"
            ))
            .with_field(name))
        }
    })
}

/// Runs each stage and prints a table.
///
/// # Errors
///
/// Bad arguments for the format, or a `--min-after-dequeue` not below the
/// batching queue's capacity (InvalidArgument, exit 2, before any stage
/// runs), and the first error of any stage: a damaged record (exit 1), a
/// missing file (exit 2), a record the parse stage cannot decode (exit
/// 2).
pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let mut paths = crate::files::inputs(&args.files)?;
    crate::args::check_inputs(&paths)?;
    // Each stage reads the files again, and standard input can be read
    // only once: it is saved to a temporary file first (on disk, so
    // memory stays bounded), read under its own name `-` in messages.
    let spool = if paths.iter().any(|p| name_of(p) == STDIO) {
        let mut spool = tempfile::Builder::new()
            .prefix(".feedstock-stdin.")
            .tempfile()
            .map_err(|e| Error::io(e).with_file(STDIO))?;
        std::io::copy(&mut std::io::stdin().lock(), spool.as_file_mut())
            .map_err(|e| Error::io(e).with_file(STDIO))?;
        for p in paths.iter_mut().filter(|p| name_of(p) == STDIO) {
            *p = spool.path().to_owned();
        }
        Some(spool)
    } else {
        None
    };
    let spooled = spool.as_ref().map(|t| name_of(t.path()));
    run_files(args, &paths).map_err(|e| {
        match (e.downcast::<Error>(), &spooled) {
            (Ok(fe), Some(tmp)) => as_stdin(fe, tmp).into(),
            (Ok(fe), None) => fe.into(),
            (Err(e), _) => e,
        }
    })
}

/// `e` with the spooled copy of standard input, `tmp`, named `-`.
fn as_stdin(e: Error, tmp: &str) -> Error {
    let message = e.message().replace(tmp, STDIO);
    let key = e.key().map(|k| k.replace(tmp, STDIO));
    let mut e = e.map_file(|f| f.replace(tmp, STDIO)).with_message(message);
    if let Some(k) = key {
        e = e.with_key(k);
    }
    e
}

/// The compression every file is read with: `given`, or the one detected
/// from every file's extension. A pipeline's readers read all their files
/// with one compression (as TensorFlow's do), so files whose extensions
/// disagree are refused rather than read wrongly.
fn one_compression(
    paths: &[PathBuf],
    given: Option<Compression>,
) -> Result<Compression> {
    let first = compression_of(&paths[0], given);
    if let Some(p) = paths[1..]
        .iter()
        .find(|p| compression_of(p, given) != first)
    {
        return Err(Error::invalid_argument(format!(
            "the files have different compressions ({}: {}, {}: {}), \
             but bench reads every file with one: give --compression, \
             or bench them separately",
            name_of(&paths[0]),
            first,
            name_of(p),
            compression_of(p, given),
        )));
    }
    Ok(first)
}

/// Runs each stage over `paths`.
fn run_files(args: &Args, paths: &[PathBuf]) -> anyhow::Result<()> {
    let files: Vec<String> = paths.iter().map(|p| name_of(p)).collect();
    let compression = one_compression(paths, args.compression)?;
    if args.stream && args.format != Format::TfRecord {
        return Err(Error::invalid_argument(
            "--stream reads TFRecord files only",
        )
        .into());
    }
    if args.format == Format::Fixed && args.record_bytes.is_none() {
        return Err(Error::invalid_argument(
            "--format fixed needs --record-bytes",
        )
        .into());
    }
    if args.format == Format::Csv && compression == Compression::None {
        // A compressed file read as text fails on its first odd byte with
        // a message about quotes or fields: say what it is instead.
        for path in paths.iter().filter(|p| !AnyFs::is_url(&name_of(p))) {
            Lines::open(path, compression, Some(1), "--compression")?;
        }
    }
    let parser = match args.format {
        Format::TfRecord => {
            Parser::Example(first_records_spec(&paths[0], compression)?)
        }
        Format::Csv => {
            Parser::Csv(Arc::new(csv_decoder(args, &paths[0], compression)?))
        }
        Format::Fixed => Parser::Raw,
    };
    let spec = parser.queue_spec(args.record_bytes.unwrap_or_default())?;
    let capacity = args.queue_capacity()?;
    // Checked before any stage runs (the batching stage would find it
    // only after the others).
    if args.shuffle && args.min_after_dequeue >= capacity {
        return Err(Error::invalid_argument(format!(
            "--min-after-dequeue ({}) must be below the capacity \
             ({capacity})",
            args.min_after_dequeue
        ))
        .into());
    }
    // Written, not printed: a closed pipe is an error to return, not a
    // panic.
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    writeln!(
        out,
        "{} files, {} epochs, {} threads, format {:?}",
        files.len(),
        args.epochs,
        args.threads,
        args.format
    )?;
    writeln!(
        out,
        "{:<18}  {:>10}  {:>9}  {:>12}  {:>9}  {:>10}",
        "stage", "records", "seconds", "records/s", "MB/s", "queue full"
    )?;
    let mut read_bytes = 0;
    for (name, p) in [("read", Parser::None), ("read+parse", parser.clone())] {
        let m = stage(args, &files, compression, &p)?;
        read_bytes = m.bytes;
        writeln!(out, "{name:<18}  {m}")?;
    }
    let name = if args.shuffle {
        "read+parse+shuffle"
    } else {
        "read+parse+batch"
    };
    let (m, batches) = batch_stage(
        args,
        &files,
        compression,
        parser.clone(),
        spec,
        capacity,
    )?;
    writeln!(out, "{name:<18}  {m}")?;
    let m = dataset_stage(args, &files, compression, &parser, read_bytes)?;
    let name = if args.shuffle {
        "dataset+shuffle"
    } else {
        "dataset"
    };
    writeln!(out, "{name:<18}  {m}")?;
    if args.stream {
        let buffer = Order::Buffer(args.stream_buffer);
        for (name, order, det) in [
            ("stream-seq", Order::Sequential, true),
            ("stream-buffer", buffer, true),
            ("stream-buffer-nd", buffer, false),
            ("stream-global", Order::Global, true),
            ("stream-global-nd", Order::Global, false),
        ] {
            let m = stream_stage(args, &files, compression, order, det)?;
            writeln!(out, "{name:<18}  {m}")?;
        }
    }
    write!(
        out,
        "{} batches of up to {} examples; queue capacity {capacity}",
        batches, args.batch_size
    )?;
    if args.shuffle {
        write!(out, ", min_after_dequeue {}", args.min_after_dequeue)?;
    }
    writeln!(out)?;
    store_stats(&mut out, &files)?;
    Ok(())
}

/// The object store's counters over every stage, when any file is a URL:
/// requests sent (retries included), bytes received, retries, and
/// operations that failed for good.
fn store_stats(out: &mut impl Write, files: &[String]) -> anyhow::Result<()> {
    use feedstock::io::store::shared_fs;
    if !files.iter().any(|f| AnyFs::is_url(f)) {
        return Ok(());
    }
    let fs = shared_fs();
    let store = fs.store()?;
    let s = store.stats();
    writeln!(
        out,
        "object store: {} requests, {} bytes, {} retries, {} failures",
        s.requests(),
        s.bytes_read(),
        s.retries(),
        s.failures()
    )?;
    Ok(())
}

/// Runs one stage of the resumable [`RecordStream`]: records only, every
/// epoch, `--threads` reader threads. The files are indexed when the
/// stream is built, before the clock starts.
fn stream_stage(
    args: &Args,
    files: &[String],
    compression: Compression,
    order: Order,
    deterministic: bool,
) -> Result<Measure> {
    let mut b = RecordStream::builder(files.iter().cloned());
    b.compression(compression)
        .num_epochs(args.epochs)
        .threads(args.threads as usize)
        .order(order)
        .deterministic(deterministic);
    let mut stream = b.build()?;
    let start = Instant::now();
    let (mut records, mut bytes) = (0u64, 0u64);
    while let Some(r) = stream.next_record()? {
        records += 1;
        bytes += r.value.len() as u64;
    }
    Ok(Measure {
        records,
        bytes,
        elapsed: start.elapsed(),
        fullness: None,
    })
}

/// Runs the same pipeline through the front door, [`Dataset`]: read,
/// decode, (shuffle through a buffer of `--min-after-dequeue`) and batch,
/// `--threads` reader threads. The files are indexed when it starts,
/// before the clock starts.
fn dataset_stage(
    args: &Args,
    files: &[String],
    compression: Compression,
    parser: &Parser,
    bytes: u64,
) -> Result<Measure> {
    let d = match args.format {
        Format::TfRecord => Dataset::tfrecord_in(
            feedstock::io::fs::default_fs(),
            files.to_vec(),
            Some(compression),
        )?,
        Format::Csv => {
            let mut b = TextLineSource::builder();
            b.skip_header_lines(u64::from(args.header))
                .compression(compression);
            if let Some(max) = args.max_line_bytes {
                b.max_line_bytes(max);
            }
            Dataset::text_lines(files.to_vec(), &b)?
        }
        Format::Fixed => {
            let mut b = FixedLengthSource::builder(
                args.record_bytes.unwrap_or_default(),
            );
            b.header_bytes(args.header_bytes)
                .footer_bytes(args.footer_bytes)
                .compression(compression);
            Dataset::fixed_length(files.to_vec(), &b)?
        }
    };
    let d = match parser {
        Parser::None => d,
        Parser::Example(spec) => d.parse(spec.clone()),
        Parser::Csv(dec) => d.decode_csv((**dec).clone()),
        Parser::Raw => d.decode_raw(DType::U8),
    };
    let shuffle = if args.shuffle {
        Shuffle::Buffer(args.min_after_dequeue.max(1))
    } else {
        Shuffle::None
    };
    let batch = usize::try_from(args.batch_size)
        .map_err(|_| Error::invalid_argument("--batch-size is too big"))?;
    let mut loader = d
        .shuffle(shuffle)
        .batch(batch)
        .epochs(args.epochs)
        .threads(args.threads as usize)
        .start()?;
    let start = Instant::now();
    let mut records = 0u64;
    while let Some(b) = loader.next_batch()? {
        records += b.len() as u64;
    }
    Ok(Measure {
        records,
        bytes,
        elapsed: start.elapsed(),
        fullness: None,
    })
}

/// A reader of the format, for one worker thread.
fn reader(args: &Args, compression: Compression) -> Result<Reader> {
    Ok(match args.format {
        Format::TfRecord => Reader::new(
            TfRecordReader::builder().compression(compression).build(),
        ),
        Format::Csv => {
            let mut b = TextLineReader::builder();
            b.skip_header_lines(u64::from(args.header))
                .compression(compression);
            if let Some(max) = args.max_line_bytes {
                b.max_line_bytes(max);
            }
            Reader::new(b.build())
        }
        Format::Fixed => Reader::new(
            FixedLengthRecordReader::builder(
                args.record_bytes.unwrap_or_default(),
            )
            .header_bytes(args.header_bytes)
            .footer_bytes(args.footer_bytes)
            .compression(compression)
            .build()?,
        ),
    })
}

/// Runs one stage: a fresh pipeline, `--threads` workers, until every
/// epoch is read.
fn stage(
    args: &Args,
    files: &[String],
    compression: Compression,
    parser: &Parser,
) -> Result<Measure> {
    let mut pipeline = Pipeline::new();
    let queue: Arc<FifoQueue> =
        string_input_producer(&mut pipeline, files.iter().cloned())
            .num_epochs(args.epochs)
            .shuffle(false)
            .build()?;
    let readers: Vec<Reader> = (0..args.threads)
        .map(|_| reader(args, compression))
        .collect::<Result<_>>()?;
    let coord = Coordinator::new();
    let start = Instant::now();
    let threads = pipeline.start(&coord)?;
    let results: Vec<Result<(u64, u64)>> = std::thread::scope(|s| {
        let mut workers = Vec::new();
        let mut results = Vec::new();
        for (i, reader) in readers.iter().enumerate() {
            let (queue, coord) = (&queue, &coord);
            let spawned = std::thread::Builder::new()
                .name(format!("bench-worker-{i}"))
                .spawn_scoped(s, move || {
                    let r = work(reader, queue, parser);
                    if let Err(e) = &r {
                        let _ = coord.request_stop_with(e.clone());
                    }
                    r
                });
            match spawned {
                Ok(w) => workers.push(w),
                Err(e) => {
                    // The workers started end when the stop closes the
                    // filename queue.
                    let e = Error::from(e).with_message(format!(
                        "cannot start thread 'bench-worker-{i}' (of {})",
                        readers.len()
                    ));
                    // Not joined yet, so the error is kept, and it is
                    // returned from here too.
                    let _ = coord.request_stop_with(e.clone());
                    results.push(Err(e));
                    break;
                }
            }
        }
        let mut joined: Vec<Result<(u64, u64)>> = workers
            .into_iter()
            .map(|w| {
                w.join().unwrap_or_else(|_| {
                    Err(Error::internal("a bench worker panicked"))
                })
            })
            .collect();
        // A failure to start comes first: it is the cause.
        results.append(&mut joined);
        results
    });
    let elapsed = start.elapsed();
    coord.request_stop();
    coord.join(threads, Duration::from_secs(10))?;
    let mut m = Measure {
        records: 0,
        bytes: 0,
        elapsed,
        fullness: None,
    };
    for r in results {
        let (n, b) = r?;
        m.records += n;
        m.bytes += b;
    }
    Ok(m)
}

/// One worker: reads (and parses) until the filename queue is done.
fn work(
    reader: &Reader,
    queue: &FifoQueue,
    parser: &Parser,
) -> Result<(u64, u64)> {
    let (mut n, mut bytes) = (0u64, 0u64);
    loop {
        let batch =
            match reader.read_batch_bytes(queue, READ_BATCH, READ_BATCH_BYTES)
            {
                Ok(b) => b,
                Err(e) if e.is_out_of_range() => return Ok((n, bytes)),
                Err(e) => return Err(e),
            };
        n += batch.len() as u64;
        bytes += batch.values().iter().map(|v| v.len() as u64).sum::<u64>();
        parser.parse(&batch)?;
    }
}

/// Runs the batching stage: `--threads` readers parsing into a batching
/// queue, the calling thread taking batches until the end. Returns the
/// measure (examples, record bytes, mean fullness) and the number of
/// batches.
fn batch_stage(
    args: &Args,
    files: &[String],
    compression: Compression,
    parser: Parser,
    spec: QueueSpec,
    capacity: usize,
) -> Result<(Measure, u64)> {
    let batch_size = usize::try_from(args.batch_size)
        .map_err(|_| Error::invalid_argument("--batch-size is too big"))?;
    let mut pipeline = Pipeline::new();
    let queue: Arc<FifoQueue> =
        string_input_producer(&mut pipeline, files.iter().cloned())
            .num_epochs(args.epochs)
            .shuffle(false)
            .build()?;
    let bytes = Arc::new(AtomicU64::new(0));
    let parser = Arc::new(parser);
    let closures: Vec<_> = (0..args.threads)
        .map(|_| {
            let reader = reader(args, compression)?;
            let (queue, bytes, parser) =
                (Arc::clone(&queue), Arc::clone(&bytes), Arc::clone(&parser));
            Ok(move || {
                let batch = reader.read_batch_bytes(
                    &*queue,
                    READ_BATCH,
                    READ_BATCH_BYTES,
                )?;
                let n: u64 =
                    batch.values().iter().map(|v| v.len() as u64).sum();
                bytes.fetch_add(n, Ordering::Relaxed);
                parser.parse(&batch)
            })
        })
        .collect::<Result<_>>()?;
    let source = if args.shuffle {
        shuffle_batch_join(&mut pipeline, closures)
            .spec(spec)
            .min_after_dequeue(args.min_after_dequeue)
            .enqueue_many(true)
            .batch_size(batch_size)
            .capacity(capacity)
            .allow_smaller_final_batch(true)
            .build()?
    } else {
        batch_join(&mut pipeline, closures)
            .spec(spec)
            .enqueue_many(true)
            .batch_size(batch_size)
            .capacity(capacity)
            .allow_smaller_final_batch(true)
            .build()?
    };
    let coord = Coordinator::new();
    source.attach(&coord);
    let start = Instant::now();
    let threads = pipeline.start(&coord)?;
    let (mut examples, mut batches, mut full) = (0u64, 0u64, 0.0f64);
    let drained = loop {
        let fullness = source.stats().fraction_full();
        match source.next_batch() {
            Ok(b) => {
                examples += b.len() as u64;
                batches += 1;
                full += fullness;
            }
            Err(e) if e.is_out_of_range() => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    let elapsed = start.elapsed();
    coord.request_stop();
    let joined = coord.join(threads, Duration::from_secs(10));
    drained?;
    joined?;
    let m = Measure {
        records: examples,
        bytes: bytes.load(Ordering::Relaxed),
        elapsed,
        fullness: Some(if batches == 0 {
            0.0
        } else {
            full / batches as f64
        }),
    };
    Ok((m, batches))
}

/// A spec that fits the first records of `path`: at most
/// [`INFER_RECORDS`] of them, and no more once [`INFER_BYTES`] are held.
fn first_records_spec(
    path: &std::path::Path,
    compression: Compression,
) -> Result<FeatureSpec> {
    let mut reader = open_records(path, Some(compression))?;
    let records = first_records(&mut reader, INFER_RECORDS, INFER_BYTES)?;
    infer_spec(records.iter().map(|r| &r[..]))
        .map_err(|e| e.with_file(name_of(path)))
}

/// The first records of `reader`: at most `max_records`, and none more
/// once `max_bytes` of data are held (the first is always taken).
fn first_records<R: std::io::Read>(
    reader: &mut feedstock::io::tfrecord::Reader<R>,
    max_records: usize,
    max_bytes: u64,
) -> Result<Vec<Bytes>> {
    let mut records = Vec::new();
    let mut held = 0u64;
    while records.len() < max_records && held < max_bytes {
        match reader.read_record()? {
            Some(r) => {
                held += r.value.len() as u64;
                records.push(r.value);
            }
            None => break,
        }
    }
    Ok(records)
}

/// The CSV decoder: from `--columns`, or inferred from the first line.
fn csv_decoder(
    args: &Args,
    first: &Path,
    compression: Compression,
) -> Result<CsvDecoder> {
    let delim = args.delim;
    let (defaults, select) = match &args.columns {
        Some(spec) => {
            let spec: crate::convert::ColumnSpec = spec.parse()?;
            let select = spec.skips().then(|| spec.selected_columns());
            (spec.defaults()?, select)
        }
        None => (infer_csv(args, first, compression)?, None),
    };
    let mut b = CsvDecoder::builder(defaults);
    b.field_delim(delim);
    if let Some(cols) = select {
        b.select_cols(cols);
    }
    b.build()
}

/// One default per field of the first data line: int64, float or bytes.
/// The line is split on the delimiter without unquoting: a guess to
/// start from, which `--columns` overrides.
fn infer_csv(
    args: &Args,
    path: &Path,
    compression: Compression,
) -> Result<Vec<RecordDefault>> {
    let name = name_of(path);
    let mut lines =
        Lines::open(path, compression, args.max_line_bytes, "--compression")?;
    let mut line = Bytes::new();
    for _ in 0..=usize::from(args.header) {
        line = lines.next_line()?.unwrap_or_default();
    }
    if line.is_empty() {
        return Err(Error::invalid_argument(
            "no line to infer a CSV schema from",
        )
        .with_file(&name));
    }
    line.split(|&b| b == args.delim)
        .map(|field| {
            let s = String::from_utf8_lossy(field);
            let s = s.trim();
            if s.parse::<i64>().is_ok() {
                RecordDefault::required(DType::I64)
            } else if s.parse::<f32>().is_ok() {
                RecordDefault::required(DType::F32)
            } else {
                Ok(RecordDefault::string(""))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use feedstock::io::tfrecord::{ReaderBuilder, Writer};

    #[test]
    fn inference_holds_a_bounded_number_of_bytes() {
        let mut w = Writer::new(Vec::new());
        for i in 0..100u8 {
            w.write_record(&[i; 10]).unwrap();
        }
        let file = w.finish().unwrap();
        let read = |records, bytes| {
            let mut r = ReaderBuilder::new().from_reader(&file[..]);
            first_records(&mut r, records, bytes).unwrap()
        };
        // By bytes: 35 bytes of 10-byte records stop after the 4th.
        assert_eq!(read(1000, 35).len(), 4);
        // By count.
        assert_eq!(read(7, 1 << 20).len(), 7);
        // The whole file when both allow.
        let all = read(1000, 1 << 20);
        assert_eq!(all.len(), 100);
        assert_eq!(&all[99][..], &[99; 10]);
        // A first record over the budget is still taken, alone.
        assert_eq!(read(1000, 1).len(), 1);
    }
}
