//! The diagnostic codes the host emits, as one enum instead of string
//! literals scattered over its modules: each is a code of
//! `registry/diagnostics.json` (a test checks every variant is there, and the
//! tidy test that no host module passes a raw code to `Diagnostic::new`). Codes
//! other crates own (`trellis-rpc`'s transport codes) are used through their
//! constants.

use trellis_diag::Diagnostic;

macro_rules! host_codes {
    ($($variant:ident => $code:literal,)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum HostCode {
            $($variant,)*
        }

        impl HostCode {
            /// Every code, in the order listed.
            pub const ALL: &'static [HostCode] = &[$(HostCode::$variant,)*];

            /// The code as the registry and the wire spell it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(HostCode::$variant => $code,)*
                }
            }
        }
    };
}

host_codes! {
    BundleOutNotEmpty => "bundle-out-not-empty",
    BundlePath => "bundle-path",
    BundleWriteFailed => "bundle-write-failed",
    ConfigNoRoot => "config-no-root",
    ConfigProviders => "config-providers",
    ConfigRootExists => "config-root-exists",
    JobAnswerBreaksSpec => "job-answer-breaks-spec",
    JobBadScope => "job-bad-scope",
    JobCancelled => "job-cancelled",
    JobCapExceeded => "job-cap-exceeded",
    JobEmptyAnswer => "job-empty-answer",
    JobEnded => "job-ended",
    JobFinalGate => "job-final-gate",
    JobInvalidated => "job-invalidated",
    JobJailUnavailable => "job-jail-unavailable",
    JobNeedsDaemon => "job-needs-daemon",
    JobNoDecisionsFile => "job-no-decisions-file",
    JobNoQuestion => "job-no-question",
    JobNotFound => "job-not-found",
    JobProviderError => "job-provider-error",
    JobQuestionUnreadable => "job-question-unreadable",
    JobStaleQuestion => "job-stale-question",
    JsonTypeMismatch => "json-type-mismatch",
    LockBadValue => "lock-bad-value",
    McpResultTooLarge => "mcp-result-too-large",
    McpUnknownTool => "mcp-unknown-tool",
    NoDraft => "no-draft",
    RootUnreadable => "root-unreadable",
    RuntimePanic => "runtime-panic",
    ToolchainMismatch => "toolchain-mismatch",
    UnfilledHole => "unfilled-hole",
    UnknownDecision => "unknown-decision",
    UnknownDefinition => "unknown-definition",
    UnknownSpecRef => "unknown-spec-ref",
    UsageError => "usage-error",
}

impl HostCode {
    /// A diagnostic of this code, its repair class and `spec_ref` from the
    /// registry.
    pub fn diagnostic(self, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.as_str(), message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_code_is_registered() {
        let missing: Vec<&str> = HostCode::ALL
            .iter()
            .map(|code| code.as_str())
            .filter(|code| trellis_diag::registry::lookup(code).is_none())
            .collect();
        assert!(
            missing.is_empty(),
            "not in registry/diagnostics.json: {missing:?}"
        );
    }
}
