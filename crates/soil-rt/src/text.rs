//! `Utf8` values ([`Str`]): a string of up to seven bytes is held inline in
//! the value, a longer one is a view `[start, start + len)` of a shared
//! buffer.
//!
//! Splitting a text into words is the common case this shape serves: every
//! piece `split`, `lines`, `trim` or `str_slice` cuts is either short enough
//! to copy into the value itself (no allocation, and a map key whose bytes sit
//! in the hash table's own slot) or a view of the text it was cut from (no
//! copy; the view keeps the whole text alive, as a list view keeps its
//! array). A view that is the only owner of its buffer and reaches the
//! buffer's end grows in place, so `acc ++ piece` on an accumulator costs the
//! length of `piece`, amortized. The representation is canonical in one
//! respect only: a string of at most seven bytes is always inline, so the
//! bytes, not the layout, are what equality, order and hashing read.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::rc::Rc;

/// The most bytes a string holds inline (the eighth holds the length).
const INLINE: usize = 7;
/// The `len` of a view of a whole buffer too long for a `u32` length.
const WHOLE: u32 = u32::MAX;

/// A Soil `Utf8` value (see the module documentation). 16 bytes.
#[derive(Clone)]
pub struct Str {
    /// The buffer this string is a view of; `None` for an inline string.
    buf: Option<Rc<String>>,
    /// Inline: the bytes, then the length in the last byte. A view: its
    /// start and its length, each a little-endian `u32` (`len` [`WHOLE`] for
    /// a whole buffer longer than that allows).
    data: [u8; 8],
}

impl Str {
    /// A copy of `text`.
    pub fn new(text: &str) -> Str {
        if text.len() <= INLINE {
            Str::inline(text.as_bytes())
        } else {
            Str::whole(Rc::new(text.to_owned()))
        }
    }

    /// `bytes` (at most [`INLINE`] of them, valid UTF-8) held inline.
    fn inline(bytes: &[u8]) -> Str {
        let mut data = [0u8; 8];
        data[..bytes.len()].copy_from_slice(bytes);
        data[INLINE] = bytes.len() as u8;
        Str { buf: None, data }
    }

    /// The whole of `buf`, which is longer than [`INLINE`].
    fn whole(buf: Rc<String>) -> Str {
        let len = u32::try_from(buf.len()).unwrap_or(WHOLE);
        Str::view(buf, 0, len)
    }

    fn view(buf: Rc<String>, start: u32, len: u32) -> Str {
        let mut data = [0u8; 8];
        data[..4].copy_from_slice(&start.to_le_bytes());
        data[4..].copy_from_slice(&len.to_le_bytes());
        Str {
            buf: Some(buf),
            data,
        }
    }

    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.buf {
            None => &self.data[..self.data[INLINE] as usize],
            Some(buf) => &buf.as_bytes()[view_range(&self.data, buf)],
        }
    }

    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.buf {
            // Inline bytes were copied from a `str` at character boundaries.
            None => std::str::from_utf8(self.as_bytes()).unwrap_or_default(),
            Some(buf) => buf.get(view_range(&self.data, buf)).unwrap_or_default(),
        }
    }

    /// The order of the bytes (which is the order of the code points): two
    /// inline strings as one big-endian word each, since their unused bytes
    /// are zero and the length, last, settles a prefix.
    #[inline]
    pub fn cmp_bytes(&self, other: &Str) -> std::cmp::Ordering {
        match (&self.buf, &other.buf) {
            (None, None) => u64::from_be_bytes(self.data).cmp(&u64::from_be_bytes(other.data)),
            _ => self.as_bytes().cmp(other.as_bytes()),
        }
    }

    /// Whether the bytes are held in the value itself (at most seven), so
    /// the string owns no buffer.
    #[inline]
    pub fn is_inline(&self) -> bool {
        self.buf.is_none()
    }

    /// The length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        match &self.buf {
            None => self.data[INLINE] as usize,
            Some(buf) => view_range(&self.data, buf).len(),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes `[from, to)` of this string, which must fall on character
    /// boundaries (`split` at an ASCII separator cuts there), as [`Self::piece`]
    /// would return them. A short piece is read as one word where the text
    /// has eight bytes from `from` on, the bytes past `to` masked off.
    #[inline]
    pub fn piece_at(&self, from: usize, to: usize) -> Str {
        let len = to.saturating_sub(from);
        let bytes = self.as_bytes();
        if len <= INLINE {
            if let Some(word) = bytes.get(from..from + 8) {
                let mut data = [0u8; 8];
                data.copy_from_slice(word);
                let kept = u64::from_le_bytes(data) & ((1u64 << (8 * len)) - 1);
                let mut data = kept.to_le_bytes();
                data[INLINE] = len as u8;
                return Str { buf: None, data };
            }
            return Str::inline(bytes.get(from..to).unwrap_or_default());
        }
        match &self.buf {
            Some(buf) => Str::at(
                Rc::clone(buf),
                view_range(&self.data, buf).start + from,
                len,
            ),
            None => Str::inline(bytes.get(from..to).unwrap_or_default()),
        }
    }

    /// `part`, a sub-slice of `self.as_str()` (what `split`, `lines` and
    /// `trim` return), as a string: inline when short, otherwise a view of
    /// this string's buffer. A `part` from anywhere else is copied.
    pub fn piece(&self, part: &str) -> Str {
        if part.len() <= INLINE {
            return Str::inline(part.as_bytes());
        }
        let Some(buf) = &self.buf else {
            return Str::new(part);
        };
        // Where `part` starts in the buffer, found by address: it was sliced
        // from this string's text.
        let offset = (part.as_ptr() as usize).wrapping_sub(buf.as_ptr() as usize);
        let within = offset
            .checked_add(part.len())
            .is_some_and(|end| end <= buf.len());
        if within {
            Str::at(Rc::clone(buf), offset, part.len())
        } else {
            Str::new(part)
        }
    }

    /// `self ++ tail`: in place when this string is the only owner of its
    /// buffer (amortized O(length of `tail`)), otherwise a fresh buffer.
    pub fn concat(self, tail: &str) -> Str {
        if tail.is_empty() {
            return self;
        }
        let total = self.len() + tail.len();
        let Str { buf, data } = self;
        let Some(mut rc) = buf else {
            let head = &data[..data[INLINE] as usize];
            if total <= INLINE {
                let mut bytes = [0u8; INLINE];
                bytes[..head.len()].copy_from_slice(head);
                bytes[head.len()..total].copy_from_slice(tail.as_bytes());
                return Str::inline(&bytes[..total]);
            }
            let mut text = String::with_capacity(total);
            text.push_str(std::str::from_utf8(head).unwrap_or_default());
            text.push_str(tail);
            return Str::from(text);
        };
        let range = view_range(&data, &rc);
        if let Some(owned) = Rc::get_mut(&mut rc) {
            owned.truncate(range.end);
            let mut start = range.start;
            if start > range.len() {
                // Drop the prefix no view can reach once it outgrows the
                // view, as a list does, so it never holds more than the view.
                owned.drain(..start);
                start = 0;
            }
            owned.push_str(tail);
            let len = owned.len() - start;
            return Str::at(rc, start, len);
        }
        let mut text = String::with_capacity(total);
        text.push_str(rc.get(range).unwrap_or_default());
        text.push_str(tail);
        Str::from(text)
    }

    /// The bytes `[start, start + len)` of `buf` (longer than [`INLINE`]):
    /// a view, or the whole buffer, or (past what a view can address) a copy.
    fn at(buf: Rc<String>, start: usize, len: usize) -> Str {
        if start == 0 && len == buf.len() {
            return Str::whole(buf);
        }
        match (u32::try_from(start), u32::try_from(len)) {
            (Ok(start), Ok(len)) if len != WHOLE => Str::view(buf, start, len),
            _ => Str::new(buf.get(start..start + len).unwrap_or_default()),
        }
    }
}

/// The byte range a view's `data` selects in its buffer.
#[inline(always)]
fn view_range(data: &[u8; 8], buf: &str) -> std::ops::Range<usize> {
    let [s0, s1, s2, s3, l0, l1, l2, l3] = *data;
    let start = u32::from_le_bytes([s0, s1, s2, s3]) as usize;
    match u32::from_le_bytes([l0, l1, l2, l3]) {
        WHOLE => 0..buf.len(),
        len => start..start + len as usize,
    }
}

impl From<String> for Str {
    /// Takes `text` over without copying it (unless it is short enough to
    /// hold inline).
    fn from(text: String) -> Str {
        if text.len() <= INLINE {
            Str::inline(text.as_bytes())
        } else {
            Str::whole(Rc::new(text))
        }
    }
}

impl From<&str> for Str {
    fn from(text: &str) -> Str {
        Str::new(text)
    }
}

impl Deref for Str {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Str {
    #[inline]
    fn eq(&self, other: &Str) -> bool {
        match (&self.buf, &other.buf) {
            // Unused inline bytes are zero, so equal strings have equal words.
            (None, None) => self.data == other.data,
            (Some(_), Some(_)) => self.as_bytes() == other.as_bytes(),
            // Only strings of different lengths are held differently.
            _ => false,
        }
    }
}

impl Eq for Str {}

impl Hash for Str {
    /// An inline string as its one word (unused bytes are zero and the
    /// length is in the word), a longer one as its length and bytes: equal
    /// strings are held alike, so they hash alike.
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        match &self.buf {
            None => state.write_u64(u64::from_le_bytes(self.data)),
            Some(_) => {
                let bytes = self.as_bytes();
                state.write_usize(bytes.len());
                state.write(bytes);
            }
        }
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_strings_are_inline_and_long_pieces_share_their_text() {
        let text = Str::new("a looooooong line\nand more");
        let pieces: Vec<Str> = text.split([' ', '\n']).map(|p| text.piece(p)).collect();
        let words: Vec<&str> = pieces.iter().map(|p| p.as_str()).collect();
        assert_eq!(words, ["a", "looooooong", "line", "and", "more"]);
        assert!(pieces[0].buf.is_none());
        assert!(
            pieces[1]
                .buf
                .as_ref()
                .is_some_and(|b| text.buf.as_ref().is_some_and(|t| Rc::ptr_eq(b, t)))
        );
        assert_eq!(pieces[1].len(), 10);
        // Equal bytes are equal strings, whatever holds them.
        assert_eq!(Str::new("looooooong"), pieces[1]);
        // A part that is not a slice of the string is copied.
        let elsewhere = String::from("not from the text");
        assert_eq!(text.piece(&elsewhere).as_str(), "not from the text");
    }

    #[test]
    fn inline_strings_order_as_their_bytes() {
        let words = [
            "", "\0", "\0\0", "a", "a\0", "a\0b", "ab", "abcdefg", "abcdeff", "b", "é", "\u{7f}",
        ];
        for a in words {
            for b in words {
                let (x, y) = (Str::new(a), Str::new(b));
                assert_eq!(
                    x.cmp_bytes(&y),
                    a.as_bytes().cmp(b.as_bytes()),
                    "{a:?} {b:?}"
                );
            }
        }
        let long = Str::new("abcdefgh");
        assert!(Str::new("abcdefg").cmp_bytes(&long).is_lt());
    }

    #[test]
    fn pieces_by_offset_agree_with_pieces_by_slice() {
        let text = Str::new("déjà vu, a longish word; end");
        let n = text.len();
        let cuts: Vec<usize> = (0..=n).filter(|&i| text.is_char_boundary(i)).collect();
        for &from in &cuts {
            for &to in cuts.iter().filter(|&&to| to >= from) {
                let by_offset = text.piece_at(from, to);
                let by_slice = text.piece(&text[from..to]);
                assert_eq!(by_offset, by_slice, "{from}..{to}");
                assert_eq!(by_offset.as_str(), &text[from..to]);
                assert_eq!(by_offset.is_inline(), to - from <= INLINE);
            }
        }
    }

    #[test]
    fn concat_grows_a_uniquely_held_buffer_in_place() {
        let mut acc = Str::new("");
        for i in 0..100 {
            acc = acc.concat(&format!("{i},"));
        }
        assert!(acc.starts_with("0,1,2,"));
        assert!(acc.ends_with("98,99,"));
        assert_eq!(acc.len(), 290);
        let buffer = acc.buf.as_ref().map(|b| b.as_ptr());
        let shared = acc.clone();
        // A shared buffer is copied, and both strings keep their text.
        let longer = acc.concat("x");
        assert_ne!(longer.buf.as_ref().map(|b| b.as_ptr()), buffer);
        assert_eq!(longer.len(), 291);
        assert_eq!(shared.len(), 290);
        // A view at the end of a buffer it alone holds grows in place.
        let text = Str::new("first words, then the rest");
        let tail = text.piece(&text[12..]);
        drop(text);
        let grown = tail.concat("!");
        assert_eq!(grown.as_str(), " then the rest!");
        // Short results stay inline.
        assert_eq!(Str::new("ab").concat("cd").as_str(), "abcd");
        assert!(Str::new("ab").concat("cd").buf.is_none());
    }
}
