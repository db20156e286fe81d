//! `trellis-rpc`: JSON-RPC 2.0 framing over byte streams, the Unix socket server and client, peer credential checks.
