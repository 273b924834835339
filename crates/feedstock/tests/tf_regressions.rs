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
