//! The engine's front door for Python: `feedstock._native.Dataset`, a
//! [`Dataset`] and the [`Loader`] it starts, which `feedstock.Pipeline`
//! runs on whenever its arguments are ones the engine covers.
//!
//! Batches cross into Python without a copy (the [`arrays`](crate::arrays)
//! module); the GIL is released while a batch is waited for, in slices
//! between which Python's signal handlers run, so that Ctrl-C interrupts
//! a wait without losing an example. Errors are raised through
//! [`errors`](crate::errors), naming the file and the record.

use std::sync::Mutex;
use std::time::Duration;

use feedstock::dataset::{Checkpoint, Dataset, Loader, Shuffle};
use feedstock::input::shard::Remainder;
use feedstock::io::compression::Compression;
use feedstock::io::fs::default_fs;
use feedstock::{DType, Error, Kind, Tensor};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::arrays::{numpy_to_tensor, value_to_py};
use crate::errors::IntoPyResult;
use crate::graph::feature_spec;

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
}

/// A pipeline of the engine: TFRecord files parsed with a feature spec,
/// or arrays in memory; shuffled, batched, sharded; iterated with
/// `next()`, checkpointed with `checkpoint()` and resumed with
/// `start(checkpoint)`.
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
    /// `files` (paths or URLs) parsed with `features` (entries as
    /// `Graph.parse_example` takes them), or `arrays`, a list of
    /// `(name, array, dtype)`. `shuffle` is `"none"`, `"files"`,
    /// `"buffer"` (of `buffer` examples) or `"global"`; `num_epochs`
    /// None runs without end; `shard` is `(index, count)`.
    #[new]
    #[pyo3(signature = (
        files=None, *, compression=None, features=None, arrays=None,
        batch_size=1, drop_remainder=false, num_epochs=Some(1),
        shuffle="none", buffer=0, seed=0, threads=1, shard=None,
        remainder="drop", keys=false
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        files: Option<Vec<String>>,
        compression: Option<&str>,
        features: Option<&Bound<'_, PyList>>,
        arrays: Option<Vec<(String, Bound<'_, PyAny>, String)>>,
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
    ) -> PyResult<PyDataset> {
        let mut d = match (files, arrays) {
            (Some(files), None) => {
                let c = self::compression(compression)?;
                let d =
                    Dataset::tfrecord_in(default_fs(), files, c).py_err()?;
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
        d = d
            .shuffle(self::shuffle(shuffle, buffer)?)
            .batch(batch_size)
            .drop_remainder(drop_remainder)
            .seed(seed)
            .threads(threads)
            .remainder(self::remainder(remainder)?)
            .keys(keys);
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
    m.add_class::<PyDataset>()
}
