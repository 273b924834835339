//! The coordinator: one stop flag, the first error, and joining.

use std::any::Any;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Kind, Result};
use crate::fork::StartedIn;

/// A thread started by a [`Pipeline`](super::Pipeline) or
/// [`Coordinator::spawn`]; its result is what [`Coordinator::join`]
/// inspects.
pub type ThreadHandle = JoinHandle<Result<()>>;

/// A callback run once, when stop is first requested.
type StopCallback = Box<dyn FnOnce() + Send>;

/// How often `join` re-checks threads it did not start itself (it is
/// woken at once for threads started through the coordinator).
const JOIN_POLL: Duration = Duration::from_millis(20);

/// Lets a set of threads stop together (TensorFlow's
/// `tf.train.Coordinator`).
///
/// Any thread may request a stop, optionally with the error that caused
/// it; every thread checks [`Coordinator::should_stop`] in its loop; and
/// the main thread [`join`](Coordinator::join)s them, getting back the
/// first real error. [`Kind::OutOfRange`] is a clean stop, not an error.
/// Stop callbacks ([`Coordinator::on_stop`]) let a stop close queues, so
/// that threads blocked on them wake up.
///
/// Cloning is cheap and every clone is the same coordinator.
///
/// ```
/// use std::time::Duration;
/// use feedstock::coord::Coordinator;
/// use feedstock::{Error, Kind};
///
/// let coord = Coordinator::new();
/// let worker = {
///     let coord = coord.clone();
///     coord.clone().spawn("worker", move || {
///         while !coord.should_stop() {
///             coord.wait_for_stop(Some(Duration::from_millis(5)));
///         }
///         Ok(())
///     })?
/// };
/// coord.request_stop_with(Error::data_loss("bad record"))?;
/// let err = coord.join(vec![worker], Duration::from_secs(10)).unwrap_err();
/// assert_eq!(err.kind(), Kind::DataLoss);
/// # Ok::<(), feedstock::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct Coordinator {
    inner: Arc<Inner>,
}

struct Inner {
    /// Set once stop is requested; read without the lock.
    stop: AtomicBool,
    /// The error kinds that count as a clean stop.
    clean: Vec<Kind>,
    state: Mutex<State>,
    /// Notified when stop is requested and when a coordinated thread
    /// ends.
    changed: Condvar,
    /// Where its threads were spawned: a forked child cannot use it.
    started: StartedIn,
}

impl Default for Inner {
    fn default() -> Inner {
        Inner {
            stop: AtomicBool::new(false),
            clean: vec![Kind::OutOfRange],
            state: Mutex::default(),
            changed: Condvar::new(),
            started: StartedIn::default(),
        }
    }
}

#[derive(Default)]
struct State {
    /// The first error passed to `request_stop_with` that is not a clean
    /// stop.
    error: Option<Error>,
    /// Callbacks to run at the first stop request.
    on_stop: Vec<StopCallback>,
    /// Threads registered to be joined by every `join`.
    registered: Vec<ThreadHandle>,
    /// Set by `join` (whatever it returns), cleared by `clear_stop`.
    joined: bool,
}

/// How [`Coordinator::join_with`] waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinOptions {
    /// How long threads get to end after a stop request.
    pub grace: Duration,
    /// Whether threads still running after `grace` are left running
    /// without an error (TensorFlow's `ignore_live_threads`); by default
    /// they are an error naming them.
    pub ignore_live_threads: bool,
}

impl JoinOptions {
    /// Waits `grace` after a stop request; live threads then are an
    /// error.
    pub fn new(grace: Duration) -> JoinOptions {
        JoinOptions {
            grace,
            ignore_live_threads: false,
        }
    }

    /// Sets [`JoinOptions::ignore_live_threads`].
    pub fn ignore_live_threads(mut self, ignore: bool) -> JoinOptions {
        self.ignore_live_threads = ignore;
        self
    }
}

impl fmt::Debug for Coordinator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.inner.state.lock();
        f.debug_struct("Coordinator")
            .field("stop_requested", &self.should_stop())
            .field("error", &st.error)
            .field("stop_callbacks", &st.on_stop.len())
            .field("registered_threads", &st.registered.len())
            .field("joined", &st.joined)
            .field("clean_stop_kinds", &self.inner.clean)
            .finish()
    }
}

impl Coordinator {
    /// A coordinator with no stop requested, for which OutOfRange is a
    /// clean stop.
    pub fn new() -> Coordinator {
        Coordinator::default()
    }

    /// A coordinator for which errors of the kinds `kinds` are a clean
    /// stop rather than an error (TensorFlow's
    /// `clean_stop_exception_types`; OutOfRange by default). With no kind,
    /// every error counts.
    pub fn with_clean_stop_kinds(
        kinds: impl IntoIterator<Item = Kind>,
    ) -> Coordinator {
        Coordinator {
            inner: Arc::new(Inner {
                clean: kinds.into_iter().collect(),
                ..Inner::default()
            }),
        }
    }

    /// The error kinds that count as a clean stop.
    pub fn clean_stop_kinds(&self) -> &[Kind] {
        &self.inner.clean
    }

    /// Whether `err` is a clean stop for this coordinator.
    fn is_clean(&self, err: &Error) -> bool {
        self.inner.clean.contains(&err.kind())
    }

    /// Requests that all threads stop. Runs the stop callbacks the first
    /// time.
    ///
    /// In a forked child of the process that spawned its threads (see
    /// [`Coordinator::check_process`]) it does nothing.
    pub fn request_stop(&self) {
        if self.inner.started.forked() {
            return;
        }
        let callbacks = {
            let mut st = self.inner.state.lock();
            if self.inner.stop.swap(true, Ordering::SeqCst) {
                return;
            }
            self.inner.changed.notify_all();
            std::mem::take(&mut st.on_stop)
        };
        // Outside the lock: a callback may close a queue, which may wake
        // threads that ask this coordinator whether to stop.
        for callback in callbacks {
            callback();
        }
    }

    /// Requests a stop because of `err`. The first error that is not a
    /// [clean stop](Coordinator::clean_stop_kinds) is kept and returned
    /// by [`Coordinator::join`]; a clean-stop error is a plain stop.
    ///
    /// # Errors
    /// `err` itself, when it is not a clean stop and the coordinator was
    /// already joined: nobody would report it otherwise (TensorFlow's
    /// `request_stop` raises it in that case). A stop is still requested.
    /// FailedPrecondition in a forked child (see
    /// [`Coordinator::check_process`]).
    pub fn request_stop_with(&self, err: Error) -> Result<()> {
        self.check_process()?;
        let mut late = None;
        if !self.is_clean(&err) {
            let mut st = self.inner.state.lock();
            if st.joined {
                late = Some(err);
            } else if st.error.is_none() {
                st.error = Some(err);
            }
        }
        self.request_stop();
        late.map_or(Ok(()), Err)
    }

    /// Forgets a stop request and its error, so that the coordinator can
    /// be used again (TensorFlow's `clear_stop`); also clears
    /// [`Coordinator::joined`]. Stop callbacks already run are not
    /// registered again.
    pub fn clear_stop(&self) {
        let mut st = self.inner.state.lock();
        st.joined = false;
        st.error = None;
        self.inner.stop.store(false, Ordering::SeqCst);
    }

    /// Registers a thread to be joined by every [`Coordinator::join`]
    /// along with the threads it is given (TensorFlow's
    /// `register_thread`): `join` with no handle then joins every
    /// registered thread.
    pub fn register_thread(&self, thread: ThreadHandle) {
        self.inner.state.lock().registered.push(thread);
        self.inner.changed.notify_all();
    }

    /// Whether [`Coordinator::join`] has run (since the last
    /// [`Coordinator::clear_stop`]).
    pub fn joined(&self) -> bool {
        self.inner.state.lock().joined
    }

    /// The error the stop was requested with, as an `Err`, if any
    /// (TensorFlow's `raise_requested_exception`).
    ///
    /// # Errors
    /// The first error that is not a clean stop.
    pub fn raise_requested_exception(&self) -> Result<()> {
        self.error().map_or(Ok(()), Err)
    }

    /// Fails in a forked child of the process that spawned the
    /// coordinator's threads: they did not survive the fork, and a lock
    /// one of them held stays held, so joining them, or waiting for a
    /// stop they would request, would never end. Build the pipeline
    /// inside the child instead (PyTorch's DataLoader workers are such
    /// children).
    ///
    /// # Errors
    /// FailedPrecondition saying so; [`Coordinator::join`] and
    /// [`Coordinator::request_stop_with`] check it first.
    pub fn check_process(&self) -> Result<()> {
        self.inner
            .started
            .check(format_args!("the coordinator of a pipeline"))
    }

    /// Whether a stop has been requested.
    pub fn should_stop(&self) -> bool {
        self.inner.stop.load(Ordering::SeqCst)
    }

    /// The error the stop was requested with, if any.
    pub fn error(&self) -> Option<Error> {
        self.inner.state.lock().error.clone()
    }

    /// Waits until a stop is requested or `timeout` passes (`None` waits
    /// for ever); returns whether a stop was requested. In a forked child
    /// (see [`Coordinator::check_process`]) it returns at once.
    pub fn wait_for_stop(&self, timeout: Option<Duration>) -> bool {
        if self.inner.started.forked() {
            return self.should_stop();
        }
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut st = self.inner.state.lock();
        while !self.should_stop() {
            match deadline {
                Some(d) => {
                    if self.inner.changed.wait_until(&mut st, d).timed_out() {
                        return self.should_stop();
                    }
                }
                None => self.inner.changed.wait(&mut st),
            }
        }
        true
    }

    /// Runs `callback` when stop is first requested (at once if it already
    /// was). Queue runners use it to close their queues on a stop.
    pub fn on_stop(&self, callback: impl FnOnce() + Send + 'static) {
        {
            let mut st = self.inner.state.lock();
            if !self.should_stop() {
                st.on_stop.push(Box::new(callback));
                return;
            }
        }
        callback();
    }

    /// A guard that requests a stop if the thread holding it fails:
    /// pass results through [`StopOnError::check`], and a panic while the
    /// guard is alive requests a stop with an Internal error.
    pub fn stop_on_error(&self) -> StopOnError {
        StopOnError {
            coord: self.clone(),
            thread: thread::current().name().unwrap_or("unnamed").to_owned(),
        }
    }

    /// Starts a thread named `name` running `f` under a
    /// [`StopOnError`] guard: an error other than OutOfRange, or a panic,
    /// requests a stop; OutOfRange requests a clean stop.
    ///
    /// # Errors
    /// Unknown when the operating system cannot start a thread.
    pub fn spawn(
        &self,
        name: impl Into<String>,
        f: impl FnOnce() -> Result<()> + Send + 'static,
    ) -> Result<ThreadHandle> {
        self.inner.started.mark();
        let coord = self.clone();
        let name = name.into();
        let thread_name = name.clone();
        thread::Builder::new()
            .name(name)
            .spawn(move || {
                let guard = coord.stop_on_error();
                let result = panic::catch_unwind(AssertUnwindSafe(f))
                    .unwrap_or_else(|payload| {
                        Err(Error::internal(format!(
                            "thread '{}' panicked: {}",
                            guard.thread,
                            panic_message(&*payload)
                        )))
                    });
                guard.check(result)
            })
            .map_err(|e| {
                Error::from(e).with_message(format!(
                    "cannot start thread '{thread_name}'"
                ))
            })
    }

    /// Waits for `threads` and every [registered](Coordinator::register_thread)
    /// thread to end, and returns the first real error; the same as
    /// [`Coordinator::join_with`] with [`JoinOptions::new`]`(grace)`.
    /// Pass no handle (`[]`) to join the registered threads only
    /// (TensorFlow's `join()`).
    ///
    /// # Errors
    /// See [`Coordinator::join_with`].
    pub fn join(
        &self,
        threads: impl IntoIterator<Item = ThreadHandle>,
        grace: Duration,
    ) -> Result<()> {
        self.join_with(threads, JoinOptions::new(grace))
    }

    /// Waits for `threads` and every registered thread to end, and
    /// returns the first real error.
    ///
    /// Like TensorFlow's `Coordinator.join`: waits until every thread has
    /// ended or a stop is requested; after a stop request, gives the
    /// remaining threads `options.grace` to end. Threads still running
    /// then are left running (detached) and, unless
    /// `options.ignore_live_threads`, named in the error. Marks the
    /// coordinator [joined](Coordinator::joined) and forgets the
    /// registered threads.
    ///
    /// # Errors
    /// The error the stop was requested with, or else the first error a
    /// thread returned that is not a clean stop (a thread that panicked
    /// gives Internal). Without such an error, DeadlineExceeded naming
    /// every thread that did not end within the grace period (unless
    /// ignored); with one, those names are appended to its message.
    pub fn join_with(
        &self,
        threads: impl IntoIterator<Item = ThreadHandle>,
        options: JoinOptions,
    ) -> Result<()> {
        self.check_process()?;
        let grace = options.grace;
        let mut threads: Vec<ThreadHandle> = threads.into_iter().collect();
        threads.append(&mut self.inner.state.lock().registered);
        let all_done = |t: &[ThreadHandle]| t.iter().all(|h| h.is_finished());
        {
            let mut st = self.inner.state.lock();
            while !all_done(&threads) && !self.should_stop() {
                self.inner.changed.wait_for(&mut st, JOIN_POLL);
            }
        }
        let deadline = Instant::now() + grace;
        {
            let mut st = self.inner.state.lock();
            while !all_done(&threads) {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                let wait = JOIN_POLL.min(deadline - now);
                self.inner.changed.wait_for(&mut st, wait);
            }
        }
        let mut first = self.error();
        let mut stragglers = Vec::new();
        for handle in threads {
            let name = handle.thread().name().unwrap_or("unnamed").to_owned();
            if !handle.is_finished() {
                stragglers.push(name);
                continue;
            }
            let err = match handle.join() {
                Ok(Ok(())) => continue,
                Ok(Err(e)) if self.is_clean(&e) => continue,
                Ok(Err(e)) => e,
                Err(payload) => Error::internal(format!(
                    "thread '{name}' panicked: {}",
                    panic_message(&*payload)
                )),
            };
            first.get_or_insert(err);
        }
        self.inner.state.lock().joined = true;
        if stragglers.is_empty() || options.ignore_live_threads {
            return first.map_or(Ok(()), Err);
        }
        let names = stragglers.join(", ");
        let late = format!(
            "threads did not stop within {grace:?} of the stop request: \
             {names}"
        );
        Err(match first {
            Some(e) => {
                let msg = format!("{} ({late})", e.message());
                e.with_message(msg)
            }
            None => Error::deadline_exceeded(late),
        })
    }

    /// Wakes `join` when a coordinated thread ends.
    fn thread_ended(&self) {
        let _st = self.inner.state.lock();
        self.inner.changed.notify_all();
    }
}

/// Requests a stop on its coordinator when the thread holding it fails;
/// see [`Coordinator::stop_on_error`].
#[derive(Debug)]
pub struct StopOnError {
    coord: Coordinator,
    thread: String,
}

impl StopOnError {
    /// Passes `result` through, requesting a stop if it is an error: with
    /// the error, or a plain stop for a clean-stop kind (OutOfRange by
    /// default).
    ///
    /// # Errors
    /// The error `result` holds.
    pub fn check<T>(&self, result: Result<T>) -> Result<T> {
        if let Err(e) = &result {
            // The error is `result`'s too: returned either way.
            let _ = self.coord.request_stop_with(e.clone());
        }
        result
    }
}

impl Drop for StopOnError {
    fn drop(&mut self) {
        if thread::panicking() {
            // The panic itself reaches whoever joins the thread.
            let _ = self.coord.request_stop_with(Error::internal(format!(
                "thread '{}' panicked",
                self.thread
            )));
        }
        self.coord.thread_ended();
    }
}

/// The message of a panic payload, when it is a string.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}
