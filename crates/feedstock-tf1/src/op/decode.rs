//! Decoders: CSV records, raw bytes, serialized Examples and
//! SequenceExamples, images. Each names the record it failed on, by the
//! record key its input carries ([`OutInfo::key`], [`Args::key`]).
//!
//! [`DecodeRaw`] and [`DecodeImage`] are made by name from their
//! attributes; [`DecodeCsv`], [`Parse`] and [`ParseSequence`] carry a
//! decoder or feature specs, which a dict of plain attributes does not
//! hold, so they are built as values (the Python binding has one small
//! constructor for each).

use std::borrow::Cow;
use std::fmt;
use std::ops::RangeInclusive;
use std::sync::Arc;

use bytes::Bytes;
use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use feedstock::decode::example::{
    check_sequence_specs, parse_example, parse_sequence_example,
    parse_single_example, parse_single_sequence_example, FeatureKind,
    FeatureSpec, ParsedSequence,
};
use feedstock::decode::image::{self, DecodeSpec, ImageFormat, JpegOptions};
use feedstock::decode::raw::{decode_raw, decode_raw_batch, ByteOrder};
use feedstock::decode::Records;
use feedstock::error::{Error, Result};
use feedstock::queue::PartialShape;
use feedstock::tensor::{DType, Tensor, Value};

use super::attrs::attr_enum;
use super::{dense, dense_from, op, Args, Attrs, FromAttrs, In, OpDef};
use super::{OpType, OutInfo};
use crate::graph::{CsvOptions, Output, StaticShape};
use crate::Graph;

attr_enum!(ImageFormat, "an image format",
    "jpeg" => ImageFormat::Jpeg, "png" => ImageFormat::Png,
    "any" => ImageFormat::Any);

/// Input `x`'s info, checking that it is a dense string tensor.
///
/// # Errors
/// InvalidArgument naming `what` for a sparse input, a refused dtype for
/// another dtype.
fn string_in<'a>(x: &'a In, what: &str) -> Result<&'a OutInfo> {
    let info = x.dense(what)?;
    if info.dtype != DType::String {
        return Err(Error::invalid_dtype(format!(
            "{what}: expected a string tensor, got {}",
            info.dtype
        )));
    }
    Ok(info)
}

/// The record key of each value, when the input carries keys.
fn keys_of<'s>(a: &Args<'s, '_>) -> Vec<Cow<'s, str>> {
    match a.key.and_then(|v| v.dense().ok()) {
        Some(t) => t
            .as_slice::<Bytes>()
            .map(|s| s.iter().map(|b| String::from_utf8_lossy(b)).collect())
            .unwrap_or_default(),
        None => Vec::new(),
    }
}

/// Records named by their keys when there is one key per record.
fn records<'a>(
    values: &'a [Bytes],
    keys: &'a [Cow<'a, str>],
) -> Result<Records<'a>> {
    let r = Records::new(values);
    if keys.len() == values.len() {
        r.with_keys(keys)
    } else {
        Ok(r)
    }
}

/// `tf.decode_csv`: splits CSV records into one tensor per column, each
/// of the records' shape; a record default with no value marks a
/// required column. Made with [`DecodeCsv::new`]; not made by name.
#[derive(Debug, Clone)]
pub struct DecodeCsv {
    /// The decoder, with the record defaults and the settings.
    pub decoder: Arc<CsvDecoder>,
}

impl DecodeCsv {
    /// The op decoding with `record_defaults` (one per output column)
    /// and `opts`.
    ///
    /// # Errors
    /// InvalidArgument for settings the decoder rejects (see
    /// [`CsvDecoder`]).
    pub fn new(
        record_defaults: Vec<RecordDefault>,
        opts: CsvOptions,
    ) -> Result<DecodeCsv> {
        let mut b = CsvDecoder::builder(record_defaults);
        b.field_delim(opts.field_delim)
            .use_quote_delim(opts.use_quote_delim);
        if let Some(na) = opts.na_value {
            b.na_value(na);
        }
        if let Some(cols) = opts.select_cols {
            b.select_cols(cols);
        }
        Ok(DecodeCsv {
            decoder: Arc::new(b.build()?),
        })
    }
}

impl OpType for DecodeCsv {
    fn op_type(&self) -> &'static str {
        "DecodeCsv"
    }
}

impl OpDef for DecodeCsv {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let info = string_in(&ins[0], "decode_csv")?;
        Ok(self
            .decoder
            .dtypes()
            .into_iter()
            .map(|d| dense_from(info.shape.clone(), d, &ins[0]))
            .collect())
    }

    fn default_name(&self) -> &'static str {
        "DecodeCSV"
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        let keys = keys_of(a);
        let cols = self
            .decoder
            .decode_batch(records(t.as_slice::<Bytes>()?, &keys)?)?;
        for c in cols {
            out.push(c.reshape(t.dims().to_vec())?.into());
        }
        Ok(())
    }
}

op! {
    /// `tf.decode_raw`: reinterprets the bytes of each string as a vector
    /// of `out_type`; a string vector gives a matrix, all strings of
    /// equal length.
    DecodeRaw = "DecodeRaw" {
        /// The element type (not a string).
        out_type: DType,
        /// Whether the bytes are little-endian (else big-endian).
        little_endian: bool,
    }
}

impl OpDef for DecodeRaw {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        string_in(&ins[0], "decode_raw")?;
        let dtype = self.out_type;
        if dtype.size().is_none() {
            return Err(Error::invalid_dtype(format!(
                "decode_raw cannot produce {dtype}"
            )));
        }
        // As TensorFlow: the input's shape, plus the elements per string.
        let shape = ins[0].dims().map(|mut d| {
            d.push(None);
            PartialShape::new(d)
        });
        Ok(vec![dense_from(shape, dtype, &ins[0])])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let (dtype, order) = (
            self.out_type,
            if self.little_endian {
                ByteOrder::LittleEndian
            } else {
                ByteOrder::BigEndian
            },
        );
        let t = a.dense(0)?;
        let s = t.as_slice::<Bytes>()?;
        let r = match t.rank() {
            0 => decode_raw(&s[0], dtype, order)?,
            1 => decode_raw_batch(s, dtype, order)?,
            _ => {
                // Decoded as one batch, then given the input's dims.
                let r = decode_raw_batch(s, dtype, order)?;
                let mut dims = t.dims().to_vec();
                dims.push(r.dims()[1]);
                r.reshape(dims)?
            }
        };
        out.push(r.into());
        Ok(())
    }
}

/// An image decoder (`tf.image.decode_jpeg` / `decode_png` /
/// `decode_image`, by `spec.op`): `[height, width, channels]` of
/// `spec.dtype`, with `channels` unknown for 0. `decode_image` with
/// `expand_animations` is of unknown rank, as in TensorFlow (a GIF is
/// `[frames, height, width, 3]`). The attributes' values are checked
/// when the op runs, as TensorFlow's kernels check them.
///
/// Made by name from the attributes `format` (`"jpeg"`, `"png"` or
/// `"any"`) and, each optional with TensorFlow's default,
/// `channels` (0), `dtype` (`uint8`), `expand_animations` (true) and
/// `decode_jpeg`'s `ratio`, `fancy_upscaling`,
/// `try_recover_truncated`, `acceptable_fraction` and `dct_method`.
///
/// Adding it fails (InvalidArgument, a dtype refusal) for a non-string
/// input or a dtype the op does not decode to (`decode_jpeg`: `U8`;
/// `decode_png`: also `U16`; `decode_image`: also `F32`), and
/// (InvalidArgument) for an input that is not a scalar or a negative
/// `channels`.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeImage {
    /// The op and its attributes.
    pub spec: DecodeSpec,
}

impl FromAttrs for DecodeImage {
    const TYPE: &'static str = "DecodeImage";

    fn from_attrs(a: &Attrs) -> Result<DecodeImage> {
        let t = Self::TYPE;
        let or = |name: &str, d| -> Result<bool> {
            Ok(a.get::<Option<bool>>(t, name)?.unwrap_or(d))
        };
        let d = JpegOptions::default();
        let fraction: Option<f64> = a.get(t, "acceptable_fraction")?;
        let jpeg = JpegOptions {
            ratio: a.get::<Option<i64>>(t, "ratio")?.unwrap_or(d.ratio),
            dct_method: a
                .get::<Option<String>>(t, "dct_method")?
                .unwrap_or(d.dct_method),
            fancy_upscaling: or("fancy_upscaling", d.fancy_upscaling)?,
            try_recover_truncated: or(
                "try_recover_truncated",
                d.try_recover_truncated,
            )?,
            acceptable_fraction: fraction
                .map_or(d.acceptable_fraction, |f| f as f32),
        };
        let spec = DecodeSpec {
            op: a.get(t, "format")?,
            channels: a.get::<Option<i64>>(t, "channels")?.unwrap_or(0),
            dtype: a.get::<Option<DType>>(t, "dtype")?.unwrap_or(DType::U8),
            expand_animations: or("expand_animations", true)?,
            jpeg,
        };
        Ok(DecodeImage { spec })
    }
}

impl OpDef for DecodeImage {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn default_name(&self) -> &'static str {
        self.spec.op.op_name()
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        const NAME: &str = "decode_image";
        let spec = &self.spec;
        string_in(&ins[0], NAME)?;
        if let Some(d) = ins[0].dims().filter(|d| !d.is_empty()) {
            return Err(Error::invalid_argument(format!(
                "{NAME}: contents must be a scalar (rank 0), not of rank {}",
                d.len()
            )));
        }
        let dtypes: &[DType] = match spec.op {
            ImageFormat::Jpeg => &[DType::U8],
            ImageFormat::Png => &[DType::U8, DType::U16],
            _ => &[DType::U8, DType::U16, DType::F32],
        };
        if !dtypes.contains(&spec.dtype) {
            return Err(Error::invalid_dtype(format!(
                "{NAME}: dtype {} is not one of {dtypes:?}",
                spec.dtype
            )));
        }
        let c = match usize::try_from(spec.channels) {
            Ok(0) => None,
            Ok(c) => Some(c),
            Err(_) => {
                return Err(Error::invalid_argument(format!(
                    "channels must be non-negative, got {}",
                    spec.channels
                )))
            }
        };
        let shape = if spec.op == ImageFormat::Any && spec.expand_animations {
            None
        } else {
            Some(PartialShape::new(vec![None, None, c]))
        };
        Ok(vec![dense_from(shape, spec.dtype, &ins[0])])
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let b = a.dense(0)?.scalar_value::<Bytes>()?;
        out.push(image::decode(&b, &self.spec, &a.key())?.into());
        Ok(())
    }
}

/// Feature specs in full and in order (a [`FeatureSpec`]'s own Debug form
/// shows its lookup tables, hash maps whose order differs from one spec
/// to an equal one): what the graph's fingerprint hashes.
struct Features<'a>(&'a FeatureSpec);

impl fmt::Debug for Features<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.0.iter()).finish()
    }
}

/// Checks that `serialized` is a string tensor of rank 0 (one record)
/// or 1 (`batched`) and returns the leading dims every output gets:
/// none, or the batch dim.
fn serialized_input(
    serialized: &In,
    batched: bool,
    what: &str,
) -> Result<Vec<Option<usize>>> {
    let info = string_in(serialized, what)?;
    // A batched parser also takes one record (a scalar), as in
    // TensorFlow: its outputs then have no batch dim.
    let ranks: &[usize] = if batched { &[0, 1] } else { &[0] };
    if info
        .shape
        .as_ref()
        .is_some_and(|s| !ranks.contains(&s.rank()))
    {
        let want = if batched { "0 or 1" } else { "0" };
        return Err(Error::invalid_argument(format!(
            "{what}: expected a string tensor of rank {want}"
        )));
    }
    Ok(if batched {
        serialized.dims().unwrap_or(vec![None])
    } else {
        vec![]
    })
}

/// The error for serialized records of the wrong rank at run time (a
/// placeholder of unknown shape fed another rank), in TensorFlow's words.
fn serialized_rank(t: &Tensor, batched: bool) -> Error {
    let want = if batched {
        "a scalar or vector"
    } else {
        "a scalar"
    };
    Error::invalid_argument(format!(
        "expected serialized to be {want}, got shape {:?}",
        t.dims()
    ))
}

fn known_dims(dims: &[usize]) -> impl Iterator<Item = Option<usize>> + '_ {
    dims.iter().map(|&d| Some(d))
}

/// A sparse parse output's lead dims: as many as `lead`, all unknown
/// (TensorFlow's sparse outputs carry no static batch size).
fn sparse_lead(lead: &[Option<usize>]) -> Vec<Option<usize>> {
    vec![None; lead.len()]
}

/// The output a feature of an Example (or a SequenceExample's context)
/// parses to: `lead` (the batch dim, if any), then the feature's dims. A
/// sparse output's batch dim is unknown, as in TensorFlow.
fn feature_out(
    kind: &FeatureKind,
    lead: &[Option<usize>],
    key: Option<Output>,
) -> OutInfo {
    let mut dims = lead.to_vec();
    let sparse = match kind {
        FeatureKind::Fixed { shape, .. } => {
            dims.extend(known_dims(shape.dims()));
            false
        }
        FeatureKind::VarLen { .. } => {
            dims = sparse_lead(lead);
            dims.push(None);
            true
        }
        FeatureKind::Sparse { size, .. } => {
            dims = sparse_lead(lead);
            dims.extend(known_dims(size));
            true
        }
        FeatureKind::FixedSequence { shape, .. } => {
            dims.push(None);
            dims.extend(known_dims(shape.dims()));
            false
        }
    };
    OutInfo {
        dtype: kind.dtype(),
        sparse,
        shape: Some(PartialShape::new(dims)),
        key,
    }
}

/// The output a SequenceExample's feature list parses to: a step dim
/// after `lead`, then a `FixedSequence`'s shape (dense, as in an
/// Example), or a `VarLen`'s values dim (sparse). The spec was checked to
/// hold those two kinds only.
fn feature_list_out(
    kind: &FeatureKind,
    lead: &[Option<usize>],
    key: Option<Output>,
) -> OutInfo {
    match kind {
        FeatureKind::VarLen { dtype } => {
            let mut dims = sparse_lead(lead);
            dims.extend([None, None]);
            OutInfo {
                dtype: *dtype,
                sparse: true,
                shape: Some(PartialShape::new(dims)),
                key,
            }
        }
        _ => feature_out(kind, lead, key),
    }
}

fn is_fixed_seq(kind: &FeatureKind) -> bool {
    matches!(kind, FeatureKind::FixedSequence { .. })
}

/// `tf.parse_single_example` (`batched` false): one serialized
/// `tf.train.Example` (a string scalar) parsed into one output per
/// feature of `spec`, in the spec's order; `VarLen` and `Sparse`
/// features are sparse outputs. `tf.parse_example` (`batched`): a vector
/// of them, every output with a leading batch dimension (a scalar is
/// parsed as one record, its outputs with no batch dimension, as in
/// TensorFlow). Not made by name.
///
/// Adding it fails (InvalidArgument) for an input that is not a string
/// scalar (`batched`: or vector).
#[derive(Clone)]
pub struct Parse {
    /// The features.
    pub spec: FeatureSpec,
    /// `parse_example` (else `parse_single_example`).
    pub batched: bool,
}

impl fmt::Debug for Parse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parse")
            .field("spec", &Features(&self.spec))
            .field("batched", &self.batched)
            .finish()
    }
}

impl OpType for Parse {
    fn op_type(&self) -> &'static str {
        "Parse"
    }
}

impl OpDef for Parse {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let what = if self.batched {
            "parse_example"
        } else {
            "parse_single_example"
        };
        let lead = serialized_input(&ins[0], self.batched, what)?;
        let key = ins[0].info.key;
        Ok(self
            .spec
            .iter()
            .map(|(_, kind)| feature_out(kind, &lead, key))
            .collect())
    }

    fn default_name(&self) -> &'static str {
        if self.batched {
            "ParseExample"
        } else {
            "ParseSingleExample"
        }
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let t = a.dense(0)?;
        let s = t.as_slice::<Bytes>()?;
        let parsed = match (self.batched, t.rank()) {
            (true, 1) => {
                let keys = keys_of(a);
                parse_example(records(s, &keys)?, &self.spec)?
            }
            // One record: its outputs have no batch dim (TensorFlow's
            // parse_example of a scalar).
            (_, 0) => parse_single_example(&s[0], &self.spec, &a.key())?,
            (_, _) => return Err(serialized_rank(t, self.batched)),
        };
        out.extend(parsed.into_values());
        Ok(())
    }
}

/// `tf.parse_single_sequence_example` (`batched` false): one serialized
/// `tf.train.SequenceExample`, a string scalar, parsed into one output
/// per feature of `context` (parsed as an Example's), then one per
/// feature list of `sequence`. A `FixedSequence` feature list is a dense
/// `[steps, ..shape]` output, a `VarLen` one a sparse output of dense
/// shape `[steps, max_len]`; the number of steps is not known
/// statically.
///
/// `tf.io.parse_sequence_example` (`batched`): a vector of them, every
/// output with a leading batch dimension. A `FixedSequence` feature list
/// is padded with zeros (empty strings) to the most steps in the batch,
/// and has a length output after the feature lists: `int64 [batch]`,
/// the steps of each example. Only `FixedSequence` feature lists have
/// one, in spec order, as in TensorFlow. Not made by name: add it with
/// [`parse_sequence`], which splits the outputs into those three groups.
///
/// Adding it fails (InvalidArgument) for an input that is not a string
/// scalar (`batched`: vector), or specs TensorFlow refuses: both empty,
/// a context feature that is not `Fixed` or `VarLen`, a feature list
/// that is not `FixedSequence` (without a default) or `VarLen`.
#[derive(Clone)]
pub struct ParseSequence {
    /// The context features.
    pub context: FeatureSpec,
    /// The feature lists.
    pub sequence: FeatureSpec,
    /// `parse_sequence_example` (else `parse_single_sequence_example`).
    pub batched: bool,
}

impl fmt::Debug for ParseSequence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParseSequence")
            .field("context", &Features(&self.context))
            .field("sequence", &Features(&self.sequence))
            .field("batched", &self.batched)
            .finish()
    }
}

impl OpType for ParseSequence {
    fn op_type(&self) -> &'static str {
        "ParseSequence"
    }
}

impl OpDef for ParseSequence {
    fn arity(&self) -> RangeInclusive<usize> {
        1..=1
    }

    fn infer(&self, ins: &[In]) -> Result<Vec<OutInfo>> {
        let batched = self.batched;
        let what = if batched {
            "parse_sequence_example"
        } else {
            "parse_single_sequence_example"
        };
        let lead = serialized_input(&ins[0], batched, what)?;
        if batched && lead.is_empty() {
            return Err(Error::invalid_argument(
                "parse_sequence_example takes a vector of records; for one, \
                 use parse_single_sequence_example",
            ));
        }
        // TensorFlow refuses a bad spec when the op is built (a
        // ValueError), so do the same rather than fail every run.
        check_sequence_specs(&self.context, &self.sequence)?;
        let key = ins[0].info.key;
        let mut outs: Vec<OutInfo> = self
            .context
            .iter()
            .map(|(_, kind)| feature_out(kind, &lead, key))
            .collect();
        outs.extend(
            self.sequence
                .iter()
                .map(|(_, kind)| feature_list_out(kind, &lead, key)),
        );
        if batched {
            let lengths =
                self.sequence.iter().filter(|(_, k)| is_fixed_seq(k));
            let shape: StaticShape = Some(PartialShape::new(lead.clone()));
            outs.extend(lengths.map(|_| OutInfo {
                key,
                ..dense(shape.clone(), DType::I64)
            }));
        }
        Ok(outs)
    }

    fn default_name(&self) -> &'static str {
        if self.batched {
            "ParseSequenceExample"
        } else {
            "ParseSingleSequenceExample"
        }
    }

    fn run(&self, a: &Args<'_, '_>, out: &mut Vec<Value>) -> Result<()> {
        let (context, sequence) = (&self.context, &self.sequence);
        let t = a.dense(0)?;
        let s = t.as_slice::<Bytes>()?;
        if t.rank() != usize::from(self.batched) {
            return Err(serialized_rank(t, self.batched));
        }
        let parsed = if self.batched {
            let keys = keys_of(a);
            parse_sequence_example(records(s, &keys)?, context, sequence)?
        } else {
            let k = a.key();
            parse_single_sequence_example(&s[0], context, sequence, &k)?
        };
        push_sequence(parsed, sequence, self.batched, out)
    }
}

/// Pushes the outputs of a [`ParseSequence`]: the context features, the
/// feature lists and, `batched`, the lengths of the `FixedSequence`
/// lists, each in spec order, as the node declares them.
fn push_sequence(
    parsed: ParsedSequence,
    sequence: &FeatureSpec,
    batched: bool,
    out: &mut Vec<Value>,
) -> Result<()> {
    out.extend(parsed.context.into_values());
    out.extend(parsed.feature_lists.into_values());
    if !batched {
        // TensorFlow's single parse has no lengths output.
        return Ok(());
    }
    // `lengths` is keyed by name; the node's outputs follow the spec.
    let mut lengths = parsed.lengths;
    for (name, kind) in sequence.iter() {
        if let FeatureKind::FixedSequence { .. } = kind {
            let l = lengths.remove(name).ok_or_else(|| {
                Error::internal(format!("no length for {name:?}"))
            })?;
            out.push(l.into());
        }
    }
    Ok(())
}

/// The outputs of a [`ParseSequence`], TensorFlow's three results.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SequenceOutputs {
    /// One per context feature, in spec order.
    pub context: Vec<Output>,
    /// One per feature list, in spec order.
    pub feature_lists: Vec<Output>,
    /// One per `FixedSequence` feature list, in spec order (`batched`
    /// only; empty for a single parse).
    pub lengths: Vec<Output>,
}

/// Adds `def` parsing `serialized` to `g`; its outputs in three groups.
///
/// # Errors
/// As [`ParseSequence`] says.
pub fn parse_sequence(
    g: &Graph,
    serialized: Output,
    def: ParseSequence,
) -> Result<SequenceOutputs> {
    let (n, m) = (def.context.len(), def.sequence.len());
    let mut context = g.op(def, &[serialized])?;
    let lengths = context.split_off(n + m);
    let feature_lists = context.split_off(n);
    Ok(SequenceOutputs {
        context,
        feature_lists,
        lengths,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{from_attrs, Attr};

    #[test]
    fn decode_image_reads_its_attributes_with_tensorflow_defaults() {
        let a: Attrs =
            [("format", Attr::Str("png".into()))].into_iter().collect();
        let d = DecodeImage::from_attrs(&a).unwrap();
        let want =
            DecodeSpec::new(ImageFormat::Png, image::Channels::AsStored);
        assert_eq!(d.spec, want);
        let a: Attrs = [
            ("format", Attr::Str("jpeg".into())),
            ("channels", Attr::Int(3)),
            ("ratio", Attr::Int(2)),
            ("acceptable_fraction", Attr::Float(0.5)),
            ("dct_method", Attr::Str("INTEGER_ACCURATE".into())),
            ("fancy_upscaling", Attr::Bool(false)),
        ]
        .into_iter()
        .collect();
        let d = DecodeImage::from_attrs(&a).unwrap();
        assert_eq!((d.spec.op, d.spec.channels), (ImageFormat::Jpeg, 3));
        assert_eq!(
            (d.spec.jpeg.ratio, d.spec.jpeg.acceptable_fraction),
            (2, 0.5)
        );
        assert_eq!(d.spec.jpeg.dct_method, "INTEGER_ACCURATE");
        assert!(!d.spec.jpeg.fancy_upscaling && d.spec.expand_animations);
        let a: Attrs =
            [("format", Attr::Str("tiff".into()))].into_iter().collect();
        let e = from_attrs("DecodeImage", &a).unwrap_err();
        assert!(e.to_string().contains("format"), "{e}");
    }
}
