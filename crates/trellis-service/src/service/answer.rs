//! `trellis answer` (trellis-daemon §8.2): a human's answer to an open question,
//! written into the spec per tr-grammar §8, so the re-queued job reads it from
//! the spec like any other input.
//!
//! Methods: `question {def}` → the open question as `answer` would take it
//! (with the decision scopes a `Rule` may go to and the label each would get);
//! `answer {def, text, scope, label}` → what was written, the diff, and the
//! definition to re-queue (`"requeue": "module::name"`).
//!
//! An `Ambiguity` or `Contradiction` becomes a Q/A pair in the definition's
//! `## Clarifications` section; a `Rule` an entry of the module's or the
//! project's `decisions` block. The answer is refused with `job-stale-question`
//! and a diff when the definition's spec hashes — recomputed through the
//! database — differ from those the question was asked against. Every write goes
//! through the one atomic writer under the root's writer lock (`answer` is a
//! writer, `service::WRITERS`), and only after the new text is re-parsed and
//! found to differ from the old by the appended prose or entry alone; then the
//! question file (and the asked-against text kept for it) is removed.

use std::collections::BTreeSet;
use std::path::Path;

use trellis_db::{Named, RootDatabase, SourceFile, Workspace, root_index};
use trellis_diag::Diagnostic;
use trellis_rpc::RpcError;
use trellis_spec::{TrFile, parse_tr};

use super::question::{Kind, OpenQuestion, Staleness, asked_text_path, parse_question};
use super::{Service, failed};
use crate::codes::HostCode;
use crate::protocol::{
    AnswerAnswer, AnswerParams, DecisionPlace, DecisionScope, QuestionAnswer, QuestionParams, Tag,
};
use crate::walk::QUESTION_SUFFIX;

pub fn question(
    service: &mut Service,
    params: &QuestionParams,
) -> Result<QuestionAnswer, RpcError> {
    let question = current_question(service, &params.def).map_err(|d| failed(&[d]))?;
    let scopes = if question.kind == Kind::Rule {
        decision_scopes(service.database(), &question.module)
            .iter()
            .map(|scope| DecisionScope {
                scope: scope.name.to_owned(),
                file: scope.relative.clone(),
                label: derive_label(&question.question, &scope.labels(service.database())),
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(QuestionAnswer {
        question: super::question::question_view(&question, &Staleness::Current),
        scopes,
    })
}

pub fn answer(service: &mut Service, params: &AnswerParams) -> Result<AnswerAnswer, RpcError> {
    let def = params.def.as_str();
    let question = current_question(service, def).map_err(|d| failed(&[d]))?;
    let text = params.text.trim();
    if text.is_empty() {
        return Err(failed(&[HostCode::JobEmptyAnswer.diagnostic(
            format!(
                "the answer to {def}'s question is empty: give the answer's text (or an option's number, interactively)"
            ),
        )]));
    }
    let scope = params.scope.as_deref();
    let label = params.label.as_deref();
    let root = service.root().to_owned();
    let db = service.database();
    let (target, written, decision) = match question.kind {
        Kind::Ambiguity | Kind::Contradiction => {
            if scope.is_some() || label.is_some() {
                return Err(failed(&[HostCode::JobBadScope.diagnostic(
                    format!(
                        "{def}'s question is an {}: its answer goes into the definition's Clarifications, \
                         so it takes no --scope or --label (those place a Rule's answer)",
                        question.kind.name()
                    ),
                )]));
            }
            let target = Target::definition(db, &question).map_err(|d| failed(&[d]))?;
            let before = target.text(db);
            let after = trellis_spec::append_clarification(before, &question.question, text);
            (target, after, None)
        }
        Kind::Rule => {
            let target = rule_target(db, &question, scope).map_err(|d| failed(&[d]))?;
            let before = target.text(db);
            let parsed = trellis_db::parse_spec(db, target.file);
            let label = match label {
                Some(label) => label.to_owned(),
                None => derive_label(&question.question, &target.labels(db)),
            };
            // An answer that is one of the proposed options turns the others down.
            let rejected: Vec<&str> = if question.options.iter().any(|o| o.trim() == text) {
                question
                    .options
                    .iter()
                    .map(|o| o.trim())
                    .filter(|o| *o != text && !o.is_empty())
                    .collect()
            } else {
                Vec::new()
            };
            let after =
                trellis_spec::append_decision(before, &parsed.file, &label, text, &rejected)
                    .map_err(|d| failed(&[d.in_file(&target.relative)]))?;
            let decision = DecisionPlace {
                scope: target.name.to_owned(),
                label,
            };
            (target, after, Some(decision))
        }
    };
    let before = target.text(db).to_owned();
    only_appended(&before, &written, &target, &question, &decision).map_err(|d| failed(&[d]))?;
    write_answer(&root, &target, &before, &written, &question).map_err(|d| failed(&[d]))?;
    let diff = crate::line_diff::unified(
        &before,
        &written,
        &format!("a/{}", target.relative),
        &format!("b/{}", target.relative),
    );
    Ok(AnswerAnswer {
        def: question.def.clone(),
        kind: Tag {
            tag: question.kind.name().to_owned(),
        },
        answer: text.to_owned(),
        written: target.relative.clone(),
        decision,
        diff,
        removed: question.file.clone(),
        requeue: question.def.clone(),
        requeued: None,
        requeued_with: None,
        follow: None,
    })
}

/// The open question of `def`, if it is current: the definition exists, its
/// question file is there and decodes, and its spec is what the question was
/// asked against.
fn current_question(service: &Service, def: &str) -> Result<OpenQuestion, Diagnostic> {
    let db = service.database();
    let split = trellis_db::split_definition_name(def);
    let file = split
        .map(|(module, name)| format!("{module}/{name}{QUESTION_SUFFIX}"))
        .unwrap_or_default();
    let asked = service.loader.questions().get(&file);
    if let Err(mut unknown) = trellis_db::resolve_definition(db, def, Named::Function) {
        if asked.is_some() {
            unknown = unknown.with_note(format!(
                "{file} is a question about it: its spec is gone, so delete the question"
            ));
        }
        return Err(unknown);
    }
    // A question file the loader could not read is its own problem, not an absent one.
    if let Some(problem) = service
        .load_problems()
        .iter()
        .find(|d| d.file.as_deref() == Some(file.as_str()))
    {
        return Err(problem.clone());
    }
    let Some(text) = asked else {
        return Err(HostCode::JobNoQuestion.diagnostic(format!(
            "{def} has no open question (there is no {file}); `trellis status` lists the open ones"
        )));
    };
    let question = parse_question(&file, text)?;
    match super::question::staleness(db, &question) {
        Staleness::Current => Ok(question),
        Staleness::Moved(classes) => Err(stale(service, &question, &classes)),
        Staleness::Gone => Err(HostCode::UnknownDefinition
            .diagnostic(format!("no function definition `{def}` in this root"))),
    }
}

/// `job-stale-question`, with the diff from the text the question was asked
/// against to the spec now.
fn stale(service: &Service, question: &OpenQuestion, classes: &[&str]) -> Diagnostic {
    let relative = format!("{}/{}.tr", question.module, question.name);
    let db = service.database();
    let now = Target::definition(db, question)
        .map(|target| target.text(db).to_owned())
        .unwrap_or_default();
    let kept = asked_text_path(&question.bundle)
        .and_then(|path| std::fs::read_to_string(service.root().join(path)).ok());
    let diff = match kept {
        Some(then) => crate::line_diff::unified(
            &then,
            &now,
            &format!("a/{relative} (asked against)"),
            &format!("b/{relative} (now)"),
        ),
        None => format!(
            "(the text it was asked against was not kept under {}, so no diff can be shown)\n",
            super::question::QUESTIONS_DIR
        ),
    };
    HostCode::JobStaleQuestion
        .diagnostic(format!(
            "{} changed since its question was asked ({} moved), so the answer is not written: \
             the question may no longer apply. Lower the definition again for a fresh question, \
             or delete {} to drop this one.\n{}",
            relative,
            classes.join(", "),
            question.file,
            diff.trim_end()
        ))
        .with_file(relative)
}

/// A spec an answer is written into.
struct Target {
    /// `module` or `project` for a decisions scope; `definition` otherwise.
    name: &'static str,
    /// Root-relative path.
    relative: String,
    file: SourceFile,
}

impl Target {
    fn definition(db: &RootDatabase, question: &OpenQuestion) -> Result<Target, Diagnostic> {
        let index = root_index(db, Workspace::get(db));
        let relative = format!("{}/{}.tr", question.module, question.name);
        let file = index
            .module(&question.module)
            .and_then(|files| files.specs.get(&question.name).copied())
            .ok_or_else(|| HostCode::UnknownDefinition.diagnostic(format!("{relative} is gone")))?;
        Ok(Target {
            name: "definition",
            relative,
            file,
        })
    }

    fn text<'db>(&self, db: &'db RootDatabase) -> &'db str {
        self.file.text(db)
    }

    /// The labels of the target's decisions block.
    fn labels(&self, db: &RootDatabase) -> BTreeSet<String> {
        trellis_db::parse_spec(db, self.file)
            .file
            .decision_entries()
            .into_iter()
            .map(|entry| entry.label)
            .collect()
    }
}

/// The scopes whose spec exists, module first.
fn decision_scopes(db: &RootDatabase, module: &str) -> Vec<Target> {
    let index = root_index(db, Workspace::get(db));
    let module_spec = index.module(module).and_then(|files| files.spec);
    [
        module_spec.map(|file| Target {
            name: "module",
            relative: format!("{module}/_module.tr"),
            file,
        }),
        index.project.map(|file| Target {
            name: "project",
            relative: "_project.tr".to_owned(),
            file,
        }),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Where a `Rule`'s answer goes: the scope asked for, or the only one there is.
fn rule_target(
    db: &RootDatabase,
    question: &OpenQuestion,
    scope: Option<&str>,
) -> Result<Target, Diagnostic> {
    let mut scopes = decision_scopes(db, &question.module);
    let missing = |name: &str| {
        let file = if name == "module" {
            format!("{}/_module.tr", question.module)
        } else {
            "_project.tr".to_owned()
        };
        HostCode::JobNoDecisionsFile
            .diagnostic(format!(
                "the {name}'s decisions live in {file}, which does not exist: create it \
                 (tr-grammar §5) and answer again{}",
                if scopes.is_empty() {
                    String::new()
                } else {
                    format!(", or answer with --scope {}", scopes[0].name)
                }
            ))
            .with_file(file)
    };
    match scope {
        Some(wanted @ ("module" | "project")) => {
            match scopes.iter().position(|scope| scope.name == wanted) {
                Some(at) => Ok(scopes.swap_remove(at)),
                None => Err(missing(wanted)),
            }
        }
        Some(other) => Err(HostCode::JobBadScope.diagnostic(format!(
            "--scope takes `project` or `module`, not `{other}`"
        ))),
        None => match scopes.len() {
            0 => Err(HostCode::JobNoDecisionsFile.diagnostic(format!(
                "{}'s question is a Rule, but neither {}/_module.tr nor _project.tr exists to \
                     hold decisions: create one (tr-grammar §5) and answer again",
                question.def, question.module
            ))),
            1 => Ok(scopes.remove(0)),
            _ => Err(HostCode::JobBadScope.diagnostic(format!(
                "{}'s question is a Rule: say whether its answer is a rule of the module \
                     ({}/_module.tr) or of the project (_project.tr) with --scope module|project",
                question.def, question.module
            ))),
        },
    }
}

/// Refuses a write-back that would do more than append: the new text must parse
/// with the diagnostics the old one had, keep every formal and test block, and
/// keep every decision entry, adding exactly the answered one for a `Rule`.
fn only_appended(
    before: &str,
    after: &str,
    target: &Target,
    question: &OpenQuestion,
    decision: &Option<DecisionPlace>,
) -> Result<(), Diagnostic> {
    let stem = target
        .relative
        .rsplit('/')
        .next()
        .and_then(|name| name.strip_suffix(".tr"))
        .unwrap_or_default();
    let (old, old_problems): (TrFile, _) = parse_tr(before, stem);
    let (new, new_problems) = parse_tr(after, stem);
    let codes = |problems: &[Diagnostic]| {
        let mut codes: Vec<String> = problems.iter().map(|d| d.code.clone()).collect();
        codes.sort();
        codes
    };
    let mut entries_wanted = old.decision_entries();
    let entries_now = new.decision_entries();
    let added = match decision.as_ref().map(|place| place.label.as_str()) {
        Some(label) => {
            let grew = entries_now.len() == entries_wanted.len() + 1
                && entries_now.last().is_some_and(|entry| entry.label == label);
            if grew {
                entries_wanted.push(entries_now[entries_now.len() - 1].clone());
            }
            grew
        }
        None => true,
    };
    let kept = codes(&old_problems) == codes(&new_problems)
        && old.formal_parts() == new.formal_parts()
        && old.test_parts() == new.test_parts()
        && entries_wanted == entries_now
        && added;
    if kept {
        return Ok(());
    }
    let new_problem = new_problems
        .iter()
        .find(|d| !old_problems.iter().any(|o| o.code == d.code))
        .map(|d| format!(" ({}: {})", d.code, d.message))
        .unwrap_or_default();
    Err(HostCode::JobAnswerBreaksSpec
        .diagnostic(format!(
            "writing this answer into {} would change more than the appended {}{new_problem}: \
             an answer is prose (a line that opens a fence, a blank line inside a decision or a \
             block the spec cannot close would change its blocks). Rephrase it, or edit the spec \
             by hand and delete {}",
            target.relative,
            if question.kind == Kind::Rule {
                "decision entry"
            } else {
                "Q/A pair"
            },
            question.file
        ))
        .with_file(target.relative.clone()))
}

/// Writes the answered spec (unless the disk moved since the refresh this
/// request started with), then removes the question and its kept text.
fn write_answer(
    root: &Path,
    target: &Target,
    before: &str,
    after: &str,
    question: &OpenQuestion,
) -> Result<(), Diagnostic> {
    let path = root.join(&target.relative);
    let io = |what: &str, relative: &str, error: std::io::Error| {
        HostCode::RootUnreadable
            .diagnostic(format!("cannot {what} {relative}: {error}"))
            .with_file(relative)
    };
    let on_disk = std::fs::read_to_string(&path).map_err(|e| io("read", &target.relative, e))?;
    if on_disk != before {
        return Err(HostCode::JobStaleQuestion
            .diagnostic(format!(
                "{} changed while the answer was being written; nothing was written: answer again",
                target.relative
            ))
            .with_file(target.relative.clone()));
    }
    trellis_lock::write_atomic(&trellis_lock::StdFs, &path, after.as_bytes())
        .map_err(|e| io("write", &target.relative, e))?;
    std::fs::remove_file(root.join(&question.file)).map_err(|e| {
        io("remove", &question.file, e).with_note(format!(
            "the answer is written into {}; remove the question file by hand",
            target.relative
        ))
    })?;
    if let Some(kept) = asked_text_path(&question.bundle) {
        // Best effort: the kept text is only ever read to show a stale diff.
        let _ = std::fs::remove_file(root.join(kept));
    }
    Ok(())
}

/// Words that say nothing about a rule's subject, left out of derived labels.
const FILLER: &[&str] = &[
    "a", "an", "and", "any", "are", "as", "at", "be", "been", "by", "can", "could", "did", "do",
    "does", "each", "for", "from", "has", "have", "how", "i", "if", "in", "into", "is", "it",
    "its", "may", "might", "must", "of", "on", "or", "shall", "should", "so", "than", "that",
    "the", "their", "then", "there", "these", "this", "those", "to", "was", "we", "were", "what",
    "when", "where", "whether", "which", "who", "why", "will", "with", "would", "you",
];

/// A decision label for a question: its first few telling words, kebab-case
/// (tr-grammar §5.2 `[a-z0-9][a-z0-9-]*`), made unique among `taken` with a
/// numeric suffix. Words with letters outside ASCII are left out rather than
/// mangled; a question with no usable word gets `rule`.
pub fn derive_label(question: &str, taken: &BTreeSet<String>) -> String {
    let words: Vec<String> = question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty() && word.is_ascii())
        .map(str::to_ascii_lowercase)
        .filter(|word| !FILLER.contains(&word.as_str()))
        .collect();
    let mut base = String::new();
    for word in words.iter().take(4) {
        if !base.is_empty() && base.len() + 1 + word.len() > 40 {
            break;
        }
        if !base.is_empty() {
            base.push('-');
        }
        base.push_str(&word[..word.len().min(40)]);
    }
    if base.is_empty() {
        base = "rule".to_owned();
    }
    if !taken.contains(&base) {
        return base;
    }
    (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|label| !taken.contains(label))
        .unwrap_or(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_the_telling_words_of_the_question_made_unique() {
        let none = BTreeSet::new();
        assert_eq!(
            derive_label("Should timestamps be stored as UTC seconds?", &none),
            "timestamps-stored-utc-seconds"
        );
        assert_eq!(derive_label("Is it?", &none), "rule");
        assert_eq!(
            derive_label("Größe of cells: 8 or 16?", &none),
            "cells-8-16"
        );
        let taken: BTreeSet<String> = ["rounding".to_owned(), "rounding-2".to_owned()].into();
        assert_eq!(derive_label("What rounding?", &taken), "rounding-3");
        let long = derive_label(
            "Internationalization considerations regarding normalization everywhere",
            &none,
        );
        assert!(long.len() <= 40, "{long}");
        assert_eq!(long, "internationalization-considerations");
    }
}
