//! `trellis-mcp` owns the MCP face of a lowering job (trellis-daemon §2, §3): the
//! protocol a tools-only server speaks — both generations real clients send today,
//! the 2026-07-28 revision (`server/discover`, the protocol version in each
//! request's `_meta`) and the `initialize` handshake (`2025-11-25`) — the seven
//! tools with input schemas generated from the contract's Soil types, argument
//! validation, and the result discipline (one text item holding one compact JSON
//! document; failures `isError` with an `{"errors": [...]}` document; a result over
//! the cap refused, never truncated). The tools themselves run behind
//! [`JobPort`]: this crate frames messages with `trellis-rpc`'s codec, enriches
//! its diagnostics through `trellis-diag`'s registry, and knows no database,
//! daemon, socket or provider.

pub mod port;
pub mod schema;
pub mod server;
pub mod tools;

pub use port::JobPort;
pub use schema::{Ty, excerpt};
pub use server::{
    DEFAULT_RESULT_CAP, LEGACY_PROTOCOL, MODERN_PROTOCOL, McpServer, PROTOCOL_META_KEY, serve,
};
pub use tools::{TOOLS, Tool, ToolSpec, tool_list};
