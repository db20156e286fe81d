# Trellis tasks. `just --list` shows them all.

# The main job: check the example root and show where every definition stands.
examples:
    TRELLIS_ROOT=examples cargo run -q --release -p trellis -- check
    TRELLIS_ROOT=examples cargo run -q --release -p trellis -- status --all

# Every example printed in canonical form.
print-examples:
    cargo run -q --release -p soil0 -- print examples/*/*.soil

# The whole test suite, the README's test command: installs the pinned clients
# the suite drives (test-data/clients.toml), then runs `cargo test --workspace`
# (expect-test goldens: UPDATE_EXPECT=1 just test to bless).
test:
    cargo xtask test

# Benchmarks: each prints its figures and ratios (TRELLIS_BENCH_QUICK=1 leaves
# the 20,000-definition root out of edit_bench).
bench:
    cargo build -q --release -p trellis
    cargo run -q --release -p soil-syntax --example frontend_bench_mimalloc
    cargo run -q --release -p soil-syntax --example frontend_bench
    cargo run -q --release -p soil-eval --example eval_bench
    cargo run -q --release -p soil-eval --example cost_bench
    cargo run -q --release -p soil0 --example wordcount_bench
    cargo run -q --release -p trellis-db --example db_bench
    cargo run -q --release -p trellis-db --example joins_bench
    cargo run -q --release -p trellis-verify --example property_bench -- 80
    cargo run -q --release -p trellis-verify --example oracle_bench
    cargo run -q --release -p trellis --example daemon_bench
    cargo run -q --release -p trellis --example edit_bench
    cargo run -q --release -p trellis --example context_bench
    cargo run -q --release -p trellis --example mcp_bench
    cargo run -q --release -p trellis --example lower_bench
    cargo run -q --release -p trellis --example jobs_bench -- 200 8
    cargo run -q --release -p trellis --example lsp_bench

# An edit's work at 2,000 and at 20,000 definitions, counted (design §7.14):
# the scale test alone, in release.
scale:
    cargo test -q --release -p trellis-db --test scale -- --nocapture

# Every fuzz target, five minutes each in release (the suite runs a few cases
# of each from a fixed seed). A failure prints its seed and case; replay it
# with the target's _SEED and _CASES variables (see each target's doc).
fuzz:
    TRELLIS_LSP_FUZZ_SECONDS=300 cargo test -p trellis-lsp --release --test fuzz -- --nocapture
    TRELLIS_MCP_FUZZ_SECONDS=300 cargo test -p trellis-mcp --release --test fuzz -- --nocapture
    TRELLIS_RPC_FUZZ_SECONDS=300 cargo test -p trellis-rpc --release --test fuzz -- --nocapture
    SOIL_CHECK_FUZZ_SECONDS=300 cargo test -p soil-types --release --test fuzz -- --nocapture

fmt:
    cargo fmt --all

lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings

# Everything CI runs.
ci: lint test
