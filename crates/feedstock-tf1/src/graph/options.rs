//! The settings of the graph's builder methods: producers, readers, CSV
//! decoding, batching and shuffling, each with TensorFlow's defaults.

use feedstock::input::shard::Remainder;
use feedstock::io::tfrecord::CorruptRecords;
use feedstock::io::Compression;
use feedstock::queue::PartialShape;

use super::Output;

/// The settings every producer shares (TensorFlow's `num_epochs`,
/// `shuffle`, `seed`, `capacity`, `name`).
#[derive(Debug, Clone, PartialEq)]
pub struct ProducerOptions {
    /// Stop after this many epochs (default: never).
    pub num_epochs: Option<u64>,
    /// Shuffle within each epoch (default true, as TensorFlow).
    pub shuffle: bool,
    /// The shuffle's seed (default: drawn at random).
    pub seed: Option<u64>,
    /// The queue's capacity (default 32).
    pub capacity: usize,
    /// The queue's name (default `input_producer`, made unique).
    pub name: Option<String>,
}

impl Default for ProducerOptions {
    fn default() -> ProducerOptions {
        ProducerOptions {
            num_epochs: None,
            shuffle: true,
            seed: None,
            capacity: 32,
            name: None,
        }
    }
}

/// Which part of the files a [`Graph::sharded_string_input_producer`](crate::Graph::sharded_string_input_producer)
/// reads: host `index` of `count` (its rank and the world size), with a
/// remainder policy; see
/// [`StringInputProducerBuilder::shard`](feedstock::input::StringInputProducerBuilder::shard).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardOptions {
    /// This host's index (rank), below `count`.
    pub index: usize,
    /// The number of hosts (world size).
    pub count: usize,
    /// What to do with the records some hosts have and others do not.
    pub remainder: Remainder,
}

/// Where a [`Graph::string_input_producer`](crate::Graph::string_input_producer) gets its strings.
#[derive(Debug, Clone, PartialEq)]
pub enum Strings {
    /// A list known when the graph is built.
    List(Vec<String>),
    /// A rank-1 string output, evaluated once, when the producer is first
    /// used: typically [`Graph::match_filenames_once`](crate::Graph::match_filenames_once).
    Output(Output),
}

impl<S: Into<String>> FromIterator<S> for Strings {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Strings {
        Strings::List(iter.into_iter().map(Into::into).collect())
    }
}

impl From<Output> for Strings {
    fn from(o: Output) -> Strings {
        Strings::Output(o)
    }
}

/// A record format, with its settings (TensorFlow's reader classes).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ReaderKind {
    /// `tf.TextLineReader`: one record per line.
    TextLine {
        /// Lines skipped at the start of every file.
        skip_header_lines: u64,
        /// Reads an empty file as no lines, as TensorFlow does, instead of
        /// failing DataLoss naming it.
        allow_empty_files: bool,
    },
    /// `tf.FixedLengthRecordReader`.
    FixedLength {
        /// Bytes per record.
        record_bytes: u64,
        /// Bytes skipped at the start of every file.
        header_bytes: u64,
        /// Bytes ignored at the end of every file.
        footer_bytes: u64,
        /// Bytes between the starts of two records (0: `record_bytes`).
        hop_bytes: u64,
        /// The files' compression.
        compression: Compression,
    },
    /// `tf.TFRecordReader`.
    TfRecord {
        /// The files' compression.
        compression: Compression,
        /// What the reader does with a damaged record: fail naming the
        /// file and offset (the default, as TensorFlow), or skip within a
        /// budget. Skipped regions are counted in the session's
        /// [`stats`](crate::Session::stats) (`skips`).
        corrupt_records: CorruptRecords,
        /// Reads an empty file as no records, as TensorFlow does, instead
        /// of failing DataLoss naming it.
        allow_empty_files: bool,
    },
    /// `tf.WholeFileReader`: one record per file.
    WholeFile,
    /// `tf.IdentityReader`: the work item is the record.
    Identity,
}

impl ReaderKind {
    /// `tf.TextLineReader` skipping `skip_header_lines` at the start of
    /// every file; an empty file fails DataLoss naming it.
    pub fn text_line(skip_header_lines: u64) -> ReaderKind {
        ReaderKind::TextLine {
            skip_header_lines,
            allow_empty_files: false,
        }
    }

    /// `tf.TFRecordReader` with TensorFlow's handling of a damaged record:
    /// fail, naming the file and offset.
    pub fn tf_record(compression: Compression) -> ReaderKind {
        ReaderKind::TfRecord {
            compression,
            corrupt_records: CorruptRecords::Fail,
            allow_empty_files: false,
        }
    }
}

/// A part of a sparse tensor, as
/// [`op::SparsePart`](crate::op::SparsePart) gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SparsePart {
    /// `[nnz, rank]` int64: the position of each stored value.
    Indices,
    /// `[nnz]`: the stored values.
    Values,
    /// `[rank]` int64: the shape of the dense form.
    DenseShape,
}

/// What [`Graph::reader_state`](crate::Graph::reader_state) asks of a reader, as the methods of
/// TensorFlow's `ReaderBase` of the same names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReaderStateOp {
    /// The records it has returned, an int64 scalar.
    NumRecordsProduced,
    /// The files it has finished, an int64 scalar: a file counts once the
    /// reader has seen its end (with `read`, on the call after its last
    /// record; a `read_up_to` batch that ends a file counts it).
    NumWorkUnitsCompleted,
    /// Back to a clean slate: no current file, counters at zero; the next
    /// read takes a new file name from its queue. Output: true.
    Reset,
    /// Its position (counters, current file, place in it) as a string
    /// scalar, for `RestoreState`.
    SerializeState,
    /// Resumes at a position `SerializeState` gave (its one input).
    /// Output: true.
    RestoreState,
}

/// The settings of a [`DecodeCsv`](crate::op::DecodeCsv) beyond the
/// record defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvOptions {
    /// The field delimiter (default `,`).
    pub field_delim: u8,
    /// Whether `"` quotes fields (default true).
    pub use_quote_delim: bool,
    /// Field text that stands for a missing value.
    pub na_value: Option<String>,
    /// Decode only these columns (0-based, increasing).
    pub select_cols: Option<Vec<usize>>,
}

impl Default for CsvOptions {
    fn default() -> CsvOptions {
        CsvOptions {
            field_delim: b',',
            use_quote_delim: true,
            na_value: None,
            select_cols: None,
        }
    }
}

pub use feedstock::decode::image::ImageFormat;

/// One entry of Python's indexing `x[...]`
/// ([`StridedSlice::index`](crate::op::StridedSlice::index)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SliceDim {
    /// `x[i]`: one position (negative counts from the end); the
    /// dimension is removed.
    At(i64),
    /// `x[start:stop:step]`, Python's slice semantics (a missing bound is
    /// the end the step walks from or to; negative bounds count from the
    /// end; bounds are clamped).
    Range {
        /// First position.
        start: Option<i64>,
        /// End position (excluded).
        stop: Option<i64>,
        /// Step; not 0.
        step: i64,
    },
    /// `x[tf.newaxis]`: a new dimension of size 1.
    NewAxis,
    /// `x[...]`: as many full dimensions as the other entries leave.
    Ellipsis,
}

/// The settings of a batching node (TensorFlow's `tf.train.batch`,
/// `shuffle_batch` and their `_join` / `maybe_` forms).
#[derive(Debug, Clone, PartialEq)]
pub struct BatchOptions {
    /// Examples per batch (required).
    pub batch_size: usize,
    /// Runner threads for a single tensor list (default 1); a `_join`
    /// batch runs one thread per list instead.
    pub num_threads: usize,
    /// The queue's capacity (default 32).
    pub capacity: usize,
    /// Each input is a batch of examples along its first axis.
    pub enqueue_many: bool,
    /// Per-example shapes, one per component, each compatible with its
    /// inputs' static shapes; they replace the inferred ones.
    pub shapes: Option<Vec<PartialShape>>,
    /// Pad variable-size components to the largest in each batch (FIFO
    /// only).
    pub dynamic_pad: bool,
    /// Deliver the examples left at the end as a smaller batch.
    pub allow_smaller_final_batch: bool,
    /// `Some` makes a shuffle batch.
    pub shuffle: Option<ShuffleOptions>,
    /// The queue's name (default `batch` or `shuffle_batch`, made
    /// unique).
    pub name: Option<String>,
}

impl Default for BatchOptions {
    fn default() -> BatchOptions {
        BatchOptions {
            batch_size: 0,
            num_threads: 1,
            capacity: 32,
            enqueue_many: false,
            shapes: None,
            dynamic_pad: false,
            allow_smaller_final_batch: false,
            shuffle: None,
            name: None,
        }
    }
}

/// The settings of a shuffle batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShuffleOptions {
    /// Elements kept back from dequeues while the input lasts.
    pub min_after_dequeue: usize,
    /// The shuffle's seed (default: drawn at random).
    pub seed: Option<u64>,
}
