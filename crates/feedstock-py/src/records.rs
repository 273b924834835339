//! Record ranges of TFRecord files, for schedulers other than the
//! engine: `feedstock.ray` plans Ray Data read tasks with
//! [`tfrecord_offsets`] (where each record starts, from the record
//! index: its sidecar or one verifying scan) and runs each task with a
//! [`TfRecordRange`], which reads a run of consecutive records with the
//! library's TFRecord reader (both CRCs of every record checked) and
//! parses them with a feature spec into one column per feature.
//!
//! The range reader reads forward from the range's first record: a local
//! uncompressed file is entered at the record's offset; a compressed
//! file is inflated from its start (a compressed stream cannot be
//! entered in the middle), and a file behind a URL is read from its
//! start, the records before the range being read and checked, not
//! parsed.

use std::fs::File;
use std::io::Read;
use std::sync::Mutex;

use bytes::Bytes;
use feedstock::decode::example::{parse_example, FeatureSpec};
use feedstock::decode::Records;
use feedstock::io::fs::default_fs;
use feedstock::io::index::RecordIndex;
use feedstock::io::tfrecord::{
    CorruptRecords, Position, Reader, ReaderBuilder, Record, SkipBudget,
    SkipLog,
};
use feedstock::{Data, Error, Kind, Result, Tensor, Value};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::arrays::value_to_py;
use crate::dataset::compression;
use crate::errors::IntoPyResult;
use crate::graph::feature_spec;

/// Where every record of the TFRecord file `path` starts in its
/// (decompressed) stream, then the stream's length: a `uint64` array of
/// `records + 1` entries. From the file's index sidecar (checked against
/// the file) when it has one, else from one scan of the file that checks
/// every record's framing and CRCs. `compression` is `""`, `"GZIP"`,
/// `"ZLIB"` or None (from the extension). The GIL is released meanwhile.
///
/// With `skip_corrupt`, a `(max_per_file, max_per_run, max_fraction)`
/// budget, a damaged file is indexed around its damaged regions within
/// the budget (the starts are those of its intact records); the result
/// is then `(starts, regions skipped, bytes skipped)`.
#[pyfunction]
#[pyo3(signature = (path, compression=None, skip_corrupt=None))]
pub fn tfrecord_offsets<'py>(
    py: Python<'py>,
    path: &str,
    compression: Option<&str>,
    skip_corrupt: Option<(Option<u64>, Option<u64>, Option<f64>)>,
) -> PyResult<Bound<'py, PyAny>> {
    let c = self::compression(compression)?;
    let Some(budget) = skip_corrupt else {
        let starts = py
            .detach(|| RecordIndex::open(&*default_fs(), path, c))
            .py_err()?
            .record_starts();
        return Ok(starts.to_vec().into_pyarray(py).into_any());
    };
    let policy = CorruptRecords::Skip(crate::dataset::budget(budget));
    let log = SkipLog::new();
    let index = py
        .detach(|| {
            let fs = default_fs();
            match RecordIndex::open(&*fs, path, c) {
                Err(e) if e.kind() == feedstock::Kind::DataLoss => {
                    RecordIndex::build_skipping(&*fs, path, c, &policy, &log)
                }
                other => other,
            }
        })
        .py_err()?;
    let stats = log.stats();
    let starts = index.record_starts().to_vec().into_pyarray(py).into_any();
    Ok((starts, stats.skipped, stats.skipped_bytes)
        .into_pyobject(py)?
        .into_any())
}

/// The TFRecord reader a range reads with: of a local file entered at an
/// offset, or of any file read from its start.
enum Source {
    Local(Reader<File>),
    Stream(Reader<Box<dyn Read + Send>>),
}

impl Source {
    fn read_record(&mut self) -> Result<Option<Record>> {
        match self {
            Source::Local(r) => r.read_record(),
            Source::Stream(r) => r.read_record(),
        }
    }
}

/// A parsed block for Python: `(name, value)` pairs and the keys.
type Block<'py> =
    (Vec<(String, Bound<'py, PyAny>)>, Option<Bound<'py, PyAny>>);

/// What a range has left to read.
struct Left {
    source: Source,
    /// Records of the range not yet read.
    count: u64,
    /// The number of the next record in the file.
    next: u64,
}

/// A run of `count` consecutive records of a TFRecord file, from record
/// number `start` (which begins at byte `offset` of the decompressed
/// stream, as [`tfrecord_offsets`] gives it), parsed with `features` (the
/// entries `Graph.parse_example` takes) block by block:
/// `next_block(rows)` gives up to `rows` records as a list of
/// `(name, value)` in the spec's order, dense features as numpy arrays
/// of shape `[rows, *shape]`, variable-length ones as
/// `SparseTensorValue`s; with `keys=True`, paired with an object array
/// of the records' keys `FILE:OFFSET` as `bytes` (None without); None
/// once the range is read. A file that holds
/// fewer records than the range asks for (it changed since it was
/// indexed) is DataLossError naming it; a damaged record, one naming
/// the file and the offset; an Example that does not fit the spec, one
/// naming the record's key `FILE:OFFSET`.
#[pyclass(module = "feedstock._native", name = "TfRecordRange")]
pub struct TfRecordRange {
    path: String,
    spec: FeatureSpec,
    keys: bool,
    left: Mutex<Left>,
}

impl std::fmt::Debug for TfRecordRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TfRecordRange")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn open(
    path: &str,
    compression: Option<feedstock::io::compression::Compression>,
    start: u64,
    offset: u64,
    skip_corrupt: bool,
) -> Result<Source> {
    let mut b = ReaderBuilder::new();
    if let Some(c) = compression {
        b.compression(c);
    }
    if skip_corrupt {
        // The driver indexed the file around its damaged regions within
        // the budget; the range skips the same regions, found the same
        // way, and reads the intact records the index counted.
        b.corrupt_records(CorruptRecords::Skip(SkipBudget::new()));
    }
    if start > 0 && !path.contains("://") {
        let pos = Position {
            offset,
            index: start,
        };
        return Ok(Source::Local(b.open_at(path, pos)?));
    }
    let mut r = Source::Stream(b.open_in(&*default_fs(), path)?);
    for _ in 0..start {
        if r.read_record()?.is_none() {
            return Err(short(path, start));
        }
    }
    Ok(r)
}

fn short(path: &str, wanted: u64) -> Error {
    Error::new(
        Kind::DataLoss,
        format!(
            "the file ends before record {wanted} that its index counted: \
             it changed since it was indexed"
        ),
    )
    .with_file(path)
}

/// One block read and parsed: the columns, and where each record was.
struct ParsedBlock {
    columns: Vec<(String, Value)>,
    offsets: Vec<u64>,
}

impl TfRecordRange {
    /// Reads and parses the next block of at most `rows` records.
    fn read_block(&self, rows: usize) -> Result<Option<ParsedBlock>> {
        let mut left = self.left.lock().unwrap_or_else(|p| p.into_inner());
        if left.count == 0 {
            return Ok(None);
        }
        let n = left.count.min(rows.max(1) as u64);
        let mut data: Vec<Bytes> = Vec::with_capacity(n as usize);
        let mut offsets = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let at = left.next;
            let r = left
                .source
                .read_record()?
                .ok_or_else(|| short(&self.path, at))?;
            offsets.push(r.position.offset);
            data.push(r.value);
            left.next += 1;
        }
        left.count -= n;
        let parsed = match parse_example(&data[..], &self.spec) {
            Ok(p) => p,
            Err(_) => {
                // Parse again with keys, to name the record.
                let keys: Vec<String> = offsets
                    .iter()
                    .map(|o| format!("{}:{o}", self.path))
                    .collect();
                let records = Records::new(&data).with_keys(&keys)?;
                parse_example(records, &self.spec)?
            }
        };
        let names: Vec<String> =
            self.spec.names().map(str::to_owned).collect();
        let columns = names.into_iter().zip(parsed.into_values());
        Ok(Some(ParsedBlock {
            columns: columns.collect(),
            offsets,
        }))
    }
}

#[pymethods]
impl TfRecordRange {
    #[new]
    #[pyo3(signature = (path, features, start, offset, count, compression=None, *, keys=false, skip_corrupt=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: String,
        features: &Bound<'_, PyList>,
        start: u64,
        offset: u64,
        count: u64,
        compression: Option<&str>,
        keys: bool,
        skip_corrupt: bool,
    ) -> PyResult<TfRecordRange> {
        let spec = feature_spec(py, features)?;
        let c = self::compression(compression)?;
        let source = py
            .detach(|| open(&path, c, start, offset, skip_corrupt))
            .py_err()?;
        Ok(TfRecordRange {
            path,
            spec,
            keys,
            left: Mutex::new(Left {
                source,
                count,
                next: start,
            }),
        })
    }

    /// The next block of at most `rows` records, parsed: a list of
    /// `(name, value)` and the records' keys (None unless asked for);
    /// None once the range is read.
    fn next_block<'py>(
        &self,
        py: Python<'py>,
        rows: usize,
    ) -> PyResult<Option<Block<'py>>> {
        let parsed = py.detach(|| self.read_block(rows)).py_err()?;
        let Some(ParsedBlock { columns, offsets }) = parsed else {
            return Ok(None);
        };
        let columns = columns
            .into_iter()
            .map(|(name, v)| Ok((name, value_to_py(py, v)?)))
            .collect::<PyResult<Vec<_>>>()?;
        let keys = if self.keys {
            let keys: Vec<Bytes> = offsets
                .iter()
                .map(|o| Bytes::from(format!("{}:{o}", self.path)))
                .collect();
            let n = keys.len();
            let t = Tensor::from_data([n], Data::String(keys)).py_err()?;
            Some(value_to_py(py, Value::Dense(t))?)
        } else {
            None
        };
        Ok(Some((columns, keys)))
    }
}

/// One TFRecord file read by record number through its index (its
/// sidecar, or one scan): `len()` records, `read(i)` the data of record
/// `i`, both CRCs checked. An uncompressed local file is read by
/// position (one positioned read per record); a compressed one is
/// inflated from its start for each read.
#[pyclass(module = "feedstock._native", frozen, name = "TfRecordIndex")]
pub struct TfRecordIndex {
    index: RecordIndex,
    fs: std::sync::Arc<dyn feedstock::io::fs::FileSystem>,
    handle: Option<std::sync::Arc<dyn feedstock::io::fs::ReadAt>>,
}

impl std::fmt::Debug for TfRecordIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TfRecordIndex")
            .field("path", &self.index.path())
            .field("records", &self.index.len())
            .finish_non_exhaustive()
    }
}

#[pymethods]
impl TfRecordIndex {
    #[new]
    #[pyo3(signature = (path, compression=None))]
    fn new(
        py: Python<'_>,
        path: &str,
        compression: Option<&str>,
    ) -> PyResult<TfRecordIndex> {
        let c = self::compression(compression)?;
        let fs = default_fs();
        let (index, handle) = py
            .detach(|| -> Result<_> {
                let index = RecordIndex::open(&*fs, path, c)?;
                let handle = match index.compression() {
                    feedstock::io::compression::Compression::None => {
                        fs.open_read_at(path)?
                    }
                    _ => None,
                };
                Ok((index, handle))
            })
            .py_err()?;
        Ok(TfRecordIndex { index, fs, handle })
    }

    fn __len__(&self) -> usize {
        self.index.len() as usize
    }

    /// The data of record `i` (IndexError past the end).
    fn read<'py>(
        &self,
        py: Python<'py>,
        i: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        if i >= self.index.len() {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "record {i} of a file of {} records",
                self.index.len()
            )));
        }
        let rec = py
            .detach(|| {
                self.index.read_many_from(
                    &*self.fs,
                    self.handle.as_deref(),
                    &[i],
                )
            })
            .py_err()?;
        Ok(PyBytes::new(py, &rec[0].value))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TfRecordRange>()?;
    m.add_class::<TfRecordIndex>()?;
    m.add_function(wrap_pyfunction!(tfrecord_offsets, m)?)
}
