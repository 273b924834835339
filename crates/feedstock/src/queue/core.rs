//! The blocking machinery every queue shares, generic over the element
//! type and over the buffer discipline (FIFO, random, priority).
//!
//! ADVICE FOR HACKERS
//!
//! All state lives in one `Mutex<State>`. A caller that cannot proceed
//! registers a *wait slot* (its own condition variable plus how many
//! elements, or free places, it needs) in one of two wait lists and
//! sleeps on it. Whoever changes the state walks the matching list and
//! wakes only the waiters whose need can now be met, removing them from
//! the list as it wakes them. So:
//!
//! * no thread is ever notified unless it is waiting, and a waiter is
//!   notified at most once per registration (a thread wake-up costs tens
//!   of microseconds on the machines we target);
//! * a consumer waiting for a batch of 128 is not woken 128 times;
//! * a woken waiter always re-checks the state: another thread may have
//!   taken the elements first, in which case it registers again.
//!
//! Dequeues of `n` elements wait until `n` are available and take them
//! under one lock acquisition. When `n` can never be available at once
//! (more than the capacity, or more than `capacity - min_after_dequeue`
//! for a shuffle queue), the dequeue takes what it can into a private
//! stash and waits for the rest; if it then fails (timeout, close,
//! producers gone) the stash goes back into the buffer, so no element is
//! ever lost.
//!
//! Enqueues are served in arrival order, one call at a time, as in
//! TensorFlow, whose `QueueBase` keeps a FIFO of pending enqueue attempts
//! and lets only the oldest add elements: a later call never gets an
//! element in before an earlier blocked one, and the rows of one
//! `enqueue_many` are contiguous in the queue (checked against TensorFlow
//! 2.21 in tests/queue_enqueue_order.rs). An enqueue that finds no other
//! enqueue in progress and room for all its elements puts them in and
//! returns: the uncontended path never touches the line. Otherwise the
//! call joins `State::putters`, the line of enqueues in progress, oldest
//! first. Only the head of the line adds elements: as many as there is
//! room for, then it waits for one free place. The others wait for their
//! turn; whoever ends the head's turn wakes the next head, and only if
//! there is room for it, so no enqueue is woken to find it cannot
//! proceed. The head needing one place is what rules out a deadlock
//! between a blocked producer and a blocked batch consumer: the head only
//! waits when the queue is full, a full queue satisfies every consumer's
//! need, and the others only wait for the head.
//!
//! Closing is ordered with enqueues, as in TensorFlow, where
//! `close(cancel_pending_enqueues = false)` is itself queued behind the
//! enqueues already waiting and takes effect only once they are done.
//! Here the close is *requested* at once (new enqueues fail Cancelled)
//! but the queue becomes *closed* (dequeues may drain and report the end)
//! only when no admitted enqueue is still in progress (`pending_puts` is
//! 0). So once `closed` is true the buffer can only shrink: a dequeue that
//! reports OutOfRange can never be followed by an enqueue that returns Ok
//! with its elements left unread. `close(true)` and `cancel` instead make
//! every admitted enqueue fail before it adds another element, so they
//! close at once.

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::error::{Error, Result};
use crate::fork::StartedIn;

use super::QueueStats;

/// How a queue stores its elements and which one a dequeue takes.
pub(crate) trait Buffer<T>: Send {
    /// The number of elements held.
    fn len(&self) -> usize;
    /// For a shuffle buffer, its `min_after_dequeue`.
    fn min_after_dequeue(&self) -> Option<usize> {
        None
    }
    /// How many elements are held back from dequeues while the queue is
    /// open (`min_after_dequeue` for a shuffle queue).
    fn held_back(&self) -> usize {
        self.min_after_dequeue().unwrap_or(0)
    }
    /// Adds an element.
    fn push(&mut self, item: T);
    /// Removes the next element. Called only when `len() > 0`.
    fn pop(&mut self) -> Option<T>;
    /// Returns elements taken by a dequeue that then failed, in the order
    /// they were taken, so that a FIFO gives them out again first.
    fn put_back(&mut self, items: Vec<T>);
    /// Whether elements leave in an order unrelated to the order they
    /// came in (a shuffle or priority buffer), so that rows of one `enqueue_many`
    /// batch leave at scattered times: such a queue stores each row on
    /// its own rather than as a view of the shared batch.
    const SCATTERS_ROWS: bool = false;
    /// Whether elements that fit a slab are kept in one, as
    /// [`Element::Slot`](super::element::Element::Slot)s (a shuffle
    /// buffer: a priority buffer reads each element's priority as it
    /// arrives, which a slot cannot give without its slab).
    const STORES_SLOTS: bool = false;
}

/// One blocked caller: what it needs and how to wake it.
struct Slot {
    /// Elements (for a dequeue) or free places (for an enqueue) needed
    /// before it is worth waking this caller.
    need: usize,
    /// Set, under the state lock, by whoever wakes the slot and removes
    /// it from its list.
    woken: AtomicBool,
    /// Private to this caller, so a notification wakes exactly it.
    cv: Condvar,
}

/// The blocked dequeues, oldest first.
#[derive(Default)]
struct WaitList(VecDeque<Arc<Slot>>);

impl WaitList {
    /// Wakes, oldest first, every waiter whose need fits in `budget`,
    /// spending the budget as it goes. A waiter that does not fit does not
    /// stop the walk, so a small need is never stuck behind a large one.
    fn wake_within(&mut self, mut budget: usize) {
        if self.0.is_empty() || budget == 0 {
            return;
        }
        self.0.retain(|slot| {
            if slot.need <= budget {
                budget -= slot.need;
                slot.woken.store(true, Ordering::Relaxed);
                slot.cv.notify_one();
                false
            } else {
                true
            }
        });
    }

    /// Wakes every waiter.
    fn wake_all(&mut self) {
        for slot in self.0.drain(..) {
            slot.woken.store(true, Ordering::Relaxed);
            slot.cv.notify_one();
        }
    }

    fn len(&self) -> usize {
        self.0.len()
    }
}

/// One enqueue call in the line of enqueues in progress.
#[derive(Default)]
struct Putter {
    /// Whether its thread is parked on `cv`. Set by the thread before it
    /// parks and cleared, under the state lock, by whoever wakes it, so
    /// it is notified at most once per parking and never when running.
    parked: AtomicBool,
    /// Private to this call, so a notification wakes exactly it.
    cv: Condvar,
}

impl Putter {
    /// Wakes the call if it is parked.
    fn wake(&self) {
        if self.parked.swap(false, Ordering::Relaxed) {
            self.cv.notify_one();
        }
    }
}

/// The enqueue calls in progress that could not complete on arrival,
/// oldest first: only the first (the head) adds elements.
#[derive(Default)]
struct PutLine(VecDeque<Arc<Putter>>);

impl PutLine {
    /// Wakes the head if there is `room` for it to add an element.
    fn wake_head(&self, room: usize) {
        if room > 0 {
            if let Some(head) = self.0.front() {
                head.wake();
            }
        }
    }

    /// Wakes every parked call (to fail: a cancelling close or a cancel).
    fn wake_all(&self) {
        for p in &self.0 {
            p.wake();
        }
    }

    fn is_head(&self, p: &Arc<Putter>) -> bool {
        self.0.front().is_some_and(|h| Arc::ptr_eq(h, p))
    }

    /// Removes `p`; when it was the head, wakes the next one if there is
    /// `room` for it.
    fn leave(&mut self, p: &Arc<Putter>, room: usize) {
        if self.is_head(p) {
            self.0.pop_front();
            self.wake_head(room);
        } else {
            self.0.retain(|q| !Arc::ptr_eq(q, p));
        }
    }
}

/// The producer threads a queue knows about (see
/// [`Queue::register_producers`](super::Queue::register_producers)).
#[derive(Debug, Default, Clone, Copy)]
struct Producers {
    /// Threads registered to fill the queue.
    registered: usize,
    /// Threads started so far.
    started: usize,
    /// Threads started and not yet ended.
    live: usize,
}

struct State<B> {
    buf: B,
    /// The close has taken effect: no enqueue is in progress, so the
    /// buffer only shrinks from now on and dequeues may report the end.
    closed: bool,
    /// A close was requested: new enqueues fail Cancelled. `closed`
    /// follows once `pending_puts` is 0.
    close_requested: bool,
    /// Enqueues admitted (entered before the close was requested) and not
    /// yet returned.
    pending_puts: usize,
    /// Set by `close(true)` and by `cancel`: admitted enqueues fail
    /// before adding another element.
    cancelled: bool,
    /// Set by `cancel`: every operation, blocked or new, fails Cancelled.
    aborted: bool,
    /// A shared flag (a pipeline's) that cancels the queue as soon as it
    /// is set, even before `cancel` wakes the blocked calls: so that
    /// a thread woken by the cancel of another queue of the pipeline
    /// cannot make this one look closed or stalled first.
    cancel_flag: Option<Arc<AtomicBool>>,
    /// The timeout of a blocking call given none of its own.
    default_timeout: Option<std::time::Duration>,
    enqueued: u64,
    dequeued: u64,
    producers: Producers,
    /// Blocked dequeues.
    takers: WaitList,
    /// The enqueues in progress that could not complete on arrival, in
    /// arrival order (see the module docs).
    putters: PutLine,
}

impl<B> State<B> {
    /// Whether the queue is cancelled, by `cancel` or by its flag.
    fn aborted(&self) -> bool {
        self.aborted
            || self
                .cancel_flag
                .as_ref()
                .is_some_and(|f| f.load(Ordering::SeqCst))
    }

    fn available<T>(&self) -> usize
    where
        B: Buffer<T>,
    {
        if self.closed {
            self.buf.len()
        } else {
            self.buf.len().saturating_sub(self.buf.held_back())
        }
    }
}

/// A bounded blocking queue of `T` over the buffer `B`.
pub(crate) struct Core<T, B> {
    name: String,
    capacity: usize,
    state: Mutex<State<B>>,
    /// Bumped under the lock at every change a waiter may care about, so
    /// that a caller about to wait can spin briefly on it without the
    /// lock.
    version: AtomicU64,
    /// Where its runner threads started: a forked child cannot use it.
    started: StartedIn,
    _element: std::marker::PhantomData<fn(T) -> T>,
}

impl<T, B: Buffer<T>> fmt::Debug for Core<T, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.state.lock();
        f.debug_struct("Queue")
            .field("name", &self.name)
            .field("capacity", &self.capacity)
            .field("size", &st.buf.len())
            .field("closed", &st.closed)
            .finish()
    }
}

impl<T, B: Buffer<T>> Core<T, B> {
    /// A queue named `name` (for error messages) holding at most
    /// `capacity` elements.
    pub(crate) fn new(name: String, capacity: usize, buf: B) -> Core<T, B> {
        Core {
            name,
            capacity,
            version: AtomicU64::new(0),
            started: StartedIn::default(),
            state: Mutex::new(State {
                buf,
                closed: false,
                close_requested: false,
                pending_puts: 0,
                cancelled: false,
                aborted: false,
                cancel_flag: None,
                default_timeout: None,
                enqueued: 0,
                dequeued: 0,
                producers: Producers::default(),
                takers: WaitList::default(),
                putters: PutLine::default(),
            }),
            _element: std::marker::PhantomData,
        }
    }

    /// Calls `f` with the buffer, under the lock (for tests that inspect
    /// what a queue holds).
    #[cfg(test)]
    pub(crate) fn with_buf<R>(&self, f: impl FnOnce(&B) -> R) -> R {
        f(&self.state.lock().buf)
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    pub(crate) fn size(&self) -> usize {
        self.state.lock().buf.len()
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    pub(crate) fn stats(&self) -> QueueStats {
        let st = self.state.lock();
        QueueStats {
            size: st.buf.len(),
            capacity: self.capacity,
            min_after_dequeue: st.buf.min_after_dequeue(),
            enqueued: st.enqueued,
            dequeued: st.dequeued,
            closed: st.closed,
            blocked_enqueues: st.putters.0.len(),
            blocked_dequeues: st.takers.len(),
        }
    }

    /// Adds `items` in order, waiting for room as needed. Without a
    /// `timeout`, the queue's default timeout (if any) applies.
    pub(crate) fn put(
        &self,
        items: Vec<T>,
        timeout: Option<Duration>,
    ) -> Result<()> {
        self.put_or_keep(items, timeout, &mut Vec::new())
    }

    /// As [`Core::put`], but a failed enqueue moves the items it did not
    /// add into `unput`.
    pub(crate) fn put_or_keep(
        &self,
        items: impl IntoIterator<Item = T, IntoIter: ExactSizeIterator<Item = T>>,
        timeout: Option<Duration>,
        unput: &mut Vec<T>,
    ) -> Result<()> {
        let mut items = items.into_iter();
        let result = self.put_iter(&mut items, timeout);
        if result.is_err() {
            unput.extend(items);
        }
        result
    }

    fn put_iter(
        &self,
        items: &mut impl ExactSizeIterator<Item = T>,
        timeout: Option<Duration>,
    ) -> Result<()> {
        self.check_process()?;
        let mut st = self.lock();
        if st.aborted() {
            return Err(self.aborted_error("enqueue to"));
        }
        if st.close_requested {
            return Err(Error::cancelled(format!(
                "queue '{}' is closed",
                self.name
            )));
        }
        let deadline = deadline(timeout.or(st.default_timeout));
        st.pending_puts += 1;
        let result = self.put_admitted(&mut st, items, deadline);
        st.pending_puts -= 1;
        if st.pending_puts == 0 && st.close_requested && !st.closed {
            // The last enqueue admitted before a close request is done:
            // the close takes effect now.
            self.finish_close(&mut st);
        }
        result
    }

    /// The body of [`Core::put`] once the enqueue is admitted (counted in
    /// `pending_puts`): all at once when no other enqueue is in line and
    /// there is room, else in its turn (see the module docs).
    fn put_admitted(
        &self,
        st: &mut MutexGuard<'_, State<B>>,
        items: &mut impl ExactSizeIterator<Item = T>,
        deadline: Option<Instant>,
    ) -> Result<()> {
        let total = items.len();
        if st.putters.0.is_empty() {
            // Nobody ahead: this call is the head of an empty line.
            self.check_put(st, 0, total)?;
            self.push_some(st, items);
            if items.len() == 0 {
                return Ok(());
            }
        }
        let me = Arc::new(Putter::default());
        st.putters.0.push_back(Arc::clone(&me));
        let result = self.put_in_turn(st, items, total, &me, deadline);
        // A call spinning to take the next turn must see the change even
        // when this one leaves without adding anything.
        self.bump();
        let room = self.capacity.saturating_sub(st.buf.len());
        st.putters.leave(&me, room);
        result
    }

    /// Waits for the turn of the enqueue `me`, in line, and adds its
    /// elements as room appears.
    fn put_in_turn(
        &self,
        st: &mut MutexGuard<'_, State<B>>,
        items: &mut impl ExactSizeIterator<Item = T>,
        total: usize,
        me: &Arc<Putter>,
        deadline: Option<Instant>,
    ) -> Result<()> {
        // Spin at most once between two parkings.
        let mut spun = false;
        loop {
            self.check_put(st, total - items.len(), total)?;
            if st.putters.is_head(me) {
                self.push_some(st, items);
                if items.len() == 0 {
                    return Ok(());
                }
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(Error::deadline_exceeded(format!(
                    "enqueue to queue '{}' timed out; {} of {total} \
                     elements were enqueued",
                    self.name,
                    total - items.len()
                )));
            }
            if !spun && self.spin(st) {
                spun = true;
            } else {
                me.parked.store(true, Ordering::Relaxed);
                match deadline {
                    Some(d) => {
                        me.cv.wait_until(st, d);
                    }
                    None => me.cv.wait(st),
                }
                me.parked.store(false, Ordering::Relaxed);
                spun = false;
            }
        }
    }

    /// Fails an admitted enqueue, which has added `done` of its `total`
    /// elements, if the queue was cancelled or closed cancelling pending
    /// enqueues. Checked before adding anything, so that no element goes
    /// in after a cancelling close has closed the queue.
    fn check_put(
        &self,
        st: &State<B>,
        done: usize,
        total: usize,
    ) -> Result<()> {
        if st.aborted() {
            return Err(self.aborted_error("enqueue to").with_message(
                format!(
                    "pipeline cancelled while enqueuing to queue '{}'; \
                 {done} of {total} elements were enqueued",
                    self.name
                ),
            ));
        }
        if st.cancelled {
            return Err(Error::cancelled(format!(
                "queue '{}' was closed with pending enqueues cancelled; \
                 {done} of {total} elements were enqueued",
                self.name
            )));
        }
        Ok(())
    }

    /// Adds as many of `items` as there is room for, waking the dequeues
    /// they satisfy.
    fn push_some(
        &self,
        st: &mut State<B>,
        items: &mut impl ExactSizeIterator<Item = T>,
    ) {
        let room = self.capacity.saturating_sub(st.buf.len());
        let k = room.min(items.len());
        if k > 0 {
            for item in items.by_ref().take(k) {
                st.buf.push(item);
            }
            st.enqueued += k as u64;
            self.bump();
            let budget = st.available();
            st.takers.wake_within(budget);
        }
    }

    /// FailedPrecondition in a forked child of the process that started
    /// the queue's runners, before any lock is taken (see `crate::fork`).
    fn check_process(&self) -> Result<()> {
        self.started.check(format_args!("queue '{}'", self.name))
    }

    /// The error of an operation on a cancelled queue.
    fn aborted_error(&self, what: &str) -> Error {
        Error::cancelled(format!(
            "{what} queue '{}' failed: its pipeline was cancelled",
            self.name
        ))
    }

    /// Makes a requested close take effect. Called with the lock held,
    /// once no admitted enqueue is in progress or every one is cancelled
    /// (it then adds nothing more).
    fn finish_close(&self, st: &mut State<B>) {
        debug_assert!(st.pending_puts == 0 || st.cancelled);
        st.closed = true;
        self.bump();
        st.takers.wake_all();
    }

    /// Removes `n` elements. With `partial_on_close`, a closed queue
    /// holding fewer than `n` (but some) elements gives what it has.
    pub(crate) fn take(
        &self,
        n: usize,
        partial_on_close: bool,
        timeout: Option<Duration>,
    ) -> Result<Vec<T>> {
        self.check_process()?;
        let mut taken: Vec<T> = Vec::new();
        let mut st = self.lock();
        if st.aborted() {
            return Err(self.aborted_error("dequeue from"));
        }
        if n == 0 {
            return Ok(Vec::new());
        }
        let deadline = deadline(timeout.or(st.default_timeout));
        // Spin at most once between two parkings.
        let mut spun = false;
        // The most elements an open queue can ever offer at once.
        let reachable =
            self.capacity.saturating_sub(st.buf.held_back()).max(1);
        loop {
            if st.aborted() {
                if !taken.is_empty() {
                    st.buf.put_back(taken);
                }
                return Err(self.aborted_error("dequeue from"));
            }
            let want = n - taken.len();
            let need = want.min(reachable);
            let avail = st.available();
            if avail >= need || (st.closed && partial_on_close && avail > 0) {
                let k = avail.min(want);
                taken.reserve(k);
                for _ in 0..k {
                    taken.extend(st.buf.pop());
                }
                self.bump();
                let room = self.capacity.saturating_sub(st.buf.len());
                st.putters.wake_head(room);
                if taken.len() == n || st.closed && partial_on_close {
                    st.dequeued += taken.len() as u64;
                    return Ok(taken);
                }
                continue;
            }
            let err = if st.closed {
                if partial_on_close && !taken.is_empty() {
                    st.dequeued += taken.len() as u64;
                    return Ok(taken);
                }
                Error::out_of_range(format!(
                    "queue '{}' is closed and has {} elements, fewer than \
                     the {n} requested",
                    self.name,
                    avail + taken.len()
                ))
            } else if let Some(err) = self.stalled(&st.producers) {
                err
            } else if deadline.is_some_and(|d| Instant::now() >= d) {
                Error::deadline_exceeded(format!(
                    "dequeue of {n} from queue '{}' timed out with {} \
                     available",
                    self.name,
                    avail + taken.len()
                ))
            } else {
                if !spun && self.spin(&mut st) {
                    spun = true;
                } else {
                    wait(&mut st, |s| &mut s.takers, need, deadline);
                    spun = false;
                }
                continue;
            };
            if !taken.is_empty() {
                st.buf.put_back(taken);
                let budget = st.available();
                st.takers.wake_within(budget);
            }
            return Err(err);
        }
    }

    /// Takes the state lock for an enqueue or a dequeue, spinning first
    /// (see [`crate::spin`]): a dequeue of 128 from a shuffle queue holds
    /// it for about 2 µs, an enqueue for less.
    fn lock(&self) -> MutexGuard<'_, State<B>> {
        crate::spin::lock(&self.state)
    }

    /// Records a change of state. Called with the lock held.
    fn bump(&self) {
        self.version.fetch_add(1, Ordering::Release);
    }

    /// Before parking: releases the lock and spins briefly (63 pause
    /// instructions in rounds of doubling length, a few microseconds at
    /// most) until the state changes. Returns whether it changed, in which
    /// case the caller re-checks instead of parking. Parking and being
    /// woken costs tens of microseconds; a thread running on the other
    /// CPU often changes the state sooner. It does not yield: on a loaded
    /// machine a yield gives the CPU away for a whole time slice, and
    /// measured slower than parking at once.
    fn spin(&self, st: &mut MutexGuard<'_, State<B>>) -> bool {
        let seen = self.version.load(Ordering::Acquire);
        let changed = || self.version.load(Ordering::Acquire) != seen;
        MutexGuard::unlocked(st, || {
            (0..=5).any(|step| {
                for _ in 0..1u32 << step {
                    std::hint::spin_loop();
                }
                changed()
            })
        }) || changed()
    }

    /// The error for a dequeue that would wait on producers that will never
    /// come, if that is the case.
    fn stalled(&self, p: &Producers) -> Option<Error> {
        if p.registered == 0 || p.live > 0 {
            return None;
        }
        let why = if p.started == 0 {
            format!(
                "none of its {} runner threads has been started (start the \
                 pipeline before dequeuing)",
                p.registered
            )
        } else {
            format!(
                "all {} of its runner threads have ended without closing it",
                p.started
            )
        };
        Some(Error::failed_precondition(format!(
            "dequeue from queue '{}' would block forever: {why}",
            self.name
        )))
    }

    /// Returns elements to the queue (a batch that could not be built).
    pub(crate) fn put_back(&self, items: Vec<T>) {
        let mut st = self.state.lock();
        st.buf.put_back(items);
        self.bump();
        let budget = st.available();
        st.takers.wake_within(budget);
    }

    /// Closes the queue; reports whether this call requested the close
    /// first. Without `cancel_pending_enqueues` the close takes effect
    /// once the enqueues in progress are done (see the module docs).
    /// In a forked child of the process that started its runners, does
    /// nothing: nothing of the queue runs there.
    pub(crate) fn close(&self, cancel_pending_enqueues: bool) -> bool {
        if self.started.forked() {
            return false;
        }
        let mut st = self.state.lock();
        let closing = !st.close_requested;
        st.close_requested = true;
        self.bump();
        if cancel_pending_enqueues && !st.cancelled {
            st.cancelled = true;
            st.putters.wake_all();
        }
        // After a cancelling close no admitted enqueue adds another
        // element, so the close may take effect while they wake up.
        if !st.closed && (st.cancelled || st.pending_puts == 0) {
            self.finish_close(&mut st);
        }
        closing
    }

    /// Cancels the queue: every blocked operation wakes and fails
    /// Cancelled, and so does every later one. Reports whether this call
    /// cancelled it. Does nothing in a forked child (see [`Core::close`]).
    pub(crate) fn cancel(&self) -> bool {
        if self.started.forked() {
            return false;
        }
        let mut st = self.state.lock();
        if st.aborted() {
            return false;
        }
        st.aborted = true;
        st.cancelled = true;
        st.close_requested = true;
        st.closed = true;
        self.bump();
        st.putters.wake_all();
        st.takers.wake_all();
        true
    }

    /// Whether the queue was cancelled.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.state.lock().aborted()
    }

    /// Cancels the queue as soon as `flag` is set (see `State`).
    pub(crate) fn set_cancel_flag(&self, flag: Arc<AtomicBool>) {
        self.state.lock().cancel_flag = Some(flag);
    }

    /// Sets the timeout of every blocking call given none of its own.
    pub(crate) fn set_default_timeout(&self, timeout: Option<Duration>) {
        self.state.lock().default_timeout = timeout;
    }

    pub(crate) fn register_producers(&self, threads: usize) {
        self.state.lock().producers.registered += threads;
    }

    pub(crate) fn producers_started(&self, threads: usize) {
        self.started.mark();
        let mut st = self.state.lock();
        st.producers.started += threads;
        st.producers.live += threads;
    }

    pub(crate) fn producer_ended(&self) {
        let mut st = self.state.lock();
        st.producers.live = st.producers.live.saturating_sub(1);
        self.bump();
        if st.producers.live == 0 {
            // Blocked dequeues re-check and fail instead of hanging.
            st.takers.wake_all();
        }
    }
}

/// Registers a slot needing `need` in the list `list` selects, sleeps
/// until woken or until `deadline`, and deregisters if not woken.
fn wait<B>(
    st: &mut MutexGuard<'_, State<B>>,
    list: fn(&mut State<B>) -> &mut WaitList,
    need: usize,
    deadline: Option<Instant>,
) {
    let slot = Arc::new(Slot {
        need,
        woken: AtomicBool::new(false),
        cv: Condvar::new(),
    });
    list(st).0.push_back(Arc::clone(&slot));
    match deadline {
        Some(d) => {
            slot.cv.wait_until(st, d);
        }
        None => slot.cv.wait(st),
    }
    if !slot.woken.load(Ordering::Relaxed) {
        list(st).0.retain(|s| !Arc::ptr_eq(s, &slot));
    }
}

/// The deadline `timeout` from now; `None` (wait forever) when absent or
/// too far in the future to represent.
fn deadline(timeout: Option<Duration>) -> Option<Instant> {
    timeout.and_then(|t| Instant::now().checked_add(t))
}
