//! The plan's [`Graph`] for Python (its session and coordinator are in
//! [`crate::session`]).
//!
//! Each method stands for one builder call of [`feedstock_tf1`], and
//! `Graph.op` makes any op of its registry; the Python layer
//! (`feedstock.compat.v1`) turns TensorFlow's signatures into these.
//! Symbolic tensors are [`PyOutput`] handles.

use std::sync::Arc;
use std::time::Duration;

use feedstock::decode::csv::RecordDefault;
use feedstock::decode::example::{FeatureSpec, FixedSequence, Sparse};
use feedstock::io::tfrecord::{CorruptRecords, SkipBudget};
use feedstock::queue::PartialShape;
use feedstock::{DType, Error, Kind};
use feedstock_tf1::op::{self, Attr, Attrs};
use feedstock_tf1::{
    BatchOptions, CsvOptions, Graph, Output, ProducerOptions, QueueKind,
    QueueRef, ReaderKind, ReaderRef, ReaderStateOp, RunnerRef, ShuffleOptions,
    Strings,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList};

use crate::arrays::{numpy_name, numpy_to_tensor};
use crate::errors::{to_py, IntoPyResult};
use crate::tfrecord::parse_compression;

/// How long one slice of a blocking wait lasts before Python's signal
/// handlers get a chance to run.
pub(crate) const SLICE: Duration = Duration::from_millis(100);

fn dtype(name: &str) -> PyResult<DType> {
    DType::from_name(name).py_err()
}

/// A symbolic tensor: one output of a node of a graph.
#[pyclass(module = "feedstock._native", frozen, eq, hash, name = "Output")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyOutput(pub Output);

#[pymethods]
impl PyOutput {
    /// The dtype, as numpy names it (`"object"` for strings).
    #[getter]
    fn dtype(&self) -> &'static str {
        numpy_name(self.0.dtype())
    }

    /// Whether the value is a sparse tensor.
    #[getter]
    fn sparse(&self) -> bool {
        self.0.is_sparse()
    }

    /// The node's id.
    #[getter]
    fn node(&self) -> usize {
        self.0.node_id()
    }

    /// Which output of the node.
    #[getter]
    fn index(&self) -> usize {
        self.0.index()
    }
}

/// A producer's queue, or one made by hand.
#[pyclass(module = "feedstock._native", frozen, name = "QueueRef")]
#[derive(Debug, Clone, Copy)]
pub struct PyQueue(pub(crate) QueueRef);

/// A queue runner defined in a graph.
#[pyclass(module = "feedstock._native", frozen, name = "RunnerRef")]
#[derive(Debug, Clone, Copy)]
pub struct PyRunner(pub(crate) RunnerRef);

/// A record reader.
#[pyclass(module = "feedstock._native", frozen, name = "ReaderRef")]
#[derive(Debug, Clone, Copy)]
pub struct PyReader(pub(crate) ReaderRef);

fn outs(v: Vec<Output>) -> Vec<PyOutput> {
    v.into_iter().map(PyOutput).collect()
}

pub(crate) fn ins(v: &[PyOutput]) -> Vec<Output> {
    v.iter().map(|o| o.0).collect()
}

fn partial_shape(shape: Option<Vec<Option<usize>>>) -> Option<PartialShape> {
    shape.map(PartialShape::new)
}

fn producer_opts(
    num_epochs: Option<u64>,
    shuffle: bool,
    seed: Option<u64>,
    capacity: usize,
    name: Option<String>,
) -> ProducerOptions {
    ProducerOptions {
        num_epochs,
        shuffle,
        seed,
        capacity,
        name,
    }
}

/// A Python value as an op's attribute.
fn attr(op_type: &str, v: &Bound<'_, PyAny>) -> PyResult<Attr> {
    if v.is_none() {
        return Ok(Attr::None);
    }
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(Attr::Bool(b.is_true()));
    }
    if let Ok(i) = v.extract::<i64>() {
        return Ok(Attr::Int(i));
    }
    if let Ok(u) = v.extract::<u64>() {
        return Ok(Attr::UInt(u));
    }
    if let Ok(f) = v.cast::<PyFloat>() {
        return Ok(Attr::Float(f.value()));
    }
    if let Ok(s) = v.extract::<String>() {
        return Ok(Attr::Str(s));
    }
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(Attr::Bytes(b.as_bytes().to_vec()));
    }
    if let Ok(v) = v.extract::<Vec<i64>>() {
        return Ok(Attr::Ints(v));
    }
    if let Ok(v) = v.extract::<Vec<f64>>() {
        return Ok(Attr::Floats(v));
    }
    Err(PyTypeError::new_err(format!(
        "{op_type}: an attribute cannot be {}",
        v.get_type().name()?
    )))
}

/// A graph under construction (TensorFlow's `tf.Graph`).
#[pyclass(module = "feedstock._native", name = "Graph")]
#[derive(Debug, Clone, Default)]
pub struct PyGraph(pub Graph);

#[pymethods]
impl PyGraph {
    #[new]
    fn new() -> PyGraph {
        PyGraph(Graph::new())
    }

    /// The number of nodes.
    fn __len__(&self) -> usize {
        self.0.len()
    }

    /// Adds op `op_type` (a type of `feedstock_tf1::op`) reading
    /// `inputs`, with the attributes in `attrs` (a dict of None, bools,
    /// ints, floats, strings, bytes and lists of ints or floats; a dtype
    /// by name); its outputs.
    #[pyo3(signature = (op_type, inputs, attrs=None))]
    fn op(
        &self,
        op_type: &str,
        inputs: Vec<PyOutput>,
        attrs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Vec<PyOutput>> {
        let mut a = Attrs::new();
        for (k, v) in attrs.into_iter().flatten() {
            a.set(k.extract::<String>()?, attr(op_type, &v)?);
        }
        let def = op::from_attrs(op_type, &a).py_err()?;
        let ins: Vec<Output> = inputs.iter().map(|o| o.0).collect();
        let outs = self.0.op_dyn(def, &ins).py_err()?;
        Ok(outs.into_iter().map(PyOutput).collect())
    }

    /// The static shape: `None` (unknown rank) or a list of dims
    /// (`None` where unknown).
    fn shape(&self, o: PyOutput) -> Option<Vec<Option<usize>>> {
        self.0.shape(o.0).map(|s| s.dims().to_vec())
    }

    /// The node's unique name.
    fn name(&self, o: PyOutput) -> String {
        self.0.name(o.0)
    }

    /// Every variable initializer.
    fn initializers(&self) -> Vec<PyOutput> {
        outs(self.0.initializers())
    }

    /// `tf.constant(value, dtype)`.
    fn constant(
        &self,
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        dtype_name: &str,
    ) -> PyResult<PyOutput> {
        let t = numpy_to_tensor(py, value, dtype(dtype_name)?)?;
        self.0.constant(t).py_err().map(PyOutput)
    }

    /// `tf.placeholder`.
    #[pyo3(signature = (dtype_name, shape=None, name=None))]
    fn placeholder(
        &self,
        dtype_name: &str,
        shape: Option<Vec<Option<usize>>>,
        name: Option<&str>,
    ) -> PyResult<PyOutput> {
        self.0
            .placeholder(dtype(dtype_name)?, partial_shape(shape), name)
            .py_err()
            .map(PyOutput)
    }

    /// `tf.Variable(initial)`: `(value, initializer)`.
    #[pyo3(signature = (initial, name=None))]
    fn variable(
        &self,
        initial: PyOutput,
        name: Option<&str>,
    ) -> PyResult<(PyOutput, PyOutput)> {
        let v = self.0.variable(initial.0, name).py_err()?;
        Ok((PyOutput(v.value), PyOutput(v.initializer)))
    }

    /// `tf.train.match_filenames_once`.
    fn match_filenames_once(&self, pattern: &str) -> PyResult<PyOutput> {
        self.0.match_filenames_once(pattern).py_err().map(PyOutput)
    }

    /// `tf.train.string_input_producer`: `strings` a list of str or an
    /// Output.
    #[pyo3(signature = (strings, num_epochs=None, shuffle=true, seed=None, capacity=32, name=None))]
    fn string_input_producer(
        &self,
        strings: &Bound<'_, PyAny>,
        num_epochs: Option<u64>,
        shuffle: bool,
        seed: Option<u64>,
        capacity: usize,
        name: Option<String>,
    ) -> PyResult<PyQueue> {
        let strings = strings_arg(strings)?;
        let opts = producer_opts(num_epochs, shuffle, seed, capacity, name);
        self.0
            .string_input_producer(strings, opts)
            .py_err()
            .map(PyQueue)
    }

    /// A `string_input_producer` of host `index` of `count`'s part of
    /// the files, `remainder` `"drop"` or `"pad"`.
    #[pyo3(signature = (strings, index, count, remainder="drop", num_epochs=None, shuffle=true, seed=None, capacity=32, name=None))]
    #[allow(clippy::too_many_arguments)]
    fn sharded_string_input_producer(
        &self,
        strings: &Bound<'_, PyAny>,
        index: usize,
        count: usize,
        remainder: &str,
        num_epochs: Option<u64>,
        shuffle: bool,
        seed: Option<u64>,
        capacity: usize,
        name: Option<String>,
    ) -> PyResult<PyQueue> {
        let strings = strings_arg(strings)?;
        let remainder = match remainder {
            "drop" => feedstock::input::Remainder::Drop,
            "pad" => feedstock::input::Remainder::Pad,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "remainder must be \"drop\" or \"pad\", not {other:?}"
                )))
            }
        };
        let opts = producer_opts(num_epochs, shuffle, seed, capacity, name);
        let shard = feedstock_tf1::ShardOptions {
            index,
            count,
            remainder,
        };
        self.0
            .sharded_string_input_producer(strings, opts, shard)
            .py_err()
            .map(PyQueue)
    }

    /// `tf.train.input_producer`.
    #[pyo3(signature = (input, num_epochs=None, shuffle=true, seed=None, capacity=32, name=None))]
    fn input_producer(
        &self,
        input: PyOutput,
        num_epochs: Option<u64>,
        shuffle: bool,
        seed: Option<u64>,
        capacity: usize,
        name: Option<String>,
    ) -> PyResult<PyQueue> {
        let opts = producer_opts(num_epochs, shuffle, seed, capacity, name);
        self.0.input_producer(input.0, opts).py_err().map(PyQueue)
    }

    /// `tf.train.range_input_producer`.
    #[pyo3(signature = (limit, num_epochs=None, shuffle=true, seed=None, capacity=32, name=None))]
    fn range_input_producer(
        &self,
        limit: i32,
        num_epochs: Option<u64>,
        shuffle: bool,
        seed: Option<u64>,
        capacity: usize,
        name: Option<String>,
    ) -> PyResult<PyQueue> {
        let opts = producer_opts(num_epochs, shuffle, seed, capacity, name);
        self.0
            .range_input_producer(limit, opts)
            .py_err()
            .map(PyQueue)
    }

    /// `tf.train.slice_input_producer`.
    #[pyo3(signature = (tensors, num_epochs=None, shuffle=true, seed=None, capacity=32, name=None))]
    fn slice_input_producer(
        &self,
        tensors: Vec<PyOutput>,
        num_epochs: Option<u64>,
        shuffle: bool,
        seed: Option<u64>,
        capacity: usize,
        name: Option<String>,
    ) -> PyResult<Vec<PyOutput>> {
        let opts = producer_opts(num_epochs, shuffle, seed, capacity, name);
        self.0
            .slice_input_producer(&ins(&tensors), opts)
            .py_err()
            .map(outs)
    }

    /// `tf.train.limit_epochs`.
    fn limit_epochs(&self, t: PyOutput, n: u64) -> PyResult<PyOutput> {
        self.0.limit_epochs(t.0, n).py_err().map(PyOutput)
    }

    /// `queue.dequeue()`: one output per component.
    fn dequeue(&self, q: &PyQueue) -> PyResult<Vec<PyOutput>> {
        self.0.dequeue(q.0).py_err().map(outs)
    }

    /// `queue.dequeue_many(n)` / `dequeue_up_to(n)`: one output per
    /// component.
    fn dequeue_many(
        &self,
        q: &PyQueue,
        n: usize,
        up_to: bool,
    ) -> PyResult<Vec<PyOutput>> {
        self.0.dequeue_many(q.0, n, up_to).py_err().map(outs)
    }

    /// A queue made by hand: `kind` is `"fifo"`, `"padding_fifo"`,
    /// `"random_shuffle"` or `"priority"`; `shapes` one entry per dtype (`None`: any
    /// shape; inner `None`: an unknown dimension).
    #[pyo3(signature = (kind, capacity, dtypes, shapes, min_after_dequeue=0, seed=None, name=None))]
    #[allow(clippy::too_many_arguments)]
    fn queue(
        &self,
        kind: &str,
        capacity: usize,
        dtypes: Vec<String>,
        shapes: Vec<Option<Vec<Option<usize>>>>,
        min_after_dequeue: usize,
        seed: Option<u64>,
        name: Option<String>,
    ) -> PyResult<PyQueue> {
        let kind = match kind {
            "fifo" => QueueKind::Fifo,
            "padding_fifo" => QueueKind::PaddingFifo,
            "random_shuffle" => QueueKind::RandomShuffle {
                min_after_dequeue,
                seed,
            },
            "priority" => QueueKind::Priority,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown queue kind {other:?}"
                )))
            }
        };
        let components = dtypes
            .iter()
            .zip(shapes)
            .map(|(d, s)| Ok((dtype(d)?, s.map(PartialShape::new))))
            .collect::<PyResult<Vec<_>>>()?;
        self.0
            .queue(kind, capacity, &components, name.as_deref())
            .py_err()
            .map(PyQueue)
    }

    /// `queue.enqueue(vals)` / `queue.enqueue_many(vals)`.
    fn enqueue(
        &self,
        q: &PyQueue,
        values: Vec<PyOutput>,
        many: bool,
    ) -> PyResult<PyOutput> {
        self.0
            .enqueue(q.0, &ins(&values), many)
            .py_err()
            .map(PyOutput)
    }

    /// `queue.close(cancel_pending_enqueues)`.
    fn queue_close(&self, q: &PyQueue, cancel: bool) -> PyResult<PyOutput> {
        self.0.queue_close(q.0, cancel).py_err().map(PyOutput)
    }

    /// `queue.name`: the queue's unique name in the graph.
    fn queue_name(&self, q: &PyQueue) -> String {
        self.0.queue_name(q.0)
    }

    /// `queue.size()`.
    fn queue_size(&self, q: &PyQueue) -> PyResult<PyOutput> {
        self.0.queue_size(q.0).py_err().map(PyOutput)
    }

    /// `queue.is_closed()`.
    fn queue_is_closed(&self, q: &PyQueue) -> PyResult<PyOutput> {
        self.0.queue_is_closed(q.0).py_err().map(PyOutput)
    }

    /// `tf.train.QueueRunner(queue, enqueue_ops)`: the runner's index.
    /// `closed_kinds` are error kind names (`"OutOfRange"`, ...).
    fn queue_runner(
        &self,
        q: &PyQueue,
        ops: Vec<PyOutput>,
        closed_kinds: Vec<String>,
    ) -> PyResult<PyRunner> {
        let kinds = closed_kinds
            .iter()
            .map(|k| {
                Kind::from_name(k).ok_or_else(|| {
                    PyValueError::new_err(format!("unknown error kind {k:?}"))
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        self.0
            .queue_runner(q.0, &ins(&ops), &kinds)
            .py_err()
            .map(PyRunner)
    }

    /// `tf.train.add_queue_runner(qr)`.
    fn add_queue_runner(&self, runner: &PyRunner) -> PyResult<()> {
        self.0.add_queue_runner(runner.0).py_err()
    }

    /// A reader: `kind` is `"text_line"`, `"fixed_length"`,
    /// `"tfrecord"`, `"whole_file"` or `"identity"`. `skip_corrupt`
    /// (TFRecord only): `None` fails at a damaged record, as TensorFlow;
    /// a dict skips damaged regions within its budget (`max_per_file`,
    /// `max_per_run`, `max_fraction`, each optional).
    #[pyo3(signature = (kind, skip_header_lines=0, record_bytes=0, header_bytes=0, footer_bytes=0, hop_bytes=0, compression=None, skip_corrupt=None, allow_empty_files=false))]
    #[allow(clippy::too_many_arguments)]
    fn reader(
        &self,
        kind: &str,
        skip_header_lines: u64,
        record_bytes: u64,
        header_bytes: u64,
        footer_bytes: u64,
        hop_bytes: u64,
        compression: Option<&str>,
        skip_corrupt: Option<&Bound<'_, PyDict>>,
        allow_empty_files: bool,
    ) -> PyResult<PyReader> {
        let compression = parse_compression(compression)?;
        if skip_corrupt.is_some() && kind != "tfrecord" {
            return Err(PyValueError::new_err(format!(
                "skip_corrupt is for TFRecord readers, not {kind:?}"
            )));
        }
        let corrupt_records = match skip_corrupt {
            None => CorruptRecords::Fail,
            Some(d) => CorruptRecords::Skip(skip_budget(d)?),
        };
        let kind = match kind {
            "text_line" => ReaderKind::TextLine {
                skip_header_lines,
                allow_empty_files,
            },
            "fixed_length" => ReaderKind::FixedLength {
                record_bytes,
                header_bytes,
                footer_bytes,
                hop_bytes,
                compression,
            },
            "tfrecord" => ReaderKind::TfRecord {
                compression,
                corrupt_records,
                allow_empty_files,
            },
            "whole_file" => ReaderKind::WholeFile,
            "identity" => ReaderKind::Identity,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown reader kind {other:?}"
                )))
            }
        };
        self.0.reader(kind).py_err().map(PyReader)
    }

    /// `reader.read(queue)`: `(key, value)`.
    fn read(
        &self,
        r: &PyReader,
        q: &PyQueue,
    ) -> PyResult<(PyOutput, PyOutput)> {
        let (k, v) = self.0.read(r.0, q.0).py_err()?;
        Ok((PyOutput(k), PyOutput(v)))
    }

    /// `reader.read_up_to(queue, n)`: `(keys, values)`.
    fn read_up_to(
        &self,
        r: &PyReader,
        q: &PyQueue,
        n: usize,
    ) -> PyResult<(PyOutput, PyOutput)> {
        let (k, v) = self.0.read_up_to(r.0, q.0, n).py_err()?;
        Ok((PyOutput(k), PyOutput(v)))
    }

    /// A reader's counter or an action on it: `op` is one of
    /// `num_records_produced`, `num_work_units_completed`, `reset`,
    /// `serialize_state`, `restore_state` (which takes `state`).
    #[pyo3(signature = (r, op, state=None))]
    fn reader_state(
        &self,
        r: &PyReader,
        op: &str,
        state: Option<PyOutput>,
    ) -> PyResult<PyOutput> {
        let op = match op {
            "num_records_produced" => ReaderStateOp::NumRecordsProduced,
            "num_work_units_completed" => ReaderStateOp::NumWorkUnitsCompleted,
            "reset" => ReaderStateOp::Reset,
            "serialize_state" => ReaderStateOp::SerializeState,
            "restore_state" => ReaderStateOp::RestoreState,
            other => {
                return Err(PyValueError::new_err(format!(
                    "no reader operation {other:?}"
                )))
            }
        };
        self.0
            .reader_state(r.0, op, state.map(|s| s.0))
            .py_err()
            .map(PyOutput)
    }

    /// `tf.decode_csv` (a `DecodeCsv` op): `defaults` a list of
    /// `(dtype, array)` where the array holds one value (a default) or
    /// none (a required column).
    #[pyo3(signature = (records, defaults, field_delim=",", use_quote_delim=true, na_value=None, select_cols=None))]
    #[allow(clippy::too_many_arguments)]
    fn decode_csv(
        &self,
        py: Python<'_>,
        records: PyOutput,
        defaults: Vec<(String, Bound<'_, PyAny>)>,
        field_delim: &str,
        use_quote_delim: bool,
        na_value: Option<String>,
        select_cols: Option<Vec<usize>>,
    ) -> PyResult<Vec<PyOutput>> {
        let mut rd = Vec::with_capacity(defaults.len());
        for (i, (d, v)) in defaults.iter().enumerate() {
            let t = numpy_to_tensor(py, v, dtype(d)?)?;
            rd.push(
                RecordDefault::from_tensor(&t)
                    .map_err(|e| e.with_field(format!("record_defaults[{i}]")))
                    .py_err()?,
            );
        }
        let delim = field_delim.as_bytes();
        if delim.len() != 1 {
            return Err(to_py(&Error::invalid_argument(format!(
                "field_delim must be one byte, got {field_delim:?}"
            ))));
        }
        let opts = CsvOptions {
            field_delim: delim[0],
            use_quote_delim,
            na_value,
            select_cols,
        };
        let def = op::DecodeCsv::new(rd, opts).py_err()?;
        self.0
            .op_dyn(Arc::new(def), &[records.0])
            .py_err()
            .map(outs)
    }

    /// `tf.parse_single_example` (`batched` false) or
    /// `tf.parse_example` (a `Parse` op): `features` a list of entries
    /// `("fixed", name, dtype, shape, default_or_None)`,
    /// `("var_len", name, dtype)`,
    /// `("sparse", name, index_keys, value_key, dtype, size,
    /// already_sorted)`,
    /// `("fixed_sequence", name, dtype, shape, allow_missing, default)`.
    fn parse_example(
        &self,
        py: Python<'_>,
        serialized: PyOutput,
        features: &Bound<'_, PyList>,
        batched: bool,
    ) -> PyResult<Vec<PyOutput>> {
        let def = op::Parse {
            spec: feature_spec(py, features)?,
            batched,
        };
        self.0
            .op_dyn(Arc::new(def), &[serialized.0])
            .py_err()
            .map(outs)
    }

    /// `tf.parse_single_sequence_example` (`batched` false) or
    /// `tf.io.parse_sequence_example` (a `ParseSequence` op): `context`
    /// and `sequence` are
    /// feature entries as for `parse_example`. Returns the context
    /// outputs, the feature-list outputs and the lengths of the
    /// `fixed_sequence` lists (empty when not `batched`), each in spec
    /// order.
    fn parse_sequence_example(
        &self,
        py: Python<'_>,
        serialized: PyOutput,
        context: &Bound<'_, PyList>,
        sequence: &Bound<'_, PyList>,
        batched: bool,
    ) -> PyResult<(Vec<PyOutput>, Vec<PyOutput>, Vec<PyOutput>)> {
        let def = op::ParseSequence {
            context: feature_spec(py, context)?,
            sequence: feature_spec(py, sequence)?,
            batched,
        };
        let o = op::parse_sequence(&self.0, serialized.0, def).py_err()?;
        Ok((outs(o.context), outs(o.feature_lists), outs(o.lengths)))
    }

    /// `tf.py_func`'s node: `func` (a Python callable) is called with
    /// the inputs' values as numpy arrays, holding the GIL, in whichever
    /// thread evaluates the node; it returns `(None, [arrays])`, one per
    /// dtype of `dtypes`, or `(kind, message)` for an error of that kind
    /// (`"InvalidArgument"`, ...). An exception it lets escape is an
    /// Unknown error.
    #[pyo3(signature = (func, inputs, dtypes, name=None))]
    fn py_func(
        &self,
        func: Py<PyAny>,
        inputs: Vec<PyOutput>,
        dtypes: Vec<String>,
        name: Option<String>,
    ) -> PyResult<Vec<PyOutput>> {
        let dtypes = dtypes
            .iter()
            .map(|d| dtype(d))
            .collect::<PyResult<Vec<_>>>()?;
        let f = crate::py_func::user_fn(func, dtypes.clone());
        let inputs: Vec<Output> = inputs.iter().map(|o| o.0).collect();
        self.0
            .call(f, &inputs, &dtypes, name.as_deref())
            .py_err()
            .map(|outs| outs.into_iter().map(PyOutput).collect())
    }

    /// `Variable.assign(value)`: sets the variable when run.
    fn assign(&self, var: PyOutput, value: PyOutput) -> PyResult<PyOutput> {
        self.0.assign(var.0, value.0).py_err().map(PyOutput)
    }

    /// `tf.placeholder_with_default(input, shape)`.
    #[pyo3(signature = (input, shape=None))]
    fn placeholder_with_default(
        &self,
        input: PyOutput,
        shape: Option<Vec<Option<usize>>>,
    ) -> PyResult<PyOutput> {
        self.0
            .placeholder_with_default(input.0, partial_shape(shape))
            .py_err()
            .map(PyOutput)
    }

    /// `(name, number of outputs)` of every node, in creation order.
    fn node_names(&self) -> Vec<(String, usize)> {
        self.0.node_names()
    }

    /// Output `index` of the node named `name`, or `None`.
    fn output_by_name(&self, name: &str, index: usize) -> Option<PyOutput> {
        self.0.output_by_name(name, index).map(PyOutput)
    }

    /// Reserves `name` made unique as TensorFlow makes a name scope's.
    fn unique_name(&self, name: &str) -> String {
        self.0.unique_name(name)
    }

    /// Why the graph's input differs from run to run, one reason per
    /// node (empty when it is deterministic).
    fn input_nondeterminism(&self) -> Vec<String> {
        self.0.input_nondeterminism()
    }

    /// A description of the graph's input: producers, readers, queues,
    /// batching stages and seeds, with their settings.
    fn input_fingerprint(&self) -> String {
        self.0.input_fingerprint()
    }

    /// The current name scope (`""` at the top).
    fn name_scope(&self) -> String {
        self.0.name_scope()
    }

    /// Sets the name scope new nodes' names go under.
    fn set_name_scope(&self, scope: &str) {
        self.0.set_name_scope(scope);
    }

    /// The control inputs of the nodes added from now on
    /// (`tf.control_dependencies`); empty for none.
    fn set_control_inputs(&self, control: Vec<PyOutput>) -> PyResult<()> {
        self.0.set_control_inputs(ins(&control)).py_err()
    }

    /// The name the next node added takes (`exact`: already unique).
    #[pyo3(signature = (name, exact=false))]
    fn set_next_name(&self, name: Option<String>, exact: bool) {
        self.0.set_next_name(name, exact);
    }

    /// A batching stage (every form of `tf.train.batch`).
    #[pyo3(signature = (lists, batch_size, keep_input=None, num_threads=1, capacity=32, enqueue_many=false, shapes=None, dynamic_pad=false, allow_smaller_final_batch=false, min_after_dequeue=None, seed=None, name=None))]
    #[allow(clippy::too_many_arguments)]
    fn batch(
        &self,
        lists: Vec<Vec<PyOutput>>,
        batch_size: usize,
        keep_input: Option<PyOutput>,
        num_threads: usize,
        capacity: usize,
        enqueue_many: bool,
        shapes: Option<Vec<Vec<Option<usize>>>>,
        dynamic_pad: bool,
        allow_smaller_final_batch: bool,
        min_after_dequeue: Option<usize>,
        seed: Option<u64>,
        name: Option<String>,
    ) -> PyResult<Vec<PyOutput>> {
        let lists: Vec<Vec<Output>> = lists.iter().map(|l| ins(l)).collect();
        let opts = BatchOptions {
            batch_size,
            num_threads,
            capacity,
            enqueue_many,
            shapes: shapes
                .map(|s| s.into_iter().map(PartialShape::new).collect()),
            dynamic_pad,
            allow_smaller_final_batch,
            shuffle: min_after_dequeue.map(|m| ShuffleOptions {
                min_after_dequeue: m,
                seed,
            }),
            name,
        };
        self.0
            .batch(&lists, keep_input.map(|k| k.0), opts)
            .py_err()
            .map(outs)
    }
}

pub(crate) fn feature_spec(
    py: Python<'_>,
    features: &Bound<'_, PyList>,
) -> PyResult<FeatureSpec> {
    let mut b = FeatureSpec::builder();
    for f in features.iter() {
        let tag: String = f.get_item(0)?.extract()?;
        let name: String = f.get_item(1)?.extract()?;
        match tag.as_str() {
            "fixed" => {
                let dt = dtype(&f.get_item(2)?.extract::<String>()?)?;
                let shape: Vec<usize> = f.get_item(3)?.extract()?;
                let default = f.get_item(4)?;
                if default.is_none() {
                    b.fixed(name, dt, shape);
                } else {
                    let t = numpy_to_tensor(py, &default, dt)?;
                    b.fixed_with_default(name, dt, shape, t);
                }
            }
            "var_len" => {
                let dt = dtype(&f.get_item(2)?.extract::<String>()?)?;
                b.var_len(name, dt);
            }
            "sparse" => {
                let index_keys: Vec<String> = f.get_item(2)?.extract()?;
                let value_key: String = f.get_item(3)?.extract()?;
                let dt = dtype(&f.get_item(4)?.extract::<String>()?)?;
                let size: Vec<usize> = f.get_item(5)?.extract()?;
                let already_sorted: bool = f.get_item(6)?.extract()?;
                b.sparse(
                    name,
                    Sparse::new(index_keys, value_key, dt, size)
                        .already_sorted(already_sorted),
                );
            }
            "fixed_sequence" => {
                let dt = dtype(&f.get_item(2)?.extract::<String>()?)?;
                let shape: Vec<usize> = f.get_item(3)?.extract()?;
                let allow_missing: bool = f.get_item(4)?.extract()?;
                let default = f.get_item(5)?;
                let default = if default.is_none() {
                    None
                } else {
                    Some(numpy_to_tensor(py, &default, dt)?)
                };
                let mut seq =
                    FixedSequence::new(dt, shape).allow_missing(allow_missing);
                if let Some(d) = default {
                    seq = seq.default_value(d);
                }
                b.fixed_sequence(name, seq);
            }
            other => {
                return Err(PyTypeError::new_err(format!(
                    "unknown feature kind {other:?}"
                )))
            }
        }
    }
    b.build().py_err()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyOutput>()?;
    m.add_class::<PyQueue>()?;
    m.add_class::<PyRunner>()?;
    m.add_class::<PyReader>()?;
    m.add_class::<PyGraph>()?;
    Ok(())
}

/// A producer's `strings` argument: an Output (e.g. of
/// `match_filenames_once`) or a list of str.
fn strings_arg(strings: &Bound<'_, PyAny>) -> PyResult<Strings> {
    Ok(match strings.extract::<PyOutput>() {
        Ok(o) => Strings::Output(o.0),
        Err(_) => Strings::List(strings.extract::<Vec<String>>()?),
    })
}

/// A skip budget from a dict with any of `max_per_file`, `max_per_run`
/// and `max_fraction`; other keys are an error, not ignored.
fn skip_budget(d: &Bound<'_, PyDict>) -> PyResult<SkipBudget> {
    let mut budget = SkipBudget::new();
    for (k, v) in d.iter() {
        let key: String = k.extract()?;
        budget = match key.as_str() {
            "max_per_file" => budget.max_per_file(v.extract()?),
            "max_per_run" => budget.max_per_run(v.extract()?),
            "max_fraction" => budget.max_fraction(v.extract()?),
            other => {
                return Err(PyValueError::new_err(format!(
                    "skip_corrupt: unknown key {other:?} (max_per_file, \
                     max_per_run, max_fraction)"
                )))
            }
        };
    }
    Ok(budget)
}

/// Skip counters as Python sees them: `{"skipped", "skipped_bytes",
/// "files": [{"file", "skipped", "skipped_bytes"}, ...]}`.
pub(crate) fn skip_stats_dict<'py>(
    py: Python<'py>,
    skips: &feedstock::io::tfrecord::SkipStats,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("skipped", skips.skipped)?;
    d.set_item("skipped_bytes", skips.skipped_bytes)?;
    let files = PyList::empty(py);
    for f in &skips.files {
        let fd = PyDict::new(py);
        fd.set_item("file", &f.file)?;
        fd.set_item("skipped", f.skipped)?;
        fd.set_item("skipped_bytes", f.skipped_bytes)?;
        files.append(fd)?;
    }
    d.set_item("files", files)?;
    Ok(d)
}
