//! A catalog of reversible edits to a copy of `examples/`, one or more of every
//! kind of input a status depends on — formal blocks, bodies, private helpers,
//! types, decisions, `soil.toml`, files added, renamed and deleted, reference
//! data, hand-edited locks — for the randomized tests of status (issue 40).
//! Each edit toggles: applied to a root that holds its `from` state it moves to
//! `to`, and back otherwise, so a long random walk keeps visiting both sides.

use serde_json::Value;

use super::Root;

/// One reversible edit.
pub enum Edit {
    /// A file toggled between two texts (an empty `from` appends `to`).
    Toggle {
        what: &'static str,
        file: &'static str,
        from: &'static str,
        to: &'static str,
    },
    /// Files that come and go together.
    Files {
        what: &'static str,
        files: &'static [(&'static str, &'static str)],
    },
    /// A file or directory moved to another name and back.
    Rename {
        what: &'static str,
        from: &'static str,
        to: &'static str,
    },
    /// A lock edited by hand; `trellis` restores it by the command status
    /// prescribes (one way: nothing toggles it back).
    Lock {
        what: &'static str,
        file: &'static str,
        how: LockEdit,
    },
}

/// How a lock is edited by hand.
#[derive(Clone, Copy)]
pub enum LockEdit {
    /// The derived rows dropped.
    Trim,
    /// The first passing row recorded as failing.
    Flip,
    /// `accepted: true` written without anyone's acceptance.
    Accept,
    /// Text appended after the JSON (toggles: the lock is unreadable, then
    /// readable again).
    Corrupt,
}

const REVERSE_TR: &str = "---\nname: reverse\ntags: [sorting]\n---\n\n# reverse\n\nDrops the first element.\n\n```soil-sig\nreverse : (xs : List F64) -> List F64\n```\n\n```test basics\nreverse([1.0, 2.0]) -> [2.0]\n```\n";

const UNTESTED_TR: &str = "---\nname: untested\n---\n\n# untested\n\nNo test block: the spec is invalid.\n\n```soil-sig\nuntested : (xs : List F64) -> I64\n```\n";

const TWICE_TR: &str = "---\nname: twice\n---\n\n# twice\n\nEach number doubled.\n\n```soil-sig\ntwice : (xs : List F64) -> List F64\n```\n\n```test basics\ntwice([1.0, 2.5]) -> [2.0, 5.0]\n```\n";

/// Suffix of a corrupted lock (see [`LockEdit::Corrupt`]).
const CORRUPTION: &str = "} hand-edited\n";

/// Every edit of the catalog. `heavy` edits (a whole module renamed) are for
/// the tests whose steps are cheap.
pub fn catalog(heavy: bool) -> Vec<Edit> {
    let mut edits = vec![
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
            what: "a callee's private helper",
            file: "csvstats/_private.soil",
            from: "      runs\n",
            to: "      runs ++ []\n",
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
            what: "a malformed test case",
            file: "csvstats/all_finite.tr",
            from: "all_finite([]) -> true",
            to: "all_finite([,]) -> true",
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
            what: "a type's prose",
            file: "csvstats/Row.tr",
            from: "",
            to: "\nA note added to the prose.\n",
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
            what: "a comment in soil.toml",
            file: "soil.toml",
            from: "",
            to: "# a comment\n",
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
            what: "reference data",
            file: "reference/table.csv",
            from: "x,1\n",
            to: "x,2\n",
        },
        Edit::Toggle {
            what: "prose",
            file: "csvstats/median.tr",
            from: "The middle value",
            to: "The middle value (the 50th percentile)",
        },
        Edit::Files {
            what: "a definition shadowing a builtin",
            files: &[
                ("csvstats/reverse.tr", REVERSE_TR),
                ("csvstats/reverse.soil", "reverse xs = drop 1 xs\n"),
            ],
        },
        Edit::Files {
            what: "a hand-written definition",
            files: &[
                ("csvstats/twice.tr", TWICE_TR),
                (
                    "csvstats/twice.soil",
                    "twice xs = map (\\x -> x * 2.0) xs\n",
                ),
            ],
        },
        Edit::Files {
            what: "a spec without a test block",
            files: &[
                ("csvstats/untested.tr", UNTESTED_TR),
                ("csvstats/untested.soil", "untested xs = len xs\n"),
            ],
        },
        Edit::Rename {
            what: "a body's file",
            from: "csvstats/contains.soil",
            to: "csvstats/contains.soil.away",
        },
        Edit::Rename {
            what: "a type's lock",
            from: "inventory/Movement.lock",
            to: "inventory/Movement.lock.away",
        },
        Edit::Lock {
            what: "a lock's rows trimmed by hand",
            file: "csvstats/sort.lock",
            how: LockEdit::Trim,
        },
        Edit::Lock {
            what: "a result flipped by hand",
            file: "csvstats/rank.lock",
            how: LockEdit::Flip,
        },
        Edit::Lock {
            what: "an acceptance written by hand",
            file: "csvstats/finite.lock",
            how: LockEdit::Accept,
        },
        Edit::Lock {
            what: "a lock corrupted by hand",
            file: "inventory/stock_value.lock",
            how: LockEdit::Corrupt,
        },
    ];
    if heavy {
        edits.push(Edit::Rename {
            what: "a module",
            from: "inventory",
            to: "stock",
        });
    }
    edits
}

/// The examples with `stats.py` importing a helper module and a data file
/// beside it (so reference imports and data are part of the catalog), tested
/// once so its suites are green.
pub fn prepared_root() -> Root {
    let root = Root::examples();
    root.import_a_reference_helper();
    root.write("reference/table.csv", "x,1\n");
    root.run(&["--no-daemon", "test"]);
    root
}

/// Applies `edit` to `root`, toward its `to` side when the root holds its
/// `from` side, and back otherwise; says what it did.
pub fn apply(root: &Root, edit: &Edit) -> String {
    match edit {
        Edit::Toggle {
            what,
            file,
            from,
            to,
        } => {
            let Ok(text) = std::fs::read_to_string(root.path(file)) else {
                return format!("{what} ({file} is gone, left)");
            };
            if from.is_empty() {
                // An appended text, or (`to` empty) one cut from the end.
                let toggled = match text.strip_suffix(*to) {
                    Some(before) => before.to_owned(),
                    None => format!("{text}{to}"),
                };
                root.write(file, &toggled);
            } else if to.is_empty() {
                let toggled = match text.contains(*from) {
                    true => text.replacen(*from, "", 1),
                    false => format!("{text}{from}"),
                };
                root.write(file, &toggled);
            } else {
                let forward = text.contains(*from) && !text.contains(*to);
                let (from, to) = if forward { (*from, *to) } else { (*to, *from) };
                if text.contains(from) {
                    root.write(file, &text.replacen(from, to, 1));
                }
            }
            format!("{what} ({file})")
        }
        Edit::Files { what, files } => {
            let present = root.path(files[0].0).exists();
            for (file, text) in *files {
                if present {
                    let _ = std::fs::remove_file(root.path(file));
                    let _ = std::fs::remove_file(root.path(&file.replace(".tr", ".lock")));
                } else {
                    root.write(file, text);
                }
            }
            format!("{what} ({})", if present { "removed" } else { "added" })
        }
        Edit::Rename { what, from, to } => {
            let (from, to) = match root.path(from).exists() {
                true => (*from, *to),
                false => (*to, *from),
            };
            if root.path(from).exists() && !root.path(to).exists() {
                std::fs::rename(root.path(from), root.path(to)).expect("rename");
            }
            format!("{what} ({from} → {to})")
        }
        Edit::Lock { what, file, how } => {
            let Ok(text) = std::fs::read_to_string(root.path(file)) else {
                return format!("{what} ({file} is gone, left)");
            };
            if let LockEdit::Corrupt = how {
                let toggled = match text.strip_suffix(CORRUPTION) {
                    Some(json) => json.to_owned(),
                    None => format!("{text}{CORRUPTION}"),
                };
                root.write(file, &toggled);
                return format!("{what} ({file})");
            }
            let Ok(mut lock) = serde_json::from_str::<Value>(&text) else {
                return format!("{what} ({file} unreadable, left)");
            };
            match how {
                LockEdit::Trim => {
                    if let Some(rows) = lock["tests"].as_array_mut() {
                        rows.retain(|row| {
                            !row["name"].as_str().unwrap_or("").starts_with("derived:")
                        });
                    }
                }
                LockEdit::Flip => {
                    if let Some(row) = lock["tests"]
                        .as_array_mut()
                        .and_then(|rows| rows.iter_mut().find(|row| row["result"] == "pass"))
                    {
                        row["result"] = Value::from("fail");
                    }
                }
                LockEdit::Accept => lock["accepted"] = Value::from(true),
                LockEdit::Corrupt => unreachable!("handled above"),
            }
            root.write(
                file,
                &format!("{}\n", serde_json::to_string_pretty(&lock).expect("JSON")),
            );
            format!("{what} ({file})")
        }
    }
}

/// The seed and the number of steps a randomized test walks: its own, unless
/// `{prefix}_SEED` or `{prefix}_STEPS` say otherwise (for a longer run).
pub fn seed_and_steps(prefix: &str, seed: u64, steps: usize) -> (u64, usize) {
    let read = |name: &str| std::env::var(format!("{prefix}_{name}")).ok();
    (
        read("SEED").and_then(|s| s.parse().ok()).unwrap_or(seed),
        read("STEPS").and_then(|s| s.parse().ok()).unwrap_or(steps),
    )
}

/// `status --json` as data, whatever its exit code (problems exit 1).
pub fn status_data(root: &Root, daemon: bool) -> Value {
    let args: &[&str] = match daemon {
        true => &["status", "--json"],
        false => &["--no-daemon", "status", "--json"],
    };
    root.run(args).json()
}

/// Runs the `trellis …` commands the rows prescribe, through the daemon
/// (an agent's `trellis lower` is left out: it needs a provider), logging each.
pub fn follow_prescriptions(root: &Root, log: &mut Vec<String>) {
    let status = status_data(root, true);
    let mut commands: Vec<String> = (status["definitions"].as_array().into_iter().flatten())
        .filter_map(|row| row["fix"].as_str())
        .flat_map(|fix| fix.split(" && ").map(str::to_owned).collect::<Vec<_>>())
        .filter(|command| command.starts_with("trellis ") && !command.starts_with("trellis lower "))
        .collect();
    commands.dedup();
    for command in commands {
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let run = root.run(&args);
        log.push(format!("  $ {command} → exit {:?}", run.code));
    }
}
