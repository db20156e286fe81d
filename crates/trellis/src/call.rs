//! `trellis call DEF JSON-ARGS`: run a definition with real capabilities, in this
//! process rather than the daemon, so the real `Fs` resolves relative paths against
//! the caller's working directory (a cram transcript's temporary directory, say).
//! The run itself is soil0's §8.6 implementation, shared with `soil0 run`.

use trellis_db::{
    CheckOutcome, Item, Named, check_definition, env_json, program_json, program_order,
    report_diagnostics,
};
use trellis_diag::Diagnostic;

use trellis_service::codes::HostCode;
use trellis_service::service::Service;

/// Runs the call: the result's canonical JSON, or why there is none (refused
/// before running, or the run's panic). The caller renders either.
pub fn call(root: &std::path::Path, def: &str, json_args: &str) -> Result<String, Vec<Diagnostic>> {
    let mut service = Service::new(root.to_owned());
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
    let env = env_json(db);
    let program = program_json(db, item);
    let mut world = soil0::run::command_line_world();
    let outcome = soil0::run::run_with_world(
        soil0::Source::new("env.json", env),
        soil0::Source::new("program.json", program),
        &item.qualified(db),
        json_args,
        &mut world,
    );
    match outcome {
        soil0::run::RunOutcome::Value(json) => Ok(json),
        soil0::run::RunOutcome::Refused(errors) => Err(errors),
        soil0::run::RunOutcome::Panicked(panic) => Err(vec![panic]),
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
