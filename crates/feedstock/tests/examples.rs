//! Runs every program in `examples/`: each asserts its own results, so
//! `cargo test` checks that the examples still work as documented.
//!
//! Each example is compiled in as a module whose `main` is called. The
//! modules are private to this test crate, so their `pub fn main` is
//! allowed to be unreachable from outside it.

/// Declares each example as a module and a test that runs its `main`.
macro_rules! run_examples {
    ($($name:ident => $path:literal),* $(,)?) => {
        $(
            #[allow(unreachable_pub)]
            #[path = $path]
            mod $name;

            #[test]
            fn $name() {
                if let Err(e) = $name::main() {
                    panic!("example {} failed: {e}", stringify!($name));
                }
            }
        )*
    };
}

run_examples! {
    batching => "../examples/batching.rs",
    corrupt_records => "../examples/corrupt_records.rs",
    csv_files => "../examples/csv_files.rs",
    custom_decoder => "../examples/custom_decoder.rs",
    custom_reader => "../examples/custom_reader.rs",
    exact_resume => "../examples/exact_resume.rs",
    feeding => "../examples/feeding.rs",
    filtering_and_multiple_examples =>
        "../examples/filtering_and_multiple_examples.rs",
    fixed_length_cifar => "../examples/fixed_length_cifar.rs",
    front_door => "../examples/front_door.rs",
    global_shuffle => "../examples/global_shuffle.rs",
    multiple_pipelines => "../examples/multiple_pipelines.rs",
    preloaded => "../examples/preloaded.rs",
    preprocessing => "../examples/preprocessing.rs",
    shuffle_batch_join => "../examples/shuffle_batch_join.rs",
    sparse_input => "../examples/sparse_input.rs",
    tfrecords => "../examples/tfrecords.rs",
}
