//! The plan's [`Session`], its runner threads and the [`Coordinator`]
//! for Python. Runs release the GIL; each wait is cut into short slices
//! between which Python's signal handlers run, so Ctrl-C interrupts it.

use crate::arrays::{numpy_to_tensor, value_to_py};
use crate::errors::{to_py, IntoPyResult};
use feedstock::coord::{Coordinator, ThreadHandle};
use feedstock::{Error, Value};
use feedstock_tf1::{Interrupt, RunOptions, Session};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::graph::{
    ins, skip_stats_dict, PyGraph, PyOutput, PyQueue, PyRunner, SLICE,
};

/// Runner threads as Python sees them.
fn py_threads(threads: Vec<ThreadHandle>) -> Vec<PyThread> {
    threads
        .into_iter()
        .map(|h| PyThread {
            name: h.thread().name().unwrap_or("runner").to_owned(),
            handle: Some(h),
        })
        .collect()
}

/// A session over a graph (TensorFlow's `tf.Session`).
#[pyclass(module = "feedstock._native", name = "Session")]
#[derive(Debug)]
pub struct PySession(Session);

#[pymethods]
impl PySession {
    #[new]
    fn new(graph: &PyGraph) -> PySession {
        PySession(Session::new(&graph.0))
    }

    /// Evaluates `fetches` with `feeds` (a list of `(Output, value)`),
    /// returning one numpy array (or `SparseTensorValue`) per fetch.
    ///
    /// The GIL is released while the run works and waits. Each wait is
    /// cut into slices between which Python's signal handlers run (see
    /// [`Interrupt`]): Ctrl-C raises `KeyboardInterrupt` however many
    /// queues the run waits on, and a run that is not interrupted loses
    /// nothing to the slicing. `timeout` (seconds) is TensorFlow's
    /// `timeout_in_ms`: DeadlineExceeded past it.
    #[pyo3(signature = (fetches, feeds, timeout=None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        fetches: Vec<PyOutput>,
        feeds: Vec<(PyOutput, Bound<'py, PyAny>)>,
        timeout: Option<f64>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let fetches = ins(&fetches);
        let mut fv = Vec::with_capacity(feeds.len());
        for (o, v) in &feeds {
            let t = numpy_to_tensor(py, v, o.0.dtype())?;
            fv.push((o.0, Value::from(t)));
        }
        // The exception a signal handler raised, for the run to re-raise.
        let raised: Arc<Mutex<Option<PyErr>>> = Arc::default();
        let slot = Arc::clone(&raised);
        let interrupt = Interrupt::new(SLICE, move || {
            Python::attach(|py| match py.check_signals() {
                Ok(()) => false,
                Err(e) => {
                    *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    true
                }
            })
        });
        let opts = RunOptions {
            timeout: timeout.map(Duration::from_secs_f64),
            interrupt: Some(interrupt),
        };
        let sess = &self.0;
        let r = py.detach(|| sess.run_with(&fetches, &fv, &opts));
        if let Some(e) =
            raised.lock().unwrap_or_else(|p| p.into_inner()).take()
        {
            // The caller's `finally: coord.request_stop()` stops the
            // runners; the session stays usable.
            return Err(e);
        }
        let values = r.py_err()?;
        values.into_iter().map(|v| value_to_py(py, v)).collect()
    }

    /// Starts the queue runners under `coord`; returns their threads.
    fn start_queue_runners(
        &self,
        py: Python<'_>,
        coord: &PyCoordinator,
    ) -> PyResult<Vec<PyThread>> {
        let sess = &self.0;
        let c = &coord.0;
        let threads = py.detach(|| sess.start_queue_runners(c)).py_err()?;
        Ok(py_threads(threads))
    }

    /// Starts one queue runner's threads (`qr.create_threads`); none if
    /// it was started in this session before.
    fn start_queue_runner(
        &self,
        py: Python<'_>,
        runner: &PyRunner,
        coord: &PyCoordinator,
    ) -> PyResult<Vec<PyThread>> {
        let sess = &self.0;
        let (c, r) = (&coord.0, runner.0);
        let threads = py.detach(|| sess.start_queue_runner(r, c)).py_err()?;
        Ok(py_threads(threads))
    }

    /// `[(node name, steps)]`: how far the user's runs have read the
    /// input (see `Session::input_position`).
    fn input_position(&self) -> PyResult<Vec<(String, u64)>> {
        self.0.input_position().py_err()
    }

    /// Resumes the input at `position` (from `input_position`) by making
    /// those steps again, the GIL released.
    fn replay_input(
        &self,
        py: Python<'_>,
        position: Vec<(String, u64)>,
    ) -> PyResult<()> {
        let sess = &self.0;
        py.detach(|| sess.replay_input(&position)).py_err()
    }

    /// Closes the session: blocked runs and runner threads return.
    fn close(&self) {
        self.0.close();
    }

    /// `[(tag, value)]`: TensorFlow's queue-fullness summaries.
    fn queue_summaries(&self) -> PyResult<Vec<(String, f64)>> {
        self.0.check_process().py_err()?;
        Ok(self
            .0
            .queue_summaries()
            .into_iter()
            .map(|s| (s.tag, s.value))
            .collect())
    }

    /// One dict per sharded producer: its name, the records `dropped`
    /// and the padding `padded` by its remainder policy.
    fn shard_stats<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.0.check_process().py_err()?;
        let mut out = Vec::new();
        for (name, s) in self.0.shard_stats() {
            let d = PyDict::new(py);
            d.set_item("name", name)?;
            d.set_item("dropped", s.dropped())?;
            d.set_item("padded", s.padded())?;
            out.push(d);
        }
        Ok(out)
    }

    /// The damaged TFRecord regions the session's readers skipped:
    /// `skipped` and `skipped_bytes` in all, and per file (`files`, in
    /// the order files first had a skip).
    fn skip_stats<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.0.check_process().py_err()?;
        skip_stats_dict(py, &self.0.stats().skips)
    }

    /// The counters of one queue (`size`, `enqueued`, `dequeued`,
    /// `closed`, and the calls blocked on it now: `blocked_enqueues`,
    /// `blocked_dequeues`).
    fn queue_stats<'py>(
        &self,
        py: Python<'py>,
        queue: &PyQueue,
    ) -> PyResult<Bound<'py, PyDict>> {
        let s = self.0.queue_stats(queue.0).py_err()?;
        let d = PyDict::new(py);
        d.set_item("size", s.size)?;
        d.set_item("enqueued", s.enqueued)?;
        d.set_item("dequeued", s.dequeued)?;
        d.set_item("closed", s.closed)?;
        d.set_item("blocked_enqueues", s.blocked_enqueues)?;
        d.set_item("blocked_dequeues", s.blocked_dequeues)?;
        Ok(d)
    }

    /// One dict of counters per queue.
    fn stats<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.0.check_process().py_err()?;
        let mut out = Vec::new();
        for s in self.0.stats().stages {
            let d = PyDict::new(py);
            d.set_item("name", &s.name)?;
            d.set_item("size", s.queue.size)?;
            d.set_item("capacity", s.queue.capacity)?;
            d.set_item("min_after_dequeue", s.queue.min_after_dequeue)?;
            d.set_item("enqueued", s.queue.enqueued)?;
            d.set_item("dequeued", s.queue.dequeued)?;
            d.set_item("closed", s.queue.closed)?;
            d.set_item("fraction_full", s.fraction_full())?;
            if let Some(b) = &s.batching {
                d.set_item("batch_size", b.batch_size)?;
                d.set_item("batches", b.batches)?;
                d.set_item("held_back", b.held_back)?;
                d.set_item("filtered", b.filtered)?;
            }
            out.push(d);
        }
        Ok(out)
    }
}

/// A runner thread the coordinator can join.
#[pyclass(module = "feedstock._native", name = "RunnerThread")]
#[derive(Debug)]
pub struct PyThread {
    name: String,
    handle: Option<ThreadHandle>,
}

#[pymethods]
impl PyThread {
    /// The thread's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Whether the thread is still running.
    fn is_alive(&self) -> bool {
        self.handle.as_ref().is_some_and(|h| !h.is_finished())
    }
}

/// A coordinator (TensorFlow's `tf.train.Coordinator`).
#[pyclass(module = "feedstock._native", name = "Coordinator")]
#[derive(Debug, Clone, Default)]
pub struct PyCoordinator(Coordinator);

#[pymethods]
impl PyCoordinator {
    #[new]
    fn new() -> PyCoordinator {
        PyCoordinator(Coordinator::new())
    }

    /// Requests a stop; with `kind` and `message`, a stop because of
    /// that error (an OutOfRange kind is a clean stop).
    #[pyo3(signature = (kind=None, message=None))]
    fn request_stop(
        &self,
        kind: Option<&str>,
        message: Option<&str>,
    ) -> PyResult<()> {
        match kind {
            None => {
                self.0.request_stop();
                Ok(())
            }
            Some(k) => {
                let kind = crate::errors::kind_from_name(k);
                // An error after the join is raised here, as TensorFlow's
                // request_stop raises it: nobody else would report it.
                self.0
                    .request_stop_with(Error::new(
                        kind,
                        message.unwrap_or("stop requested"),
                    ))
                    .py_err()
            }
        }
    }

    /// Whether a stop was requested.
    fn should_stop(&self) -> bool {
        self.0.should_stop()
    }

    /// Waits for a stop request, `timeout` seconds at most (`None`:
    /// forever); Ctrl-C interrupts the wait. Returns whether a stop was
    /// requested.
    #[pyo3(signature = (timeout=None))]
    fn wait_for_stop(
        &self,
        py: Python<'_>,
        timeout: Option<f64>,
    ) -> PyResult<bool> {
        self.0.check_process().py_err()?;
        let end = timeout.map(|s| Instant::now() + Duration::from_secs_f64(s));
        loop {
            let slice = end.map_or(SLICE, |e| {
                SLICE.min(e.saturating_duration_since(Instant::now()))
            });
            let c = &self.0;
            if py.detach(|| c.wait_for_stop(Some(slice))) {
                return Ok(true);
            }
            if end.is_some_and(|e| Instant::now() >= e) {
                return Ok(false);
            }
            py.check_signals()?;
        }
    }

    /// The error the stop was requested with, raised; `None` if none.
    fn error(&self) -> Option<PyErr> {
        self.0.error().map(|e| to_py(&e))
    }

    /// Waits for `threads` to end (or for a stop request, then `grace`
    /// seconds more), then raises the first real error. Ctrl-C
    /// interrupts the first wait and requests a stop.
    fn join(
        &self,
        py: Python<'_>,
        threads: Vec<Py<PyThread>>,
        grace: f64,
    ) -> PyResult<()> {
        // In a forked child the threads never end: fail before waiting.
        self.0.check_process().py_err()?;
        let mut handles = Vec::new();
        for t in &threads {
            if let Some(h) = t.borrow_mut(py).handle.take() {
                handles.push(h);
            }
        }
        // Wait in slices so that Ctrl-C gets through.
        loop {
            if handles.iter().all(|h| h.is_finished()) || self.0.should_stop()
            {
                break;
            }
            let c = &self.0;
            py.detach(|| c.wait_for_stop(Some(SLICE)));
            if let Err(e) = py.check_signals() {
                self.0.request_stop();
                return Err(e);
            }
        }
        let c = &self.0;
        let grace = Duration::from_secs_f64(grace.max(0.0));
        py.detach(|| c.join(handles, grace)).py_err()
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySession>()?;
    m.add_class::<PyThread>()?;
    m.add_class::<PyCoordinator>()?;
    Ok(())
}
