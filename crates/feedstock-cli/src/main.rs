//! The `feedstock` command.

fn main() {
    println!("feedstock {}", env!("CARGO_PKG_VERSION"));
}
