//! A run compiled once and called many times: [`Session::make_callable`].

use std::fmt;
use std::sync::Arc;

use feedstock::error::{Error, Result};
use feedstock::tensor::Value;

use super::{Inner, Session};
use crate::eval::{self, Compiled};
use crate::graph::{Output, StaticShape};

/// A run of fixed fetches with fixed fed outputs, compiled once
/// (TensorFlow's `Session.make_callable`): each [`call`](Self::call)
/// feeds values in the fed outputs' order and returns the fetches,
/// without looking the run up again or naming its feeds unless one is
/// refused. What a loop that runs the same thing per example uses (a
/// [`GraphFn`](crate::GraphFn) in the engine's reader threads).
pub struct Callable {
    inner: Arc<Inner>,
    compiled: Arc<Compiled>,
    fed: Vec<(Output, StaticShape)>,
}

impl fmt::Debug for Callable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Callable")
            .field("fed", &self.fed.len())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// `fetches` run with `fed` fed, compiled now: see [`Callable`].
    ///
    /// # Errors
    /// As [`Session::run`] when it compiles (an unfed placeholder the
    /// fetches need, a resource that cannot be made).
    pub fn make_callable(
        &self,
        fetches: &[Output],
        fed: &[Output],
    ) -> Result<Callable> {
        self.check_process()?;
        let compiled = self.inner.compiled(fetches, fed)?;
        let graph = &self.inner.graph;
        let fed = fed.iter().map(|&o| (o, graph.shape(o))).collect();
        Ok(Callable {
            inner: Arc::clone(&self.inner),
            compiled,
            fed,
        })
    }
}

impl Callable {
    /// The fetches' values with `values` fed, one per fed output, in
    /// their order.
    ///
    /// # Errors
    /// InvalidArgument for another number of values, or a value of the
    /// wrong dtype or shape (naming the output); otherwise as
    /// [`Session::run`].
    pub fn call(&self, values: Vec<Value>) -> Result<Vec<Value>> {
        if values.len() != self.fed.len() {
            return Err(Error::invalid_argument(format!(
                "the callable feeds {} values, not {}",
                self.fed.len(),
                values.len()
            )));
        }
        self.inner.check_open()?;
        let graph = &self.inner.graph;
        for ((o, shape), v) in self.fed.iter().zip(&values) {
            eval::check_fed(graph, *o, shape.as_ref(), v)?;
        }
        let feeds: Vec<(Output, Value)> =
            self.fed.iter().map(|(o, _)| *o).zip(values).collect();
        self.inner.exec(&self.compiled, &feeds, None, None)
    }
}
