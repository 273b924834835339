//! Runs the programs in `examples/`: each asserts its own results, so
//! `cargo test` checks that the examples still work as documented (as
//! the engine crate's `tests/examples.rs` does for its own).
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
    plan => "../examples/plan.rs",
}
