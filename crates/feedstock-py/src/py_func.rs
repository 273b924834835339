//! `tf.py_func`: a Python function run by the engine's threads.
//!
//! A call takes the GIL in whichever thread evaluates the node. Python
//! must still be there: at exit (an `atexit` hook calls [`shutdown`]),
//! new calls fail Cancelled and the exit waits for the calls in flight,
//! so that no runner thread the program left running enters an
//! interpreter that is finalizing (which aborts the process).

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use feedstock::{DType, Error, Kind, Value};
use feedstock_tf1::UserFn;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::arrays::{numpy_to_tensor, value_to_py};

/// Whether Python is going away, and how many calls are in it.
struct Gate {
    state: Mutex<(bool, usize)>,
    idle: Condvar,
}

static GATE: Gate = Gate {
    state: Mutex::new((false, 0)),
    idle: Condvar::new(),
};

/// The gate's state (a panic elsewhere cannot leave it inconsistent: it
/// is two plain values).
fn state() -> MutexGuard<'static, (bool, usize)> {
    GATE.state.lock().unwrap_or_else(|p| p.into_inner())
}

/// How long the exit waits for the calls in flight.
const EXIT_WAIT: Duration = Duration::from_secs(5);

/// The engine's function for a `tf.py_func` node: calls the Python
/// wrapper `func` (see `_script_ops.py`) and converts its results to
/// values of `dtypes`.
pub(crate) fn user_fn(func: Py<PyAny>, dtypes: Vec<DType>) -> Arc<UserFn> {
    Arc::new(move |values: &[Value]| {
        {
            let mut st = state();
            if st.0 {
                return Err(Error::cancelled("tf.py_func: Python is exiting"));
            }
            st.1 += 1;
        }
        let r = Python::attach(|py| call(py, &func, values, &dtypes));
        let mut st = state();
        st.1 -= 1;
        if st.1 == 0 {
            GATE.idle.notify_all();
        }
        r
    })
}

/// Calls the wrapper with `values` as numpy arrays. It returns
/// `(None, [arrays])`, or `(kind, message)` for an error of that kind;
/// an exception that escapes it is Unknown.
fn call(
    py: Python<'_>,
    func: &Py<PyAny>,
    values: &[Value],
    dtypes: &[DType],
) -> feedstock::Result<Vec<Value>> {
    let unknown = |e: PyErr| Error::new(Kind::Unknown, e.to_string());
    let args = values
        .iter()
        .map(|v| value_to_py(py, v.clone()))
        .collect::<PyResult<Vec<_>>>()
        .map_err(unknown)?;
    let ret = PyTuple::new(py, args)
        .and_then(|args| func.bind(py).call1(args))
        .map_err(unknown)?;
    let (kind, payload): (Option<String>, Bound<'_, PyAny>) =
        ret.extract().map_err(unknown)?;
    if let Some(kind) = kind {
        let message: String = payload.extract().map_err(unknown)?;
        return Err(Error::new(crate::errors::kind_from_name(&kind), message));
    }
    let arrays: Vec<Bound<'_, PyAny>> = payload.extract().map_err(unknown)?;
    arrays
        .iter()
        .zip(dtypes)
        .map(|(a, &d)| numpy_to_tensor(py, a, d).map(Value::from))
        .collect::<PyResult<_>>()
        .map_err(unknown)
}

/// Called at exit: later calls fail Cancelled without entering Python;
/// waits (without the GIL) up to five seconds for those in flight.
#[pyfunction]
fn shutdown(py: Python<'_>) {
    py.detach(|| {
        let deadline = Instant::now() + EXIT_WAIT;
        let mut st = state();
        st.0 = true;
        while st.1 > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            st = GATE
                .idle
                .wait_timeout(st, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    });
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(shutdown, m)?)
}
