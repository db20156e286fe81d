//! Questions and answers end to end (trellis-daemon §8): a job asks through the
//! daemon's `ask_human`, `trellis status` shows the question, and `trellis
//! answer` writes the answer into the spec (tr-grammar §8) — a Clarifications
//! pair or a decision entry — or refuses it with a code: stale, unknown, empty,
//! misplaced, or breaking the spec. Every test works on a private copy of the
//! examples.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::io::Write;
use std::process::Stdio;

use expect_test::{Expect, expect};
use serde_json::{Value, json};
use support::{Root, Run};
use trellis_rpc::Client;

/// The fixed `created` the tests give their questions, so goldens do not move.
const CREATED: &str = "2026-12-01T09:30:00Z";

/// Asks `question` as the lowering job of `def` would, through the daemon's
/// `ask_human`, and returns the job's record (its `spec_hashes` are what the
/// question is asked against).
fn ask(
    root: &Root,
    def: &str,
    kind: &str,
    question: &str,
    hole: Option<&str>,
    options: &[&str],
) -> Value {
    let record = spec_record(root, def);
    let mut client = Client::connect(&root.socket()).expect("connect to the daemon");
    let hole = match hole {
        Some(hole) => json!({ "tag": "Some", "value": hole }),
        None => json!({ "tag": "None" }),
    };
    let arguments =
        json!({ "kind": { "tag": kind }, "question": question, "hole": hole, "options": options });
    let ack = client
        .call(
            "job.tool",
            json!({ "job": record["job"], "tool": "ask_human", "arguments": arguments }),
        )
        .expect("ask_human");
    assert_eq!(ack["asked"], true, "{ack}");
    // `created` is display-only (§8): pin it for the goldens.
    let file = question_file(def);
    let mut document: Value = serde_json::from_str(&root.read(&file)).expect("a question document");
    document["created"] = json!(CREATED);
    root.write(&file, &format!("{document:#}\n"));
    record
}

/// A fresh job's record for `def`: its bundle's spec hashes are the spec's now.
fn spec_record(root: &Root, def: &str) -> Value {
    root.run(&["_job", "create", def, "--budget", "20000", "--json"])
        .ok()
        .json()
}

fn question_file(def: &str) -> String {
    format!("{}.question.json", def.replace("::", "/"))
}

/// The `.trellis/questions/` texts kept for diffs.
fn kept_texts(root: &Root) -> usize {
    std::fs::read_dir(root.path(".trellis/questions")).map_or(0, |dir| dir.count())
}

/// The error codes of a refused command, from its rendered diagnostics.
fn codes(run: &Run) -> Vec<String> {
    run.stderr
        .lines()
        .filter_map(|line| line.strip_prefix("error["))
        .filter_map(|rest| rest.split_once(']').map(|(code, _)| code.to_owned()))
        .collect()
}

#[track_caller]
fn refused(run: Run, code: &str) -> Run {
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(codes(&run), [code], "{run:?}");
    run
}

/// `trellis check DEF --json` finds nothing wrong.
#[track_caller]
fn checks_clean(root: &Root, def: &str) {
    let check = root.run(&["check", def, "--json"]).ok().json();
    assert_eq!(check["errors"], json!([]), "{check}");
}

fn golden(actual: &str, expect: Expect) {
    expect.assert_eq(actual);
}

#[test]
fn status_shows_an_open_question_in_both_views() {
    let root = Root::examples_with_daemon();
    ask(
        &root,
        "csvstats::mean",
        "Ambiguity",
        "Must the mean of one element be that element exactly?\nEven for subnormal values?",
        Some("halfway"),
        &["Yes, exactly", "Within one ulp"],
    );
    let human = root.run(&["status"]).ok();
    golden(
        &human.stdout,
        expect![[r#"
            csvstats::mean           not-lowered  no Soil has been lowered for this spec yet → trellis lower csvstats::mean
            inventory::reorder_plan  partial      the lowering left typed holes open: cases_to_order → trellis lower inventory::reorder_plan (by hand: fill the holes, then trellis adopt inventory::reorder_plan)
            question[Ambiguity] csvstats::mean, asked 2026-12-01T09:30:00Z, blocking ?halfway → trellis answer csvstats::mean
              Must the mean of one element be that element exactly?
              Even for subnormal values?
              1. Yes, exactly
              2. Within one ulp
            19 of 21 definitions green; 1 open question (28 green rows not shown: trellis status --all)
        "#]],
    );
    let status = root.status(true);
    golden(
        &format!("{:#}", status["questions"]),
        expect![[r#"
            [
              {
                "def": "csvstats::mean",
                "file": "csvstats/mean.question.json",
                "kind": {
                  "tag": "Ambiguity"
                },
                "question": "Must the mean of one element be that element exactly?\nEven for subnormal values?",
                "hole": {
                  "tag": "Some",
                  "value": "halfway"
                },
                "options": [
                  "Yes, exactly",
                  "Within one ulp"
                ],
                "created": "2026-12-01T09:30:00Z",
                "stale": false
              }
            ]"#]],
    );
    assert!(status.get("problems").is_none(), "{status}");
    // The in-process answer is the daemon's.
    assert_eq!(root.status(false)["questions"], status["questions"]);

    // An edit to the spec makes the question stale, in both views.
    root.edit("csvstats/mean.tr", "not yet lowered", "not lowered yet");
    assert_eq!(root.status(true)["questions"][0]["stale"], true);
    let human = root.run(&["status"]).ok();
    assert!(
        human.stdout.contains(
            "question[Ambiguity] csvstats::mean, asked 2026-12-01T09:30:00Z, blocking ?halfway \
             stale: its spec changed since it was asked → lower csvstats::mean again, or delete \
             csvstats/mean.question.json\n"
        ),
        "{}",
        human.stdout
    );
}

#[test]
fn a_question_file_that_does_not_decode_is_a_problem_with_its_path() {
    let root = Root::examples();
    root.write(
        "csvstats/median.question.json",
        "{\"def\": \"csvstats::median\"}\n",
    );
    let run = root.run(&["--no-daemon", "status", "--json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let status = run.json();
    assert!(status.get("questions").is_none(), "{status}");
    let problems = status["problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 1, "{status}");
    assert_eq!(problems[0]["code"], "job-question-unreadable");
    assert_eq!(
        problems[0]["file"],
        json!({ "tag": "Some", "value": "csvstats/median.question.json" })
    );
    assert!(
        problems[0]["message"]
            .as_str()
            .unwrap()
            .contains("$ lacks the field `kind`"),
        "{status}"
    );
    let human = root.run(&["--no-daemon", "status"]);
    assert_eq!(human.code, Some(1));
    assert!(
        human.stdout.starts_with(
            "error[job-question-unreadable]: the question file csvstats/median.question.json"
        ),
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains("  --> csvstats/median.question.json\n"),
        "{}",
        human.stdout
    );
    // `answer` refuses it with the same code rather than calling it absent.
    refused(
        root.run(&["--no-daemon", "answer", "csvstats::median", "--text", "x"]),
        "job-question-unreadable",
    );
    // Not JSON, and a question file that is a directory.
    root.write("csvstats/median.question.json", "not json");
    let status = root.run(&["--no-daemon", "status", "--json"]).json();
    assert_eq!(
        status["problems"][0]["code"], "job-question-unreadable",
        "{status}"
    );
    std::fs::remove_file(root.path("csvstats/median.question.json")).unwrap();
    std::fs::create_dir(root.path("csvstats/median.question.json")).unwrap();
    let status = root.run(&["--no-daemon", "status", "--json"]).json();
    assert_eq!(status["problems"][0]["code"], "root-unreadable", "{status}");
}

#[test]
fn an_ambiguity_answer_is_a_clarification_and_moves_only_prose() {
    let root = Root::examples_with_daemon();
    let asked = ask(
        &root,
        "csvstats::mean",
        "Ambiguity",
        "Must the mean of one element be that element exactly?",
        None,
        &["Yes, exactly", "Within one ulp"],
    );
    assert_eq!(
        kept_texts(&root),
        1,
        "ask_human keeps the asked-against text"
    );
    let before = root.read("csvstats/mean.tr");
    let answered = root
        .run(&[
            "answer",
            "csvstats::mean",
            "--text",
            "Yes: exactly that element,\nsubnormals included.",
        ])
        .ok();
    golden(
        &answered.stdout,
        expect![[r#"
            answered csvstats::mean's Ambiguity question: a Clarifications Q/A pair in csvstats/mean.tr
            --- a/csvstats/mean.tr
            +++ b/csvstats/mean.tr
            @@ -43,3 +43,9 @@
             ```property copies
             forall (x : F64) (n : I64). finite x implies mean (map (\_ -> x) (range 0 (n % 50 + 51))) == x
             ```
            +
            +## Clarifications
            +
            +- **Q:** Must the mean of one element be that element exactly?
            +  **A:** Yes: exactly that element,
            +  subnormals included.
            removed csvstats/mean.question.json; lower csvstats::mean again with the answer in its spec: trellis lower csvstats::mean (this daemon did not run the job that asked, so it does not guess its provider)
        "#]],
    );
    let after = root.read("csvstats/mean.tr");
    assert!(after.starts_with(&before), "every byte of the spec is kept");
    assert!(
        !root.path("csvstats/mean.question.json").exists(),
        "the question is gone"
    );
    assert_eq!(kept_texts(&root), 0, "and its kept text");
    checks_clean(&root, "csvstats::mean");
    let now = spec_record(&root, "csvstats::mean");
    let (was, is) = (&asked["spec_hashes"], &now["spec_hashes"]);
    assert_eq!(was["formal"], is["formal"]);
    assert_eq!(was["test"], is["test"]);
    assert_ne!(was["prose"], is["prose"]);
    assert!(root.status(true).get("questions").is_none());

    // A second answer goes into the same section, after the first.
    ask(
        &root,
        "csvstats::mean",
        "Contradiction",
        "Bounded, or exact?",
        None,
        &[],
    );
    root.run(&[
        "--no-daemon",
        "answer",
        "csvstats::mean",
        "--text",
        "Bounded.",
    ])
    .ok();
    let twice = root.read("csvstats/mean.tr");
    golden(
        &twice[before.len()..],
        expect![[r#"

            ## Clarifications

            - **Q:** Must the mean of one element be that element exactly?
              **A:** Yes: exactly that element,
              subnormals included.

            - **Q:** Bounded, or exact?
              **A:** Bounded.
        "#]],
    );
    checks_clean(&root, "csvstats::mean");
}

#[test]
fn a_rule_answer_is_a_decision_of_the_module_or_the_project() {
    let root = Root::examples_with_daemon();
    let options = ["Round half to even", "Round half away from zero"];
    ask(
        &root,
        "csvstats::mean",
        "Rule",
        "How should a statistic round a tie?",
        None,
        &options,
    );
    // Both scopes exist, so the scope must be said.
    refused(
        root.run(&["answer", "csvstats::mean", "--text", "Round half to even"]),
        "job-bad-scope",
    );
    let before = root.read("csvstats/_module.tr");
    let answered = root
        .run(&[
            "answer",
            "csvstats::mean",
            "--text",
            "Round half to even",
            "--scope",
            "module",
        ])
        .ok();
    golden(
        &answered.stdout,
        expect![[r#"
            answered csvstats::mean's Rule question: the module decision `statistic-round-tie` in csvstats/_module.tr
            --- a/csvstats/_module.tr
            +++ b/csvstats/_module.tr
            @@ -66,4 +66,6 @@
               rejected: padding short rows with NaN (invents data)
             - **blank-lines** — blank lines (only whitespace) are skipped by read_file but still
               counted, so Row.line is the line an editor shows
            +- **statistic-round-tie** — Round half to even
            +  rejected: Round half away from zero
             ```
            removed csvstats/mean.question.json; lower csvstats::mean again with the answer in its spec: trellis lower csvstats::mean (this daemon did not run the job that asked, so it does not guess its provider)
        "#]],
    );
    assert_eq!(
        root.read("csvstats/_module.tr"),
        before.replace(
            "editor shows\n```",
            "editor shows\n- **statistic-round-tie** — Round half to even\n  rejected: Round half away from zero\n```"
        )
    );
    assert!(!root.path("csvstats/mean.question.json").exists());
    let check = root.run(&["check", "--json"]).ok().json();
    assert_eq!(check["errors"], json!([]), "{check}");

    // The same question again is a new label; into the project, with a label of our own.
    ask(
        &root,
        "csvstats::mean",
        "Rule",
        "How should a statistic round a tie?",
        None,
        &options,
    );
    let question = Client::connect(&root.socket())
        .unwrap()
        .call("question", json!({ "def": "csvstats::mean" }))
        .expect("question");
    assert_eq!(
        question["scopes"],
        json!([
            { "scope": "module", "file": "csvstats/_module.tr", "label": "statistic-round-tie-2" },
            { "scope": "project", "file": "_project.tr", "label": "statistic-round-tie" },
        ])
    );
    let project = root.read("_project.tr");
    let answered = root
        .run(&[
            "--no-daemon",
            "answer",
            "csvstats::mean",
            "--text",
            "Ties round half away from zero, as money does",
            "--scope",
            "project",
            "--label",
            "ties-away-from-zero",
        ])
        .ok();
    golden(
        &answered.stdout,
        expect![[r#"
            answered csvstats::mean's Rule question: the project decision `ties-away-from-zero` in _project.tr
            --- a/_project.tr
            +++ b/_project.tr
            @@ -32,4 +32,5 @@
               `enumerate` do; line numbers count from 1, as editors show them
             - **money-in-cents** — money amounts are I64 counts of cents
               rejected: F64 amounts (0.10 has no exact binary form; totals drift)
            +- **ties-away-from-zero** — Ties round half away from zero, as money does
             ```
            removed csvstats/mean.question.json; lower csvstats::mean again with the answer in its spec: trellis lower csvstats::mean
        "#]],
    );
    assert_eq!(
        root.read("_project.tr"),
        project.replace(
            "totals drift)\n```",
            "totals drift)\n- **ties-away-from-zero** — Ties round half away from zero, as money does\n```"
        )
    );
    let check = root.run(&["check", "--json"]).ok().json();
    assert_eq!(check["errors"], json!([]), "{check}");
    // The new entries move the scope hashes: both scopes are flagged once (tr-grammar §9).
    let statuses = root.statuses(true);
    assert_eq!(statuses["csvstats"], "decision-flagged", "{statuses:?}");
    assert_eq!(statuses["project"], "decision-flagged", "{statuses:?}");
}

#[test]
fn a_rule_goes_to_the_only_scope_there_is_and_a_missing_block_is_created() {
    let root = Root::examples_with_daemon();
    // Without `_project.tr` the module is the only scope; take its block away too.
    std::fs::remove_file(root.path("_project.tr")).unwrap();
    let module = root.read("inventory/_module.tr");
    let start = module
        .find("```decisions")
        .expect("inventory has decisions");
    let end = start + module[start..].find("\n```\n").unwrap() + 5;
    let without = format!("{}{}", &module[..start], &module[end..]);
    root.write("inventory/_module.tr", &without);
    ask(
        &root,
        "inventory::low_stock",
        "Rule",
        "Is a stock of zero low?",
        None,
        &[],
    );
    refused(
        root.run(&[
            "answer",
            "inventory::low_stock",
            "--text",
            "Yes",
            "--scope",
            "project",
        ]),
        "job-no-decisions-file",
    );
    root.run(&[
        "answer",
        "inventory::low_stock",
        "--text",
        "Zero stock is always low",
    ])
    .ok();
    let written = root.read("inventory/_module.tr");
    assert!(written.starts_with(&without), "{written}");
    golden(
        &written[without.len()..],
        expect![[r#"
            ```decisions
            - **stock-zero-low** — Zero stock is always low
            ```
        "#]],
    );
}

#[test]
fn a_stale_answer_is_refused_with_the_diff() {
    let root = Root::examples_with_daemon();
    ask(
        &root,
        "csvstats::mean",
        "Ambiguity",
        "Exact for one element?",
        None,
        &[],
    );
    root.edit("csvstats/mean.tr", "not yet lowered", "not lowered yet");
    let before = root.read("csvstats/mean.tr");
    let run = refused(
        root.run(&["answer", "csvstats::mean", "--text", "Yes"]),
        "job-stale-question",
    );
    golden(
        &run.stderr,
        expect![[r#"
            error[job-stale-question]: csvstats/mean.tr changed since its question was asked (prose moved), so the answer is not written: the question may no longer apply. Lower the definition again for a fresh question, or delete csvstats/mean.question.json to drop this one.
            --- a/csvstats/mean.tr (asked against)
            +++ b/csvstats/mean.tr (now)
            @@ -13,7 +13,7 @@
             `0.10000000000000002`. The result must always lie between the smallest and the
             largest element, so the mean of equal values is that value.
             
            -This definition is specified but not yet lowered: it has no `mean.soil`.
            +This definition is specified but not lowered yet: it has no `mean.soil`.
             
             ```soil-sig
             mean : (xs : List F64) -> F64
              --> csvstats/mean.tr
              = fix: ask-human (see trellis-daemon#8)
        "#]],
    );
    assert_eq!(root.read("csvstats/mean.tr"), before, "nothing was written");
    assert!(
        root.path("csvstats/mean.question.json").exists(),
        "the question stays"
    );
    assert_eq!(kept_texts(&root), 1);
    // Asked again of the spec as it is now, the new question replaces the old
    // one (and its kept text), and can be answered.
    ask(
        &root,
        "csvstats::mean",
        "Ambiguity",
        "Exact for one element?",
        None,
        &[],
    );
    assert_eq!(
        kept_texts(&root),
        1,
        "the old kept text went with its question"
    );
    assert_eq!(root.status(true)["questions"][0]["stale"], false);
    root.run(&["answer", "csvstats::mean", "--text", "Yes"])
        .ok();
    assert_eq!(kept_texts(&root), 0);
    // Without the kept text the refusal still comes, and says why it has no diff.
    ask(
        &root,
        "csvstats::mean",
        "Ambiguity",
        "Exact again?",
        None,
        &[],
    );
    root.edit("csvstats/mean.tr", "not lowered yet", "not yet lowered");
    std::fs::remove_dir_all(root.path(".trellis/questions")).unwrap();
    let run = refused(
        root.run(&["--no-daemon", "answer", "csvstats::mean", "--text", "Yes"]),
        "job-stale-question",
    );
    assert!(
        run.stderr.contains("no diff can be shown"),
        "{}",
        run.stderr
    );
}

#[test]
fn answering_interactively_from_piped_stdin() {
    let root = Root::examples_with_daemon();
    ask(
        &root,
        "csvstats::mean",
        "Ambiguity",
        "Exact for one element?",
        Some("halfway"),
        &["Yes, exactly", "Within one ulp"],
    );
    // Without a terminal and without --interactive, nothing is read.
    let run = piped(&root, &["answer", "csvstats::mean"], "1\n");
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(codes(&run), ["usage-error"], "{run:?}");
    assert!(root.path("csvstats/mean.question.json").exists());

    let before = root.read("csvstats/mean.tr");
    let run = piped(
        &root,
        &["answer", "csvstats::mean", "--interactive"],
        "\n2\n",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    golden(
        &run.stdout,
        expect![[r#"
            csvstats::mean asks (Ambiguity, asked 2026-12-01T09:30:00Z, blocking ?halfway):
              Exact for one element?
              1. Yes, exactly
              2. Within one ulp
            answer (1-2 picks that option)> 
            answer (1-2 picks that option)> 
            answered csvstats::mean's Ambiguity question: a Clarifications Q/A pair in csvstats/mean.tr
            --- a/csvstats/mean.tr
            +++ b/csvstats/mean.tr
            @@ -43,3 +43,8 @@
             ```property copies
             forall (x : F64) (n : I64). finite x implies mean (map (\_ -> x) (range 0 (n % 50 + 51))) == x
             ```
            +
            +## Clarifications
            +
            +- **Q:** Exact for one element?
            +  **A:** Within one ulp
            removed csvstats/mean.question.json; lower csvstats::mean again with the answer in its spec: trellis lower csvstats::mean (this daemon did not run the job that asked, so it does not guess its provider)
        "#]],
    );
    assert!(root.read("csvstats/mean.tr").starts_with(&before));

    // A Rule asks for its scope and offers the derived label.
    ask(
        &root,
        "csvstats::mean",
        "Rule",
        "How should ties round?",
        None,
        &["Half to even", "Half up"],
    );
    let run = piped(
        &root,
        &["--no-daemon", "answer", "csvstats::mean", "--interactive"],
        "1\ngalaxy\nmodule\n\n",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains(
            "a rule of which scope: module (csvstats/_module.tr) or project (_project.tr)> \n\
             type one of: module, project\n"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("label [ties-round]> \n"),
        "{}",
        run.stdout
    );
    assert!(
        root.read("csvstats/_module.tr")
            .contains("- **ties-round** — Half to even\n  rejected: Half up\n```"),
        "{}",
        root.read("csvstats/_module.tr")
    );
    // End of input before an answer is an empty answer.
    ask(&root, "csvstats::mean", "Ambiguity", "Another?", None, &[]);
    let run = piped(
        &root,
        &["answer", "csvstats::mean", "--interactive"],
        "\n  \n",
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(codes(&run), ["job-empty-answer"], "{run:?}");
}

/// `trellis ARGS` with `input` on a piped stdin.
fn piped(root: &Root, args: &[&str], input: &str) -> Run {
    let mut child = root
        .command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start trellis");
    // A command that refuses without reading may be gone before the input is
    // written: a broken pipe here is that refusal, judged by the exit below.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let output = child.wait_with_output().expect("trellis ends");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn every_bad_answer_is_refused_with_its_code() {
    let root = Root::examples_with_daemon();
    let original = root.read("csvstats/mean.tr");
    refused(
        root.run(&["answer", "csvstats::nope", "--text", "x"]),
        "unknown-definition",
    );
    refused(
        root.run(&["answer", "csvstats::Row", "--text", "x"]),
        "unknown-definition",
    );
    refused(
        root.run(&["answer", "csvstats::median", "--text", "x"]),
        "job-no-question",
    );
    ask(&root, "csvstats::mean", "Ambiguity", "Exact?", None, &[]);
    refused(
        root.run(&["answer", "csvstats::mean", "--text", "  \n "]),
        "job-empty-answer",
    );
    refused(
        root.run(&[
            "answer",
            "csvstats::mean",
            "--text",
            "x",
            "--scope",
            "module",
        ]),
        "job-bad-scope",
    );
    refused(
        root.run(&["answer", "csvstats::mean", "--text", "x", "--label", "l"]),
        "job-bad-scope",
    );
    // An answer that would open a reserved block is no prose.
    let run = refused(
        root.run(&[
            "answer",
            "csvstats::mean",
            "--text",
            "Yes, and test it:\n```test extra\nmean([2.0]) -> 2.0\n```",
        ]),
        "job-answer-breaks-spec",
    );
    assert!(
        run.stderr.contains("  --> csvstats/mean.tr\n"),
        "{}",
        run.stderr
    );
    assert_eq!(
        root.read("csvstats/mean.tr"),
        original,
        "nothing was written"
    );
    assert!(root.path("csvstats/mean.question.json").exists());

    std::fs::remove_file(root.path("csvstats/mean.question.json")).unwrap();
    ask(&root, "csvstats::mean", "Rule", "Exact?", None, &[]);
    refused(
        root.run(&[
            "answer",
            "csvstats::mean",
            "--text",
            "x",
            "--scope",
            "galaxy",
        ]),
        "job-bad-scope",
    );
    refused(
        root.run(&[
            "answer",
            "csvstats::mean",
            "--text",
            "x",
            "--scope",
            "module",
            "--label",
            "Not Kebab",
        ]),
        "tr-bad-decision",
    );
    refused(
        root.run(&[
            "answer",
            "csvstats::mean",
            "--text",
            "x",
            "--scope",
            "module",
            "--label",
            "no-header",
        ]),
        "tr-duplicate-decision-label",
    );
    refused(
        root.run(&[
            "answer",
            "csvstats::mean",
            "--text",
            "one\n\ntwo",
            "--scope",
            "module",
        ]),
        "job-answer-breaks-spec",
    );
    // A definition whose spec is gone, with its question still there.
    std::fs::remove_file(root.path("csvstats/mean.tr")).unwrap();
    let run = refused(
        root.run(&["answer", "csvstats::mean", "--text", "x"]),
        "unknown-definition",
    );
    assert!(
        run.stderr
            .contains("csvstats/mean.question.json is a question about it"),
        "{}",
        run.stderr
    );
    assert_eq!(root.status(true)["questions"][0]["stale"], true);
    // Usage mistakes never reach the daemon.
    for args in [
        &["answer", "csvstats::mean", "--text"][..],
        &["answer", "csvstats::mean", "--scope"],
        &["answer", "csvstats::mean", "--text", "x", "--interactive"],
        &["answer"],
        &["status", "--text", "x"],
    ] {
        assert_eq!(root.run(args).code, Some(2), "{args:?}");
    }
}

/// `answer` is a writer: it waits for the root's writer lock and refreshes only
/// once it holds it, so it sees what the holder wrote meanwhile.
#[test]
fn answering_waits_for_the_writer_lock_and_reads_the_root_after() {
    let root = Root::examples_with_daemon();
    std::fs::create_dir_all(root.path(".trellis")).unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(root.path(".trellis/writer.lock"))
        .unwrap();
    lock.lock().unwrap();
    let child = root
        .command(&["--no-daemon", "answer", "csvstats::mean", "--text", "Yes"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let waiter = format!(" {} ", child.id());
    support::wait_until("the answer waits on the writer lock", || {
        std::fs::read_to_string("/proc/locks")
            .unwrap_or_default()
            .lines()
            .any(|line| line.contains("-> FLOCK") && line.contains(&waiter))
    });
    // While it waits, the question is asked: the answer must see it.
    ask(&root, "csvstats::mean", "Ambiguity", "Exact?", None, &[]);
    drop(lock);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        root.read("csvstats/mean.tr")
            .contains("- **Q:** Exact?\n  **A:** Yes\n")
    );
}
