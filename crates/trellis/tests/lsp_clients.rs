//! `trellis lsp` driven by a real third-party client: pytest-lsp (pygls's client,
//! pinned in test-data/clients.toml and installed by `cargo xtask provision`), runs
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

#[test]
fn pytest_lsp_drives_the_server_over_the_examples() {
    let cache = xtask::clients::require("pytest-lsp");
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
