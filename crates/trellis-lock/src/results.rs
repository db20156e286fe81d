//! The results seal (lock-schema §5.4): recorded test rows are bound to the suite
//! key they were computed under, so a lock whose inputs moved, whose rows were
//! trimmed or whose hashes were pasted in by hand reads as stale, never as green.

use trellis_hash::{Digest, Hasher};

use crate::model::TestRow;
use crate::vocab::Word;

/// The `results_key` a lock records: the suite key, then every row's name, tier,
/// mode and result, in the runner's order.
pub fn seal_results(suite_key: Digest, rows: &[TestRow]) -> Digest {
    let mut hasher = Hasher::tagged("trellis-results/1");
    hasher.part(suite_key.to_string().as_bytes());
    for row in rows {
        hasher
            .part(row.name.as_bytes())
            .part(row.tier.word().as_bytes())
            .part(row.mode.word().as_bytes())
            .part(row.result.word().as_bytes());
    }
    hasher.finish()
}
