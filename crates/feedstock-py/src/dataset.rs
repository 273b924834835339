//! The engine's front door for Python: `feedstock._native.Dataset`, a
//! [`Dataset`] and the [`Loader`] it starts, which `feedstock.Pipeline`
//! runs on whenever its arguments are ones the engine covers.
//!
//! Batches cross into Python without a copy (the [`arrays`](crate::arrays)
//! module); the GIL is released while a batch is waited for, in slices
//! between which Python's signal handlers run, so that Ctrl-C interrupts
//! a wait without losing an example. Errors are raised through
//! [`errors`](crate::errors), naming the file and the record.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use feedstock::dataset::{
    Checkpoint, Dataset, FixedLengthSource, Loader, Shuffle, TextLineSource,
};
use feedstock::input::shard::Remainder;
use feedstock::io::compression::Compression;
use feedstock::io::fs::default_fs;
use feedstock::io::tfrecord::{CorruptRecords, SkipBudget, SkipStats};
use feedstock::{DType, Error, Kind, Tensor};
use feedstock_tf1::GraphFn;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::arrays::{numpy_to_tensor, value_to_py};
use crate::errors::IntoPyResult;
use crate::graph::{feature_spec, PyGraph, PyOutput};

/// How long one wait for a batch runs without the GIL before Python's
/// signal handlers get a turn.
const SLICE: Duration = Duration::from_millis(100);

/// A batch for Python: its component names (if any) and values.
type NamedValues<'py> = (Option<Vec<String>>, Vec<Bound<'py, PyAny>>);

/// The running part: the loader, or once it stopped, where it stopped.
#[derive(Debug, Default)]
struct Running {
    loader: Option<Loader>,
    /// The checkpoint taken when the loader stopped.
    last: Option<Vec<u8>>,
    /// Its skipped regions, when it stopped.
    last_skips: Option<SkipStats>,
}

/// A map function as the engine runs it: the part of a graph between
/// the example's placeholders and the map's outputs, evaluated per
/// example in the reader threads (no GIL). Building it raises
/// FailedPreconditionError naming the node when the graph keeps state
/// between examples (a random op, a queue, ...) or calls Python.
#[pyclass(module = "feedstock._native", frozen, name = "GraphFn")]
#[derive(Debug, Clone)]
pub struct PyGraphFn(Arc<GraphFn>);

#[pymethods]
impl PyGraphFn {
    /// The function from `inputs` (placeholders of `graph`) to
    /// `outputs`.
    #[new]
    fn new(
        graph: &PyGraph,
        inputs: Vec<PyOutput>,
        outputs: Vec<PyOutput>,
    ) -> PyResult<PyGraphFn> {
        let ins: Vec<_> = inputs.iter().map(|o| o.0).collect();
        let outs: Vec<_> = outputs.iter().map(|o| o.0).collect();
        Ok(PyGraphFn(Arc::new(
            GraphFn::new(&graph.0, &ins, &outs).py_err()?,
        )))
    }

    /// The hash of the function's graph, as 16 hex digits: the same in
    /// every process that builds the same graph.
    #[getter]
    fn fingerprint(&self) -> String {
        format!("{:016x}", self.0.fingerprint())
    }
}

/// The record layout and reader settings of a file source, as
/// `feedstock.Pipeline`'s `reader_options` give them.
#[derive(Debug, FromPyObject)]
pub struct ReaderOptions {
    #[pyo3(item)]
    skip_header_lines: u64,
    #[pyo3(item)]
    allow_empty_files: bool,
    #[pyo3(item)]
    record_bytes: Option<u64>,
    #[pyo3(item)]
    header_bytes: u64,
    #[pyo3(item)]
    footer_bytes: u64,
    #[pyo3(item)]
    hop_bytes: u64,
    /// TFRecord: skip damaged regions within this budget
    /// (`max_per_file`, `max_per_run`, `max_fraction`), or fail.
    #[pyo3(item)]
    skip_corrupt: Option<(Option<u64>, Option<u64>, Option<f64>)>,
}

/// A skip budget as Python gives it: `(max_per_file, max_per_run,
/// max_fraction)`, each optional.
pub(crate) fn budget(
    (per_file, per_run, fraction): (Option<u64>, Option<u64>, Option<f64>),
) -> SkipBudget {
    let mut b = SkipBudget::new();
    if let Some(n) = per_file {
        b = b.max_per_file(n);
    }
    if let Some(n) = per_run {
        b = b.max_per_run(n);
    }
    if let Some(f) = fraction {
        b = b.max_fraction(f);
    }
    b
}

/// The dataset of `files` read as `format`.
fn file_dataset(
    files: Vec<String>,
    format: &str,
    compression: Option<Compression>,
    opts: Option<ReaderOptions>,
) -> PyResult<Dataset> {
    let opts = opts.unwrap_or(ReaderOptions {
        skip_header_lines: 0,
        allow_empty_files: false,
        record_bytes: None,
        header_bytes: 0,
        footer_bytes: 0,
        hop_bytes: 0,
        skip_corrupt: None,
    });
    match format {
        "tfrecord" => {
            let d = Dataset::tfrecord_in(default_fs(), files, compression)
                .py_err()?;
            Ok(match opts.skip_corrupt {
                None => d,
                Some(b) => d.corrupt_records(CorruptRecords::Skip(budget(b))),
            })
        }
        "text" => {
            let mut b = TextLineSource::builder();
            b.skip_header_lines(opts.skip_header_lines)
                .allow_empty_files(opts.allow_empty_files);
            if let Some(c) = compression {
                b.compression(c);
            }
            Dataset::text_lines(files, &b).py_err()
        }
        "fixed_length" => {
            let n = opts.record_bytes.ok_or_else(|| {
                PyValueError::new_err("fixed_length records need record_bytes")
            })?;
            let mut b = FixedLengthSource::builder(n);
            b.header_bytes(opts.header_bytes)
                .footer_bytes(opts.footer_bytes)
                .hop_bytes(opts.hop_bytes);
            if let Some(c) = compression {
                b.compression(c);
            }
            Dataset::fixed_length(files, &b).py_err()
        }
        "whole_file" => Dataset::whole_files(files).py_err(),
        other => Err(PyValueError::new_err(format!(
            "unknown format {other:?}: tfrecord, text, fixed_length or whole_file"
        ))),
    }
}

/// A pipeline of the engine: files (TFRecord, text lines, fixed-length
/// records, whole files) parsed with a feature spec or not, or arrays in
/// memory; mapped by a graph function; shuffled, batched, sharded;
/// iterated with `next()`, checkpointed with `checkpoint()` and resumed
/// with `start(checkpoint)`.
#[pyclass(module = "feedstock._native", name = "Dataset")]
#[derive(Debug)]
pub struct PyDataset {
    dataset: Dataset,
    running: Mutex<Running>,
}

pub(crate) fn compression(
    name: Option<&str>,
) -> PyResult<Option<Compression>> {
    Ok(match name {
        None => None,
        Some("") => Some(Compression::None),
        Some("GZIP") => Some(Compression::Gzip),
        Some("ZLIB") => Some(Compression::Zlib),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "compression must be \"\", \"GZIP\" or \"ZLIB\", not {other:?}"
            )))
        }
    })
}

fn shuffle(kind: &str, buffer: usize) -> PyResult<Shuffle> {
    Ok(match kind {
        "none" => Shuffle::None,
        "files" => Shuffle::Files,
        "buffer" => Shuffle::Buffer(buffer),
        "global" => Shuffle::Global,
        other => {
            return Err(PyValueError::new_err(format!(
                "shuffle must be none, files, buffer or global, not {other:?}"
            )))
        }
    })
}

fn remainder(name: &str) -> PyResult<Remainder> {
    match name {
        "drop" => Ok(Remainder::Drop),
        "pad" => Ok(Remainder::Pad),
        other => Err(PyValueError::new_err(format!(
            "remainder must be \"drop\" or \"pad\", not {other:?}"
        ))),
    }
}

impl PyDataset {
    fn lock(&self) -> std::sync::MutexGuard<'_, Running> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[pymethods]
impl PyDataset {
    /// `files` (paths or URLs) read as `format` (`"tfrecord"`,
    /// `"text"`, `"fixed_length"`, `"whole_file"`, with
    /// `reader_options`, a dict of every key of [`ReaderOptions`]),
    /// parsed with `features` (entries as `Graph.parse_example` takes
    /// them), or `arrays`, a list of `(name, array, dtype)`; then mapped
    /// by `map` (a `GraphFn` of the example's components) into
    /// components named `names`. `shuffle` is `"none"`, `"files"`,
    /// `"buffer"` (of `buffer` examples) or `"global"`; `num_epochs`
    /// None runs without end; `shard` is `(index, count)`.
    #[new]
    #[pyo3(signature = (
        files=None, *, format="tfrecord", compression=None,
        reader_options=None, features=None, arrays=None, map=None,
        names=None, batch_size=1, drop_remainder=false,
        num_epochs=Some(1), shuffle="none", buffer=0, seed=0, threads=1,
        shard=None, remainder="drop", keys=false, elastic=false
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        files: Option<Vec<String>>,
        format: &str,
        compression: Option<&str>,
        reader_options: Option<ReaderOptions>,
        features: Option<&Bound<'_, PyList>>,
        arrays: Option<Vec<(String, Bound<'_, PyAny>, String)>>,
        map: Option<PyGraphFn>,
        names: Option<Vec<String>>,
        batch_size: usize,
        drop_remainder: bool,
        num_epochs: Option<u64>,
        shuffle: &str,
        buffer: usize,
        seed: u64,
        threads: usize,
        shard: Option<(usize, usize)>,
        remainder: &str,
        keys: bool,
        elastic: bool,
    ) -> PyResult<PyDataset> {
        let mut d = match (files, arrays) {
            (Some(files), None) => {
                let c = self::compression(compression)?;
                let d = file_dataset(files, format, c, reader_options)?;
                match features {
                    Some(f) => d.parse(feature_spec(py, f)?),
                    None => d.names(["value"]),
                }
            }
            (None, Some(arrays)) => {
                let mut columns: Vec<(String, Tensor)> = Vec::new();
                for (name, array, dtype) in arrays {
                    let dt = DType::from_name(&dtype).py_err()?;
                    columns.push((name, numpy_to_tensor(py, &array, dt)?));
                }
                Dataset::arrays(columns).py_err()?
            }
            _ => {
                return Err(PyValueError::new_err(
                    "give exactly one of files and arrays",
                ))
            }
        };
        if let Some(PyGraphFn(f)) = map {
            let label = format!("graph {:016x}", f.fingerprint());
            d = d.map(&label, move |example| f.call(example));
        }
        if let Some(names) = names {
            d = d.names(names);
        }
        d = d
            .shuffle(self::shuffle(shuffle, buffer)?)
            .batch(batch_size)
            .drop_remainder(drop_remainder)
            .seed(seed)
            .threads(threads)
            .remainder(self::remainder(remainder)?)
            .keys(keys)
            .elastic(elastic);
        d = match num_epochs {
            Some(n) => d.epochs(n),
            None => d.forever(),
        };
        if let Some((index, count)) = shard {
            d = d.shard(index, count).py_err()?;
        }
        Ok(PyDataset {
            dataset: d,
            running: Mutex::default(),
        })
    }

    /// Starts the pipeline (stopping a running one first), from the
    /// beginning or from `checkpoint` (bytes of `checkpoint()`);
    /// InvalidArgumentError for a checkpoint of other data or settings.
    #[pyo3(signature = (checkpoint=None))]
    fn start(
        &self,
        py: Python<'_>,
        checkpoint: Option<&[u8]>,
    ) -> PyResult<()> {
        self.stop(py)?;
        let cp = checkpoint
            .map(Checkpoint::from_bytes)
            .transpose()
            .py_err()?;
        let d = &self.dataset;
        let loader = py
            .detach(|| match &cp {
                Some(cp) => d.resume(cp),
                None => d.start(),
            })
            .py_err()?;
        let mut r = self.lock();
        r.loader = Some(loader);
        r.last = None;
        Ok(())
    }

    /// The next batch as `(names, values)` (names None when the
    /// components have none), or None once every epoch is delivered.
    /// The GIL is released while waiting.
    fn next<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<NamedValues<'py>>> {
        let batch = loop {
            let r = py.detach(|| {
                let mut r = self.lock();
                match r.loader.as_mut() {
                    Some(l) => l.next_timeout(SLICE),
                    None => Err(Error::new(
                        Kind::FailedPrecondition,
                        "the dataset is not started",
                    )),
                }
            });
            match r {
                Err(e) if e.kind() == Kind::DeadlineExceeded => {
                    py.check_signals()?;
                }
                other => break other.py_err()?,
            }
        };
        let Some(batch) = batch else {
            return Ok(None);
        };
        let names = batch.names().map(<[String]>::to_vec);
        let values = batch
            .into_components()
            .into_iter()
            .map(|v| value_to_py(py, v))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Some((names, values)))
    }

    /// Where the pipeline is, as bytes for `start(checkpoint)`: the
    /// running loader's position, or where it stopped; None before it
    /// ever started.
    fn checkpoint<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let r = self.lock();
        let bytes = match (&r.loader, &r.last) {
            (Some(l), _) => Some(l.checkpoint().py_err()?.to_bytes()),
            (None, Some(b)) => Some(b.clone()),
            (None, None) => None,
        };
        Ok(bytes.map(|b| PyBytes::new(py, &b)))
    }

    /// Records in the source (all files, one epoch, before sharding); 0
    /// before the start.
    fn records(&self) -> u64 {
        self.lock().loader.as_ref().map_or(0, Loader::records)
    }

    /// The damaged regions skipped when the files were indexed (the
    /// running loader's, or the last one's), as
    /// `{"skipped", "skipped_bytes", "files": [...]}`; None before a run.
    fn skip_stats<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let r = self.lock();
        let stats = match (&r.loader, &r.last_skips) {
            (Some(l), _) => Some(l.skip_stats()),
            (None, s) => s.clone(),
        };
        stats
            .map(|s| crate::graph::skip_stats_dict(py, &s))
            .transpose()
    }

    /// Examples delivered, over every run the checkpoints chain.
    fn examples(&self) -> u64 {
        self.lock().loader.as_ref().map_or(0, Loader::examples)
    }

    /// Stops and joins the threads, keeping the checkpoint of where they
    /// stopped; raises the error that stopped them, if one did.
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        let taken = {
            let mut r = self.lock();
            let taken = r.loader.take();
            if let Some(l) = &taken {
                r.last = l.checkpoint().ok().map(|c| c.to_bytes());
                r.last_skips = Some(l.skip_stats());
            }
            taken
        };
        match taken {
            Some(mut l) => py.detach(move || l.stop()).py_err(),
            None => Ok(()),
        }
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyGraphFn>()?;
    m.add_class::<PyDataset>()
}
