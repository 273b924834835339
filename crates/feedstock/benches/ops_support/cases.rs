// The workloads of benches/ops.rs, shared with benches/ops_mimalloc.rs.

use bytes::Bytes;
use criterion::{
    black_box, criterion_group, criterion_main, Criterion, Throughput,
};
use feedstock::decode::fixed_image::FixedImageDecoder;
use feedstock::transform::{
    crop_to_bounding_box, per_image_standardization, slice, transpose,
};
use feedstock::decode::raw::{decode_raw, decode_raw_batch, ByteOrder};
use feedstock::{DType, Tensor};

const N: usize = 1024;
const C: usize = 3;
const H: usize = 32;
const W: usize = 32;
const RECORD: usize = 1 + C * H * W;

/// Row-major strides of `dims`.
fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * dims[k + 1];
    }
    s
}

/// The baseline: every output element's source offset, then a gather.
fn gather(
    src: &[u8],
    out_dims: &[usize],
    st: &[usize],
    base: usize,
) -> Vec<u8> {
    let total: usize = out_dims.iter().product();
    let mut idx = Vec::with_capacity(total);
    let rank = out_dims.len();
    let mut index = vec![0usize; rank];
    let mut pos = base;
    for _ in 0..total {
        idx.push(pos);
        for k in (0..rank).rev() {
            index[k] += 1;
            pos += st[k];
            if index[k] < out_dims[k] {
                break;
            }
            pos -= st[k] * out_dims[k];
            index[k] = 0;
        }
    }
    idx.iter().map(|&i| src[i]).collect()
}

fn bench_ops(c: &mut Criterion) {
    let bytes: Vec<u8> =
        (0..N * RECORD).map(|i| (i * 7 % 251) as u8).collect();
    let records = Tensor::new([N, RECORD], bytes.clone()).unwrap();
    let chw =
        Tensor::new([N, C, H, W], bytes[..N * C * H * W].to_vec()).unwrap();
    let hwc =
        Tensor::new([N, H, W, C], bytes[..N * C * H * W].to_vec()).unwrap();
    let one = chw.index(0).unwrap();

    let mut g = c.benchmark_group("ops");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("transpose_batch_chw_to_hwc/strided", |b| {
        b.iter(|| transpose(black_box(&chw), &[0, 2, 3, 1]).unwrap())
    });
    g.bench_function("transpose_batch_chw_to_hwc/index_vector", |b| {
        let st = strides(&[N, C, H, W]);
        let ost = [st[0], st[2], st[3], st[1]];
        let src = chw.as_slice::<u8>().unwrap();
        b.iter(|| gather(black_box(src), &[N, H, W, C], &ost, 0))
    });
    g.bench_function("slice_batch_image/strided", |b| {
        b.iter(|| {
            slice(black_box(&records), &[0, 1], &[N, C * H * W]).unwrap()
        })
    });
    g.bench_function("slice_batch_image/index_vector", |b| {
        let src = records.as_slice::<u8>().unwrap();
        let st = strides(&[N, RECORD]);
        b.iter(|| gather(black_box(src), &[N, C * H * W], &st, 1))
    });
    g.bench_function("crop_batch_24x24/strided", |b| {
        b.iter(|| crop_to_bounding_box(black_box(&hwc), 4, 4, 24, 24).unwrap())
    });
    g.bench_function("crop_batch_24x24/index_vector", |b| {
        let src = hwc.as_slice::<u8>().unwrap();
        let st = strides(&[N, H, W, C]);
        let base = 4 * st[1] + 4 * st[2];
        b.iter(|| gather(black_box(src), &[N, 24, 24, C], &st, base))
    });
    g.bench_function("transpose_per_image_x1024/strided", |b| {
        b.iter(|| {
            for _ in 0..N {
                black_box(transpose(black_box(&one), &[1, 2, 0]).unwrap());
            }
        })
    });
    g.finish();
}

/// CIFAR-10's record path (label and image off a 3073-byte record, image
/// to `[32, 32, 3]`), 1024 records, one at a time and as a batch, with
/// the generic ops (TensorFlow's five steps) and with the
/// `FixedImageDecoder` that does them in one pass.
fn bench_cifar(c: &mut Criterion) {
    let records: Vec<Bytes> = (0..N)
        .map(|r| (0..RECORD).map(|i| (r * 31 + i * 7) as u8).collect())
        .collect();
    let le = ByteOrder::LittleEndian;
    let dec = FixedImageDecoder::cifar10();
    let mut g = c.benchmark_group("cifar");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("generic_ops/per_record", |b| {
        b.iter(|| {
            for r in &records {
                let raw = decode_raw(r, DType::U8, le).unwrap();
                let label = slice(&raw, &[0], &[1]).unwrap();
                let label = label.cast(DType::I32).unwrap();
                let image = slice(&raw, &[1], &[C * H * W]).unwrap();
                let image = image.reshape([C, H, W]).unwrap();
                let image = transpose(&image, &[1, 2, 0]).unwrap();
                black_box((label, image));
            }
        })
    });
    g.bench_function("generic_ops/batched", |b| {
        b.iter(|| {
            let raw = decode_raw_batch(&records, DType::U8, le).unwrap();
            let label = slice(&raw, &[0, 0], &[N, 1]).unwrap();
            let label = label.cast(DType::I32).unwrap().reshape([N]).unwrap();
            let image = slice(&raw, &[0, 1], &[N, C * H * W]).unwrap();
            let image = image.reshape([N, C, H, W]).unwrap();
            let image = transpose(&image, &[0, 2, 3, 1]).unwrap();
            black_box((label, image))
        })
    });
    g.bench_function("fixed_image/per_record", |b| {
        b.iter(|| {
            for r in &records {
                black_box(dec.decode(r).unwrap());
            }
        })
    });
    g.bench_function("fixed_image/batched", |b| {
        b.iter(|| {
            black_box(dec.decode_batch(&records).unwrap())
        })
    });
    g.finish();
}

/// `per_image_standardization` of 1024 cropped CIFAR images (24 × 24 × 3
/// `f32`), one at a time and as one batch: two float sums per image in
/// TensorFlow's order.
fn bench_standardize(c: &mut Criterion) {
    let dims = [24, 24, 3];
    let one: usize = dims.iter().product();
    let values: Vec<f32> =
        (0..N * one).map(|i| ((i * 37) % 256) as f32).collect();
    let images: Vec<Tensor> = values
        .chunks(one)
        .map(|v| Tensor::new(dims.to_vec(), v.to_vec()).unwrap())
        .collect();
    let batch = Tensor::new(vec![N, 24, 24, 3], values).unwrap();
    let mut g = c.benchmark_group("standardize");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("per_image", |b| {
        b.iter(|| {
            for image in &images {
                black_box(per_image_standardization(image).unwrap());
            }
        })
    });
    g.bench_function("batch", |b| {
        b.iter(|| black_box(per_image_standardization(&batch).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, bench_ops, bench_cifar, bench_standardize);
criterion_main!(benches);
