//! The session: per-session state of a graph's nodes, and running them.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use parking_lot::{Mutex, RwLock};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use feedstock::coord::{Coordinator, Pipeline, PipelineStats, ThreadHandle};
use feedstock::error::{Error, Kind, Result};
use feedstock::fork::StartedIn;
use feedstock::input::shard::ShardStats;
use feedstock::input::{
    input_producer, maybe_batch, maybe_batch_join, maybe_shuffle_batch,
    maybe_shuffle_batch_join, range_input_producer, slice_input_producer,
    string_input_producer, BatchSource, KeepInput, SliceProducer,
};
use feedstock::io::tfrecord::SkipLog;
use feedstock::queue::{
    ComponentSpec, FifoQueue, Queue, QueueSpec, QueueStats,
};
use feedstock::reader::{
    FixedLengthRecordReader, IdentityReader, Reader, TextLineReader,
    TfRecordReader, WholeFileReader,
};
use feedstock::tensor::{Tensor, Value};

use super::eval::{self, Compiled, Ctx};
use super::graph::{
    BatchSpec, Graph, Node, Op, Output, ProducerOptions, QueueRef, ReaderKind,
};
use super::queues::{self, RunnerDef, RunnerRef};

mod callable;
mod position;

pub use callable::Callable;

macro_rules! set_epochs {
    ($b:expr, $opts:expr, $node:expr) => {{
        let opts: &ProducerOptions = $opts;
        $b.shuffle(opts.shuffle)
            .capacity(opts.capacity)
            .name($node.name.clone());
        if let Some(n) = opts.num_epochs {
            $b.num_epochs(n);
        }
        if let Some(s) = opts.seed {
            $b.seed(s);
        }
    }};
}

/// What a node owns for the life of a session.
pub(crate) enum Resource {
    /// A producer's queue.
    Queue(Arc<FifoQueue>),
    /// A queue made by hand ([`Graph::queue`]).
    UserQueue(Arc<dyn Queue>),
    /// A slice producer: preloaded tensors and their index queue.
    Slice(SliceProducer),
    /// A record reader.
    Reader(Reader),
    /// A batching stage's output.
    Batch(BatchSource),
    /// A value computed once (matched filenames).
    Once(Value),
    /// A seeded random generator.
    Rng(Mutex<ChaCha8Rng>),
    /// How many times a `limit_epochs` node has produced.
    Counter(AtomicU64),
}

impl Resource {
    /// A generator seeded by `seed`, or from entropy.
    fn rng(seed: Option<u64>) -> Resource {
        let rng = match seed {
            Some(s) => ChaCha8Rng::seed_from_u64(s),
            None => ChaCha8Rng::from_entropy(),
        };
        Resource::Rng(Mutex::new(rng))
    }
}

/// One node's per-session state.
#[derive(Default)]
pub(crate) struct NodeState {
    /// The node's resource, made on first use.
    pub(crate) res: OnceLock<Resource>,
    /// A variable's value.
    pub(crate) var: RwLock<Option<Value>>,
    /// Held while the resource is made, so it is made once.
    create: Mutex<()>,
    /// For a node that takes elements from the input (see
    /// [`Node::takes_input`]): the steps of it the user's runs made.
    pub(crate) taken: AtomicU64,
}

/// A compiled run: fetches, fed outputs, steps.
type CachedRun = (Vec<Output>, Vec<Output>, Arc<Compiled>);

/// How many compiled fetch lists a session keeps.
const CACHED_RUNS: usize = 16;

/// The session's shared state.
pub(crate) struct Inner {
    graph: Graph,
    states: Mutex<Vec<Arc<NodeState>>>,
    pipeline: Mutex<Pipeline>,
    /// Every queue the session made, closed by [`Session::close`].
    queues: Mutex<Vec<Arc<dyn Queue>>>,
    coords: Mutex<Vec<Coordinator>>,
    /// The default timeout of the session's queue operations.
    op_timeout: Mutex<Option<Duration>>,
    /// Compiled fetch lists, most recent last.
    cache: Mutex<Vec<CachedRun>>,
    /// The remainder counters of each sharded producer made, by name.
    shards: Mutex<Vec<(String, Arc<ShardStats>)>>,
    /// The queue runners of the graph added to the pipeline so far, by
    /// index.
    runners_added: Mutex<HashSet<usize>>,
    pub(crate) closed: Arc<AtomicBool>,
    /// Where its runners started: a forked child cannot use it.
    started: StartedIn,
}

/// Options of one [`Session::run_with`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Fail DeadlineExceeded when a queue or reader waits longer than
    /// this (TensorFlow's `RunOptions.timeout_in_ms`).
    pub timeout: Option<Duration>,
    /// A check made while the run waits: when it says so, the run gives
    /// up with Cancelled. See [`Interrupt`].
    pub interrupt: Option<Interrupt>,
}

/// A way to give up a [`Session::run_with`] that is waiting, without
/// closing the session: how a binding lets Ctrl-C through a run that
/// waits on several queues.
///
/// While a run has an interrupt, each of its waits (a dequeue, a batch,
/// a reader waiting for its next file) is cut into slices of
/// [`Interrupt::every`]; between two slices the run calls the check, and
/// when it returns `true` the run fails Cancelled. A slice that ends
/// takes nothing from its queue (a timed-out dequeue gives back what it
/// held), so a run that is not interrupted returns exactly what it would
/// have without the interrupt. A run interrupted after one of its waits
/// succeeded drops what that wait took, as a run that fails for any other
/// reason does: interrupting is for stopping the pipeline.
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::sync::Arc;
/// use std::time::Duration;
/// use feedstock_tf1::{Interrupt, RunOptions};
///
/// let stop = Arc::new(AtomicBool::new(false));
/// let flag = Arc::clone(&stop);
/// let opts = RunOptions {
///     interrupt: Some(Interrupt::new(Duration::from_millis(50), move || {
///         flag.load(Ordering::Relaxed)
///     })),
///     ..Default::default()
/// };
/// assert!(!opts.interrupt.as_ref().unwrap().interrupted());
/// stop.store(true, Ordering::Relaxed);
/// assert!(opts.interrupt.as_ref().unwrap().interrupted());
/// ```
#[derive(Clone)]
pub struct Interrupt {
    check: Arc<dyn Fn() -> bool + Send + Sync>,
    every: Duration,
}

impl Interrupt {
    /// An interrupt that calls `check` every `every` (at least 1 ms)
    /// while a run waits.
    pub fn new(
        every: Duration,
        check: impl Fn() -> bool + Send + Sync + 'static,
    ) -> Interrupt {
        Interrupt {
            check: Arc::new(check),
            every: every.max(Duration::from_millis(1)),
        }
    }

    /// How long a wait lasts between two checks.
    pub fn every(&self) -> Duration {
        self.every
    }

    /// Calls the check: whether the run should give up.
    pub fn interrupted(&self) -> bool {
        (self.check)()
    }
}

impl std::fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interrupt")
            .field("every", &self.every)
            .finish_non_exhaustive()
    }
}

/// Two interrupts are equal when they are the same check.
impl PartialEq for Interrupt {
    fn eq(&self, other: &Interrupt) -> bool {
        Arc::ptr_eq(&self.check, &other.check) && self.every == other.every
    }
}

impl Eq for Interrupt {}

/// One queue-fullness scalar, named as TensorFlow's summary.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueSummary {
    /// `queue/<queue name>/fraction_of_<capacity>_full`, or for a
    /// shuffle queue also
    /// `queue/<name>/fraction_over_<min>_of_<capacity - min>_full`.
    pub tag: String,
    /// The value, from 0 to 1.
    pub value: f64,
}

/// Runs a [`Graph`]: TensorFlow's `tf.Session`.
///
/// A session owns the state of the graph's nodes: queues, readers,
/// batching stages and variables, each made the first time a run uses it
/// (or by [`Session::start_queue_runners`], which makes them all and
/// starts the batching and producer threads). `Session` is `Send + Sync`
/// and cheap to clone (a shared handle); runs may come from several
/// threads at once.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("graph", &self.inner.graph)
            .field("closed", &self.inner.closed.load(Ordering::Relaxed))
            .finish()
    }
}

impl Session {
    /// A session over `graph`, which it shares: nodes added later can be
    /// run too.
    pub fn new(graph: &Graph) -> Session {
        Session {
            inner: Arc::new(Inner {
                graph: graph.clone(),
                states: Mutex::new(Vec::new()),
                pipeline: Mutex::new(Pipeline::new()),
                queues: Mutex::new(Vec::new()),
                coords: Mutex::new(Vec::new()),
                cache: Mutex::new(Vec::new()),
                shards: Mutex::new(Vec::new()),
                runners_added: Mutex::default(),
                op_timeout: Mutex::new(None),
                closed: Arc::new(AtomicBool::new(false)),
                started: StartedIn::default(),
            }),
        }
    }

    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.inner.graph
    }

    /// Evaluates `fetches`, each node they need once, with `feeds`
    /// replacing the outputs they name (`sess.run(fetches, feed_dict)`).
    ///
    /// Reading nodes act as in TensorFlow: fetching a reader's output
    /// reads one record (taking a file from its queue as needed), and
    /// fetching outputs of a batching node dequeues one batch for all of
    /// them.
    ///
    /// # Errors
    /// OutOfRange at the end of input; Cancelled once the session is
    /// closed; InvalidArgument for an unfed placeholder (naming it) or a
    /// fed value of the wrong dtype or shape; FailedPrecondition for an
    /// uninitialized variable or a queue whose runners were never
    /// started; any error of a reader or decoder, naming the file and
    /// record.
    pub fn run(
        &self,
        fetches: &[Output],
        feeds: &[(Output, Value)],
    ) -> Result<Vec<Value>> {
        self.run_with(fetches, feeds, &RunOptions::default())
    }

    /// [`Session::run`] with options (a timeout).
    ///
    /// # Errors
    /// As [`Session::run`]; DeadlineExceeded when a wait outlasts the
    /// timeout.
    pub fn run_with(
        &self,
        fetches: &[Output],
        feeds: &[(Output, Value)],
        opts: &RunOptions,
    ) -> Result<Vec<Value>> {
        self.check_process()?;
        let deadline = opts
            .timeout
            .map(|t| Instant::now().checked_add(t).unwrap_or_else(far_future));
        self.inner
            .run(fetches, feeds, deadline, opts.interrupt.as_ref())
    }

    /// Makes every queue, reader and batching stage of the graph, then
    /// starts their runner threads (`tf.train.start_queue_runners`).
    /// Runners of nodes added afterwards start at the next call. A stop
    /// request on `coord` closes the queues, so the threads end.
    ///
    /// # Errors
    /// As making a resource can fail (for example a filename pattern that
    /// matches nothing: NotFound); Cancelled for a closed session;
    /// Unknown when a thread cannot be started.
    pub fn start_queue_runners(
        &self,
        coord: &Coordinator,
    ) -> Result<Vec<ThreadHandle>> {
        self.check_process()?;
        let inner = &self.inner;
        inner.check_open()?;
        inner.started.mark();
        let n = inner.graph.len() as u32;
        for id in 0..n {
            if inner.graph.node(id).is_resource() {
                inner.ensure(id)?;
            }
        }
        for i in inner.graph.collected_runners(None) {
            inner.add_runner(i)?;
        }
        inner.coords.lock().push(coord.clone());
        let threads = inner.pipeline.lock().start(coord)?;
        Ok(threads)
    }

    /// Starts the threads of one queue runner defined with
    /// [`Graph::queue_runner`] (`QueueRunner.create_threads`), with those
    /// of any other runner not yet started; none if it was started in
    /// this session before (TensorFlow starts new threads once the old
    /// ones have ended).
    ///
    /// # Errors
    /// As [`Session::start_queue_runners`]; InvalidArgument for a runner
    /// of another graph.
    pub fn start_queue_runner(
        &self,
        runner: RunnerRef,
        coord: &Coordinator,
    ) -> Result<Vec<ThreadHandle>> {
        self.check_process()?;
        let inner = &self.inner;
        inner.check_open()?;
        inner.started.mark();
        inner.add_runner(runner.index)?;
        inner.coords.lock().push(coord.clone());
        let threads = inner.pipeline.lock().start(coord)?;
        Ok(threads)
    }

    /// Closes the session: every queue it made is closed with pending
    /// enqueues cancelled and every coordinator it started runners with
    /// is asked to stop, so blocked runs and runner threads return at
    /// once; runs then fail Cancelled. In a forked child of the process
    /// that started its runners it does nothing: nothing of the session
    /// runs there.
    pub fn close(&self) {
        let inner = &self.inner;
        if inner.started.forked() {
            return;
        }
        // Runs that wake from here on report Cancelled. Then stop before
        // closing, so that the runners' errors that closing causes count
        // as the stop, not as failures.
        inner.closed.store(true, Ordering::SeqCst);
        for c in inner.coords.lock().iter() {
            c.request_stop();
        }
        for q in inner.queues.lock().iter() {
            q.cancel();
        }
    }

    /// Fails in a forked child of the process that started the session's
    /// runners (`tf.train.start_queue_runners`): they did not survive the
    /// fork, and a lock one of them held stays held, so a run would wait
    /// for ever. Build the graph and the session inside the child instead
    /// (PyTorch's DataLoader workers are such children). Every run checks
    /// it first; the statistics methods, which return no error, do not.
    ///
    /// # Errors
    /// FailedPrecondition saying so.
    pub fn check_process(&self) -> Result<()> {
        self.inner.started.check(format_args!("this session"))
    }

    /// The counters of `queue` (made if no run has used it yet): its
    /// size, elements in and out, and the enqueues and dequeues blocked
    /// on it now.
    ///
    /// # Errors
    /// As making the queue can fail; FailedPrecondition in a forked child
    /// (see [`Session::check_process`]).
    pub fn queue_stats(&self, queue: QueueRef) -> Result<QueueStats> {
        self.check_process()?;
        let st = self.inner.ensure(queue.node)?;
        Ok(eval::queue_of(&st)?.stats())
    }

    /// Sets the timeout of every blocking queue operation of the session
    /// that has none of its own, runner threads' included (TensorFlow's
    /// `ConfigProto.operation_timeout_in_ms`); `None` waits for ever.
    /// Applies to the queues made so far and to those made later.
    pub fn set_operation_timeout(&self, timeout: Option<Duration>) {
        *self.inner.op_timeout.lock() = timeout;
        for q in self.inner.queues.lock().iter() {
            q.set_default_timeout(timeout);
        }
    }

    /// The remainder counters of every sharded producer the session has
    /// made, with the producer's name: records dropped and padding added
    /// by [`Remainder`](feedstock::input::Remainder).
    pub fn shard_stats(&self) -> Vec<(String, Arc<ShardStats>)> {
        self.inner.shards.lock().clone()
    }

    /// Statistics of every queue the session's runners fill.
    pub fn stats(&self) -> PipelineStats {
        self.inner.pipeline.lock().stats()
    }

    /// How full each queue is, as TensorFlow's summaries name it
    /// (`queue/<name>/fraction_of_<capacity>_full`).
    pub fn queue_summaries(&self) -> Vec<QueueSummary> {
        let mut out = Vec::new();
        for s in self.stats().stages {
            let q = &s.queue;
            out.push(QueueSummary {
                tag: format!(
                    "queue/{}/fraction_of_{}_full",
                    s.name, q.capacity
                ),
                value: s.fraction_full(),
            });
            if let (Some(min), Some(f)) =
                (q.min_after_dequeue, s.fraction_over_min())
            {
                out.push(QueueSummary {
                    tag: format!(
                        "queue/{}/fraction_over_{min}_of_{}_full",
                        s.name,
                        q.capacity.saturating_sub(min)
                    ),
                    value: f,
                });
            }
        }
        out
    }
}

impl Drop for Inner {
    /// The last handle to a session going away closes it, as dropping a
    /// TensorFlow session does: its runner threads end instead of running
    /// on with no one to read what they make.
    fn drop(&mut self) {
        self.closed.store(true, Ordering::SeqCst);
        if self.started.forked() {
            return;
        }
        for c in self.coords.get_mut().iter() {
            c.request_stop();
        }
        for q in self.queues.get_mut().iter() {
            q.cancel();
        }
    }
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400 * 365)
}

impl Inner {
    fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(Error::cancelled("the session is closed"));
        }
        Ok(())
    }

    pub(crate) fn graph_ref(&self) -> &Graph {
        &self.graph
    }

    /// The state of node `id`.
    pub(crate) fn state(&self, id: u32) -> Arc<NodeState> {
        let mut states = self.states.lock();
        let n = self.graph.len().max(id as usize + 1);
        if states.len() < n {
            states.resize_with(n, Default::default);
        }
        Arc::clone(&states[id as usize])
    }

    fn run(
        self: &Arc<Self>,
        fetches: &[Output],
        feeds: &[(Output, Value)],
        deadline: Option<Instant>,
        interrupt: Option<&Interrupt>,
    ) -> Result<Vec<Value>> {
        self.check_open()?;
        let fed: Vec<Output> = feeds.iter().map(|(o, _)| *o).collect();
        for (o, v) in feeds {
            eval::check_feed(&self.graph, *o, v)?;
        }
        let compiled = self.compiled(fetches, &fed)?;
        self.exec(&compiled, feeds, deadline, interrupt)
    }

    /// Runs `compiled` with `feeds` (checked by the caller), a user's run.
    fn exec(
        &self,
        compiled: &Compiled,
        feeds: &[(Output, Value)],
        deadline: Option<Instant>,
        interrupt: Option<&Interrupt>,
    ) -> Result<Vec<Value>> {
        // A sliced wait passes its own timeouts, which would replace the
        // queues' default one: the run applies that one itself.
        let op_timeout = match interrupt {
            Some(_) => *self.op_timeout.lock(),
            None => None,
        };
        let ctx = Ctx {
            feeds,
            deadline,
            closed: &self.closed,
            interrupt,
            op_timeout,
            user: true,
        };
        let mut slots = Vec::new();
        compiled
            .exec(&mut slots, &ctx)
            .map(|()| compiled.take_outputs(&mut slots, feeds))
            .map_err(|e| self.closed_error(e))
    }

    /// The compiled form of a fetch list and feed list, from a small
    /// cache: a training loop runs the same fetches again and again.
    fn compiled(
        self: &Arc<Self>,
        fetches: &[Output],
        fed: &[Output],
    ) -> Result<Arc<Compiled>> {
        {
            let cache = self.cache.lock();
            if let Some((_, _, c)) =
                cache.iter().find(|(f, d, _)| f == fetches && d == fed)
            {
                return Ok(Arc::clone(c));
            }
        }
        let c = Arc::new(eval::compile(self, fetches, fed)?);
        let mut cache = self.cache.lock();
        if cache.len() == CACHED_RUNS {
            cache.remove(0);
        }
        cache.push((fetches.to_vec(), fed.to_vec(), Arc::clone(&c)));
        Ok(c)
    }

    fn closed_error(&self, e: Error) -> Error {
        if self.closed.load(Ordering::SeqCst) && e.kind() != Kind::Cancelled {
            Error::cancelled(format!("the session was closed ({e})"))
        } else {
            e
        }
    }

    /// Makes node `id`'s resource if it has none yet.
    pub(crate) fn ensure(self: &Arc<Self>, id: u32) -> Result<Arc<NodeState>> {
        let st = self.state(id);
        if st.res.get().is_some() {
            return Ok(st);
        }
        let node = self.graph.node(id);
        let guard = Arc::clone(&st);
        let _made_once = guard.create.lock();
        if st.res.get().is_some() {
            return Ok(st);
        }
        let res = self.make(&node)?;
        let made: Option<Arc<dyn Queue>> = match &res {
            Resource::Queue(q) => Some(Arc::clone(q) as Arc<dyn Queue>),
            Resource::UserQueue(q) => Some(Arc::clone(q)),
            Resource::Slice(s) => Some(Arc::clone(s.indices()) as _),
            Resource::Batch(b) => Some(Arc::clone(b.queue())),
            _ => None,
        };
        if let Some(q) = made {
            q.set_default_timeout(*self.op_timeout.lock());
            if self.closed.load(Ordering::SeqCst) {
                q.cancel();
            }
            self.queues.lock().push(q);
        }
        let user_queue = matches!(res, Resource::UserQueue(_));
        if st.res.set(res).is_err() {
            return Err(Error::internal("a resource was made twice"));
        }
        if user_queue {
            // Its runners in the graph's collection are registered now
            // (started by `start_queue_runners`), so that a run reading
            // the queue before they start fails FailedPrecondition
            // instead of waiting for ever.
            for i in self.graph.collected_runners(Some(id)) {
                self.add_runner(i)?;
            }
        }
        Ok(st)
    }

    /// Adds the runner of definition `index` to the pipeline, unless this
    /// session has already.
    fn add_runner(self: &Arc<Self>, index: usize) -> Result<()> {
        let Some(def) = self.graph.runner_def(index) else {
            return Err(Error::invalid_argument(
                "a queue runner of another graph",
            ));
        };
        // Marked first: making its queue adds the collected runners of
        // that queue, this one among them.
        if !self.runners_added.lock().insert(index) {
            return Ok(());
        }
        let added = self.add_runner_def(&def);
        if added.is_err() {
            self.runners_added.lock().remove(&index);
        }
        added
    }

    fn add_runner_def(self: &Arc<Self>, def: &RunnerDef) -> Result<()> {
        let st = self.ensure(def.queue)?;
        let Some(Resource::UserQueue(queue)) = st.res.get() else {
            return Err(Error::internal("a queue runner's queue"));
        };
        let mut ops: Vec<Box<dyn FnMut() -> Result<()> + Send>> = Vec::new();
        for op in &def.ops {
            let mut run = Runner {
                compiled: Arc::new(eval::compile(self, &[*op], &[])?),
                slots: Vec::new(),
                keep: false,
            };
            ops.push(Box::new(move || run.step().map(drop)));
        }
        let runner = queues::runner(Arc::clone(queue), def, ops)?;
        self.pipeline.lock().add_runner(runner)
    }

    /// Evaluates outputs once, with no feeds (a producer's input).
    fn eval_once(self: &Arc<Self>, outs: &[Output]) -> Result<Vec<Value>> {
        self.run(outs, &[], None, None)
    }

    fn make(self: &Arc<Self>, node: &Node) -> Result<Resource> {
        Ok(match &node.op {
            Op::MatchFilenames { pattern } => {
                Resource::Once(eval::matching_files(pattern)?)
            }
            Op::StringProducer { opts, list, shard } => {
                let strings = match list {
                    Some(l) => l.clone(),
                    None => {
                        let v = self.eval_once(&node.inputs)?.remove(0);
                        let s = strings_of(&v.into_dense()?, &node.name)?;
                        if s.is_empty() {
                            return Err(Error::invalid_argument(format!(
                                "{}: no file names to read (its input is \
                                 empty, as a match_filenames_once pattern \
                                 matching no file gives)",
                                node.name
                            )));
                        }
                        s
                    }
                };
                // One reader counts the files one after the other.
                let counter = match shard {
                    Some(s) if s.count > 1 => {
                        Some(self.record_counter(node.id, &node.name)?)
                    }
                    _ => None,
                };
                let mut p = self.pipeline.lock();
                let mut b = string_input_producer(&mut p, strings);
                set_epochs!(b, opts, node);
                if let Some(s) = shard {
                    b.shard(s.index, s.count).remainder(s.remainder);
                    if let Some(stats) = b.shard_stats() {
                        self.shards.lock().push((node.name.clone(), stats));
                    }
                }
                if let Some(reader) = counter {
                    b.count_records_with(move || reader.clone());
                }
                Resource::Queue(b.build()?)
            }
            Op::InputProducer { opts } => {
                let t =
                    self.eval_once(&node.inputs)?.remove(0).into_dense()?;
                let mut p = self.pipeline.lock();
                let mut b = input_producer(&mut p, t);
                set_epochs!(b, opts, node);
                Resource::Queue(b.build()?)
            }
            Op::RangeProducer { limit, opts } => {
                let mut p = self.pipeline.lock();
                let mut b = range_input_producer(&mut p, *limit);
                set_epochs!(b, opts, node);
                Resource::Queue(b.build()?)
            }
            Op::SliceProducer { opts } => {
                let ts = self
                    .eval_once(&node.inputs)?
                    .into_iter()
                    .map(Value::into_dense)
                    .collect::<Result<Vec<_>>>()?;
                let mut p = self.pipeline.lock();
                let mut b = slice_input_producer(&mut p, ts);
                set_epochs!(b, opts, node);
                Resource::Slice(b.build()?)
            }
            Op::LimitEpochs { .. } => Resource::Counter(AtomicU64::new(0)),
            Op::Reader(kind) => Resource::Reader(make_reader(
                kind,
                Some(self.pipeline.lock().skip_log()),
            )?),
            Op::Def(def) if def.seed().is_some() => {
                Resource::rng(def.seed().flatten())
            }
            Op::Batch(spec) => Resource::Batch(self.make_batch(spec)?),
            Op::Queue { kind, capacity } => {
                Resource::UserQueue(queues::make_queue(node, kind, *capacity)?)
            }
            _ => {
                return Err(Error::internal(format!(
                    "node {} has no resource",
                    node.name
                )))
            }
        })
    }

    /// The format a sharded producer's files are counted with: that of
    /// the readers reading from it, which must agree.
    fn record_counter(&self, queue: u32, name: &str) -> Result<Reader> {
        let kinds = self.graph.readers_of(queue);
        let Some(kind) = kinds.first() else {
            return Err(Error::failed_precondition(format!(
                "{name}: a sharded producer counts its files' records with \
                 the reader that reads from it, and no reader does"
            )));
        };
        if kinds.iter().any(|k| k != kind) {
            return Err(Error::failed_precondition(format!(
                "{name}: the readers of a sharded producer read different \
                 formats; its files' records cannot be counted"
            )));
        }
        // Its own skip log: counting must not add to the regions the
        // readers then skip (and count) again.
        make_reader(kind, None)
    }

    fn make_batch(self: &Arc<Self>, spec: &BatchSpec) -> Result<BatchSource> {
        let mut closures = Vec::new();
        for list in &spec.lists {
            let mut outs = list.clone();
            outs.extend(spec.keep_input);
            let compiled = Arc::new(eval::compile(self, &outs, &[])?);
            closures.push(Runner {
                compiled,
                slots: Vec::new(),
                keep: spec.keep_input.is_some(),
            });
        }
        let mut qspec = QueueSpec::new();
        for (dtype, sparse, shape) in &spec.components {
            let mut c = if *sparse {
                ComponentSpec::sparse(*dtype)
            } else {
                ComponentSpec::new(*dtype)
            };
            if let Some(s) = shape {
                c = c.shape(s.clone());
            }
            qspec = qspec.component(c);
        }
        let o = &spec.opts;
        let mut p = self.pipeline.lock();
        let join = closures.len() > 1;
        macro_rules! common {
            ($b:expr) => {{
                let b = $b;
                b.spec(qspec.clone())
                    .name(spec.name.clone())
                    .batch_size(o.batch_size)
                    .capacity(o.capacity)
                    .enqueue_many(o.enqueue_many)
                    .allow_smaller_final_batch(o.allow_smaller_final_batch);
                if !join {
                    b.num_threads(o.num_threads);
                }
                b
            }};
        }
        let source = match &o.shuffle {
            None => {
                let mut b = if join {
                    maybe_batch_join(
                        &mut p,
                        closures.into_iter().map(Runner::call),
                    )
                } else {
                    maybe_batch(&mut p, closures.remove(0).call())
                };
                common!(&mut b).dynamic_pad(o.dynamic_pad);
                b.build()?
            }
            Some(s) => {
                let mut b = if join {
                    maybe_shuffle_batch_join(
                        &mut p,
                        closures.into_iter().map(Runner::call),
                    )
                } else {
                    maybe_shuffle_batch(&mut p, closures.remove(0).call())
                };
                common!(&mut b).min_after_dequeue(s.min_after_dequeue);
                if let Some(seed) = s.seed {
                    b.seed(seed);
                }
                b.build()?
            }
        };
        Ok(source)
    }
}

/// The strings of a rank-1 string tensor, as UTF-8.
fn strings_of(t: &Tensor, node: &str) -> Result<Vec<String>> {
    t.as_slice::<Bytes>()?
        .iter()
        .map(|b| {
            String::from_utf8(b.to_vec()).map_err(|_| {
                Error::invalid_argument(format!(
                    "{node}: a filename is not UTF-8: {:?}",
                    String::from_utf8_lossy(b)
                ))
            })
        })
        .collect()
}

/// A reader of `kind`; a TFRecord reader that skips damaged records counts
/// them in `skip_log` when given (the pipeline's, which the session's
/// statistics report).
fn make_reader(
    kind: &ReaderKind,
    skip_log: Option<SkipLog>,
) -> Result<Reader> {
    Ok(match kind {
        ReaderKind::TextLine {
            skip_header_lines,
            allow_empty_files,
        } => Reader::new(
            TextLineReader::builder()
                .skip_header_lines(*skip_header_lines)
                .allow_empty_files(*allow_empty_files)
                .build(),
        ),
        ReaderKind::FixedLength {
            record_bytes,
            header_bytes,
            footer_bytes,
            hop_bytes,
            compression,
        } => Reader::new(
            FixedLengthRecordReader::builder(*record_bytes)
                .header_bytes(*header_bytes)
                .footer_bytes(*footer_bytes)
                .hop_bytes(*hop_bytes)
                .compression(*compression)
                .build()?,
        ),
        ReaderKind::TfRecord {
            compression,
            corrupt_records,
            allow_empty_files,
        } => {
            let mut b = TfRecordReader::builder();
            b.compression(*compression)
                .corrupt_records(corrupt_records.clone())
                .allow_empty_files(*allow_empty_files);
            if let Some(log) = skip_log {
                b.skip_log(log);
            }
            Reader::new(b.build())
        }
        ReaderKind::WholeFile => Reader::new(WholeFileReader::new()),
        ReaderKind::Identity => Reader::new(IdentityReader::new()),
    })
}

/// One batching runner's closure: a compiled list of outputs and its own
/// scratch space, reused across steps.
#[derive(Clone)]
struct Runner {
    compiled: Arc<Compiled>,
    slots: Vec<Vec<Value>>,
    keep: bool,
}

impl Runner {
    fn step(&mut self) -> Result<(Vec<Value>, KeepInput)> {
        // A runner ends on its queues' errors once the session closes
        // (after the stop request); it does not watch the flag itself,
        // which is set before the stop and would look like a failure.
        static RUNNING: AtomicBool = AtomicBool::new(false);
        let ctx = Ctx {
            feeds: &[],
            deadline: None,
            closed: &RUNNING,
            interrupt: None,
            op_timeout: None,
            user: false,
        };
        self.compiled.exec(&mut self.slots, &ctx)?;
        let mut values = self.compiled.take_outputs(&mut self.slots, &[]);
        let keep = if self.keep {
            let k = values.pop().expect("keep_input was fetched");
            keep_of(&k.into_dense()?)?
        } else {
            KeepInput::Scalar(true)
        };
        Ok((values, keep))
    }

    fn call(
        mut self,
    ) -> impl FnMut() -> Result<(Vec<Value>, KeepInput)> + Clone + Send + 'static
    {
        move || self.step()
    }
}

fn keep_of(t: &Tensor) -> Result<KeepInput> {
    let v = t.as_slice::<bool>()?;
    Ok(if t.rank() == 0 {
        KeepInput::Scalar(v[0])
    } else {
        KeepInput::Each(v.to_vec())
    })
}
