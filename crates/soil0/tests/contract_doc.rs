//! docs/contracts/soil0-cli.md stays true to the code: §2.3 is the syntax
//! code table rendered from `SyntaxCode::ALL`, and every code soil0 emits is
//! listed in §2 and registered with a `spec_ref` that resolves in this doc.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use soil_syntax::SyntaxCode;

fn contract() -> String {
    std::fs::read_to_string(support::workspace_root().join("docs/contracts/soil0-cli.md"))
        .expect("the contract")
}

/// The text of `## 2.` up to `## 3.`.
fn section_2(doc: &str) -> &str {
    let start = doc.find("\n## 2. ").expect("§2");
    let end = doc.find("\n## 3. ").expect("§3");
    &doc[start..end]
}

fn syntax_table() -> String {
    let mut table = String::from("| code | repair class | meaning | rule |\n|---|---|---|---|\n");
    for code in SyntaxCode::ALL {
        table.push_str(&format!(
            "| `{}` | fix-syntax | {} | {} |\n",
            code.as_str(),
            code.summary(),
            code.spec_ref()
        ));
    }
    table
}

#[test]
fn section_2_3_is_the_syntax_code_table() {
    let table = syntax_table();
    assert!(
        contract().contains(&table),
        "§2.3 must hold exactly this table:\n{table}"
    );
}

#[test]
fn every_soil0_code_is_in_section_2_and_registered() {
    let doc = contract();
    let section = section_2(&doc);
    let mut codes: Vec<&str> = Vec::new();
    codes.extend(soil0::cli::CliCode::ALL.iter().map(|c| c.as_str()));
    codes.extend(soil_eval::EvalCode::ALL.iter().map(|c| c.code()));
    codes.extend(soil_rt::ALL_CODES);
    codes.extend(soil_types::Code::ALL.iter().map(|c| c.as_str()));
    codes.extend(SyntaxCode::ALL.iter().map(|c| c.as_str()));
    let missing_in_doc: Vec<&&str> = codes
        .iter()
        .filter(|code| !section.contains(&format!("| `{code}` |")))
        .collect();
    assert!(missing_in_doc.is_empty(), "not in §2: {missing_in_doc:?}");
    assert_eq!(
        trellis_diag::registry::missing_codes(codes.iter().copied()),
        Vec::<&str>::new()
    );
    // Every soil0-cli spec_ref names a header of this document.
    for code in &codes {
        let entry = trellis_diag::registry::lookup(code).expect("registered");
        if let Some(section) = entry.spec_ref.strip_prefix("soil0-cli#") {
            // `## 10. Title` for chapters, `### 8.6 Title` for sections.
            let headers = [format!("# {section}. "), format!("# {section} ")];
            let found = doc
                .lines()
                .any(|l| l.starts_with('#') && headers.iter().any(|h| l.contains(h.as_str())));
            assert!(found, "{code}: spec_ref soil0-cli#{section} has no header");
        }
    }
}
