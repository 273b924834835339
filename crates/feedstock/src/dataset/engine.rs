//! The engine under every [`Dataset`](super::Dataset) and
//! [`RecordStream`](super::stream::RecordStream): reader threads that read
//! and decode blocks of records in an order fixed by the seed, and the
//! consumer's side that takes rows from those blocks, directly or through
//! a shuffle buffer, and can say at any moment exactly where it is.
//!
//! # How it works
//!
//! The order of each epoch is a pure function of the sources' record
//! counts, the [`Order`], the seed, the epoch and the shard
//! ([`Layout`]); nothing about it depends on what was read or when. That
//! order is cut into blocks of `block_size` records, which the reader
//! threads read (grouped by file, in ascending offset order) and decode
//! in parallel. The consumer takes the blocks in order (or, not
//! deterministic, in the order they are ready) and hands their rows out,
//! directly or through the shuffle buffer, whose random choices come from
//! a seeded generator.
//!
//! A checkpoint therefore needs only: which blocks were taken, the
//! positions (file, record number, epoch) of the rows taken but not yet
//! handed out (a part of one block, and the shuffle buffer), and the
//! generator's position. Restoring reads those records again by
//! position, decodes them, and carries on. Blocks that were read ahead
//! but not taken are simply read again.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use parking_lot::{Condvar, Mutex};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::checkpoint::{
    self as checkpoint, Checkpoint, CheckpointProto, Refs, FORMAT_VERSION,
};
use super::decode::{records_column, Column, Decode};
use super::gather::{gather, Run};
use super::order::{Layout, Ref, PAD};
use super::source::{Fetched, Fnv, Record, Source};
use crate::decode::Records;
use crate::error::{Error, Kind, Result};
use crate::input::shard::{Remainder, Shard};
use crate::tensor::Value;
use bytes::Bytes;

/// The order a pipeline hands records out in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Order {
    /// The files in the order given, each front to back.
    #[default]
    Sequential,
    /// The files in an order drawn per epoch from the seed, each front to
    /// back (as `string_input_producer(shuffle=True)` with one reader).
    Files,
    /// A shuffle buffer of this many records over the files, read front
    /// to back in an order drawn per epoch. The buffer spans epoch
    /// boundaries, as a `shuffle_batch` queue does.
    Buffer(usize),
    /// A seeded permutation of every record of every file, per epoch.
    Global,
}

/// Records per block by default: the unit the reader threads read and
/// decode, and the consumer takes.
pub const DEFAULT_BLOCK_SIZE: usize = 256;

/// Blocks each reader thread may read ahead of the consumer.
const AHEAD_PER_THREAD: u64 = 2;

/// Where a row came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Meta {
    /// File and record number ([`PAD`] for padding).
    pub(crate) r: Ref,
    /// The epoch it belongs to.
    pub(crate) epoch: u64,
    /// Its offset in the (decompressed) file.
    pub(crate) offset: u64,
}

/// A decoded block: one value per component, each with one row per meta.
#[derive(Debug)]
pub(crate) struct Block {
    pub(crate) metas: Vec<Meta>,
    pub(crate) columns: Vec<Column>,
}

/// One row of a block, not yet handed out.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(crate) block: Arc<Block>,
    pub(crate) row: usize,
}

impl Row {
    pub(crate) fn meta(&self) -> &Meta {
        &self.block.metas[self.row]
    }
}

/// Everything that fixes what a pipeline delivers.
#[derive(Clone)]
pub(crate) struct Config {
    pub(crate) source: Arc<dyn Source>,
    pub(crate) decode: Option<Arc<dyn Decode>>,
    pub(crate) num_epochs: Option<u64>,
    pub(crate) seed: u64,
    pub(crate) order: Order,
    pub(crate) shard: Shard,
    pub(crate) remainder: Remainder,
    pub(crate) threads: usize,
    pub(crate) deterministic: bool,
    pub(crate) block_size: usize,
    /// Shards take interleaved places of one order (see
    /// [`Layout::elastic`]).
    pub(crate) elastic: bool,
    /// What the front door adds to the settings hash (batching, say).
    pub(crate) extra: u64,
}

impl Config {
    /// A hash of everything a checkpoint depends on: the sources'
    /// contents (fingerprints, not names, so data may move), the decoder
    /// and the settings that shape the order.
    fn settings_hash(&self) -> u64 {
        let mut h = Fnv::default();
        h.u64(u64::from(FORMAT_VERSION));
        h.u64(self.source.counts().len() as u64);
        self.source.fingerprint(&mut h);
        match &self.decode {
            Some(d) => d.fingerprint(&mut h),
            None => h.bytes(b"records"),
        }
        let (kind, n) = match self.order {
            Order::Sequential => (0, 0),
            Order::Buffer(n) => (1, n as u64),
            Order::Global => (2, 0),
            Order::Files => (3, 0),
        };
        h.u64(kind);
        h.u64(n);
        h.u64(self.seed);
        if self.elastic {
            // Not the shard: an elastic checkpoint resumes on any host of
            // any number of hosts.
            h.bytes(b"elastic");
        } else {
            h.u64(self.shard.index() as u64);
            h.u64(self.shard.count() as u64);
        }
        h.u64(matches!(self.remainder, Remainder::Pad) as u64);
        h.u64(self.num_epochs.map_or(u64::MAX, |e| e));
        h.u64(self.block_size as u64);
        h.u64(self.extra);
        h.finish()
    }
}

/// What the reader threads share with the consumer.
struct Context {
    source: Arc<dyn Source>,
    decode: Option<Arc<dyn Decode>>,
    layout: Layout,
    block_size: u64,
    /// Blocks per full epoch.
    bpe: u64,
    /// Blocks of the first epoch of this run (fewer than `bpe` when an
    /// elastic run resumes mid-epoch).
    bpe0: u64,
    /// The record that stands in for padding: the first of the data.
    pad_with: Option<Ref>,
}

impl Context {
    /// Reads and decodes block `id`.
    fn read_block(&self, id: u64) -> Result<Block> {
        let first = self.layout.first_epoch;
        let (epoch, b) = if id < self.bpe0 {
            (first, id)
        } else {
            let k = id - self.bpe0;
            (first + 1 + k / self.bpe, k % self.bpe)
        };
        let from = b * self.block_size;
        let to = (from + self.block_size).min(self.layout.per_host_in(epoch));
        let refs: Vec<(Ref, u64)> = self
            .layout
            .refs(epoch, from, to)
            .into_iter()
            .map(|r| (r, epoch))
            .collect();
        self.fetch(&refs)
    }

    /// Reads the records `refs` (with their epochs), in that order, and
    /// decodes them.
    fn fetch(&self, refs: &[(Ref, u64)]) -> Result<Block> {
        let mut by_file: BTreeMap<u32, (Vec<usize>, Vec<u64>)> =
            BTreeMap::new();
        let files = self.source.counts().len();
        for (k, (r, _)) in refs.iter().enumerate() {
            let r = if r.file == PAD {
                self.pad_with
                    .ok_or_else(|| Error::internal("padding with no record"))?
            } else {
                *r
            };
            if r.file as usize >= files {
                return Err(Error::invalid_argument(format!(
                    "the checkpoint names file {} of {files}",
                    r.file
                )));
            }
            let e = by_file.entry(r.file).or_default();
            e.0.push(k);
            e.1.push(r.ordinal);
        }
        let mut metas: Vec<Meta> = refs
            .iter()
            .map(|&(r, epoch)| Meta {
                r,
                epoch,
                offset: 0,
            })
            .collect();
        let mut records: Vec<Option<Record>> = vec![None; refs.len()];
        let mut parts: Vec<(Vec<usize>, Vec<Value>)> = Vec::new();
        for (file, (slots, ordinals)) in by_file {
            match self.source.read(file, &ordinals)? {
                Fetched::Records(recs) => {
                    if recs.len() != slots.len() {
                        return Err(short(recs.len(), slots.len()));
                    }
                    for (k, rec) in slots.into_iter().zip(recs) {
                        metas[k].offset = rec.position.offset;
                        records[k] = Some(rec);
                    }
                }
                Fetched::Rows(cols) => {
                    let got = cols.first().map_or(0, super::source::rows_of);
                    if got != slots.len() {
                        return Err(short(got, slots.len()));
                    }
                    for (&k, &o) in slots.iter().zip(&ordinals) {
                        metas[k].offset = o;
                    }
                    parts.push((slots, cols));
                }
            }
        }
        if !parts.is_empty() {
            return self.rows_block(metas, parts);
        }
        let records: Vec<Record> = records
            .into_iter()
            .map(|r| r.ok_or_else(|| Error::internal("a record not read")))
            .collect::<Result<_>>()?;
        let columns = match &self.decode {
            None => {
                let values: Vec<Bytes> =
                    records.iter().map(|r| r.value.clone()).collect();
                vec![Column::Stacked(records_column(&values)?)]
            }
            Some(d) => self.decode_records(&**d, &metas, &records)?,
        };
        Ok(Block { metas, columns })
    }

    /// Decodes `records`; on an error that names no record, decodes the
    /// block again with every record's key (the error path only: keys
    /// are strings built per record) so that the error names it.
    fn decode_records(
        &self,
        d: &dyn Decode,
        metas: &[Meta],
        records: &[Record],
    ) -> Result<Vec<Column>> {
        let values: Vec<Bytes> =
            records.iter().map(|r| r.value.clone()).collect();
        match d.decode_columns(Records::new(&values)) {
            Ok(cols) => Ok(cols),
            Err(e) if e.key().is_some() || e.is_out_of_memory() => Err(e),
            Err(e) => {
                let keys: Vec<String> = metas
                    .iter()
                    .zip(records)
                    .map(|(m, rec)| self.key(m, rec))
                    .collect();
                match d.decode_columns(Records::new(&values).with_keys(&keys)?)
                {
                    Ok(_) => Err(e),
                    Err(named) => Err(named),
                }
            }
        }
    }

    /// The key of the record at `m` (`<pad>:KEY` for padding).
    pub(crate) fn key(&self, m: &Meta, rec: &Record) -> String {
        if m.r.file == PAD {
            let file = self.pad_with.map_or(0, |r| r.file);
            return format!("<pad>:{}", self.source.key(file, rec));
        }
        self.source.key(m.r.file, rec)
    }

    /// A block of rows that were already tensors (arrays), put back in
    /// the order asked and passed through the decoder's per-row stage.
    fn rows_block(
        &self,
        metas: Vec<Meta>,
        parts: Vec<(Vec<usize>, Vec<Value>)>,
    ) -> Result<Block> {
        let n = metas.len();
        let mut place = vec![(0usize, 0usize); n];
        for (p, (slots, _)) in parts.iter().enumerate() {
            for (i, &k) in slots.iter().enumerate() {
                place[k] = (p, i);
            }
        }
        let width = parts[0].1.len();
        let mut columns = Vec::with_capacity(width);
        for c in 0..width {
            let runs: Vec<Run<'_>> = place
                .iter()
                .map(|&(p, i)| Run {
                    value: &parts[p].1[c],
                    start: i,
                    len: 1,
                })
                .collect();
            columns.push(gather(&runs)?);
        }
        let columns = match &self.decode {
            None => columns.into_iter().map(Column::Stacked).collect(),
            Some(d) => d.decode_rows_columns(columns)?,
        };
        Ok(Block { metas, columns })
    }
}

fn short(got: usize, asked: usize) -> Error {
    Error::internal(format!("a source gave {got} records for {asked} asked"))
}

/// The state the consumer and its reader threads share.
struct Shared {
    state: Mutex<State>,
    /// Wakes reader threads: room to read ahead, or stop.
    work: Condvar,
    /// Wakes the consumer: a block was read, or cancel.
    done: Condvar,
    /// Blocks that may be read ahead of the first block not taken.
    window: u64,
    /// The first block past the last epoch (`u64::MAX`: none).
    end_block: u64,
}

struct State {
    /// Every block before it has been taken.
    next_block: u64,
    /// Blocks at or after `next_block` already taken.
    ahead: BTreeSet<u64>,
    /// The next block a reader thread will read.
    next_dispatch: u64,
    /// Blocks read and not yet taken.
    results: BTreeMap<u64, Result<Block>>,
    /// The consumer was dropped or cancelled: reader threads end.
    stop: bool,
    /// Cancelled: waits end with Cancelled.
    cancelled: bool,
}

/// A reader thread: reads the next block there is room for, until the
/// consumer stops or the blocks run out.
fn work(shared: &Shared, ctx: &Context) {
    loop {
        let id = {
            let mut st = shared.state.lock();
            loop {
                if st.stop {
                    return;
                }
                // Blocks taken already are never read again: those below
                // `next_block` (the consumer may have passed blocks
                // restored as taken before a thread got here) and those
                // in `ahead`.
                st.next_dispatch = st.next_dispatch.max(st.next_block);
                while st.ahead.contains(&st.next_dispatch) {
                    st.next_dispatch += 1;
                }
                if st.next_dispatch >= shared.end_block {
                    return;
                }
                if st.next_dispatch
                    < st.next_block.saturating_add(shared.window)
                {
                    st.next_dispatch += 1;
                    break st.next_dispatch - 1;
                }
                shared.work.wait(&mut st);
            }
        };
        let result = ctx.read_block(id);
        let mut st = shared.state.lock();
        st.results.insert(id, result);
        shared.done.notify_all();
    }
}

/// The running engine: reader threads and the consumer's state. Dropping
/// it stops and joins the threads.
pub(crate) struct Engine {
    shared: Arc<Shared>,
    ctx: Arc<Context>,
    workers: Vec<JoinHandle<()>>,
    order: Order,
    deterministic: bool,
    elastic: bool,
    /// The epoch of the last row handed out, and the rows of it handed
    /// out (this run).
    at: (u64, u64),
    settings: u64,
    /// Rows of the last block taken, not yet handed out (or moved to the
    /// buffer).
    incoming: VecDeque<Row>,
    /// The shuffle buffer ([`Order::Buffer`]).
    buffer: Vec<Row>,
    /// The shuffle buffer's choices.
    rng: ChaCha8Rng,
    /// Rows handed out, over the pipeline's whole life.
    delivered: u64,
    /// The error that stopped the engine.
    failed: Option<Error>,
}

impl fmt::Debug for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("files", &self.ctx.source.names().len())
            .field("order", &self.order)
            .field("deterministic", &self.deterministic)
            .field("delivered", &self.delivered)
            .field("buffered", &self.buffer.len())
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Restores `restore` if given (after checking every field of it
    /// against this configuration), and starts the reader threads.
    pub(crate) fn start(
        cfg: &Config,
        restore: Option<&Checkpoint>,
    ) -> Result<Engine> {
        let counts = cfg.source.counts();
        if counts.is_empty() {
            return Err(Error::invalid_argument(
                "a pipeline needs at least one file",
            ));
        }
        if counts.len() >= PAD as usize {
            return Err(Error::invalid_argument("too many files"));
        }
        if cfg.elastic && !cfg.deterministic {
            return Err(Error::invalid_argument(
                "an elastic pipeline must be deterministic: its position \
                 is the number of places taken in order",
            ));
        }
        let block_size = cfg.block_size.max(1) as u64;
        let (first_epoch, first_place) = match restore {
            Some(cp) if cp.proto.elastic => {
                (cp.proto.elastic_epoch, cp.proto.elastic_place)
            }
            _ => (0, 0),
        };
        let layout = Layout {
            counts: counts.to_vec(),
            total: counts.iter().sum(),
            order: cfg.order,
            seed: cfg.seed,
            shard: cfg.shard,
            remainder: cfg.remainder,
            elastic: cfg.elastic,
            first_epoch,
            first_place,
            buffered: Default::default(),
        };
        let per = layout.per_host();
        let bpe = per.div_ceil(block_size);
        let bpe0 = layout.per_host_in(first_epoch).div_ceil(block_size);
        let end_block = match cfg.num_epochs {
            Some(e) if e <= first_epoch => 0,
            Some(e) => {
                bpe0.saturating_add((e - first_epoch - 1).saturating_mul(bpe))
            }
            None if bpe == 0 => bpe0,
            None => u64::MAX,
        };
        let settings = cfg.settings_hash();
        let pad_with = counts.iter().position(|&c| c > 0).map(|f| Ref {
            file: f as u32,
            ordinal: 0,
        });
        let ctx = Arc::new(Context {
            source: Arc::clone(&cfg.source),
            decode: cfg.decode.clone(),
            layout,
            block_size,
            bpe,
            bpe0,
            pad_with,
        });
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        rng.set_stream(u64::MAX);
        let mut state = State {
            next_block: 0,
            ahead: BTreeSet::new(),
            next_dispatch: 0,
            results: BTreeMap::new(),
            stop: false,
            cancelled: false,
        };
        let (mut incoming, mut buffer, mut delivered) =
            (VecDeque::new(), Vec::new(), 0);
        if let Some(cp) = restore {
            let p = &cp.proto;
            let check = checkpoint::Stream {
                layout: &ctx.layout,
                names: cfg.source.names(),
                settings,
                block_size,
                per,
                bpe,
                end_block,
                num_epochs: cfg.num_epochs,
                elastic: cfg.elastic,
            };
            check.check(p)?;
            state.next_block = p.next_block;
            state.next_dispatch = p.next_block;
            state.ahead = p.ahead.iter().copied().collect();
            incoming = ctx.rows(&Refs::refs(&p.incoming))?.into();
            buffer = ctx.rows(&Refs::refs(&p.buffer))?;
            rng.set_word_pos(
                u128::from(p.rng_word_pos_hi) << 64
                    | u128::from(p.rng_word_pos_lo),
            );
            delivered = p.delivered;
        }
        let threads = cfg.threads.max(1);
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            work: Condvar::new(),
            done: Condvar::new(),
            window: threads as u64 * AHEAD_PER_THREAD,
            end_block,
        });
        let mut engine = Engine {
            shared,
            ctx,
            workers: Vec::new(),
            // An elastic buffer shuffle is in the order itself.
            order: if cfg.elastic {
                Order::Sequential
            } else {
                cfg.order
            },
            deterministic: cfg.deterministic,
            elastic: cfg.elastic,
            at: (first_epoch, 0),
            settings,
            incoming,
            buffer,
            rng,
            delivered,
            failed: None,
        };
        for t in 0..threads {
            let shared = Arc::clone(&engine.shared);
            let ctx = Arc::clone(&engine.ctx);
            let handle = std::thread::Builder::new()
                .name(format!("feedstock-read-{t}"))
                .spawn(move || work(&shared, &ctx))
                .map_err(|e| {
                    let message = format!("cannot start a reader thread: {e}");
                    Error::io(e).with_message(message)
                })?;
            engine.workers.push(handle);
        }
        Ok(engine)
    }

    /// The error that stopped the engine, if one did.
    pub(crate) fn error(&self) -> Option<Error> {
        self.failed.clone()
    }

    /// The key of the record in `row`.
    pub(crate) fn key_of(&self, row: &Row) -> String {
        let m = row.meta();
        let rec = Record::new(Bytes::new(), m.offset, m.r.ordinal);
        self.ctx.key(m, &rec)
    }

    /// True once an error other than a timeout has stopped the engine.
    pub(crate) fn failed(&self) -> bool {
        self.failed.is_some()
    }

    /// The source read.
    pub(crate) fn source(&self) -> &Arc<dyn Source> {
        &self.ctx.source
    }

    /// Rows handed out so far, over every run the checkpoints chain.
    pub(crate) fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Where the engine is: enough to continue exactly.
    pub(crate) fn checkpoint(&self) -> Checkpoint {
        if self.elastic {
            return self.elastic_checkpoint();
        }
        let st = self.shared.state.lock();
        let pos = self.rng.get_word_pos();
        let metas = |rows: &mut dyn Iterator<Item = &Row>| {
            Refs::of(rows.map(Row::meta))
        };
        Checkpoint {
            proto: CheckpointProto {
                settings: self.settings,
                next_block: st.next_block,
                ahead: st.ahead.iter().copied().collect(),
                incoming: Some(metas(&mut self.incoming.iter())),
                buffer: Some(metas(&mut self.buffer.iter())),
                rng_word_pos_lo: pos as u64,
                rng_word_pos_hi: (pos >> 64) as u64,
                delivered: self.delivered,
                ..CheckpointProto::default()
            },
        }
    }

    /// An elastic pipeline's position: the epoch and the first place of
    /// it not taken, if every host has taken as many rows as this one.
    fn elastic_checkpoint(&self) -> Checkpoint {
        let layout = &self.ctx.layout;
        let (epoch, taken) = self.at;
        let (epoch, place) = if taken >= layout.per_host_in(epoch) && taken > 0
        {
            (epoch + 1, 0)
        } else {
            let n = layout.shard.count() as u64;
            (epoch, layout.start_of(epoch) + taken * n)
        };
        Checkpoint {
            proto: CheckpointProto {
                settings: self.settings,
                delivered: self.delivered,
                elastic: true,
                elastic_epoch: epoch,
                elastic_place: place,
                ..CheckpointProto::default()
            },
        }
    }

    /// Up to `n` rows: fewer only at the end, none once it has ended.
    /// The rows taken before an error are handed out with it lost to the
    /// caller but counted; the engine keeps failing with the same error.
    pub(crate) fn next_rows(
        &mut self,
        n: usize,
        deadline: Option<Instant>,
    ) -> Result<Vec<Row>> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.shared.state.lock().cancelled {
            let e = Error::cancelled("the pipeline was cancelled");
            self.failed = Some(e.clone());
            return Err(e);
        }
        let mut out = Vec::with_capacity(n.min(1 << 16));
        while out.len() < n {
            match self.take(deadline) {
                Ok(Some(row)) => out.push(row),
                Ok(None) => break,
                Err(e) => {
                    // Put back what was taken: a checkpoint after a
                    // timeout must still cover these rows.
                    for row in out.into_iter().rev() {
                        self.incoming.push_front(row);
                    }
                    if e.kind() != Kind::DeadlineExceeded {
                        self.failed = Some(e.clone());
                    }
                    return Err(e);
                }
            }
        }
        self.delivered += out.len() as u64;
        for row in &out {
            let e = row.meta().epoch;
            self.at = if e == self.at.0 {
                (e, self.at.1 + 1)
            } else {
                (e, 1)
            };
        }
        Ok(out)
    }

    fn take(&mut self, deadline: Option<Instant>) -> Result<Option<Row>> {
        let Order::Buffer(n) = self.order else {
            if self.incoming.is_empty() {
                match self.pull(deadline)? {
                    Some(block) => self.accept(block),
                    None => return Ok(None),
                }
            }
            return Ok(self.incoming.pop_front());
        };
        while self.buffer.len() < n.max(1) {
            if let Some(row) = self.incoming.pop_front() {
                self.buffer.push(row);
                continue;
            }
            match self.pull(deadline)? {
                Some(block) => self.accept(block),
                None => break,
            }
        }
        if self.buffer.is_empty() {
            return Ok(None);
        }
        let k = self.rng.gen_range(0..self.buffer.len());
        Ok(Some(self.buffer.swap_remove(k)))
    }

    fn accept(&mut self, block: Block) {
        let block = Arc::new(block);
        let n = block.metas.len();
        self.incoming.extend((0..n).map(|row| Row {
            block: Arc::clone(&block),
            row,
        }));
    }

    /// Takes the next block: the first not taken (deterministic), or any
    /// block already read, the lowest first. `None` past the last epoch.
    fn pull(&mut self, deadline: Option<Instant>) -> Result<Option<Block>> {
        let shared = &*self.shared;
        let mut guard = shared.state.lock();
        loop {
            let st = &mut *guard;
            if st.cancelled {
                return Err(Error::cancelled("the pipeline was cancelled"));
            }
            if st.next_block >= shared.end_block {
                return Ok(None);
            }
            let pick = if self.deterministic {
                let b = st.next_block;
                st.results.contains_key(&b).then_some(b)
            } else {
                st.results.keys().next().copied()
            };
            if let Some(id) = pick {
                // A block that failed stays untaken (and its error is
                // returned again): a checkpoint taken after the error
                // reads it again rather than skipping its records.
                if let Some(Err(e)) = st.results.get(&id) {
                    return Err(e.clone());
                }
                let result = st.results.remove(&id).expect("picked");
                if id == st.next_block {
                    st.next_block += 1;
                    while st.ahead.remove(&st.next_block) {
                        st.next_block += 1;
                    }
                } else {
                    st.ahead.insert(id);
                }
                shared.work.notify_all();
                return result.map(Some);
            }
            match deadline {
                None => shared.done.wait(&mut guard),
                Some(d) => {
                    if shared.done.wait_until(&mut guard, d).timed_out() {
                        return Err(Error::deadline_exceeded(
                            "no record was read before the timeout",
                        ));
                    }
                }
            }
        }
    }

    /// A handle that cancels this engine from another thread.
    pub(crate) fn canceller(&self) -> Canceller {
        Canceller {
            shared: Arc::clone(&self.shared),
        }
    }

    /// Stops the reader threads and joins them.
    pub(crate) fn stop(&mut self) {
        {
            let mut st = self.shared.state.lock();
            st.stop = true;
            self.shared.work.notify_all();
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

impl Context {
    /// The rows of records `refs`, each its own block's row.
    fn rows(&self, refs: &[(Ref, u64)]) -> Result<Vec<Row>> {
        if refs.is_empty() {
            return Ok(Vec::new());
        }
        let block = Arc::new(self.fetch(refs)?);
        Ok((0..refs.len())
            .map(|row| Row {
                block: Arc::clone(&block),
                row,
            })
            .collect())
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Cancels a running pipeline from any thread: a blocked or later take
/// returns [`Cancelled`](crate::Kind::Cancelled), and the reader threads
/// stop after the block they are reading.
#[derive(Clone)]
pub struct Canceller {
    shared: Arc<Shared>,
}

impl fmt::Debug for Canceller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Canceller").finish_non_exhaustive()
    }
}

impl Canceller {
    /// Cancels; harmless if done twice.
    pub fn cancel(&self) {
        let mut st = self.shared.state.lock();
        st.cancelled = true;
        st.stop = true;
        self.shared.work.notify_all();
        self.shared.done.notify_all();
    }
}
