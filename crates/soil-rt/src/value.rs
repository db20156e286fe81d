//! Runtime values: small scalars unboxed, everything else shared behind `Rc`.

use std::any::Any;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use crate::map::MapValue;
use crate::order::{compare, equal, hash_value};
use crate::text::Str;
use crate::types::{ShapeId, TypeId};

/// A function value. The interpreter decides what a function is (closure,
/// partial application, builtin); this crate only stores and compares them.
pub trait Function: Any {
    fn as_any(&self) -> &dyn Any;
    /// A short human description for panic messages and `show`.
    fn describe(&self) -> String;
}

/// One Soil value. 24 bytes: every variant is a scalar, one `Rc`, or a
/// [`Str`] (inline bytes or a view of a shared buffer).
///
/// Records and variants carry the id of their shape / declaration so a value is
/// self-describing: `show` and [`crate::encode`] need no static type.
///
/// The tag is a `u32` so the first word of a value is written and read as
/// whole fields: with a one-byte tag the bytes beside it are copied in
/// pieces, and reading a value back whole right after (the interpreter
/// pushing a call's result) stalls store forwarding.
#[derive(Clone)]
#[repr(u32)]
pub enum Value {
    Unit,
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(Str),
    List(List),
    Tuple(Rc<[Value]>),
    /// A nominal record or an inline-record variant payload: the shape names
    /// the fields, the slice holds them in declaration order.
    Record(ShapeId, Rc<[Value]>),
    /// A sum value: its declaration, the variant's declaration index, and the
    /// payload (positional value, or a `Record` for inline-record variants).
    Variant {
        ty: TypeId,
        tag: u32,
        payload: Option<Rc<Value>>,
    },
    Map(Rc<MapValue>),
    Func(Rc<dyn Function>),
}

impl Value {
    pub fn str(text: &str) -> Value {
        Value::Str(Str::new(text))
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(List::from_vec(items))
    }

    pub fn tuple(items: Vec<Value>) -> Value {
        Value::Tuple(Rc::from(items))
    }

    /// The tuple `(a, b)`, built in one allocation.
    pub fn pair(a: Value, b: Value) -> Value {
        Value::Tuple(Rc::from([a, b]))
    }

    pub fn variant(ty: TypeId, tag: u32, payload: Option<Value>) -> Value {
        Value::Variant {
            ty,
            tag,
            payload: payload.map(Rc::new),
        }
    }

    /// Whether this value holds no reference count (a number, a `Bool`,
    /// `Unit`, or a string short enough to be held inline), so dropping it
    /// does nothing.
    #[inline(always)]
    pub fn holds_no_count(&self) -> bool {
        match self {
            Value::Unit | Value::Bool(_) | Value::I64(_) | Value::U64(_) | Value::F64(_) => true,
            Value::Str(s) => s.is_inline(),
            _ => false,
        }
    }

    /// Lets this value go: a value that holds no count is forgotten (its drop
    /// would do nothing, but through a call to the general drop glue).
    #[inline(always)]
    pub fn release(self) {
        if self.holds_no_count() {
            std::mem::forget(self);
        } else {
            drop(self);
        }
    }

    /// Stores `value` in `slot`. What the slot held is dropped, but a value
    /// that holds no count (the common case in an interpreter's frame)
    /// without a call to the general drop glue.
    #[inline(always)]
    pub fn store(slot: &mut Value, value: Value) {
        if slot.holds_no_count() {
            std::mem::forget(std::mem::replace(slot, value));
        } else if let Value::List(old) = std::mem::replace(slot, value) {
            // A list view that is not the last one on its storage (a `rest`
            // of a match, released) is a decrement, not a call.
            drop(old);
        }
    }

    /// The kind name used in runtime error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Unit => "Unit",
            Value::Bool(_) => "Bool",
            Value::I64(_) => "I64",
            Value::U64(_) => "U64",
            Value::F64(_) => "F64",
            Value::Str(_) => "Utf8",
            Value::List(_) => "List",
            Value::Tuple(_) => "tuple",
            Value::Record(..) => "record",
            Value::Variant { .. } => "variant",
            Value::Map(_) => "Map",
            Value::Func(_) => "function",
        }
    }
}

impl PartialEq for Value {
    /// Structural equality under the total order (`nan == nan`, `-0.0 != 0.0`).
    fn eq(&self, other: &Value) -> bool {
        equal(self, other)
    }
}

impl Eq for Value {}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Value) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Value {
    /// The structural total order ([`compare`]).
    fn cmp(&self, other: &Value) -> Ordering {
        compare(self, other)
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Unit => write!(f, "()"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::I64(n) => write!(f, "{n}"),
            Value::U64(n) => write!(f, "{n}u"),
            Value::F64(x) => write!(f, "{}", crate::json::format_f64(*x)),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::List(l) => f.debug_list().entries(l.as_slice()).finish(),
            Value::Tuple(items) => {
                let mut t = f.debug_tuple("");
                for item in items.iter() {
                    t.field(item);
                }
                t.finish()
            }
            Value::Record(shape, fields) => write!(f, "#{shape}{fields:?}"),
            Value::Variant { ty, tag, payload } => match payload {
                Some(p) => write!(f, "%{ty}.{tag}({p:?})"),
                None => write!(f, "%{ty}.{tag}"),
            },
            Value::Map(m) => m.fmt(f),
            Value::Func(func) => write!(f, "<{}>", func.describe()),
        }
    }
}

/// A map key: a value ordered by [`compare`] and hashed consistently with it.
#[derive(Clone, Debug)]
pub struct Key(pub Value);

impl Hash for Key {
    /// Strings and integers, the common keys, inline; all keys of one map
    /// have one type, so they need not be told apart from other kinds.
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        match &self.0 {
            Value::Str(s) => s.hash(state),
            Value::I64(n) => state.write_i64(*n),
            other => hash_value(other, state),
        }
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        equal(&self.0, &other.0)
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Key) -> Ordering {
        compare(&self.0, &other.0)
    }
}

/// An immutable list: a shared vector plus a `[start, end)` view, so length,
/// indexing, `drop`, `take`, `slice` and `[x, ..rest]` never copy elements.
#[derive(Clone)]
pub struct List {
    items: Rc<Vec<Value>>,
    start: u32,
    end: u32,
}

impl List {
    pub fn empty() -> List {
        List::from_vec(Vec::new())
    }

    #[inline]
    pub fn from_vec(items: Vec<Value>) -> List {
        let end = u32::try_from(items.len()).unwrap_or(u32::MAX);
        List {
            items: Rc::new(items),
            start: 0,
            end,
        }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    #[inline(always)]
    pub fn as_slice(&self) -> &[Value] {
        &self.items[self.start as usize..self.end as usize]
    }

    #[inline(always)]
    pub fn get(&self, index: usize) -> Option<&Value> {
        self.as_slice().get(index)
    }

    #[inline(always)]
    pub fn iter(&self) -> std::slice::Iter<'_, Value> {
        self.as_slice().iter()
    }

    /// The elements `[from, to)` of this view, clamped to its bounds.
    #[inline(always)]
    pub fn slice(&self, from: usize, to: usize) -> List {
        let len = self.len();
        let to = to.min(len);
        let from = from.min(to);
        List {
            items: Rc::clone(&self.items),
            start: self.start + from as u32,
            end: self.start + to as u32,
        }
    }

    /// Everything after the first `n` elements (clamped).
    #[inline(always)]
    pub fn skip(&self, n: usize) -> List {
        self.slice(n, self.len())
    }

    /// Whether this view is the only owner of its storage, so updates may
    /// happen in place.
    fn is_unique(&mut self) -> bool {
        Rc::get_mut(&mut self.items).is_some()
    }

    /// This list with `value` appended: in place (amortized O(1)) when this
    /// view is the only owner of its storage, otherwise a copy.
    #[inline]
    pub fn push(mut self, value: Value) -> List {
        self.push_mut(value);
        self
    }

    /// Appends `value` to this list where it is: in place (amortized O(1))
    /// when this view is the only owner of its storage, otherwise this view
    /// becomes a copy with `value` appended (the storage is left to its
    /// other owners).
    #[inline(always)]
    pub fn push_mut(&mut self, value: Value) {
        if let Some(items) = Rc::get_mut(&mut self.items) {
            items.truncate(self.end as usize);
            items.push(value);
            self.end = len_u32(items.len());
            self.compact();
            return;
        }
        *self = self.push_copy(value);
    }

    /// [`Self::push_mut`] onto a shared view: a copy with `value` appended.
    #[cold]
    fn push_copy(&self, value: Value) -> List {
        count_copy(self.len());
        let mut items = Vec::with_capacity(self.len() + 1);
        items.extend_from_slice(self.as_slice());
        items.push(value);
        List::from_vec(items)
    }

    /// `self ++ other`. The storage of whichever side is uniquely held is
    /// extended in place: `acc ++ ys` costs O(|ys|) and `xs ++ acc` (a
    /// prepend, `[x] ++ acc`) O(|xs|), both amortized; the shorter side is
    /// copied when both qualify. Only when neither is uniquely held are both
    /// copied.
    pub fn concat(mut self, mut other: List) -> List {
        if other.is_empty() {
            return self;
        }
        if self.is_empty() {
            return other;
        }
        let self_unique = self.is_unique();
        let other_unique = other.is_unique();
        if other_unique && (!self_unique || self.len() < other.len()) {
            other.prepend(self);
            return other;
        }
        if self_unique && let Some(items) = Rc::get_mut(&mut self.items) {
            items.truncate(self.end as usize);
            count_copy(other.len());
            items.extend_from_slice(other.as_slice());
            self.end = len_u32(items.len());
            return self;
        }
        count_copy(self.len() + other.len());
        let mut items = Vec::with_capacity(self.len() + other.len());
        items.extend_from_slice(self.as_slice());
        items.extend_from_slice(other.as_slice());
        List::from_vec(items)
    }

    /// Puts `front`'s elements before this uniquely owned view's, in the free
    /// room before `start`; when the room runs out the storage is rebuilt with
    /// room for at least as many elements as it then holds, so a run of
    /// prepends is amortized O(1) each (the mirror image of `Vec::push`).
    fn prepend(&mut self, front: List) {
        let needed = front.len();
        let len = self.len();
        let Some(items) = Rc::get_mut(&mut self.items) else {
            return;
        };
        items.truncate(self.end as usize);
        if (self.start as usize) < needed {
            let room = needed + len.max(4);
            let mut grown = Vec::with_capacity(room + len);
            grown.resize(room, Value::Unit);
            grown.extend(items.drain(self.start as usize..));
            *items = grown;
            self.start = len_u32(room);
            self.end = len_u32(room + len);
        }
        count_copy(needed);
        let at = self.start as usize - needed;
        for (slot, value) in items[at..].iter_mut().zip(front.into_vec()) {
            *slot = value;
        }
        self.start = len_u32(at);
    }

    /// Drops the unreachable prefix of a uniquely owned storage once it
    /// outgrows the view (a queue: `drop 1` then `push`), so the prefix never
    /// holds more than the view; amortized O(1) per push.
    #[inline]
    fn compact(&mut self) {
        if self.start as usize <= self.len().max(16) {
            return;
        }
        self.compact_now();
    }

    #[cold]
    fn compact_now(&mut self) {
        if let Some(items) = Rc::get_mut(&mut self.items) {
            items.drain(..self.start as usize);
            self.end -= self.start;
            self.start = 0;
        }
    }

    /// Element `index` of this view (which must have it), moved out when this
    /// view is the only owner of its storage (a placeholder takes its place,
    /// outside every view that can still be built from this one), cloned
    /// otherwise. Pattern matching takes `[x, ..rest]` apart with it.
    #[inline(always)]
    pub fn take_at(&mut self, index: usize) -> Value {
        let at = self.start as usize + index;
        match Rc::get_mut(&mut self.items) {
            Some(items) => std::mem::replace(&mut items[at], Value::Unit),
            None => match &self.items[at] {
                // Scalars copy without the general clone.
                Value::F64(x) => Value::F64(*x),
                Value::I64(n) => Value::I64(*n),
                other => other.clone(),
            },
        }
    }

    /// Everything after the first `n` elements (clamped), without touching
    /// the storage's owner count.
    #[inline(always)]
    pub fn into_skip(mut self, n: usize) -> List {
        self.advance(n);
        self
    }

    /// Drops the first `n` elements (clamped) from this view, where it is,
    /// without touching the storage's owner count.
    #[inline(always)]
    pub fn advance(&mut self, n: usize) {
        self.start += n.min(self.len()) as u32;
    }

    /// The elements as an owned vector: moved out when this view is the only
    /// owner of its storage, cloned otherwise.
    pub fn into_vec(self) -> Vec<Value> {
        self.into_unique_vec()
            .unwrap_or_else(|shared| shared.to_vec())
    }

    /// The elements one by one, by value: moved out when this view is the only
    /// owner of its storage, cloned one at a time otherwise (never all at
    /// once), so a loop over a list it alone holds keeps each element
    /// uniquely held.
    pub fn into_values(mut self) -> Values {
        match Rc::get_mut(&mut self.items) {
            Some(items) => {
                items.truncate(self.end as usize);
                let mut owned = std::mem::take(items).into_iter();
                // Skip the elements before the view: dropped, not yielded.
                if self.start > 0 {
                    owned.nth(self.start as usize - 1);
                }
                Values::Owned(owned)
            }
            None => Values::Shared(self, 0),
        }
    }

    /// The elements as an owned vector when this view is the only owner of
    /// its storage (moved, no copy); otherwise the view back.
    pub fn into_unique_vec(mut self) -> Result<Vec<Value>, List> {
        match Rc::get_mut(&mut self.items) {
            Some(items) => {
                items.truncate(self.end as usize);
                items.drain(..self.start as usize);
                Ok(std::mem::take(items))
            }
            None => Err(self),
        }
    }

    /// The elements as an owned vector (clones the elements, not the values they share).
    pub fn to_vec(&self) -> Vec<Value> {
        self.as_slice().to_vec()
    }
}

/// The iterator of [`List::into_values`].
pub enum Values {
    Owned(std::vec::IntoIter<Value>),
    Shared(List, usize),
}

impl Iterator for Values {
    type Item = Value;

    #[inline]
    fn next(&mut self) -> Option<Value> {
        match self {
            Values::Owned(items) => items.next(),
            Values::Shared(list, at) => {
                let item = list.get(*at)?.clone();
                *at += 1;
                Some(item)
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = match self {
            Values::Owned(items) => items.len(),
            Values::Shared(list, at) => list.len() - *at,
        };
        (left, Some(left))
    }
}

impl ExactSizeIterator for Values {}

fn len_u32(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

thread_local! {
    static COPIED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn count_copy(elements: usize) {
    COPIED.with(|c| c.set(c.get() + elements as u64));
}

/// How many elements (and map entries) this thread's list and map updates
/// (`push`, `++`, `map_insert`, `map_remove`) have copied: the side of `++`
/// that is not extended in place, and the whole value when an update found it
/// shared. In-place updates copy nothing, so tests read it to observe reuse
/// without timing anything: a loop of n in-place steps copies O(n) elements,
/// one that copies its accumulator O(n²).
pub fn copied_elements() -> u64 {
    COPIED.with(|c| c.get())
}

/// The map behind `m`, for an update: itself when `m` is its only owner,
/// otherwise a copy (counted by [`copied_elements`]).
pub fn map_for_update(m: &mut Rc<MapValue>) -> &mut MapValue {
    if Rc::get_mut(m).is_none() {
        count_copy(m.len());
    }
    Rc::make_mut(m)
}

impl fmt::Debug for List {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_stay_compact() {
        assert_eq!(std::mem::size_of::<Value>(), 24);
        // The interpreter's results and optional values use the tag's niche.
        assert_eq!(std::mem::size_of::<Result<Value, Box<String>>>(), 24);
        assert_eq!(std::mem::size_of::<Option<Value>>(), 24);
    }

    #[test]
    fn list_views_share_storage_and_clamp() {
        let list = List::from_vec((0..10).map(Value::I64).collect());
        let middle = list.slice(2, 5);
        assert_eq!(middle.len(), 3);
        assert_eq!(middle.get(0), Some(&Value::I64(2)));
        let tail = middle.skip(1);
        assert_eq!(tail.as_slice(), &[Value::I64(3), Value::I64(4)]);
        assert_eq!(list.slice(8, 100).len(), 2);
        assert_eq!(list.slice(7, 3).len(), 0);
        // Pushing onto a shared view copies; the original is untouched.
        let pushed = middle.push(Value::I64(99));
        assert_eq!(pushed.len(), 4);
        assert_eq!(list.len(), 10);
        assert_eq!(list.get(5), Some(&Value::I64(5)));
    }

    #[test]
    fn prepends_and_appends_reuse_unique_storage() {
        let before = copied_elements();
        let mut acc = List::empty();
        for i in 0..1000 {
            acc = List::from_vec(vec![Value::I64(i)]).concat(acc);
            acc = acc.push(Value::I64(-i));
        }
        // One element copied per prepend onto a non-empty list, none of the
        // accumulator; pushes move their element in.
        assert_eq!(copied_elements(), before + 999);
        assert_eq!(acc.len(), 2000);
        assert_eq!(acc.get(0), Some(&Value::I64(999)));
        assert_eq!(acc.get(1999), Some(&Value::I64(-999)));
        // A shared side is copied once, and left as it was.
        let shared = acc.clone();
        let longer = shared.clone().push(Value::I64(7));
        assert_eq!(copied_elements(), before + 999 + 2000);
        assert_eq!((shared.len(), longer.len()), (2000, 2001));
        // Prepending a shared list onto a unique one copies only the front.
        let front = List::from_vec(vec![Value::I64(1), Value::I64(2)]);
        let joined = front.clone().concat(longer);
        assert_eq!(copied_elements(), before + 999 + 2000 + 2);
        assert_eq!(joined.get(1), Some(&Value::I64(2)));
        assert_eq!(joined.len(), 2003);
        assert_eq!(front.len(), 2);
    }

    #[test]
    fn a_queue_keeps_its_storage_small() {
        let mut queue = List::from_vec((0..10).map(Value::I64).collect());
        for i in 10..10_000 {
            queue = queue.into_skip(1).push(Value::I64(i));
        }
        assert_eq!(queue.len(), 10);
        assert!(queue.items.len() <= 40, "storage of {}", queue.items.len());
        assert_eq!(queue.get(0), Some(&Value::I64(9990)));
    }

    #[test]
    fn into_values_moves_from_unique_storage_and_clones_from_shared() {
        let inner = || Value::list(vec![Value::I64(1)]);
        let list = List::from_vec(vec![inner(), inner(), inner()]).into_skip(1);
        let moved: Vec<Value> = list.into_values().collect();
        assert_eq!(moved.len(), 2);
        // Each element came out as the only holder of its storage.
        for item in moved {
            let Value::List(mut xs) = item else {
                panic!("a list")
            };
            assert!(xs.is_unique());
        }
        let shared = List::from_vec(vec![inner(), inner()]);
        let keep = shared.clone();
        let cloned: Vec<Value> = shared.into_values().collect();
        assert_eq!((cloned.len(), keep.len()), (2, 2));
        // A clone shares its storage with the element still in `keep`.
        for item in cloned {
            let Value::List(mut xs) = item else {
                panic!("a list")
            };
            assert!(!xs.is_unique());
        }
    }

    #[test]
    fn unique_push_appends_in_place() {
        let mut acc = List::empty();
        for i in 0..1000 {
            acc = acc.push(Value::I64(i));
        }
        assert_eq!(acc.len(), 1000);
        assert_eq!(acc.get(999), Some(&Value::I64(999)));
    }
}
