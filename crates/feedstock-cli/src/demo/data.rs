//! The digits data: loading the shipped CSV, the deterministic train/test
//! split, and the conversion to TFRecord files of `tf.train.Example`
//! (the seed guide's `convert_to_records`).
//!
//! `data/digits.csv.gz` holds 1797 handwritten digits, one per line: 64
//! pixel intensities of an 8×8 image (integers 0..=16) and then the label
//! (0..=9), with no header. Images are scaled to 0..1 as they are loaded.

use std::io::Read;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use feedstock::decode::example::FeatureSpec;
use feedstock::decode::Records;
use feedstock::io::fs::OutputOptions;
use feedstock::io::tfrecord::WriterBuilder;
use feedstock::io::Compression;
use feedstock::proto::{Example, ExampleBuilder};
use feedstock::queue::{ComponentSpec, PartialShape, QueueSpec};
use feedstock::{DType, Error, Result, Tensor};
use flate2::read::GzDecoder;
use prost::Message;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Pixels per image (8×8).
pub(crate) const FEATURES: usize = 64;
/// Digit classes.
pub(crate) const CLASSES: usize = 10;
/// The Example feature holding the 64 scaled pixels.
pub(crate) const IMAGE: &str = "image";
/// The Example feature holding the label.
pub(crate) const LABEL: &str = "label";
/// The most bytes the digits CSV may inflate to (the shipped one is
/// about 300 KB): the demo holds it whole, so a bigger file (or a gzip
/// bomb) is refused, not read until memory runs out.
const MAX_TEXT_BYTES: u64 = 64 << 20;
/// The largest pixel intensity in the CSV; pixels are divided by it.
const MAX_PIXEL: i32 = 16;

/// Images and labels held in memory, row-major.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Digits {
    /// `[len, FEATURES]` pixels scaled to 0..1.
    images: Vec<f32>,
    /// `[len]` labels in `0..CLASSES`.
    labels: Vec<i64>,
}

impl Digits {
    /// Reads and parses a gzip-compressed digits CSV.
    ///
    /// # Errors
    ///
    /// `NotFound` when the file is missing, `DataLoss` when it is not
    /// valid gzip, and `InvalidArgument` naming the line and column of a
    /// malformed value.
    pub(crate) fn load(path: &Path) -> Result<Digits> {
        let name = path.display().to_string();
        let file = crate::args::open_input(path)?;
        let mut text = Vec::new();
        GzDecoder::new(file)
            .take(MAX_TEXT_BYTES + 1)
            .read_to_end(&mut text)
            .map_err(|e| Error::io(e).with_file(&name))?;
        if text.len() as u64 > MAX_TEXT_BYTES {
            return Err(Error::resource_exhausted(format!(
                "inflates to more than {MAX_TEXT_BYTES} bytes: not the \
                 digits file (which the demo holds in memory whole)"
            ))
            .with_file(&name));
        }
        Digits::parse(&name, text.into())
    }

    /// Parses the CSV text of `file` (the name is used in error messages)
    /// with `decode_csv`: 65 required integer columns per line.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` with the file, the key `FILE:LINE` (1-based) and
    /// the field `column N` (from 0), for a line without 65 fields, a
    /// field that is not an integer, a pixel outside 0..=16 or a label
    /// outside 0..=9.
    pub(crate) fn parse(file: &str, text: Bytes) -> Result<Digits> {
        let (lines, keys) = lines(file, &text);
        let columns = digits_csv()
            .decode_batch(Records::new(&lines).with_keys(&keys)?)
            .map_err(|e| e.with_file(file))?;
        let columns: Vec<&[i32]> = columns
            .iter()
            .map(Tensor::as_slice::<i32>)
            .collect::<Result<_>>()?;
        let bad = |msg: String, row: usize, col: usize| {
            Error::invalid_argument(msg)
                .with_file(file)
                .with_key(&keys[row])
                .with_field(format!("column {col}"))
        };
        let mut digits = Digits {
            images: Vec::with_capacity(lines.len() * FEATURES),
            labels: Vec::with_capacity(lines.len()),
        };
        for row in 0..lines.len() {
            for (col, column) in columns[..FEATURES].iter().enumerate() {
                let pixel = column[row];
                if !(0..=MAX_PIXEL).contains(&pixel) {
                    let msg = format!("pixel {pixel} is outside 0..=16");
                    return Err(bad(msg, row, col));
                }
                digits.images.push(pixel as f32 / MAX_PIXEL as f32);
            }
            let label = columns[FEATURES][row];
            if !(0..CLASSES as i32).contains(&label) {
                let msg = format!("label {label} is not a digit");
                return Err(bad(msg, row, FEATURES));
            }
            digits.labels.push(i64::from(label));
        }
        Ok(digits)
    }

    /// The number of digits.
    pub(crate) fn len(&self) -> usize {
        self.labels.len()
    }

    /// The pixels of digit `i`, scaled to 0..1.
    pub(crate) fn image(&self, i: usize) -> &[f32] {
        &self.images[i * FEATURES..(i + 1) * FEATURES]
    }

    /// The label of digit `i`.
    pub(crate) fn label(&self, i: usize) -> i64 {
        self.labels[i]
    }

    /// Splits into `(train, test)` with `test_len` digits held out, chosen
    /// by a shuffle seeded with `seed`: the same seed gives the same split.
    /// Both halves keep the file order of their digits.
    pub(crate) fn split(
        &self,
        test_len: usize,
        seed: u64,
    ) -> (Digits, Digits) {
        let mut order: Vec<usize> = (0..self.len()).collect();
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        let test_len = test_len.min(self.len());
        let (test, train) = order.split_at_mut(test_len);
        test.sort_unstable();
        train.sort_unstable();
        (self.select(train), self.select(test))
    }

    /// The digits at `indices`, in that order.
    pub(crate) fn select(&self, indices: &[usize]) -> Digits {
        let mut out = Digits {
            images: Vec::with_capacity(indices.len() * FEATURES),
            labels: Vec::with_capacity(indices.len()),
        };
        for &i in indices {
            out.images.extend_from_slice(self.image(i));
            out.labels.push(self.label(i));
        }
        out
    }

    /// All images as one `f32 [len, 64]` tensor.
    pub(crate) fn images_tensor(&self) -> Tensor {
        Tensor::new([self.len(), FEATURES], self.images.clone())
            .expect("images hold len * FEATURES values")
    }

    /// All labels as one `i64 [len]` tensor.
    pub(crate) fn labels_tensor(&self) -> Tensor {
        Tensor::vector(self.labels.clone())
    }

    /// Digit `i` as a `tf.train.Example` with the features `image` (a
    /// float list of 64 values in 0..1) and `label` (one int64), the
    /// layout [`feature_spec`] parses back.
    pub(crate) fn example(&self, i: usize) -> Example {
        ExampleBuilder::new()
            .floats(IMAGE, self.image(i).iter().copied())
            .int64(LABEL, [self.label(i)])
            .build()
    }

    /// Writes the digits as `shards` TFRecord files of serialized
    /// Examples named `{name}-{i:05}-of-{shards:05}.tfrecord` in `dir`,
    /// digit `j` in shard `j % shards`, and returns the paths in shard
    /// order. `shards` is clamped to `1..=len`, so no file is empty.
    ///
    /// # Errors
    ///
    /// Those of creating or writing a file, naming it.
    pub(crate) fn write_shards(
        &self,
        dir: &Path,
        name: &str,
        shards: usize,
    ) -> Result<Vec<PathBuf>> {
        let shards = shards.clamp(1, self.len().max(1));
        let paths: Vec<PathBuf> = (0..shards)
            .map(|i| {
                dir.join(format!("{name}-{i:05}-of-{shards:05}.tfrecord"))
            })
            .collect();
        let mut builder = WriterBuilder::new();
        builder.compression(Compression::None);
        // The demo owns these files and writes them again on every run;
        // each is replaced atomically, so an interrupted run leaves the
        // previous ones whole.
        let mut options = OutputOptions::new();
        options.force(true);
        let mut writers = paths
            .iter()
            .map(|p| builder.create_output(&p.to_string_lossy(), &options))
            .collect::<Result<Vec<_>>>()?;
        let mut buf = Vec::new();
        for i in 0..self.len() {
            buf.clear();
            self.example(i)
                .encode(&mut buf)
                .expect("a Vec grows as needed");
            writers[i % shards].write_record(&buf)?;
        }
        for w in writers {
            w.commit()?;
        }
        Ok(paths)
    }
}

/// The non-empty lines of `text` as zero-copy slices without their line
/// ending, each with its key `FILE:LINE` (1-based).
fn lines(file: &str, text: &Bytes) -> (Vec<Bytes>, Vec<String>) {
    let mut lines = Vec::new();
    let mut keys = Vec::new();
    let mut start = 0;
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        let content = line.strip_suffix(b"\r").unwrap_or(line);
        if !content.is_empty() {
            lines.push(text.slice(start..start + content.len()));
            keys.push(format!("{file}:{}", i + 1));
        }
        start += line.len() + 1;
    }
    (lines, keys)
}

/// The decoder of one digits line: 64 pixels and the label, all required
/// integers.
fn digits_csv() -> CsvDecoder {
    let column = RecordDefault::required(DType::I32)
        .expect("decode_csv supports int32");
    CsvDecoder::new(vec![column; FEATURES + 1])
        .expect("65 integer columns make a valid decoder")
}

/// The components of one digit as a batching queue holds it: `image` f32
/// `[64]` and `label` i64 scalar, the order [`feature_spec`] parses them
/// in.
pub(crate) fn example_spec() -> QueueSpec {
    QueueSpec::new()
        .component(
            ComponentSpec::new(DType::F32).shape([FEATURES]).name(IMAGE),
        )
        .component(
            ComponentSpec::new(DType::I64)
                .shape(PartialShape::scalar())
                .name(LABEL),
        )
}

/// How a digit's Example is parsed back: `image` a float32 `[64]`, `label`
/// an int64 scalar, both required.
pub(crate) fn feature_spec() -> FeatureSpec {
    FeatureSpec::builder()
        .fixed(IMAGE, DType::F32, [FEATURES])
        .fixed(LABEL, DType::I64, [])
        .build()
        .expect("two distinct fixed features")
}

#[cfg(test)]
mod tests {
    use super::*;
    use feedstock::decode::example::parse_single_example;
    use feedstock::io::tfrecord::ReaderBuilder;
    use feedstock::Kind;

    fn line(pixel: u8, label: u8) -> String {
        let mut fields = vec![pixel.to_string(); FEATURES];
        fields.push(label.to_string());
        fields.join(",")
    }

    fn parse(text: String) -> Result<Digits> {
        Digits::parse("d.csv", text.into())
    }

    #[test]
    fn parse_scales_pixels_and_keeps_labels() {
        let text = format!("{}\n\n{}\r\n", line(16, 3), line(4, 9));
        let d = parse(text).unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(d.image(0), &[1.0; FEATURES]);
        assert_eq!(d.image(1), &[0.25; FEATURES]);
        assert_eq!((d.label(0), d.label(1)), (3, 9));
        assert_eq!(d.images_tensor().dims(), &[2, FEATURES]);
        assert_eq!(d.labels_tensor().as_slice::<i64>().unwrap(), &[3, 9]);
    }

    #[test]
    fn malformed_lines_name_file_line_and_column() {
        let cases = [
            (format!("{}\n{}", line(0, 0), line(17, 0)), "d.csv:2", "0"),
            (line(0, 10), "d.csv:1", "64"),
            (line(0, 1).replacen('0', "x", 1), "d.csv:1", "0"),
            (line(0, 1).replacen('0', "-1", 1), "d.csv:1", "0"),
            // One field too many: the first extra column is named.
            (format!("{},5", line(0, 1)), "d.csv:1", "65"),
            // Too few: the first missing column is named.
            ("1,2,3".to_owned(), "d.csv:1", "3"),
            (
                format!("\n\n{}", line(0, 1).replace(",0,", ",,")),
                "d.csv:3",
                "1",
            ),
        ];
        for (text, key, col) in cases {
            let err = parse(text).unwrap_err();
            assert_eq!(err.kind(), Kind::InvalidArgument, "{err}");
            assert_eq!(err.file(), Some("d.csv"), "{err}");
            assert_eq!(err.key(), Some(key), "{err}");
            let field = format!("column {col}");
            assert_eq!(err.field(), Some(field.as_str()), "{err}");
        }
    }

    #[test]
    fn examples_parse_back_with_the_feature_spec() {
        let text = format!("{}\n{}\n", line(8, 3), line(16, 0));
        let d = parse(text).unwrap();
        let record = Bytes::from(d.example(0).encode_to_vec());
        let parsed =
            parse_single_example(&record, &feature_spec(), "r:0").unwrap();
        let image = parsed[IMAGE].dense().unwrap();
        assert_eq!(image.dims(), &[FEATURES]);
        assert_eq!(image.as_slice::<f32>().unwrap(), &[0.5; FEATURES]);
        let label = parsed[LABEL].dense().unwrap();
        assert_eq!(label.scalar_value::<i64>().unwrap(), 3);
    }

    #[test]
    fn shards_hold_every_digit_once_round_robin() {
        let text: String = (0..10u8).map(|i| line(i, i % 10) + "\n").collect();
        let d = parse(text).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let paths = d.write_shards(dir.path(), "train", 3).unwrap();
        let names: Vec<_> = paths
            .iter()
            .map(|p| p.file_name().unwrap().to_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            names,
            [
                "train-00000-of-00003.tfrecord",
                "train-00001-of-00003.tfrecord",
                "train-00002-of-00003.tfrecord"
            ]
        );
        let spec = feature_spec();
        for (shard, path) in paths.iter().enumerate() {
            let labels: Vec<i64> = ReaderBuilder::new()
                .open(path)
                .unwrap()
                .map(|r| {
                    let data = r.unwrap().value;
                    let p = parse_single_example(&data, &spec, "r").unwrap();
                    p[LABEL].dense().unwrap().scalar_value::<i64>().unwrap()
                })
                .collect();
            let want: Vec<i64> = (shard as i64..10).step_by(3).collect();
            assert_eq!(labels, want, "shard {shard}");
        }
        // More shards than digits: one digit per file, none empty.
        let paths = d.write_shards(dir.path(), "few", 50).unwrap();
        assert_eq!(paths.len(), 10);
    }

    #[test]
    fn writing_into_a_missing_directory_names_the_file() {
        let d = parse(line(1, 1)).unwrap();
        let err = d
            .write_shards(Path::new("no/such/dir"), "t", 1)
            .unwrap_err();
        assert_eq!(err.kind(), Kind::NotFound, "{err}");
        assert!(err.file().unwrap().contains("t-00000-of-00001"), "{err}");
    }

    #[test]
    fn missing_file_is_not_found_naming_it() {
        let err =
            Digits::load(Path::new("no/such/digits.csv.gz")).unwrap_err();
        assert_eq!(err.kind(), Kind::NotFound);
        assert_eq!(err.file(), Some("no/such/digits.csv.gz"));
    }

    #[test]
    fn split_is_deterministic_disjoint_and_complete() {
        let text: String =
            (0..50u8).map(|i| line(i % 17, i % 10) + "\n").collect();
        let all = parse(text).unwrap();
        let (train, test) = all.split(12, 7);
        assert_eq!((train.len(), test.len()), (38, 12));
        assert_eq!(all.split(12, 7), (train.clone(), test.clone()));
        assert_ne!(all.split(12, 8).1, test, "another seed, another split");
        // Every digit lands in exactly one half: compare as multisets of
        // (first pixel, label), which identify the 50 lines uniquely here.
        let key =
            |d: &Digits, i: usize| ((d.image(i)[0] * 16.0) as u8, d.label(i));
        let mut seen: Vec<_> = (0..train.len())
            .map(|i| key(&train, i))
            .chain((0..test.len()).map(|i| key(&test, i)))
            .collect();
        let mut want: Vec<_> = (0..all.len()).map(|i| key(&all, i)).collect();
        seen.sort_unstable();
        want.sort_unstable();
        assert_eq!(seen, want);
    }

    #[test]
    fn shipped_digits_load_with_every_class() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../data/digits.csv.gz");
        let d = Digits::load(&path).unwrap();
        assert_eq!(d.len(), 1797);
        for c in 0..CLASSES as i64 {
            let n = (0..d.len()).filter(|&i| d.label(i) == c).count();
            assert!(n > 150, "class {c} has {n} digits");
        }
    }
}
