//! The root-wide joins a host keeps beside its database (design §7.5): after
//! every kind of edit they answer exactly as salsa's root-wide memos do, and they
//! keep the parts of every module the edit cannot reach.

mod support;

use expect_test::expect;
use trellis_db::synthetic::{soil_path, spec_path, synthetic_root};
use trellis_db::{Change, RootDatabase, RootJoins, check_root, root_status};

struct Host {
    db: RootDatabase,
    joins: RootJoins,
    files: std::collections::BTreeMap<String, String>,
}

impl Host {
    fn new(definitions: usize) -> Host {
        Host::loaded(synthetic_root(definitions), RootJoins::default())
    }

    /// A host whose joins hold `files`, answered once and compared.
    fn loaded(files: Vec<(String, String)>, joins: RootJoins) -> Host {
        Host::loaded_into(RootDatabase::default(), files, joins)
    }

    fn loaded_into(db: RootDatabase, files: Vec<(String, String)>, joins: RootJoins) -> Host {
        let files: std::collections::BTreeMap<String, String> = files.into_iter().collect();
        let mut host = Host {
            db,
            joins,
            files: Default::default(),
        };
        let mut change = Change::default();
        for (path, text) in &files {
            change.set_root_file(path.clone(), text.clone());
        }
        host.apply(change);
        host.files = files;
        host.answer_and_compare();
        host
    }

    fn apply(&mut self, change: Change) {
        self.joins.invalidate(&self.db, &change);
        change.apply(&mut self.db);
    }

    /// Edits one file (`None`: deletes it) and returns the modules whose parts
    /// survived the edit.
    fn edit(&mut self, path: &str, text: Option<String>) -> String {
        let mut change = Change::default();
        match &text {
            Some(text) => change.set_root_file(path, text.clone()),
            None => change.remove_file(path),
        };
        self.apply(change);
        match text {
            Some(text) => self.files.insert(path.to_owned(), text),
            None => self.files.remove(path),
        };
        let held = self.joins.held_modules(&self.db).join(" ");
        let reached = self.joins.reached_entries(&self.db);
        let rehashed = match self.joins.rehashed_rows(&self.db) {
            0 => String::new(),
            n => format!(" ({n} rows rehashed)"),
        };
        self.answer_and_compare();
        match reached.len() {
            0 => format!("{held}{rehashed}"),
            1..=4 => format!("{held} + {}{rehashed}", reached.join(" ")),
            n => format!(
                "{held} + {} and {} more{rehashed}",
                reached[..3].join(" "),
                n - 3
            ),
        }
    }

    /// What the next answers ask, to be answered ahead of them (the tests'
    /// edits always reach some entry).
    fn ask_ahead(&mut self) -> trellis_db::AskAhead {
        (self.joins.ask_ahead(&self.db)).expect("the edit reaches entries")
    }

    /// Replaces `from` by `to` in `path` and applies it, asking nothing.
    fn edit_quietly(&mut self, path: &str, (from, to): (&str, &str)) {
        let text = self.files[path].replacen(from, to, 1);
        assert_ne!(text, self.files[path], "{path} does not contain `{from}`");
        let mut change = Change::default();
        change.set_root_file(path, text.clone());
        self.apply(change);
        self.files.insert(path.to_owned(), text);
    }

    fn replace(&mut self, path: &str, from: &str, to: &str) -> String {
        let text = self.files[path].replacen(from, to, 1);
        assert_ne!(text, self.files[path], "{path} does not contain `{from}`");
        self.edit(path, Some(text))
    }

    fn answer_and_compare(&mut self) {
        let check = self.joins.check(&self.db);
        assert_eq!(check, check_root(&self.db, None));
        let status: Vec<_> = self.joins.status(&self.db).into_iter().cloned().collect();
        assert_eq!(status, *root_status(&self.db));
        self.joins.lock_problems(&self.db);
    }
}

/// The answers after an edit visit the modules it reached, not the root's:
/// a body edit of a definition nobody calls, at 400 and at 4,000
/// definitions (8 and 80 modules), visits its own module once for the
/// check, once for the status and once for the unreadable locks.
#[test]
fn answers_after_an_edit_visit_the_modules_it_reached_alone() {
    let visited = |definitions: usize| {
        let mut host = Host::new(definitions);
        let before = host.joins.visited_modules();
        let top = 3 * 50 + 45;
        host.replace(&soil_path(top), "let base = x *", "let base = 1 + x *");
        host.joins.visited_modules() - before
    };
    assert_eq!((visited(400), visited(4_000)), (3, 3));
}

/// The unreadable locks are kept per module and joined from the modules
/// holding any: a lock made unreadable is reported once its edit is
/// applied, beside those of other modules, in the index's order; mending it
/// takes it back; and an edit of another module visits that module alone.
#[test]
fn unreadable_locks_follow_their_edits_and_visit_the_modules_reached() {
    let mut host = Host::new(400);
    let unreadable = |host: &mut Host| -> Vec<String> {
        let problems = host.joins.lock_problems(&host.db);
        (problems.iter())
            .map(|problem| problem.file.clone().unwrap_or_default())
            .collect()
    };
    assert_eq!(unreadable(&mut host), Vec::<String>::new());
    host.edit("m005/f00251.lock", Some("not a lock".to_owned()));
    host.edit("m001/f00051.lock", Some("{".to_owned()));
    assert_eq!(
        unreadable(&mut host),
        ["m001/f00051.lock", "m005/f00251.lock"]
    );
    host.edit("m001/f00051.lock", None);
    assert_eq!(unreadable(&mut host), ["m005/f00251.lock"]);
    let before = host.joins.visited_modules();
    host.edit_quietly(
        &soil_path(3 * 50 + 45),
        ("let base = x *", "let base = 2 + x *"),
    );
    assert_eq!(unreadable(&mut host), ["m005/f00251.lock"]);
    assert_eq!(host.joins.visited_modules() - before, 1);
}

/// Synthetic modules m000–m007: a leaf of m005 is called from m005–m007 only,
/// so an edit of it keeps m000–m004; a top of m003 is called by nobody.
#[test]
fn every_edit_answers_as_salsa_and_keeps_what_it_cannot_reach() {
    let mut host = Host::new(400);
    let leaf = 5 * 50 + 2;
    let top = 3 * 50 + 45;
    let mut table = String::new();
    let mut row = |name: &str, held: String| table.push_str(&format!("{name:<28} {held}\n"));
    row(
        "prose of a top",
        host.replace(&spec_path(top), "A generated", "An edited"),
    );
    row(
        "body of a leaf",
        host.replace(&soil_path(leaf), "let base = x *", "let base = 1 + x *"),
    );
    row(
        "signature of a leaf",
        host.replace(&spec_path(leaf), "(x : I64) -> I64", "(x : I64) -> Bool"),
    );
    row(
        "module decision",
        host.replace("m006/_module.tr", "takes one I64", "takes one I64 only"),
    );
    row(
        "an export withdrawn",
        host.replace("m005/_module.tr", "f00252, ", ""),
    );
    row(
        "and given back",
        host.replace("m005/_module.tr", "f00253", "f00252, f00253"),
    );
    let added = "---\nname: g\ntags: [synthetic]\n---\n\n# g\n\nAdded.\n\n```soil-sig\ng : (x : I64) -> I64\n```\n";
    row(
        "add a definition",
        host.edit("m002/g.tr", Some(added.to_owned())),
    );
    row(
        "add its Soil",
        host.edit("m002/g.soil", Some("g x =\n  x + 1\n".to_owned())),
    );
    row(
        "call it from m004",
        host.replace(
            &soil_path(4 * 50 + 45),
            "let base = x *",
            "let base = m002::g x *",
        ),
    );
    row("delete it", host.edit("m002/g.soil", None));
    row("delete a top", host.edit(&soil_path(top), None));
    row(
        "soil.toml: a description",
        host.replace("soil.toml", "generated for benchmarks", "generated"),
    );
    row(
        "soil.toml: the trellis pin",
        host.replace("soil.toml", "trellis = \"0.1.0\"", "trellis = \"0.1.1\""),
    );
    row(
        "soil.toml: the soil0 pin",
        host.replace(
            "soil.toml",
            "soil0_cli = \"0.1.0\"",
            "soil0_cli = \"1.0.0\"",
        ),
    );
    row(
        "soil.toml: and back",
        host.replace(
            "soil.toml",
            "soil0_cli = \"1.0.0\"",
            "soil0_cli = \"0.1.0\"",
        ),
    );
    row(
        "soil.toml: unreadable",
        host.replace("soil.toml", "[tags]", "[tags"),
    );
    row(
        "soil.toml: readable again",
        host.replace("soil.toml", "[tags", "[tags]"),
    );
    row(
        "soil.toml: a new tag",
        host.replace("soil.toml", "[tags]\n", "[tags]\nextra = \"more\"\n"),
    );
    row(
        "a top of m003 names a tag",
        host.replace(
            &spec_path(top - 1),
            "tags: [synthetic]",
            "tags: [synthetic, rare]",
        ),
    );
    row(
        "soil.toml: declare that tag",
        host.replace("soil.toml", "[tags]\n", "[tags]\nrare = \"seldom\"\n"),
    );
    row(
        "a new module",
        host.edit("m100/h.tr", Some(added.replace("name: g", "name: h"))),
    );
    row(
        "call it from m004",
        host.replace(
            &soil_path(4 * 50 + 46),
            "let base = x *",
            "let base = m100::h x *",
        ),
    );
    row("delete the new module", host.edit("m100/h.tr", None));
    row(
        "a type",
        host.edit(
            "m001/Amount.tr",
            Some(
                "---\nname: Amount\n---\n\n# Amount\n\n```soil-type\ntype Amount = I64\n```\n"
                    .to_owned(),
            ),
        ),
    );
    expect![[r#"
        prose of a top               m000 m001 m002 m004 m005 m006 m007 + m003::f00195
        body of a leaf               m000 m001 m002 m003 m004 + m005::f00252 (9 rows rehashed)
        signature of a leaf          m000 m001 m002 m003 m004 + m005::_module m005::f00252 m005::f00280 and 7 more
        module decision              m000 m001 m002 m003 m004 m005 m007
        an export withdrawn          m000 m001 m002 m003 m004 + m006::f00312 m006::f00313 m006::f00315 and 30 more
        and given back               m000 m001 m002 m003 m004 + m006::f00312 m006::f00313 m006::f00315 and 30 more
        add a definition             m000 m001 m003 m004 m005 m006 m007 + m002::g
        add its Soil                 m000 m001 m003 m004 m005 m006 m007 + m002::g
        call it from m004            m000 m001 m002 m003 m005 m006 m007 + m004::f00245
        delete it                    m000 m001 m003 m005 m006 m007 + m002::g m004::f00245
        delete a top                 m000 m001 m002 m004 m005 m006 m007 + m003::f00195
        soil.toml: a description     m000 m001 m002 m003 m004 m005 m006 m007
        soil.toml: the trellis pin   m000 m001 m002 m003 m004 m005 m006 m007
        soil.toml: the soil0 pin     
        soil.toml: and back          
        soil.toml: unreadable         + m000::_module m000::f00000 m000::f00001 and 406 more
        soil.toml: readable again     + m000::_module m000::f00000 m000::f00001 and 406 more
        soil.toml: a new tag         m000 m001 m002 m003 m004 m005 m006 m007
        a top of m003 names a tag    m000 m001 m002 m004 m005 m006 m007 + m003::f00194
        soil.toml: declare that tag  m000 m001 m002 m004 m005 m006 m007 + m003::f00194
        a new module                 m000 m001 m002 m003 m004 m005 m006 m007
        call it from m004            m000 m001 m002 m003 m005 m006 m007 m100 + m004::f00246
        delete the new module        m000 m001 m002 m003 m005 m006 m007 + m004::f00246
        a type                       
    "#]]
    .assert_eq(&table);
}

/// A change applied without telling the joins is noticed: they drop everything
/// rather than answer from parts the change may have moved.
#[test]
fn a_change_the_joins_were_not_told_of_drops_every_part() {
    let mut host = Host::new(200);
    let mut change = Change::default();
    change.set_file(soil_path(0), "f00000 x =\n  x\n");
    change.apply(&mut host.db);
    host.answer_and_compare();
}

/// The hub root plus a module of call cycles (pairs calling each other, and a
/// ring through a dozen definitions), so several threads meet in shared
/// callees and in cycles.
fn root_with_cycles() -> Vec<(String, String)> {
    let mut files = trellis_db::synthetic::hub_root(400);
    let names: Vec<String> = (0..120).map(|i| format!("r{i:03}")).collect();
    let exports = names.join(", ");
    files.push((
        "ring/_module.tr".to_owned(),
        format!("---\nname: ring\n---\n\n# Module ring\n\nCycles.\n\n```exports\n{exports}\n```\n"),
    ));
    for (i, name) in names.iter().enumerate() {
        let next = match i {
            0..=11 => names[(i + 1) % 12].clone(),
            _ if i % 2 == 0 => names[i + 1].clone(),
            _ => names[i - 1].clone(),
        };
        files.push((
            format!("ring/{name}.soil"),
            format!("{name} x =\n  if x <= 0 then 0 else {next} (x - 1)\n"),
        ));
        files.push((
            format!("ring/{name}.tr"),
            format!(
                "---\nname: {name}\ntags: [synthetic]\n---\n\n# {name}\n\nA cycle.\n\n```soil-sig\n{name} : (x : I64) -> I64\n```\n\n```test basics\n{name}(0) -> 0\n```\n"
            ),
        ));
    }
    files
}

/// Joins that ask ahead on four threads answer as salsa's own memos do (the
/// host compares every answer), cold and after edits that reach hundreds of
/// entries: a hub's body and a ring member's.
#[test]
fn joins_on_four_threads_answer_as_on_one() {
    let mut host = Host::loaded(root_with_cycles(), RootJoins::with_threads(4));
    let hub = trellis_db::synthetic::hub_soil_path(0);
    host.replace(&hub, "let base = x *", "let base = 1 + x *");
    host.replace("ring/r005.soil", "x - 1", "x - 2");
    host.replace(&hub, "let base = 1 + x *", "let base = x *");
}

/// A body edit moves only its dependents' hashes when it is sealed (design
/// §7.8): its function signed before and after, in no cycle, calling the same
/// definitions. Then the next answer re-checks the edited definition alone and
/// climbs its dependents' status ladders from their hashes; otherwise every
/// entry it reaches is asked again. The host compares every answer with
/// salsa's, so a cut-off taken where it must not be fails here.
#[test]
fn a_body_edit_moves_only_hashes_when_sealed() {
    use trellis_db::synthetic::{hub_root, hub_soil_path};
    let mut host = Host::loaded(hub_root(400), RootJoins::default());
    let hub = hub_soil_path(0);
    let hub_spec = hub.replace(".soil", ".tr");
    // Each edit in turn: its row's name, the file, and the text it replaces.
    let edits = [
        (
            "sealed: arithmetic",
            &hub,
            "let base = x *",
            "let base = 1 + x *",
        ),
        ("and back", &hub, "let base = 1 + x *", "let base = x *"),
        ("unparsable", &hub, "  base\n", "  base +\n"),
        ("mended", &hub, "  base +\n", "  base\n"),
        (
            "a new call",
            &hub,
            "x * 3 + 10",
            "x * 3 + 10 + m000::f00000 x",
        ),
        (
            "a cycle through a caller",
            &hub,
            "m000::f00000 x",
            "hub1::h107 x",
        ),
        ("out of the cycle", &hub, " + hub1::h107 x", ""),
        ("sealed again", &hub, "x * 3 + 10", "x * 3 + 11"),
        (
            "signature withdrawn",
            &hub_spec,
            "```soil-sig\nh000 : (x : I64) -> I64\n```\n",
            "",
        ),
        ("unsigned: a Bool now", &hub, "  base\n", "  base > 0\n"),
    ];
    let mut rows = String::new();
    for (name, path, from, to) in edits {
        let answer = host.replace(path, from, to);
        let reached = answer.split_once(" + ").map_or("", |(_, reached)| reached);
        rows.push_str(&format!("{name:<26} {reached}\n"));
    }
    // The callers read the unsigned body, so their checks fail now.
    let check = host.joins.check(&host.db);
    assert!(
        (check.diagnostics.iter()).any(|d| d.file.as_deref() == Some("hub1/h107.soil")),
        "{:#?}",
        check.diagnostics
    );
    expect![[r#"
        sealed: arithmetic         hub0::h000 (57 rows rehashed)
        and back                   hub0::h000 (57 rows rehashed)
        unparsable                 hub0::_module hub0::h000 hub1::_module and 55 more
        mended                     hub0::_module hub0::h000 hub1::_module and 55 more
        a new call                 hub0::_module hub0::h000 hub1::_module and 55 more
        a cycle through a caller   hub0::_module hub0::h000 hub1::_module and 55 more
        out of the cycle           hub0::_module hub0::h000 hub1::_module and 55 more
        sealed again               hub0::h000 (57 rows rehashed)
        signature withdrawn        hub0::_module hub0::h000 hub1::_module and 55 more
        unsigned: a Bool now       hub0::_module hub0::h000 hub1::_module and 55 more
    "#]]
    .assert_eq(&rows);
}

/// Answers asked ahead (design §7.10): after a hub edit, another thread
/// answers what the next check and status ask, and the request then takes
/// those answers: it executes none of the queries answered ahead, and answers
/// as salsa does.
#[test]
fn answers_asked_ahead_leave_the_request_nothing_to_execute() {
    let mut host = Host::loaded_into(
        RootDatabase::with_query_log(),
        trellis_db::synthetic::hub_root(400),
        RootJoins::with_threads(2),
    );
    let hub = trellis_db::synthetic::hub_soil_path(0);
    host.edit_quietly(&hub, ("let base = x *", "let base = 1 + x *"));
    let ahead = host.ask_ahead();
    let asked = ahead.len();
    assert!(asked > 50, "only {asked} entries asked ahead");
    host.db.query_log().start();
    assert!(std::thread::spawn(move || ahead.answer()).join().unwrap());
    let executed_ahead = host.db.query_log().take();
    host.answer_and_compare();
    let executed_again: Vec<String> = (host.db.query_log().take().into_iter())
        .filter(|query| executed_ahead.contains(query))
        .collect();
    assert!(!executed_ahead.is_empty());
    assert_eq!(executed_again, Vec::<String>::new());
    assert_eq!(host.joins.taken_ahead(), asked);
}

/// Answers asked ahead and then not given — dropped unanswered, or cancelled
/// by a change applied while they are answered — leave the request to ask
/// for itself, and never answer for another revision.
#[test]
fn answers_asked_ahead_never_outlive_their_revision() {
    let mut host = Host::loaded(
        trellis_db::synthetic::hub_root(400),
        RootJoins::with_threads(2),
    );
    let hub = trellis_db::synthetic::hub_soil_path(0);
    let edits = [
        ("let base = x *", "let base = 1 + x *"),
        ("let base = 1 + x *", "let base = 2 + x *"),
        ("let base = 2 + x *", "let base = x *"),
    ];
    // Dropped unanswered: the next answer asks for itself, without waiting.
    host.edit_quietly(&hub, edits[0]);
    drop(host.joins.ask_ahead(&host.db));
    host.answer_and_compare();
    assert_eq!(host.joins.taken_ahead(), 0);
    // Answered, then a change: the shelved answers are for the revision before.
    host.edit_quietly(&hub, edits[1]);
    let ahead = host.ask_ahead();
    assert!(ahead.answer());
    host.edit_quietly(&hub, edits[2]);
    host.answer_and_compare();
    assert_eq!(host.joins.taken_ahead(), 0);
    // A change while another thread answers: salsa cancels that work, the
    // write going on once it unwound, whichever came first.
    host.edit_quietly(&hub, edits[0]);
    let ahead = host.ask_ahead();
    let answering = std::thread::spawn(move || ahead.answer());
    host.edit_quietly(&hub, edits[1]);
    answering.join().expect("cancelled, not panicked");
    host.answer_and_compare();
}

/// Status rows answered ahead of an edit that a client only checked are
/// joined by `absorb_answered_ahead`, so the next `status` asks nothing of
/// that edit again; absorbing waits for nothing and asks salsa for nothing.
#[test]
fn answers_no_request_took_are_absorbed_into_the_joins() {
    let mut host = Host::loaded(
        trellis_db::synthetic::hub_root(400),
        RootJoins::with_threads(2),
    );
    let hub = trellis_db::synthetic::hub_soil_path(0);
    host.edit_quietly(&hub, ("let base = x *", "let base = 1 + x *"));
    let ahead = host.ask_ahead();
    let asked = ahead.len();
    assert!(ahead.answer());
    let check = host.joins.check(&host.db);
    assert_eq!(check, check_root(&host.db, None));
    let taken_by_check = host.joins.taken_ahead();
    assert!(taken_by_check > 0 && taken_by_check < asked);
    assert!(host.joins.rehashed_rows(&host.db) > 0);
    host.joins.absorb_answered_ahead(&host.db);
    assert_eq!(host.joins.taken_ahead(), asked);
    assert_eq!(host.joins.rehashed_rows(&host.db), 0);
    host.answer_and_compare();
    // Nothing shelved any more: absorbing again takes nothing.
    host.joins.absorb_answered_ahead(&host.db);
    assert_eq!(host.joins.taken_ahead(), asked);
}

/// A spec edit that keeps its blocks (prose, a heading) moves its own
/// entries alone (design §7.14), whoever names the definition in prose and
/// whatever a record type's spec says of it; yet a finding of another entry
/// located in the spec moves with its lines: a broken type environment fails
/// every check with the type spec's own finding, so an edit of that spec's
/// prose reaches every entry that cites it.
#[test]
fn a_spec_edit_that_keeps_its_blocks_moves_its_own_entries_and_what_cites_it() {
    let mut files = synthetic_root(150);
    files.extend([
        (
            "k/_module.tr".to_owned(),
            "---\nname: k\n---\n\n# Module k\n\nNames `g` and `f`.\n".to_owned(),
        ),
        (
            "k/g.tr".to_owned(),
            "---\nname: g\ntags: [synthetic]\n---\n\n# g\n\nUnsigned; see `f`.\n\n```ensures\nwrong: result == \"text\"\n```\n".to_owned(),
        ),
        ("k/g.soil".to_owned(), "g x =\n  x + 1\n".to_owned()),
        (
            "k/f.tr".to_owned(),
            "---\nname: f\ntags: [synthetic]\n---\n\n# f\n\nCalls `g`, like `m000::f00000` and `Pair`.\n\n```soil-sig\nf : (x : I64) -> I64\n```\n".to_owned(),
        ),
        ("k/f.soil".to_owned(), "f x =\n  g x\n".to_owned()),
        (
            "k/Pair.tr".to_owned(),
            "---\nname: Pair\ntags: [synthetic]\n---\n\n# Pair\n\nUsed by `f`, `g` and `m000::f00000`.\n\n```soil-type\ntype Pair = {\n  a : I64,\n  b : I64\n}\n```\n".to_owned(),
        ),
    ]);
    let mut host = Host::loaded(files, RootJoins::default());
    let cited: Vec<String> = (check_root(&host.db, None).diagnostics.iter())
        .map(|d| {
            format!(
                "{} {}",
                d.file.as_deref().unwrap_or(""),
                d.span.map_or(0, |s| s.start.line)
            )
        })
        .collect();
    let mut table = format!("findings: {}\n", cited.join(", "));
    let mut row = |name: &str, held: String| table.push_str(&format!("{name:<24} {held}\n"));
    row(
        "prose of g",
        host.replace("k/g.tr", "Unsigned;", "Unsigned,\nand its lines move;"),
    );
    row(
        "prose of m000's first",
        host.replace(&spec_path(0), "A generated", "An edited"),
    );
    row(
        "prose of a type",
        host.replace("k/Pair.tr", "Used by", "Read by"),
    );
    row(
        "a type broken",
        host.replace("k/Pair.tr", "b : I64", "b : Missing"),
    );
    row(
        "and its prose edited",
        host.replace("k/Pair.tr", "# Pair", "# Pair\n\nA pair."),
    );
    row(
        "prose of k's own spec",
        host.replace("k/_module.tr", "Names", "It names"),
    );
    row(
        "prose of the project",
        host.replace("_project.tr", "Generated for", "Made for"),
    );
    let cited: Vec<String> = (check_root(&host.db, None).diagnostics.iter())
        .map(|d| {
            format!(
                "{} {}",
                d.file.as_deref().unwrap_or(""),
                d.span.map_or(0, |s| s.start.line)
            )
        })
        .collect();
    table.push_str(&format!("findings: {}\n", cited.join(", ")));
    expect![[r#"
        findings: k/f.tr 10, k/g.tr 1, k/g.tr 11
        prose of g               m000 m001 m002 + k::g
        prose of m000's first    k m001 m002 + m000::f00000
        prose of a type          m000 m001 m002 + k::Pair
        a type broken            
        and its prose edited      + k::Pair k::f k::g and 150 more
        prose of k's own spec    m000 m001 m002 + k::_module
        prose of the project     k m000 m001 m002
        findings: k/f.tr 10, k/Pair.tr 15, k/g.tr 1, k/g.tr 12
    "#]]
    .assert_eq(&table);
}

/// A summary's `callee-changed` rows (design §7.13): after an edit below a
/// green row, the row a summary counts names the moved edge alone, the row
/// it shows says what changed below it (as a whole status says of every
/// row, and salsa's memo does), and a row once explained stays so.
#[test]
fn a_summary_says_what_changed_below_a_callee_only_of_the_rows_it_shows() {
    let mut host = Host::loaded(support::example_files(), RootJoins::default());
    host.joins.prepare_for_edits(&host.db);
    // A sealed edit of `finite` (design §7.8): its callers' rows climb
    // their ladders again past the check rungs.
    host.edit_quietly(
        "csvstats/finite.soil",
        ("is_finite x", "is_finite (x + 0.0)"),
    );
    let median = |groups: &mut dyn Iterator<Item = trellis_db::RowGroup<'_>>| {
        groups
            .flat_map(|group| group.rows)
            .find(|row| row.name == "csvstats::all_finite")
            .map(|row| format!("{}: {}", row.status, row.reason.as_deref().unwrap_or("")))
    };
    let counted = median(&mut host.joins.status_summary(&host.db).0);
    let shown = (host.joins.explained(&host.db, "csvstats::all_finite"))
        .map(|row| format!("{}: {}", row.status, row.reason.as_deref().unwrap_or("")));
    let whole = median(&mut host.joins.status_groups(&host.db).into_iter());
    expect![[r#"
        Some("callee-changed: a callee or private helper changed since the lowering was checked: `finite`")
        Some("callee-changed: a callee or private helper changed since the lowering was checked: `finite`, whose body (or a type it names) changed")
    "#]]
    .assert_eq(&format!("{counted:?}\n{shown:?}\n"));
    assert_eq!(shown, whole);
    assert!(
        host.joins
            .explained(&host.db, "csvstats::all_finite")
            .is_none()
    );
    host.answer_and_compare();
}

/// A host that asks only for the status finds, on a prose edit of a spec,
/// the rows whose reasons name that spec's file, though no check part holds
/// the findings they quote: a broken record type fails every definition's
/// check, and every row says so, naming the type's spec.
#[test]
fn a_status_only_host_reaches_the_rows_naming_an_edited_spec() {
    let mut files = synthetic_root(100);
    let pair = "---\nname: Pair\ntags: [synthetic]\n---\n\n# Pair\n\nTwo numbers.\n\n```soil-type\ntype Pair = {\n  a : I64,\n  b : Missing\n}\n```\n";
    files.extend([
        (
            "k/_module.tr".to_owned(),
            "---\nname: k\n---\n\n# Module k\n\nA type.\n".to_owned(),
        ),
        ("k/Pair.tr".to_owned(), pair.to_owned()),
    ]);
    let mut db = RootDatabase::default();
    let mut joins = RootJoins::default();
    let mut change = Change::default();
    for (path, text) in &files {
        change.set_root_file(path.clone(), text.clone());
    }
    joins.invalidate(&db, &change);
    change.apply(&mut db);
    let naming = (joins.status(&db).iter())
        .filter(|row| {
            row.reason
                .as_deref()
                .is_some_and(|r| r.contains("k/Pair.tr"))
        })
        .count();
    assert!(naming >= 100, "{naming} rows name the type's spec");
    let mut change = Change::default();
    change.set_root_file(
        "k/Pair.tr",
        pair.replace("Two numbers.", "Two numbers, edited."),
    );
    joins.invalidate(&db, &change);
    change.apply(&mut db);
    assert!(joins.reached_entries(&db).len() >= 100);
    let status: Vec<_> = joins.status(&db).into_iter().cloned().collect();
    assert_eq!(status, *root_status(&db));
}
