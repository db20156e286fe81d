//! `Option` in the Soil encoding (tr-grammar §7): `{"tag":"None"}` or
//! `{"tag":"Some","value":…}`, for every document that carries Soil-shaped
//! optional fields (diagnostics, questions). Use as
//! `#[serde(default, with = "trellis_diag::soil_option")]`; reading also takes
//! `null` or an absent field as `None`, as a peer may leave an empty option out.

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, SerializeMap, Serializer};

/// Borrows an `Option` to write it in the Soil encoding.
pub struct Ref<'a, T>(pub &'a Option<T>);

impl<T: Serialize> Serialize for Ref<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            None => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("tag", "None")?;
                map.end()
            }
            Some(value) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("tag", "Some")?;
                map.serialize_entry("value", value)?;
                map.end()
            }
        }
    }
}

pub fn serialize<T: Serialize, S: Serializer>(
    value: &Option<T>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    Ref(value).serialize(serializer)
}

pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(tag = "tag", content = "value")]
    enum Tagged<T> {
        None,
        Some(T),
    }
    Ok(match Option::<Tagged<T>>::deserialize(deserializer)? {
        None | Some(Tagged::None) => None,
        Some(Tagged::Some(value)) => Some(value),
    })
}
