//! Map storage: a hash table for lookups and updates, and the ascending key
//! order that every ordered read (listing, `==`, `compare`, encoding) sees,
//! sorted once after the key set changes and kept until it changes again.
//!
//! A Soil map is ordered by the total structural order of its keys, and no
//! program can observe anything else; but a word count looks a key up and
//! updates it once per word and lists the entries once, so a search tree's
//! O(log m) comparisons on every update (each chasing a pointer to the key's
//! text) cost more than the whole rest of the count. Here a lookup or an
//! update of an existing key is one hash and one probe, expected O(1); adding
//! or removing a key drops the cached order, and the next ordered read sorts
//! the keys again (O(m log m)), later ones reuse it (O(m)). The table's own
//! iteration order is never exposed: [`MapValue::iter`] and its kin walk the
//! sorted keys.

use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::BuildHasherDefault;

use rustc_hash::FxHasher;

use crate::order::compare_quick;
use crate::value::{Key, Value};

/// Deterministic and fast on short keys; no program can see its order.
type Table = HashMap<Key, Value, BuildHasherDefault<FxHasher>>;

/// The entries of a `Map k v` (see the module documentation).
#[derive(Clone, Default)]
pub struct MapValue {
    entries: Table,
    /// The keys in ascending order, once an ordered read has asked for them
    /// since the key set last changed.
    order: OnceCell<Box<[Key]>>,
}

impl MapValue {
    pub fn new() -> MapValue {
        MapValue::default()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, key: &Key) -> Option<&Value> {
        self.entries.get(key)
    }

    pub fn contains_key(&self, key: &Key) -> bool {
        self.entries.contains_key(key)
    }

    /// Maps `key` to `value`, returning the value it replaces. A key already
    /// present keeps its place in the order (and the stored key is kept, as
    /// an equal key is the same value); a new key drops the cached order.
    pub fn insert(&mut self, key: Key, value: Value) -> Option<Value> {
        if let Some(slot) = self.entries.get_mut(&key) {
            // The key given is equal to the one kept, and let go here.
            key.0.release();
            return Some(std::mem::replace(slot, value));
        }
        self.order.take();
        self.entries.insert(key, value)
    }

    /// Removes `key`, returning its value; the cached order is dropped when
    /// the key was present.
    pub fn remove(&mut self, key: &Key) -> Option<Value> {
        let removed = self.entries.remove(key);
        if removed.is_some() {
            self.order.take();
        }
        removed
    }

    /// The keys in ascending order, sorted now if the key set changed since
    /// the last ordered read.
    fn sorted_keys(&self) -> &[Key] {
        self.order.get_or_init(|| {
            let mut keys: Vec<Key> = self.entries.keys().cloned().collect();
            // Keys are distinct, so an unstable sort is deterministic.
            keys.sort_unstable_by(|a, b| compare_quick(&a.0, &b.0));
            keys.into_boxed_slice()
        })
    }

    /// The entries in ascending key order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&Key, &Value)> + '_ {
        self.sorted_keys().iter().map(|key| {
            let value = self.entries.get(key);
            // The cached order holds exactly the table's keys.
            (key, value.unwrap_or(&Value::Unit))
        })
    }

    /// The keys in ascending order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &Key> + '_ {
        self.sorted_keys().iter()
    }

    /// The values in ascending order of their keys.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &Value> + '_ {
        self.iter().map(|(_, value)| value)
    }
}

impl FromIterator<(Key, Value)> for MapValue {
    /// A later pair for an equal key replaces the earlier one's value.
    fn from_iter<I: IntoIterator<Item = (Key, Value)>>(pairs: I) -> MapValue {
        let mut map = MapValue::new();
        map.extend(pairs);
        map
    }
}

impl Extend<(Key, Value)> for MapValue {
    fn extend<I: IntoIterator<Item = (Key, Value)>>(&mut self, pairs: I) {
        for (key, value) in pairs {
            self.insert(key, value);
        }
    }
}

impl From<BTreeMap<Key, Value>> for MapValue {
    fn from(entries: BTreeMap<Key, Value>) -> MapValue {
        entries.into_iter().collect()
    }
}

impl fmt::Debug for MapValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.iter().map(|(k, v)| (&k.0, v)))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(map: &MapValue) -> Vec<i64> {
        map.keys()
            .map(|k| match k.0 {
                Value::I64(n) => n,
                _ => panic!("an I64 key"),
            })
            .collect()
    }

    #[test]
    fn ordered_reads_follow_the_key_order_through_changes() {
        let mut map: MapValue = [5, 1, 3]
            .into_iter()
            .map(|n| (Key(Value::I64(n)), Value::I64(n * 10)))
            .collect();
        assert_eq!(keys(&map), [1, 3, 5]);
        // Replacing a value keeps the cached order; adding and removing keys
        // are seen by the next ordered read.
        assert_eq!(
            map.insert(Key(Value::I64(3)), Value::I64(0)),
            Some(Value::I64(30))
        );
        assert_eq!(map.insert(Key(Value::I64(2)), Value::I64(20)), None);
        assert_eq!(keys(&map), [1, 2, 3, 5]);
        assert_eq!(map.remove(&Key(Value::I64(1))), Some(Value::I64(10)));
        assert_eq!(map.remove(&Key(Value::I64(9))), None);
        let values: Vec<&Value> = map.values().collect();
        assert_eq!(values, [&Value::I64(20), &Value::I64(0), &Value::I64(50)]);
        assert_eq!(map.len(), 3);
        assert!(map.contains_key(&Key(Value::I64(5))));
        assert_eq!(map.get(&Key(Value::I64(4))), None);
    }

    #[test]
    fn keys_equal_in_the_total_order_are_one_key() {
        // Every NaN is one key; -0.0 and 0.0 are two.
        let map: MapValue = [f64::NAN, -f64::NAN, -0.0, 0.0]
            .into_iter()
            .enumerate()
            .map(|(i, x)| (Key(Value::F64(x)), Value::I64(i as i64)))
            .collect();
        assert_eq!(map.len(), 3);
        assert_eq!(map.get(&Key(Value::F64(f64::NAN))), Some(&Value::I64(1)));
        assert_eq!(format!("{map:?}"), "{-0.0: 2, 0.0: 3, NaN: 1}");
    }
}
