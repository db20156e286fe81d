//! The action result's wire form: the subset of the remote-execution API's
//! `ActionResult` protobuf (`build.bazel.remote.execution.v2`) a Trellis entry
//! uses — `output_files` (field 2: `path` 1, `digest` 2 with `hash` 1 and
//! `size_bytes` 2) and `exit_code` (field 4) — so that a server which checks
//! what it stores under `/ac/` (bazel-remote does by default) accepts it, and a
//! Bazel tool can read it. Encoding and decoding are by hand: two messages do
//! not justify a protobuf toolchain. Unknown fields are skipped when reading.

/// One output file: a path and the CAS blob that holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputFile {
    pub path: String,
    /// The blob's SHA-256, 64 lowercase hex digits.
    pub hash: String,
    pub size: u64,
}

/// The fields of an `ActionResult` a Trellis entry uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActionResult {
    pub output_files: Vec<OutputFile>,
    pub exit_code: i32,
}

impl ActionResult {
    /// The output file at `path`.
    pub fn file(&self, path: &str) -> Option<&OutputFile> {
        self.output_files.iter().find(|file| file.path == path)
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for file in &self.output_files {
            let mut digest = Vec::new();
            put_bytes(&mut digest, 1, file.hash.as_bytes());
            put_varint_field(&mut digest, 2, file.size);
            let mut output = Vec::new();
            put_bytes(&mut output, 1, file.path.as_bytes());
            put_bytes(&mut output, 2, &digest);
            put_bytes(&mut out, 2, &output);
        }
        if self.exit_code != 0 {
            // int32: negative values are sign-extended to ten bytes.
            put_varint_field(&mut out, 4, i64::from(self.exit_code) as u64);
        }
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<ActionResult, String> {
        let mut result = ActionResult::default();
        for field in Fields::new(bytes) {
            match field? {
                (2, Value::Bytes(output)) => {
                    let mut file = OutputFile {
                        path: String::new(),
                        hash: String::new(),
                        size: 0,
                    };
                    for field in Fields::new(output) {
                        match field? {
                            (1, Value::Bytes(path)) => file.path = text(path)?,
                            (2, Value::Bytes(digest)) => {
                                for field in Fields::new(digest) {
                                    match field? {
                                        (1, Value::Bytes(hash)) => file.hash = text(hash)?,
                                        (2, Value::Varint(size)) => file.size = size,
                                        _ => {}
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                    result.output_files.push(file);
                }
                (4, Value::Varint(code)) => result.exit_code = code as i64 as i32,
                _ => {}
            }
        }
        Ok(result)
    }
}

fn text(bytes: &[u8]) -> Result<String, String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| "a string field is not UTF-8".to_owned())
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn put_varint_field(out: &mut Vec<u8>, field: u64, value: u64) {
    put_varint(out, field << 3);
    put_varint(out, value);
}

fn put_bytes(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    put_varint(out, field << 3 | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

/// The fields of one message, in order.
struct Fields<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    fn new(bytes: &'a [u8]) -> Fields<'a> {
        Fields { bytes, at: 0 }
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self
                .bytes
                .get(self.at)
                .ok_or_else(|| "a truncated varint".to_owned())?;
            self.at += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("a varint longer than ten bytes".to_owned())
    }

    fn take(&mut self, length: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(length)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| "a truncated field".to_owned())?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Value<'a>), String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.bytes.len() {
            return None;
        }
        let field = (|| {
            let key = self.varint()?;
            let value = match key & 7 {
                0 => Value::Varint(self.varint()?),
                1 => {
                    self.take(8)?;
                    Value::Fixed
                }
                2 => {
                    let length = usize::try_from(self.varint()?)
                        .map_err(|_| "a field too long".to_owned())?;
                    Value::Bytes(self.take(length)?)
                }
                5 => {
                    self.take(4)?;
                    Value::Fixed
                }
                wire => return Err(format!("wire type {wire} is not supported")),
            };
            Ok((key >> 3, value))
        })();
        if field.is_err() {
            // Stop after the first error.
            self.at = self.bytes.len();
        }
        Some(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_action_result_round_trips_and_matches_protoc_bytes() {
        let result = ActionResult {
            output_files: vec![OutputFile {
                path: "a".to_owned(),
                hash: "ff".to_owned(),
                size: 300,
            }],
            exit_code: 1,
        };
        let bytes = result.encode();
        // output_files { path: "a" digest { hash: "ff" size_bytes: 300 } } exit_code: 1
        assert_eq!(
            bytes,
            [
                0x12, 0x0c, 0x0a, 0x01, b'a', 0x12, 0x07, 0x0a, 0x02, b'f', b'f', 0x10, 0xac, 0x02,
                0x20, 0x01
            ]
        );
        assert_eq!(ActionResult::decode(&bytes), Ok(result));
    }

    #[test]
    fn unknown_fields_are_skipped_and_truncation_is_an_error() {
        // stdout_raw (5, bytes), execution_metadata-like fixed fields, then exit_code.
        let mut bytes = vec![0x2a, 0x02, b'h', b'i', 0x09, 0, 0, 0, 0, 0, 0, 0, 0];
        bytes.extend([0x20, 0x03]);
        let result = ActionResult::decode(&bytes).expect("decodes");
        assert_eq!(result.exit_code, 3);
        assert!(result.output_files.is_empty());
        assert!(ActionResult::decode(&[0x12, 0x05, 0x0a]).is_err());
        assert!(ActionResult::decode(&[0x0b]).is_err(), "wire type 3");
    }
}
