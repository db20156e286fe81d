//! One command's session with the remote cache (design §12.4): fetch a
//! definition's verified rows, store a trusted run's green rows, and never fail
//! or stall the command. Every request has a deadline (`timeout`, covering
//! connect, send and the answer), the session's requests together have a
//! budget, and the first request that fails or misses its deadline marks the
//! cache down for the rest of the session: from then on every fetch answers
//! [`Fetched::Unavailable`] at once and the caller does the work locally.

use std::time::{Duration, Instant};

use trellis_hash::Digest;
use trellis_lock::TestRow;

use crate::action::{ActionResult, OutputFile};
use crate::entry::{KeyInputs, RESULT_PATH, SIGNATURE_PATH, result_blob, verify_blob};
use crate::http::{Client, Endpoint};
use crate::signing::{self, TrustedKey, WriterKey};

/// What a session is configured with, resolved by the caller from `soil.toml`
/// and the command's environment.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// `http://HOST[:PORT][/BASE]`; `/ac/` and `/cas/` are under it.
    pub url: String,
    /// Whether this run may write (a trusted run: CI by default).
    pub write: bool,
    /// `ed25519:…` keys; when any is given, only entries one of them signed
    /// are read.
    pub trusted_keys: Vec<String>,
    /// `ed25519-secret:…`: the key this run signs its entries with.
    pub signing_key: Option<String>,
    /// One request's deadline.
    pub timeout: Duration,
    /// All the session's requests together.
    pub budget: Duration,
}

/// The answer of [`RemoteCache::fetch`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fetched {
    /// Verified rows: use them instead of running the suite.
    Hit(Vec<TestRow>),
    /// No entry under the key (or its blob is gone).
    Miss,
    /// An entry that failed verification, and why: run the suite.
    Rejected(String),
    /// The cache is down, off or out of time for this session.
    Unavailable,
}

/// One session.
pub struct RemoteCache {
    settings: Settings,
    client: Option<Client>,
    trusted: Vec<TrustedKey>,
    writer: Option<WriterKey>,
    down: Option<String>,
    spent: Duration,
    notes: Vec<String>,
    stored: usize,
}

impl RemoteCache {
    /// A session; a bad URL or key turns the cache off (saying why) rather than
    /// failing the command.
    pub fn open(settings: Settings) -> RemoteCache {
        let mut cache = RemoteCache {
            client: None,
            trusted: Vec::new(),
            writer: None,
            down: None,
            spent: Duration::ZERO,
            notes: Vec::new(),
            stored: 0,
            settings,
        };
        match Endpoint::parse(&cache.settings.url) {
            Ok(endpoint) => cache.client = Some(Client::new(endpoint)),
            Err(error) => cache.down = Some(error),
        }
        match cache
            .settings
            .trusted_keys
            .iter()
            .map(|key| TrustedKey::parse(key))
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(trusted) => cache.trusted = trusted,
            // Reading with fewer keys than configured would accept what the
            // root refuses: read nothing.
            Err(error) => cache.down = Some(format!("a trusted key is not valid: {error}")),
        }
        if let Some(secret) = &cache.settings.signing_key {
            match WriterKey::parse(secret) {
                Ok(writer) => cache.writer = Some(writer),
                Err(error) => cache.note(format!("not writing: {error}")),
            }
        }
        cache
    }

    pub fn url(&self) -> &str {
        &self.settings.url
    }

    /// Why the cache is not answering, once it is not.
    pub fn down(&self) -> Option<&str> {
        self.down.as_deref()
    }

    /// What the session has to say beside hits and misses.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// How many entries this session stored.
    pub fn stored(&self) -> usize {
        self.stored
    }

    /// The verified rows stored for `inputs`, if any.
    pub fn fetch(&mut self, inputs: &KeyInputs) -> Fetched {
        let key = inputs.action_key();
        let action =
            match self.request(|client, deadline| client.get(&format!("ac/{key}"), deadline)) {
                None => return Fetched::Unavailable,
                Some(None) => return Fetched::Miss,
                Some(Some(bytes)) => bytes,
            };
        let action = match ActionResult::decode(&action) {
            Ok(action) => action,
            Err(error) => {
                return Fetched::Rejected(format!("its action result is not readable: {error}"));
            }
        };
        let Some(result) = action.file(RESULT_PATH).cloned() else {
            return Fetched::Rejected(format!("its action result has no {RESULT_PATH}"));
        };
        let blob = match self.blob(&result) {
            Err(fetched) => return fetched,
            Ok(blob) => blob,
        };
        let rows = match verify_blob(&blob, inputs) {
            Ok(rows) => rows,
            Err(reason) => return Fetched::Rejected(reason),
        };
        if !self.trusted.is_empty() {
            let Some(signature) = action.file(SIGNATURE_PATH).cloned() else {
                return Fetched::Rejected(
                    "it is not signed, and this root reads only signed entries".to_owned(),
                );
            };
            let signature = match self.blob(&signature) {
                Err(fetched) => return fetched,
                Ok(signature) => signature,
            };
            if let Err(reason) = signing::verify(&signature, &self.trusted, &key, Digest::of(&blob))
            {
                return Fetched::Rejected(reason);
            }
        }
        Fetched::Hit(rows)
    }

    /// Stores a trusted run's green `rows` for `inputs` (blobs first, then the
    /// action result that names them); nothing when this run may not write.
    pub fn store(&mut self, inputs: &KeyInputs, rows: &[TestRow]) {
        if !self.settings.write || self.down.is_some() {
            return;
        }
        if !self.trusted.is_empty() && self.writer.is_none() {
            if self.settings.signing_key.is_none() {
                self.note(
                    "not writing: this root reads only signed entries and no signing key is \
                     set (TRELLIS_CACHE_SIGNING_KEY)"
                        .to_owned(),
                );
            }
            return;
        }
        let key = inputs.action_key();
        let blob = result_blob(inputs, rows);
        let digest = Digest::of(&blob);
        let mut action = ActionResult::default();
        let mut blobs = vec![(RESULT_PATH, blob)];
        if let Some(writer) = &self.writer {
            blobs.push((SIGNATURE_PATH, writer.sign(&key, digest)));
        }
        for (path, bytes) in blobs {
            let hash = Digest::of(&bytes).hex();
            let stored = self
                .request(|client, deadline| client.put(&format!("cas/{hash}"), &bytes, deadline));
            if stored.is_none() {
                return;
            }
            action.output_files.push(OutputFile {
                path: path.to_owned(),
                hash,
                size: bytes.len() as u64,
            });
        }
        let encoded = action.encode();
        if self
            .request(|client, deadline| client.put(&format!("ac/{key}"), &encoded, deadline))
            .is_some()
        {
            self.stored += 1;
        }
    }

    /// A CAS blob, checked against its address; a missing blob is a miss.
    fn blob(&mut self, file: &OutputFile) -> Result<Vec<u8>, Fetched> {
        let hash = &file.hash;
        if hash.len() != 64
            || !hash
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(Fetched::Rejected(format!(
                "`{hash}` is not a SHA-256 address"
            )));
        }
        match self.request(|client, deadline| client.get(&format!("cas/{hash}"), deadline)) {
            None => Err(Fetched::Unavailable),
            Some(None) => Err(Fetched::Miss),
            Some(Some(bytes)) if Digest::of(&bytes).hex() != *hash => Err(Fetched::Rejected(
                format!("the blob at cas/{hash} does not hash to its address"),
            )),
            Some(Some(bytes)) => Ok(bytes),
        }
    }

    /// One request under the session's bounds; `None` once the cache is down.
    fn request<T>(
        &mut self,
        send: impl FnOnce(&mut Client, Instant) -> Result<T, String>,
    ) -> Option<T> {
        if self.down.is_some() {
            return None;
        }
        let client = self.client.as_mut()?;
        let left = self.settings.budget.saturating_sub(self.spent);
        if left.is_zero() {
            self.down = Some(format!(
                "it took its whole budget of {} ms for this command",
                self.settings.budget.as_millis()
            ));
            return None;
        }
        let started = Instant::now();
        let answer = send(client, started + self.settings.timeout.min(left));
        self.spent += started.elapsed();
        match answer {
            Ok(value) => Some(value),
            Err(error) => {
                self.down = Some(error);
                None
            }
        }
    }

    fn note(&mut self, note: String) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }
}
