//! The front door: [`Dataset`], a builder of source → decode → shuffle →
//! batch, and [`Loader`], the running pipeline it starts.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::decode::{
    Decode, DecodeCsv, DecodeRaw, Map, MapBatch, ParseExample,
};
use super::engine::{
    Canceller, Config, Engine, Order, Row, DEFAULT_BLOCK_SIZE,
};
use super::files::{
    FixedLengthSourceBuilder, TextLineSourceBuilder, WholeFileSource,
};
use super::gather::stack_rows;
use super::source::{
    ArraySource, Fnv, Source, TfRecordSource, DEFAULT_MAX_OPEN_FILES,
};
use super::Checkpoint;
use crate::decode::csv::CsvDecoder;
use crate::decode::example::FeatureSpec;
use crate::decode::raw::ByteOrder;
use crate::error::{Error, Result};
use crate::input::shard::{Remainder, Shard};
use crate::input::Batch;
use crate::io::compression::Compression;
use crate::io::fs::{default_fs, FileSystem};
use crate::io::tfrecord::{CorruptRecords, SkipLog, SkipStats};
use crate::tensor::{DType, Tensor, Value};

/// How a [`Dataset`] shuffles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Shuffle {
    /// The files in the order given, each front to back.
    #[default]
    None,
    /// The files in an order drawn per epoch, each front to back.
    Files,
    /// The files in an order drawn per epoch, read into a shuffle buffer
    /// of this many examples from which each is drawn at random
    /// (TensorFlow's `min_after_dequeue`; the buffer spans epochs).
    Buffer(usize),
    /// A permutation of every record of every file, drawn per epoch:
    /// complete mixing, at the cost of scattered reads.
    Global,
}

impl Shuffle {
    fn order(self) -> Order {
        match self {
            Shuffle::None => Order::Sequential,
            Shuffle::Files => Order::Files,
            Shuffle::Buffer(n) => Order::Buffer(n.max(1)),
            Shuffle::Global => Order::Global,
        }
    }
}

/// Opens the source when the pipeline starts, with this many threads.
type OpenSource = dyn Fn(&Opening) -> Result<Arc<dyn Source>> + Send + Sync;

/// What a source is opened with when its pipeline starts.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Opening {
    /// Threads to open (index) the files with.
    pub threads: usize,
    /// What to do with a damaged record (TFRecord files).
    pub corrupt: CorruptRecords,
    /// Where skipped regions are counted.
    pub skips: SkipLog,
}

/// A pipeline to run: where the records come from, how they are
/// decoded, shuffled and batched. Start it with [`start`](Self::start)
/// (or [`resume`](Self::resume) from a [`Checkpoint`]); the [`Loader`]
/// it returns is an iterator of batches.
///
/// ```
/// use feedstock::dataset::{Dataset, Shuffle};
/// use feedstock::decode::example::FeatureSpec;
/// use feedstock::DType;
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("train.tfrecord");
/// # let mut w = feedstock::io::tfrecord::Writer::new(std::fs::File::create(&path)?);
/// # for i in 0..100i64 {
/// #     let ex = feedstock::proto::Example::builder().int64("label", [i]).build();
/// #     w.write_record(&prost::Message::encode_to_vec(&ex))?;
/// # }
/// # w.finish()?;
/// # let pattern = dir.path().join("*.tfrecord").to_str().unwrap().to_owned();
/// let spec = FeatureSpec::builder().fixed("label", DType::I64, []).build()?;
/// let loader = Dataset::tfrecord(&pattern)?
///     .parse(spec)
///     .shuffle(Shuffle::Buffer(1000))
///     .batch(32)
///     .epochs(2)
///     .seed(7)
///     .start()?;
/// let mut examples = 0;
/// for batch in loader {
///     examples += batch?.len();
/// }
/// assert_eq!(examples, 200);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Dataset {
    open: Arc<OpenSource>,
    decode: Option<Arc<dyn Decode>>,
    names: Option<Arc<[String]>>,
    shuffle: Shuffle,
    batch: Option<usize>,
    pad: bool,
    drop_remainder: bool,
    num_epochs: Option<u64>,
    seed: u64,
    threads: usize,
    shard: Shard,
    remainder: Remainder,
    deterministic: bool,
    block_size: usize,
    keys: bool,
    elastic: bool,
    corrupt: CorruptRecords,
}

impl fmt::Debug for Dataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dataset")
            .field("decode", &self.decode)
            .field("shuffle", &self.shuffle)
            .field("batch", &self.batch)
            .field("drop_remainder", &self.drop_remainder)
            .field("num_epochs", &self.num_epochs)
            .field("seed", &self.seed)
            .field("threads", &self.threads)
            .field("shard", &self.shard)
            .field("remainder", &self.remainder)
            .field("deterministic", &self.deterministic)
            .field("block_size", &self.block_size)
            .field("elastic", &self.elastic)
            .finish_non_exhaustive()
    }
}

/// Files as the constructors take them: a glob pattern or URL, or a
/// list of paths.
pub trait IntoFiles {
    /// The files, matched on `fs` when a pattern.
    ///
    /// # Errors
    ///
    /// [`NotFound`](crate::Kind::NotFound) when a pattern matches
    /// nothing; [`InvalidArgument`](crate::Kind::InvalidArgument) for no
    /// files.
    fn into_files(self, fs: &dyn FileSystem) -> Result<Vec<String>>;
}

impl IntoFiles for &str {
    fn into_files(self, fs: &dyn FileSystem) -> Result<Vec<String>> {
        if self.contains(['*', '?', '[']) {
            fs.glob(self)
        } else {
            Ok(vec![self.to_owned()])
        }
    }
}

impl IntoFiles for &String {
    fn into_files(self, fs: &dyn FileSystem) -> Result<Vec<String>> {
        self.as_str().into_files(fs)
    }
}

impl IntoFiles for Vec<String> {
    fn into_files(self, _fs: &dyn FileSystem) -> Result<Vec<String>> {
        Ok(self)
    }
}

impl IntoFiles for &[String] {
    fn into_files(self, _fs: &dyn FileSystem) -> Result<Vec<String>> {
        Ok(self.to_vec())
    }
}

impl IntoFiles for &[&str] {
    fn into_files(self, _fs: &dyn FileSystem) -> Result<Vec<String>> {
        Ok(self.iter().map(|s| (*s).to_owned()).collect())
    }
}

/// Refuses no files and standard input (which cannot be read by
/// position, so neither shuffled globally nor resumed).
fn check_files(files: &[String]) -> Result<()> {
    if files.is_empty() {
        return Err(Error::invalid_argument(
            "a Dataset needs at least one file",
        ));
    }
    if files.iter().any(|f| f == "-") {
        return Err(Error::invalid_argument(
            "a Dataset reads records by position, which standard input (-) \
             cannot give: write it to a file first, or read it with the \
             classic readers (no resume)",
        ));
    }
    Ok(())
}

impl Dataset {
    /// A pipeline over the records of `source`, opened when it starts.
    pub fn from_source<F>(open: F) -> Dataset
    where
        F: Fn(&Opening) -> Result<Arc<dyn Source>> + Send + Sync + 'static,
    {
        Dataset {
            open: Arc::new(open),
            decode: None,
            names: None,
            shuffle: Shuffle::None,
            batch: None,
            pad: false,
            drop_remainder: false,
            num_epochs: Some(1),
            seed: 0,
            threads: default_threads(),
            shard: Shard::all(),
            remainder: Remainder::Drop,
            deterministic: true,
            block_size: DEFAULT_BLOCK_SIZE,
            keys: false,
            elastic: false,
            corrupt: CorruptRecords::Fail,
        }
    }

    /// A pipeline over files matched by `files` on `fs`, whose source
    /// `open` builds when the pipeline starts (with its thread count).
    fn over_files<S, F>(
        fs: Arc<dyn FileSystem>,
        files: impl IntoFiles,
        open: F,
    ) -> Result<Dataset>
    where
        S: Source + 'static,
        F: Fn(Arc<dyn FileSystem>, &[String], &Opening) -> Result<S>
            + Send
            + Sync
            + 'static,
    {
        let files = files.into_files(&*fs)?;
        check_files(&files)?;
        Ok(Dataset::from_source(move |opening| {
            Ok(Arc::new(open(Arc::clone(&fs), &files, opening)?)
                as Arc<dyn Source>)
        }))
    }

    /// TFRecord files (plain, gzip or zlib by extension): a glob pattern,
    /// a path or URL (`s3://bucket/train-*`), or a list. Each file is
    /// indexed when the pipeline starts (its sidecar, or one scan).
    ///
    /// # Errors
    ///
    /// Those of matching the pattern; no files; standard input.
    pub fn tfrecord(files: impl IntoFiles) -> Result<Dataset> {
        Dataset::tfrecord_in(default_fs(), files, None)
    }

    /// As [`tfrecord`](Self::tfrecord), through `fs`, with every file's
    /// compression given (`None`: from its extension).
    ///
    /// # Errors
    ///
    /// As [`tfrecord`](Self::tfrecord).
    pub fn tfrecord_in(
        fs: Arc<dyn FileSystem>,
        files: impl IntoFiles,
        compression: Option<Compression>,
    ) -> Result<Dataset> {
        Dataset::over_files(fs, files, move |fs, files, opening| {
            TfRecordSource::open_skipping(
                fs,
                files,
                compression,
                opening,
                DEFAULT_MAX_OPEN_FILES,
            )
        })
    }

    /// The lines of text files (CSV among them: add
    /// [`decode_csv`](Self::decode_csv)), cut as
    /// [`TextLineReader`](crate::reader::TextLineReader) cuts them, with
    /// the settings of `lines` (header lines to skip, compression, line
    /// limit). Each file is scanned once when the pipeline starts.
    ///
    /// # Errors
    ///
    /// As [`tfrecord`](Self::tfrecord).
    pub fn text_lines(
        files: impl IntoFiles,
        lines: &TextLineSourceBuilder,
    ) -> Result<Dataset> {
        let lines = lines.clone();
        Dataset::over_files(default_fs(), files, move |fs, files, opening| {
            lines.open(fs, files, opening.threads, DEFAULT_MAX_OPEN_FILES)
        })
    }

    /// Fixed-length records (CIFAR-10's binary files, say), cut as
    /// [`FixedLengthRecordReader`](crate::reader::FixedLengthRecordReader)
    /// cuts them with the layout of `layout`. Counted from each file's
    /// size: no scan unless compressed.
    ///
    /// # Errors
    ///
    /// As [`tfrecord`](Self::tfrecord).
    pub fn fixed_length(
        files: impl IntoFiles,
        layout: &FixedLengthSourceBuilder,
    ) -> Result<Dataset> {
        let layout = layout.clone();
        Dataset::over_files(default_fs(), files, move |fs, files, opening| {
            layout.open(fs, files, opening.threads, DEFAULT_MAX_OPEN_FILES)
        })
    }

    /// Each file whole, one record per file (images, say, for
    /// [`map`](Self::map) to decode), keyed by its name.
    ///
    /// # Errors
    ///
    /// As [`tfrecord`](Self::tfrecord).
    pub fn whole_files(files: impl IntoFiles) -> Result<Dataset> {
        Dataset::over_files(default_fs(), files, |fs, files, opening| {
            WholeFileSource::open(
                fs,
                files,
                opening.threads,
                DEFAULT_MAX_OPEN_FILES,
            )
        })
    }

    /// Arrays in memory, one example per row, named: the preloaded way
    /// in. Held once and shared; never copied per epoch.
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::Kind::InvalidArgument) for no arrays, a
    /// scalar, or arrays of different lengths.
    pub fn arrays<I, S>(arrays: I) -> Result<Dataset>
    where
        I: IntoIterator<Item = (S, Tensor)>,
        S: Into<String>,
    {
        let (names, columns): (Vec<String>, Vec<Tensor>) =
            arrays.into_iter().map(|(n, t)| (n.into(), t)).unzip();
        let source: Arc<dyn Source> = Arc::new(ArraySource::new(columns)?);
        let mut d = Dataset::from_source(move |_| Ok(Arc::clone(&source)));
        d.names = Some(names.into());
        Ok(d)
    }

    fn decoded(mut self, d: Arc<dyn Decode>) -> Dataset {
        self.names = d.names().or(self.names);
        self.decode = Some(d);
        self
    }

    /// Parses `tf.train.Example` records with `spec`: one component per
    /// feature, named by it.
    pub fn parse(self, spec: FeatureSpec) -> Dataset {
        self.decoded(Arc::new(ParseExample(spec)))
    }

    /// Decodes CSV lines with `decoder` (its record defaults fix the
    /// dtypes): one component per column.
    pub fn decode_csv(self, decoder: CsvDecoder) -> Dataset {
        self.decoded(Arc::new(DecodeCsv(decoder)))
    }

    /// Reinterprets each record's bytes as little-endian numbers of
    /// `dtype` (every record must have the same length).
    pub fn decode_raw(self, dtype: DType) -> Dataset {
        self.decoded(Arc::new(DecodeRaw {
            dtype,
            order: ByteOrder::LittleEndian,
        }))
    }

    /// Decodes with a decoder of one's own.
    pub fn decode_with(self, decoder: Arc<dyn Decode>) -> Dataset {
        self.decoded(decoder)
    }

    /// Runs `f` on each example after decoding (in the reader threads):
    /// its components in, the new components out. `label` tells apart
    /// pipelines whose functions differ, for their checkpoints (a
    /// function cannot be compared); `f` must be a pure function of the
    /// example, as a resumed pipeline runs it again on some examples.
    pub fn map<F>(mut self, label: &str, f: F) -> Dataset
    where
        F: Fn(Vec<Value>) -> Result<Vec<Value>> + Send + Sync + 'static,
    {
        let map = Map {
            inner: self.decode.take(),
            f: Arc::new(f),
            names: None,
            label: label.to_owned(),
        };
        self.names = None;
        self.decoded(Arc::new(map))
    }

    /// Runs `f` on a whole block of decoded examples at once (in the
    /// reader threads): the components in, each with one row per
    /// example, and the new components out, each with the same rows —
    /// the vectorised form of [`map`](Self::map), for functions that work
    /// row by row (casts, scaling, `decode_raw` of a column). `label` and
    /// purity as for `map`.
    pub fn map_batch<F>(mut self, label: &str, f: F) -> Dataset
    where
        F: Fn(Vec<Value>) -> Result<Vec<Value>> + Send + Sync + 'static,
    {
        let map = MapBatch {
            inner: self.decode.take(),
            f: Arc::new(f),
            label: label.to_owned(),
        };
        self.decoded(Arc::new(map))
    }

    /// Names the components (as the batches' [`Batch::get`] finds them).
    pub fn names<I, S>(mut self, names: I) -> Dataset
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.names = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// How to shuffle (default [`Shuffle::None`]).
    pub fn shuffle(mut self, shuffle: Shuffle) -> Dataset {
        self.shuffle = shuffle;
        self
    }

    /// Batches of `n` examples (0 is taken as 1); without it, each item
    /// is one example, with no batch axis.
    pub fn batch(mut self, n: usize) -> Dataset {
        self.batch = Some(n.max(1));
        self
    }

    /// Batches of `n` examples (0 is taken as 1) whose components may
    /// differ in shape from example to example: each is padded at the
    /// end of every axis, with zeros (empty strings, false), to the
    /// largest size of that axis in the batch, as `tf.data`'s
    /// `padded_batch` does (and `batch(dynamic_pad=True)`).
    pub fn padded_batch(mut self, n: usize) -> Dataset {
        self.batch = Some(n.max(1));
        self.pad = true;
        self
    }

    /// Whether to drop a last batch smaller than the batch size (default
    /// false: every example arrives, the last batch may be smaller).
    pub fn drop_remainder(mut self, yes: bool) -> Dataset {
        self.drop_remainder = yes;
        self
    }

    /// Passes over the data (default 1).
    pub fn epochs(mut self, n: u64) -> Dataset {
        self.num_epochs = Some(n);
        self
    }

    /// Passes over the data without end.
    pub fn forever(mut self) -> Dataset {
        self.num_epochs = None;
        self
    }

    /// The seed of every random choice (default 0): the same on every
    /// host of a sharded job.
    pub fn seed(mut self, seed: u64) -> Dataset {
        self.seed = seed;
        self
    }

    /// Reader and decoder threads (default: the machine's cores, at most
    /// 4; 0 is taken as 1). The order does not depend on it.
    pub fn threads(mut self, n: usize) -> Dataset {
        self.threads = n.max(1);
        self
    }

    /// This host's part, `index` of `count` (see [`Shard`]): every host
    /// gets the same number of examples per epoch, the parts disjoint.
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::Kind::InvalidArgument) for `count` 0 or
    /// `index >= count`.
    pub fn shard(mut self, index: usize, count: usize) -> Result<Dataset> {
        self.shard = Shard::new(index, count)?;
        Ok(self)
    }

    /// What an uneven split does (default [`Remainder::Drop`]; with
    /// [`Remainder::Pad`] the missing places are padding examples, whose
    /// keys start `<pad>`).
    pub fn remainder(mut self, remainder: Remainder) -> Dataset {
        self.remainder = remainder;
        self
    }

    /// Whether the order may depend on thread timing (default false: a
    /// slow block holds up the ones after it, and the order is a
    /// function of the data, the settings and the seed only).
    pub fn deterministic(mut self, yes: bool) -> Dataset {
        self.deterministic = yes;
        self
    }

    /// Makes the shards interleaved and the checkpoint elastic (default
    /// false). Host `i` of `n` then takes places `i`, `i + n`, `i + 2n`,
    /// ... of one order that every host computes, so that hosts that
    /// have taken as many batches are at one position of it, and a
    /// checkpoint of any of them resumes every host of a new world of
    /// any size ([`shard`](Self::shard)`(j, m)`): the rest of the epoch
    /// exactly once across the new hosts. A checkpoint is then only that
    /// position (the epoch and the places taken); a resumed pipeline
    /// reads again the records its hosts had read but not delivered.
    ///
    /// With [`Shuffle::Buffer`] the buffer becomes one global buffer
    /// simulated over positions (every host computes the same order,
    /// 8 bytes per record per epoch, and reads only its own records, by
    /// position), drained at each epoch's end. With [`Shuffle::None`] or
    /// [`Shuffle::Files`] each host reads every `n`-th record: nearby
    /// records are read together, so each host reads most of each file.
    pub fn elastic(mut self, yes: bool) -> Dataset {
        self.elastic = yes;
        self
    }

    /// Records per block, the unit of reading and decoding (default
    /// [`DEFAULT_BLOCK_SIZE`]).
    pub fn block_size(mut self, n: usize) -> Dataset {
        self.block_size = n.max(1);
        self
    }

    /// What to do with a damaged TFRecord record (default
    /// [`CorruptRecords::Fail`]: the pipeline does not start, and the
    /// error names the file and the offset). With
    /// [`CorruptRecords::Skip`] each file's index is built around its
    /// damaged regions within the budget, as a skipping reader reads
    /// them: the pipeline delivers the intact records (every one exactly
    /// once per epoch) and counts the regions in
    /// [`Loader::skip_stats`]; past the budget it does not start.
    pub fn corrupt_records(mut self, policy: CorruptRecords) -> Dataset {
        self.corrupt = policy;
        self
    }

    /// Adds each example's record key (`FILE:N`, `<pad>:...` for
    /// padding) as a last string component named `__key__`.
    pub fn keys(mut self, yes: bool) -> Dataset {
        self.keys = yes;
        self
    }

    fn config(&self, skips: &SkipLog) -> Result<Config> {
        let source = (self.open)(&Opening {
            threads: self.threads,
            corrupt: self.corrupt.clone(),
            skips: skips.clone(),
        })?;
        let mut h = Fnv::default();
        h.u64(self.batch.map_or(0, |b| b as u64));
        h.u64(self.drop_remainder as u64);
        h.u64(self.pad as u64);
        Ok(Config {
            source,
            decode: self.decode.clone(),
            num_epochs: self.num_epochs,
            seed: self.seed,
            order: self.shuffle.order(),
            shard: self.shard,
            remainder: self.remainder,
            threads: self.threads,
            deterministic: self.deterministic,
            block_size: self.block_size,
            elastic: self.elastic,
            extra: h.finish(),
        })
    }

    /// Opens the source (indexing files as needed) and starts the reader
    /// threads.
    ///
    /// # Errors
    ///
    /// Those of opening the source (a missing or damaged file, naming
    /// it); [`ResourceExhausted`](crate::Kind::ResourceExhausted) if a
    /// thread cannot start.
    pub fn start(&self) -> Result<Loader> {
        self.launch(None)
    }

    /// As [`start`](Self::start), continuing from `checkpoint`, taken
    /// from a loader of this same pipeline (same data, same settings;
    /// the thread count may differ): the batches that follow are those
    /// the first run would have delivered next.
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start), and
    /// [`InvalidArgument`](crate::Kind::InvalidArgument) for a checkpoint
    /// of other data or settings, naming what does not fit.
    pub fn resume(&self, checkpoint: &Checkpoint) -> Result<Loader> {
        self.launch(Some(checkpoint))
    }

    fn launch(&self, checkpoint: Option<&Checkpoint>) -> Result<Loader> {
        let skips = SkipLog::new();
        let cfg = self.config(&skips)?;
        let engine = Engine::start(&cfg, checkpoint)?;
        let mut names = self.names.clone();
        if self.keys {
            names = names.map(|n| {
                n.iter().cloned().chain(["__key__".to_owned()]).collect()
            });
        }
        Ok(Loader {
            engine: Some(engine),
            batch: self.batch,
            pad: self.pad,
            drop_remainder: self.drop_remainder,
            keys: self.keys,
            names,
            batches: 0,
            ended: false,
            skips,
        })
    }
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().min(4))
}

/// A running [`Dataset`]: an iterator of batches that ends with `None`.
/// Dropping it stops and joins its threads.
pub struct Loader {
    engine: Option<Engine>,
    batch: Option<usize>,
    pad: bool,
    drop_remainder: bool,
    keys: bool,
    names: Option<Arc<[String]>>,
    batches: u64,
    ended: bool,
    skips: SkipLog,
}

impl fmt::Debug for Loader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loader")
            .field("engine", &self.engine)
            .field("batch", &self.batch)
            .field("batches", &self.batches)
            .finish_non_exhaustive()
    }
}

impl Loader {
    fn engine(&mut self) -> Result<&mut Engine> {
        self.engine
            .as_mut()
            .ok_or_else(|| Error::cancelled("the loader was stopped"))
    }

    /// The next batch, or `None` once every epoch is delivered.
    ///
    /// # Errors
    ///
    /// Those of reading and decoding, naming the file and the record;
    /// [`Cancelled`](crate::Kind::Cancelled) after a cancel or
    /// [`stop`](Self::stop). After an error, every call returns it.
    pub fn next_batch(&mut self) -> Result<Option<Batch>> {
        self.next_deadline(None)
    }

    /// As [`next_batch`](Self::next_batch), waiting at most `timeout`.
    ///
    /// # Errors
    ///
    /// As [`next_batch`](Self::next_batch), and
    /// [`DeadlineExceeded`](crate::Kind::DeadlineExceeded) when the
    /// timeout passes first; the loader is then unchanged (no example
    /// is lost) and can be asked again.
    pub fn next_timeout(
        &mut self,
        timeout: Duration,
    ) -> Result<Option<Batch>> {
        self.next_deadline(Instant::now().checked_add(timeout))
    }

    fn next_deadline(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<Batch>> {
        if self.ended {
            return Ok(None);
        }
        let want = self.batch.unwrap_or(1);
        let drop_remainder = self.drop_remainder;
        let rows = self.engine()?.next_rows(want, deadline)?;
        if rows.is_empty() || (drop_remainder && rows.len() < want) {
            self.ended = true;
            return Ok(None);
        }
        let batch = self.assemble(&rows)?;
        self.batches += 1;
        Ok(Some(batch))
    }

    fn assemble(&mut self, rows: &[Row]) -> Result<Batch> {
        let mut columns = stack_rows(rows, self.pad)?;
        if self.keys {
            let engine = self.engine()?;
            let keys: Vec<bytes::Bytes> =
                rows.iter().map(|r| engine.key_of(r).into()).collect();
            columns.push(Value::Dense(Tensor::from_data(
                [keys.len()],
                crate::tensor::Data::String(keys),
            )?));
        }
        if self.batch.is_none() {
            columns = columns.iter().map(first_row).collect::<Result<_>>()?;
        }
        let names = self.names.clone().filter(|n| n.len() == columns.len());
        Ok(Batch::new(columns, names))
    }

    /// Where the pipeline is, between two batches: the batches after it
    /// are those a [`Dataset::resume`] from it delivers. Positions only:
    /// small, whatever the records' size.
    ///
    /// # Errors
    ///
    /// [`Cancelled`](crate::Kind::Cancelled) after [`stop`](Self::stop).
    pub fn checkpoint(&self) -> Result<Checkpoint> {
        self.engine
            .as_ref()
            .map(Engine::checkpoint)
            .ok_or_else(|| Error::cancelled("the loader was stopped"))
    }

    /// The damaged regions skipped when the files were indexed
    /// ([`Dataset::corrupt_records`]).
    pub fn skip_stats(&self) -> SkipStats {
        self.skips.stats()
    }

    /// Examples handed out so far, over every run the checkpoints chain.
    pub fn examples(&self) -> u64 {
        self.engine.as_ref().map_or(0, Engine::delivered)
    }

    /// Records in the source, every file together (one epoch before
    /// sharding): with [`Dataset::shard`], what each host's equal part
    /// leaves out or pads follows from it.
    pub fn records(&self) -> u64 {
        self.engine
            .as_ref()
            .map_or(0, |e| e.source().counts().iter().sum())
    }

    /// Batches handed out by this loader.
    pub fn batches(&self) -> u64 {
        self.batches
    }

    /// A handle that cancels this loader from another thread.
    ///
    /// # Errors
    ///
    /// [`Cancelled`](crate::Kind::Cancelled) after [`stop`](Self::stop).
    pub fn canceller(&self) -> Result<Canceller> {
        self.engine
            .as_ref()
            .map(Engine::canceller)
            .ok_or_else(|| Error::cancelled("the loader was stopped"))
    }

    /// Stops and joins the threads now (dropping the loader does the
    /// same).
    ///
    /// # Errors
    ///
    /// The error that stopped the pipeline, if one did.
    pub fn stop(&mut self) -> Result<()> {
        let Some(mut engine) = self.engine.take() else {
            return Ok(());
        };
        engine.stop();
        match engine.error() {
            Some(e) if e.kind() != crate::Kind::Cancelled => Err(e),
            _ => Ok(()),
        }
    }
}

/// Row 0 of a one-row value, without the row axis.
fn first_row(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Dense(t) => Value::Dense(t.index(0)?),
        Value::Sparse(s) => Value::Sparse(
            s.unstack()?
                .into_iter()
                .next()
                .ok_or_else(|| Error::internal("an empty example"))?,
        ),
    })
}

impl Iterator for Loader {
    type Item = Result<Batch>;

    /// The next batch; after an error has been yielded once, `None`.
    fn next(&mut self) -> Option<Result<Batch>> {
        if self.engine.as_ref().is_some_and(Engine::failed) {
            return None;
        }
        self.next_batch().transpose()
    }
}
