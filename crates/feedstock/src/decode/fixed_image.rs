//! Fixed-length image records: a label and an image of known shape in
//! every record, as in CIFAR-10's and CIFAR-100's binary files.
//!
//! TensorFlow's CIFAR-10 input code decodes such a record in five steps
//! (`decode_raw`, slice off the label, slice off the image, reshape to
//! `[depth, height, width]`, transpose to `[height, width, depth]`).
//! [`FixedImageDecoder`] does the same in one pass over the bytes,
//! writing labels and pixels straight into their output tensors, for one
//! record or for a whole batch from [`Reader::read_up_to`] or
//! [`Reader::read_batch`].
//!
//! ```
//! use bytes::Bytes;
//! use feedstock::decode::fixed_image::{FixedImageDecoder, Layout};
//!
//! // A tiny 2x2 RGB image, stored plane by plane after a label byte 7.
//! let record =
//!     Bytes::from_static(&[7, 1, 2, 3, 4, 11, 12, 13, 14, 21, 22, 23, 24]);
//! let decoder = FixedImageDecoder::new(1, 2, 2, 3);
//! assert_eq!(decoder.record_bytes(), record.len());
//!
//! let one = decoder.decode(&record)?;
//! assert_eq!(one.labels.scalar_value::<i32>()?, 7);
//! assert_eq!(one.images.dims(), &[2, 2, 3]);
//! assert_eq!(one.images.as_slice::<u8>()?[..6], [1, 11, 21, 2, 12, 22]);
//!
//! // A batch: labels [n], images [n, height, width, depth].
//! let batch = decoder.decode_batch(&[record.clone(), record.clone()])?;
//! assert_eq!(batch.labels.as_slice::<i32>()?, &[7, 7]);
//! assert_eq!(batch.images.dims(), &[2, 2, 2, 3]);
//!
//! // Keep the stored layout instead: [n, depth, height, width].
//! let chw = decoder.output(Layout::Chw);
//! let batch = chw.decode_batch(&[record])?;
//! assert_eq!(batch.images.dims(), &[1, 3, 2, 2]);
//! # Ok::<(), feedstock::Error>(())
//! ```
//!
//! [`Reader::read_up_to`]: crate::reader::Reader::read_up_to
//! [`Reader::read_batch`]: crate::reader::Reader::read_batch

use bytes::Bytes;

use crate::decode::Records;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use crate::transform;

/// The order of an image's axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Layout {
    /// `[height, width, depth]`: the pixels of a row one after another,
    /// each with its channels together. What TensorFlow's image ops take.
    Hwc,
    /// `[depth, height, width]`: one plane per channel (all red, then all
    /// green, then all blue). How CIFAR files store their images.
    Chw,
}

/// Decodes records of a fixed length holding `label_bytes` label bytes
/// followed by an image of `height` × `width` × `depth` bytes.
///
/// Labels come out as `int32`, as CIFAR-10's input code casts them: a
/// `[n]` tensor for one label byte (a scalar for one record), or
/// `[n, label_bytes]` for several (`[label_bytes]` for one record; in
/// CIFAR-100 the coarse label comes first, then the fine one). Images
/// come out as `uint8` in the [output layout](FixedImageDecoder::output)
/// (default [`Layout::Hwc`]), with a leading batch axis for a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedImageDecoder {
    /// Bytes of label before the image.
    label_bytes: usize,
    /// Image height in pixels.
    height: usize,
    /// Image width in pixels.
    width: usize,
    /// Channels per pixel.
    depth: usize,
    /// How the record stores the image.
    stored: Layout,
    /// How the decoded image is laid out.
    output: Layout,
}

/// Labels and images decoded from fixed-length records.
#[derive(Debug, Clone, PartialEq)]
pub struct LabeledImages {
    /// The labels, `int32`: `[n]` or `[n, label_bytes]` for a batch.
    pub labels: Tensor,
    /// The images, `uint8`: `[n, ..image shape]` for a batch.
    pub images: Tensor,
}

impl FixedImageDecoder {
    /// A decoder of records of `label_bytes` label bytes and a
    /// `depth`-plane image stored [`Layout::Chw`] (as CIFAR files do),
    /// decoded to [`Layout::Hwc`].
    pub fn new(
        label_bytes: usize,
        height: usize,
        width: usize,
        depth: usize,
    ) -> FixedImageDecoder {
        FixedImageDecoder {
            label_bytes,
            height,
            width,
            depth,
            stored: Layout::Chw,
            output: Layout::Hwc,
        }
    }

    /// CIFAR-10's records: one label byte, a 32×32×3 image (3073 bytes).
    pub fn cifar10() -> FixedImageDecoder {
        FixedImageDecoder::new(1, 32, 32, 3)
    }

    /// CIFAR-100's records: a coarse and a fine label byte, a 32×32×3
    /// image (3074 bytes).
    pub fn cifar100() -> FixedImageDecoder {
        FixedImageDecoder::new(2, 32, 32, 3)
    }

    /// This decoder for records that store their image in `layout`.
    pub fn stored(mut self, layout: Layout) -> FixedImageDecoder {
        self.stored = layout;
        self
    }

    /// This decoder producing images in `layout`.
    pub fn output(mut self, layout: Layout) -> FixedImageDecoder {
        self.output = layout;
        self
    }

    /// The length every record must have: label and image bytes.
    pub fn record_bytes(&self) -> usize {
        self.label_bytes + self.image_bytes()
    }

    fn image_bytes(&self) -> usize {
        self.height * self.width * self.depth
    }

    /// The shape of one decoded image.
    pub fn image_shape(&self) -> [usize; 3] {
        let (h, w, d) = (self.height, self.width, self.depth);
        match self.output {
            Layout::Hwc => [h, w, d],
            Layout::Chw => [d, h, w],
        }
    }

    /// Decodes one record: a scalar label (or `[label_bytes]` labels) and
    /// one image.
    ///
    /// # Errors
    /// InvalidArgument when the record is not
    /// [`record_bytes`](FixedImageDecoder::record_bytes) long.
    pub fn decode(&self, record: &Bytes) -> Result<LabeledImages> {
        let b = self.decode_batch(std::slice::from_ref(record))?;
        let labels = if self.label_bytes == 1 {
            b.labels.reshape([])?
        } else {
            b.labels.reshape([self.label_bytes])?
        };
        Ok(LabeledImages {
            labels,
            images: b.images.reshape(self.image_shape())?,
        })
    }

    /// Decodes a batch of records into `[n]` (or `[n, label_bytes]`)
    /// labels and `[n, ..image shape]` images, each written once into a
    /// single allocation.
    ///
    /// An error names the record by its key when [`Records`] carries
    /// keys, by its position in the batch otherwise.
    ///
    /// # Errors
    /// InvalidArgument naming the first record whose length is not
    /// [`record_bytes`](FixedImageDecoder::record_bytes).
    pub fn decode_batch<'a>(
        &self,
        records: impl Into<Records<'a>>,
    ) -> Result<LabeledImages> {
        let records = records.into();
        let n = records.len();
        let (lb, ib) = (self.label_bytes, self.image_bytes());
        let mut labels = Vec::with_capacity(n * lb);
        // The batch's images are written once, appended to an allocation
        // made once: not zeroed first (a pass over the whole batch, out
        // of cache for a batch of any size). An image whose layout
        // changes is rearranged in `scratch`, one image that stays in
        // the L1 cache, then appended.
        let mut images = Vec::with_capacity(n * ib);
        let same = self.stored == self.output;
        let mut scratch = if same { Vec::new() } else { vec![0u8; ib] };
        for (i, record) in records.values().iter().enumerate() {
            if record.len() != lb + ib {
                let e = Error::invalid_argument(format!(
                    "a fixed-length image record needs {} bytes ({lb} of \
                     label, {ib} of image), got {}",
                    lb + ib,
                    record.len()
                ));
                return Err(records.name_in(i, e));
            }
            let (label, image) = record.split_at(lb);
            labels.extend(label.iter().map(|&b| i32::from(b)));
            if same {
                images.extend_from_slice(image);
            } else {
                self.copy_image(image, &mut scratch);
                images.extend_from_slice(&scratch);
            }
        }
        let labels = if lb == 1 {
            Tensor::new([n], labels)?
        } else {
            Tensor::new([n, lb], labels)?
        };
        let [a, b, c] = self.image_shape();
        let images = Tensor::new([n, a, b, c], images)?;
        Ok(LabeledImages { labels, images })
    }

    /// Writes one stored image into `out` in the output layout.
    fn copy_image(&self, image: &[u8], out: &mut [u8]) {
        let plane = self.height * self.width;
        let d = self.depth;
        if plane == 0 || d == 0 {
            return;
        }
        match (self.stored, self.output) {
            (Layout::Hwc, Layout::Hwc) | (Layout::Chw, Layout::Chw) => {
                out.copy_from_slice(image)
            }
            (Layout::Chw, Layout::Hwc) => {
                transform::interleave_rows(image, (0, plane), d, out)
            }
            (Layout::Hwc, Layout::Chw) => {
                for (c, dst) in out.chunks_exact_mut(plane).enumerate() {
                    let src = image[c..].iter().step_by(d);
                    for (o, &v) in dst.iter_mut().zip(src) {
                        *o = v;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::raw::{decode_raw, ByteOrder};
    use crate::tensor::DType;
    use crate::transform::{slice, transpose};

    /// Records of `d` planes of `h`×`w` after `lb` label bytes, every byte
    /// distinct enough to catch a misplaced pixel.
    fn records(
        n: usize,
        lb: usize,
        h: usize,
        w: usize,
        d: usize,
    ) -> Vec<Bytes> {
        (0..n)
            .map(|r| {
                (0..lb + h * w * d)
                    .map(|i| (r * 31 + i * 7) as u8)
                    .collect::<Vec<u8>>()
                    .into()
            })
            .collect()
    }

    /// TensorFlow's five steps, with the generic ops.
    fn five_steps(
        record: &Bytes,
        lb: usize,
        h: usize,
        w: usize,
        d: usize,
    ) -> (Tensor, Tensor) {
        let raw =
            decode_raw(record, DType::U8, ByteOrder::LittleEndian).unwrap();
        let label =
            slice(&raw, &[0], &[lb]).unwrap().cast(DType::I32).unwrap();
        let image = slice(&raw, &[lb], &[h * w * d])
            .unwrap()
            .reshape([d, h, w])
            .unwrap();
        (label, transpose(&image, &[1, 2, 0]).unwrap())
    }

    #[test]
    fn batch_matches_the_five_generic_steps_per_record() {
        for (lb, h, w, d) in
            [(1, 32, 32, 3), (2, 4, 5, 3), (1, 3, 2, 1), (0, 2, 2, 4)]
        {
            let recs = records(5, lb, h, w, d);
            let dec = FixedImageDecoder::new(lb, h, w, d);
            let batch = dec.decode_batch(&recs).unwrap();
            assert_eq!(batch.images.dims(), &[5, h, w, d]);
            for (i, r) in recs.iter().enumerate() {
                let (label, image) = five_steps(r, lb, h, w, d);
                assert_eq!(
                    batch.images.index(i).unwrap(),
                    image,
                    "{lb} {h} {w} {d} {i}"
                );
                let want = label.as_slice::<i32>().unwrap();
                let got = batch.labels.as_slice::<i32>().unwrap();
                assert_eq!(&got[i * lb..(i + 1) * lb], want);
                let one = dec.decode(r).unwrap();
                assert_eq!(one.images, image);
                assert_eq!(one.labels.as_slice::<i32>().unwrap(), want);
            }
        }
    }

    #[test]
    fn label_shapes_follow_the_number_of_label_bytes() {
        let recs = records(3, 2, 2, 2, 3);
        let dec = FixedImageDecoder::new(2, 2, 2, 3);
        assert_eq!(dec.decode_batch(&recs).unwrap().labels.dims(), &[3, 2]);
        assert_eq!(dec.decode(&recs[0]).unwrap().labels.dims(), &[2]);
        let one = FixedImageDecoder::cifar10();
        let r = records(1, 1, 32, 32, 3).remove(0);
        assert_eq!(one.decode(&r).unwrap().labels.dims(), &[] as &[usize]);
        assert_eq!(FixedImageDecoder::cifar100().record_bytes(), 3074);
    }

    #[test]
    fn layouts_round_trip() {
        let recs = records(2, 1, 3, 4, 2);
        let chw = FixedImageDecoder::new(1, 3, 4, 2).output(Layout::Chw);
        let kept = chw.decode_batch(&recs).unwrap();
        assert_eq!(kept.images.dims(), &[2, 2, 3, 4]);
        assert_eq!(
            kept.images.index(0).unwrap().as_slice::<u8>().unwrap(),
            &recs[0][1..]
        );
        // HWC records written from the HWC images decode back to CHW.
        let hwc = FixedImageDecoder::new(1, 3, 4, 2)
            .decode_batch(&recs)
            .unwrap();
        let hwc_recs: Vec<Bytes> = (0..2)
            .map(|i| {
                let mut r = vec![recs[i][0]];
                r.extend_from_slice(
                    hwc.images.index(i).unwrap().as_slice::<u8>().unwrap(),
                );
                Bytes::from(r)
            })
            .collect();
        let back = FixedImageDecoder::new(1, 3, 4, 2)
            .stored(Layout::Hwc)
            .output(Layout::Chw)
            .decode_batch(&hwc_recs)
            .unwrap();
        assert_eq!(back, kept);
    }

    #[test]
    fn wrong_length_names_the_key_or_the_position() {
        let mut recs = records(3, 1, 2, 2, 3);
        recs[1].truncate(12);
        let dec = FixedImageDecoder::new(1, 2, 2, 3);
        let keys = ["a:0", "a:13", "a:26"];
        let named = Records::new(&recs).with_keys(&keys).unwrap();
        let e = dec.decode_batch(named).unwrap_err();
        assert_eq!(e.kind(), crate::Kind::InvalidArgument, "{e}");
        let text = e.to_string();
        assert!(text.contains("a:13") && text.contains("got 12"), "{text}");
        let e = dec.decode_batch(&recs).unwrap_err();
        assert!(e.to_string().contains("in record 1"), "{e}");
        assert!(dec.decode(&recs[1]).is_err());
    }

    #[test]
    fn golden_cifar_like_file_decodes_as_tensorflow_laid_it_out() {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/golden/cifar_like.bin");
        let file = std::fs::read(path).unwrap();
        let recs: Vec<Bytes> = file
            .chunks_exact(3073)
            .map(Bytes::copy_from_slice)
            .collect();
        let b = FixedImageDecoder::cifar10().decode_batch(&recs).unwrap();
        assert_eq!(b.labels.dims(), &[4]);
        assert_eq!(b.labels.as_slice::<i32>().unwrap()[0], 1);
        let px = b.images.index(0).unwrap();
        let px = px.as_slice::<u8>().unwrap();
        for (y, x, c) in [(0, 0, 0), (5, 7, 1), (31, 31, 2)] {
            assert_eq!(
                px[(y * 32 + x) * 3 + c],
                file[1 + c * 1024 + y * 32 + x]
            );
        }
    }
}
