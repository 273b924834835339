//! Readers: records from files taken off a filename queue.
