//! Writers' signatures (design §12.3): an entry written by a trusted run carries
//! an Ed25519 signature over its action key and its result blob's hash, made with
//! a secret key only the trusted writers hold (CI's, by default); a root that
//! lists public keys in `soil.toml` (`[cache] trusted_keys`) accepts only entries
//! one of them signed. A key is written `ed25519:` + 64 hex digits (public) or
//! `ed25519-secret:` + 64 hex digits (the secret seed).

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use trellis_hash::{Digest, Hasher};

const PUBLIC: &str = "ed25519:";
const SECRET: &str = "ed25519-secret:";
/// The signature blob's format name.
pub const SIGNATURE_FORMAT: &str = "trellis-cache-signature/1";

/// A public key a root trusts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustedKey(VerifyingKey);

/// The secret key a trusted writer signs with.
pub struct WriterKey(SigningKey);

impl TrustedKey {
    pub fn parse(text: &str) -> Result<TrustedKey, String> {
        let bytes = key_bytes(text, PUBLIC)?;
        VerifyingKey::from_bytes(&bytes)
            .map(TrustedKey)
            .map_err(|_| format!("`{text}` is not an Ed25519 public key"))
    }

    pub fn written(&self) -> String {
        format!("{PUBLIC}{}", hex(self.0.as_bytes()))
    }
}

impl WriterKey {
    pub fn parse(text: &str) -> Result<WriterKey, String> {
        // Never echo a secret back in a message.
        let bytes = key_bytes(text.trim(), SECRET)
            .map_err(|_| format!("the signing key is not `{SECRET}` + 64 hex digits"))?;
        Ok(WriterKey(SigningKey::from_bytes(&bytes)))
    }

    /// The key whose seed is `seed` (32 random bytes, from the host).
    pub fn from_seed(seed: [u8; 32]) -> WriterKey {
        WriterKey(SigningKey::from_bytes(&seed))
    }

    pub fn written_secret(&self) -> String {
        format!("{SECRET}{}", hex(&self.0.to_bytes()))
    }

    pub fn public(&self) -> TrustedKey {
        TrustedKey(self.0.verifying_key())
    }

    /// The signature blob for the entry `action_key` → `blob`.
    pub fn sign(&self, action_key: &str, blob: Digest) -> Vec<u8> {
        let signature = self.0.sign(message(action_key, blob).bytes());
        let written = SignatureBlob {
            format: SIGNATURE_FORMAT.to_owned(),
            key: self.public().written(),
            signature: hex(&signature.to_bytes()),
        };
        serde_json::to_vec(&written).expect("a signature serializes")
    }
}

impl std::fmt::Debug for WriterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WriterKey({})", self.public().written())
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignatureBlob {
    format: String,
    key: String,
    signature: String,
}

/// Checks a signature blob: one of `trusted` signed `action_key` → `blob`.
pub fn verify(
    signature: &[u8],
    trusted: &[TrustedKey],
    action_key: &str,
    blob: Digest,
) -> Result<(), String> {
    let written: SignatureBlob = serde_json::from_slice(signature)
        .map_err(|error| format!("the signature is not readable: {error}"))?;
    if written.format != SIGNATURE_FORMAT {
        return Err(format!("the signature's format is `{}`", written.format));
    }
    let key = TrustedKey::parse(&written.key)?;
    if !trusted.contains(&key) {
        return Err(format!(
            "signed by {}, which this root does not trust",
            written.key
        ));
    }
    let bytes: [u8; 64] = unhex(&written.signature)
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or_else(|| "the signature is not 128 hex digits".to_owned())?;
    key.0
        .verify(
            message(action_key, blob).bytes(),
            &Signature::from_bytes(&bytes),
        )
        .map_err(|_| format!("the signature by {} does not match this entry", written.key))
}

fn message(action_key: &str, blob: Digest) -> Digest {
    let mut hasher = Hasher::tagged(SIGNATURE_FORMAT);
    hasher
        .part(action_key.as_bytes())
        .part(blob.hex().as_bytes());
    hasher.finish()
}

fn key_bytes(text: &str, prefix: &str) -> Result<[u8; 32], String> {
    text.strip_prefix(prefix)
        .and_then(unhex)
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or_else(|| format!("`{text}` is not `{prefix}` + 64 hex digits"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_binds_the_key_and_the_blob_and_only_trusted_keys_count() {
        let writer = WriterKey::from_seed([7; 32]);
        let other = WriterKey::from_seed([8; 32]);
        let trusted = [writer.public()];
        let blob = Digest::of(b"rows");
        let signature = writer.sign("k1", blob);
        assert_eq!(verify(&signature, &trusted, "k1", blob), Ok(()));
        let moved = verify(&signature, &trusted, "k2", blob).expect_err("another key");
        assert!(moved.contains("does not match"), "{moved}");
        let swapped = verify(&signature, &trusted, "k1", Digest::of(b"other rows"))
            .expect_err("another blob");
        assert!(swapped.contains("does not match"), "{swapped}");
        let untrusted =
            verify(&other.sign("k1", blob), &trusted, "k1", blob).expect_err("an untrusted writer");
        assert!(untrusted.contains("does not trust"), "{untrusted}");
        assert!(verify(b"{}", &trusted, "k1", blob).is_err());
    }

    #[test]
    fn keys_are_written_and_read_back_and_secrets_never_echo() {
        let writer = WriterKey::from_seed([1; 32]);
        let secret = writer.written_secret();
        assert!(secret.starts_with("ed25519-secret:") && secret.len() == 15 + 64);
        let public = writer.public().written();
        assert_eq!(
            WriterKey::parse(&format!("{secret}\n"))
                .expect("reads")
                .public(),
            writer.public()
        );
        assert_eq!(TrustedKey::parse(&public).expect("reads"), writer.public());
        let bad = WriterKey::parse("ed25519-secret:00zz").expect_err("bad");
        assert!(!bad.contains("00zz"), "{bad}");
        assert!(TrustedKey::parse("ed25519:abcd").is_err());
        assert!(!format!("{writer:?}").contains(&secret[15..]));
    }
}
