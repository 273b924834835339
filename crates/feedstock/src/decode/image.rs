//! Image decoding and the preprocessing ops the seed guide relies on.
