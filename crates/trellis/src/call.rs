//! `trellis call DEF JSON-ARGS`: run a definition with real capabilities, in this
//! process rather than the daemon, so the real `Fs` resolves relative paths against
//! the caller's working directory (a cram transcript's temporary directory, say).
//! The run itself is soil0's §8.6 implementation, shared with `soil0 run`, over
//! the program the database's checker sees, so its diagnostics point into the
//! root's files as `check`'s do; a definition with typed holes runs until it
//! reaches one (`unfilled-hole`, soil-syntax-spec §10).

use trellis_db::{
    CheckOutcome, Item, Named, check_definition, checker_definition, checker_env, program_order,
    report_diagnostics,
};
use trellis_diag::Diagnostic;

use trellis_service::codes::HostCode;
use trellis_service::service::Service;

/// Runs the call: the result's canonical JSON, or why there is none (refused
/// before running, or the run's panic). The caller renders either.
pub fn call(root: &std::path::Path, def: &str, json_args: &str) -> Result<String, Vec<Diagnostic>> {
    let mut service = Service::one_shot(root.to_owned());
    service.refresh();
    trellis_service::service::check_pin_of(&service).map_err(|error| vec![error])?;
    let db = service.database();
    let item = trellis_db::resolve_definition(db, def, Named::Function).map_err(|e| vec![e])?;
    not_lowered(db, item).map_or(Ok(()), |refusal| Err(vec![refusal]))?;
    // The database's check first: it knows where each equation sits in its file,
    // so its findings carry file positions, where soil0's are relative to the
    // equation text of program.json (soil0-cli §7.2).
    let mut errors = Vec::new();
    for (module, name) in program_order(db, item).iter() {
        let member = Item::new(db, module.clone(), name.clone());
        if let CheckOutcome::Failed(found) = check_definition(db, member) {
            errors.extend(report_diagnostics(db, found));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    // The program as the checker sees it: each equation with its whole `.soil`
    // file as its source and each clause with its spec block, so what the run
    // reports points where `check` points. (program.json embeds each equation
    // as its canonical print, and a span into that text named the wrong line
    // of any file not already in canonical form.)
    let definitions = program_order(db, item).iter().filter_map(|(module, name)| {
        checker_definition(db, Item::new(db, module.clone(), name.clone())).clone()
    });
    let outcome = match soil0::load_program(checker_env(db), definitions) {
        Ok(loaded) => soil0::run::run_loaded(
            &loaded,
            &item.qualified(db),
            json_args,
            &mut soil0::run::command_line_world(),
        ),
        Err(errors) => soil0::run::RunOutcome::Refused(errors),
    };
    match outcome {
        soil0::run::RunOutcome::Value(json) => Ok(json),
        soil0::run::RunOutcome::Refused(errors) => Err(report_diagnostics(db, &errors)),
        soil0::run::RunOutcome::Panicked(panic) => Err(report_diagnostics(db, &[panic])),
    }
}

/// `unknown-definition` for a definition that is specified but has no Soil
/// yet, saying so and how to lower it (soil0 would only say that the program
/// names no such definition).
fn not_lowered(db: &dyn trellis_db::Db, item: Item<'_>) -> Option<Diagnostic> {
    let (module, name) = (item.module(db), item.name(db));
    let index = trellis_db::root_index(db, trellis_db::Workspace::get(db));
    let files = index.module(module)?;
    if files.soils.contains_key(name) {
        return None;
    }
    let dir = module.replace("::", "/");
    let def = item.qualified(db);
    Some(
        HostCode::UnknownDefinition
            .diagnostic(format!(
                "`{def}` is specified but not lowered yet: {dir}/{name}.tr has no \
                 {dir}/{name}.soil to run"
            ))
            .with_file(format!("{dir}/{name}.tr"))
            .with_note(format!(
                "lower it with an agent: `trellis lower {def}`; or write {dir}/{name}.soil \
                 by hand and record it: `trellis adopt {def}`"
            )),
    )
}
