//! The digits data: loading the shipped CSV, the deterministic train/test
//! split, and the conversion to TFRecord files of `tf.train.Example`
//! (the seed guide's `convert_to_records`).
//!
//! `data/digits.csv.gz` holds 1797 handwritten digits, one per line: 64
//! pixel intensities of an 8×8 image (integers 0..=16) and then the label
//! (0..=9), with no header. Images are scaled to 0..1 as they are loaded.

use std::io::Read;
use std::path::Path;

use feedstock::proto::{feature, Example, Feature, Features};
use feedstock::proto::{FloatList, Int64List};
use feedstock::{Error, Result, Tensor};
use flate2::read::GzDecoder;
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
/// The largest pixel intensity in the CSV; pixels are divided by it.
const MAX_PIXEL: u8 = 16;

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
        let file = std::fs::File::open(path)
            .map_err(|e| Error::io(e).with_file(&name))?;
        let mut text = Vec::new();
        GzDecoder::new(file)
            .read_to_end(&mut text)
            .map_err(|e| Error::io(e).with_file(&name))?;
        Digits::parse(&name, &text)
    }

    /// Parses the CSV text of `file` (used in error messages).
    ///
    /// Written by hand because the format is fixed and tiny (65 small
    /// integers a line); once `decode::csv` lands this becomes a call to
    /// `decode_csv` with integer defaults.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` with the file, the key `FILE:LINE` (1-based) and
    /// the column, for a line without 65 fields, a field that is not an
    /// integer, a pixel above 16 or a label above 9.
    pub(crate) fn parse(file: &str, text: &[u8]) -> Result<Digits> {
        let mut digits = Digits::default();
        let text = std::str::from_utf8(text).map_err(|e| {
            Error::invalid_argument(format!("not UTF-8 text: {e}"))
                .with_file(file)
                .with_offset(e.valid_up_to() as u64)
        })?;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.is_empty() {
                continue;
            }
            let key = format!("{file}:{}", i + 1);
            let bad = |msg: String, col: usize| {
                Error::invalid_argument(msg)
                    .with_file(file)
                    .with_key(&key)
                    .with_field(format!("column {col}"))
            };
            let mut n = 0;
            for (col, field) in line.split(',').enumerate() {
                n += 1;
                if col > FEATURES {
                    continue;
                }
                let value: u8 = field.trim().parse().map_err(|_| {
                    bad(format!("{field:?} is not a small integer"), col)
                })?;
                if col < FEATURES {
                    if value > MAX_PIXEL {
                        return Err(bad(
                            format!("pixel {value} is above {MAX_PIXEL}"),
                            col,
                        ));
                    }
                    digits
                        .images
                        .push(f32::from(value) / f32::from(MAX_PIXEL));
                } else if usize::from(value) >= CLASSES {
                    return Err(bad(
                        format!("label {value} is not a digit"),
                        col,
                    ));
                } else {
                    digits.labels.push(i64::from(value));
                }
            }
            if n != FEATURES + 1 {
                return Err(bad(
                    format!("expected {} fields, found {n}", FEATURES + 1),
                    n.min(FEATURES + 1) - 1,
                ));
            }
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
    /// layout [`IMAGE`] and [`LABEL`] are parsed back with.
    // Written out as TFRecords once io::tfrecord::Writer lands.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn example(&self, i: usize) -> Example {
        let image = Feature {
            kind: Some(feature::Kind::FloatList(FloatList {
                value: self.image(i).to_vec(),
            })),
        };
        let label = Feature {
            kind: Some(feature::Kind::Int64List(Int64List {
                value: vec![self.label(i)],
            })),
        };
        Example {
            features: Some(Features {
                feature: [
                    (IMAGE.to_owned(), image),
                    (LABEL.to_owned(), label),
                ]
                .into_iter()
                .collect(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use feedstock::Kind;

    fn line(pixel: u8, label: u8) -> String {
        let mut fields = vec![pixel.to_string(); FEATURES];
        fields.push(label.to_string());
        fields.join(",")
    }

    #[test]
    fn parse_scales_pixels_and_keeps_labels() {
        let text = format!("{}\n{}\r\n", line(16, 3), line(4, 9));
        let d = Digits::parse("d.csv", text.as_bytes()).unwrap();
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
            (format!("{},5", line(0, 1)), "d.csv:1", "64"),
            ("1,2,3".to_owned(), "d.csv:1", "2"),
        ];
        for (text, key, col) in cases {
            let err = Digits::parse("d.csv", text.as_bytes()).unwrap_err();
            assert_eq!(err.kind(), Kind::InvalidArgument, "{err}");
            assert_eq!(err.file(), Some("d.csv"));
            assert_eq!(err.key(), Some(key), "{err}");
            assert_eq!(err.field(), Some(format!("column {col}").as_str()));
        }
    }

    #[test]
    fn examples_round_trip_through_protobuf() {
        use prost::Message;
        let text = format!("{}\n{}\n", line(8, 3), line(16, 0));
        let d = Digits::parse("d.csv", text.as_bytes()).unwrap();
        let bytes = d.example(0).encode_to_vec();
        let back = Example::decode(bytes.as_slice()).unwrap();
        let features = back.features.unwrap().feature;
        assert_eq!(features.len(), 2);
        match &features[IMAGE].kind {
            Some(feature::Kind::FloatList(l)) => {
                assert_eq!(l.value, vec![0.5; FEATURES])
            }
            other => panic!("image is {other:?}"),
        }
        match &features[LABEL].kind {
            Some(feature::Kind::Int64List(l)) => assert_eq!(l.value, [3]),
            other => panic!("label is {other:?}"),
        }
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
        let all = Digits::parse("d.csv", text.as_bytes()).unwrap();
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
