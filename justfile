# Trellis tasks. `just --list` shows them all.

# The main job: every example printed in canonical form.
examples:
    cargo run -q --release -p soil0 -- print examples/*/*.soil

# The whole test suite (expect-test goldens: UPDATE_EXPECT=1 just test to bless).
test:
    cargo test --workspace

# Benchmarks: each prints its figures and ratios.
bench:
    cargo run -q --release -p soil-syntax --example frontend_bench

fmt:
    cargo fmt --all

lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings

# Everything CI runs.
ci: lint test
