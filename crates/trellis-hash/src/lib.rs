//! `trellis-hash` owns the one way Trellis hashes content: SHA-256 over
//! length-prefixed parts, written as `sha256:` followed by 64 lowercase hex digits
//! (impl plan §8.5, §9.10). Every hash in specs, locks and bundles is made here, and
//! so is the one seeded mixer ([`splitmix`]) behind every reproducible random
//! choice. It depends on no other workspace crate and never sees a path or a clock.

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

pub mod splitmix;

use std::fmt;

use sha2::{Digest as _, Sha256};

/// A content digest: `sha256:` + 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 32]);

/// Why a digest string was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DigestParseError(pub String);

impl Digest {
    pub const PREFIX: &'static str = "sha256:";

    /// The digest of one byte string (no length prefix: use [`Hasher`] for
    /// anything made of parts).
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(Sha256::digest(bytes).into())
    }

    /// [`Digest::of`] the bytes `reader` yields, read in 64 KiB chunks: a file
    /// of any size is hashed in bounded memory (reference data, design §9.7).
    pub fn of_reader(mut reader: impl std::io::Read) -> std::io::Result<Digest> {
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut buffer) {
                Ok(0) => return Ok(Digest(hasher.finalize().into())),
                Ok(read) => hasher.update(&buffer[..read]),
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
    }

    pub fn bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The first eight bytes as a big-endian integer (seeds for generators).
    pub fn prefix_u64(&self) -> u64 {
        u64::from_be_bytes(self.0[..8].try_into().expect("eight bytes"))
    }

    pub fn hex(&self) -> String {
        let mut out = String::with_capacity(64);
        self.push_hex(&mut out);
        out
    }

    /// Appends the digest as written (`sha256:` and the hex digits) to `out`,
    /// allocating nothing else: hashes chain their callees' written digests,
    /// thousands at a time.
    pub fn push_written(&self, out: &mut String) {
        out.push_str(Self::PREFIX);
        self.push_hex(out);
    }

    fn push_hex(&self, out: &mut String) {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        out.reserve(64);
        for byte in self.0 {
            out.push(char::from(DIGITS[usize::from(byte >> 4)]));
            out.push(char::from(DIGITS[usize::from(byte & 0xf)]));
        }
    }

    pub fn parse(text: &str) -> Result<Digest, DigestParseError> {
        let malformed = || {
            DigestParseError(format!(
                "{text:?} is not `sha256:` followed by 64 lowercase hex digits"
            ))
        };
        let hex = text
            .strip_prefix(Self::PREFIX)
            .ok_or_else(|| DigestParseError(format!("{text:?} does not start with `sha256:`")))?;
        if hex.len() != 64 {
            return Err(malformed());
        }
        // One pass through a table, checking once at the end: a cold load
        // parses seven digests in each of 23,000 locks at 20,000 definitions,
        // and a check per digit was a sixth of reading a lock.
        let mut bytes = [0u8; 32];
        let mut invalid = 0u8;
        for (byte, pair) in bytes.iter_mut().zip(hex.as_bytes().chunks_exact(2)) {
            let (high, low) = (NIBBLES[usize::from(pair[0])], NIBBLES[usize::from(pair[1])]);
            invalid |= high | low;
            *byte = (high << 4) | low;
        }
        if invalid & NOT_A_DIGIT != 0 {
            return Err(malformed());
        }
        Ok(Digest(bytes))
    }
}

/// Each byte's value as a lowercase hex digit, or [`NOT_A_DIGIT`].
const NIBBLES: [u8; 256] = {
    let mut table = [NOT_A_DIGIT; 256];
    let mut digit = 0;
    while digit < 16 {
        table[b"0123456789abcdef"[digit] as usize] = digit as u8;
        digit += 1;
    }
    table
};

/// Not a digit: its high bits are set, which no digit's are.
const NOT_A_DIGIT: u8 = 0xf0;

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut written = String::with_capacity(Self::PREFIX.len() + 64);
        self.push_written(&mut written);
        f.write_str(&written)
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Builds a digest from parts. Each part is written as its byte length (u64,
/// big-endian) then its bytes, so no two different part lists collide by
/// concatenation.
#[derive(Clone, Default)]
pub struct Hasher(Sha256);

impl Hasher {
    pub fn new() -> Self {
        Self::default()
    }

    /// A hasher whose first part is a format tag such as `soil-hash/1`.
    pub fn tagged(tag: &str) -> Self {
        let mut hasher = Self::new();
        hasher.part(tag.as_bytes());
        hasher
    }

    pub fn part(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update((bytes.len() as u64).to_be_bytes());
        self.0.update(bytes);
        self
    }

    /// One part made of `pieces` end to end: the same digest as
    /// [`Hasher::part`] of their concatenation, with no copy of it.
    pub fn part_in_pieces(&mut self, pieces: &[&[u8]]) -> &mut Self {
        let len: usize = pieces.iter().map(|piece| piece.len()).sum();
        self.0.update((len as u64).to_be_bytes());
        for piece in pieces {
            self.0.update(piece);
        }
        self
    }

    pub fn finish(self) -> Digest {
        Digest(self.0.finalize().into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_hashes_as_its_bytes_do() {
        let bytes: Vec<u8> = (0..200_000u32).map(|n| (n % 251) as u8).collect();
        let streamed = Digest::of_reader(bytes.as_slice()).expect("a slice reads");
        assert_eq!(streamed, Digest::of(&bytes));
        assert_eq!(Digest::of_reader(&b""[..]).expect("reads"), Digest::of(b""));
    }

    #[test]
    fn a_part_in_pieces_hashes_as_their_concatenation_does() {
        let whole = |bytes: &[u8]| {
            let mut hasher = Hasher::new();
            hasher.part(b"before").part(bytes).part(b"after");
            hasher.finish()
        };
        let pieces = |pieces: &[&[u8]]| {
            let mut hasher = Hasher::new();
            hasher.part(b"before").part_in_pieces(pieces).part(b"after");
            hasher.finish()
        };
        assert_eq!(pieces(&[b"ab", b"", b"cde"]), whole(b"abcde"));
        assert_eq!(pieces(&[]), whole(b""));
        assert_ne!(pieces(&[b"ab", b"cd"]), whole(b"abc"));
    }

    #[test]
    fn digest_text_round_trips() {
        let digest = Digest::of(b"abc");
        let text = digest.to_string();
        assert_eq!(
            text,
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(Digest::parse(&text), Ok(digest));
    }

    #[test]
    fn malformed_digests_are_refused() {
        for bad in [
            "",
            "sha256:",
            "sha1:00",
            "sha256:ABC",
            &format!("sha256:{}", "A".repeat(64)),
            &format!("sha256:{}g", "0".repeat(63)),
            &format!("sha256:{}0", "0".repeat(64)),
        ] {
            assert!(Digest::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn every_byte_but_a_lowercase_hex_digit_is_refused_at_every_place() {
        let good = Digest::of(b"abc").to_string();
        for place in Digest::PREFIX.len()..good.len() {
            for byte in 0..=u8::MAX {
                let mut text = good.clone().into_bytes();
                text[place] = byte;
                let Ok(text) = String::from_utf8(text) else {
                    continue;
                };
                let digit = byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte);
                assert_eq!(Digest::parse(&text).is_ok(), digit, "{text:?}");
            }
        }
        for n in 0..200u32 {
            let digest = Digest::of(&n.to_le_bytes());
            assert_eq!(Digest::parse(&digest.to_string()), Ok(digest));
        }
    }

    #[test]
    fn parts_are_length_prefixed() {
        let mut ab_c = Hasher::new();
        ab_c.part(b"ab").part(b"c");
        let mut a_bc = Hasher::new();
        a_bc.part(b"a").part(b"bc");
        assert_ne!(ab_c.finish(), a_bc.finish());
    }
}
