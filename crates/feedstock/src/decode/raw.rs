//! `decode_raw` and friends: bytes reinterpreted as numbers.
