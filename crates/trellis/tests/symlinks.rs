//! One walker, one symlink rule (design §9.7): no command follows a symbolic
//! link. A link to `.` (a loop) and a link to `/` inside a module change nothing
//! any command reports or writes: `soil.lock` does not grow by phantom entries
//! and no walk leaves the root.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use support::Root;

/// Every command that walks the root, through the daemon and in-process.
const COMMANDS: &[&[&str]] = &[
    &["check"],
    &["status", "--json"],
    &["refresh"],
    &["adopt"],
    &["test"],
    &["context", "csvstats::median", "--budget", "4000"],
    &["call", "csvstats::median", "[[3.0, 1.0, 2.0]]"],
    &["toolchain", "update"],
];

/// Runs every command both ways and returns what they printed, with the
/// daemon's timing fields and other run-dependent lines dropped.
fn outputs(root: &Root) -> Vec<(String, Option<i32>, String)> {
    let mut out = Vec::new();
    for daemon in [false, true] {
        for command in COMMANDS {
            let mut args: Vec<&str> = if daemon { vec![] } else { vec!["--no-daemon"] };
            args.extend_from_slice(command);
            let run = root.run(&args);
            let stdout = if command[0] == "status" {
                let mut json = run.json();
                json.as_object_mut().map(|o| o.remove("timings"));
                json.to_string()
            } else {
                // `context` names the directory it wrote, under this root.
                let root = root.root.display().to_string();
                run.stdout.replace(&root, "ROOT")
            };
            out.push((args.join(" "), run.code, stdout));
        }
    }
    out
}

#[test]
fn a_link_loop_and_a_link_to_the_filesystem_root_are_not_followed() {
    let plain = Root::examples();
    let expected = outputs(&plain);
    let manifest = plain.read("soil.lock");

    let linked = Root::examples();
    std::os::unix::fs::symlink(".", linked.path("csvstats/loop")).expect("link loop");
    let loop_only = outputs(&linked);
    assert_eq!(
        linked.read("soil.lock"),
        manifest,
        "soil.lock changed through csvstats/loop"
    );
    assert_eq!(loop_only, expected);

    std::os::unix::fs::symlink("/", linked.path("csvstats/rootlink")).expect("link /");
    let both = outputs(&linked);
    assert_eq!(
        linked.read("soil.lock"),
        manifest,
        "soil.lock changed through csvstats/rootlink"
    );
    assert_eq!(both, expected);
}
