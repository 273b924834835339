//! Many threads on one queue: nothing lost, nothing duplicated, no
//! deadlock; and the shuffle queue's order is a fair, reproducible
//! permutation.

mod queue_support;

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use feedstock::queue::{
    FifoQueue, PriorityQueue, Queue, QueueSpec, RandomShuffleQueue,
};
use feedstock::{Kind, Tensor};
use queue_support::{ints_of, scalar_i64};

/// Generous: a working call never waits this long, a deadlock fails.
const LONG: Duration = Duration::from_secs(30);

/// Runs `producers` threads enqueuing `per_producer` distinct values each
/// and `consumers` threads dequeuing until OutOfRange, every thread mixing
/// single and batch operations at random with random short pauses; closes
/// the queue once the producers are done; returns everything dequeued.
fn run_mixed(
    q: Arc<dyn Queue>,
    producers: usize,
    consumers: usize,
    per_producer: i64,
    pause_one_in: u32,
) -> Vec<i64> {
    let producer_threads: Vec<_> = (0..producers)
        .map(|p| {
            let q = q.clone();
            thread::spawn(move || {
                let mut rng = ChaCha8Rng::seed_from_u64(p as u64);
                let base = p as i64 * per_producer;
                let mut next = 0;
                while next < per_producer {
                    let k = rng.gen_range(1..=5).min(per_producer - next);
                    let chunk: Vec<i64> =
                        (base + next..base + next + k).collect();
                    if rng.gen_bool(0.5) {
                        q.enqueue_many_timeout(
                            vec![Tensor::vector(chunk).into()],
                            LONG,
                        )
                        .unwrap();
                    } else {
                        for v in chunk {
                            q.enqueue_timeout(
                                vec![Tensor::scalar(v).into()],
                                LONG,
                            )
                            .unwrap();
                        }
                    }
                    next += k;
                    if rng.gen_ratio(1, pause_one_in) {
                        thread::sleep(Duration::from_micros(200));
                    }
                }
            })
        })
        .collect();
    let consumer_threads: Vec<_> = (0..consumers)
        .map(|c| {
            let q = q.clone();
            thread::spawn(move || {
                let mut rng = ChaCha8Rng::seed_from_u64(100 + c as u64);
                let mut got = Vec::new();
                loop {
                    let k = rng.gen_range(1..=4);
                    let r = match rng.gen_range(0..3) {
                        0 => q.dequeue_timeout(LONG),
                        1 => q.dequeue_many_timeout(k, LONG),
                        _ => q.dequeue_up_to_timeout(k, LONG),
                    };
                    match r {
                        Ok(batch) => got.extend(ints_of(&batch)),
                        Err(e) if e.kind() == Kind::OutOfRange => break,
                        Err(e) => panic!("consumer {c}: {e}"),
                    }
                    if rng.gen_ratio(1, pause_one_in) {
                        thread::sleep(Duration::from_micros(200));
                    }
                }
                got
            })
        })
        .collect();
    for t in producer_threads {
        t.join().unwrap();
    }
    q.close(false);
    let mut all: Vec<i64> = consumer_threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    // A dequeue_many that found too few left them in the queue.
    if let Ok(rest) = q.dequeue_up_to(usize::MAX) {
        all.extend(ints_of(&rest));
    }
    all
}

fn assert_exactly_once(mut got: Vec<i64>, total: i64) {
    got.sort_unstable();
    assert_eq!(got.len() as i64, total, "element count");
    assert!(
        got.iter().copied().eq(0..total),
        "not a permutation of 0..n"
    );
}

#[test]
fn producers_and_consumers_deliver_every_element_exactly_once_fifo() {
    let q = FifoQueue::builder(7, scalar_i64()).build().unwrap();
    assert_exactly_once(run_mixed(q, 4, 3, 1500, 50), 4 * 1500);
}

#[test]
fn producers_and_consumers_deliver_every_element_exactly_once_shuffle() {
    let q = RandomShuffleQueue::builder(16, scalar_i64())
        .min_after_dequeue(5)
        .seed(3)
        .build()
        .unwrap();
    assert_exactly_once(run_mixed(q, 3, 4, 1500, 50), 3 * 1500);
}

#[test]
fn producers_and_consumers_deliver_every_element_exactly_once_priority() {
    // The priority is the value itself.
    let q = PriorityQueue::builder(9, QueueSpec::new()).build().unwrap();
    assert_exactly_once(run_mixed(q, 3, 3, 1000, 50), 3 * 1000);
}

#[test]
fn stress_capacity_one_and_two_with_many_threads_does_not_deadlock() {
    // A million elements in all, moved in batches of 16 so that the test
    // stays within seconds in a debug build; each batch still crosses a
    // queue of capacity 1 or 2 element by element.
    for capacity in [1, 2] {
        let q = FifoQueue::builder(capacity, scalar_i64()).build().unwrap();
        let total = 500_000i64;
        let got = run_stress(q, 4, 4, total);
        assert_eq!(got, (0..total).sum::<i64>(), "capacity {capacity}");
    }
}

/// `producers` threads enqueue `0..total` in runs of 16; `consumers`
/// dequeue up to 16 at a time; returns the sum of what came out (and
/// checks the count).
fn run_stress(
    q: Arc<FifoQueue>,
    producers: i64,
    consumers: usize,
    total: i64,
) -> i64 {
    let per = total / producers;
    let prod: Vec<_> = (0..producers)
        .map(|p| {
            let q = q.clone();
            thread::spawn(move || {
                let mut v = p * per;
                while v < (p + 1) * per {
                    let end = (v + 16).min((p + 1) * per);
                    let run = Tensor::vector((v..end).collect::<Vec<i64>>());
                    q.enqueue_many_timeout(vec![run.into()], LONG).unwrap();
                    v = end;
                }
            })
        })
        .collect();
    let cons: Vec<_> = (0..consumers)
        .map(|_| {
            let q = q.clone();
            thread::spawn(move || {
                let (mut sum, mut count) = (0i64, 0usize);
                loop {
                    match q.dequeue_up_to_unstacked(16) {
                        Ok(elements) => {
                            count += elements.len();
                            for e in elements {
                                sum += e[0]
                                    .dense()
                                    .unwrap()
                                    .scalar_value::<i64>()
                                    .unwrap();
                            }
                        }
                        Err(e) if e.kind() == Kind::OutOfRange => break,
                        Err(e) => panic!("{e}"),
                    }
                }
                (sum, count)
            })
        })
        .collect();
    for t in prod {
        t.join().unwrap();
    }
    q.close(false);
    let (mut sum, mut count) = (0, 0);
    for t in cons {
        let (s, c) = t.join().unwrap();
        sum += s;
        count += c;
    }
    assert_eq!(count as i64, producers * per);
    sum
}

/// Pauses the calling thread for a random short while, or not at all, so
/// that two threads interleave differently on every run.
fn jitter(rng: &mut ChaCha8Rng) {
    match rng.gen_range(0..8) {
        0 => thread::sleep(Duration::from_micros(rng.gen_range(1..200))),
        1 | 2 => thread::yield_now(),
        _ => {}
    }
}

/// The shuffle order with one producer thread streaming `0..n` in and one
/// consumer thread taking batches of 1 to 3 out, both pausing at random
/// (`timing` seeds the pauses, not the shuffle), with no pre-fill: the
/// consumer starts while the producer is still enqueuing.
fn threaded_shuffle_order(seed: u64, timing: u64, n: i64) -> Vec<i64> {
    let q = RandomShuffleQueue::builder(16, scalar_i64())
        .min_after_dequeue(5)
        .seed(seed)
        .build()
        .unwrap();
    let producer = {
        let q = q.clone();
        thread::spawn(move || {
            let mut rng = ChaCha8Rng::seed_from_u64(timing);
            for v in 0..n {
                jitter(&mut rng);
                q.enqueue_timeout(vec![Tensor::scalar(v).into()], LONG)
                    .unwrap();
            }
            q.close(false);
        })
    };
    let mut rng = ChaCha8Rng::seed_from_u64(!timing);
    let mut out = Vec::new();
    loop {
        jitter(&mut rng);
        let k = rng.gen_range(1..=3);
        match q.dequeue_up_to_timeout(k, LONG) {
            Ok(b) => out.extend(ints_of(&b)),
            Err(e) if e.kind() == Kind::OutOfRange => break,
            Err(e) => panic!("{e}"),
        }
    }
    producer.join().unwrap();
    out
}

#[test]
fn shuffle_order_of_streaming_input_is_identical_across_runs_for_a_fixed_seed()
{
    let a = threaded_shuffle_order(42, 0, 500);
    for timing in 1..4 {
        assert_eq!(threaded_shuffle_order(42, timing, 500), a);
    }
    let mut sorted = a.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..500).collect::<Vec<_>>());
    assert_ne!(a, sorted, "the output is shuffled");
    assert_ne!(a, threaded_shuffle_order(43, 0, 500), "the seed matters");
}

#[test]
fn shuffle_order_never_moves_an_element_ahead_of_the_pool() {
    // The pool holds min_after_dequeue + 1 = 6 elements, so the k-th
    // element out (from 0) is one of the first k + 6 in.
    let order = threaded_shuffle_order(7, 0, 300);
    for (k, &v) in order.iter().enumerate() {
        assert!(v < k as i64 + 6, "element {v} came out at {k}");
    }
}

#[test]
fn shuffle_order_is_not_biased() {
    // Each of the 24 orders of 4 elements should come out 1/24 of the
    // time. Pearson's chi-square over 24 000 trials has 23 degrees of
    // freedom; P(chi2 > 70.55) = 1e-6 for an unbiased shuffle, so this
    // fails by chance once in a million runs.
    const TRIALS: u64 = 24_000;
    let mut counts = [0u32; 24];
    for trial in 0..TRIALS {
        // A pool of min_after_dequeue + 1 = 4 holds all four elements.
        let q = RandomShuffleQueue::builder(4, scalar_i64())
            .min_after_dequeue(3)
            .seed(trial)
            .build()
            .unwrap();
        q.enqueue_many(vec![Tensor::vector(vec![0i64, 1, 2, 3]).into()])
            .unwrap();
        q.close(false);
        let order: Vec<i64> =
            (0..4).map(|_| ints_of(&q.dequeue().unwrap())[0]).collect();
        counts[permutation_index(&order)] += 1;
    }
    let expected = TRIALS as f64 / 24.0;
    let chi2: f64 = counts
        .iter()
        .map(|&c| (c as f64 - expected).powi(2) / expected)
        .sum();
    assert!(chi2 < 70.55, "chi-square {chi2:.1}, counts {counts:?}");
}

/// The rank of a permutation of `0..4` in lexicographic order (Lehmer
/// code).
fn permutation_index(p: &[i64]) -> usize {
    let mut index = 0;
    for i in 0..p.len() {
        let smaller_after = p[i + 1..].iter().filter(|&&x| x < p[i]).count();
        index = index * (p.len() - i) + smaller_after;
    }
    index
}

#[test]
fn permutation_index_ranks_all_24_orders_distinctly() {
    let mut seen = [false; 24];
    for a in 0..4i64 {
        for b in 0..4 {
            for c in 0..4 {
                for d in 0..4 {
                    let p = [a, b, c, d];
                    let mut s = p;
                    s.sort_unstable();
                    if s == [0, 1, 2, 3] {
                        seen[permutation_index(&p)] = true;
                    }
                }
            }
        }
    }
    assert!(seen.iter().all(|&s| s));
}
