//! A call chain thousands of definitions long, as a generated root has: every
//! query that follows the call graph answers on a thread with little stack
//! (design §7.18), and a program's order is built once, for the definition
//! asked, not once for every link of the chain.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use expect_test::expect;
use trellis_db::{
    Change, Item, RootDatabase, adopted_lock, call_cycle_free, check_root, program_cycle_free,
    program_order, root_status, soil_hash, suite_key,
};

/// Links of the chain: `c0000` calls `c0001`, …, which calls the last.
const LINKS: usize = 2_000;

/// The stack of the thread that asks: a debug build's salsa frames for one
/// link are kilobytes, so the chain needs many times this.
const SMALL_STACK: usize = 1024 * 1024;

fn link(index: usize) -> String {
    format!("c{index:04}")
}

fn chain() -> Change {
    chain_of(LINKS)
}

/// A chain of `links` definitions in module `m`, each signed and tested.
fn chain_of(links: usize) -> Change {
    let mut change = Change::default();
    change.set_root_file(
        "soil.toml".to_owned(),
        "[toolchain]\ntrellis = \"0.1.0\"\nsoil0_cli = \"0.1.0\"\n".to_owned(),
    );
    for index in 0..links {
        let name = link(index);
        let spec = format!(
            "---\nname: {name}\n---\n\n# {name}\n\nLink {index}.\n\n```soil-sig\n{name} : (x : I64) -> I64\n```\n\n```test basics\n{name}(0) -> {}\n```\n",
            links - index
        );
        let body = match index + 1 < links {
            true => format!("{name} x =\n  {} x + 1\n", link(index + 1)),
            false => format!("{name} x =\n  x + 1\n"),
        };
        change.set_root_file(format!("m/{name}.tr"), spec);
        change.set_root_file(format!("m/{name}.soil"), body);
    }
    change
}

/// Runs `ask` on a thread with [`SMALL_STACK`] bytes of stack.
fn on_a_small_stack<R: Send>(ask: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(SMALL_STACK)
            .spawn_scoped(scope, ask)
            .expect("a thread starts")
            .join()
            .expect("the thread answers")
    })
}

#[test]
fn a_chain_thousands_long_is_followed_on_a_small_stack() {
    on_a_small_stack(|| {
        let mut db = RootDatabase::default();
        chain().apply(&mut db);
        let db = &db;
        let head = Item::new(db, "m".to_owned(), link(0));
        // Asked of the head first, each query descends the whole chain from here.
        assert!(call_cycle_free(db, head));
        assert!(program_cycle_free(db, head));
        assert!(soil_hash(db, head).is_some());
        suite_key(db, head);
        let report = check_root(db, None);
        assert_eq!(report.checked, LINKS);
        let codes: Vec<&str> = (report.diagnostics.iter())
            .map(|diagnostic| diagnostic.code.as_str())
            .collect();
        assert_eq!(codes, Vec::<&str>::new());
        let rows = root_status(db);
        assert_eq!(
            rows.iter().filter(|row| row.kind == "function").count(),
            LINKS
        );
    });
}

#[test]
fn a_programs_order_is_built_for_the_definition_asked_alone() {
    let (order, built) = on_a_small_stack(|| {
        let mut db = RootDatabase::with_query_log();
        chain().apply(&mut db);
        let log = db.query_log().clone();
        log.start();
        let order = program_order(&db, Item::new(&db, "m".to_owned(), link(0))).clone();
        let built = (log.take().into_iter())
            .filter(|query| query.starts_with("program_order("))
            .count();
        (order, built)
    });
    // Callees before callers: the last link first, the head last.
    let names: Vec<&str> = order.iter().map(|(_, name)| name.as_str()).collect();
    let expected: Vec<String> = (0..LINKS).rev().map(link).collect();
    assert_eq!(names, expected);
    assert_eq!(
        built, 1,
        "one order, the head's; none for the links below it"
    );
}

#[test]
fn a_reason_follows_a_change_three_callees_down_then_names_where_it_is() {
    const SHORT: usize = 7;
    let mut db = RootDatabase::default();
    chain_of(SHORT).apply(&mut db);
    let toolchain = trellis_lock::Toolchain {
        trellis: "0.1.0".into(),
        soil0_cli: "0.1.0".into(),
    };
    let mut locks = Change::default();
    for index in 0..SHORT {
        let item = Item::new(&db, "m".to_owned(), link(index));
        let lock = adopted_lock(&db, item, &toolchain, None, None).expect("adoptable");
        let text = trellis_lock::write_lock(&trellis_lock::Lock::Function(lock));
        locks.set_root_file(format!("m/{}.lock", link(index)), text);
    }
    locks.apply(&mut db);
    let mut edit = Change::default();
    let last = link(SHORT - 1);
    edit.set_root_file(format!("m/{last}.soil"), format!("{last} x =\n  x + 2\n"));
    edit.apply(&mut db);
    let rows: String = (root_status(&db).iter())
        .filter(|row| row.kind == "function")
        .map(|row| {
            let reason = row.reason.as_deref().unwrap_or_default();
            let reason = reason.split(": ").skip(1).collect::<Vec<_>>().join(": ");
            format!("{} {}: {reason}\n", row.name, row.status)
        })
        .collect();
    expect![[r#"
        m::c0000 callee-changed: `c0001`, whose own body is unchanged: the change is further below it, in `m::c0006`
        m::c0001 callee-changed: `c0002`, whose own body is unchanged: the change is further below it, in `m::c0006`
        m::c0002 callee-changed: `c0003`, whose own body is unchanged: the change is further below it, in `m::c0006`
        m::c0003 callee-changed: `c0004`, whose own body is unchanged: the change is further below it, in `m::c0006`
        m::c0004 callee-changed: `c0005`, whose own body is unchanged: below it, `c0006`, whose body (or a type it names) changed
        m::c0005 callee-changed: `c0006`, whose body (or a type it names) changed
        m::c0006 tests-stale: the Soil body changed; the tests have not been run
    "#]]
    .assert_eq(&rows);
}
