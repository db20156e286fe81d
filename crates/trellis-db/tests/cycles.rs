//! Mutual recursion: cycles are found per definition (design §7.2), members share
//! one cycle hash, callers of a cycle are not members of it, programs put the
//! members together, and the answer does not depend on which definition is asked
//! first.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use trellis_db::{
    Change, Item, RootDatabase, call_cycle, call_cycle_free, program_cycle, program_order,
    soil_hash,
};

const SIG: &str = "(n : I64) -> Bool";

/// `even` and `odd` call each other; `parity` calls into the cycle; `zero` is a
/// leaf; `countdown` only calls itself.
fn root(odd_body: &str) -> Vec<(String, String)> {
    let spec = |name: &str, sig: &str| {
        format!("---\nname: {name}\n---\n\n# {name}\n\n```soil-sig\n{name} : {sig}\n```\n")
    };
    let mut files = vec![(
        "soil.toml".to_owned(),
        "[toolchain]\ntrellis = \"0.1.0\"\nsoil0_cli = \"0.1.0\"\n".to_owned(),
    )];
    let bodies = [
        (
            "even",
            SIG,
            "even n = if n == 0 then true else odd (n - 1)".to_owned(),
        ),
        ("odd", SIG, odd_body.to_owned()),
        (
            "parity",
            "(n : I64) -> String",
            "parity n = if even n then \"even\" else \"odd\"".to_owned(),
        ),
        ("zero", "(n : I64) -> Bool", "zero n = n == 0".to_owned()),
        (
            "countdown",
            SIG,
            "countdown n = if n <= 0 then true else countdown (n - 1)".to_owned(),
        ),
    ];
    for (name, sig, body) in bodies {
        files.push((format!("m/{name}.tr"), spec(name, sig)));
        files.push((format!("m/{name}.soil"), format!("{body}\n")));
    }
    files
}

const ODD: &str = "odd n = if n == 0 then false else even (n - 1)";

fn load(files: &[(String, String)]) -> RootDatabase {
    let mut db = RootDatabase::default();
    apply(&mut db, files);
    db
}

fn apply(db: &mut RootDatabase, files: &[(String, String)]) {
    let mut change = Change::default();
    for (path, text) in files {
        change.set_root_file(path.clone(), text.clone());
    }
    change.apply(db);
}

fn item<'db>(db: &'db RootDatabase, name: &str) -> Item<'db> {
    Item::new(db, "m".to_owned(), name.to_owned())
}

fn members(names: &[&str]) -> Option<Vec<(String, String)>> {
    Some(
        names
            .iter()
            .map(|name| ("m".to_owned(), (*name).to_owned()))
            .collect(),
    )
}

#[test]
fn members_share_a_cycle_and_callers_stay_outside_it() {
    let db = load(&root(ODD));
    let cycle = members(&["even", "odd"]);
    assert_eq!(call_cycle(&db, item(&db, "even")), cycle.as_ref());
    assert_eq!(call_cycle(&db, item(&db, "odd")), cycle.as_ref());
    assert_eq!(program_cycle(&db, item(&db, "odd")), cycle.as_ref());
    assert_eq!(call_cycle(&db, item(&db, "parity")), None);
    assert_eq!(
        call_cycle(&db, item(&db, "countdown")),
        None,
        "self-calls are no cycle"
    );
    assert!(
        !call_cycle_free(&db, item(&db, "parity")),
        "parity reaches the cycle"
    );
    assert!(call_cycle_free(&db, item(&db, "zero")));
    assert!(call_cycle_free(&db, item(&db, "countdown")));

    let even = soil_hash(&db, item(&db, "even")).expect("lowered");
    assert_eq!(
        Some(even),
        soil_hash(&db, item(&db, "odd")),
        "one cycle hash"
    );
    assert_ne!(Some(even), soil_hash(&db, item(&db, "parity")));

    let order: Vec<String> = program_order(&db, item(&db, "parity"))
        .iter()
        .map(|(_, name)| name.clone())
        .collect();
    assert_eq!(order, ["even", "odd", "parity"]);
}

#[test]
fn the_answer_does_not_depend_on_who_asks_first() {
    let files = root(ODD);
    let from_parity = load(&files);
    let parity_first = (
        call_cycle(&from_parity, item(&from_parity, "parity")).cloned(),
        call_cycle(&from_parity, item(&from_parity, "odd")).cloned(),
        soil_hash(&from_parity, item(&from_parity, "even")),
    );
    let from_odd = load(&files);
    let odd = call_cycle(&from_odd, item(&from_odd, "odd")).cloned();
    let even_hash = soil_hash(&from_odd, item(&from_odd, "even"));
    let parity = call_cycle(&from_odd, item(&from_odd, "parity")).cloned();
    assert_eq!(parity_first, (parity, odd, even_hash));
}

#[test]
fn editing_one_member_moves_the_cycle_and_its_callers_only() {
    let mut db = load(&root(ODD));
    let hashes = |db: &RootDatabase| {
        ["even", "odd", "parity", "zero", "countdown"].map(|name| soil_hash(db, item(db, name)))
    };
    let before = hashes(&db);
    apply(
        &mut db,
        &root("odd n = if n == 1 then true else even (n - 1)"),
    );
    let after = hashes(&db);
    let moved: Vec<bool> = before.iter().zip(&after).map(|(b, a)| b != a).collect();
    assert_eq!(moved, [true, true, true, false, false]);

    // Breaking the cycle makes both members acyclic again.
    apply(&mut db, &root("odd n = n == 1"));
    assert_eq!(call_cycle(&db, item(&db, "even")), None);
    assert!(call_cycle_free(&db, item(&db, "parity")));
    assert_ne!(
        soil_hash(&db, item(&db, "even")),
        soil_hash(&db, item(&db, "odd"))
    );
}

/// Signed callees enter a check by signature alone, but the members of the
/// checked definition's own cycle still enter with their bodies: mutual recursion
/// is found from either side, and a caller of the cycle is not blamed for it.
#[test]
fn the_check_finds_mutual_recursion_through_signed_members() {
    let db = load(&root(ODD));
    let report = trellis_db::check_root(&db, None);
    let recursion: Vec<&str> = report
        .diagnostics
        .iter()
        .filter(|d| d.code == "nonstructural-recursion")
        .filter_map(|d| d.file.as_deref())
        .collect();
    assert_eq!(recursion, ["m/even.soil", "m/odd.soil"]);
}

/// A cycle made, grown and broken by edits: after each edit the incremental
/// database gives the hashes a fresh one gives, whichever definition is asked
/// first (`soil_hash` finds cycles through salsa's fallback, design §7.12).
#[test]
fn edits_that_make_grow_and_break_cycles_hash_as_a_fresh_load_does() {
    let names = ["even", "odd", "parity", "zero", "countdown"];
    let hashes = |db: &RootDatabase, order: &[&str]| {
        let mut asked: Vec<(String, Option<trellis_hash::Digest>)> = order
            .iter()
            .map(|name| ((*name).to_owned(), soil_hash(db, item(db, name))))
            .collect();
        asked.sort();
        asked
    };
    let odd_bodies = [
        ODD,
        "odd n = n == 1",
        ODD,
        "odd n = if n == 0 then false else zero (n - 1)",
        // even → odd → parity → even: three members.
        "odd n = if n == 0 then false else parity (n - 1) == \"even\"",
        "odd n = n == 1",
    ];
    let orders: [&[&str]; 2] = [&names, &["parity", "odd", "countdown", "zero", "even"]];
    for order in orders {
        let mut db = load(&root(ODD));
        hashes(&db, order);
        for body in odd_bodies {
            let files = root(body);
            apply(&mut db, &files);
            assert_eq!(
                hashes(&db, order),
                hashes(&load(&files), &names),
                "after `{body}`, asked in the order {order:?}"
            );
            let cycle_of_three = body.contains("parity");
            let shared =
                |a: &str, b: &str| soil_hash(&db, item(&db, a)) == soil_hash(&db, item(&db, b));
            assert_eq!(shared("even", "parity"), cycle_of_three, "after `{body}`");
            assert_eq!(
                shared("even", "odd"),
                body == ODD || cycle_of_three,
                "after `{body}`"
            );
        }
    }
}
