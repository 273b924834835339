//! `feedstock cat`: every record as one JSON object per line.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use base64::Engine as _;
use feedstock::io::Compression;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::args::{open_records, parse_compression};
use crate::json::{self, BinaryKeysJson, ExampleJson, SequenceExampleJson};
use crate::payload::{classify_keeping, BinaryKeys, Mode, Payload};

/// Arguments of `feedstock cat`.
///
/// Each record prints as `{"key":"FILE:N", ...}` with `N` its 0-based
/// index and `FILE` the path as given, followed by `"example"` (the
/// record as a `tf.train.Example` in protobuf's canonical JSON),
/// `"sequence_example"`, or `"bytes_base64"` for a record that is neither
/// (or with `--raw`). A record is shown as an Example or SequenceExample
/// only if every field in it belongs to that message type, so nothing in a
/// record is ever dropped from the output; a SequenceExample without
/// feature lists looks exactly like an Example and is shown as one unless
/// `--sequence` is given. Feature names must be UTF-8 in an Example; a
/// record whose only fault is a name that is not is still shown as one,
/// with those entries under `"binary_names"` (each name as base64), so
/// that nothing is dropped and the rest stays readable.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print every record's bytes as base64, without decoding.
    #[arg(long, conflicts_with = "sequence")]
    raw: bool,
    /// Read records as SequenceExamples (records that are not print as
    /// base64).
    #[arg(long)]
    sequence: bool,
    /// The compression of every file; by default it is detected from each
    /// file's extension (.gz is gzip, .zz and .zlib are zlib).
    #[arg(long, value_parser = parse_compression)]
    compression: Option<Compression>,
    /// The TFRecord files (paths, or URLs: s3://, gs://, az://,
    /// http(s)://, file://; a URL with a wildcard lists the objects) (`-` for standard input).
    #[arg(required = true, value_parser = crate::args::Utf8Path)]
    files: Vec<PathBuf>,
}

/// One output line.
struct Line<'a> {
    key: &'a str,
    data: &'a [u8],
    payload: &'a Payload,
    binary: &'a BinaryKeys,
}

impl Serialize for Line<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("key", self.key)?;
        match self.payload {
            Payload::Example(ex) => {
                m.serialize_entry("example", &ExampleJson(ex))?
            }
            Payload::SequenceExample(se) => m.serialize_entry(
                "sequence_example",
                &SequenceExampleJson(se),
            )?,
            Payload::Raw => {
                let b64 = base64::engine::general_purpose::STANDARD;
                m.serialize_entry("bytes_base64", &b64.encode(self.data))?
            }
        }
        if !self.binary.is_empty() {
            m.serialize_entry("binary_names", &BinaryKeysJson(self.binary))?;
        }
        m.end()
    }
}

/// Prints every record of every file, in order.
///
/// A corrupt file stops the output at the damaged record, with an error
/// naming the file and offset; the records before it have been printed.
pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let mode = match (args.raw, args.sequence) {
        (true, _) => Mode::Raw,
        (false, true) => Mode::Sequence,
        (false, false) => Mode::Auto,
    };
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    for path in &crate::files::inputs(&args.files)? {
        let name = path.display().to_string();
        let mut reader = open_records(path, args.compression)?;
        loop {
            let record = match reader.read_record() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => {
                    // Show what came before the damage, then fail.
                    out.flush()?;
                    return Err(e.into());
                }
            };
            let key = format!("{name}:{}", record.position.index);
            let (payload, binary) = classify_keeping(&record.value, mode);
            let line = Line {
                key: &key,
                data: &record.value,
                payload: &payload,
                binary: &binary,
            };
            json::to_writer(&mut out, &line).map_err(io::Error::from)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(())
}
