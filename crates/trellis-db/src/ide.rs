//! What an editor asks of the database beyond what `check` reports (design §9.9):
//! the type of each name a definition's equation binds or mentions, for hover. It
//! is its own query so that it runs only when a hover asks: `check_definition`
//! keeps its position-free facts (an observed type carries a span, which would
//! wake every reader of the facts after any reformat), and an ordinary check pays
//! nothing for the observation. It reads exactly the program `check_definition`
//! checks, so hover and `check` cannot disagree about a type.

use soil_types::NameType;

use crate::check::{declared_env, definition_program, has_body};
use crate::db::Db;
use crate::index::Item;

/// Every name of `item`'s equation with its type there, in source order of the
/// check (empty when the item has no body). Spans are in the item's `.soil` file.
#[salsa::tracked(returns(ref))]
pub fn name_types<'db>(db: &'db dyn Db, item: Item<'db>) -> Vec<NameType> {
    if !has_body(db, item) {
        return Vec::new();
    }
    let program = definition_program(db, item);
    soil_types::name_types_declared(declared_env(db), &program, &item.qualified(db))
}
