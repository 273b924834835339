//! Seed guide, "Filtering records or producing multiple examples per
//! record": with `enqueue_many`, the example closure returns a batch of
//! examples per record — `[k, ...]` instead of `[...]` — where `k` may be
//! 0 (the record is filtered out) or more than 1.
//!
//! The records are CSV lines `id,sentence`. Sentences whose id is a
//! multiple of 5 are a hold-out set and yield no examples; every other
//! sentence yields one example per word: the word and the sentence id.
//!
//! Run with `cargo run --example filtering_and_multiple_examples`.

use std::error::Error;
use std::time::Duration;

use bytes::Bytes;
use feedstock::coord::{Coordinator, Pipeline};
use feedstock::decode::csv::{CsvDecoder, RecordDefault};
use feedstock::input::{batch, string_input_producer};
use feedstock::queue::{ComponentSpec, PartialShape, QueueSpec};
use feedstock::reader::{Reader, TextLineReader};
use feedstock::{DType, Tensor};

const SENTENCES: [&str; 10] = [
    "the quick brown fox",
    "jumps over",
    "the lazy dog",
    "a",
    "queues and runners",
    "no silent hangs",
    "every record counted",
    "filters drop",
    "and records split",
    "into words",
];
const BATCH_SIZE: usize = 4;

/// Whether sentence `id` belongs to the hold-out set.
fn held_out(id: i64) -> bool {
    id % 5 == 0
}

/// Runs the example; `cargo test` runs it too (tests/examples.rs).
pub fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("sentences.csv");
    let body: String = SENTENCES
        .iter()
        .enumerate()
        .map(|(id, s)| format!("{id},{s}\n"))
        .collect();
    std::fs::write(&path, body)?;

    let mut pipeline = Pipeline::new();
    let filename_queue =
        string_input_producer(&mut pipeline, [path.to_str().unwrap()])
            .num_epochs(1)
            .build()?;
    let reader = Reader::new(TextLineReader::new());
    let decoder = CsvDecoder::new(vec![
        RecordDefault::required(DType::I64)?,
        RecordDefault::string(""),
    ])?;
    let words = batch(&mut pipeline, move || {
        let record = reader.read(&filename_queue)?;
        let columns = decoder.decode(&record.value, &record.key)?;
        let id = columns[0].scalar_value::<i64>()?;
        let sentence = columns[1].scalar_value::<Bytes>()?;
        // Zero examples for a held-out sentence, one per word otherwise.
        let words: Vec<Bytes> = if held_out(id) {
            Vec::new()
        } else {
            sentence
                .split(|&b| b == b' ')
                .map(|w| sentence.slice_ref(w))
                .collect()
        };
        let ids = vec![id; words.len()];
        Ok(vec![
            Tensor::vector(words).into(),
            Tensor::vector(ids).into(),
        ])
    })
    .enqueue_many(true)
    .spec(
        QueueSpec::new()
            .component(
                ComponentSpec::new(DType::String)
                    .shape(PartialShape::scalar())
                    .name("word"),
            )
            .component(
                ComponentSpec::new(DType::I64)
                    .shape(PartialShape::scalar())
                    .name("sentence"),
            ),
    )
    .batch_size(BATCH_SIZE)
    .allow_smaller_final_batch(true)
    .build()?;

    let coord = Coordinator::new();
    words.attach(&coord);
    let threads = pipeline.start(&coord)?;
    let mut got: Vec<(i64, String)> = Vec::new();
    for batch in words.iter() {
        let batch = batch?;
        let word = batch.tensor("word")?.as_slice::<Bytes>()?;
        let sentence = batch.tensor("sentence")?.as_slice::<i64>()?;
        assert!(word.len() <= BATCH_SIZE);
        for (w, &id) in word.iter().zip(sentence) {
            got.push((id, String::from_utf8(w.to_vec())?));
        }
    }
    coord.request_stop();
    coord.join(threads, Duration::from_secs(10))?;

    // One thread and a FIFO queue: the words come in reading order.
    let want: Vec<(i64, String)> = SENTENCES
        .iter()
        .enumerate()
        .filter(|&(id, _)| !held_out(id as i64))
        .flat_map(|(id, s)| s.split(' ').map(move |w| (id as i64, w.into())))
        .collect();
    assert_eq!(got, want);
    assert!(got.iter().all(|&(id, _)| !held_out(id)));
    println!(
        "{} sentences → {} word examples; sentences 0 and 5 filtered out",
        SENTENCES.len(),
        got.len()
    );
    Ok(())
}
