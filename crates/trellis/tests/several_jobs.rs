//! Several lowering jobs at once (design §4.9, `trellis lower --jobs N`): a
//! generated module lowered through the scripted provider, whose agents think
//! (sleep) before each tool call. What must hold whatever the timing: a
//! definition starts only after the callees it may call have landed; jobs do
//! overlap (seen in the event stream, never measured by a clock); drafts that
//! add private helpers land in queue order; a callee that fails holds its
//! callers, with the reason; `trellis jobs` shows the running set and what
//! each queued entry waits on; and the root ends byte for byte as `--jobs 1`
//! leaves it.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod generated_module;
mod support;

use std::collections::BTreeMap;
use std::process::{Child, Stdio};

use generated_module::{Generated, qualified};
use serde_json::Value;
use support::lowering::lower_output;
use support::{Root, Run, TempDir};

/// A generated root with its daemon, a providers.toml and the playbooks.
struct Lowering {
    root: Root,
    config: TempDir,
}

impl Lowering {
    fn new(defs: &[Generated]) -> Lowering {
        let source = TempDir::new("gen");
        let config = TempDir::new("cfg");
        let playbooks = config.path().join("playbooks");
        generated_module::write(source.path(), &playbooks, defs);
        support::lowering::write_scripted_provider(&config, &playbooks, "");
        let root = Root::copy_of(source.path());
        root.run(&["--no-daemon", "toolchain", "update"]).ok();
        root.run(&["--no-daemon", "adopt", "gen"]).ok();
        root.run(&["--no-daemon", "adopt", "project"]).ok();
        Lowering {
            root: root.start_daemon(),
            config,
        }
    }

    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut command = self.root.command(args);
        command.env("XDG_CONFIG_HOME", self.config.path());
        command
    }

    fn run(&self, args: &[&str]) -> Run {
        Run::from(self.command(args).output().expect("run trellis"))
    }

    fn spawn(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn trellis lower")
    }
}

/// The position of the first event of `def` in `state`.
fn position(events: &[Value], def: &str, state: &str) -> usize {
    events
        .iter()
        .position(|event| event["def"] == def && event["state"] == state)
        .unwrap_or_else(|| panic!("no {state} event for {def}: {events:#?}"))
}

/// The most jobs the event stream shows running at once: a job runs from its
/// `started` event to its outcome.
fn most_at_once(events: &[Value]) -> usize {
    let mut running = 0usize;
    let mut most = 0;
    for event in events {
        match event["state"].as_str() {
            Some("started") => running += 1,
            Some("green" | "partial" | "failed" | "question" | "invalidated" | "cancelled") => {
                running = running.saturating_sub(1);
            }
            _ => {}
        }
        most = most.max(running);
    }
    most
}

/// Eight definitions: a chain f00 ← f01 ← f02, leaves f03, f04, f05 (f04 and
/// f05 add private helpers; f04 thinks longest, so f05 is done first and must
/// wait to land after it), f06 calling f02 and f03, f07 calling f05 and f06.
fn eight() -> Vec<Generated> {
    let def = |callees: &[usize], think_ms: u64, helper: bool| Generated {
        callees: callees.to_vec(),
        helper,
        think_ms,
        wrong: false,
    };
    vec![
        def(&[], 150, false),
        def(&[0], 150, false),
        def(&[1], 150, false),
        def(&[], 150, false),
        def(&[], 400, true),
        def(&[], 50, true),
        def(&[2, 3], 150, false),
        def(&[5, 6], 150, false),
    ]
}

fn lower(defs: &[Generated], jobs: &str) -> (Vec<Value>, Vec<(String, Option<String>)>) {
    let lowering = Lowering::new(defs);
    let run = lowering.run(&["lower", "--json", "--jobs", jobs]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let (events, summary) = lower_output(&run);
    assert_eq!(
        summary["outcomes"].as_array().map(Vec::len),
        Some(defs.len()),
        "{summary}"
    );
    let statuses = lowering.root.statuses(true);
    assert!(
        statuses.values().all(|status| status == "green"),
        "every row green after lowering: {statuses:?}"
    );
    let landed = generated_module::landed(&lowering.root.root, defs.len());
    (events, landed)
}

#[test]
fn four_jobs_at_once_lower_callee_first_and_land_what_one_at_a_time_lands() {
    let defs = eight();
    let (serial_events, serial) = lower(&defs, "1");
    let (events, concurrent) = lower(&defs, "4");
    assert_eq!(most_at_once(&serial_events), 1, "{serial_events:#?}");
    assert!(
        most_at_once(&events) >= 2,
        "no two jobs ever ran at once: {events:#?}"
    );
    // Callee-first: a caller starts only after each callee landed.
    for (index, def) in defs.iter().enumerate() {
        for &callee in &def.callees {
            assert!(
                position(&events, &qualified(callee), "green")
                    < position(&events, &qualified(index), "started"),
                "{} started before its callee {} landed",
                qualified(index),
                qualified(callee)
            );
        }
    }
    // f05 was done first yet landed after f04: helpers land in queue order.
    assert!(
        position(&events, &qualified(4), "green") < position(&events, &qualified(5), "green"),
        "{events:#?}"
    );
    let private = concurrent
        .iter()
        .find(|(path, _)| path == "gen/_private.soil")
        .and_then(|(_, text)| text.clone())
        .expect("the helpers landed");
    assert!(
        private.find("_f04_step") < private.find("_f05_step"),
        "{private}"
    );
    for ((path, one), (_, four)) in serial.iter().zip(&concurrent) {
        assert!(one.is_some(), "{path} was written");
        assert_eq!(one, four, "{path} differs between --jobs 1 and --jobs 4");
    }
}

#[test]
fn a_failed_callee_holds_its_callers_with_the_reason_and_the_rest_lowers() {
    // f00 fails its gate; f01 calls it, f02 calls f01; f03 is independent.
    let defs = vec![
        Generated {
            think_ms: 50,
            wrong: true,
            ..Generated::default()
        },
        Generated {
            callees: vec![0],
            think_ms: 50,
            ..Generated::default()
        },
        Generated {
            callees: vec![1],
            think_ms: 50,
            ..Generated::default()
        },
        Generated {
            think_ms: 50,
            ..Generated::default()
        },
    ];
    let lowering = Lowering::new(&defs);
    let run = lowering.run(&["lower", "--json", "--jobs", "3"]);
    assert_eq!(run.code, Some(1), "not all green: {run:?}");
    let (events, summary) = lower_output(&run);
    let outcomes: BTreeMap<String, (String, Value)> = summary["outcomes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|outcome| {
            (
                outcome["def"].as_str().unwrap_or("?").to_owned(),
                (
                    outcome["state"].as_str().unwrap_or("?").to_owned(),
                    outcome["detail"].clone(),
                ),
            )
        })
        .collect();
    assert_eq!(outcomes["gen::f00"].0, "failed", "{outcomes:?}");
    assert_eq!(outcomes["gen::f03"].0, "green", "{outcomes:?}");
    assert_eq!(outcomes["gen::f01"].0, "held");
    assert_eq!(
        outcomes["gen::f01"].1["reason"],
        "its callee gen::f00 ended failed"
    );
    assert_eq!(outcomes["gen::f02"].0, "held");
    assert_eq!(
        outcomes["gen::f02"].1["reason"],
        "its callee gen::f01 is held (gen::f00 ended failed)"
    );
    // Held callers never started: no job, nothing in the root.
    for held in ["gen::f01", "gen::f02"] {
        assert!(
            !events
                .iter()
                .any(|event| event["def"] == held && event["state"] == "started"),
            "{held} started: {events:#?}"
        );
    }
    assert!(!lowering.root.path("gen/f01.soil").exists());
    // The human lines say why, and `trellis jobs` lists them.
    let human = lowering.run(&["lower", "gen::f01", "gen::f00", "--jobs", "2"]);
    assert!(
        human
            .stdout
            .contains("gen::f01: held — its callee gen::f00 ended failed"),
        "{human:?}"
    );
    let jobs = lowering.run(&["jobs", "--json"]).ok().json();
    let finished = jobs["finished"].as_array().cloned().unwrap_or_default();
    assert!(
        finished
            .iter()
            .any(|job| job["def"] == "gen::f02" && job["outcome"] == "held"),
        "{jobs}"
    );
}

#[test]
fn trellis_jobs_shows_the_running_set_and_what_each_queued_entry_waits_on() {
    // Two slow leaves and their caller: both leaves run, the caller waits on them.
    let defs = vec![
        Generated {
            think_ms: 700,
            ..Generated::default()
        },
        Generated {
            think_ms: 700,
            ..Generated::default()
        },
        Generated {
            callees: vec![0, 1],
            think_ms: 10,
            ..Generated::default()
        },
    ];
    let lowering = Lowering::new(&defs);
    let child = lowering.spawn(&["lower", "--json", "--jobs", "2"]);
    let mut seen = Value::Null;
    support::wait_until("two jobs running and one waiting", || {
        seen = lowering.run(&["jobs", "--json"]).ok().json();
        seen["running_set"].as_array().map(Vec::len) == Some(2)
    });
    assert_eq!(seen["pending"][0]["def"], "gen::f02", "{seen}");
    assert_eq!(
        seen["pending"][0]["waits_on"],
        serde_json::json!(["gen::f00", "gen::f01"]),
        "{seen}"
    );
    assert_eq!(
        seen["running"]["def"], "gen::f00",
        "the first started: {seen}"
    );
    let human = lowering.run(&["jobs"]).ok();
    assert!(
        human
            .stdout
            .contains("queued: gen::f02 (waits on gen::f00, gen::f01)"),
        "{human:?}"
    );
    assert_eq!(
        human.stdout.matches("running: gen::f0").count(),
        2,
        "{human:?}"
    );
    let run = Run::from(child.wait_with_output().expect("wait for lower"));
    assert_eq!(run.code, Some(0), "{run:?}");
}
