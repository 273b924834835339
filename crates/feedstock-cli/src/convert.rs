//! `feedstock convert`: CSV or fixed-length records to TFRecord files.
//!
//! `convert csv` decodes each line with the library's `decode_csv` (one
//! column per value; numbers are required, so an empty or malformed
//! number is an error naming `FILE:LINE` and the column) and writes one `tf.train.Example`
//! per line, with features as the [column spec](spec) says. `convert
//! fixed` reads records with the library's fixed-length reader and writes
//! each as it is, or as an Example with one bytes feature.
//!
//! Both write to one file or to `--shards N` files, records dealt out in
//! turn (record `i` goes to shard `i % N`). When conversion fails, the
//! output files written so far are removed, so a failed run never leaves
//! a plausible-looking partial dataset behind.

mod spec;

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use bytes::Bytes;
use feedstock::decode::csv::CsvDecoder;
use feedstock::decode::Records;
use feedstock::io::compression::Decompressor;
use feedstock::io::tfrecord::{Writer, WriterBuilder};
use feedstock::io::Compression;
use feedstock::proto::{Example, Feature, Features};
use feedstock::reader::{FixedLengthRecordReader, Reader, WorkQueue};
use feedstock::{Error, Result, Tensor};
use prost::Message;

use crate::count::parse_compression;
pub(crate) use spec::ColumnSpec;
use spec::ValueType;

/// Lines or records converted per batch.
const BATCH: usize = 4096;

/// The `convert` subcommands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// CSV lines to tf.train.Examples, one per line.
    #[command(long_about = CSV_ABOUT)]
    Csv(CsvArgs),
    /// Fixed-length binary records (such as CIFAR-10) to TFRecords.
    #[command(long_about = FIXED_ABOUT)]
    Fixed(FixedArgs),
}

const CSV_ABOUT: &str = "\
Convert CSV lines to tf.train.Examples, one per line.

The column spec says which columns become which features, left to right:
  NAME:TYPE[*N]  N consecutive columns (default 1) as one feature of N
                 values; TYPE is int64, float or bytes
  _[*N]          N columns that are skipped
For example `image:float*64,label:int64` (64 pixel columns, then a label).

Every number field must be present and parse as its type (an empty bytes
field is the empty string); a line that does not fit (wrong number of
fields, an empty or malformed number) is an error
naming FILE:LINE and the column, and exit status 2. Fields may be quoted
(RFC 4180) but a line break inside a quoted field is not supported: each
line is one record. A .gz or .zz/.zlib input is decompressed.

Prints the number of records written to each output file, and the total.";

const FIXED_ABOUT: &str = "\
Convert a file of fixed-length binary records (such as CIFAR-10) to
TFRecords: header_bytes of header, then records of record_bytes each,
then footer_bytes of footer. Each record is written as its raw bytes, or
with --feature NAME as a tf.train.Example with one bytes feature NAME.

A file whose records do not fit exactly (a last record cut short) is an
error naming the file and offset. A .gz or .zz/.zlib input is
decompressed.";

/// Where and how to write.
#[derive(Debug, clap::Args)]
pub(crate) struct OutputArgs {
    /// The output file. With --shards N > 1, N files named after it:
    /// OUT = data.tfrecord gives data-00000-of-00004.tfrecord and so on.
    out: PathBuf,
    /// The number of output files; records are dealt out in turn.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    shards: u32,
    /// The output compression (none, gzip, zlib); by default it is
    /// detected from the output file's extension.
    #[arg(long, value_parser = parse_compression)]
    compression: Option<Compression>,
}

/// Arguments of `feedstock convert csv`.
#[derive(Debug, clap::Args)]
pub(crate) struct CsvArgs {
    /// The CSV file.
    input: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
    /// Which columns become which features, e.g.
    /// "image:float*64,label:int64".
    #[arg(long, value_parser = parse_spec)]
    columns: ColumnSpec,
    /// The first line is a header, not a record.
    #[arg(long)]
    header: bool,
    /// The field delimiter: one character, or `tab`.
    #[arg(long, default_value = ",", value_parser = parse_delim)]
    delim: u8,
}

/// Arguments of `feedstock convert fixed`.
#[derive(Debug, clap::Args)]
pub(crate) struct FixedArgs {
    /// The file of fixed-length records.
    input: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
    /// The length of each record in bytes.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    record_bytes: u64,
    /// Bytes of header before the first record.
    #[arg(long, default_value_t = 0)]
    header_bytes: u64,
    /// Bytes of footer after the last record.
    #[arg(long, default_value_t = 0)]
    footer_bytes: u64,
    /// Write each record as an Example with this one bytes feature
    /// instead of as raw bytes.
    #[arg(long)]
    feature: Option<String>,
}

fn parse_spec(s: &str) -> Result<ColumnSpec> {
    s.parse()
}

fn parse_delim(s: &str) -> Result<u8> {
    match s {
        "tab" | "\\t" | "\t" => Ok(b'\t'),
        _ if s.len() == 1 => Ok(s.as_bytes()[0]),
        _ => Err(Error::invalid_argument(format!(
            "the delimiter must be one ASCII character or `tab`, not {s:?}"
        ))),
    }
}

/// Runs a `convert` subcommand.
///
/// # Errors
///
/// InvalidArgument (exit 2) for input that does not fit, naming
/// `FILE:LINE` or the record; the errors of reading and writing files.
pub(crate) fn run(cmd: &Command) -> anyhow::Result<()> {
    let (output, result) = match cmd {
        Command::Csv(a) => (&a.output, convert(&a.output, |s| csv(a, s))),
        Command::Fixed(a) => (&a.output, convert(&a.output, |s| fixed(a, s))),
    };
    let counts = result?;
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let paths = shard_paths(&output.out, output.shards);
    for (path, n) in paths.iter().zip(&counts) {
        writeln!(out, "{n}\t{}", path.display())?;
    }
    writeln!(out, "{}\ttotal", counts.iter().sum::<u64>())?;
    out.flush()?;
    Ok(())
}

/// Opens the shards, fills them with `fill`, and finishes them; on any
/// error removes them. Returns the records written to each.
fn convert(
    output: &OutputArgs,
    fill: impl FnOnce(&mut Shards) -> Result<()>,
) -> Result<Vec<u64>> {
    let paths = shard_paths(&output.out, output.shards);
    let mut builder = WriterBuilder::new();
    if let Some(c) = output.compression {
        builder.compression(c);
    }
    let mut shards = Shards {
        writers: Vec::new(),
        counts: vec![0; paths.len()],
        next: 0,
    };
    let result = (|| {
        for p in &paths {
            shards.writers.push(builder.create(p)?);
        }
        fill(&mut shards)?;
        for w in shards.writers.drain(..) {
            w.finish()?;
        }
        Ok(())
    })();
    match result {
        Ok(()) => Ok(shards.counts),
        Err(e) => {
            drop(shards);
            for p in &paths {
                // Best effort: a shard that was never created is fine.
                let _ = std::fs::remove_file(p);
            }
            Err(e)
        }
    }
}

/// The output files, records dealt out in turn.
struct Shards {
    /// One writer per shard.
    writers: Vec<Writer<BufWriter<File>>>,
    /// Records written to each.
    counts: Vec<u64>,
    /// The shard the next record goes to.
    next: usize,
}

impl Shards {
    fn write(&mut self, record: &[u8]) -> Result<()> {
        self.writers[self.next].write_record(record)?;
        self.counts[self.next] += 1;
        self.next = (self.next + 1) % self.writers.len();
        Ok(())
    }
}

/// The shard file names: `out` itself for one shard, else
/// `STEM-0000i-of-0000n.EXT` where `STEM` is the file name up to its first
/// dot, so `data.tfrecord.gz` keeps its extensions (and its detected
/// compression).
fn shard_paths(out: &Path, n: u32) -> Vec<PathBuf> {
    if n == 1 {
        return vec![out.to_owned()];
    }
    let name = out
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let split = name
        .char_indices()
        .skip(1)
        .find(|&(_, c)| c == '.')
        .map_or(name.len(), |(i, _)| i);
    let (stem, ext) = name.split_at(split);
    (0..n)
        .map(|i| out.with_file_name(format!("{stem}-{i:05}-of-{n:05}{ext}")))
        .collect()
}

/// Converts the lines of a CSV file.
fn csv(args: &CsvArgs, shards: &mut Shards) -> Result<()> {
    let spec = &args.columns;
    let mut builder = CsvDecoder::builder(spec.defaults()?);
    builder.field_delim(args.delim);
    if spec.skips() {
        builder.select_cols(spec.selected_columns());
    }
    let decoder = builder.build()?;
    let name = args.input.display().to_string();
    let mut lines = Lines::open(&args.input, &name)?;
    if args.header {
        lines.next_line()?;
    }
    let mut records = Vec::with_capacity(BATCH);
    let mut keys = Vec::with_capacity(BATCH);
    loop {
        records.clear();
        keys.clear();
        while records.len() < BATCH {
            let Some(line) = lines.next_line()? else {
                break;
            };
            records.push(line);
            keys.push(format!("{name}:{}", lines.number));
        }
        if records.is_empty() {
            return Ok(());
        }
        let columns =
            decoder.decode_batch(Records::new(&records).with_keys(&keys)?)?;
        write_examples(spec, &columns, records.len(), shards)?;
    }
}

/// Writes one Example per row of the decoded `columns`.
fn write_examples(
    spec: &ColumnSpec,
    columns: &[Tensor],
    rows: usize,
    shards: &mut Shards,
) -> Result<()> {
    let mut buf = Vec::new();
    for row in 0..rows {
        let mut features = Features::default();
        let mut col = 0;
        for e in &spec.entries {
            let Some(name) = &e.name else { continue };
            let cols = &columns[col..col + e.count];
            col += e.count;
            let f = match e.ty {
                ValueType::Int64 => {
                    Feature::int64_list(values::<i64>(cols, row)?)
                }
                ValueType::Float => {
                    Feature::float_list(values::<f32>(cols, row)?)
                }
                ValueType::Bytes => {
                    Feature::bytes_list(values::<Bytes>(cols, row)?)
                }
            };
            features.feature.insert(name.clone(), f);
        }
        let ex = Example {
            features: Some(features),
        };
        buf.clear();
        ex.encode(&mut buf).expect("a Vec grows as needed");
        shards.write(&buf)?;
    }
    Ok(())
}

/// Value `row` of each column.
fn values<T>(cols: &[Tensor], row: usize) -> Result<Vec<T>>
where
    T: feedstock::tensor::Element + Clone,
{
    cols.iter()
        .map(|c| Ok(c.as_slice::<T>()?[row].clone()))
        .collect()
}

/// The lines of a (possibly compressed) text file, without their line
/// endings, counted from 1.
///
/// Written here rather than with the library's `TextLineReader` because
/// that reader has no compression option, and the CSVs people convert
/// are often gzipped (such as the shipped `data/digits.csv.gz`).
struct Lines {
    src: BufReader<Decompressor<File>>,
    name: String,
    /// The number of the line last returned.
    number: u64,
}

impl Lines {
    fn open(path: &Path, name: &str) -> Result<Lines> {
        let file =
            File::open(path).map_err(|e| Error::io(e).with_file(name))?;
        let c = Compression::from_path(path);
        Ok(Lines {
            src: BufReader::with_capacity(1 << 20, Decompressor::new(c, file)),
            name: name.to_owned(),
            number: 0,
        })
    }

    fn next_line(&mut self) -> Result<Option<Bytes>> {
        let mut buf = Vec::new();
        let n = self.src.read_until(b'\n', &mut buf).map_err(|e| {
            Error::io(e).with_file(&self.name).with_key(format!(
                "{}:{}",
                self.name,
                self.number + 1
            ))
        })?;
        if n == 0 {
            return Ok(None);
        }
        self.number += 1;
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        Ok(Some(Bytes::from(buf)))
    }
}

/// Converts the records of a fixed-length file.
fn fixed(args: &FixedArgs, shards: &mut Shards) -> Result<()> {
    let name = args.input.display().to_string();
    let reader = Reader::new(
        FixedLengthRecordReader::builder(args.record_bytes)
            .header_bytes(args.header_bytes)
            .footer_bytes(args.footer_bytes)
            .compression(Compression::from_path(&args.input))
            .build()?,
    );
    let work = OneFile(Mutex::new(Some(name)));
    let mut buf = Vec::new();
    loop {
        let batch = match reader.read_up_to(&work, BATCH) {
            Ok(b) => b,
            Err(e) if e.is_out_of_range() => return Ok(()),
            Err(e) => return Err(e),
        };
        for r in batch {
            match &args.feature {
                None => shards.write(&r.value)?,
                Some(f) => {
                    let ex = Example::builder()
                        .feature(f, Feature::bytes_list([&r.value]))
                        .build();
                    buf.clear();
                    ex.encode(&mut buf).expect("a Vec grows as needed");
                    shards.write(&buf)?;
                }
            }
        }
    }
}

/// A work queue that hands out one file name, then reports the end.
#[derive(Debug)]
struct OneFile(Mutex<Option<String>>);

impl WorkQueue for OneFile {
    fn next_work(&self) -> Result<String> {
        let next = self.0.lock().expect("no panics under this lock").take();
        next.ok_or_else(|| Error::out_of_range("no more files"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names_keep_every_extension() {
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(shard_paths(&p("d/x.tfrecord"), 1), [p("d/x.tfrecord")]);
        assert_eq!(
            shard_paths(&p("d/x.tfrecord.gz"), 2),
            [
                p("d/x-00000-of-00002.tfrecord.gz"),
                p("d/x-00001-of-00002.tfrecord.gz")
            ]
        );
        assert_eq!(shard_paths(&p("plain"), 2)[1], p("plain-00001-of-00002"));
        assert_eq!(
            shard_paths(&p(".hidden"), 2)[0],
            p(".hidden-00000-of-00002")
        );
    }

    #[test]
    fn delimiters_are_one_character_or_tab() {
        assert_eq!(parse_delim(";").unwrap(), b';');
        assert_eq!(parse_delim("tab").unwrap(), b'\t');
        assert!(parse_delim(";;").is_err());
    }
}
