//! Questions (trellis-daemon §3.7, §8), the one owner of their file format.
//!
//! Writing: `ask_human` validates the question and persists it as
//! `<module>/<name>.question.json` beside the `.tr` (gitignored) with the spec
//! hashes the job was built against and its bundle's hash, and acknowledged; the
//! caller ends the job. The `.tr` text the bundle was packed from (its
//! `spec.md`) is kept too, as `.trellis/questions/<bundle hex>.tr`, so a stale
//! answer can be refused with a diff (§8.2). Both go through the atomic writer,
//! so a reader never sees half a question.
//!
//! Reading: the loader keeps the text of every question file beside the
//! database (design §9.8); [`open_questions`] decodes them against the §8
//! schema, and a file that does not decode is a `job-question-unreadable`
//! problem naming its path, never a question silently missing.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use trellis_db::{RootDatabase, SpecHashes, Workspace, root_index};
use trellis_diag::Diagnostic;
use trellis_mcp::Ty;

use super::Service;
use crate::codes::HostCode;
use crate::walk::QUESTION_SUFFIX;

/// What persisting a question needs to know of the job that asks it (the job
/// records themselves are `jobs`' business).
pub struct JobFacts<'j> {
    pub module: &'j str,
    pub name: &'j str,
    pub definition: &'j str,
    pub spec_hashes: &'j Value,
    pub bundle_hash: String,
    /// The `.tr` text the bundle was packed from (its `spec.md`).
    pub asked_text: Option<Arc<str>>,
}

pub fn ask_human(
    job: JobFacts<'_>,
    root: &Path,
    arguments: &Value,
) -> Result<Value, Vec<Diagnostic>> {
    let question = arguments["question"].as_str().unwrap_or_default();
    if question.trim().is_empty() {
        return Err(vec![
            HostCode::JsonTypeMismatch.diagnostic("$.question must be a non-empty question"),
        ]);
    }
    let document = json!({
        "def": job.definition,
        "kind": arguments["kind"],
        "question": question,
        "hole": arguments["hole"],
        "options": arguments["options"],
        "asked_against": job.spec_hashes,
        "bundle": job.bundle_hash,
        "created": crate::flog::rfc3339_now(),
    });
    let cannot_write = |relative: &str, error: std::io::Error| {
        vec![
            HostCode::RootUnreadable
                .diagnostic(format!("cannot write {relative}: {error}"))
                .with_file(relative),
        ]
    };
    if let (Some(text), Some(relative)) = (&job.asked_text, asked_text_path(&job.bundle_hash)) {
        let target = root.join(&relative);
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir).map_err(|e| cannot_write(&relative, e))?;
        }
        trellis_lock::write_atomic(&trellis_lock::StdFs, &target, text.as_bytes())
            .map_err(|e| cannot_write(&relative, e))?;
    }
    let relative = format!("{}/{}{QUESTION_SUFFIX}", job.module, job.name);
    // A question this one replaces leaves no kept text behind.
    if let Some(previous) = std::fs::read_to_string(root.join(&relative))
        .ok()
        .and_then(|text| parse_question(&relative, &text).ok())
        .filter(|previous| previous.bundle != job.bundle_hash)
        .and_then(|previous| asked_text_path(&previous.bundle))
    {
        let _ = std::fs::remove_file(root.join(previous));
    }
    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(&document).unwrap_or_default()
    );
    trellis_lock::write_atomic(&trellis_lock::StdFs, &root.join(&relative), text.as_bytes())
        .map_err(|e| cannot_write(&relative, e))?;
    Ok(json!({ "asked": true, "question": relative, "job": "ended" }))
}

/// Where the `.tr` text a bundle was packed from is kept, root-relative (hidden,
/// never walked, non-contractual): `.trellis/questions/<64 hex>.tr`. `None` for
/// anything but a well-formed `sha256:` digest, so a hand-edited question file
/// cannot point outside the directory.
pub fn asked_text_path(bundle: &str) -> Option<String> {
    let hex = bundle.strip_prefix("sha256:")?;
    let well_formed = hex.len() == 64
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    well_formed.then(|| format!("{QUESTIONS_DIR}/{hex}.tr"))
}

/// Where [`asked_text_path`]s live, root-relative.
pub const QUESTIONS_DIR: &str = ".trellis/questions";

/// The kinds of question (§3.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Ambiguity,
    Contradiction,
    Rule,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Ambiguity => "Ambiguity",
            Kind::Contradiction => "Contradiction",
            Kind::Rule => "Rule",
        }
    }
}

/// One open question, decoded from its file.
#[derive(Clone, Debug)]
pub struct OpenQuestion {
    /// Root-relative: `csvstats/mean.question.json`.
    pub file: String,
    /// `module::name`.
    pub def: String,
    pub module: String,
    pub name: String,
    pub kind: Kind,
    pub question: String,
    pub hole: Option<String>,
    pub options: Vec<String>,
    /// `[formal, test, prose]`, as the job's bundle recorded them.
    pub asked_against: [String; 3],
    pub bundle: String,
    pub created: String,
}

/// The §8 `Question` type, for validation by the one schema checker the MCP
/// tools use (every field present, nothing else, sums internally tagged).
const QUESTION: Ty = Ty::Record(&[
    ("def", Ty::Utf8),
    ("kind", trellis_mcp::tools::QUESTION_KIND),
    ("question", Ty::Utf8),
    ("hole", Ty::Option(&Ty::Utf8)),
    ("options", Ty::List(&Ty::Utf8)),
    (
        "asked_against",
        Ty::Record(&[
            ("formal", Ty::Utf8),
            ("test", Ty::Utf8),
            ("prose", Ty::Utf8),
        ]),
    ),
    ("bundle", Ty::Utf8),
    ("created", Ty::Utf8),
]);

/// Decodes one question file; the diagnostic names the file and what is wrong.
pub fn parse_question(file: &str, text: &str) -> Result<OpenQuestion, Diagnostic> {
    let unreadable = |why: String| {
        HostCode::JobQuestionUnreadable
            .diagnostic(format!("the question file {file} cannot be read: {why}"))
            .with_file(file)
            .with_note(
                "question files are written by ask_human (trellis-daemon §8); delete it to drop \
             the question, or lower the definition again to have it asked anew",
            )
    };
    let stem = file.strip_suffix(QUESTION_SUFFIX).unwrap_or(file);
    let (module, name) = match stem.split('/').collect::<Vec<_>>().as_slice() {
        [module, name] if !module.is_empty() && !name.is_empty() => {
            ((*module).to_owned(), (*name).to_owned())
        }
        _ => {
            return Err(unreadable(
                "a question lives beside its definition's spec, as <module>/<name>.question.json"
                    .to_owned(),
            ));
        }
    };
    let value: Value = serde_json::from_str(text).map_err(|e| unreadable(format!("{e}")))?;
    QUESTION
        .validate(&value, "$")
        .map_err(|d| unreadable(format!("{} ({})", d.message, d.code)))?;
    let def = format!("{module}::{name}");
    if value["def"] != def.as_str() {
        return Err(unreadable(format!(
            "it says it is the question of {}, but its place makes it {def}'s",
            value["def"]
        )));
    }
    let text_of = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    let kind = match value["kind"]["tag"].as_str() {
        Some("Contradiction") => Kind::Contradiction,
        Some("Rule") => Kind::Rule,
        _ => Kind::Ambiguity,
    };
    Ok(OpenQuestion {
        file: file.to_owned(),
        def,
        module,
        name,
        kind,
        question: text_of(&value["question"]),
        hole: (value["hole"]["tag"] == "Some").then(|| text_of(&value["hole"]["value"])),
        options: value["options"]
            .as_array()
            .into_iter()
            .flatten()
            .map(text_of)
            .collect(),
        asked_against: ["formal", "test", "prose"]
            .map(|class| text_of(&value["asked_against"][class])),
        bundle: text_of(&value["bundle"]),
        created: text_of(&value["created"]),
    })
}

/// Every open question of the root, and the files that are not one.
pub fn open_questions(service: &Service) -> (Vec<OpenQuestion>, Vec<Diagnostic>) {
    let mut questions = Vec::new();
    let mut problems = Vec::new();
    for (file, text) in service.loader.questions() {
        match parse_question(file, text) {
            Ok(question) => questions.push(question),
            Err(problem) => problems.push(problem),
        }
    }
    (questions, problems)
}

/// How the definition's spec stands against what the question was asked of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Staleness {
    /// The spec is exactly what the job was built from.
    Current,
    /// These classes' hashes moved (`formal`, `test`, `prose`).
    Moved(Vec<&'static str>),
    /// The definition has no spec any more.
    Gone,
}

/// Compares the spec hashes of the definition's `.tr` now, through the database,
/// with the ones the question was asked against.
pub fn staleness(db: &RootDatabase, question: &OpenQuestion) -> Staleness {
    let index = root_index(db, Workspace::get(db));
    let Some(&spec) = index
        .module(&question.module)
        .and_then(|files| files.specs.get(&question.name))
    else {
        return Staleness::Gone;
    };
    let SpecHashes {
        formal,
        test,
        prose,
    } = trellis_db::spec_hashes(db, spec);
    let now = [formal, test, prose].map(|digest| digest.to_string());
    let moved: Vec<&'static str> = ["formal", "test", "prose"]
        .into_iter()
        .zip(now.iter().zip(&question.asked_against))
        .filter(|(_, (now, then))| now != then)
        .map(|(class, _)| class)
        .collect();
    if moved.is_empty() {
        Staleness::Current
    } else {
        Staleness::Moved(moved)
    }
}

/// A question as `status` and `question` answer it: the §8 fields a person
/// reads, in the §8 encoding, plus where it is and whether it is stale.
pub fn question_view(question: &OpenQuestion, staleness: &Staleness) -> crate::protocol::Question {
    crate::protocol::Question {
        def: question.def.clone(),
        file: question.file.clone(),
        kind: crate::protocol::Tag {
            tag: question.kind.name().to_owned(),
        },
        question: question.question.clone(),
        hole: question.hole.clone(),
        options: question.options.clone(),
        created: question.created.clone(),
        stale: *staleness != Staleness::Current,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"def":"m::f","kind":{"tag":"Rule"},"question":"UTC?","hole":{"tag":"Some","value":"zone"},
        "options":["yes","no"],"asked_against":{"formal":"a","test":"b","prose":"c"},"bundle":"x","created":"now"}"#;

    #[test]
    fn a_question_file_decodes_to_its_fields() {
        let question = parse_question("m/f.question.json", GOOD).expect("decodes");
        assert_eq!(question.def, "m::f");
        assert_eq!(question.kind, Kind::Rule);
        assert_eq!(question.hole.as_deref(), Some("zone"));
        assert_eq!(question.options, ["yes", "no"]);
        assert_eq!(question.asked_against, ["a", "b", "c"]);
    }

    #[test]
    fn a_file_that_is_not_a_question_is_reported_with_its_path() {
        for (file, text, says) in [
            ("m/f.question.json", "{", "EOF"),
            ("m/f.question.json", "[]", "$ must be an object"),
            (
                "m/f.question.json",
                &GOOD.replace(r#""created":"now""#, r#""x":1"#),
                "created",
            ),
            (
                "m/f.question.json",
                &GOOD.replace("Rule", "Wish"),
                "json-unknown-tag",
            ),
            ("m/g.question.json", GOOD, "m::g's"),
            ("f.question.json", GOOD, "beside its definition's spec"),
        ] {
            let problem = parse_question(file, text).expect_err(text);
            assert_eq!(problem.code, "job-question-unreadable");
            assert_eq!(problem.file.as_deref(), Some(file));
            assert!(problem.message.contains(says), "{}", problem.message);
        }
    }

    #[test]
    fn only_well_formed_bundle_digests_name_a_kept_text() {
        let hex = "0123456789abcdef".repeat(4);
        assert_eq!(
            asked_text_path(&format!("sha256:{hex}")),
            Some(format!(".trellis/questions/{hex}.tr"))
        );
        for bad in ["sha256:../../etc", "0123", "sha256:ABCDEF", ""] {
            assert_eq!(asked_text_path(bad), None, "{bad}");
        }
    }
}
