//! Any bytes, read as a TFRecord stream (plain, gzip and zlib) by every
//! reader: no panic, no unbounded allocation, and all readers agree on
//! the records and on the error that ends them; with the skip policy,
//! they agree on the records and on every region skipped, and never
//! fail.

#![no_main]

use std::io::Read;

use bytes::Bytes;
use feedstock::io::tfrecord::{
    CorruptRecords, Record, ReaderBuilder, SkipBudget, SkipLog,
};
use feedstock::io::Compression;
use feedstock::Kind;
use libfuzzer_sys::fuzz_target;

/// Hands out at most `n` bytes per read, to vary the chunking.
struct Trickle<'a> {
    data: &'a [u8],
    n: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.n).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// The records, and the kind, file and offset of the error that ended
/// them. (Not the message: zlib-rs words the same inflate error
/// differently depending on the output buffer size.)
type Outcome = (Vec<Record>, Option<(Kind, Option<String>, Option<u64>)>);

fn drain(it: impl Iterator<Item = feedstock::Result<Record>>) -> Outcome {
    let mut out = Vec::new();
    for r in it {
        match r {
            Ok(r) => out.push(r),
            Err(e) => {
                let file = e.file().map(str::to_owned);
                return (out, Some((e.kind(), file, e.offset())));
            }
        }
    }
    (out, None)
}

/// The records and the regions (offset, length) a skipping reader made
/// by `read` delivers and skips.
fn skipping<'a>(
    b: &ReaderBuilder,
    read: impl Fn(&ReaderBuilder) -> Box<dyn Iterator<Item = feedstock::Result<Record>> + 'a>,
) -> (Vec<Record>, Vec<(u64, u64)>) {
    let mut b = b.clone();
    let log = SkipLog::new();
    b.corrupt_records(CorruptRecords::Skip(SkipBudget::new()))
        .skip_log(log.clone());
    let records = read(&b)
        .collect::<feedstock::Result<Vec<_>>>()
        .expect("an unlimited skip policy never fails");
    let regions = log
        .stats()
        .files
        .iter()
        .flat_map(|f| f.regions.iter().map(|r| (r.offset, r.len)))
        .collect();
    (records, regions)
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks the chunk size; a small record limit keeps a
    // valid-CRC huge length from looking like a hang.
    let Some((&first, data)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(first % 16) + 1;
    for c in [Compression::None, Compression::Gzip, Compression::Zlib] {
        let mut b = ReaderBuilder::new();
        b.compression(c).max_record_len(1 << 20).file_name("fuzz");
        let whole = drain(b.from_bytes(Bytes::copy_from_slice(data)));
        let streamed = drain(b.from_reader(data));
        let trickled = drain(
            b.clone()
                .buffer_capacity(chunk)
                .from_reader(Trickle { data, n: chunk }),
        );
        assert_eq!(whole, streamed);
        assert_eq!(whole, trickled);
        if let (_, Some((_, file, offset))) = &whole {
            assert_eq!(file.as_deref(), Some("fuzz"));
            assert!(offset.is_some());
        }
        let whole = skipping(&b, |b| {
            Box::new(b.from_bytes(Bytes::copy_from_slice(data)))
        });
        let streamed = skipping(&b, |b| Box::new(b.from_reader(data)));
        let trickled = skipping(&b, |b| {
            Box::new(
                b.clone()
                    .buffer_capacity(chunk)
                    .from_reader(Trickle { data, n: chunk }),
            )
        });
        assert_eq!(whole, streamed);
        assert_eq!(whole, trickled);
    }
});
