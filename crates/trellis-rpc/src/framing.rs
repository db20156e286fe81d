//! The one frame codec: one compact JSON document per line, bounded while reading.
//!
//! Every transport (the daemon socket, the MCP stdio shim, in-memory tests) reads
//! and writes frames through this module, so the size limit and the newline rule
//! cannot drift between them. The limit is enforced as bytes arrive: an
//! unterminated line never makes the reader hold more than `limit` bytes, which is
//! what keeps an endless line from exhausting memory.

use std::fmt;
use std::io::{self, BufRead, Write};

use serde::Serialize;

/// The default frame limit: 16 MiB of JSON, newline excluded.
pub const DEFAULT_FRAME_LIMIT: usize = 16 * 1024 * 1024;

/// Why a frame could not be read.
#[derive(Debug)]
pub enum FrameError {
    /// The line grew past `limit` bytes before its newline. `line_ended` says
    /// whether the reader already consumed the terminating newline; when it did
    /// not, the rest of the line is still pending in the stream (see
    /// [`FrameReader`], which discards it before the next frame).
    TooLarge { limit: usize, line_ended: bool },
    /// The underlying stream failed.
    Io(io::Error),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooLarge { limit, .. } => {
                write!(f, "frame exceeds the limit of {limit} bytes")
            }
            FrameError::Io(error) => write!(f, "frame i/o failed: {error}"),
        }
    }
}

impl std::error::Error for FrameError {}

impl From<io::Error> for FrameError {
    fn from(error: io::Error) -> Self {
        FrameError::Io(error)
    }
}

/// Reads one frame: the bytes up to (not including) the next `\n`.
///
/// Returns `Ok(None)` at end of stream before any byte of a new frame. A final
/// line without a newline is returned as a frame (the `read_line` rule). A line
/// longer than `limit` bytes is refused as soon as its `limit + 1`-th byte is
/// seen; at most `limit` bytes are ever buffered for it.
pub fn read_frame(reader: &mut impl BufRead, limit: usize) -> Result<Option<Vec<u8>>, FrameError> {
    let mut frame = Vec::new();
    let mut started = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(FrameError::Io(error)),
        };
        if available.is_empty() {
            return Ok(started.then_some(frame));
        }
        started = true;
        match available.iter().position(|&byte| byte == b'\n') {
            Some(newline) => {
                let fits = frame.len() + newline <= limit;
                if fits {
                    extend_within(&mut frame, &available[..newline], limit);
                }
                reader.consume(newline + 1);
                return if fits {
                    Ok(Some(frame))
                } else {
                    Err(FrameError::TooLarge {
                        limit,
                        line_ended: true,
                    })
                };
            }
            None => {
                let chunk = available.len();
                if frame.len() + chunk > limit {
                    reader.consume(chunk);
                    return Err(FrameError::TooLarge {
                        limit,
                        line_ended: false,
                    });
                }
                extend_within(&mut frame, available, limit);
                reader.consume(chunk);
            }
        }
    }
}

/// Appends `bytes` (the caller has checked the total stays within `limit`),
/// growing geometrically but never reserving past `limit`, so an accepted frame
/// costs at most `limit` bytes of capacity, not the doubling's up to 2x.
fn extend_within(frame: &mut Vec<u8>, bytes: &[u8], limit: usize) {
    let needed = frame.len() + bytes.len();
    if needed > frame.capacity() {
        let target = needed
            .max(frame.capacity().saturating_mul(2))
            .min(limit.max(needed));
        frame.reserve_exact(target - frame.len());
    }
    frame.extend_from_slice(bytes);
}

/// Discards bytes up to and including the next newline without keeping any of
/// them. Returns `false` when the stream ended first.
pub fn discard_line(reader: &mut impl BufRead) -> io::Result<bool> {
    loop {
        let available = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            return Ok(false);
        }
        match available.iter().position(|&byte| byte == b'\n') {
            Some(newline) => {
                reader.consume(newline + 1);
                return Ok(true);
            }
            None => {
                let chunk = available.len();
                reader.consume(chunk);
            }
        }
    }
}

/// Serializes `message` as compact JSON, appends `\n` and flushes, in one write
/// so a frame is never interleaved with another writer's bytes mid-line.
pub fn write_frame<W: Write + ?Sized, T: Serialize + ?Sized>(
    writer: &mut W,
    message: &T,
) -> io::Result<()> {
    write_encoded(writer, &encode_frame(message)?)
}

/// The frame for `message`: compact JSON plus `\n`. Compact JSON never contains
/// a raw newline (strings escape it), so the newline is always the terminator.
pub fn encode_frame<T: Serialize + ?Sized>(message: &T) -> io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(message).map_err(io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Writes a frame made by [`encode_frame`] and flushes.
pub fn write_encoded<W: Write + ?Sized>(writer: &mut W, frame: &[u8]) -> io::Result<()> {
    writer.write_all(frame)?;
    writer.flush()
}

/// A frame reader that survives oversized frames: after a
/// [`FrameError::TooLarge`] it discards the rest of the offending line before
/// reading the next frame, so one bad frame costs one error, not the connection.
pub struct FrameReader<R> {
    reader: R,
    limit: usize,
    discard_pending: bool,
}

impl<R: BufRead> FrameReader<R> {
    pub fn new(reader: R, limit: usize) -> Self {
        Self {
            reader,
            limit,
            discard_pending: false,
        }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The next frame, `Ok(None)` at end of stream.
    pub fn read_frame(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        if self.discard_pending {
            self.discard_pending = false;
            if !discard_line(&mut self.reader)? {
                return Ok(None);
            }
        }
        let result = read_frame(&mut self.reader, self.limit);
        if let Err(FrameError::TooLarge {
            line_ended: false, ..
        }) = result
        {
            self.discard_pending = true;
        }
        result
    }

    pub fn get_ref(&self) -> &R {
        &self.reader
    }

    pub fn get_mut(&mut self) -> &mut R {
        &mut self.reader
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Value, json};
    use std::io::{BufReader, Cursor, Read};

    /// An endless line: every read yields non-newline bytes, and the reader counts
    /// how many it has handed out.
    struct EndlessLine {
        handed_out: usize,
    }

    impl Read for EndlessLine {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            buf.fill(b'a');
            self.handed_out += buf.len();
            Ok(buf.len())
        }
    }

    fn frames(input: &[u8], limit: usize) -> Vec<Result<String, String>> {
        let mut reader = FrameReader::new(BufReader::with_capacity(4, Cursor::new(input)), limit);
        let mut out = Vec::new();
        loop {
            match reader.read_frame() {
                Ok(Some(frame)) => out.push(Ok(String::from_utf8_lossy(&frame).into_owned())),
                Ok(None) => return out,
                Err(error) => out.push(Err(error.to_string())),
            }
        }
    }

    #[test]
    fn splits_lines_and_keeps_an_unterminated_last_line() {
        assert_eq!(
            frames(b"{\"a\":1}\n\n[2]\ntail", 100),
            vec![
                Ok("{\"a\":1}".to_owned()),
                Ok(String::new()),
                Ok("[2]".to_owned()),
                Ok("tail".to_owned())
            ]
        );
        assert_eq!(frames(b"", 100), Vec::new());
    }

    #[test]
    fn a_frame_of_exactly_the_limit_is_accepted() {
        assert_eq!(frames(b"12345\n", 5), vec![Ok("12345".to_owned())]);
        assert_eq!(
            frames(b"123456\nok\n", 5),
            vec![
                Err("frame exceeds the limit of 5 bytes".to_owned()),
                Ok("ok".to_owned())
            ]
        );
    }

    #[test]
    fn an_oversized_frame_is_skipped_and_reading_resumes() {
        // Small buffer capacity forces the refusal before the newline is seen.
        let input = b"[1]\nxxxxxxxxxxxxxxxxxxxxxxxx\n[2]\n";
        assert_eq!(
            frames(input, 8),
            vec![
                Ok("[1]".to_owned()),
                Err("frame exceeds the limit of 8 bytes".to_owned()),
                Ok("[2]".to_owned())
            ]
        );
        // Oversized and unterminated at end of stream: one error, then the end.
        assert_eq!(
            frames(b"xxxxxxxxxxxxxxxxxxxxxxxx", 8),
            vec![Err("frame exceeds the limit of 8 bytes".to_owned())]
        );
    }

    #[test]
    fn an_endless_line_is_refused_after_about_limit_bytes() {
        let limit = 64 * 1024;
        let capacity = 8 * 1024;
        let mut reader = BufReader::with_capacity(capacity, EndlessLine { handed_out: 0 });
        match read_frame(&mut reader, limit) {
            Err(FrameError::TooLarge {
                limit: reported,
                line_ended: false,
            }) => assert_eq!(reported, limit),
            other => panic!("expected TooLarge, got {other:?}"),
        }
        let handed_out = reader.get_ref().handed_out;
        assert!(
            handed_out > limit && handed_out <= limit + capacity,
            "read {handed_out} bytes for a limit of {limit}"
        );
    }

    #[test]
    fn an_accepted_frame_never_reserves_past_the_limit() {
        let limit = 1500;
        let mut line = vec![b'y'; limit];
        line.push(b'\n');
        let mut reader = BufReader::with_capacity(100, Cursor::new(line));
        let frame = read_frame(&mut reader, limit)
            .expect("reads")
            .expect("a frame");
        assert_eq!(frame.len(), limit);
        assert!(frame.capacity() <= limit, "capacity {}", frame.capacity());
    }

    #[test]
    fn write_frame_is_compact_with_one_newline() {
        let mut out = Vec::new();
        write_frame(&mut out, &json!({"a": [1, 2], "s": "line\nbreak"})).expect("writes");
        assert_eq!(out, b"{\"a\":[1,2],\"s\":\"line\\nbreak\"}\n");
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            // Quarter-integers print and parse exactly, so equality is meaningful.
            any::<i32>().prop_map(|n| Value::from(f64::from(n) / 4.0)),
            any::<String>().prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((any::<String>(), inner), 0..4)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn written_values_read_back_identically(values in prop::collection::vec(json_value(), 0..6)) {
            let mut wire = Vec::new();
            for value in &values {
                write_frame(&mut wire, value).expect("writes");
            }
            let mut reader = FrameReader::new(BufReader::with_capacity(7, Cursor::new(wire)), DEFAULT_FRAME_LIMIT);
            let mut read_back = Vec::new();
            while let Some(frame) = reader.read_frame().expect("reads") {
                read_back.push(serde_json::from_slice::<Value>(&frame).expect("parses"));
            }
            prop_assert_eq!(read_back, values);
        }
    }
}
