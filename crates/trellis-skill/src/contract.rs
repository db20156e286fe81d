//! The contract version the skill states (trellis-daemon §1): read from the
//! status line and the dated amendments of the contract copy embedded in the
//! binary, so the skill cannot name a version the toolchain does not carry.

/// `contract v1`, amended through a date.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractVersion {
    /// The number after `contract v` in the status line.
    pub version: String,
    /// The latest `Amended YYYY-MM-DD` / `amendment, YYYY-MM-DD`, if any.
    pub amended: Option<String>,
}

pub fn contract_version() -> ContractVersion {
    let text = trellis_context::embedded_document("trellis-daemon").unwrap_or_default();
    version_of(text)
}

fn version_of(text: &str) -> ContractVersion {
    let status = text
        .lines()
        .find(|line| line.starts_with("Status:"))
        .unwrap_or_default();
    let version = status
        .split_once("contract v")
        .map(|(_, rest)| {
            rest.chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect::<String>()
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "unknown".to_owned());
    let amended = ["Amended ", "amendment, "]
        .iter()
        .flat_map(|marker| text.match_indices(marker).map(|(at, m)| at + m.len()))
        .filter_map(|at| text.get(at..at + 10))
        .filter(|date| is_date(date))
        .max()
        .map(str::to_owned);
    ContractVersion { version, amended }
}

fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 10
        && bytes.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            _ => b.is_ascii_digit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_and_the_latest_amendment_are_read_from_the_text() {
        let text = "# C\n\nStatus: frozen — contract v1 (drafted).\n\n(Amended 2026-09-14, step 9.)\n\
            ### 10.3 Pins — amendment, 2026-12-01\n(Amended 2026-1x-01.)\n";
        assert_eq!(
            version_of(text),
            ContractVersion {
                version: "1".into(),
                amended: Some("2026-12-01".into())
            }
        );
        assert_eq!(version_of("no status").version, "unknown");
    }

    #[test]
    fn the_embedded_contract_is_v1() {
        assert_eq!(contract_version().version, "1");
        assert!(contract_version().amended.is_some());
    }
}
