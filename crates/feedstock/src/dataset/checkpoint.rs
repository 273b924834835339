//! A [`RecordStream`](super::RecordStream)'s [`Checkpoint`]: its sealed
//! form, and its checks against the stream it is restored into.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use super::engine::Order;
use super::order::{Layout, Places, Ref, PAD};
use crate::checkpoint::STREAM;
use crate::error::{Error, Result};
use crate::input::shard::Remainder;

/// The checkpoint format version this build writes and reads; version 1
/// (before checkpoints were sealed with a checksum) is refused.
pub const FORMAT_VERSION: u32 = STREAM.version();

/// Where a pipeline ([`Loader`](super::Loader),
/// [`RecordStream`](super::stream::RecordStream)) was: positions, never
/// record data.
///
/// Its serialized form ([`to_bytes`](Self::to_bytes)) is a protobuf
/// message in a [sealed envelope](crate::checkpoint) (a magic, the
/// format version, a CRC32C). It holds the blocks taken, the positions
/// of the records taken but not yet handed out (for [`Order::Buffer`],
/// the whole buffer: about 5 bytes per buffered record), the shuffle
/// generator's position and a hash of the settings and file contents it
/// belongs to. [`Dataset::resume`](super::Dataset::resume)
/// checks every field against the stream it restores into.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    pub(crate) proto: CheckpointProto,
}

impl Checkpoint {
    /// The serialized checkpoint.
    pub fn to_bytes(&self) -> Vec<u8> {
        STREAM.seal(&prost::Message::encode_to_vec(&self.proto))
    }

    /// Reads a checkpoint written by [`to_bytes`](Self::to_bytes).
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::Kind::InvalidArgument) for bytes that
    /// are not a checkpoint, are damaged or truncated (the checksum), or
    /// are of another format version.
    pub fn from_bytes(bytes: &[u8]) -> Result<Checkpoint> {
        let payload = STREAM.open(bytes)?;
        let proto: CheckpointProto =
            prost::Message::decode(payload).map_err(|e| {
                Error::invalid_argument(format!(
                    "a damaged stream checkpoint: {e}"
                ))
            })?;
        for (field, refs) in
            [("incoming", &proto.incoming), ("buffer", &proto.buffer)]
        {
            if let Some(r) = refs {
                if r.file.len() != r.ordinal.len()
                    || r.file.len() != r.epoch.len()
                {
                    return Err(forged(format!(
                        "{field} has {} files, {} ordinals and {} epochs",
                        r.file.len(),
                        r.ordinal.len(),
                        r.epoch.len()
                    )));
                }
            }
        }
        Ok(Checkpoint { proto })
    }

    /// Records handed out before the checkpoint, over the stream's life.
    pub fn delivered(&self) -> u64 {
        self.proto.delivered
    }

    /// Records taken from the files but not yet handed out (in the
    /// shuffle buffer, or left of the last block taken): what a restore
    /// reads again.
    pub fn pending(&self) -> usize {
        let n = |r: &Option<Refs>| r.as_ref().map_or(0, |r| r.file.len());
        n(&self.proto.incoming) + n(&self.proto.buffer)
    }
}

/// An error for a checkpoint whose fields do not fit its stream.
fn forged(why: String) -> Error {
    Error::invalid_argument(format!(
        "a stream checkpoint that does not fit this stream: {why}"
    ))
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct CheckpointProto {
    /// The settings hash of the stream it came from.
    #[prost(fixed64, tag = "3")]
    pub(crate) settings: u64,
    /// Every block before it was taken.
    #[prost(uint64, tag = "4")]
    pub(crate) next_block: u64,
    /// Blocks after `next_block` taken too.
    #[prost(uint64, repeated, tag = "5")]
    pub(crate) ahead: Vec<u64>,
    /// The rest of the last block taken.
    #[prost(message, optional, tag = "6")]
    pub(crate) incoming: Option<Refs>,
    /// The shuffle buffer, in its order.
    #[prost(message, optional, tag = "7")]
    pub(crate) buffer: Option<Refs>,
    /// The shuffle generator's word position, low 64 bits.
    #[prost(uint64, tag = "8")]
    pub(crate) rng_word_pos_lo: u64,
    /// ... and high 64 bits.
    #[prost(uint64, tag = "9")]
    pub(crate) rng_word_pos_hi: u64,
    /// Records handed out.
    #[prost(uint64, tag = "10")]
    pub(crate) delivered: u64,
    /// An elastic pipeline's checkpoint: the fields above are unset but
    /// `settings` and `delivered`, and the position is the next two.
    #[prost(bool, tag = "11")]
    pub(crate) elastic: bool,
    /// The epoch reached.
    #[prost(uint64, tag = "12")]
    pub(crate) elastic_epoch: u64,
    /// The places of that epoch's order taken, by all hosts together.
    #[prost(uint64, tag = "13")]
    pub(crate) elastic_place: u64,
}

/// Record positions as three parallel packed arrays.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Refs {
    /// File numbers (`u32::MAX` for padding).
    #[prost(uint32, repeated, tag = "1")]
    pub(crate) file: Vec<u32>,
    /// Record numbers in those files.
    #[prost(uint64, repeated, tag = "2")]
    pub(crate) ordinal: Vec<u64>,
    /// Their epochs.
    #[prost(uint64, repeated, tag = "3")]
    pub(crate) epoch: Vec<u64>,
}

impl Refs {
    pub(crate) fn of<'a>(
        items: impl Iterator<Item = &'a super::engine::Meta>,
    ) -> Refs {
        let mut r = Refs::default();
        for it in items {
            r.file.push(it.r.file);
            r.ordinal.push(it.r.ordinal);
            r.epoch.push(it.epoch);
        }
        r
    }

    /// The positions, with their epochs (the lengths were checked by
    /// [`Checkpoint::from_bytes`]).
    pub(crate) fn refs(refs: &Option<Refs>) -> Vec<(Ref, u64)> {
        let Some(r) = refs else { return Vec::new() };
        r.file
            .iter()
            .zip(&r.ordinal)
            .zip(&r.epoch)
            .map(|((&file, &ordinal), &epoch)| (Ref { file, ordinal }, epoch))
            .collect()
    }
}

/// What a checkpoint is checked against: the pipeline being started.
pub(crate) struct Stream<'a> {
    pub(crate) layout: &'a Layout,
    pub(crate) names: &'a [Arc<str>],
    pub(crate) settings: u64,
    pub(crate) block_size: u64,
    /// Records per host per epoch.
    pub(crate) per: u64,
    /// Blocks per epoch.
    pub(crate) bpe: u64,
    /// The first block past the last epoch (`u64::MAX`: none).
    pub(crate) end_block: u64,
    pub(crate) num_epochs: Option<u64>,
    pub(crate) elastic: bool,
}

impl Stream<'_> {
    /// Checks every field of `p` against this stream: the settings, the
    /// blocks taken (within the stream's blocks), the pending records
    /// (records of the files, of the stream's epochs, each once, each of
    /// a block taken), that the blocks taken hold exactly the records
    /// delivered and pending, and the shuffle generator's position.
    pub(crate) fn check(&self, p: &CheckpointProto) -> Result<()> {
        if p.elastic != self.elastic {
            return Err(Error::invalid_argument(if p.elastic {
                "an elastic checkpoint cannot resume a pipeline that is not \
                 elastic"
            } else {
                "the checkpoint of a pipeline that was not elastic cannot \
                 resume an elastic one"
            }));
        }
        if p.settings != self.settings {
            return Err(Error::invalid_argument(
                "the checkpoint was taken from a stream of other files \
                 or other settings (order, seed, shard, epochs, block \
                 size), or the files changed since",
            ));
        }
        if p.next_block > self.end_block {
            return Err(forged(format!(
                "next_block {} is beyond the stream's {} blocks",
                p.next_block, self.end_block
            )));
        }
        if p.elastic {
            return self.check_elastic(p);
        }
        let mut last = p.next_block;
        for &a in &p.ahead {
            if a <= last || a >= self.end_block {
                return Err(forged(format!(
                    "ahead block {a} is not after next_block {} (in \
                     ascending order, once each) and before the stream's \
                     end at block {}",
                    p.next_block, self.end_block
                )));
            }
            last = a;
        }
        let ahead: BTreeSet<u64> = p.ahead.iter().copied().collect();
        let incoming = Refs::refs(&p.incoming);
        let buffer = Refs::refs(&p.buffer);
        let room = match self.layout.order {
            Order::Buffer(n) => n.max(1),
            _ => 0,
        };
        if buffer.len() > room {
            return Err(forged(format!(
                "buffer holds {} records, the stream's shuffle buffer {room}",
                buffer.len()
            )));
        }
        if incoming.len() as u64 >= self.block_size {
            return Err(forged(format!(
                "incoming holds {} records, more than the rest of a block \
                 of {}",
                incoming.len(),
                self.block_size
            )));
        }
        if incoming.windows(2).any(|w| w[0].1 != w[1].1) {
            return Err(forged(
                "incoming holds records of several epochs, as the rest of \
                 one block cannot"
                    .into(),
            ));
        }
        self.check_pending(p.next_block, &ahead, &incoming, &buffer)?;
        self.check_counts(p, incoming.len() + buffer.len())?;
        self.check_rng(p)
    }

    /// An elastic position: an epoch of the pipeline and a place of it,
    /// and nothing else.
    fn check_elastic(&self, p: &CheckpointProto) -> Result<()> {
        let fits = match self.num_epochs {
            Some(n) => {
                p.elastic_epoch < n
                    || (p.elastic_epoch == n && p.elastic_place == 0)
            }
            None => true,
        };
        if !fits || p.elastic_place > self.layout.total {
            return Err(forged(format!(
                "epoch {} place {} is not a place of this pipeline ({} records \
                 per epoch, {:?} epochs)",
                p.elastic_epoch, p.elastic_place, self.layout.total, self.num_epochs
            )));
        }
        let empty =
            |r: &Option<Refs>| r.as_ref().is_none_or(|r| r.file.is_empty());
        if p.next_block != 0
            || !p.ahead.is_empty()
            || !empty(&p.incoming)
            || !empty(&p.buffer)
            || p.rng_word_pos_lo != 0
            || p.rng_word_pos_hi != 0
        {
            return Err(forged(
                "an elastic checkpoint holds blocks, pending records or a \
                 generator position"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Each pending record: a record of the files, of an epoch of the
    /// stream, held once, in a block the checkpoint has taken.
    fn check_pending(
        &self,
        next_block: u64,
        ahead: &BTreeSet<u64>,
        incoming: &[(Ref, u64)],
        buffer: &[(Ref, u64)],
    ) -> Result<()> {
        let taken = |b: u64| b < next_block || ahead.contains(&b);
        let mut places: HashMap<u64, Places<'_>> = HashMap::new();
        let mut seen = HashSet::new();
        for &(r, epoch) in incoming.iter().chain(buffer) {
            if let Some(n) = self.num_epochs.filter(|&n| epoch >= n) {
                return Err(forged(format!(
                    "a pending record's epoch is {epoch}, the stream has \
                     {n} epochs"
                )));
            }
            let first = epoch.saturating_mul(self.bpe);
            let any_taken = first < next_block
                || ahead.range(first..first.saturating_add(self.bpe)).count()
                    > 0;
            if !any_taken {
                return Err(forged(format!(
                    "a pending record's epoch is {epoch}, but no block of \
                     that epoch was taken (next_block {next_block})"
                )));
            }
            if r.file == PAD {
                if self.layout.remainder != Remainder::Pad || r.ordinal != 0 {
                    return Err(forged(format!(
                        "a pending record's file is padding (ordinal {}), \
                         in a stream that pads no remainder",
                        r.ordinal
                    )));
                }
                continue;
            }
            let Some(&count) = self.layout.counts.get(r.file as usize) else {
                return Err(forged(format!(
                    "a pending record's file is {}, the stream has {} files",
                    r.file,
                    self.names.len()
                )));
            };
            let name = &self.names[r.file as usize];
            if r.ordinal >= count {
                return Err(forged(format!(
                    "a pending record's ordinal is {} in {name}, which has \
                     {count} records",
                    r.ordinal
                )));
            }
            if !seen.insert((r, epoch)) {
                return Err(forged(format!(
                    "record {name}:{} of epoch {epoch} is pending twice",
                    r.ordinal
                )));
            }
            let place = places
                .entry(epoch)
                .or_insert_with(|| self.layout.places(epoch))
                .place(r);
            let Some(j) = place else {
                return Err(forged(format!(
                    "record {name}:{} of epoch {epoch} is pending but is \
                     not in this host's part of the epoch",
                    r.ordinal
                )));
            };
            let block = first.saturating_add(j / self.block_size);
            if !taken(block) {
                return Err(forged(format!(
                    "record {name}:{} of epoch {epoch} is pending but its \
                     block {block} was not taken (next_block {next_block})",
                    r.ordinal
                )));
            }
        }
        Ok(())
    }

    /// The blocks taken hold exactly the records delivered and pending.
    fn check_counts(&self, p: &CheckpointProto, pending: usize) -> Result<()> {
        // In u128: forged numbers must not overflow.
        let (bs, per, bpe) = (
            u128::from(self.block_size),
            u128::from(self.per),
            u128::from(self.bpe.max(1)),
        );
        let len = |b: u128| per.min((b % bpe + 1) * bs) - (b % bpe) * bs;
        let before = |n: u128| (n / bpe) * per + per.min((n % bpe) * bs);
        let taken = before(u128::from(p.next_block))
            + p.ahead.iter().map(|&a| len(u128::from(a))).sum::<u128>();
        let held = u128::from(p.delivered) + pending as u128;
        if taken != held {
            return Err(forged(format!(
                "the blocks taken (next_block {}, {} ahead) hold {taken} \
                 records, but delivered {} and {pending} pending make \
                 {held}",
                p.next_block,
                p.ahead.len(),
                p.delivered
            )));
        }
        Ok(())
    }

    /// The shuffle generator has drawn once or a few times per record
    /// handed out from the buffer, and never without one.
    fn check_rng(&self, p: &CheckpointProto) -> Result<()> {
        let pos = u128::from(p.rng_word_pos_hi) << 64
            | u128::from(p.rng_word_pos_lo);
        let d = u128::from(p.delivered);
        // Each draw takes one or two words, a rejected draw two more (one
        // draw in 2^32 at most): 16 words per record is far above.
        let fits = match self.layout.order {
            Order::Buffer(_) => pos >= d && pos <= 16 * d,
            Order::Files => pos == 0,
            _ => pos == 0,
        };
        if !fits {
            return Err(forged(format!(
                "rng_word_pos {pos} does not fit {} records delivered",
                p.delivered
            )));
        }
        Ok(())
    }
}
