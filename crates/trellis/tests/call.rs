//! `trellis call` over a definition whose private helper recurses
//! nonstructurally: accepted under the owner's `allow` grant, and refused
//! without it at the helper's line in `_private.soil`, not a line relative to
//! the helper's equation.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use support::Root;

const HELPER: &str = "
_bisect : (xs : List F64) -> (x : F64) -> (lo : I64) -> (hi : I64) -> I64

_bisect xs x lo hi =
  if lo >= hi then
    lo
  else
    let mid = (lo + hi) / 2 in
    match get xs mid with
    | Some y if y < x -> _bisect xs x (mid + 1) hi
    | _ -> _bisect xs x lo mid
    end
";

#[test]
fn a_helper_recursing_under_its_owners_grant_runs() {
    let root = Root::examples();
    let private = root.read("csvstats/_private.soil");
    root.write("csvstats/_private.soil", &format!("{private}{HELPER}"));
    root.write(
        "csvstats/rank.soil",
        "rank xs x = _bisect xs x 0 (len xs)\n",
    );
    let call = root.run(&["call", "csvstats::rank", "[[1.0, 2.0, 3.0], 2.5]"]);
    assert_eq!((call.code, call.stdout.trim()), (Some(0), "2"), "{call:?}");
    let check = root.run(&["--no-daemon", "check"]);
    assert!(check.stdout.contains("no problems"), "{check:?}");

    let spec = root.read("csvstats/rank.tr");
    let start = spec.find("```allow").expect("rank grants the hatch");
    let end = start + spec[start..].find("```\n\n").expect("closed") + 5;
    root.write(
        "csvstats/rank.tr",
        &format!("{}{}", &spec[..start], &spec[end..]),
    );
    let call = root.run(&["call", "csvstats::rank", "[[1.0, 2.0, 3.0], 2.5]", "--json"]);
    assert_eq!(call.code, Some(1), "{call:?}");
    let error = &call.json()["errors"][0];
    assert_eq!(error["code"], "nonstructural-recursion", "{call:?}");
    assert_eq!(error["file"]["value"], "csvstats/_private.soil", "{call:?}");
    // `| Some y if y < x -> _bisect …` is the helper's 9th line.
    let line = private.lines().count() as u64 + 1 + 9;
    assert_eq!(error["span"]["value"]["start"]["line"], line, "{call:?}");
    assert_eq!(error["span"]["value"]["start"]["column"], 26, "{call:?}");
}

/// `trellis call` refuses a root pinned to another toolchain with the same
/// diagnostic every other command gives, its re-pin note included (it used to
/// rebuild the diagnostic from its message and lose the note).
#[test]
fn call_refuses_a_mismatched_pin_with_the_repin_note() {
    let root = Root::examples();
    root.edit("soil.toml", "trellis = \"0.1.0\"", "trellis = \"0.0.9\"");
    let run = root.run(&["call", "csvstats::median", "[[3.0, 1.0, 2.0]]", "--json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let document = run.json();
    let error = &document["errors"][0];
    assert_eq!(error["code"], "toolchain-mismatch", "{document}");
    assert!(
        error.to_string().contains("trellis toolchain update"),
        "{document}"
    );
}

/// A call's errors are diagnostics for a person by default — on stderr,
/// rendered as `check` renders them, with the failing place and the call
/// chain — and the `{"errors":[…]}` document on stdout under `--json`.
#[test]
fn call_errors_are_human_by_default_and_json_on_request() {
    let root = Root::examples();
    let run = root.run(&["call", "csvstats::median", "[[]]"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    assert!(
        run.stderr.starts_with("error[requires-violated]: "),
        "{run:?}"
    );
    assert!(run.stderr.contains("\n  --> csvstats/median."), "{run:?}");
    assert!(
        run.stderr.contains("\n  = fix: fix-runtime (see "),
        "{run:?}"
    );
    assert!(!run.stderr.contains("{\"errors\""), "{run:?}");

    let run = root.run(&["call", "csvstats::median", "[[]]", "--json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(run.stderr, "", "{run:?}");
    assert_eq!(run.json()["errors"][0]["code"], "requires-violated");

    // A value is canonical JSON either way.
    for json in [false, true] {
        let mut args = vec!["call", "csvstats::median", "[[3.0, 1.0, 2.0]]"];
        args.extend(json.then_some("--json"));
        let run = root.run(&args).ok();
        assert_eq!(run.stdout, "2.0\n", "{run:?}");
    }
}

/// A definition that is specified but not lowered is not "unknown": the
/// refusal says it has no Soil yet and both ways to give it some.
#[test]
fn calling_a_definition_not_lowered_yet_says_how_to_lower_it() {
    let root = Root::examples();
    let run = root.run(&["call", "csvstats::mean", "[[1.0]]"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr.starts_with(
            "error[unknown-definition]: `csvstats::mean` is specified but not lowered yet"
        ),
        "{run:?}"
    );
    assert!(run.stderr.contains("  --> csvstats/mean.tr\n"), "{run:?}");
    assert!(
        run.stderr.contains("`trellis lower csvstats::mean`")
            && run.stderr.contains("`trellis adopt csvstats::mean`"),
        "{run:?}"
    );
}

/// A partial lowering runs on the inputs it covers: `reorder_plan` reaches its
/// hole only for an item that is short, so an empty stock gives a plan, and a
/// short item is refused at the hole with its name, goal, place and scope —
/// the place `check` gives, even when the file is not in canonical form (the
/// run used to refuse any call up front, at a span into the equation's
/// canonical print).
#[test]
fn call_runs_a_partial_definition_until_it_reaches_the_hole() {
    let root = Root::examples();
    let empty = root
        .run(&["call", "inventory::reorder_plan", "[10, 6, []]"])
        .ok();
    assert_eq!(empty.stdout, "[]\n", "{empty:?}");

    let short =
        r#"[10, 6, [["A1", {"sku": "A1", "name": "Apples", "unit_price": 50, "on_hand": 1}]]]"#;
    let run = root.run(&["call", "inventory::reorder_plan", short]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr.starts_with(
            "error[unfilled-hole]: reached the unfilled hole ?cases_to_order in \
             inventory::reorder_plan, whose goal is `I64`\n  --> inventory/reorder_plan.soil:3:28\n"
        ),
        "{run:?}"
    );
    assert!(
        run.stderr
            .contains("= note: in scope: target : I64, case_size : I64, stock : Map Utf8 Item"),
        "{run:?}"
    );

    // The same body laid out by hand, with comments: the run's place is the
    // check's, lines and columns of the file as written.
    root.write(
        "inventory/reorder_plan.soil",
        "-- What to order: one row per short item.\n\
         -- The quantity is still open.\n\
         reorder_plan target case_size stock =\n\
         \n\
         \x20 let short =\n\
         \x20     filter (\\item -> item.on_hand < target) (map_values stock)\n\
         \x20 in\n\
         \x20 map (\\item -> (item.sku,\n\
         \x20                 ?cases_to_order)) short\n",
    );
    let check = root
        .run(&["--no-daemon", "check", "inventory::reorder_plan"])
        .ok();
    let place = check
        .stdout
        .lines()
        .find_map(|line| line.trim().strip_prefix("--> inventory/reorder_plan.soil:"))
        .expect("check shows the hole's place")
        .to_owned();
    assert_eq!(place, "9:19", "{check:?}");
    let run = root.run(&["call", "inventory::reorder_plan", short, "--json"]);
    let error = &run.json()["errors"][0];
    assert_eq!(error["code"], "unfilled-hole", "{run:?}");
    let start = &error["span"]["value"]["start"];
    assert_eq!(
        format!("{}:{}", start["line"], start["column"]),
        place,
        "{run:?}"
    );
}
