//! The host protocol: the requests a client sends the root's service and the
//! answers it gets back, as serde types both ends share. `cli.rs` builds a
//! [`Request`], the service decodes one from the wire and answers with the types
//! of [`answers`], and `render.rs` reads those same types back. The wire is
//! JSON-RPC (`trellis-rpc`): a method name and an object of params; an answer is
//! an object to which the service adds its [`Timings`]. serde_json keeps field
//! order, so each type's fields are in the order the wire (and `--json`) has
//! them. The lowering queue's job documents (`lower`, `jobs`, job events) are
//! typed at their envelope here and keep their per-stage `detail` as JSON.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use trellis_rpc::RpcError;

pub mod answers;

pub use answers::*;

/// One request the root's service answers (design §9.2). The lowering
/// methods that carry a provider (`lower`, `decisions.triage`) and a job's
/// own (`job.*`) are the daemon's and the job socket's, not in this set.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    Refresh,
    Check(CheckParams),
    Status(StatusParams),
    Test(TestParams),
    Adopt(AdoptParams),
    Review(ReviewParams),
    DecisionsEditorial(EditorialParams),
    ToolchainUpdate,
    Context(ContextParams),
    Question(QuestionParams),
    Answer(AnswerParams),
    /// The lowering queue: the daemon answers it; a one-shot service refuses.
    Jobs,
}

/// Params a method without any takes: only `{}` (or none at all).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckParams {
    /// One definition, `module::name`; every definition when `None`.
    pub def: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusParams {
    /// Recompute every row from scratch and report where the memo disagrees.
    pub verify: Option<bool>,
    /// The caller's `PATH`, for the suites `verify` re-runs.
    pub path: Option<String>,
    /// The human view of a large root: no settled row, and at most
    /// [`SUMMARY_ROWS_PER_STATUS`] rows of each other status, the rest counted
    /// in `omitted`; every row when absent or `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<bool>,
    /// With `verify`: also re-run every trusted suite's generated tiers
    /// (properties and derived ensures rows) under this many fresh seeds and
    /// report each row a fresh sample flips (lock-schema §5.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reseed: Option<u32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestParams {
    pub def: Option<String>,
    /// The caller's `PATH`: oracles and cram run under it, not the daemon's.
    pub path: Option<String>,
    /// What the caller's environment says of the shared result cache; none
    /// reads `soil.toml` alone and never writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheEnv>,
}

/// The shared result cache as the caller's environment sets it (design §12.5):
/// read by the client, because the daemon's environment is not the caller's.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheEnv {
    /// `TRELLIS_CACHE_URL`: another URL than `soil.toml`'s, or `off`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `TRELLIS_CACHE_WRITE`: `ci`, `always` or `never`, over `soil.toml`'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<String>,
    /// `TRELLIS_CACHE_SIGNING_KEY`: the secret key a trusted run signs with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_key: Option<String>,
    /// Whether `CI` is true (`true`, `1` or `yes`).
    #[serde(default)]
    pub ci: bool,
}

impl std::fmt::Debug for CacheEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The signing key is a secret: its presence only.
        f.debug_struct("CacheEnv")
            .field("url", &self.url)
            .field("write", &self.write)
            .field("signing_key", &self.signing_key.as_ref().map(|_| "…"))
            .field("ci", &self.ci)
            .finish()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdoptParams {
    pub def: Option<String>,
    /// Decision entries to cite, `project:label` or `module:label`.
    pub cite: Option<Vec<String>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewParams {
    pub def: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditorialParams {
    pub label: String,
    pub module: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextParams {
    pub def: String,
    /// Tokens.
    pub budget: u64,
    /// An absolute directory (the client resolves it against its own working
    /// directory); `.trellis/context/<module>/<name>/` when `None`.
    pub out: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuestionParams {
    pub def: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerParams {
    pub def: String,
    pub text: String,
    pub scope: Option<String>,
    pub label: Option<String>,
}

impl Request {
    /// The method name on the wire.
    pub fn method(&self) -> &'static str {
        match self {
            Request::Refresh => "refresh",
            Request::Check(_) => "check",
            Request::Status(_) => "status",
            Request::Test(_) => "test",
            Request::Adopt(_) => "adopt",
            Request::Review(_) => "review",
            Request::DecisionsEditorial(_) => "decisions.editorial",
            Request::ToolchainUpdate => "toolchain.update",
            Request::Context(_) => "context",
            Request::Question(_) => "question",
            Request::Answer(_) => "answer",
            Request::Jobs => "jobs",
        }
    }

    /// The params object on the wire.
    pub fn params(&self) -> Value {
        let params = match self {
            Request::Refresh | Request::ToolchainUpdate | Request::Jobs => {
                serde_json::to_value(NoParams {})
            }
            Request::Check(params) => serde_json::to_value(params),
            Request::Status(params) => serde_json::to_value(params),
            Request::Test(params) => serde_json::to_value(params),
            Request::Adopt(params) => serde_json::to_value(params),
            Request::Review(params) => serde_json::to_value(params),
            Request::DecisionsEditorial(params) => serde_json::to_value(params),
            Request::Context(params) => serde_json::to_value(params),
            Request::Question(params) => serde_json::to_value(params),
            Request::Answer(params) => serde_json::to_value(params),
        };
        params.expect("params are plain data and always serialize")
    }

    /// The request `method` names, its params checked against the method's
    /// type: a param of the wrong type, an unknown param or params that are
    /// not an object are `-32602 invalid params`, never read as absent
    /// (`{"def": 17}` once checked every definition). `None`: not a method of
    /// this set.
    pub fn decode(method: &str, params: &Value) -> Option<Result<Request, RpcError>> {
        fn typed<T: DeserializeOwned>(method: &str, params: &Value) -> Result<T, RpcError> {
            let params = match params {
                Value::Null => &Value::Object(Default::default()),
                Value::Object(_) => params,
                other => {
                    return Err(RpcError::invalid_params(format!(
                        "{method} takes an object of params, not {other}"
                    )));
                }
            };
            T::deserialize(params)
                .map_err(|error| RpcError::invalid_params(format!("{method}: {error}")))
        }
        Some(match method {
            "refresh" => typed::<NoParams>(method, params).map(|_| Request::Refresh),
            "check" => typed(method, params).map(Request::Check),
            "status" => typed(method, params).map(Request::Status),
            "test" => typed(method, params).map(Request::Test),
            "adopt" => typed(method, params).map(Request::Adopt),
            "review" => typed(method, params).map(Request::Review),
            "decisions.editorial" => typed(method, params).map(Request::DecisionsEditorial),
            "toolchain.update" => {
                typed::<NoParams>(method, params).map(|_| Request::ToolchainUpdate)
            }
            "context" => typed(method, params).map(Request::Context),
            "question" => typed(method, params).map(Request::Question),
            "answer" => typed(method, params).map(Request::Answer),
            "jobs" => typed::<NoParams>(method, params).map(|_| Request::Jobs),
            _ => return None,
        })
    }

    /// Whether the request writes into the root: it then holds the root's
    /// writer lock (lock-schema §1.6) from its refresh to its last write, so
    /// writers of one root — the daemon and any `--no-daemon` processes — run
    /// one after another and none builds on locks another is about to replace.
    pub fn writes(&self) -> bool {
        matches!(
            self,
            Request::Test(_)
                | Request::Adopt(_)
                | Request::Review(_)
                | Request::DecisionsEditorial(_)
                | Request::ToolchainUpdate
                | Request::Answer(_)
        )
    }

    /// Whether the request verifies or records, and so is refused under
    /// another toolchain's pin.
    pub fn needs_pin(&self) -> bool {
        matches!(
            self,
            Request::Check(_)
                | Request::Adopt(_)
                | Request::Test(_)
                | Request::Review(_)
                | Request::DecisionsEditorial(_)
        )
    }
}

/// Reads an answer of type `T` from the wire.
pub fn decode_answer<T: DeserializeOwned>(result: &Value) -> Result<T, String> {
    T::deserialize(result).map_err(|error| format!("the daemon's answer does not decode: {error}"))
}

/// Writes an answer for the wire.
pub fn encode_answer(answer: &impl Serialize) -> Value {
    serde_json::to_value(answer).expect("answers are plain data and always serialize")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every request survives the wire, and decodes under its own method.
    #[test]
    fn requests_round_trip() {
        let requests = [
            Request::Refresh,
            Request::Check(CheckParams {
                def: Some("m::f".to_owned()),
            }),
            Request::Status(StatusParams {
                verify: Some(true),
                path: Some("/bin".to_owned()),
                summary: None,
                reseed: Some(8),
            }),
            Request::Test(TestParams::default()),
            Request::Adopt(AdoptParams {
                def: None,
                cite: Some(vec!["project:x".to_owned()]),
            }),
            Request::Review(ReviewParams {
                def: "m::f".to_owned(),
            }),
            Request::DecisionsEditorial(EditorialParams {
                label: "l".to_owned(),
                module: None,
            }),
            Request::ToolchainUpdate,
            Request::Context(ContextParams {
                def: "m::f".to_owned(),
                budget: 9,
                out: None,
            }),
            Request::Question(QuestionParams {
                def: "m::f".to_owned(),
            }),
            Request::Answer(AnswerParams {
                def: "m::f".to_owned(),
                text: "yes".to_owned(),
                scope: None,
                label: None,
            }),
            Request::Jobs,
        ];
        for request in requests {
            let decoded = Request::decode(request.method(), &request.params())
                .expect("a method of the set")
                .expect("its own params decode");
            assert_eq!(decoded, request);
        }
    }

    /// The shapes `{"def": 17}` and friends are refused with the method named.
    #[test]
    fn mistyped_params_are_invalid_params() {
        let refused: Vec<String> = [
            ("check", json!({ "def": 17 })),
            ("check", json!({ "definition": "m::f" })),
            ("check", json!([1])),
            ("review", json!({})),
            ("refresh", json!({ "x": 1 })),
        ]
        .into_iter()
        .map(|(method, params)| match Request::decode(method, &params) {
            Some(Err(error)) => {
                assert_eq!(error.kind(), Some(trellis_rpc::ErrorCode::InvalidParams));
                error.message
            }
            other => panic!("{method} {params}: {other:?}"),
        })
        .collect();
        expect_test::expect![[r#"
            [
                "check: invalid type: integer `17`, expected a string",
                "check: unknown field `definition`, expected `def`",
                "check takes an object of params, not [1]",
                "review: missing field `def`",
                "refresh: unknown field `x`, there are no fields",
            ]
        "#]]
        .assert_debug_eq(&refused);
        assert!(Request::decode("job.create", &json!({})).is_none());
    }
}
