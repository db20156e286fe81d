//! `check` and `status`: the static pipeline and the status ladder, answered from
//! the database's queries.

use serde_json::{Value, json};
use trellis_rpc::RpcError;

use super::Service;

pub fn check(service: &mut Service, params: &Value) -> Result<Value, RpcError> {
    let def = params.get("def").and_then(Value::as_str);
    let report = trellis_db::check_root(service.database(), def);
    let mut errors: Vec<Value> = service
        .load_problems()
        .iter()
        .map(|d| d.to_json())
        .collect();
    errors.extend(report.diagnostics.iter().map(|d| d.to_json()));
    Ok(json!({ "checked": report.checked, "errors": errors }))
}

pub fn status(service: &mut Service, _params: &Value) -> Result<Value, RpcError> {
    let rows = trellis_db::root_status(service.database());
    let definitions: Vec<Value> = rows
        .iter()
        .map(|row| {
            json!({
                "name": row.name,
                "kind": row.kind,
                "status": row.status,
                "reason": row.reason,
                "fix": row.fix,
            })
        })
        .collect();
    Ok(json!({ "definitions": definitions }))
}
