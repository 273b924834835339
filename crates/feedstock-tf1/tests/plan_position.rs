//! A session's input position: the steps the user's runs made of the
//! nodes that take input, and a new session of the same deterministic
//! graph resumed there by replaying them (what
//! `MonitoredTrainingSession(checkpoint_dir=...)` saves and restores).

use std::time::Duration;

use feedstock::coord::Coordinator;
use feedstock::{Kind, Result, Value};
use feedstock_tf1::{
    BatchOptions, Graph, Output, ProducerOptions, Session, ShuffleOptions,
};

const JOIN: Duration = Duration::from_secs(30);

/// range(10), shuffled with a seed, 3 epochs -> shuffle_batch of 4.
fn graph(num_threads: usize, seed: Option<u64>) -> Result<(Graph, Output)> {
    let g = Graph::new();
    let q = g.range_input_producer(
        10,
        ProducerOptions {
            num_epochs: Some(3),
            seed: Some(11),
            ..Default::default()
        },
    )?;
    let d = g.dequeue(q)?[0];
    let b = g.batch(
        &[vec![d]],
        None,
        BatchOptions {
            batch_size: 4,
            num_threads,
            capacity: 16,
            allow_smaller_final_batch: true,
            shuffle: Some(ShuffleOptions {
                min_after_dequeue: 5,
                seed,
            }),
            ..Default::default()
        },
    )?[0];
    Ok((g, b))
}

/// Node names and steps, as [`Session::input_position`] gives them.
type Position = Vec<(String, u64)>;

fn ints(v: &Value) -> Vec<i32> {
    v.dense().unwrap().as_slice::<i32>().unwrap().to_vec()
}

/// Up to `n` batches (all with `None`), then the session's position.
fn take(
    sess: &Session,
    b: Output,
    n: Option<usize>,
) -> Result<(Vec<Vec<i32>>, Position)> {
    let mut out = Vec::new();
    while n.is_none_or(|n| out.len() < n) {
        match sess.run(&[b], &[]) {
            Ok(v) => out.push(ints(&v[0])),
            Err(e) if e.kind() == Kind::OutOfRange => break,
            Err(e) => return Err(e),
        }
    }
    Ok((out, sess.input_position()?))
}

fn session(
    g: &Graph,
) -> Result<(Session, Coordinator, Vec<feedstock::coord::ThreadHandle>)> {
    let sess = Session::new(g);
    let coord = Coordinator::new();
    let threads = sess.start_queue_runners(&coord)?;
    Ok((sess, coord, threads))
}

#[test]
fn replaying_the_position_resumes_the_uninterrupted_run() -> Result<()> {
    let (g, b) = graph(1, Some(5))?;
    assert!(g.input_nondeterminism().is_empty());
    let (sess, coord, threads) = session(&g)?;
    let (full, _) = take(&sess, b, None)?;
    coord.request_stop();
    coord.join(threads, JOIN)?;
    assert_eq!(full.len(), 8);
    for stop in [0, 1, 3, 7, 8] {
        let (g1, b1) = graph(1, Some(5))?;
        let (sess, coord, threads) = session(&g1)?;
        let (before, position) = take(&sess, b1, Some(stop))?;
        // The batching thread's dequeues from the producer are not
        // counted: replaying the batches makes them again.
        let want: Position = if stop == 0 {
            vec![]
        } else {
            vec![("shuffle_batch".into(), stop as u64)]
        };
        assert_eq!(position, want);
        coord.request_stop();
        coord.join(threads, JOIN)?;
        // Another graph built the same way, as a new process would.
        let (g2, b2) = graph(1, Some(5))?;
        assert_eq!(g2.input_fingerprint(), g1.input_fingerprint());
        let (sess, coord, threads) = session(&g2)?;
        sess.replay_input(&position)?;
        let (after, _) = take(&sess, b2, None)?;
        coord.request_stop();
        coord.join(threads, JOIN)?;
        assert_eq!([before, after].concat(), full, "stopped after {stop}");
    }
    Ok(())
}

#[test]
fn a_position_past_the_end_or_of_another_graph_is_refused() -> Result<()> {
    let (g, _) = graph(1, Some(5))?;
    let (sess, coord, threads) = session(&g)?;
    let err = sess
        .replay_input(&[("shuffle_batch".into(), 9)])
        .unwrap_err();
    assert_eq!(err.kind(), Kind::OutOfRange, "{err}");
    assert!(
        err.to_string().contains("shuffle_batch failed at step 8"),
        "{err}"
    );
    let err = sess.replay_input(&[("nothing".into(), 1)]).unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidArgument, "{err}");
    coord.request_stop();
    coord.join(threads, JOIN)?;
    let (other, _) = graph(1, Some(6))?;
    assert_ne!(other.input_fingerprint(), g.input_fingerprint());
    Ok(())
}

#[test]
fn threads_and_unseeded_shuffles_are_named() -> Result<()> {
    let (g, _) = graph(2, None)?;
    assert_eq!(
        g.input_nondeterminism(),
        vec![
            "shuffle_batch runs 2 threads (num_threads=2)".to_owned(),
            "shuffle_batch shuffles with no seed (give shuffle_batch a \
             seed, or the graph one with tf.set_random_seed)"
                .to_owned(),
        ]
    );
    Ok(())
}

#[test]
fn two_stages_reading_one_producer_are_named() -> Result<()> {
    let g = Graph::new();
    let q = g.range_input_producer(
        10,
        ProducerOptions {
            seed: Some(1),
            ..Default::default()
        },
    )?;
    let d = g.dequeue(q)?[0];
    for name in ["train", "eval"] {
        let opts = BatchOptions {
            batch_size: 2,
            name: Some(name.into()),
            ..Default::default()
        };
        g.batch(&[vec![d]], None, opts)?;
    }
    assert_eq!(
        g.input_nondeterminism(),
        vec!["input_producer is read by 2 threads (train, eval)".to_owned()]
    );
    Ok(())
}

#[test]
fn two_nodes_dequeuing_from_one_queue_have_no_position() -> Result<()> {
    let g = Graph::new();
    let q = g.range_input_producer(
        10,
        ProducerOptions {
            shuffle: false,
            ..Default::default()
        },
    )?;
    let (a, b) = (g.dequeue(q)?[0], g.dequeue(q)?[0]);
    let (sess, coord, threads) = session(&g)?;
    sess.run(&[a], &[])?;
    assert_eq!(sess.input_position()?.len(), 1);
    sess.run(&[b], &[])?;
    let err = sess.input_position().unwrap_err();
    assert_eq!(err.kind(), Kind::FailedPrecondition, "{err}");
    assert!(
        err.to_string().contains("both take from input_producer"),
        "{err}"
    );
    coord.request_stop();
    coord.join(threads, JOIN)
}
