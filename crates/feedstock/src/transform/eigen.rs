//! The order in which TensorFlow's CPU kernels combine the elements of a
//! float sum or product, so that `reduce_sum`, `reduce_mean`,
//! `reduce_prod` and `per_image_standardization` give TensorFlow's bits.
//!
//! Float addition is not associative: the same numbers summed in another
//! order differ in the last bits. TensorFlow reduces with Eigen's tensor
//! reducers, whose order depends on the shape, on which axes are reduced
//! and, for a long enough full reduction, on how many threads its pool
//! has. Written by hand because no crate reproduces Eigen's order; every
//! step below was checked bit for bit against TensorFlow 2.21 (x86-64
//! build, AVX packets of 8 `f32` or 4 `f64`):
//!
//! 1. The shape is simplified as TensorFlow's `ReductionHelper` does:
//!    leading dimensions of 1 dropped, a dimension of 1 joined to the run
//!    before it, adjacent dimensions alike (reduced or kept) merged.
//! 2. Everything reduced (one merged dimension): Eigen's full reducer,
//!    split in equal blocks over the thread pool when its cost model says
//!    so (above ~108 k `f32`), each block in packet order.
//! 3. Kept then reduced `[K, R]`: each output is its run of `R` in packet
//!    order.
//! 4. Reduced then kept `[R, K]`, or kept-reduced-kept `[K1, R, K2]`: the
//!    outputs Eigen computes as whole packets (8 outputs in one row of
//!    `K2`) add along `R` with four accumulators when `R >= 16`; the others
//!    add in order.
//! 5. Reduced-kept-reduced `[R1, K, R2]`: in order, `R1` fastest.
//! 6. More: transposed so the reduced axes are innermost, then as 3.
//!
//! "Packet order" is Eigen's `InnerMostDimReducer`: sums longer than
//! `1024` packets are split in two at a packet boundary and the halves
//! summed (a product is not split); below that, four packet accumulators
//! over runs of four packets, folded in order, then the remaining whole
//! packets into the first, the tail one by one into a scalar, and the
//! packet's lanes folded in halves into it.

use std::sync::OnceLock;

/// A float type as Eigen's packets hold it.
pub trait EigenFloat: num_traits::Float {
    /// Lanes of a packet in TensorFlow's x86-64 build (AVX, 256 bits).
    const LANES: usize;
}

impl EigenFloat for f32 {
    const LANES: usize = 8;
}

impl EigenFloat for f64 {
    const LANES: usize = 4;
}

/// The most lanes any [`EigenFloat`] has.
const MAX_LANES: usize = 8;

/// Which combination is reduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// A sum (also the first step of a mean).
    Sum,
    /// A product.
    Prod,
}

/// A combination as a type, so that each loop below is compiled for it
/// (a runtime choice inside the loops keeps them from vectorizing).
trait Op {
    /// Whether Eigen splits long runs in halves (its tree reduction): for
    /// sums, not for products.
    const TREE: bool;
    fn identity<T: EigenFloat>() -> T;
    fn apply<T: EigenFloat>(a: T, b: T) -> T;
}

struct Add;
struct Mul;

impl Op for Add {
    const TREE: bool = true;
    fn identity<T: EigenFloat>() -> T {
        T::zero()
    }
    fn apply<T: EigenFloat>(a: T, b: T) -> T {
        a + b
    }
}

impl Op for Mul {
    const TREE: bool = false;
    fn identity<T: EigenFloat>() -> T {
        T::one()
    }
    fn apply<T: EigenFloat>(a: T, b: T) -> T {
        a * b
    }
}

/// `xs` (of shape `dims`) reduced over the axes marked in `axes`, one
/// value per kept position in row-major order, in TensorFlow's order.
pub fn reduce<T: EigenFloat>(
    xs: &[T],
    dims: &[usize],
    axes: &[bool],
    how: Combine,
) -> Vec<T> {
    match how {
        Combine::Sum => reduce_by::<T, Add>(xs, dims, axes),
        Combine::Prod => reduce_by::<T, Mul>(xs, dims, axes),
    }
}

fn reduce_by<T: EigenFloat, O: Op>(
    xs: &[T],
    dims: &[usize],
    axes: &[bool],
) -> Vec<T> {
    let n_out = kept_count(dims, axes);
    if xs.is_empty() || n_out == 0 {
        return vec![O::identity(); n_out];
    }
    let (shape, reduce_first) = simplify(dims, axes);
    match (shape.as_slice(), reduce_first) {
        (&[_], true) => vec![full::<T, O>(xs, pool_threads())],
        (&[_], false) => xs.to_vec(),
        (&[_, r], false) => runs::<T, O>(xs, r),
        (&[r, k], true) => preserving::<T, O>(xs, 1, r, k),
        (&[k1, r, k2], false) => preserving::<T, O>(xs, k1, r, k2),
        (&[r1, k, r2], true) => (0..k)
            .map(|j| {
                let mut acc = O::identity();
                for c in 0..r2 {
                    for a in 0..r1 {
                        acc = O::apply(acc, xs[(a * k + j) * r2 + c]);
                    }
                }
                acc
            })
            .collect(),
        _ => {
            let (moved, r) = reduced_innermost(xs, &shape, reduce_first);
            runs::<T, O>(&moved, r)
        }
    }
}

/// The sum TensorFlow's reduction over an image's axes (the last ones,
/// `run` values each) computes for image `index` of `images`: a single
/// image is a full reduction, several are runs of an inner reduction (of
/// one value each, not reduced at all).
pub fn image_sum<T: EigenFloat>(run: &[T], index: usize, images: usize) -> T {
    match run {
        _ if images == 1 => full::<T, Add>(run, pool_threads()),
        [one] => *one,
        _ => inner::<T, Add>(run, index * run.len()),
    }
}

/// TensorFlow's `ReductionHelper::Simplify`: the merged dimensions and
/// whether the first of them is reduced (the merged ones alternate).
fn simplify(dims: &[usize], axes: &[bool]) -> (Vec<usize>, bool) {
    let Some(start) = dims.iter().position(|&d| d != 1) else {
        return (vec![1], true);
    };
    let first = axes[start];
    let mut shape = vec![dims[start]];
    let mut prev = first;
    for (&d, &r) in dims.iter().zip(axes).skip(start + 1) {
        // A dimension of 1 joins the run before it.
        let r = if d == 1 { prev } else { r };
        if r == prev {
            *shape.last_mut().expect("one dimension pushed") *= d;
        } else {
            shape.push(d);
        }
        prev = r;
    }
    (shape, first)
}

/// The merged dimensions transposed so that the reduced ones come last
/// (each group in its order), and the number of values per output.
fn reduced_innermost<T: Copy>(
    xs: &[T],
    shape: &[usize],
    reduce_first: bool,
) -> (Vec<T>, usize) {
    let reduced = |d: usize| d.is_multiple_of(2) == reduce_first;
    let order: Vec<usize> = (0..shape.len())
        .filter(|&d| !reduced(d))
        .chain((0..shape.len()).filter(|&d| reduced(d)))
        .collect();
    let r: usize = (0..shape.len())
        .filter(|&d| reduced(d))
        .map(|d| shape[d])
        .product();
    let mut strides = vec![1usize; shape.len()];
    for d in (0..shape.len() - 1).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let mut index = vec![0usize; shape.len()];
    let mut out = Vec::with_capacity(xs.len());
    for _ in 0..xs.len() {
        let at: usize = order.iter().map(|&d| index[d] * strides[d]).sum();
        out.push(xs[at]);
        for &d in order.iter().rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    (out, r)
}

/// Each run of `r` values reduced on its own (kept then reduced).
fn runs<T: EigenFloat, O: Op>(xs: &[T], r: usize) -> Vec<T> {
    xs.chunks(r)
        .enumerate()
        .map(|(o, run)| inner::<T, O>(run, o * r))
        .collect()
}

/// `[k1, r, k2]` reduced over `r` (Eigen's "preserving inner dims").
fn preserving<T: EigenFloat, O: Op>(
    xs: &[T],
    k1: usize,
    r: usize,
    k2: usize,
) -> Vec<T> {
    let lanes = T::LANES;
    let n_out = k1 * k2;
    // The outputs evaluated as whole packets: those before the last
    // partial packet whose packet stays within one row of `k2`.
    let vectorized = n_out / lanes * lanes;
    (0..n_out)
        .map(|i| {
            let (a, c) = (i / k2, i % k2);
            let col = (0..r).map(|j| xs[(a * r + j) * k2 + c]);
            let packet =
                i < vectorized && (i / lanes * lanes) % k2 + lanes <= k2;
            if packet && r >= 16 {
                four_accumulators::<T, O>(col, r)
            } else {
                col.fold(O::identity(), |acc, x| O::apply(acc, x))
            }
        })
        .collect()
}

/// `r` values added with four accumulators taking every fourth one,
/// folded in order, then the rest into the first.
fn four_accumulators<T: EigenFloat, O: Op>(
    col: impl Iterator<Item = T>,
    r: usize,
) -> T {
    let whole = r / 4 * 4;
    let mut acc = [O::identity(); 4];
    let mut col = col.enumerate();
    for (j, x) in col.by_ref().take(whole) {
        acc[j % 4] = O::apply(acc[j % 4], x);
    }
    let folded = acc[1..].iter().fold(acc[0], |f, &a| O::apply(f, a));
    col.fold(folded, |f, (_, x)| O::apply(f, x))
}

/// The size of TensorFlow's intra-op thread pool by default: one thread
/// per CPU this process may run on.
fn pool_threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    })
}

/// How many blocks Eigen's full reducer splits `n` values into, from its
/// cost model: per value, the bytes loaded at 11/64 cycles a byte plus
/// a reducer's default cost of 10 cycles per packet; one more thread per
/// 100 000 cycles past the first 100 000, rounded up from 0.1.
fn full_threads<T>(n: usize, lanes: usize, max: usize) -> usize {
    let per_value =
        std::mem::size_of::<T>() as f64 * 11.0 / 64.0 + 10.0 / lanes as f64;
    let threads = (n as f64 * per_value - 100_000.0) / 100_000.0 + 0.9;
    (threads as usize).clamp(1, max.max(1))
}

/// Every value reduced, as Eigen's full reducer on a pool of `threads`.
fn full<T: EigenFloat, O: Op>(xs: &[T], threads: usize) -> T {
    let n = xs.len();
    let threads = full_threads::<T>(n, T::LANES, threads);
    if threads == 1 {
        return inner::<T, O>(xs, 0);
    }
    let block = n / threads;
    let blocks = n / block;
    let mut acc = if blocks * block < n {
        inner::<T, O>(&xs[blocks * block..], blocks * block)
    } else {
        O::identity()
    };
    for b in 0..blocks {
        let shard = inner::<T, O>(&xs[b * block..(b + 1) * block], b * block);
        acc = O::apply(acc, shard);
    }
    acc
}

/// Eigen's `InnerMostDimReducer` over `xs`, which starts at index `first`
/// of the whole tensor (halves are split at packets of the whole tensor).
fn inner<T: EigenFloat, O: Op>(xs: &[T], first: usize) -> T {
    const LEAF: usize = 1024;
    let lanes = T::LANES;
    let n = xs.len();
    if O::TREE && n > lanes * LEAF {
        let split = lanes * (first + n.div_ceil(2)).div_ceil(lanes);
        let left = (split - first).min(n);
        let mut acc =
            O::apply(O::identity(), inner::<T, O>(&xs[..left], first));
        if left < n {
            acc = O::apply(acc, inner::<T, O>(&xs[left..], split));
        }
        return acc;
    }
    leaf::<T, O>(xs)
}

/// One run in packet order (see the module's documentation).
fn leaf<T: EigenFloat, O: Op>(xs: &[T]) -> T {
    let lanes = T::LANES;
    let n = xs.len();
    let id = O::identity();
    let lane_add = |p: &mut [T; MAX_LANES], chunk: &[T]| {
        for (a, &x) in p.iter_mut().zip(chunk) {
            *a = O::apply(*a, x);
        }
    };
    let mut p0 = [id; MAX_LANES];
    let mut start = 0;
    if n >= 4 * lanes {
        let quads = n / (4 * lanes) * 4 * lanes;
        let mut acc = [[id; MAX_LANES]; 4];
        for quad in xs[..quads].chunks_exact(4 * lanes) {
            for (p, chunk) in acc.iter_mut().zip(quad.chunks_exact(lanes)) {
                lane_add(p, chunk);
            }
        }
        p0 = acc[0];
        for p in &acc[1..] {
            lane_add(&mut p0, &p[..lanes]);
        }
        start = quads;
    }
    let whole = n / lanes * lanes;
    for chunk in xs[start..whole].chunks_exact(lanes) {
        lane_add(&mut p0, chunk);
    }
    let tail = xs[whole..].iter().fold(id, |acc, &x| O::apply(acc, x));
    let mut width = lanes;
    while width > 1 {
        width /= 2;
        for i in 0..width {
            p0[i] = O::apply(p0[i], p0[i + width]);
        }
    }
    O::apply(tail, p0[0])
}

/// How many values a reduction of `dims` over the axes marked in `axes`
/// gives: the product of the kept dimensions.
pub fn kept_count(dims: &[usize], axes: &[bool]) -> usize {
    dims.iter()
        .zip(axes)
        .filter(|(_, &r)| !r)
        .map(|(d, _)| d)
        .product()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of all magnitudes, so that orders give different sums.
    fn ramp(n: usize) -> Vec<f32> {
        (0..n)
            .map(|k| ((k * 7919) % 1000) as f32 * 0.0137 - 3.1)
            .collect()
    }

    #[test]
    fn shapes_simplify_as_tensorflows_helper() {
        let s = |dims: &[usize], axes: &[bool]| simplify(dims, axes);
        assert_eq!(
            s(&[2, 1, 3, 1, 5], &[false, true, false, false, true]),
            (vec![6, 5], false)
        );
        assert_eq!(
            s(&[1, 1, 4, 5], &[false, false, true, true]),
            (vec![20], true)
        );
        assert_eq!(s(&[1, 1], &[true, false]), (vec![1], true));
        assert_eq!(
            s(&[3, 4, 5, 6], &[true, false, true, false]),
            (vec![3, 4, 5, 6], true)
        );
    }

    #[test]
    fn full_reducer_blocks_follow_eigens_cost_model() {
        // Measured: TensorFlow switches to two blocks between 108 386 and
        // 108 388 `f32` values, and between 54 190 and 54 196 `f64`.
        assert_eq!(full_threads::<f32>(108_387, 8, 2), 1);
        assert_eq!(full_threads::<f32>(108_388, 8, 2), 2);
        assert_eq!(full_threads::<f64>(54_193, 4, 2), 1);
        assert_eq!(full_threads::<f64>(54_194, 4, 2), 2);
        assert_eq!(full_threads::<f32>(10_000_000, 8, 2), 2);
        assert_eq!(full_threads::<f32>(10_000_000, 8, 0), 1);
        // Blocks: a remainder is reduced first, then each block added.
        let xs = ramp(300_001);
        let two = full::<f32, Add>(&xs, 2);
        let by_hand = [(300_000, 300_001), (0, 150_000), (150_000, 300_000)]
            .iter()
            .fold(0f32, |acc, &(a, b)| acc + inner::<f32, Add>(&xs[a..b], a));
        assert_eq!(two.to_bits(), by_hand.to_bits());
    }

    #[test]
    fn packet_order_of_a_run() {
        // 33 values: four accumulators over 32 folded in order, then the
        // lanes halved, the one tail value first.
        let xs: Vec<f32> = (0..33).map(|k| 1.0 + k as f32 * 1e-7).collect();
        let mut acc = [[0f32; 8]; 4];
        for (i, x) in xs[..32].iter().enumerate() {
            acc[i / 8 % 4][i % 8] += x;
        }
        let mut p: Vec<f32> = (0..8)
            .map(|l| ((acc[0][l] + acc[1][l]) + acc[2][l]) + acc[3][l])
            .collect();
        for w in [4, 2, 1] {
            for i in 0..w {
                p[i] += p[i + w];
            }
        }
        assert_eq!(leaf::<f32, Add>(&xs).to_bits(), (xs[32] + p[0]).to_bits());
        // A zero's sign: Eigen adds the (positive) identity, so -0 sums to +0.
        assert_eq!(leaf::<f32, Add>(&[-0.0f32]).to_bits(), 0);
    }

    #[test]
    fn outputs_as_packets_use_four_accumulators() {
        // [16, 9] over axis 0: outputs 0..8 form a packet within the row
        // (four accumulators); output 8 is evaluated alone, in order.
        let xs = ramp(16 * 9);
        let got = reduce(&xs, &[16, 9], &[true, false], Combine::Sum);
        let xs = &xs;
        let col = |c: usize| (0..16).map(move |j| xs[j * 9 + c]);
        assert_eq!(
            got[0].to_bits(),
            four_accumulators::<f32, Add>(col(0), 16).to_bits()
        );
        let seq = col(8).fold(0f32, |a, x| a + x);
        assert_eq!(got[8].to_bits(), seq.to_bits());
        assert_ne!(
            four_accumulators::<f32, Add>(col(8), 16).to_bits(),
            seq.to_bits()
        );
    }

    #[test]
    fn many_axes_reduce_the_transposed_runs() {
        let xs: Vec<f64> = (0..120).map(|k| k as f64 * 0.1).collect();
        // [2, 3, 4, 5] over axes 1 and 3: runs of 15 per (a, c).
        let got = reduce(
            &xs,
            &[2, 3, 4, 5],
            &[false, true, false, true],
            Combine::Sum,
        );
        assert_eq!(got.len(), 8);
        let want: f64 = (0..3)
            .flat_map(|b| (0..5).map(move |d| ((b * 4) * 5 + d) as f64 * 0.1))
            .sum();
        assert!((got[0] - want).abs() < 1e-9);
    }
}
