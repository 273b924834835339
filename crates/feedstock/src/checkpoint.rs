//! The sealed envelope every saved state travels in: a stream
//! [`Checkpoint`](crate::input::stream::Checkpoint), a
//! [`Reader`](crate::reader::Reader)'s state, a
//! [`ProducerState`](crate::input::ProducerState).
//!
//! Saved state comes back from disk, from another process, from a user:
//! a truncated or altered one must be refused, never taken for a
//! position that silently replays or skips records. Each is sealed as
//!
//! ```text
//! magic (8 bytes: which kind) | version (u32 LE) | payload | CRC (u32 LE)
//! ```
//!
//! where the CRC is the masked CRC32C (TFRecord's) of everything before
//! it. CRC32C detects every single-bit flip and every burst of up to 32
//! bits; a truncation is refused unless its last four bytes happen to be
//! the CRC of the rest (one chance in 2³²). The record index sidecars
//! ([`RecordIndex::to_bytes`](crate::io::index::RecordIndex::to_bytes))
//! are sealed the same way ([`INDEX`]).
//!
//! A new kind of saved state adds its [`Envelope`] constant here (its own
//! magic, so that bytes of one kind offered as another are named), and
//! seals its payload with it.
//!
//! The checksum only tells that the bytes are those that were sealed.
//! Each owner then checks the payload's fields against what it is
//! restored into (the stream's blocks and epochs, the file's size, the
//! producer's epochs), so that a well-sealed forgery is refused too.
//!
//! ```
//! use feedstock::checkpoint::STREAM;
//!
//! let sealed = STREAM.seal(b"payload");
//! assert_eq!(STREAM.open(&sealed)?, b"payload");
//! let e = STREAM.open(&sealed[..sealed.len() - 1]).unwrap_err();
//! assert!(e.message().contains("checksum"), "{e}");
//! # Ok::<(), feedstock::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::io::tfrecord::masked_crc32c;

/// One kind of sealed state: its magic, its name in messages and the
/// format version this build writes and reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Envelope {
    magic: [u8; 8],
    name: &'static str,
    version: u32,
    /// The magic string that version 1 of this state (an unsealed
    /// protobuf) carried, to tell it apart in messages; `None` for a kind
    /// that was always sealed.
    unsealed_v1: Option<&'static str>,
}

/// A pipeline's checkpoint ([`Loader`](crate::dataset::Loader),
/// [`RecordStream`](crate::input::stream::RecordStream)). Version 3: the
/// settings it belongs to include the decoder and the batching.
pub const STREAM: Envelope = Envelope {
    magic: *b"fsstream",
    name: "stream checkpoint",
    version: 3,
    unsealed_v1: Some("feedstock.stream.checkpoint"),
};

/// A [`Reader`](crate::reader::Reader)'s saved position.
pub const READER: Envelope = Envelope {
    magic: *b"fsreader",
    name: "reader state",
    version: 2,
    unsealed_v1: Some("feedstock.reader.v1"),
};

/// A [`ProducerState`](crate::input::ProducerState).
pub const PRODUCER: Envelope = Envelope {
    magic: *b"fsprodcr",
    name: "producer state",
    version: 2,
    unsealed_v1: Some("feedstock.producer.v1"),
};

/// A record index sidecar ([`RecordIndex`](crate::io::index::RecordIndex)).
/// Its magic also lets a TFRecord reader given a sidecar say what it is.
pub const INDEX: Envelope = Envelope {
    magic: *b"fsindex\0",
    name: "record index",
    version: 1,
    unsealed_v1: None,
};

/// Every kind, to name the kind of bytes offered as another.
const KINDS: [&Envelope; 4] = [&STREAM, &READER, &PRODUCER, &INDEX];

/// Magic, version, CRC.
const OVERHEAD: usize = 8 + 4 + 4;

impl Envelope {
    /// The first bytes of every state of this kind.
    pub const fn magic(&self) -> [u8; 8] {
        self.magic
    }

    /// What it holds, as messages name it ("stream checkpoint").
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The format version this build writes, and the only one it reads.
    pub const fn version(&self) -> u32 {
        self.version
    }

    /// `payload`, sealed.
    pub fn seal(&self, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(payload.len() + OVERHEAD);
        out.extend_from_slice(&self.magic);
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(payload);
        let crc = masked_crc32c(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// The payload of bytes [`seal`](Self::seal) wrote.
    ///
    /// # Errors
    ///
    /// [`InvalidArgument`](crate::Kind::InvalidArgument), saying why:
    /// bytes of another kind (naming it) or none, a version-1 state
    /// (written before states were sealed), a damaged or truncated one
    /// (the checksum), another format version.
    pub fn open<'a>(&self, bytes: &'a [u8]) -> Result<&'a [u8]> {
        let name = self.name;
        if bytes.get(..8) != Some(&self.magic[..]) {
            let why = if let Some(other) =
                KINDS.iter().find(|k| bytes.get(..8) == Some(&k.magic[..]))
            {
                format!("a {}, not a {name}", other.name)
            } else if self
                .unsealed_v1
                .is_some_and(|v1| contains(bytes, v1.as_bytes()))
            {
                format!(
                    "a {name} of format version 1, written before {name}s \
                     carried a checksum; this build reads version {} only",
                    self.version
                )
            } else {
                format!("not a {name} (no {name} header)")
            };
            return Err(Error::invalid_argument(why));
        }
        if bytes.len() < OVERHEAD {
            return Err(Error::invalid_argument(format!(
                "a truncated {name}: {} bytes",
                bytes.len()
            )));
        }
        let (body, crc) = bytes.split_at(bytes.len() - 4);
        let crc = u32::from_le_bytes(crc.try_into().expect("4 bytes"));
        if masked_crc32c(body) != crc {
            return Err(Error::invalid_argument(format!(
                "a damaged {name}: its checksum does not match (truncated \
                 or altered)"
            )));
        }
        let version =
            u32::from_le_bytes(body[8..12].try_into().expect("4 bytes"));
        if version != self.version {
            return Err(Error::invalid_argument(format!(
                "a {name} of format version {version}; this build reads \
                 version {} only",
                self.version
            )));
        }
        Ok(&body[12..])
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_payload_opens_and_every_damage_is_refused() {
        let sealed = READER.seal(b"some payload");
        assert_eq!(READER.open(&sealed).unwrap(), b"some payload");
        for len in 0..sealed.len() {
            assert!(READER.open(&sealed[..len]).is_err(), "cut at {len}");
        }
        for bit in 0..sealed.len() * 8 {
            let mut b = sealed.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            assert!(READER.open(&b).is_err(), "bit {bit}");
        }
        let e = STREAM.open(&sealed).unwrap_err();
        assert!(e.message().contains("a reader state, not a stream"), "{e}");
        let e = PRODUCER.open(b"\x0a\x15feedstock.producer.v1").unwrap_err();
        assert!(e.message().contains("format version 1"), "{e}");
    }
}
