//! The service's half of the shared result cache (design §12): which cache a
//! `test` talks to and whether it may write (from `soil.toml`'s `[cache]` and
//! the caller's environment, sent with the request), and a definition's key
//! inputs as this root computes them. Reading, verifying and writing entries
//! are `trellis-cache`'s; recording verified rows in the lock is `test.rs`'s.

use std::time::Duration;

use trellis_cache::{KeyInputs, RemoteCache, Settings};
use trellis_db::{CacheWrite, Item, Workspace, current_hashes, root_config};

use super::Service;
use crate::protocol::CacheEnv;
use crate::service::locks::toolchain;

/// A session's whole budget, in request deadlines: a slow cache costs a
/// command at most this many timeouts before it is left alone.
const BUDGET_IN_TIMEOUTS: u32 = 10;

/// The cache session for one `test`, or `None` when neither `soil.toml` nor
/// the caller names a cache (or the caller turned it `off`). A request without
/// a caller's environment (a lowering's gate) uses no cache.
pub(crate) fn open(service: &Service, env: Option<&CacheEnv>) -> Option<RemoteCache> {
    let env = env?;
    let db = service.database();
    let config = root_config(db, Workspace::get(db))
        .as_ref()
        .ok()
        .and_then(|config| config.cache.clone());
    let url = match (&env.url, &config) {
        (Some(url), _) if url.is_empty() || url == "off" => return None,
        (Some(url), _) => url.clone(),
        (None, Some(config)) => config.url.clone(),
        (None, None) => return None,
    };
    let policy = env
        .write
        .as_deref()
        .and_then(CacheWrite::parse)
        .or(config.as_ref().map(|config| config.write))
        .unwrap_or(CacheWrite::Ci);
    let write = match policy {
        CacheWrite::Always => true,
        CacheWrite::Never => false,
        CacheWrite::Ci => env.ci,
    };
    let timeout = Duration::from_millis(
        config
            .as_ref()
            .map_or(trellis_db::CACHE_TIMEOUT_MS, |config| config.timeout_ms),
    );
    Some(RemoteCache::open(Settings {
        url,
        write,
        trusted_keys: config.map(|config| config.trusted_keys).unwrap_or_default(),
        signing_key: env.signing_key.clone(),
        timeout,
        budget: timeout * BUDGET_IN_TIMEOUTS,
    }))
}

/// What `item`'s results are keyed by here; `None` without a spec or a body.
pub(crate) fn inputs(service: &Service, item: Item<'_>) -> Option<KeyInputs> {
    let db = service.database();
    let current = current_hashes(db, item)?;
    let toolchain = toolchain();
    Some(KeyInputs {
        definition: item.qualified(db),
        toolchain: format!(
            "trellis {} soil0 {}",
            toolchain.trellis, toolchain.soil0_cli
        ),
        suite_key: current.suite_key,
        soil_hash: current.soil_hash?,
        formal_hash: current.spec.formal,
        test_hash: current.spec.test,
        oracles: current.oracles,
    })
}
