//! Softmax regression in plain Rust: the classifier the demo trains.
//!
//! `logits = images · weights + bias`, `p = softmax(logits)`, and the loss
//! is the mean cross entropy `-log p[label]` over the batch. One SGD step
//! moves the weights against the gradient of that loss, which for softmax
//! cross entropy is `(p - onehot(label)) / batch` with respect to the
//! logits. The problem is convex, so the weights start at zero.
//!
//! Batches come in as the pipeline delivers them: images an `f32` tensor
//! `[batch, features]`, labels an `i64` or `i32` tensor `[batch]`. A batch
//! of another dtype or shape, or a label outside `0..classes`, is an
//! `InvalidArgument` naming the input, never a panic.

use feedstock::{DType, Error, Result, Tensor};

/// A linear classifier over `features` inputs into `classes` classes.
#[derive(Debug, Clone)]
pub(crate) struct SoftmaxRegression {
    /// The number of input features (64 for 8×8 digits).
    features: usize,
    /// The number of classes (10 for digits).
    classes: usize,
    /// `[features, classes]`, row-major.
    weights: Vec<f32>,
    /// `[classes]`.
    bias: Vec<f32>,
}

impl SoftmaxRegression {
    /// A model with all weights and biases zero.
    pub(crate) fn new(features: usize, classes: usize) -> SoftmaxRegression {
        SoftmaxRegression {
            features,
            classes,
            weights: vec![0.0; features * classes],
            bias: vec![0.0; classes],
        }
    }

    /// One step of stochastic gradient descent over a batch; returns the
    /// batch's mean cross-entropy loss before the step. An empty batch
    /// leaves the model unchanged and has loss 0.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` when the images are not `f32 [batch, features]`,
    /// the labels not `i64`/`i32 [batch]`, or a label is out of range.
    pub(crate) fn train_step(
        &mut self,
        images: &Tensor,
        labels: &Tensor,
        learning_rate: f32,
    ) -> Result<f32> {
        let (x, batch) = self.check_images(images)?;
        let y = self.check_labels(labels, batch)?;
        if batch == 0 {
            return Ok(0.0);
        }
        let (c, f) = (self.classes, self.features);
        let mut grad_w = vec![0.0f32; f * c];
        let mut grad_b = vec![0.0f32; c];
        let mut p = vec![0.0f32; c];
        let mut loss = 0.0f64;
        let scale = 1.0 / batch as f32;
        for (row, &label) in x.chunks_exact(f).zip(&y) {
            self.probabilities(row, &mut p);
            loss -= f64::from(p[label].max(f32::MIN_POSITIVE).ln());
            // dLoss/dlogits for this row, already divided by the batch.
            p[label] -= 1.0;
            for g in &mut p {
                *g *= scale;
            }
            for (gb, g) in grad_b.iter_mut().zip(&p) {
                *gb += g;
            }
            for (&xi, gw) in row.iter().zip(grad_w.chunks_exact_mut(c)) {
                if xi != 0.0 {
                    for (w, g) in gw.iter_mut().zip(&p) {
                        *w += xi * g;
                    }
                }
            }
        }
        for (w, g) in self.weights.iter_mut().zip(&grad_w) {
            *w -= learning_rate * g;
        }
        for (b, g) in self.bias.iter_mut().zip(&grad_b) {
            *b -= learning_rate * g;
        }
        Ok((loss / batch as f64) as f32)
    }

    /// The most likely class of each image.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` when the images are not `f32 [batch, features]`.
    pub(crate) fn predict(&self, images: &Tensor) -> Result<Vec<usize>> {
        let (x, _) = self.check_images(images)?;
        let mut logits = vec![0.0f32; self.classes];
        Ok(x.chunks_exact(self.features)
            .map(|row| {
                self.logits(row, &mut logits);
                argmax(&logits)
            })
            .collect())
    }

    /// The number of images in the batch whose predicted class is their
    /// label.
    ///
    /// # Errors
    ///
    /// As [`SoftmaxRegression::train_step`].
    pub(crate) fn count_correct(
        &self,
        images: &Tensor,
        labels: &Tensor,
    ) -> Result<usize> {
        let predicted = self.predict(images)?;
        let y = self.check_labels(labels, predicted.len())?;
        Ok(predicted.iter().zip(&y).filter(|(p, y)| p == y).count())
    }

    /// The mean cross-entropy loss over a batch, without training.
    ///
    /// # Errors
    ///
    /// As [`SoftmaxRegression::train_step`].
    #[cfg(test)]
    fn loss(&self, images: &Tensor, labels: &Tensor) -> Result<f32> {
        let (x, batch) = self.check_images(images)?;
        let y = self.check_labels(labels, batch)?;
        let mut p = vec![0.0f32; self.classes];
        let mut loss = 0.0f64;
        for (row, &label) in x.chunks_exact(self.features).zip(&y) {
            self.probabilities(row, &mut p);
            loss -= f64::from(p[label].max(f32::MIN_POSITIVE).ln());
        }
        Ok((loss / batch.max(1) as f64) as f32)
    }

    fn logits(&self, row: &[f32], out: &mut [f32]) {
        out.copy_from_slice(&self.bias);
        for (&xi, w) in row.iter().zip(self.weights.chunks_exact(self.classes))
        {
            if xi != 0.0 {
                for (o, w) in out.iter_mut().zip(w) {
                    *o += xi * w;
                }
            }
        }
    }

    /// Softmax of the logits of `row`, computed stably (shifted by the
    /// largest logit).
    fn probabilities(&self, row: &[f32], out: &mut [f32]) {
        self.logits(row, out);
        let max = out.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0;
        for o in out.iter_mut() {
            *o = (*o - max).exp();
            sum += *o;
        }
        for o in out.iter_mut() {
            *o /= sum;
        }
    }

    fn check_images<'t>(
        &self,
        images: &'t Tensor,
    ) -> Result<(&'t [f32], usize)> {
        let ok = images.dtype() == DType::F32
            && images.rank() == 2
            && images.dims()[1] == self.features;
        if !ok {
            return Err(Error::invalid_argument(format!(
                "images must be float32 [batch, {}], got {} {}",
                self.features,
                images.dtype(),
                images.shape()
            ))
            .with_field("image"));
        }
        Ok((images.as_slice::<f32>()?, images.dims()[0]))
    }

    fn check_labels(
        &self,
        labels: &Tensor,
        batch: usize,
    ) -> Result<Vec<usize>> {
        if labels.dims() != [batch] {
            return Err(Error::invalid_argument(format!(
                "labels must have shape [{batch}], got {}",
                labels.shape()
            ))
            .with_field("label"));
        }
        let wide: Vec<i64> = match labels.dtype() {
            DType::I64 => labels.as_slice::<i64>()?.to_vec(),
            DType::I32 => labels
                .as_slice::<i32>()?
                .iter()
                .map(|&l| i64::from(l))
                .collect(),
            other => {
                return Err(Error::invalid_argument(format!(
                    "labels must be int64 or int32, got {other}"
                ))
                .with_field("label"))
            }
        };
        wide.into_iter()
            .map(|l| {
                usize::try_from(l)
                    .ok()
                    .filter(|&l| l < self.classes)
                    .ok_or_else(|| {
                        Error::invalid_argument(format!(
                            "label {l} is outside 0..{}",
                            self.classes
                        ))
                        .with_field("label")
                    })
            })
            .collect()
    }
}

fn argmax(values: &[f32]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        if v > values[best] {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use feedstock::Kind;

    /// Two features, three classes: the class is which feature is large
    /// (0, 1) or neither (2).
    fn toy_batch() -> (Tensor, Tensor) {
        let mut x = Vec::new();
        let mut y = Vec::new();
        for i in 0..30 {
            let jitter = (i % 5) as f32 * 0.05;
            match i % 3 {
                0 => x.extend([1.0 - jitter, jitter]),
                1 => x.extend([jitter, 1.0 - jitter]),
                _ => x.extend([jitter, jitter]),
            }
            y.push((i % 3) as i64);
        }
        (Tensor::new([30, 2], x).unwrap(), Tensor::vector(y))
    }

    #[test]
    fn training_lowers_the_loss_and_learns_a_separable_problem() {
        let (x, y) = toy_batch();
        let mut m = SoftmaxRegression::new(2, 3);
        let first = m.train_step(&x, &y, 1.0).unwrap();
        assert!((first - 3f32.ln()).abs() < 1e-5, "zero model: {first}");
        for _ in 0..500 {
            m.train_step(&x, &y, 1.0).unwrap();
        }
        let last = m.loss(&x, &y).unwrap();
        assert!(last < first / 2.0, "{first} -> {last}");
        assert_eq!(m.count_correct(&x, &y).unwrap(), 30);
    }

    #[test]
    fn gradient_step_matches_finite_differences() {
        let (x, y) = toy_batch();
        let mut m = SoftmaxRegression::new(2, 3);
        // Move away from the symmetric zero point first.
        for _ in 0..3 {
            m.train_step(&x, &y, 0.7).unwrap();
        }
        let eps = 1e-2f32;
        let lr = 1e-3f32;
        let mut stepped = m.clone();
        stepped.train_step(&x, &y, lr).unwrap();
        for k in 0..m.weights.len() {
            let analytic = (m.weights[k] - stepped.weights[k]) / lr;
            let (mut plus, mut minus) = (m.clone(), m.clone());
            plus.weights[k] += eps;
            minus.weights[k] -= eps;
            let numeric = (plus.loss(&x, &y).unwrap()
                - minus.loss(&x, &y).unwrap())
                / (2.0 * eps);
            assert!(
                (analytic - numeric).abs() < 1e-2,
                "weight {k}: {analytic} vs {numeric}"
            );
        }
    }

    #[test]
    fn int32_and_int64_labels_train_identically() {
        let (x, y) = toy_batch();
        let y32 = y.cast(DType::I32).unwrap();
        let (mut a, mut b) =
            (SoftmaxRegression::new(2, 3), SoftmaxRegression::new(2, 3));
        for _ in 0..5 {
            a.train_step(&x, &y, 0.5).unwrap();
            b.train_step(&x, &y32, 0.5).unwrap();
        }
        assert_eq!(a.weights, b.weights);
        assert_eq!(a.bias, b.bias);
    }

    #[test]
    fn out_of_range_label_is_invalid_argument() {
        let x = Tensor::new([2, 2], vec![0f32; 4]).unwrap();
        let mut m = SoftmaxRegression::new(2, 3);
        for bad in [3i64, -1] {
            let y = Tensor::vector(vec![0i64, bad]);
            let err = m.train_step(&x, &y, 0.1).unwrap_err();
            assert_eq!(err.kind(), Kind::InvalidArgument);
            assert_eq!(err.field(), Some("label"));
            assert!(err.message().contains(&bad.to_string()), "{err}");
        }
        assert_eq!(m.weights, vec![0.0; 6], "a failed step changes nothing");
    }

    #[test]
    fn wrong_image_dtype_or_width_is_invalid_argument() {
        let m = SoftmaxRegression::new(2, 3);
        let wide = Tensor::new([1, 3], vec![0f32; 3]).unwrap();
        let ints = Tensor::new([1, 2], vec![0i32; 2]).unwrap();
        for x in [wide, ints] {
            let err = m.predict(&x).unwrap_err();
            assert_eq!(err.kind(), Kind::InvalidArgument);
            assert_eq!(err.field(), Some("image"));
        }
    }

    #[test]
    fn label_count_must_match_batch() {
        let m = SoftmaxRegression::new(2, 3);
        let x = Tensor::new([2, 2], vec![0f32; 4]).unwrap();
        let err = m
            .count_correct(&x, &Tensor::vector(vec![0i64]))
            .unwrap_err();
        assert_eq!(err.kind(), Kind::InvalidArgument);
        assert_eq!(err.field(), Some("label"));
    }

    #[test]
    fn empty_batch_is_a_no_op() {
        let mut m = SoftmaxRegression::new(2, 3);
        let x = Tensor::new([0, 2], Vec::<f32>::new()).unwrap();
        let y = Tensor::vector(Vec::<i64>::new());
        assert_eq!(m.train_step(&x, &y, 1.0).unwrap(), 0.0);
        assert_eq!(m.count_correct(&x, &y).unwrap(), 0);
        assert_eq!(m.bias, vec![0.0; 3]);
    }
}
