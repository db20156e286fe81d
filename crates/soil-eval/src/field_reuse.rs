//! `{ r with items = push r.items x }`: the new value reads the field it
//! replaces, so while it is computed the old list is held twice (by `r` and by
//! the `push`) and is copied. When `r` is a local that the new values read only
//! through its fields, the replaced fields they read are fetched into slots of
//! their own first, moved out of the record when `r` dies at the update and
//! holds its record alone (liveness decides that: [`Prefetch::take`]), so the
//! update is in place like a pattern taking the record apart.

use crate::ir::{Expr, FetchedField, FieldUpdate, Prefetch, Slot};

/// Rewrites the values of an update of local `source` to read the replaced
/// fields they use from fresh slots (`alloc` gives them). `None` when nothing
/// is worth fetching, or when a value reads `source` whole (directly or by a
/// closure), where a field moved out would show.
pub(crate) fn prefetch_fields(
    source: Slot,
    fields: &mut [FieldUpdate],
    mut alloc: impl FnMut() -> Slot,
) -> Option<Box<Prefetch>> {
    if !fields.iter().all(|f| reads_only_fields(&f.value, source)) {
        return None;
    }
    let mut fetched = Vec::new();
    for i in 0..fields.len() {
        let name = fields[i].name.clone();
        if !fields.iter().any(|f| reads_field(&f.value, source, &name)) {
            continue;
        }
        let slot = alloc();
        for field in fields.iter_mut() {
            redirect(&mut field.value, source, &name, slot);
        }
        fetched.push(FetchedField {
            slot,
            candidates: fields[i].candidates.clone(),
            name,
        });
    }
    if fetched.is_empty() {
        return None;
    }
    Some(Box::new(Prefetch {
        source,
        take: false,
        fields: fetched.into(),
    }))
}

fn is_source(expr: &Expr, source: Slot) -> bool {
    matches!(expr, Expr::Local(s) | Expr::LocalMove(s) if *s == source)
}

/// Whether `expr` reads `source` only as `source.field`.
fn reads_only_fields(expr: &Expr, source: Slot) -> bool {
    match expr {
        Expr::Local(s) | Expr::LocalMove(s) => *s != source,
        Expr::LocalOpI64 { slot, .. } => *slot != source,
        Expr::Closure { captures, .. } => !captures.contains(&source),
        Expr::Field { record, .. } if is_source(record, source) => true,
        _ => {
            let mut only = true;
            expr.each_child(&mut |child| only &= reads_only_fields(child, source));
            only
        }
    }
}

fn reads_field(expr: &Expr, source: Slot, field: &str) -> bool {
    match expr {
        Expr::Field { record, name, .. } if is_source(record, source) => &**name == field,
        _ => {
            let mut reads = false;
            expr.each_child(&mut |child| reads |= reads_field(child, source, field));
            reads
        }
    }
}

fn redirect(expr: &mut Expr, source: Slot, field: &str, slot: Slot) {
    match expr {
        Expr::Field { record, name, .. } if is_source(record, source) => {
            if &**name == field {
                *expr = Expr::Local(slot);
            }
        }
        _ => expr.each_child_mut(&mut |child| redirect(child, source, field, slot)),
    }
}
