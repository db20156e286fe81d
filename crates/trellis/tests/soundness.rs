//! The randomized soundness test of `status`: random sequences of edits drawn from
//! a catalog that covers every kind of input a status depends on — bodies, private
//! helpers, clauses, properties, signatures, types, exports, decision entries, tags,
//! cram transcripts, Python references, hand-edited locks, added and removed files
//! — each followed (most of the time) by the commands `status` prescribes. After
//! every step the daemon's memoized status must equal the from-scratch answer of
//! `status --verify` (a fresh database, every trusted suite re-run).
//!
//! Seeds are fixed so CI is reproducible; a failure prints the seed and the steps
//! taken. `TRELLIS_SOUNDNESS_SEED` and `TRELLIS_SOUNDNESS_STEPS` explore further.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use serde_json::Value;
use support::Root;
use trellis_verify::splitmix::SplitMix64;

/// One reversible edit: a file and two texts it toggles between, or a file that
/// comes and goes.
enum Edit {
    Toggle {
        what: &'static str,
        file: &'static str,
        from: &'static str,
        to: &'static str,
    },
    File {
        what: &'static str,
        files: &'static [(&'static str, &'static str)],
    },
    /// Drops the derived rows of a lock by hand (one way; `trellis test` restores).
    TrimLock {
        what: &'static str,
        file: &'static str,
    },
}

const REVERSE_TR: &str = "---\nname: reverse\ntags: [sorting]\n---\n\n# reverse\n\nDrops the first element.\n\n```soil-sig\nreverse : (xs : List F64) -> List F64\n```\n\n```test basics\nreverse([1.0, 2.0]) -> [2.0]\n```\n";

const CATALOG: &[Edit] = &[
    Edit::Toggle {
        what: "a body",
        file: "csvstats/median.soil",
        from: "at s (n / 2)\n",
        to: "at s 0\n",
    },
    Edit::Toggle {
        what: "a private helper",
        file: "csvstats/_private.soil",
        from: "sum / 2.0",
        to: "sum * 0.5",
    },
    Edit::Toggle {
        what: "a predicate's body",
        file: "csvstats/sorted.soil",
        from: "a <= b",
        to: "a >= b",
    },
    Edit::Toggle {
        what: "a clause",
        file: "csvstats/median.tr",
        from: "bounded: result >= minimum xs and result <= maximum xs\n",
        to: "bounded: result >= minimum xs and result <= maximum xs\nwrong: result > maximum xs\n",
    },
    Edit::Toggle {
        what: "an unsatisfiable requires",
        file: "csvstats/median.tr",
        from: "finite: all_finite xs\n",
        to: "finite: all_finite xs\nnever: len xs < 0\n",
    },
    Edit::Toggle {
        what: "a callee's clause",
        file: "csvstats/sort.tr",
        from: "permutation: is_permutation xs result\n",
        to: "permutation: is_permutation xs result\nlonger: len result > len xs\n",
    },
    Edit::Toggle {
        what: "a property",
        file: "csvstats/sort.tr",
        from: "sort (reverse xs) == sort xs",
        to: "sort (reverse xs) == reverse (sort xs)",
    },
    Edit::Toggle {
        what: "a test case",
        file: "csvstats/median.tr",
        from: "median([5.0]) -> 5.0",
        to: "median([5.0]) -> 6.0",
    },
    Edit::Toggle {
        what: "a helper signature",
        file: "csvstats/_private.soil",
        from: "_merge_sort : (xs : List a) -> List a",
        to: "_merge_sort : (xs : List a) ->{Panic} List a",
    },
    Edit::Toggle {
        what: "a signature",
        file: "csvstats/sort.tr",
        from: "sort : (xs : List F64) -> List F64",
        to: "sort : (xs : List F64) ->{Panic} List F64",
    },
    Edit::Toggle {
        what: "a sum type",
        file: "inventory/StockError.tr",
        from: "  | DuplicateSku Utf8\n",
        to: "  | DuplicateSku Utf8\n  | Frozen Utf8\n",
    },
    Edit::Toggle {
        what: "a record type's fields",
        file: "inventory/Item.tr",
        from: "on_hand : I64",
        to: "on_hand : I64,\n  shelf : Utf8",
    },
    Edit::Toggle {
        what: "the exports",
        file: "csvstats/_module.tr",
        from: "median, mean, sort, sort_by, rank\n",
        to: "median, mean, sort, rank\n",
    },
    Edit::Toggle {
        what: "a decision entry",
        file: "_project.tr",
        from: "compare and sort by the total order",
        to: "compare and sort by the F64 total order",
    },
    Edit::Toggle {
        what: "a module decision entry",
        file: "csvstats/_module.tr",
        from: "BadCell carries the cell's index",
        to: "BadCell carries the index",
    },
    Edit::Toggle {
        what: "a new decision entry",
        file: "csvstats/_module.tr",
        from: "counted, so Row.line is the line an editor shows\n```",
        to: "counted, so Row.line is the line an editor shows\n- **new-rule** — a rule added after the lowerings\n```",
    },
    Edit::Toggle {
        what: "a tag",
        file: "soil.toml",
        from: "sorting = \"ordering values by the F64 total order or a key\"\n",
        to: "",
    },
    Edit::Toggle {
        what: "a cram transcript",
        file: "csvstats/read_file.tr",
        from: "$ trellis call csvstats::read_file '[\"missing.csv\"]'",
        to: "$ trellis call csvstats::median '[[3.0, 1.0, 2.0]]'\n2.0\n$ trellis call csvstats::read_file '[\"missing.csv\"]'",
    },
    Edit::Toggle {
        what: "a file a reference imports",
        file: "reference/refhelp.py",
        from: "return a / 2.0 + b / 2.0",
        to: "return 0.0",
    },
    Edit::Toggle {
        what: "prose",
        file: "csvstats/median.tr",
        from: "The middle value",
        to: "The middle value (the 50th percentile)",
    },
    Edit::File {
        what: "a definition shadowing a builtin",
        files: &[
            ("csvstats/reverse.tr", REVERSE_TR),
            ("csvstats/reverse.soil", "reverse xs = drop 1 xs\n"),
        ],
    },
    Edit::TrimLock {
        what: "a lock's rows trimmed by hand",
        file: "csvstats/sort.lock",
    },
];

/// The examples, with `stats.py` importing a helper module so reference imports
/// are part of the catalog, tested green before the walk starts.
fn prepared_root() -> Root {
    let root = Root::examples();
    root.import_a_reference_helper();
    let root = root.start_daemon();
    root.run(&["test"]);
    root
}

fn apply(root: &Root, edit: &Edit) -> String {
    match edit {
        Edit::Toggle {
            what,
            file,
            from,
            to,
        } => {
            let text = root.read(file);
            // Toward `to` when the file holds `from` (and not already `to`, for
            // edits that extend `from`), else back.
            let forward = text.contains(from) && (to.is_empty() || !text.contains(to));
            let (from, to) = if forward { (*from, *to) } else { (*to, *from) };
            if from.is_empty() {
                // An edit that removed text, toggled back: restore it at the end.
                root.write(file, &format!("{text}{to}"));
            } else if text.contains(from) {
                root.write(file, &text.replacen(from, to, 1));
            }
            format!("{what} ({file})")
        }
        Edit::File { what, files } => {
            let present = root.path(files[0].0).exists();
            for (file, text) in *files {
                if present {
                    let _ = std::fs::remove_file(root.path(file));
                } else {
                    root.write(file, text);
                }
            }
            format!("{what} ({})", if present { "removed" } else { "added" })
        }
        Edit::TrimLock { what, file } => {
            let Ok(mut lock) = serde_json::from_str::<Value>(&root.read(file)) else {
                return format!("{what} (unreadable, left)");
            };
            if let Some(rows) = lock["tests"].as_array_mut() {
                rows.retain(|row| !row["name"].as_str().unwrap_or("").starts_with("derived:"));
            }
            root.write(file, &serde_json::to_string_pretty(&lock).expect("JSON"));
            format!("{what} ({file})")
        }
    }
}

/// Runs every `trellis …` command the status rows prescribe.
fn follow_prescriptions(root: &Root, log: &mut Vec<String>) {
    let status = root.status(true);
    let mut commands: Vec<String> = status["definitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|row| row["fix"].as_str())
        .flat_map(|fix| {
            fix.split(" && ")
                .map(|command| command.trim_end_matches(')').to_owned())
                .collect::<Vec<_>>()
        })
        // The walk is about what status says, not about lowering: an agent's
        // `trellis lower` is left out (it needs a provider).
        .filter(|command| {
            command.starts_with("trellis ")
                && !command.starts_with("trellis lower ")
                && !command.contains('<')
        })
        .collect();
    commands.dedup();
    for command in commands {
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let run = root.run(&args);
        log.push(format!("  $ {command} → exit {:?}", run.code));
    }
}

fn walk(seed: u64, steps: usize) {
    let seed = std::env::var("TRELLIS_SOUNDNESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(seed);
    let steps = std::env::var("TRELLIS_SOUNDNESS_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(steps);
    let root = prepared_root();
    let mut random = SplitMix64::new(seed);
    let mut log = Vec::new();
    for step in 0..steps {
        let edit = random.pick(CATALOG).expect("a non-empty catalog");
        log.push(format!("step {step}: {}", apply(&root, edit)));
        if random.chance(2, 3) {
            follow_prescriptions(&root, &mut log);
        }
        let verify = root.run(&["status", "--verify"]);
        assert!(
            verify.code == Some(0),
            "status disagrees with a fresh recomputation after step {step} (seed {seed}):\n{}\n{}\nsteps:\n{}",
            verify.stdout,
            verify.stderr,
            log.join("\n")
        );
    }
}

#[test]
fn memoized_status_equals_a_fresh_recomputation_seed_1() {
    walk(1, 40);
}

#[test]
fn memoized_status_equals_a_fresh_recomputation_seed_2() {
    walk(2, 40);
}

#[test]
fn memoized_status_equals_a_fresh_recomputation_seed_3() {
    walk(3, 40);
}

#[test]
fn memoized_status_equals_a_fresh_recomputation_seed_4() {
    walk(4, 40);
}

#[test]
fn memoized_status_equals_a_fresh_recomputation_seed_5() {
    walk(5, 40);
}
