//! `trellis lsp` driven by a real third-party client: pytest-lsp 1.0.1 (pygls
//! 2.1.1's client), installed by `.ci/run` into `.ci/cache/lsp-py`, runs
//! `test-data/lsp/test_trellis_lsp.py` against the binary over a copy of
//! `examples/` — diagnostics on open (the open hole as information), hover,
//! go to definition and references across `.tr`, `.soil` and `.lock`,
//! formatting, an edit that breaks a caller and its undo, symbols, completion,
//! lenses, a file outside the root and a broken `soil.toml`. A missing client
//! fails the test with the install command; it never skips.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::process::Command;

use support::{Root, TRELLIS, workspace};

/// The pinned install (.ci/run's line, exactly).
const INSTALL: &str = "python3 -m pip install --target .ci/cache/lsp-py pytest-lsp==1.0.1 \
                       pygls==2.1.1 lsprotocol==2025.0.0 pytest==9.2.0 pytest-asyncio==1.5.0";

#[test]
fn pytest_lsp_drives_the_server_over_the_examples() {
    let cache = workspace().join(".ci/cache/lsp-py");
    assert!(
        cache.join("pytest_lsp-1.0.1.dist-info").is_dir(),
        "{} has no pytest-lsp 1.0.1: the LSP client is not installed. Run the install step \
         of .ci/run ({INSTALL}) from the workspace root and try again.",
        cache.display()
    );
    let root = Root::examples();
    // `-S`: no site-packages, so only the pinned install (on PYTHONPATH) loads —
    // a pytest plugin installed on the machine cannot join in.
    let output = Command::new("python3")
        .args(["-S", "-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .args(["-o", "asyncio_mode=auto"])
        .args(["-o", "asyncio_default_fixture_loop_scope=function"])
        .arg(workspace().join("test-data/lsp/test_trellis_lsp.py"))
        .current_dir(workspace().join("test-data/lsp"))
        .env("PYTHONPATH", &cache)
        .env("TRELLIS_BIN", TRELLIS)
        .env("TRELLIS_LSP_ROOT", &root.root)
        .env("XDG_RUNTIME_DIR", &root.runtime)
        .env_remove("TRELLIS_ROOT")
        .output()
        .expect("start python3");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "pytest-lsp failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    // Every test of the file ran: none skipped, none deselected.
    let tests = support::workspace_file("test-data/lsp/test_trellis_lsp.py")
        .lines()
        .filter(|line| line.starts_with("async def test_"))
        .count();
    assert!(tests >= 7, "the client's test file lost its tests");
    assert!(
        stdout.contains(&format!("{tests} passed")) && !stdout.contains("skipped"),
        "expected {tests} passed:\n{stdout}"
    );
}
