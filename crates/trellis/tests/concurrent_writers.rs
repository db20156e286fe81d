//! Writers that never lose results: many `--no-daemon` processes testing and
//! adopting one root at the same moment all succeed, and the root ends with
//! every result recorded — the same locks, byte for byte, as one sequential run
//! writes (lock-schema §1.6).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use support::{Root, workspace};
use trellis_lock::Lock;

/// Every `.lock` under `dir` (soil.lock included) by relative path.
fn locks(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(dir.to_owned(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let name = entry.file_name().into_string().expect("UTF-8 name");
            let file_type = entry.file_type().expect("file type");
            if file_type.is_dir() {
                if !name.starts_with('.') {
                    stack.push((entry.path(), format!("{prefix}{name}/")));
                }
            } else if name.ends_with(".lock") {
                out.insert(
                    format!("{prefix}{name}"),
                    std::fs::read_to_string(entry.path()).expect("read lock"),
                );
            }
        }
    }
    out
}

#[test]
fn parallel_test_and_adopt_processes_lose_no_results() {
    let root = Root::examples();
    // Forget every recorded result, and note which definitions are lowered.
    let mut lowered = Vec::new();
    for (relative, text) in locks(&root.root) {
        if let Ok(Lock::Function(mut lock)) = trellis_lock::read_lock(&text) {
            if lock.lowering.is_some() {
                let name = relative.trim_end_matches(".lock").replace('/', "::");
                lowered.push(name);
            }
            lock.tests.clear();
            lock.oracles.clear();
            std::fs::write(
                root.path(&relative),
                trellis_lock::write_lock(&Lock::Function(lock)),
            )
            .expect("write");
        }
    }
    assert!(lowered.len() > 10, "{lowered:?}");
    let mut commands: Vec<Vec<String>> = lowered
        .iter()
        .map(|def| vec!["--no-daemon".into(), "test".into(), def.clone()])
        .collect();
    for _ in 0..3 {
        commands.push(vec!["--no-daemon".into(), "adopt".into()]);
    }
    let children: Vec<_> = commands
        .iter()
        .map(|args| {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let child = root
                .command(&args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start trellis");
            (args.join(" "), child)
        })
        .collect();
    for (command, child) in children {
        let output = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() && !stderr.contains("cannot write"),
            "`trellis {command}` failed: {output:?}"
        );
    }
    assert_eq!(
        locks(&root.root),
        locks(&workspace().join("examples")),
        "a concurrent writer lost results"
    );
}
