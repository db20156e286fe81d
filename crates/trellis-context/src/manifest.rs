//! `bundle.json` (trellis-daemon §4.1): the manifest's Soil types, declared in
//! Soil as the contract writes them, and its bytes produced by soil-rt's
//! canonical encoder (§1) — the JSON is decoded against `BundleManifest` and
//! re-encoded, so field order, Option tags and number forms are the codec's.

use std::sync::OnceLock;

use serde_json::{Value as Json, json};
use soil_rt::{RtType, TypeEnv};

use crate::packer::Dropped;
use crate::pieces::OracleStanza;

const MANIFEST_TYPES: &str = "\
type BundleManifest = {
  definition : Utf8,
  budget : U64,
  estimate : U64,
  packed : List Utf8,
  dropped : List Dropped,
  oracle : Option Oracle,
  spec_hashes : SpecHashes
}
type Dropped = { item : Utf8, reason : Utf8 }
type Oracle =
  | Reference { path : Utf8, symbol : Utf8 }
  | Cli { command : Utf8 }
type SpecHashes = { formal : Utf8, test : Utf8, prose : Utf8 }
";

/// What the manifest says, before encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest<'a> {
    /// `csvstats/median`.
    pub definition: String,
    pub budget: u64,
    pub estimate: u64,
    pub packed: Vec<&'a str>,
    pub dropped: &'a [Dropped],
    pub oracle: Option<&'a OracleStanza>,
    pub spec_hashes: [String; 3],
}

struct Types {
    env: TypeEnv,
    manifest: RtType,
}

/// The manifest's type environment, built once from [`MANIFEST_TYPES`]. The
/// text is a constant of this crate, so a failure is a bug caught by every test.
fn types() -> &'static Types {
    static TYPES: OnceLock<Types> = OnceLock::new();
    TYPES.get_or_init(|| {
        let (file, errors) = soil_syntax::parse_file(MANIFEST_TYPES);
        assert!(errors.is_empty(), "manifest types parse: {errors:?}");
        let decls = file.items.iter().filter_map(|item| match item {
            soil_syntax::ast::Item::TypeDecl(decl) => Some(decl),
            _ => None,
        });
        let env = soil_eval::type_env_from_decls(decls).expect("manifest types check");
        let id = env.lookup("BundleManifest").expect("declared above");
        Types {
            env,
            manifest: RtType::Named(id, Vec::new()),
        }
    })
}

fn soil_option(value: Option<Json>) -> Json {
    match value {
        Some(value) => json!({ "tag": "Some", "value": value }),
        None => json!({ "tag": "None" }),
    }
}

/// One entry of the manifest's `dropped` list (the packer weighs one before
/// it drops, `bundle::cheaper_packed`).
pub fn dropped_entry(dropped: &Dropped) -> serde_json::Value {
    json!({ "item": dropped.item, "reason": dropped.reason })
}

/// The canonical bytes of `manifest`.
pub fn render(manifest: &Manifest<'_>) -> String {
    let oracle = manifest.oracle.map(|oracle| match oracle {
        OracleStanza::Reference { path, symbol } => {
            json!({ "tag": "Reference", "path": path, "symbol": symbol })
        }
        OracleStanza::Cli { command } => json!({ "tag": "Cli", "command": command }),
    });
    let [formal, test, prose] = &manifest.spec_hashes;
    let document = json!({
        "definition": manifest.definition,
        "budget": manifest.budget,
        "estimate": manifest.estimate,
        "packed": manifest.packed,
        "dropped": manifest.dropped.iter().map(dropped_entry).collect::<Vec<_>>(),
        "oracle": soil_option(oracle),
        "spec_hashes": { "formal": formal, "test": test, "prose": prose },
    });
    let types = types();
    let value = soil_rt::decode(&document.to_string(), &types.manifest, &types.env)
        .expect("the manifest document has the manifest type");
    soil_rt::encode(&value, &types.env)
}
