//! float16, bfloat16, complex64 and complex128: names, decode_raw, cast
//! (TensorFlow's `core/kernels/cast_op.h` semantics), queues and padded
//! batching.

use bytes::Bytes;
use feedstock::decode::raw::{decode_raw, decode_raw_batch, ByteOrder};
use feedstock::queue::{
    ComponentSpec, FifoQueue, PaddingFifoQueue, Queue, QueueSpec,
};
use feedstock::tensor::{bf16, f16, Complex32, Complex64};
use feedstock::transform::per_image_standardization;
use feedstock::{DType, Kind, Tensor};

use ByteOrder::{BigEndian as BE, LittleEndian as LE};

const NEW: [(DType, &str, usize); 4] = [
    (DType::F16, "float16", 2),
    (DType::BF16, "bfloat16", 2),
    (DType::C64, "complex64", 8),
    (DType::C128, "complex128", 16),
];

#[test]
fn new_dtypes_have_tensorflow_names_and_sizes() {
    for (dtype, name, size) in NEW {
        assert_eq!(dtype.name(), name);
        assert_eq!(DType::from_name(name).unwrap(), dtype);
        assert_eq!(dtype.size(), Some(size));
        assert!(dtype.is_numeric());
        assert!(DType::ALL.contains(&dtype));
    }
    assert_eq!(DType::from_name("half").unwrap(), DType::F16);
    assert_eq!(DType::ALL.len(), 16);
}

#[test]
fn decode_raw_reads_half_floats_in_both_byte_orders() {
    // 1.0 is 0x3c00 in float16 and 0x3f80 in bfloat16; -2.0 is 0xc000 and
    // 0xc000.
    let le = Bytes::from_static(&[0x00, 0x3c, 0x00, 0xc0]);
    let be = Bytes::from_static(&[0x3c, 0x00, 0xc0, 0x00]);
    for (rec, order) in [(&le, LE), (&be, BE)] {
        let t = decode_raw(rec, DType::F16, order).unwrap();
        assert_eq!(t.dtype(), DType::F16);
        assert_eq!(
            t.as_slice::<f16>().unwrap(),
            [f16::from_f32(1.0), f16::from_f32(-2.0)]
        );
    }
    let t = decode_raw(&Bytes::from_static(&[0x80, 0x3f]), DType::BF16, LE)
        .unwrap();
    assert_eq!(t.as_slice::<bf16>().unwrap(), [bf16::from_f32(1.0)]);
    let e = decode_raw(&Bytes::from_static(&[1, 2, 3]), DType::F16, LE)
        .unwrap_err();
    assert!(e.to_string().contains("multiple of 2"), "{e}");
}

#[test]
fn decode_raw_reads_complex_parts_each_in_the_byte_order() {
    // TensorFlow's DecodeRaw swaps the real and imaginary parts
    // separately: each part is an f32 (f64) in the given order, real first.
    let (re, im) = (1.5f32, -2.25f32);
    let le: Vec<u8> = [re.to_le_bytes(), im.to_le_bytes()].concat();
    let be: Vec<u8> = [re.to_be_bytes(), im.to_be_bytes()].concat();
    for (rec, order) in [(le, LE), (be, BE)] {
        let t = decode_raw(&rec.into(), DType::C64, order).unwrap();
        assert_eq!(
            t.as_slice::<Complex32>().unwrap(),
            [Complex32::new(re, im)]
        );
    }
    let rec: Vec<u8> =
        [(-0.5f64).to_be_bytes(), 3.0f64.to_be_bytes()].concat();
    let t = decode_raw(&rec.into(), DType::C128, BE).unwrap();
    assert_eq!(
        t.as_slice::<Complex64>().unwrap(),
        [Complex64::new(-0.5, 3.0)]
    );
    // A batch of two complex128 records.
    let recs: Vec<Bytes> = (0..2)
        .map(|i| {
            Bytes::from(
                [f64::from(i).to_le_bytes(), 1f64.to_le_bytes()].concat(),
            )
        })
        .collect();
    let t = decode_raw_batch(&recs, DType::C128, LE).unwrap();
    assert_eq!(t.dims(), [2, 1]);
    assert_eq!(
        t.as_slice::<Complex64>().unwrap()[1],
        Complex64::new(1.0, 1.0)
    );
}

#[test]
fn cast_from_complex_takes_the_real_part() {
    // cast_op.h: "Replicate numpy behavior of returning just the real
    // part"; to bool that is real != 0.
    let c = Tensor::vector(vec![
        Complex32::new(2.7, 5.0),
        Complex32::new(0.0, 1.0),
        Complex32::new(-1.5, 0.0),
    ]);
    let f = c.cast(DType::F64).unwrap();
    assert_eq!(f.as_slice::<f64>().unwrap(), [2.7f32 as f64, 0.0, -1.5]);
    let i = c.cast(DType::I32).unwrap();
    assert_eq!(i.as_slice::<i32>().unwrap(), [2, 0, -1]);
    let b = c.cast(DType::Bool).unwrap();
    assert_eq!(b.as_slice::<bool>().unwrap(), [true, false, true]);
    let h = c.cast(DType::F16).unwrap();
    assert_eq!(h.as_slice::<f16>().unwrap()[2], f16::from_f32(-1.5));
    let wide = c.cast(DType::C128).unwrap();
    assert_eq!(
        wide.as_slice::<Complex64>().unwrap()[0],
        Complex64::new(2.7f32 as f64, 5.0)
    );
    let narrow = wide.cast(DType::C64).unwrap();
    assert_eq!(narrow, c);
}

#[test]
fn cast_to_complex_sets_a_zero_imaginary_part() {
    let t = Tensor::vector(vec![3i64, -4]);
    let c = t.cast(DType::C64).unwrap();
    assert_eq!(
        c.as_slice::<Complex32>().unwrap(),
        [Complex32::new(3.0, 0.0), Complex32::new(-4.0, 0.0)]
    );
    let b = Tensor::vector(vec![true, false]).cast(DType::C128).unwrap();
    assert_eq!(
        b.as_slice::<Complex64>().unwrap(),
        [Complex64::new(1.0, 0.0), Complex64::new(0.0, 0.0)]
    );
}

#[test]
fn cast_to_half_rounds_through_float32_to_nearest_even() {
    // Eigen converts a double to half through float. 1 + 2^-11 + 2^-40
    // rounds to the float 1 + 2^-11, a tie between the halves 1 and
    // 1 + 2^-10, which goes to the even one: 1. (Rounding the double
    // directly would give 1 + 2^-10.)
    let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    let h = Tensor::vector(vec![x]).cast(DType::F16).unwrap();
    assert_eq!(h.as_slice::<f16>().unwrap(), [f16::ONE]);
    // bfloat16 keeps 8 significant bits: 1 + 2^-9 is a tie, to even: 1.
    let bf = Tensor::vector(vec![1.0f32 + 2f32.powi(-9), 3.0])
        .cast(DType::BF16)
        .unwrap();
    assert_eq!(
        bf.as_slice::<bf16>().unwrap(),
        [bf16::ONE, bf16::from_f32(3.0)]
    );
    // And back: half to integers truncates toward zero, as float does.
    let h = Tensor::vector(vec![f16::from_f32(2.5), f16::from_f32(-1.75)]);
    assert_eq!(
        h.cast(DType::I32).unwrap().as_slice::<i32>().unwrap(),
        [2, -1]
    );
    assert_eq!(
        h.cast(DType::BF16).unwrap().as_slice::<bf16>().unwrap(),
        [bf16::from_f32(2.5), bf16::from_f32(-1.75)]
    );
}

#[test]
fn cast_between_strings_and_new_dtypes_is_unimplemented_naming_both() {
    let s = Tensor::string("1");
    for (dtype, name, _) in NEW {
        let e = s.cast(dtype).unwrap_err();
        assert_eq!(e.kind(), Kind::Unimplemented);
        assert!(e.to_string().contains(name), "{e}");
        let e = Tensor::zeros(dtype, [1])
            .unwrap()
            .cast(DType::String)
            .unwrap_err();
        assert_eq!(e.kind(), Kind::Unimplemented);
        assert!(e.to_string().contains(name), "{e}");
    }
}

#[test]
fn ops_that_cannot_handle_complex_say_unimplemented() {
    let img = Tensor::zeros(DType::C64, [2, 2, 1]).unwrap();
    let e = per_image_standardization(&img).unwrap_err();
    assert_eq!(e.kind(), Kind::Unimplemented);
    assert!(e.to_string().contains("complex64"), "{e}");
    // A half image comes out float32, as in TensorFlow 2.21.
    let img =
        Tensor::new([1, 2, 1], vec![f16::from_f32(0.0), f16::from_f32(2.0)])
            .unwrap();
    let out = per_image_standardization(&img).unwrap();
    assert_eq!(out.dtype(), DType::F32);
    assert_eq!(out.as_slice::<f32>().unwrap(), [-1.0, 1.0]);
}

#[test]
fn queues_carry_and_batch_every_new_dtype() {
    let spec = NEW.iter().fold(QueueSpec::new(), |q, &(d, _, _)| {
        q.component(ComponentSpec::new(d).shape([2]))
    });
    let q = FifoQueue::builder(8, spec).build().unwrap();
    for i in 0..3 {
        let x = i as f32;
        q.enqueue(vec![
            Tensor::vector(vec![f16::from_f32(x), f16::from_f32(-x)]).into(),
            Tensor::vector(vec![bf16::from_f32(x), bf16::from_f32(x)]).into(),
            Tensor::vector(vec![Complex32::new(x, 1.0); 2]).into(),
            Tensor::vector(vec![Complex64::new(1.0, x as f64); 2]).into(),
        ])
        .unwrap();
    }
    let batch = q.dequeue_many(3).unwrap();
    for (c, (dtype, _, _)) in NEW.iter().enumerate() {
        let t = batch[c].dense().unwrap();
        assert_eq!((t.dtype(), t.dims()), (*dtype, &[3, 2][..]));
    }
    let h = batch[0].dense().unwrap().as_slice::<f16>().unwrap();
    assert_eq!(h[4], f16::from_f32(2.0));
    assert_eq!(h[5], f16::from_f32(-2.0));
    let c = batch[3].dense().unwrap().as_slice::<Complex64>().unwrap();
    assert_eq!(c[5], Complex64::new(1.0, 2.0));
}

#[test]
fn padding_queue_pads_new_dtypes_with_zeros() {
    let spec = QueueSpec::new()
        .component(ComponentSpec::new(DType::C64).shape(vec![None]))
        .component(ComponentSpec::new(DType::BF16).shape(vec![None]));
    let q = PaddingFifoQueue::builder(4, spec).build().unwrap();
    q.enqueue(vec![
        Tensor::vector(vec![Complex32::new(1.0, 2.0)]).into(),
        Tensor::vector(vec![bf16::ONE, bf16::ONE]).into(),
    ])
    .unwrap();
    q.enqueue(vec![
        Tensor::vector(vec![Complex32::new(3.0, 4.0); 2]).into(),
        Tensor::vector(Vec::<bf16>::new()).into(),
    ])
    .unwrap();
    let batch = q.dequeue_many(2).unwrap();
    let c = batch[0].dense().unwrap();
    assert_eq!(c.dims(), [2, 2]);
    assert_eq!(
        c.as_slice::<Complex32>().unwrap(),
        [
            Complex32::new(1.0, 2.0),
            Complex32::new(0.0, 0.0),
            Complex32::new(3.0, 4.0),
            Complex32::new(3.0, 4.0),
        ]
    );
    let b = batch[1].dense().unwrap();
    assert_eq!(
        b.as_slice::<bf16>().unwrap(),
        [bf16::ONE, bf16::ONE, bf16::ZERO, bf16::ZERO]
    );
}

#[test]
fn cast_of_a_float_outside_an_integer_range_as_tensorflow_on_x86() {
    // A C++ float-to-integer conversion out of range, as TensorFlow gives
    // it on x86-64 (observed with TensorFlow 2.21): the lowest integer for
    // NaN and out-of-range values; into narrower types, values converted
    // in a vector saturate, the last ones that fill no vector wrap.
    let halves = |xs: &[f32]| {
        Tensor::vector(xs.iter().map(|&x| f16::from_f32(x)).collect())
    };
    let four = halves(&[300.0, -3.9, 2.5, f32::NAN]);
    assert_eq!(
        four.cast(DType::U8).unwrap().as_slice::<u8>().unwrap(),
        [44, 253, 2, 0]
    );
    let mut seventeen = vec![300.0, -3.9, 2.5, f32::NAN];
    seventeen.resize(17, 300.0);
    let got = halves(&seventeen).cast(DType::U8).unwrap();
    let got = got.as_slice::<u8>().unwrap();
    assert_eq!(&got[..4], [255, 0, 2, 0]);
    assert_eq!(got[16], 44, "the 17th value fills no vector of 16");
    let f = Tensor::vector(vec![1e10f32, -1e10, f32::INFINITY]);
    assert_eq!(
        f.cast(DType::I32).unwrap().as_slice::<i32>().unwrap(),
        [i32::MIN, i32::MIN, i32::MIN]
    );
    assert_eq!(
        f.cast(DType::I64).unwrap().as_slice::<i64>().unwrap(),
        [10_000_000_000, -10_000_000_000, i64::MIN]
    );
}
