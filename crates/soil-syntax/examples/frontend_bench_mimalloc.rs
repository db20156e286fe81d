//! `frontend_bench` with mimalloc as the global allocator, the configuration the
//! `soil0` binary can adopt; see that example for usage.

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "support/bench.rs"]
mod bench;

fn main() {
    bench::main("mimalloc");
}
