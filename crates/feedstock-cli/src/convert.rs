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
//! turn (record `i` goes to shard `i % N`). Every output is written
//! through the library's atomic [`OutputFile`](feedstock::io::fs::OutputFile):
//! into a temporary file next to it, renamed into place only when the
//! whole conversion has succeeded. A failed or interrupted run leaves
//! every target as it was; an existing target is replaced only with
//! `--force`, and an output that is the input (by name or through a link)
//! is refused.

mod shards;
mod spec;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use bytes::Bytes;
use feedstock::decode::csv::CsvDecoder;
use feedstock::decode::Records;
use feedstock::io::fs::{OutputOptions, STDIO};
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::io::Compression;
use feedstock::proto::{Example, Feature, Features};
use feedstock::reader::{FixedLengthRecordReader, Reader, WorkQueue};
use feedstock::{Error, Result, Tensor};
use prost::Message;

use crate::args::{
    compression_of, name_of, parse_compression, parse_delim, parse_max_line,
    parse_shards, Lines,
};
use shards::Shards;
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
  NAME:TYPE[*N][=DEFAULT]
                 N consecutive columns (default 1) as one feature of N
                 values; TYPE is int64, float or bytes; an empty field
                 (or one equal to --na-value) takes DEFAULT
  _[*N]          N columns that are skipped
For example `image:float*64,label:int64` (64 pixel columns, then a label),
or `station:bytes,temp:float=0`. N is at most 1000000 in all.

A number field without a DEFAULT must be present and parse as its type (an
empty bytes field is the empty string); a line that does not fit (wrong
number of fields, an empty or malformed number) is an error naming
FILE:LINE and the column, and exit status 2. Fields may be quoted (RFC
4180) but a line break inside a quoted field is not supported: each line is
one record, of at most --max-line-bytes bytes. A .gz or .zz/.zlib input
is decompressed (or as --input-compression says); INPUT `-` is standard
input.

The output is written to a temporary file and renamed into place only
when the whole conversion succeeds; an existing OUT is replaced only with
--force, and OUT may not be the input. OUT `-` is standard output.

Prints the number of records written to each output file, and the total
(to stderr when OUT is `-`).";

const FIXED_ABOUT: &str = "\
Convert a file of fixed-length binary records (such as CIFAR-10) to
TFRecords: header_bytes of header, then records of record_bytes each,
then footer_bytes of footer. Each record is written as its raw bytes, or
with --feature NAME as a tf.train.Example with one bytes feature NAME.

A file whose records do not fit exactly (a last record cut short) is an
error naming the file and offset. A .gz or .zz/.zlib input is
decompressed (or as --input-compression says). The input is read up to
the size it had when the conversion started; a device or pipe (such as
/dev/zero) is refused, but INPUT `-` streams standard input to its end.

Outputs are written as for `convert csv`: atomically, never over the
input, over an existing file only with --force.";

/// Where and how to write.
#[derive(Debug, clap::Args)]
pub(crate) struct OutputArgs {
    /// The output file (`-` for standard output). With --shards N > 1, N
    /// files named after it: OUT = data.tfrecord gives
    /// data-00000-of-00004.tfrecord and so on.
    #[arg(value_parser = crate::args::Utf8Path)]
    out: PathBuf,
    /// The number of output files (1 to 100000); records are dealt out
    /// in turn.
    #[arg(long, default_value_t = 1, value_parser = parse_shards)]
    shards: u32,
    /// The output compression (none, gzip, zlib); by default it is
    /// detected from the output file's extension.
    #[arg(long, value_parser = parse_compression)]
    compression: Option<Compression>,
    /// The input's compression (none, gzip, zlib); by default it is
    /// detected from the input file's extension.
    #[arg(long, value_parser = parse_compression)]
    input_compression: Option<Compression>,
    /// Replace existing output files.
    #[arg(long)]
    force: bool,
}

/// Arguments of `feedstock convert csv`.
#[derive(Debug, clap::Args)]
pub(crate) struct CsvArgs {
    /// The CSV file (`-` for standard input).
    #[arg(value_parser = crate::args::Utf8Path)]
    input: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
    /// Which columns become which features, e.g.
    /// "image:float*64,label:int64" or "name:bytes,temp:float=0".
    #[arg(long, value_parser = parse_spec)]
    columns: ColumnSpec,
    /// A field equal to this string is missing, like an empty one: it
    /// takes its column's DEFAULT (an error for a column without one).
    #[arg(long)]
    na_value: Option<String>,
    /// The longest line accepted, in bytes (1 to 1073741824, the
    /// default); a longer one is an error, not read into memory whole.
    #[arg(long, value_parser = parse_max_line)]
    max_line_bytes: Option<u64>,
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
    /// The file of fixed-length records (`-` for standard input).
    #[arg(value_parser = crate::args::Utf8Path)]
    input: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
    /// The length of each record in bytes (1 to 1073741824).
    #[arg(long, value_parser = parse_record_bytes)]
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

/// Parses `--record-bytes`: 1 byte to the 1 GiB record limit.
fn parse_record_bytes(s: &str) -> std::result::Result<u64, String> {
    crate::args::in_range(
        s,
        1,
        feedstock::io::tfrecord::DEFAULT_MAX_RECORD_LEN,
    )
}

/// Runs a `convert` subcommand.
///
/// # Errors
///
/// InvalidArgument (exit 2) for input that does not fit, naming
/// `FILE:LINE` or the record; the errors of reading and writing files.
pub(crate) fn run(cmd: &Command) -> anyhow::Result<()> {
    crate::signal::install()?;
    let input = match cmd {
        Command::Csv(a) => &a.input,
        Command::Fixed(a) => &a.input,
    };
    crate::args::refuse_stdout_as_input(std::slice::from_ref(input))?;
    let (output, result) = match cmd {
        Command::Csv(a) => {
            (&a.output, convert(&a.input, &a.output, |s| csv(a, s)))
        }
        Command::Fixed(a) => {
            (&a.output, convert(&a.input, &a.output, |s| fixed(a, s)))
        }
    };
    let counts = result?;
    let paths = shard_paths(&output.out, output.shards);
    let mut report = String::new();
    for (path, n) in paths.iter().zip(&counts) {
        report.push_str(&format!("{n}\t{}\n", path.display()));
    }
    report.push_str(&format!("{}\ttotal\n", counts.iter().sum::<u64>()));
    if output.out.as_os_str() == STDIO {
        // The outputs are committed: a closed stderr loses only the
        // report.
        let _ = io::stderr().write_all(report.as_bytes());
    } else {
        let stdout = io::stdout();
        let mut out = stdout.lock();
        out.write_all(report.as_bytes())?;
        out.flush()?;
    }
    Ok(())
}

/// Opens the shards, fills them with `fill`, and commits them. On any
/// error (or a signal) nothing is committed and every temporary file is
/// removed. Returns the records written to each.
fn convert(
    input: &Path,
    output: &OutputArgs,
    fill: impl FnOnce(&mut Shards) -> Result<()>,
) -> Result<Vec<u64>> {
    let to_stdout = output.out.as_os_str() == STDIO;
    if to_stdout && output.shards > 1 {
        return Err(Error::invalid_argument(
            "--shards cannot split standard output (`-`) into files",
        ));
    }
    let paths = shard_paths(&output.out, output.shards);
    let mut builder = WriterBuilder::new();
    if let Some(c) = output.compression {
        builder.compression(c);
    }
    let mut options = OutputOptions::new();
    options.force(output.force).input(name_of(input));
    let mut shards = Shards::create(&paths, builder, options)?;
    fill(&mut shards)?;
    shards.commit()
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
    if let Some(na) = &args.na_value {
        builder.na_value(na.clone());
    }
    if spec.skips() {
        builder.select_cols(spec.selected_columns());
    }
    let decoder = builder.build()?;
    let name = name_of(&args.input);
    let c = compression_of(&args.input, args.output.input_compression);
    let mut lines = Lines::open(
        &args.input,
        c,
        args.max_line_bytes,
        "--input-compression",
    )?;
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

/// Converts the records of a fixed-length file.
fn fixed(args: &FixedArgs, shards: &mut Shards) -> Result<()> {
    let name = name_of(&args.input);
    let reader = Reader::new(
        FixedLengthRecordReader::builder(args.record_bytes)
            .header_bytes(args.header_bytes)
            .footer_bytes(args.footer_bytes)
            .compression(compression_of(
                &args.input,
                args.output.input_compression,
            ))
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
}
