//! Behaviour found to differ from TensorFlow by the differential harness
//! (`scripts/difftf`), fixed, and pinned here with the values TensorFlow
//! gave.

use bytes::Bytes;
use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use feedstock::decode::raw::string_to_number;
use feedstock::{DType, Kind, Tensor};

#[test]
fn decode_csv_accepts_hexadecimal_floats() {
    // TensorFlow 2.21 gives [16.0], [3.0], [-0.25], [482.0] for this
    // record with float32 / float64 columns.
    let decoder = CsvDecoder::new(vec![
        RecordDefault::required(DType::F32).unwrap(),
        RecordDefault::required(DType::F64).unwrap(),
        RecordDefault::f32(0.0),
        RecordDefault::required(DType::F64).unwrap(),
    ])
    .unwrap();
    let rec = Bytes::from_static(b"0x10,0X1.8P1, -0x1p-2 ,0x1e2");
    let cols = decoder.decode(&rec, "k").unwrap();
    assert_eq!(cols[0].scalar_value::<f32>().unwrap(), 16.0);
    assert_eq!(cols[1].scalar_value::<f64>().unwrap(), 3.0);
    assert_eq!(cols[2].scalar_value::<f32>().unwrap(), -0.25);
    assert_eq!(cols[3].scalar_value::<f64>().unwrap(), 482.0);
}

#[test]
fn decode_csv_rejects_malformed_hexadecimal_floats() {
    // TensorFlow 2.21 gives InvalidArgument for each of these.
    let decoder =
        CsvDecoder::new(vec![RecordDefault::required(DType::F64).unwrap()])
            .unwrap();
    for bad in ["0x", "0x.", "0x1p", "0x1p+", "0x1p1f", "0x-1", "00x1"] {
        let err = decoder
            .decode(&Bytes::copy_from_slice(bad.as_bytes()), "k")
            .unwrap_err();
        assert_eq!(err.kind(), Kind::InvalidArgument, "{bad}");
    }
}

#[test]
fn string_to_number_rounds_hexadecimal_like_tensorflow() {
    // TensorFlow 2.21: float32 bits 1 (0x1.8p-150), 0x7f800000
    // (0x1.ffffffp127), 1.0 (0x1.00000080000001p0, rounded through f64);
    // float64 bits 1 (0x1.8p-1075) and 0 (0x1p-1075).
    let s = Tensor::vector(vec![
        Bytes::from_static(b"0x1.8p-150"),
        Bytes::from_static(b"0x1.ffffffp127"),
        Bytes::from_static(b"0x1.00000080000001p0"),
    ]);
    let f = string_to_number(&s, DType::F32).unwrap();
    let bits: Vec<u32> = f
        .as_slice::<f32>()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(bits, [1, 0x7f80_0000, 1.0f32.to_bits()]);
    let d = Tensor::vector(vec![
        Bytes::from_static(b"0x1.8p-1075"),
        Bytes::from_static(b"0x1p-1075"),
    ]);
    let d = string_to_number(&d, DType::F64).unwrap();
    let bits: Vec<u64> = d
        .as_slice::<f64>()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(bits, [1, 0]);
}

#[test]
fn parse_example_fixed_feature_of_no_elements_is_required_even_with_default() {
    // TensorFlow 2.21: FixedLenFeature([0], int64, default_value=[]) on an
    // Example without the feature fails with "Feature: a (data type:
    // int64) is required but could not be found"; present with no values,
    // it parses to an empty tensor.
    use feedstock::decode::example::{parse_single_example, FeatureSpec};
    use feedstock::proto::{Example, Feature, Features, Int64List};
    use prost::Message;

    let spec = FeatureSpec::builder()
        .fixed_with_default(
            "a",
            DType::I64,
            [0],
            Tensor::vector::<i64>(vec![]),
        )
        .build()
        .unwrap();
    let empty = Bytes::from(Example::default().encode_to_vec());
    let err = parse_single_example(&empty, &spec, "k").unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert_eq!(err.field(), Some("a"));

    let mut features = Features::default();
    features.feature.insert(
        "a".into(),
        Feature {
            kind: Some(feedstock::proto::feature::Kind::Int64List(
                Int64List { value: vec![] },
            )),
        },
    );
    let present = Bytes::from(
        Example {
            features: Some(features),
        }
        .encode_to_vec(),
    );
    let parsed = parse_single_example(&present, &spec, "k").unwrap();
    let a = match &parsed["a"] {
        feedstock::Value::Dense(t) => t.clone(),
        other => panic!("expected dense, got {other:?}"),
    };
    assert_eq!(a.dims(), [0]);
}

#[test]
fn text_line_reader_ends_the_last_line_at_a_trailing_cr() {
    // TensorFlow 2.21's TextLineReader gives, per file:
    //   "x\n\r\r" -> x, "\r";  "x\n\r" -> x;  "\r" -> nothing;
    //   "a\r\r\n" -> "a\r";   "\r\n\r" -> "".
    use feedstock::reader::{Reader, TextLineReader, WorkQueue};
    use std::sync::Mutex;

    struct One(Mutex<Option<String>>);
    impl WorkQueue for One {
        fn next_work(&self) -> feedstock::Result<String> {
            self.0.lock().unwrap().take().ok_or_else(|| {
                feedstock::Error::out_of_range("filename queue is closed")
            })
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[u8], &[&str]); 5] = [
        (b"x\n\r\r", &["x", "\r"]),
        (b"x\n\r", &["x"]),
        (b"\r", &[]),
        (b"a\r\r\n", &["a\r"]),
        (b"\r\n\r", &[""]),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("{i}.txt"));
        std::fs::write(&path, text).unwrap();
        let reader = Reader::new(TextLineReader::new());
        let work = One(Mutex::new(Some(path.to_str().unwrap().to_owned())));
        let mut got = Vec::new();
        loop {
            match reader.read(&work) {
                Ok(r) => {
                    got.push(String::from_utf8(r.value.to_vec()).unwrap())
                }
                Err(e) if e.is_out_of_range() => break,
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(got, *want, "{text:?}");
    }
}

#[test]
fn decode_compressed_of_an_empty_string_is_empty() {
    // TensorFlow 2.21: decode_compressed("", "GZIP") and (.., "ZLIB")
    // give "".
    use feedstock::decode::raw::decode_compressed;
    use feedstock::io::Compression;
    for c in [Compression::Gzip, Compression::Zlib] {
        assert_eq!(decode_compressed(&Bytes::new(), c).unwrap(), Bytes::new());
    }
    // A stream cut short is still an error (TF returns the part it read).
    let cut = Bytes::from_static(&[0x78, 0x9c]);
    let err = decode_compressed(&cut, Compression::Zlib).unwrap_err();
    assert_eq!(err.kind(), Kind::DataLoss);
}

#[test]
fn png_colour_to_gray_uses_libpng_weights_truncated() {
    // A 2x1 RGB PNG with pixels (22, 2, 35) and (20, 40, 30): TensorFlow
    // 2.21's decode_png(channels=1) gives [11, 32] (rounding would give
    // [12, 33]; Rec. 709 weights [9, 35]).
    use feedstock::decode::image::{decode_png, Channels};
    let img =
        image::RgbImage::from_raw(2, 1, vec![22, 2, 35, 20, 40, 30]).unwrap();
    let mut png = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    let gray = decode_png(&png.into(), Channels::Gray, "k").unwrap();
    assert_eq!(gray.dims(), [1, 2, 1]);
    assert_eq!(gray.as_slice::<u8>().unwrap(), &[11, 32]);
}

#[test]
fn sequence_example_context_feature_with_no_list_has_no_values() {
    // TensorFlow 2.21, context feature "d" = Feature() (no list set):
    // FixedLenFeature([], int64, default_value=23) fails ("Unexpected
    // number of elements"), FixedLenFeature([0], int64) gives [], and
    // VarLenFeature(int64) gives an empty sparse tensor. In an Example,
    // the same Feature() counts as missing: the default 23.
    use feedstock::decode::example::{
        parse_single_example, parse_single_sequence_example, FeatureSpec,
    };
    use feedstock::proto::{Example, Feature, Features, SequenceExample};
    use prost::Message;

    let mut features = Features::default();
    features.feature.insert("d".into(), Feature { kind: None });
    let seq = Bytes::from(
        SequenceExample {
            context: Some(features.clone()),
            feature_lists: None,
        }
        .encode_to_vec(),
    );
    let none = FeatureSpec::builder().build().unwrap();
    let with_default = FeatureSpec::builder()
        .fixed_with_default("d", DType::I64, [], Tensor::scalar(23i64))
        .build()
        .unwrap();
    let err = parse_single_sequence_example(&seq, &with_default, &none, "k")
        .unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument);
    assert_eq!(err.field(), Some("d"));

    let empty = FeatureSpec::builder()
        .fixed("d", DType::I64, [0])
        .build()
        .unwrap();
    let ctx = parse_single_sequence_example(&seq, &empty, &none, "k")
        .unwrap()
        .context;
    match &ctx["d"] {
        feedstock::Value::Dense(t) => assert_eq!(t.dims(), [0]),
        other => panic!("expected dense, got {other:?}"),
    }

    let ex = Bytes::from(
        Example {
            features: Some(features),
        }
        .encode_to_vec(),
    );
    let parsed = parse_single_example(&ex, &with_default, "k").unwrap();
    match &parsed["d"] {
        feedstock::Value::Dense(t) => {
            assert_eq!(t.scalar_value::<i64>().unwrap(), 23)
        }
        other => panic!("expected dense, got {other:?}"),
    }
}
