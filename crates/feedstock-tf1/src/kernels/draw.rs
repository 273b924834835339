//! `tf.image.draw_bounding_boxes` as TensorFlow's `DrawBoundingBoxes`
//! (`V2`) CPU kernel draws them
//! (`core/kernels/image/draw_bounding_box_op.cc`): one-pixel outlines in
//! the colour table's colours, with its rounding and edge rules.

use feedstock::error::{Error, Result};
use feedstock::tensor::{f16, DType, Tensor};

/// TensorFlow's `DefaultColorTable`: yellow, blue, red, lime, purple,
/// olive, maroon, navy, aqua, fuchsia (RGBA); for one channel, every
/// colour's first component is 1.
fn default_colors(depth: usize) -> Vec<Vec<f32>> {
    let table: [[f32; 4]; 10] = [
        [1.0, 1.0, 0.0, 1.0],
        [0.0, 0.0, 1.0, 1.0],
        [1.0, 0.0, 0.0, 1.0],
        [0.0, 1.0, 0.0, 1.0],
        [0.5, 0.0, 0.5, 1.0],
        [0.5, 0.5, 0.0, 1.0],
        [0.5, 0.0, 0.0, 1.0],
        [0.0, 0.0, 0.5, 1.0],
        [0.0, 1.0, 1.0, 1.0],
        [1.0, 0.0, 1.0, 1.0],
    ];
    table
        .iter()
        .map(|c| {
            let mut c = c[..depth].to_vec();
            if depth == 1 {
                c[0] = 1.0;
            }
            c
        })
        .collect()
}

/// A box coordinate times `size - 1` in `float32`, truncated to an
/// integer as C++'s conversion does on x86-64 (NaN and values out of
/// range give `i64::MIN`).
fn edge(coord: f32, size: usize) -> i64 {
    let v = coord * (size as i64 - 1) as f32;
    if !(-9.223_372e18..9.223_372e18).contains(&v) {
        i64::MIN
    } else {
        v as i64
    }
}

/// The colour table: `colors` (a `float32` matrix with at least `depth`
/// columns, its first `depth` used) or, when absent or empty, the
/// default one.
fn color_table(
    colors: Option<&Tensor>,
    depth: usize,
) -> Result<Vec<Vec<f32>>> {
    let Some(c) = colors else {
        return Ok(default_colors(depth));
    };
    if c.rank() != 2 {
        return Err(Error::invalid_argument(format!(
            "colors must be a 2-D matrix{}",
            c.shape()
        )));
    }
    let cols = c.dims()[1];
    if cols < depth {
        return Err(Error::invalid_argument(format!(
            "colors must have equal or more channels than the image \
             provided: {}",
            c.shape()
        )));
    }
    if c.num_elements() == 0 {
        return Ok(default_colors(depth));
    }
    let v = c.as_slice::<f32>()?;
    Ok(v.chunks_exact(cols).map(|r| r[..depth].to_vec()).collect())
}

/// `images` (`float32` or `float16`, `[batch, height, width, depth]`
/// with a depth of 1, 3 or 4) with the outline of each box of `boxes`
/// (`float32` `[batch, n, 4]`: `ymin, xmin, ymax, xmax` in `[0, 1]`)
/// drawn over them, box `k` in colour `k mod` the table's length. As
/// TensorFlow, an inverted box or one wholly outside is skipped, and an
/// edge outside the image is not drawn.
///
/// # Errors
/// InvalidArgument with TensorFlow's messages for ranks, a batch
/// mismatch, a depth or box size it refuses, or bad `colors`.
pub fn draw_bounding_boxes(
    images: &Tensor,
    boxes: &Tensor,
    colors: Option<&Tensor>,
) -> Result<Tensor> {
    if images.rank() != 4 {
        return Err(Error::invalid_argument(
            "The rank of the images should be 4",
        ));
    }
    if boxes.rank() != 3 {
        return Err(Error::invalid_argument(
            "The rank of the boxes tensor should be 3",
        ));
    }
    let (d, bd) = (images.dims(), boxes.dims());
    if d[0] != bd[0] {
        return Err(Error::invalid_argument(
            "The batch sizes should be the same",
        ));
    }
    let (batch, height, width, depth) = (d[0], d[1], d[2], d[3]);
    if !matches!(depth, 1 | 3 | 4) {
        return Err(Error::invalid_argument(
            "Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)",
        ));
    }
    if bd[2] != 4 {
        return Err(Error::invalid_argument(format!(
            "The size of the third dimension of the box must be 4. \
             Received: {}",
            bd[2]
        )));
    }
    let table = color_table(colors, depth)?;
    let boxes = boxes.as_slice::<f32>()?;
    let mut strokes = Vec::new();
    let n = bd[1];
    for b in 0..batch {
        for k in 0..n {
            let bx = &boxes[(b * n + k) * 4..(b * n + k + 1) * 4];
            let (top, bottom) = (edge(bx[0], height), edge(bx[2], height));
            let (left, right) = (edge(bx[1], width), edge(bx[3], width));
            let (h, w) = (height as i64, width as i64);
            if top > bottom || left > right {
                continue;
            }
            if top >= h || bottom < 0 || left >= w || right < 0 {
                continue;
            }
            let (r0, r1) = (top.max(0), bottom.min(h - 1));
            let (c0, c1) = (left.max(0), right.min(w - 1));
            let color = k % table.len();
            let mut at = |y: i64, x: i64| {
                let p =
                    ((b * height + y as usize) * width + x as usize) * depth;
                strokes.push((p, color));
            };
            if top >= 0 {
                (c0..=c1).for_each(|x| at(top, x));
            }
            if bottom < h {
                (c0..=c1).for_each(|x| at(bottom, x));
            }
            if left >= 0 {
                (r0..=r1).for_each(|y| at(y, left));
            }
            if right < w {
                (r0..=r1).for_each(|y| at(y, right));
            }
        }
    }
    match images.dtype() {
        DType::F32 => paint(images, &strokes, &table, |v| v),
        DType::F16 => paint(images, &strokes, &table, f16::from_f32),
        dt => Err(Error::invalid_dtype(format!(
            "draw_bounding_boxes: images must be float32 or float16, not {dt}"
        ))),
    }
}

/// A copy of `images` with each stroke's pixel set to its colour.
fn paint<T: feedstock::tensor::Element + Copy>(
    images: &Tensor,
    strokes: &[(usize, usize)],
    table: &[Vec<f32>],
    conv: impl Fn(f32) -> T,
) -> Result<Tensor> {
    let mut out = images.as_slice::<T>()?.to_vec();
    for &(p, color) in strokes {
        for (o, &c) in
            out[p..p + table[color].len()].iter_mut().zip(&table[color])
        {
            *o = conv(c);
        }
    }
    Tensor::new(images.dims().to_vec(), out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_an_outline_in_the_first_colour() {
        let img = Tensor::new([1, 4, 5, 1], vec![0.0f32; 20]).unwrap();
        let boxes =
            Tensor::new([1, 1, 4], vec![0.0f32, 0.25, 1.0, 0.75]).unwrap();
        let r = draw_bounding_boxes(&img, &boxes, None).unwrap();
        // Rows 0..3, columns 1..3 (0.25 × 4 = 1, 0.75 × 4 = 3).
        let v = r.as_slice::<f32>().unwrap();
        let row = |y: usize| v[y * 5..y * 5 + 5].to_vec();
        assert_eq!(row(0), [0.0, 1.0, 1.0, 1.0, 0.0]);
        assert_eq!(row(1), [0.0, 1.0, 0.0, 1.0, 0.0]);
        assert_eq!(row(3), [0.0, 1.0, 1.0, 1.0, 0.0]);
        let bad = Tensor::new([1, 1, 3], vec![0.0f32; 3]).unwrap();
        assert!(draw_bounding_boxes(&img, &bad, None).is_err());
    }

    #[test]
    fn an_inverted_or_outside_box_is_skipped() {
        let img = Tensor::new([1, 3, 3, 3], vec![0.5f32; 27]).unwrap();
        let boxes = Tensor::new(
            [1, 2, 4],
            vec![0.9f32, 0.0, 0.1, 1.0, 2.0, 0.0, 3.0, 1.0],
        )
        .unwrap();
        let r = draw_bounding_boxes(&img, &boxes, None).unwrap();
        assert_eq!(r.as_slice::<f32>().unwrap(), &[0.5; 27]);
    }
}
