//! Front-end throughput with the system allocator: generates a deterministic
//! multi-megabyte Soil file with a realistic mix of items and reports the median
//! MB/s of lex, parse, print, parse + print and friends on one core.
//!
//! `cargo run --release -p soil-syntax --example frontend_bench [MEGABYTES] [ITERATIONS]`
//!
//! Build `frontend_bench_mimalloc` too and run `frontend_bench --compare` to see
//! both allocators measured in alternation within one run.

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

#[path = "support/bench.rs"]
mod bench;

fn main() {
    bench::main("system");
}
