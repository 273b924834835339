//! feedstock-tf1: TensorFlow 1's graph-and-session model over the
//! [`feedstock`] engine's producers, readers, decoders, ops and batching.
//!
//! The engine crate keeps the readers, decoders, queues, runners and
//! batching; this crate builds on them: the graph ([`Graph`]), its
//! evaluator, the [`Session`], and the TensorFlow-specific kernels that
//! decode nothing ([`kernels`]: image adjustments, bounding boxes,
//! resizing, tile / fill / one_hot), each computing TensorFlow's float
//! order. The Python package's `feedstock.compat.v1` binds it.
//!
//! A [`Graph`] is a builder of nodes; each builder method stands for one
//! `tf.*` call and returns symbolic tensors ([`Output`]: a `Copy` handle
//! with a static dtype, and a static shape from [`Graph::shape`]) or
//! handles to queues ([`QueueRef`]) and readers ([`ReaderRef`]). A
//! [`Session`] runs it: [`Session::run`] evaluates the outputs it is asked
//! for, each node once per run, with placeholders fed;
//! [`Session::start_queue_runners`] starts the threads that fill the
//! producers' and batching nodes' queues, each batching runner evaluating
//! its input subgraph once per example, natively.
//!
//! ```
//! use std::time::Duration;
//! use feedstock::coord::Coordinator;
//! use feedstock_tf1::op::Binary;
//! use feedstock_tf1::{BatchOptions, Graph, ProducerOptions, Session};
//! use feedstock_tf1::kernels::math::BinaryOp;
//! use feedstock::{DType, Kind, Tensor};
//!
//! let g = Graph::new();
//! // Preloaded data: rows of a constant, 2 epochs, in order.
//! let data = g.constant(Tensor::vector((0..10i64).collect()))?;
//! let row = g.slice_input_producer(
//!     &[data],
//!     ProducerOptions { num_epochs: Some(2), shuffle: false,
//!                       ..Default::default() },
//! )?;
//! let two = g.scalar(2.0, DType::I64)?;
//! let doubled = g.op1(Binary { op: BinaryOp::Mul }, &[row[0], two])?;
//! let batch = g.batch(
//!     &[vec![doubled]],
//!     None,
//!     BatchOptions { batch_size: 4, allow_smaller_final_batch: true,
//!                    ..Default::default() },
//! )?;
//! assert_eq!(g.shape(batch[0]).unwrap().dims(), &[None]);
//!
//! let sess = Session::new(&g);
//! let coord = Coordinator::new();
//! let threads = sess.start_queue_runners(&coord)?;
//! let mut seen = Vec::new();
//! loop {
//!     match sess.run(&batch, &[]) {
//!         Ok(v) => seen.extend(v[0].dense()?.as_slice::<i64>()?.to_vec()),
//!         Err(e) if e.kind() == Kind::OutOfRange => break,
//!         Err(e) => return Err(e),
//!     }
//! }
//! let want: Vec<i64> = (0..10).chain(0..10).map(|x| 2 * x).collect();
//! assert_eq!(seen, want);
//! coord.request_stop();
//! coord.join(threads, Duration::from_secs(10))?;
//! # Ok::<(), feedstock::Error>(())
//! ```
//!
//! # How to bind this
//!
//! The module is made for a 1:1 mapping from TensorFlow 1's Python API
//! (the `feedstock.compat.v1` layer); everything per record runs here.
//!
//! * **One graph per `tf.Graph`.** [`Graph`] is a shared handle
//!   (`Clone`, `Send + Sync`, builder methods take `&self`), so a Python
//!   object can hold a clone. A session sees nodes added after it was
//!   made (the guide builds placeholders inside `with tf.Session()`).
//! * **Tensors.** Wrap [`Output`]; `.dtype` is [`Output::dtype`],
//!   `.shape` / `get_shape()` is [`Graph::shape`] (`None`: unknown rank;
//!   inner `None`: unknown dimension). `.name` is [`Graph::name`] plus
//!   `:index`. Sparse outputs ([`Output::is_sparse`]) come back from runs
//!   as [`Value::Sparse`](feedstock::Value::Sparse)
//!   (`SparseTensorValue(indices, values, dense_shape)`).
//! * **Python numbers.** Arithmetic with a number: make it a constant of
//!   the tensor's dtype with [`Graph::scalar`] (TensorFlow converts to the
//!   other operand's dtype the same way), then [`op::Binary`]
//!   (`+ - * /`, `tf.maximum`, `tf.minimum`) or [`op::Neg`]. `/` on
//!   integers is TensorFlow's `truediv`: cast both to `float64` (int8,
//!   int16, uint8 to `float32`) first. Operands must share a dtype.
//! * **Indexing.** `x[a:b, i, ..., tf.newaxis]` maps entry by entry to
//!   [`SliceDim`] in [`op::StridedSlice::index`];
//!   `tf.strided_slice(x, begin, end, strides)` to
//!   [`op::StridedSlice::ranges`]; `tf.slice` to [`op::Slice`].
//! * **Producers.** `tf.train.string_input_producer(list_or_tensor, ...)`
//!   is [`Graph::string_input_producer`] with [`Strings`] and
//!   [`ProducerOptions`]; `match_filenames_once` is
//!   [`Graph::match_filenames_once`]. `input_producer` /
//!   `range_input_producer` return a [`QueueRef`]: `q.dequeue()`,
//!   `q.dequeue_many(n)`, `q.dequeue_up_to(n)` are [`Graph::dequeue`] /
//!   [`Graph::dequeue_many`]. `slice_input_producer` returns the row
//!   tensors directly. `limit_epochs` is [`Graph::limit_epochs`].
//! * **Readers.** `tf.TextLineReader(skip_header_lines=1)` and friends are
//!   [`Graph::reader`] with a [`ReaderKind`] (compression as
//!   [`Compression`](feedstock::io::Compression): `""`, `"GZIP"`, `"ZLIB"`);
//!   `reader.read(q)` / `reader.read_up_to(q, n)` are [`Graph::read`] /
//!   [`Graph::read_up_to`], each returning `(key, value)`. Beyond
//!   TensorFlow, a TFRecord reader may skip damaged records within a
//!   budget ([`CorruptRecords`](feedstock::io::tfrecord::CorruptRecords));
//!   the session's [`stats`](Session::stats) count every skip, by file.
//! * **Decoders.** `tf.decode_csv(records, record_defaults, field_delim,
//!   use_quote_delim, na_value, select_cols)` is [`op::DecodeCsv::new`]:
//!   each default `[x]` is
//!   [`RecordDefault::from_tensor`](feedstock::decode::csv::RecordDefault::from_tensor)
//!   of a one-element tensor, `[]` (required) of an empty one, of the
//!   column's dtype; the rest is [`CsvOptions`]. `tf.decode_raw(bytes,
//!   out_type, little_endian)` is [`op::DecodeRaw`].
//!   `parse_single_example` / `parse_example` are [`op::Parse`] with a
//!   [`FeatureSpec`](feedstock::decode::example::FeatureSpec): build it from
//!   the features dict in the dict's order and return a dict of the
//!   outputs in the same order (`FixedLenFeature(shape, dtype, default)`
//!   is `fixed` / `fixed_with_default`, `VarLenFeature` `var_len`,
//!   `SparseFeature` `sparse`, `FixedLenSequenceFeature`
//!   `fixed_sequence`). `tf.parse_single_sequence_example(serialized,
//!   context_features, sequence_features)` and
//!   `tf.io.parse_sequence_example` are [`op::ParseSequence`], added by
//!   [`op::parse_sequence`] with one spec for each dict: its context and
//!   feature-list outputs are the two dicts, and its lengths the
//!   `feature_list_lengths` dict (one output per
//!   `FixedLenSequenceFeature` list, in the dict's order). Images:
//!   [`op::DecodeImage`] with [`ImageFormat`] and
//!   [`Channels`](feedstock::decode::image::Channels),
//!   the ops of [`op::image`] ([`op::FlipLeftRight`], [`op::FlipUpDown`],
//!   [`op::RandomFlip`], [`op::PerImageStandardization`], adjustments by
//!   a factor tensor ([`op::Adjust`]: contrast, hue, saturation, with
//!   [`op::RandomUniform`] for the random ones),
//!   [`op::Resize`] (bilinear, nearest neighbour),
//!   [`op::ExtractJpegShape`] and [`op::SampleBox`]) and of [`op::crop`]
//!   ([`op::RandomCrop`], [`op::CropToBox`], [`op::PadToBox`],
//!   [`op::CropOrPad`], [`op::CentralCrop`], and the forms taking the box
//!   as tensors).
//! * **Tensor ops.** `tf.cast`, `tf.reshape` (with -1, or to a shape
//!   computed when run), `tf.transpose`, `tf.stack`, `tf.concat`,
//!   `tf.identity` and the rest: the [`op`] types of those names
//!   ([`op::Cast`], [`op::Reshape`], ...), each added with [`Graph::op`].
//! * **Variables.** `tf.Variable(initial)` is [`Graph::variable`]:
//!   `var.initializer` is [`Variable::initializer`], reading the variable
//!   is [`Variable::value`]. `global_variables_initializer()` /
//!   `local_variables_initializer()` can be the list
//!   [`Graph::initializers`] (epoch counters need none here: producers
//!   count epochs themselves), and `tf.group(...)` a list of fetches whose
//!   values are dropped.
//! * **Batching.** `batch`, `shuffle_batch`, `batch_join`,
//!   `shuffle_batch_join` and the `maybe_` forms are all [`Graph::batch`]:
//!   pass one tensor list (`batch`, with `num_threads`) or several (the
//!   `_join` forms, one thread each), `keep_input` for the `maybe_`
//!   forms, and `shuffle: Some(..)` for the shuffling ones. A dict of
//!   tensors is a list plus the keys, rebuilt on the Python side. A
//!   sparse component works as in TensorFlow.
//! * **Queues made by hand.** `tf.FIFOQueue(capacity, dtypes, shapes)`,
//!   `tf.PaddingFIFOQueue` and `tf.RandomShuffleQueue` are
//!   [`Graph::queue`] with a [`QueueKind`]; `q.enqueue(vals)` /
//!   `q.enqueue_many(vals)` are [`Graph::enqueue`], `q.close()`
//!   [`Graph::queue_close`], `q.size()` [`Graph::queue_size`],
//!   `q.is_closed()` [`Graph::queue_is_closed`] (each an output run for
//!   its effect), and `q.dequeue*()` [`Graph::dequeue`] /
//!   [`Graph::dequeue_many`], one output per component. A reader reads
//!   file names from such a queue too. `tf.train.QueueRunner(q, ops)` is
//!   [`Graph::queue_runner`], `tf.train.add_queue_runner(qr)`
//!   [`Graph::add_queue_runner`] and `qr.create_threads(sess, coord)`
//!   [`Session::start_queue_runner`].
//! * **Running.** `sess.run(fetches, feed_dict)` is [`Session::run`] with
//!   the flattened fetches (a fetch list, tuple, dict or single tensor is
//!   rebuilt on the Python side from the returned list) and
//!   `(Output, Value)` feeds; [`Session::run_with`] adds a timeout.
//!   Release the GIL around it: it blocks. `tf.train.start_queue_runners(
//!   sess, coord)` is [`Session::start_queue_runners`]; `coord.join` is
//!   [`Coordinator::join`](feedstock::coord::Coordinator::join).
//!   [`Session::close`] wakes every blocked run with Cancelled (call it on
//!   Ctrl-C or when the Python session closes).
//! * **Errors** are [`Error`](feedstock::Error)s whose
//!   [`Kind`](feedstock::Kind) names TensorFlow's exception class
//!   (`OutOfRange` is `OutOfRangeError`, ...), with the file and record key.
//! * **Summaries.** [`Session::queue_summaries`] gives TensorFlow's
//!   `queue/<name>/fraction_of_<capacity>_full` scalars;
//!   [`Session::stats`] the full counters.
//!
//! # Semantics
//!
//! * Every node a run needs runs once in it; two fetches of one reader's
//!   outputs read one record, two of one batching node's outputs dequeue
//!   one batch.
//! * Queues, readers, batching stages and random generators belong to the
//!   session, made on first use; [`Session::start_queue_runners`] makes
//!   them all. A producer's input (a filename list from
//!   `match_filenames_once`, a variable for `slice_input_producer`) is
//!   evaluated once, then: initialize variables before starting the
//!   runners, as the guide does.
//! * A run that reads a queue whose runners were never started fails
//!   FailedPrecondition (TensorFlow would hang).
//! * Static shapes are inferred where TensorFlow infers them. A batching
//!   node whose per-example shape is not fully known still runs (unlike
//!   TensorFlow, which refuses to build it); examples of differing shapes
//!   then fail InvalidArgument when batched, naming the component.

mod control;
mod eval;
mod graph;
mod graph_fn;
pub mod kernels;
pub mod op;
mod queues;
mod session;

pub use graph::{
    BatchOptions, CsvOptions, Graph, ImageFormat, OutInfo, Output,
    ProducerOptions, QueueRef, ReaderKind, ReaderRef, ReaderStateOp,
    ShardOptions, ShuffleOptions, SliceDim, SparsePart, StaticShape, Strings,
    UserFn, Variable,
};
pub use graph_fn::GraphFn;
pub use queues::{QueueKind, RunnerRef};
pub use session::{Callable, Interrupt, QueueSummary, RunOptions, Session};
