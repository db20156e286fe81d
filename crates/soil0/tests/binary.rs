//! The `soil0` binary against the library: same bytes on every example, one
//! JSON document on failure, and a clean exit when the reader goes away.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn soil0() -> Command {
    Command::new(env!("CARGO_BIN_EXE_soil0"))
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example_files() -> Vec<String> {
    let mut files = Vec::new();
    for module in std::fs::read_dir(workspace_root().join("examples"))
        .into_iter()
        .flatten()
        .flatten()
    {
        for entry in std::fs::read_dir(module.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if entry.path().extension().is_some_and(|e| e == "soil") {
                files.push(entry.path().display().to_string());
            }
        }
    }
    files.sort();
    files
}

#[test]
fn binary_and_library_agree_on_every_example() {
    let files = example_files();
    assert!(!files.is_empty(), "no examples found");
    for flag in [None, Some("--hash-form")] {
        let mut args = vec!["print".to_owned()];
        args.extend(flag.map(str::to_owned));
        args.extend(files.iter().cloned());
        let output = soil0().args(&args).output().expect("soil0 runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stdout)
        );
        let mut library = Vec::new();
        let code = soil0::cli::run(&args, &soil0::cli::OsHost, &mut library).expect("write");
        assert_eq!(code, 0);
        assert_eq!(output.stdout, library, "{flag:?}");
    }
}

#[test]
fn a_bad_file_yields_exactly_one_json_document_and_exit_1() {
    let dir = std::env::temp_dir().join(format!("soil0-binary-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bad = dir.join("bad.soil");
    std::fs::write(&bad, "f x = match x with | _ -> 1\n").expect("write");
    let output = soil0().arg("print").arg(&bad).output().expect("soil0 runs");
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8(output.stdout).expect("utf-8");
    let document: serde_json::Value =
        serde_json::from_str(text.trim_end()).expect("one JSON document");
    assert_eq!(document["errors"][0]["code"], "missing-end");
    assert_eq!(
        document["errors"][0]["file"]["value"],
        bad.display().to_string()
    );
    assert!(output.stderr.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn usage_errors_exit_2() {
    let output = soil0().arg("print").output().expect("soil0 runs");
    assert_eq!(output.status.code(), Some(2));
    let document: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("one JSON document");
    assert_eq!(document["errors"][0]["code"], "usage-error");
}

#[test]
fn a_closed_pipe_is_a_clean_exit() {
    // Enough output to overflow the pipe buffer after the reader is gone.
    let files = example_files();
    let mut args = vec!["print".to_owned()];
    for _ in 0..200 {
        args.extend(files.iter().cloned());
    }
    let mut child = soil0()
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .expect("stdout")
        .read_exact(&mut first)
        .expect("some output");
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    let status = child.wait().expect("wait");
    assert!(status.success(), "exit {status:?}, stderr {stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}
