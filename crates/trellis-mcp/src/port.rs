//! The job port: what a tool call needs from whoever holds the job. The MCP
//! server validates a call's arguments against the tool's schema, then hands it
//! over; the port answers with the tool's result document or the diagnostics of
//! its failure (contract §6 shape, already carrying `repair_class` and `spec_ref`).

use serde_json::Value;

use crate::tools::Tool;

pub trait JobPort {
    /// Runs one tool call whose `arguments` fit the tool's input schema.
    fn call(&mut self, tool: Tool, arguments: &Value) -> Result<Value, Vec<Value>>;
}

impl<P: JobPort + ?Sized> JobPort for &mut P {
    fn call(&mut self, tool: Tool, arguments: &Value) -> Result<Value, Vec<Value>> {
        (**self).call(tool, arguments)
    }
}
