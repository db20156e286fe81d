//! The centralized error-code tables: JSON-RPC wire codes and the diagnostic codes
//! this crate emits. Both are pinned by tests; never renumber or repurpose one.

/// A JSON-RPC error code. The five standard codes keep their JSON-RPC 2.0
/// meaning; Trellis's own codes live in the server range `-32000..=-32099`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The frame was not valid JSON (or not UTF-8).
    ParseError,
    /// Valid JSON that is not a JSON-RPC 2.0 request (or a batch, unsupported).
    InvalidRequest,
    /// The method does not exist (or is a reserved `rpc.` name).
    MethodNotFound,
    /// The params do not fit the method.
    InvalidParams,
    /// The server failed (a handler panicked, a response could not be written).
    InternalError,
    /// The method ran and failed; `data.errors` carries its diagnostics.
    RequestFailed,
    /// The frame exceeded the frame limit (request or response).
    FrameTooLarge,
    /// The peer's uid is not the server's uid; the connection is closed.
    UnauthorizedPeer,
    /// The client announced a different version in `rpc.hello`; restart the daemon.
    VersionMismatch,
    /// The server is at its connection cap; the connection is closed.
    ServerBusy,
    /// The request was cancelled (an input changed under it); retry.
    RequestCancelled,
    /// The server is shutting down and takes no new requests.
    ShuttingDown,
}

impl ErrorCode {
    /// Every code, in table order.
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::ParseError,
        ErrorCode::InvalidRequest,
        ErrorCode::MethodNotFound,
        ErrorCode::InvalidParams,
        ErrorCode::InternalError,
        ErrorCode::RequestFailed,
        ErrorCode::FrameTooLarge,
        ErrorCode::UnauthorizedPeer,
        ErrorCode::VersionMismatch,
        ErrorCode::ServerBusy,
        ErrorCode::RequestCancelled,
        ErrorCode::ShuttingDown,
    ];

    /// The number on the wire.
    pub const fn code(self) -> i64 {
        match self {
            ErrorCode::ParseError => -32700,
            ErrorCode::InvalidRequest => -32600,
            ErrorCode::MethodNotFound => -32601,
            ErrorCode::InvalidParams => -32602,
            ErrorCode::InternalError => -32603,
            ErrorCode::RequestFailed => -32000,
            ErrorCode::FrameTooLarge => -32001,
            ErrorCode::UnauthorizedPeer => -32002,
            ErrorCode::VersionMismatch => -32003,
            ErrorCode::ServerBusy => -32004,
            ErrorCode::RequestCancelled => -32005,
            ErrorCode::ShuttingDown => -32006,
        }
    }

    pub fn from_code(code: i64) -> Option<ErrorCode> {
        ErrorCode::ALL
            .iter()
            .copied()
            .find(|known| known.code() == code)
    }

    /// The diagnostic code carried in `data.errors` when the transport itself
    /// raises this error. `RequestFailed` has none: its diagnostics are the
    /// method's own.
    pub const fn diagnostic_code(self) -> Option<&'static str> {
        match self {
            ErrorCode::ParseError => Some(diag::PARSE_ERROR),
            ErrorCode::InvalidRequest => Some(diag::INVALID_REQUEST),
            ErrorCode::MethodNotFound => Some(diag::METHOD_NOT_FOUND),
            ErrorCode::InvalidParams => Some(diag::INVALID_PARAMS),
            ErrorCode::InternalError => Some(diag::INTERNAL_ERROR),
            ErrorCode::RequestFailed => None,
            ErrorCode::FrameTooLarge => Some(diag::FRAME_TOO_LARGE),
            ErrorCode::UnauthorizedPeer => Some(diag::UNAUTHORIZED_PEER),
            ErrorCode::VersionMismatch => Some(diag::VERSION_MISMATCH),
            ErrorCode::ServerBusy => Some(diag::SERVER_BUSY),
            ErrorCode::RequestCancelled => Some(diag::REQUEST_CANCELLED),
            ErrorCode::ShuttingDown => Some(diag::SHUTTING_DOWN),
        }
    }
}

/// The diagnostic codes this crate emits (registry source `trellis`,
/// spec_ref `design#4`).
pub mod diag {
    pub const PARSE_ERROR: &str = "rpc-parse-error";
    pub const INVALID_REQUEST: &str = "rpc-invalid-request";
    pub const METHOD_NOT_FOUND: &str = "rpc-method-not-found";
    pub const INVALID_PARAMS: &str = "rpc-invalid-params";
    pub const INTERNAL_ERROR: &str = "rpc-internal-error";
    pub const FRAME_TOO_LARGE: &str = "rpc-frame-too-large";
    pub const UNAUTHORIZED_PEER: &str = "rpc-unauthorized-peer";
    pub const VERSION_MISMATCH: &str = "rpc-version-mismatch";
    pub const SERVER_BUSY: &str = "rpc-server-busy";
    pub const REQUEST_CANCELLED: &str = "rpc-request-cancelled";
    pub const SHUTTING_DOWN: &str = "rpc-shutting-down";
    /// The socket directory or socket is not private to this user.
    pub const SOCKET_INSECURE: &str = "rpc-socket-insecure";
    /// A live daemon already serves this socket.
    pub const SOCKET_IN_USE: &str = "rpc-socket-in-use";
    /// The daemon could not be reached (or spawned) before the timeout.
    pub const DAEMON_UNREACHABLE: &str = "rpc-daemon-unreachable";

    pub const ALL: &[&str] = &[
        PARSE_ERROR,
        INVALID_REQUEST,
        METHOD_NOT_FOUND,
        INVALID_PARAMS,
        INTERNAL_ERROR,
        FRAME_TOO_LARGE,
        UNAUTHORIZED_PEER,
        VERSION_MISMATCH,
        SERVER_BUSY,
        REQUEST_CANCELLED,
        SHUTTING_DOWN,
        SOCKET_INSECURE,
        SOCKET_IN_USE,
        DAEMON_UNREACHABLE,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn the_wire_code_table_is_pinned() {
        let table: String = ErrorCode::ALL
            .iter()
            .map(|code| {
                format!(
                    "{} {:?} {}\n",
                    code.code(),
                    code,
                    code.diagnostic_code().unwrap_or("-")
                )
            })
            .collect();
        expect![[r#"
            -32700 ParseError rpc-parse-error
            -32600 InvalidRequest rpc-invalid-request
            -32601 MethodNotFound rpc-method-not-found
            -32602 InvalidParams rpc-invalid-params
            -32603 InternalError rpc-internal-error
            -32000 RequestFailed -
            -32001 FrameTooLarge rpc-frame-too-large
            -32002 UnauthorizedPeer rpc-unauthorized-peer
            -32003 VersionMismatch rpc-version-mismatch
            -32004 ServerBusy rpc-server-busy
            -32005 RequestCancelled rpc-request-cancelled
            -32006 ShuttingDown rpc-shutting-down
        "#]]
        .assert_eq(&table);
    }

    #[test]
    fn codes_are_unique_and_round_trip() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_code(code.code()), Some(*code));
            let server_range = (-32099..=-32000).contains(&code.code());
            let standard = (-32768..=-32600).contains(&code.code());
            assert!(
                server_range || standard,
                "{code:?} outside the reserved ranges"
            );
        }
        assert_eq!(ErrorCode::from_code(-1), None);
    }

    #[test]
    fn every_diagnostic_code_is_registered() {
        assert_eq!(
            trellis_diag::registry::missing_codes(diag::ALL.iter().copied()),
            Vec::<&str>::new()
        );
        for code in ErrorCode::ALL {
            if let Some(diagnostic) = code.diagnostic_code() {
                assert!(
                    diag::ALL.contains(&diagnostic),
                    "{diagnostic} missing from diag::ALL"
                );
            }
        }
    }
}
