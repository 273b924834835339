//! The order of a pipeline: which record comes
//! at each place of each epoch, as a pure function of the settings, the
//! seed and the epoch. Nothing here reads a file.

use std::sync::Arc;

use parking_lot::Mutex;
use rand::seq::SliceRandom;
use rand::Rng;

use super::engine::Order;
use crate::input::producer::epoch_order_rng;
use crate::input::shard::{Remainder, Shard};

/// A record of the stream's files, by file number and record number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Ref {
    /// The file's place in the list given, or [`PAD`].
    pub(crate) file: u32,
    /// The record's number in its file.
    pub(crate) ordinal: u64,
}

/// The `file` of a padding record ([`Remainder::Pad`]).
pub(crate) const PAD: u32 = u32::MAX;

/// Orders computed per epoch, by epoch (shared by a layout's clones).
pub(crate) type EpochOrders = Arc<Mutex<Vec<(u64, Arc<[u64]>)>>>;

/// The record counts of the files and the split: everything the order of
/// an epoch depends on besides the seed.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// Records in each file.
    pub(crate) counts: Vec<u64>,
    /// All records.
    pub(crate) total: u64,
    /// The shuffle.
    pub(crate) order: Order,
    /// The seed.
    pub(crate) seed: u64,
    /// This host's part.
    pub(crate) shard: Shard,
    /// What to do with an uneven split.
    pub(crate) remainder: Remainder,
    /// Hosts take interleaved places of one order (host `i` of `n`:
    /// places `i`, `i + n`, ...), so that the places every host has
    /// taken, when all have taken as many, are one prefix of the order:
    /// a position that resumes on any number of hosts. Otherwise host
    /// `i` takes the `i`-th contiguous part.
    pub(crate) elastic: bool,
    /// The first epoch of this run, and the place it starts at (past 0
    /// only when an elastic run resumes mid-epoch).
    pub(crate) first_epoch: u64,
    pub(crate) first_place: u64,
    /// The orders of a shuffle buffer simulated over positions (elastic
    /// [`Order::Buffer`]), by epoch: the last two computed.
    pub(crate) buffered: EpochOrders,
}

impl Layout {
    /// Records each host takes per full epoch.
    pub(crate) fn per_host(&self) -> u64 {
        self.split(self.total)
    }

    /// Records each host takes in `epoch` (fewer in the first epoch of a
    /// resumed elastic run).
    pub(crate) fn per_host_in(&self, epoch: u64) -> u64 {
        self.split(self.total - self.start_of(epoch))
    }

    /// The first place of `epoch` this run takes.
    pub(crate) fn start_of(&self, epoch: u64) -> u64 {
        if epoch == self.first_epoch {
            self.first_place.min(self.total)
        } else {
            0
        }
    }

    fn split(&self, n: u64) -> u64 {
        let c = self.shard.count() as u64;
        match self.remainder {
            Remainder::Drop => n / c,
            Remainder::Pad => n.div_ceil(c),
        }
    }

    /// The order a shuffle buffer of `n` gives over the places of
    /// `epoch`'s file order, simulated over positions (no record is
    /// read): every host computes the same, and the buffer is drained at
    /// the epoch's end. 8 bytes per record, computed once per epoch.
    fn buffer_order(&self, n: usize, epoch: u64) -> Arc<[u64]> {
        let mut cache = self.buffered.lock();
        if let Some((_, o)) = cache.iter().find(|(e, _)| *e == epoch) {
            return Arc::clone(o);
        }
        let mut rng =
            epoch_order_rng(self.seed ^ 0x6275_6666_6572_0000, epoch);
        let total = self.total;
        let mut out = Vec::with_capacity(total as usize);
        let mut buf: Vec<u64> = Vec::with_capacity(n.min(total as usize));
        let mut next = 0;
        while (out.len() as u64) < total {
            while buf.len() < n.max(1) && next < total {
                buf.push(next);
                next += 1;
            }
            let k = rng.gen_range(0..buf.len());
            out.push(buf.swap_remove(k));
        }
        let order: Arc<[u64]> = out.into();
        if cache.len() >= 2 {
            cache.remove(0);
        }
        cache.push((epoch, Arc::clone(&order)));
        order
    }

    /// The files' order in `epoch`, and the running sums of their counts
    /// in that order (`files + 1` entries, starting at 0).
    pub(crate) fn epoch_files(&self, epoch: u64) -> (Vec<u32>, Vec<u64>) {
        let mut files: Vec<u32> = (0..self.counts.len() as u32).collect();
        if let Order::Buffer(_) | Order::Files = self.order {
            files.shuffle(&mut epoch_order_rng(self.seed, epoch));
        }
        let mut cum = Vec::with_capacity(files.len() + 1);
        let mut at = 0;
        cum.push(0);
        for &f in &files {
            at += self.counts[f as usize];
            cum.push(at);
        }
        (files, cum)
    }

    /// The records at places `from..to` of this host's part of `epoch`.
    pub(crate) fn refs(&self, epoch: u64, from: u64, to: u64) -> Vec<Ref> {
        let (files, cum) = self.epoch_files(epoch);
        let (i, n) = (self.shard.index() as u64, self.shard.count() as u64);
        let start = self.start_of(epoch);
        let perm = Feistel::new(self.total, self.seed, epoch);
        let buffered = match self.order {
            Order::Buffer(b) if self.elastic => {
                Some(self.buffer_order(b, epoch))
            }
            _ => None,
        };
        (from..to)
            .map(|j| {
                let g = if self.elastic {
                    start + i + j * n
                } else {
                    i * self.per_host() + j
                };
                if g >= self.total {
                    return Ref {
                        file: PAD,
                        ordinal: 0,
                    };
                }
                let r = match (&buffered, self.order) {
                    (Some(b), _) => b[g as usize],
                    (None, Order::Global) => perm.apply(g),
                    _ => g,
                };
                // The last file whose first record is at or before r.
                let k = cum.partition_point(|&c| c <= r) - 1;
                Ref {
                    file: files[k],
                    ordinal: r - cum[k],
                }
            })
            .collect()
    }

    /// Where the records of `epoch` fall in this host's part of it (see
    /// [`Places::place`]).
    pub(crate) fn places(&self, epoch: u64) -> Places<'_> {
        let (files, cum) = self.epoch_files(epoch);
        let mut slot = vec![0; files.len()];
        for (k, &f) in files.iter().enumerate() {
            slot[f as usize] = k;
        }
        Places {
            layout: self,
            slot,
            cum,
            perm: Feistel::new(self.total, self.seed, epoch),
        }
    }
}

/// The inverse of [`Layout::refs`] for one epoch: which place of this
/// host's part of the epoch holds a record.
#[derive(Debug)]
pub(crate) struct Places<'a> {
    layout: &'a Layout,
    /// Each file's place in the epoch's file order.
    slot: Vec<usize>,
    /// The running sums of the counts in that order.
    cum: Vec<u64>,
    perm: Feistel,
}

impl Places<'_> {
    /// The place `j` (as in [`Layout::refs`]) of record `r`, a record of
    /// the files (not padding), in this host's part of the epoch; `None`
    /// if it falls in another host's part.
    pub(crate) fn place(&self, r: Ref) -> Option<u64> {
        let k = *self.slot.get(r.file as usize)?;
        let rec = self.cum[k] + r.ordinal;
        if rec >= self.layout.total {
            return None;
        }
        let g = match self.layout.order {
            Order::Global => self.perm.invert(rec),
            _ => rec,
        };
        let per = self.layout.per_host();
        let base = self.layout.shard.index() as u64 * per;
        g.checked_sub(base).filter(|&j| j < per)
    }
}

/// A pseudo-random permutation of `0..n`, computed one element at a time:
/// a balanced Feistel network over the smallest even number of bits that
/// holds `n`, with cycle walking to stay below `n`.
///
/// Written here rather than taken from a crate: the stream needs
/// "the record at place `g` of epoch `e`" in O(1) time and memory, for
/// any `g` (to shard, to resume, to read blocks in parallel), over
/// billions of records; a shuffled array of `n` numbers would hold 8
/// bytes per record. The round function is SplitMix64's finaliser keyed
/// by (seed, epoch, round); six rounds.
#[derive(Debug, Clone)]
pub(crate) struct Feistel {
    n: u64,
    half_bits: u32,
    keys: [u64; 6],
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Feistel {
    pub(crate) fn new(n: u64, seed: u64, epoch: u64) -> Feistel {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut keys = [0; 6];
        let base = mix(seed ^ mix(epoch ^ 0x5eed_0f0e_9c4b_0001_u64));
        for (r, k) in keys.iter_mut().enumerate() {
            *k = mix(base.wrapping_add(r as u64));
        }
        Feistel { n, half_bits, keys }
    }

    fn round_trip(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for k in self.keys {
            let f = mix(r ^ k) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }

    /// The inverse of [`round_trip`](Self::round_trip): the rounds run
    /// backwards.
    fn round_back(&self, y: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (y >> self.half_bits, y & mask);
        for &k in self.keys.iter().rev() {
            let f = mix(l ^ k) & mask;
            (l, r) = (r ^ f, l);
        }
        (l << self.half_bits) | r
    }

    /// Which `x` goes to `y` (below `n`): the cycle walked backwards.
    pub(crate) fn invert(&self, y: u64) -> u64 {
        debug_assert!(y < self.n);
        let mut x = self.round_back(y);
        while x >= self.n {
            x = self.round_back(x);
        }
        x
    }

    /// Where `x` (below `n`) goes.
    pub(crate) fn apply(&self, x: u64) -> u64 {
        debug_assert!(x < self.n);
        let mut y = self.round_trip(x);
        // The network permutes 0..4^half_bits, at most 4n numbers, so the
        // walk ends after about 4 steps on average; it cannot loop, as x
        // itself lies on its own cycle below n.
        while y >= self.n {
            y = self.round_trip(y);
        }
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feistel_is_a_permutation_for_many_sizes() {
        for n in [1u64, 2, 3, 5, 16, 17, 100, 1000, 4097] {
            for seed in 0..3 {
                let p = Feistel::new(n, seed, 7);
                let mut seen = vec![false; n as usize];
                for x in 0..n {
                    let y = p.apply(x);
                    assert!(!seen[y as usize], "n {n}: {y} twice");
                    seen[y as usize] = true;
                }
            }
        }
    }

    #[test]
    fn feistel_inverts() {
        for n in [1u64, 2, 3, 5, 17, 1000, 4097] {
            let p = Feistel::new(n, 9, 2);
            for x in 0..n {
                assert_eq!(p.invert(p.apply(x)), x, "n {n}");
            }
        }
    }

    #[test]
    fn places_invert_refs_for_every_order_and_shard() {
        use crate::input::shard::{Remainder, Shard};
        for order in [Order::Sequential, Order::Buffer(8), Order::Global] {
            for host in 0..3 {
                let layout = Layout {
                    counts: vec![7, 0, 12, 5],
                    total: 24,
                    order,
                    seed: 4,
                    shard: Shard::new(host, 3).unwrap(),
                    remainder: Remainder::Drop,
                    elastic: false,
                    first_epoch: 0,
                    first_place: 0,
                    buffered: Default::default(),
                };
                for epoch in 0..3 {
                    let places = layout.places(epoch);
                    let refs = layout.refs(epoch, 0, layout.per_host());
                    for (j, r) in refs.into_iter().enumerate() {
                        assert_eq!(places.place(r), Some(j as u64));
                    }
                }
            }
        }
    }

    #[test]
    fn feistel_differs_by_epoch_and_seed() {
        let a: Vec<u64> =
            (0..100).map(|x| Feistel::new(100, 1, 0).apply(x)).collect();
        let b: Vec<u64> =
            (0..100).map(|x| Feistel::new(100, 1, 1).apply(x)).collect();
        let c: Vec<u64> =
            (0..100).map(|x| Feistel::new(100, 2, 0).apply(x)).collect();
        assert_ne!(a, b);
        assert_ne!(a, c);
        // Not the identity, nor close to it.
        let fixed = a.iter().enumerate().filter(|(i, &y)| *i as u64 == y);
        assert!(fixed.count() < 10);
    }
}
