//! A reader for a record format of our own, end to end through a filename
//! queue: the seed's `SomeReader`, in Rust.
//!
//! The format ("LPR1"): a 4-byte magic `LPR1`, then records, each a
//! little-endian `u32` length followed by that many bytes.
//!
//! Implementing [`RecordReader`] is all it takes; the [`Reader`] wrapper
//! supplies the filename queue, the keys (`FILE:N`), the counters, the
//! locking and saving / restoring the position.
//!
//! Run with `cargo run --example custom_reader`.

use std::io::Read;
use std::time::Duration;

use feedstock::coord::{Coordinator, Pipeline};
use feedstock::input::string_input_producer;
use feedstock::io::fs::FileSystem;
use feedstock::reader::{RawRecord, Reader, RecordKey, RecordReader};
use feedstock::{Error, Result};

const MAGIC: &[u8; 4] = b"LPR1";

/// Reads length-prefixed records.
#[derive(Default)]
struct LengthPrefixedReader {
    /// The open file and the number of the next record.
    file: Option<(Box<dyn Read + Send>, u64)>,
}

/// Reads exactly `buf.len()` bytes; `Ok(false)` if the input ended before
/// the first byte.
fn read_full(input: &mut dyn Read, buf: &mut [u8]) -> Result<bool> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..])? {
            0 if filled == 0 => return Ok(false),
            0 => {
                return Err(Error::data_loss(format!(
                    "file ends {filled} bytes into a {}-byte field",
                    buf.len()
                )))
            }
            n => filled += n,
        }
    }
    Ok(true)
}

impl RecordReader for LengthPrefixedReader {
    // OnWorkStartedLocked: open the file and check its magic.
    fn on_work_started(
        &mut self,
        file: &str,
        fs: &dyn FileSystem,
    ) -> Result<()> {
        let mut input = fs.open(file)?;
        let mut magic = [0; 4];
        if !read_full(&mut input, &mut magic)? || &magic != MAGIC {
            return Err(Error::invalid_argument("not an LPR1 file"));
        }
        self.file = Some((input, 0));
        Ok(())
    }

    // ReadLocked: one record, or None at the end of the file.
    fn read(&mut self) -> Result<Option<RawRecord>> {
        let (input, next) = self
            .file
            .as_mut()
            .ok_or_else(|| Error::failed_precondition("no file"))?;
        let mut len = [0; 4];
        if !read_full(input, &mut len)? {
            return Ok(None);
        }
        let mut value = vec![0; u32::from_le_bytes(len) as usize];
        if !value.is_empty() && !read_full(input, &mut value)? {
            return Err(Error::data_loss("record data missing"));
        }
        let key = RecordKey::Index(*next);
        *next += 1;
        Ok(Some(RawRecord::new(key, value)))
    }

    // OnWorkFinishedLocked: close the file.
    fn on_work_finished(&mut self) -> Result<()> {
        self.file = None;
        Ok(())
    }

    // ResetLocked: a clean slate.
    fn reset(&mut self) -> Result<()> {
        self.file = None;
        Ok(())
    }
}

fn write_file(path: &std::path::Path, records: &[&str]) {
    let mut bytes = MAGIC.to_vec();
    for r in records {
        bytes.extend_from_slice(&(r.len() as u32).to_le_bytes());
        bytes.extend_from_slice(r.as_bytes());
    }
    std::fs::write(path, bytes).unwrap();
}

fn main() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let a = dir.path().join("a.lpr");
    let b = dir.path().join("b.lpr");
    write_file(&a, &["alpha", "beta", ""]);
    write_file(&b, &["gamma"]);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());

    // filenames → filename queue (one epoch, in order) → our reader.
    let mut pipeline = Pipeline::new();
    let files = string_input_producer(&mut pipeline, [a, b])
        .num_epochs(1)
        .shuffle(false)
        .build()?;
    let reader = Reader::new(LengthPrefixedReader::default());
    let coord = Coordinator::new();
    let threads = pipeline.start(&coord)?;

    let mut got = Vec::new();
    let end = loop {
        match reader.read(&files) {
            Ok(record) => {
                let value = String::from_utf8_lossy(&record.value);
                println!("{} = {value:?}", record.key);
                got.push((record.key, value.into_owned()));
            }
            Err(e) => break e,
        }
    };
    // The epoch limit closes the filename queue; the reader then reports
    // the clean end of input.
    assert!(end.is_out_of_range(), "{end}");
    coord.join(threads, Duration::from_secs(10))?;

    let want = [
        (format!("{a}:0"), "alpha"),
        (format!("{a}:1"), "beta"),
        (format!("{a}:2"), ""),
        (format!("{b}:0"), "gamma"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(reader.num_records_produced(), 4);
    assert_eq!(reader.num_work_units_completed(), 2);
    println!("read {} records from 2 files", got.len());
    Ok(())
}
