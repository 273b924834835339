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

use crate::error::{Error, Result};

/// Tags a serialized [`ProducerState`], so that other bytes are refused.
const MAGIC: &str = "feedstock.producer.v1";

/// Where a producer is in its sequence of epochs; see
/// [`Producer::state`](super::Producer::state).
///
/// Restore it with the builders' `resume_from`, for a producer over the
/// same input with the same `shuffle` setting: the seed saved here
/// replaces the builder's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProducerState {
    len: u64,
    seed: u64,
    epoch: u64,
    position: u64,
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

    /// How many elements of [`ProducerState::epoch`] were consumed.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The number of elements consumed since the first epoch began.
    pub fn consumed(&self) -> u64 {
        self.epoch * self.len + self.position
    }

    /// Encodes the state to bytes, to save next to
    /// [`Reader::serialize_state`](crate::reader::Reader::serialize_state).
    pub fn to_bytes(&self) -> Vec<u8> {
        StateProto {
            magic: MAGIC.to_owned(),
            len: self.len,
            seed: self.seed,
            epoch: self.epoch,
            position: self.position,
        }
        .encode_to_vec()
    }

    /// Decodes bytes written by [`ProducerState::to_bytes`].
    ///
    /// # Errors
    ///
    /// [`Kind::InvalidArgument`](crate::Kind::InvalidArgument) if `bytes`
    /// are not a saved producer state, or an inconsistent one.
    pub fn from_bytes(bytes: &[u8]) -> Result<ProducerState> {
        let proto = StateProto::decode(bytes)
            .ok()
            .filter(|p| p.magic == MAGIC)
            .ok_or_else(|| {
                Error::invalid_argument("not a saved producer state")
            })?;
        if proto.len == 0 || proto.position >= proto.len {
            return Err(Error::invalid_argument(format!(
                "inconsistent producer state: position {} in an epoch of {} \
                 elements",
                proto.position, proto.len
            )));
        }
        Ok(ProducerState {
            len: proto.len,
            seed: proto.seed,
            epoch: proto.epoch,
            position: proto.position,
        })
    }

    /// The state after `consumed` elements of epochs of `len` elements.
    pub(super) fn after(len: u64, seed: u64, consumed: u64) -> ProducerState {
        ProducerState {
            len,
            seed,
            epoch: consumed / len,
            position: consumed % len,
        }
    }
}

/// The on-disk form of a [`ProducerState`].
#[derive(Clone, PartialEq, prost::Message)]
struct StateProto {
    #[prost(string, tag = "1")]
    magic: String,
    #[prost(uint64, tag = "2")]
    len: u64,
    #[prost(uint64, tag = "3")]
    seed: u64,
    #[prost(uint64, tag = "4")]
    epoch: u64,
    #[prost(uint64, tag = "5")]
    position: u64,
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
        let state = ProducerState::after(10, 42, 37);
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
        let bytes = StateProto {
            magic: MAGIC.to_owned(),
            len: 4,
            seed: 1,
            epoch: 0,
            position: 4,
        }
        .encode_to_vec();
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
