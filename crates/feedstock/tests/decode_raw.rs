//! decode_raw, decode_padded_raw, string_to_number and decode_compressed,
//! and the cifar_like.bin golden records.

use std::io::Write;
use std::path::PathBuf;

use base64::Engine;
use bytes::Bytes;
use feedstock::decode::raw::{
    decode_compressed, decode_compressed_with_limit, decode_padded_raw,
    decode_padded_raw_batch, decode_raw, decode_raw_batch, string_to_number,
    ByteOrder,
};
use feedstock::decode::Records;
use feedstock::io::Compression;
use feedstock::{DType, Kind, Tensor};
use serde_json::Value as Json;

use ByteOrder::{BigEndian as BE, LittleEndian as LE};

/// One record, as decoders take it.
fn b(bytes: &[u8]) -> Bytes {
    Bytes::copy_from_slice(bytes)
}

/// A batch of records.
fn batch(records: &[&[u8]]) -> Vec<Bytes> {
    records.iter().map(|r| b(r)).collect()
}

/// Encodes `values` with `to_bytes`, decodes them back, and compares.
macro_rules! round_trip {
    ($t:ty, $values:expr) => {{
        let values: Vec<$t> = $values;
        for (order, enc) in [
            (LE, <$t>::to_le_bytes as fn($t) -> _),
            (BE, <$t>::to_be_bytes as fn($t) -> _),
        ] {
            let bytes: Vec<u8> = values.iter().flat_map(|&v| enc(v)).collect();
            let t = decode_raw(
                &Bytes::from(bytes),
                <$t as feedstock::tensor::Element>::DTYPE,
                order,
            )
            .unwrap();
            assert_eq!(t.dims(), &[values.len()]);
            assert_eq!(t.as_slice::<$t>().unwrap(), &values[..], "{order:?}");
        }
    }};
}

#[test]
fn every_numeric_dtype_round_trips_in_both_byte_orders() {
    round_trip!(u8, vec![0, 1, 255]);
    round_trip!(i8, vec![-128, -1, 0, 127]);
    round_trip!(u16, vec![0, 1, 0xbeef, u16::MAX]);
    round_trip!(i16, vec![i16::MIN, -2, 300, i16::MAX]);
    round_trip!(u32, vec![0, 0xdead_beef, u32::MAX]);
    round_trip!(i32, vec![i32::MIN, -70000, 1, i32::MAX]);
    round_trip!(u64, vec![0, 0x0102_0304_0506_0708, u64::MAX]);
    round_trip!(i64, vec![i64::MIN, -1, i64::MAX]);
    round_trip!(f32, vec![0.0, -1.5, f32::MAX, f32::MIN_POSITIVE, 3.25e-3]);
    round_trip!(f64, vec![0.0, -1.5, f64::MAX, 1e-300]);
}

#[test]
fn byte_order_decides_which_byte_is_significant() {
    let b = [0x01, 0x02, 0x03, 0x04];
    let rec = Bytes::copy_from_slice(&b);
    let le = decode_raw(&rec, DType::I32, LE).unwrap();
    let be = decode_raw(&rec, DType::I32, BE).unwrap();
    assert_eq!(le.as_slice::<i32>().unwrap(), &[0x0403_0201]);
    assert_eq!(be.as_slice::<i32>().unwrap(), &[0x0102_0304]);
    // Byte-sized elements ignore the order.
    let u = decode_raw(&rec, DType::U8, BE).unwrap();
    assert_eq!(u.as_slice::<u8>().unwrap(), &b);
}

#[test]
fn bool_bytes_are_true_when_nonzero() {
    let t = decode_raw(&b(&[0, 1, 2]), DType::Bool, LE).unwrap();
    assert_eq!(t.as_slice::<bool>().unwrap(), &[false, true, true]);
}

#[test]
fn empty_input_is_an_empty_vector() {
    let t = decode_raw(&b(&[]), DType::F64, LE).unwrap();
    assert_eq!(t.dims(), &[0]);
}

#[test]
fn length_not_a_multiple_of_the_element_size_is_an_error() {
    let e = decode_raw(&b(&[1, 2, 3]), DType::U16, LE).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(
        e.to_string().contains("3 bytes is not a multiple of 2"),
        "{e}"
    );
    let e = decode_raw(&b(&[1, 2]), DType::String, LE).unwrap_err();
    assert!(e.to_string().contains("string"), "{e}");
}

#[test]
fn batch_stacks_equal_length_records_and_names_the_odd_one() {
    let recs = batch(&[&[1, 0], &[2, 0], &[3, 1]]);
    let t = decode_raw_batch(&recs, DType::U16, LE).unwrap();
    assert_eq!(t.dims(), &[3, 1]);
    assert_eq!(t.as_slice::<u16>().unwrap(), &[1, 2, 259]);
    let bad = batch(&[&[1, 0], &[2, 0], &[3]]);
    let e = decode_raw_batch(&bad, DType::U8, LE).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert!(e.to_string().contains("record 2 has 1 bytes"), "{e}");
    let keyed = Records::new(&bad)
        .with_keys(&["f:0", "f:2", "f:4"])
        .unwrap();
    let e = decode_raw_batch(keyed, DType::U8, LE).unwrap_err();
    assert_eq!(e.key(), Some("f:4"), "{e}");
    let e =
        decode_raw_batch(&batch(&[&[1, 2, 3]]), DType::U16, LE).unwrap_err();
    assert!(e.to_string().contains("not a multiple"), "{e}");
    assert_eq!(
        decode_raw_batch(Records::new(&[]), DType::U8, LE)
            .unwrap()
            .dims(),
        &[0, 0]
    );
}

#[test]
fn padded_raw_pads_with_zeros_and_truncates() {
    let t = decode_padded_raw(&b(&[1, 0, 2]), 6, DType::U16, LE).unwrap();
    assert_eq!(t.as_slice::<u16>().unwrap(), &[1, 2, 0]);
    let t =
        decode_padded_raw(&b(&[0, 1, 0, 2, 0, 3]), 4, DType::U16, BE).unwrap();
    assert_eq!(t.as_slice::<u16>().unwrap(), &[1, 2]);
    let e = decode_padded_raw(&b(&[1]), 5, DType::U32, LE).unwrap_err();
    assert!(e.to_string().contains("fixed_length 5"), "{e}");
}

#[test]
fn padded_raw_batch_pads_or_cuts_each_record_to_one_row() {
    // tf.io.decode_padded_raw on a batch of strings of different lengths:
    // each row is its record cut or zero-padded to fixed_length.
    let recs = batch(&[&[1, 0, 2], &[], &[0, 1, 0, 2, 0, 3, 0, 4]]);
    let t = decode_padded_raw_batch(&recs, 6, DType::U16, LE).unwrap();
    assert_eq!(t.dims(), &[3, 3]);
    assert_eq!(
        t.as_slice::<u16>().unwrap(),
        &[1, 2, 0, 0, 0, 0, 256, 512, 768]
    );
    for (i, r) in recs.iter().enumerate() {
        let one = decode_padded_raw(r, 6, DType::U16, LE).unwrap();
        assert_eq!(t.index(i).unwrap(), one, "row {i}");
    }
    let none =
        decode_padded_raw_batch(Records::new(&[]), 4, DType::U8, LE).unwrap();
    assert_eq!(none.dims(), &[0, 4]);
    let e = decode_padded_raw_batch(&recs, 5, DType::U16, LE).unwrap_err();
    assert!(e.to_string().contains("fixed_length 5"), "{e}");
}

#[test]
fn string_to_number_parses_every_element_and_keeps_the_shape() {
    let t = Tensor::new(
        [2, 2],
        vec![
            Bytes::from(" 1"),
            Bytes::from("-2"),
            Bytes::from("+30"),
            Bytes::from("4\n"),
        ],
    )
    .unwrap();
    let i = string_to_number(&t, DType::I32).unwrap();
    assert_eq!(i.dims(), &[2, 2]);
    assert_eq!(i.as_slice::<i32>().unwrap(), &[1, -2, 30, 4]);
    let f = string_to_number(&t, DType::F64).unwrap();
    assert_eq!(f.as_slice::<f64>().unwrap(), &[1.0, -2.0, 30.0, 4.0]);
    let big = Tensor::vector(vec![Bytes::from("1e40"), Bytes::from("nan")]);
    let f = string_to_number(&big, DType::F32).unwrap();
    assert_eq!(f.as_slice::<f32>().unwrap()[0], f32::INFINITY);
    assert!(f.as_slice::<f32>().unwrap()[1].is_nan());
}

#[test]
fn string_to_number_errors_name_the_string_and_element() {
    let t = Tensor::vector(vec![Bytes::from("1"), Bytes::from("x1")]);
    let e = string_to_number(&t, DType::I64).unwrap_err();
    assert_eq!(e.kind(), Kind::InvalidArgument);
    assert_eq!(e.field(), Some("element 1"));
    assert!(e.to_string().contains("\"x1\""), "{e}");
    let over = Tensor::vector(vec![Bytes::from("3000000000")]);
    assert!(string_to_number(&over, DType::I32).is_err());
    assert!(string_to_number(&t, DType::U8).is_err());
    let not_strings = Tensor::vector(vec![1i32]);
    assert!(string_to_number(&not_strings, DType::I32).is_err());
}

#[test]
fn decode_compressed_inflates_gzip_and_zlib() {
    let text = b"hello hello hello, compressed world".repeat(20);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), Default::default());
    gz.write_all(&text).unwrap();
    let gz = gz.finish().unwrap();
    let mut zl =
        flate2::write::ZlibEncoder::new(Vec::new(), Default::default());
    zl.write_all(&text).unwrap();
    let zl = zl.finish().unwrap();

    let (gz, zl, text) = (Bytes::from(gz), Bytes::from(zl), Bytes::from(text));
    assert_eq!(decode_compressed(&gz, Compression::Gzip).unwrap(), text);
    assert_eq!(decode_compressed(&zl, Compression::Zlib).unwrap(), text);
    assert_eq!(decode_compressed(&text, Compression::None).unwrap(), text);
    // Two gzip members decode to both payloads.
    let two = Bytes::from([gz.clone(), gz.clone()].concat());
    assert_eq!(
        decode_compressed(&two, Compression::Gzip).unwrap().len(),
        2 * text.len()
    );

    let cut = gz.slice(..gz.len() / 2);
    let e = decode_compressed(&cut, Compression::Gzip).unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss);
    let e = decode_compressed(&gz, Compression::Zlib).unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss);
    let trailing = Bytes::from([&zl[..], b"junk"].concat());
    let e = decode_compressed(&trailing, Compression::Zlib).unwrap_err();
    assert_eq!(e.kind(), Kind::DataLoss);
    assert!(e.to_string().contains("zlib"), "{e}");
}

#[test]
fn golden_cifar_like_records_decode_as_tensorflow_did() {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden");
    let file = std::fs::read(dir.join("cifar_like.bin")).unwrap();
    let side: Json = serde_json::from_slice(
        &std::fs::read(dir.join("cifar_like.bin.json")).unwrap(),
    )
    .unwrap();
    let record_bytes = side["reader"]["FixedLengthRecordReader"]
        ["record_bytes"]
        .as_u64()
        .unwrap() as usize;
    let file = Bytes::from(file);
    let records: Vec<Bytes> = (0..file.len() / record_bytes)
        .map(|i| file.slice(i * record_bytes..(i + 1) * record_bytes))
        .collect();
    let want = side["records"].as_array().unwrap();
    assert_eq!(records.len(), want.len());
    assert_eq!(records.len() as u64, side["num_records"].as_u64().unwrap());

    let batch = decode_raw_batch(&records, DType::U8, LE).unwrap();
    assert_eq!(batch.dims(), &[records.len(), 3073]);
    for (i, (rec, w)) in records.iter().zip(want).enumerate() {
        let expect = base64::engine::general_purpose::STANDARD
            .decode(w["value_b64"].as_str().unwrap())
            .unwrap();
        assert_eq!(&rec[..], &expect[..], "record {i} bytes");
        let t = decode_raw(rec, DType::U8, LE).unwrap();
        let v = t.as_slice::<u8>().unwrap();
        assert_eq!(u64::from(v[0]), w["label"].as_u64().unwrap());
        let first8: Vec<u8> = w["pixels_first8"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u8)
            .collect();
        assert_eq!(&v[1..9], &first8[..], "record {i}");
        assert_eq!(batch.index(i).unwrap(), t);
    }
}

#[test]
fn decode_compressed_refuses_to_inflate_past_its_limit() {
    let mut enc = flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    );
    enc.write_all(&vec![0u8; 1 << 20]).unwrap();
    let gz = Bytes::from(enc.finish().unwrap());
    let e = decode_compressed_with_limit(&gz, Compression::Gzip, 1000)
        .unwrap_err();
    assert_eq!(e.kind(), Kind::ResourceExhausted, "{e}");
    let ok =
        decode_compressed_with_limit(&gz, Compression::Gzip, 1 << 20).unwrap();
    assert_eq!(ok.len(), 1 << 20);
}
