//! `feedstock inspect`: infer the feature schema of Example files.
//!
//! Every record is read (and its CRCs checked), classified as an Example,
//! a SequenceExample or other bytes (see [`crate::payload`]), and folded
//! into per-feature statistics: the list kind, how many records have the
//! feature, and the least and most values a record holds. From those
//! follows a suggested parse spec: a feature that every record has with
//! the same number of values can be read as `FixedLen`, any other as
//! `VarLen`.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

use feedstock::decode::example::FeatureSpec;
use feedstock::io::Compression;
use feedstock::proto::{feature, Feature, FeatureLists, Features};
use feedstock::{DType, Error};
use serde::Serialize;

use crate::args::{open_records, parse_compression};
use crate::payload::{classify_keeping, BinaryKeys, Mode, Payload};

/// `feedstock inspect --help`.
pub(crate) const LONG_ABOUT: &str = "\
Read every record of the given TFRecord files (checking every CRC) and
print what they hold: record counts per file, record sizes (min, mean,
max bytes), and the schema of the tf.train.Example features: for each
feature its list kind (bytes, float, int64), how many records have it,
the least and most values a record holds, and the parse spec that fits
(FixedLen(shape, dtype) when every record has it with the same number of
values, VarLen(dtype) otherwise). For SequenceExample files, the context
features and the feature lists (steps per record, values per step).

Records are taken as Examples when they are, as SequenceExamples when
they have feature lists (or always, with --sequence), and counted as
`other` when they are neither.";

/// Arguments of `feedstock inspect`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print the result as one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Read records as SequenceExamples even when they have no feature
    /// lists (such a record is, on the wire, also an Example).
    #[arg(long)]
    sequence: bool,
    /// The compression of every file; by default it is detected from each
    /// file's extension (.gz is gzip, .zz and .zlib are zlib).
    #[arg(long, value_parser = parse_compression)]
    compression: Option<Compression>,
    /// The TFRecord files (paths, or URLs: s3://, gs://, az://,
    /// http(s)://, file://; a URL with a wildcard lists the objects).
    #[arg(required = true, value_parser = crate::args::Utf8Path)]
    files: Vec<PathBuf>,
}

/// What the files hold.
#[derive(Debug, Default, Serialize)]
struct Summary {
    /// Records per file, in the order given.
    files: Vec<FileCount>,
    /// All records.
    records: u64,
    /// Records that are Examples.
    examples: u64,
    /// Records that are SequenceExamples.
    sequence_examples: u64,
    /// Records that are neither.
    other: u64,
    /// Sizes of the records' data, when there are any.
    record_bytes: Option<Sizes>,
    /// The features of the Examples.
    features: BTreeMap<String, FeatureStats>,
    /// The context features of the SequenceExamples.
    context: BTreeMap<String, FeatureStats>,
    /// The feature lists of the SequenceExamples.
    feature_lists: BTreeMap<String, ListStats>,
    /// How many names the tables above hold, bounded.
    #[serde(flatten)]
    names: NameBudget,
}

/// The most distinct names the tables of a summary hold, together.
const MAX_NAMES: usize = 10_000;

/// The most bytes of names the tables of a summary hold, together.
const MAX_NAME_BYTES: usize = 4 << 20;

/// The distinct names tracked so far: the tables are bounded by
/// [`MAX_NAMES`] and [`MAX_NAME_BYTES`], not by the input; past them, new
/// names are counted, not kept.
#[derive(Debug, Default, Serialize)]
struct NameBudget {
    /// Names kept.
    #[serde(skip)]
    names: usize,
    /// Their bytes.
    #[serde(skip)]
    bytes: usize,
    /// Occurrences of names that were not kept.
    #[serde(skip_serializing_if = "is_zero")]
    untracked_names: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl NameBudget {
    /// True if a new name may be kept (and counts it); else counts it as
    /// untracked.
    fn admit(&mut self, name: &str) -> bool {
        if self.names < MAX_NAMES && self.bytes + name.len() <= MAX_NAME_BYTES
        {
            self.names += 1;
            self.bytes += name.len();
            true
        } else {
            self.untracked_names += 1;
            false
        }
    }
}

/// One file's record count.
#[derive(Debug, Serialize)]
struct FileCount {
    /// The path as given.
    file: String,
    /// Its records.
    records: u64,
}

/// Least, mean and most of a count.
#[derive(Debug, Clone, Copy, Serialize)]
struct Sizes {
    /// The least.
    min: u64,
    /// The mean.
    mean: f64,
    /// The most.
    max: u64,
    /// The total, for the mean.
    #[serde(skip)]
    sum: u64,
    /// How many were seen, for the mean.
    #[serde(skip)]
    n: u64,
}

impl Sizes {
    fn new(x: u64) -> Sizes {
        Sizes {
            min: x,
            mean: x as f64,
            max: x,
            sum: x,
            n: 1,
        }
    }

    fn add(&mut self, x: u64) {
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        self.sum += x;
        self.n += 1;
        self.mean = self.sum as f64 / self.n as f64;
    }

    fn merge(this: &mut Option<Sizes>, x: u64) {
        match this {
            Some(s) => s.add(x),
            None => *this = Some(Sizes::new(x)),
        }
    }
}

/// The list kinds a feature was seen with.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Kinds {
    /// Seen as a `bytes_list`.
    bytes: bool,
    /// Seen as a `float_list`.
    float: bool,
    /// Seen as an `int64_list`.
    int64: bool,
}

impl Kinds {
    /// Notes the kind of `f` and returns how many values it holds.
    fn note(&mut self, f: &Feature) -> u64 {
        match &f.kind {
            Some(feature::Kind::BytesList(l)) => {
                self.bytes = true;
                l.value.len() as u64
            }
            Some(feature::Kind::FloatList(l)) => {
                self.float = true;
                l.value.len() as u64
            }
            Some(feature::Kind::Int64List(l)) => {
                self.int64 = true;
                l.value.len() as u64
            }
            None => 0,
        }
    }

    /// `bytes`, `float`, `int64`, `none` (never set), or the kinds seen
    /// joined by `|` when there are several.
    fn name(self) -> String {
        let names: Vec<&str> = [
            (self.bytes, "bytes"),
            (self.float, "float"),
            (self.int64, "int64"),
        ]
        .into_iter()
        .filter_map(|(on, n)| on.then_some(n))
        .collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join("|")
        }
    }

    /// The dtype a parser yields for the one kind seen.
    fn dtype(self) -> Option<DType> {
        match (self.bytes, self.float, self.int64) {
            (true, false, false) => Some(DType::String),
            (false, true, false) => Some(DType::F32),
            (false, false, true) => Some(DType::I64),
            _ => None,
        }
    }
}

impl Serialize for Kinds {
    fn serialize<S: serde::Serializer>(
        &self,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

/// What was seen of one feature.
#[derive(Debug, Default, Serialize)]
struct FeatureStats {
    /// The list kinds it had.
    kind: Kinds,
    /// Records that have it.
    records: u64,
    /// Values per record, over the records that have it.
    values: Option<Sizes>,
    /// The parse spec that fits every record.
    suggested: String,
    /// The name is not UTF-8: the key is its escaped form, already as a
    /// table shows it, and no parse spec can name it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    binary_name: bool,
}

/// What was seen of one feature list.
#[derive(Debug, Default, Serialize)]
struct ListStats {
    /// The list kinds of its steps.
    kind: Kinds,
    /// Records that have it.
    records: u64,
    /// Steps per record, over the records that have it.
    steps: Option<Sizes>,
    /// Values per step, over all steps.
    values_per_step: Option<Sizes>,
    /// The sequence parse spec that fits every record.
    suggested: String,
    /// As for [`FeatureStats::binary_name`].
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    binary_name: bool,
}

/// The Example parse spec that fits every one of `records`: `FixedLen`
/// for a feature that each has with the same number of values, `VarLen`
/// for the others. Features whose list kind differs between records are
/// left out.
///
/// # Errors
///
/// InvalidArgument when the records hold no Example features.
pub(crate) fn infer_spec<'a>(
    records: impl IntoIterator<Item = &'a [u8]>,
) -> feedstock::Result<FeatureSpec> {
    let mut sum = Summary::default();
    for r in records {
        sum.add(r, Mode::Auto);
    }
    let mut spec = FeatureSpec::builder();
    let mut any = false;
    for (name, f) in &sum.features {
        let (Some(dtype), Some(v)) = (f.kind.dtype(), f.values) else {
            continue;
        };
        if f.binary_name {
            continue;
        }
        any = true;
        if f.records == sum.examples && v.min == v.max {
            let shape: Vec<usize> = if v.min == 1 {
                vec![]
            } else {
                vec![v.min as usize]
            };
            spec.fixed(name.as_str(), dtype, shape);
        } else {
            spec.var_len(name.as_str(), dtype);
        }
    }
    if !any {
        return Err(Error::invalid_argument(format!(
            "cannot infer a parse spec: the first {} records hold no \
             Example features",
            sum.records
        )));
    }
    spec.build()
}

/// Reads every file and prints the summary.
///
/// # Errors
///
/// The first damaged record (`DataLoss`, naming file and offset), a file
/// that cannot be opened, I/O errors writing stdout.
pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let mode = if args.sequence {
        Mode::Sequence
    } else {
        Mode::Auto
    };
    let mut sum = Summary::default();
    for path in &crate::files::inputs(&args.files)? {
        let mut reader = open_records(path, args.compression)?;
        while let Some(record) = reader.read_record()? {
            sum.add(&record.value, mode);
        }
        sum.files.push(FileCount {
            file: path.display().to_string(),
            records: reader.next_position().index,
        });
    }
    sum.suggest();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    if args.json {
        // As an io::Error, so that a closed pipe is seen as one.
        serde_json::to_writer_pretty(&mut out, &sum)
            .map_err(io::Error::from)?;
        writeln!(out)?;
    } else {
        sum.print(&mut out)?;
    }
    out.flush()?;
    Ok(())
}

impl Summary {
    /// Folds one record in.
    fn add(&mut self, data: &[u8], mode: Mode) {
        self.records += 1;
        Sizes::merge(&mut self.record_bytes, data.len() as u64);
        let (payload, binary) = classify_keeping(data, mode);
        match payload {
            Payload::Example(ex) => {
                self.examples += 1;
                let b = &mut self.names;
                add_features(&mut self.features, ex.features.as_ref(), b);
                add_binary(
                    &mut self.features,
                    &mut self.feature_lists,
                    &binary,
                    b,
                );
            }
            Payload::SequenceExample(se) => {
                self.sequence_examples += 1;
                let b = &mut self.names;
                add_features(&mut self.context, se.context.as_ref(), b);
                add_lists(
                    &mut self.feature_lists,
                    se.feature_lists.as_ref(),
                    b,
                );
                add_binary(
                    &mut self.context,
                    &mut self.feature_lists,
                    &binary,
                    b,
                );
            }
            Payload::Raw => self.other += 1,
        }
    }

    /// Fills in the suggested specs, once every record is in.
    fn suggest(&mut self) {
        for f in self.features.values_mut() {
            f.suggested = suggest_feature(f, self.examples);
        }
        for f in self.context.values_mut() {
            f.suggested = suggest_feature(f, self.sequence_examples);
        }
        for l in self.feature_lists.values_mut() {
            l.suggested = suggest_list(l, self.sequence_examples);
        }
    }

    fn print(&self, out: &mut impl Write) -> io::Result<()> {
        for f in &self.files {
            writeln!(
                out,
                "{}\t{}",
                f.records,
                display_name(f.file.as_bytes())
            )?;
        }
        write!(
            out,
            "{} records: {} Example, {} SequenceExample, {} other",
            self.records, self.examples, self.sequence_examples, self.other
        )?;
        match &self.record_bytes {
            Some(s) => writeln!(
                out,
                "; bytes per record: min {} mean {:.1} max {}",
                s.min, s.mean, s.max
            )?,
            None => writeln!(out)?,
        }
        if !self.features.is_empty() {
            writeln!(out, "\nExample features ({} records):", self.examples)?;
            print_features(out, &self.features)?;
        }
        if !self.context.is_empty() {
            writeln!(
                out,
                "\nSequenceExample context ({} records):",
                self.sequence_examples
            )?;
            print_features(out, &self.context)?;
        }
        if !self.feature_lists.is_empty() {
            writeln!(
                out,
                "\nSequenceExample feature lists ({} records):",
                self.sequence_examples
            )?;
            print_lists(out, &self.feature_lists)?;
        }
        if self.names.untracked_names > 0 {
            writeln!(
                out,
                "\n{} more occurrences of names not tracked: the tables \
                 hold at most {MAX_NAMES} names ({} MiB)",
                self.names.untracked_names,
                MAX_NAME_BYTES >> 20
            )?;
        }
        Ok(())
    }
}

fn add_features(
    stats: &mut BTreeMap<String, FeatureStats>,
    features: Option<&Features>,
    budget: &mut NameBudget,
) {
    let Some(features) = features else { return };
    for (name, f) in &features.feature {
        if !stats.contains_key(name) && !budget.admit(name) {
            continue;
        }
        let s = stats.entry(name.clone()).or_default();
        s.records += 1;
        let n = s.kind.note(f);
        Sizes::merge(&mut s.values, n);
    }
}

/// Counts the entries whose names are not UTF-8 under their escaped
/// names (see [`display_name`]).
fn add_binary(
    features: &mut BTreeMap<String, FeatureStats>,
    lists: &mut BTreeMap<String, ListStats>,
    binary: &BinaryKeys,
    budget: &mut NameBudget,
) {
    let mut f = Features::default();
    for (name, feature) in &binary.features {
        f.feature.insert(display_name(name), feature.clone());
    }
    add_features(features, Some(&f), budget);
    for name in f.feature.keys() {
        if let Some(s) = features.get_mut(name) {
            s.binary_name = true;
        }
    }
    let mut l = FeatureLists::default();
    for (name, list) in &binary.feature_lists {
        l.feature_list.insert(display_name(name), list.clone());
    }
    add_lists(lists, Some(&l), budget);
    for name in l.feature_list.keys() {
        if let Some(s) = lists.get_mut(name) {
            s.binary_name = true;
        }
    }
}

/// The name a table shows for a stats entry.
fn shown(name: &str, binary: bool) -> String {
    if binary {
        name.to_owned()
    } else {
        display_name(name.as_bytes())
    }
}

/// A name as a table shows it: as it is when it is printable UTF-8
/// without quotes, else quoted with escapes (`"a\nb"`, `"\xff"`), so a
/// name can never break a row or pass for another.
pub(crate) fn display_name(name: &[u8]) -> String {
    match std::str::from_utf8(name) {
        Ok(s)
            if !s.is_empty()
                && !s.chars().any(|c| c.is_control() || c == '"') =>
        {
            s.to_owned()
        }
        Ok(s) => format!("{s:?}"),
        Err(_) => format!("\"{}\"", name.escape_ascii()),
    }
}

fn add_lists(
    stats: &mut BTreeMap<String, ListStats>,
    lists: Option<&FeatureLists>,
    budget: &mut NameBudget,
) {
    let Some(lists) = lists else { return };
    for (name, list) in &lists.feature_list {
        if !stats.contains_key(name) && !budget.admit(name) {
            continue;
        }
        let s = stats.entry(name.clone()).or_default();
        s.records += 1;
        Sizes::merge(&mut s.steps, list.feature.len() as u64);
        for step in &list.feature {
            let n = s.kind.note(step);
            Sizes::merge(&mut s.values_per_step, n);
        }
    }
}

/// A shape in TensorFlow's spelling: `[]` for one value, `[n]` else.
fn shape(n: u64) -> String {
    if n == 1 {
        "[]".into()
    } else {
        format!("[{n}]")
    }
}

/// TensorFlow's name of a dtype a parser yields.
fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::String => "string",
        DType::F32 => "float32",
        _ => "int64",
    }
}

fn suggest_feature(f: &FeatureStats, of: u64) -> String {
    let Some(dtype) = f.kind.dtype() else {
        return match f.kind.name().as_str() {
            "none" => "none: no record sets a value list".into(),
            kinds => format!("none: kinds differ between records ({kinds})"),
        };
    };
    match f.values {
        Some(v) if f.records == of && v.min == v.max => {
            format!("FixedLen({}, {})", shape(v.min), dtype_name(dtype))
        }
        _ => format!("VarLen({})", dtype_name(dtype)),
    }
}

fn suggest_list(l: &ListStats, of: u64) -> String {
    let Some(dtype) = l.kind.dtype() else {
        return match l.kind.name().as_str() {
            "none" => "none: no step sets a value list".into(),
            kinds => format!("none: kinds differ between steps ({kinds})"),
        };
    };
    let missing = if l.records < of {
        ", allow_missing"
    } else {
        ""
    };
    match l.values_per_step {
        Some(v) if v.min == v.max => {
            let d = dtype_name(dtype);
            format!("FixedLenSequence({}, {d}{missing})", shape(v.min))
        }
        _ => format!("VarLen({})", dtype_name(dtype)),
    }
}

fn range(s: &Option<Sizes>) -> String {
    match s {
        Some(s) => format!("{}..{}", s.min, s.max),
        None => "-".into(),
    }
}

fn print_features(
    out: &mut impl Write,
    stats: &BTreeMap<String, FeatureStats>,
) -> io::Result<()> {
    let w = name_width(stats.iter().map(|(n, f)| shown(n, f.binary_name)));
    writeln!(
        out,
        "  {:w$}  {:11}  {:>8}  {:>10}  suggested",
        "feature", "kind", "records", "values"
    )?;
    for (name, f) in stats {
        let name = shown(name, f.binary_name);
        writeln!(
            out,
            "  {name:w$}  {:11}  {:>8}  {:>10}  {}",
            f.kind.name(),
            f.records,
            range(&f.values),
            f.suggested
        )?;
    }
    Ok(())
}

fn print_lists(
    out: &mut impl Write,
    stats: &BTreeMap<String, ListStats>,
) -> io::Result<()> {
    let w = name_width(stats.iter().map(|(n, l)| shown(n, l.binary_name)));
    writeln!(
        out,
        "  {:w$}  {:11}  {:>8}  {:>10}  {:>10}  suggested",
        "feature", "kind", "records", "steps", "values"
    )?;
    for (name, l) in stats {
        let name = shown(name, l.binary_name);
        writeln!(
            out,
            "  {name:w$}  {:11}  {:>8}  {:>10}  {:>10}  {}",
            l.kind.name(),
            l.records,
            range(&l.steps),
            range(&l.values_per_step),
            l.suggested
        )?;
    }
    Ok(())
}

/// The name column's width: the longest name, but no more than 60
/// (a longer name is printed whole and shifts its own row; a width past
/// `u16::MAX` would make the formatter panic).
fn name_width(names: impl Iterator<Item = String>) -> usize {
    names
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(7, 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use feedstock::proto::{Example, FeatureList, SequenceExample};
    use prost::Message;

    fn summary(records: &[Vec<u8>]) -> Summary {
        let mut s = Summary::default();
        for r in records {
            s.add(r, Mode::Auto);
        }
        s.suggest();
        s
    }

    #[test]
    fn a_feature_every_record_has_equally_often_is_fixed_len() {
        let recs: Vec<Vec<u8>> = (0..3)
            .map(|i| {
                Example::builder()
                    .floats("x", [1.0, 2.0, i as f32])
                    .int64("y", [i])
                    .build()
                    .encode_to_vec()
            })
            .collect();
        let s = summary(&recs);
        assert_eq!(s.examples, 3);
        assert_eq!(s.features["x"].suggested, "FixedLen([3], float32)");
        assert_eq!(s.features["y"].suggested, "FixedLen([], int64)");
    }

    #[test]
    fn a_feature_missing_or_varying_is_var_len() {
        let recs = vec![
            Example::builder()
                .bytes_list("t", ["a", "b"])
                .int64("m", [1])
                .build()
                .encode_to_vec(),
            Example::builder()
                .bytes_list("t", ["a"])
                .build()
                .encode_to_vec(),
        ];
        let s = summary(&recs);
        assert_eq!(s.features["t"].suggested, "VarLen(string)");
        assert_eq!(s.features["m"].records, 1);
        assert_eq!(s.features["m"].suggested, "VarLen(int64)");
        let t = s.features["t"].values.unwrap();
        assert_eq!((t.min, t.max), (1, 2));
    }

    #[test]
    fn kinds_that_differ_between_records_are_named() {
        let recs = vec![
            Example::builder().int64("a", [1]).build().encode_to_vec(),
            Example::builder()
                .floats("a", [1.0])
                .build()
                .encode_to_vec(),
        ];
        let s = summary(&recs);
        assert_eq!(s.features["a"].kind.name(), "float|int64");
        assert!(s.features["a"].suggested.contains("kinds differ"));
    }

    #[test]
    fn sequence_examples_give_context_and_list_schemas() {
        let mut lists = FeatureLists::default();
        lists.feature_list.insert(
            "tok".into(),
            FeatureList {
                feature: vec![Feature::int64_list([1, 2]); 3],
            },
        );
        let se = SequenceExample {
            context: Example::builder().int64("id", [7]).build().features,
            feature_lists: Some(lists),
        };
        let other = b"not a proto".to_vec();
        let s = summary(&[se.encode_to_vec(), other]);
        assert_eq!((s.sequence_examples, s.other), (1, 1));
        assert_eq!(s.context["id"].suggested, "FixedLen([], int64)");
        let tok = &s.feature_lists["tok"];
        assert_eq!(tok.suggested, "FixedLenSequence([2], int64)");
        assert_eq!(tok.steps.unwrap().max, 3);
        let sizes = s.record_bytes.unwrap();
        assert_eq!(sizes.min, 11);
    }

    #[test]
    fn the_inferred_spec_is_fixed_only_where_every_record_agrees() {
        let recs: Vec<Vec<u8>> = (0..3)
            .map(|i| {
                Example::builder()
                    .floats("x", [1.0, 2.0])
                    .int64("n", 0..i)
                    .bytes("s", "k")
                    .build()
                    .encode_to_vec()
            })
            .collect();
        let spec = infer_spec(recs.iter().map(|r| &r[..])).unwrap();
        let kinds: Vec<String> =
            spec.iter().map(|(n, k)| format!("{n}={k:?}")).collect();
        assert_eq!(spec.names().collect::<Vec<_>>(), ["n", "s", "x"]);
        assert!(kinds[0].contains("VarLen"), "{kinds:?}");
        assert!(kinds[1].contains("Fixed") && kinds[1].contains("[]"));
        assert!(kinds[2].contains("Fixed") && kinds[2].contains('2'));
        assert!(infer_spec([&b"text"[..]]).is_err());
    }

    #[test]
    fn the_tables_hold_a_bounded_number_of_names() {
        let mut sum = Summary::default();
        for i in 0..MAX_NAMES + 5 {
            let ex = Example::builder()
                .int64(format!("f{i}"), [1])
                .int64("f0", [2])
                .build();
            sum.add(&ex.encode_to_vec(), Mode::Auto);
        }
        assert_eq!(sum.features.len(), MAX_NAMES);
        assert_eq!(sum.names.untracked_names, 5);
        // A name already kept is still counted.
        assert_eq!(sum.features["f0"].records, MAX_NAMES as u64 + 5);
        // Long names: bounded by bytes too.
        let mut sum = Summary::default();
        let long = "x".repeat(MAX_NAME_BYTES / 2);
        for c in ['a', 'b', 'c'] {
            let ex =
                Example::builder().int64(format!("{c}{long}"), [1]).build();
            sum.add(&ex.encode_to_vec(), Mode::Auto);
        }
        assert_eq!(sum.features.len(), 1);
        assert_eq!(sum.names.untracked_names, 2);
        let mut out = Vec::new();
        sum.print(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("2 more occurrences of names not tracked"));
    }
}
