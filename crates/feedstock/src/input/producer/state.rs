//! A producer's position: which epoch, where in that epoch's order, and
//! the seed its orders are drawn from — enough to resume it exactly.
//!
//! Every epoch's order is drawn from its own generator, ChaCha8 seeded
//! with the producer's seed on stream `epoch`, so the sequence of
//! elements a producer hands out is a pure function of (input, seed,
//! shuffle). A position in that sequence is therefore just the number of
//! elements consumed so far, which the producer's queue counts exactly
//! (elements dequeued, under the queue's lock). Elements the runner has
//! enqueued but nobody has taken yet are *not* consumed: a restored
//! producer enqueues them again, so they are neither lost nor repeated.

use prost::Message;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::checkpoint::PRODUCER;
use crate::error::{Error, Result};

/// Where a producer is in its sequence of epochs; see
/// [`Producer::state`](super::Producer::state).
///
/// Restore it with the builders' `resume_from`, for a producer over the
/// same input with the same `shuffle` setting (both checked, with the
/// epoch against the producer's `num_epochs`): the seed saved here
/// replaces the builder's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProducerState {
    len: u64,
    seed: u64,
    epoch: u64,
    position: u64,
    shuffle: bool,
}

impl ProducerState {
    /// The number of elements per epoch of the producer it was saved
    /// from.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for a producer of no elements, which cannot be built; kept
    /// for the usual `len` / `is_empty` pair.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The seed every epoch's order is drawn from (the generator's
    /// state: epoch `e` uses ChaCha8 seeded with it on stream `e`).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The epoch of the next element to be consumed, from 0. Equals the
    /// epoch limit once every epoch has been consumed.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Whether the producer it was saved from shuffled each epoch.
    pub fn shuffle(&self) -> bool {
        self.shuffle
    }

    /// How many elements of [`ProducerState::epoch`] were consumed.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The number of elements consumed since the first epoch began.
    pub fn consumed(&self) -> u64 {
        self.epoch * self.len + self.position
    }

    /// Encodes the state to bytes, to save next to
    /// [`Reader::serialize_state`](crate::reader::Reader::serialize_state),
    /// sealed in a [`PRODUCER`](crate::checkpoint::PRODUCER) envelope.
    pub fn to_bytes(&self) -> Vec<u8> {
        let proto = StateProto {
            len: self.len,
            seed: self.seed,
            epoch: self.epoch,
            position: self.position,
            shuffle: self.shuffle,
        };
        PRODUCER.seal(&proto.encode_to_vec())
    }

    /// Decodes bytes written by [`ProducerState::to_bytes`].
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) if `bytes`
    /// are not a saved producer state, are damaged or truncated (the
    /// checksum), are of another format version, or are an inconsistent
    /// state.
    pub fn from_bytes(bytes: &[u8]) -> Result<ProducerState> {
        let proto =
            StateProto::decode(PRODUCER.open(bytes)?).map_err(|e| {
                Error::invalid_argument(format!(
                    "a damaged producer state: {e}"
                ))
            })?;
        if proto.len == 0 || proto.position >= proto.len {
            return Err(Error::invalid_argument(format!(
                "inconsistent producer state: position {} in an epoch of {} \
                 elements",
                proto.position, proto.len
            )));
        }
        let consumed = proto
            .epoch
            .checked_mul(proto.len)
            .and_then(|n| n.checked_add(proto.position));
        if consumed.is_none() {
            return Err(Error::invalid_argument(format!(
                "inconsistent producer state: epoch {} of {} elements is \
                 past any count of elements",
                proto.epoch, proto.len
            )));
        }
        Ok(ProducerState {
            len: proto.len,
            seed: proto.seed,
            epoch: proto.epoch,
            position: proto.position,
            shuffle: proto.shuffle,
        })
    }

    /// The state after `consumed` elements of epochs of `len` elements.
    pub(super) fn after(
        len: u64,
        seed: u64,
        shuffle: bool,
        consumed: u64,
    ) -> ProducerState {
        ProducerState {
            len,
            seed,
            epoch: consumed / len,
            position: consumed % len,
            shuffle,
        }
    }
}

/// The on-disk form of a [`ProducerState`] (tag 1 was version 1's magic
/// string: the state is now sealed).
#[derive(Clone, PartialEq, prost::Message)]
struct StateProto {
    #[prost(uint64, tag = "2")]
    len: u64,
    #[prost(uint64, tag = "3")]
    seed: u64,
    #[prost(uint64, tag = "4")]
    epoch: u64,
    #[prost(uint64, tag = "5")]
    position: u64,
    #[prost(bool, tag = "6")]
    shuffle: bool,
}

/// The generator epoch `epoch` draws its order from.
pub(crate) fn epoch_rng(seed: u64, epoch: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(epoch);
    rng
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_round_trips_through_bytes() {
        let state = ProducerState::after(10, 42, true, 37);
        assert_eq!((state.epoch(), state.position()), (3, 7));
        let back = ProducerState::from_bytes(&state.to_bytes()).unwrap();
        assert_eq!(back, state);
        assert_eq!(back.consumed(), 37);
    }

    #[test]
    fn other_bytes_are_not_a_state() {
        let err = ProducerState::from_bytes(b"\x0a\x03abc").unwrap_err();
        assert_eq!(err.kind(), crate::Kind::InvalidArgument);
    }

    #[test]
    fn a_position_past_the_epoch_is_refused() {
        let bytes = PRODUCER.seal(
            &StateProto {
                len: 4,
                seed: 1,
                epoch: 0,
                position: 4,
                shuffle: false,
            }
            .encode_to_vec(),
        );
        let err = ProducerState::from_bytes(&bytes).unwrap_err();
        assert_eq!(err.kind(), crate::Kind::InvalidArgument);
    }

    #[test]
    fn epochs_draw_from_different_streams_of_one_seed() {
        use rand::RngCore;
        let a = epoch_rng(5, 0).next_u64();
        assert_eq!(a, epoch_rng(5, 0).next_u64());
        assert_ne!(a, epoch_rng(5, 1).next_u64());
        assert_ne!(a, epoch_rng(6, 0).next_u64());
    }
}
