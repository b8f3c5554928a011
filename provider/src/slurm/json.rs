//! Shapes that changed between Slurm's data formats, read leniently so one parser serves all of them.
//!
//! v0.0.38 (Slurm 22.05) prints plain numbers (`"limit": 5`, `null` when unset) and single states
//! (`"state": "idle"`, `"current": "COMPLETED"`); v0.0.39 to v0.0.44 print numbers as
//! `{"set": true, "infinite": false, "number": 5}` and states as arrays (`["IDLE", "DRAIN"]`). These
//! readers accept either, without serde's untagged buffering, so the streaming job parser stays
//! close to the speed of skipping the same bytes.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A number that may be unset or infinite: `5`, `null`, or `{set, infinite, number}`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Num(pub Option<f64>);

impl Num {
    /// The value as a whole, non-negative number, when it is one.
    pub fn as_u64(self) -> Option<u64> {
        self.0
            .filter(|v| *v >= 0.0 && v.fract() == 0.0 && *v < 1.8e19)
            .map(|v| v as u64)
    }

    /// The value as seconds since the epoch; Slurm prints 0 for "not yet".
    pub fn as_time(self) -> Option<i64> {
        self.0.filter(|v| *v > 0.0).map(|v| v as i64)
    }
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NumVisitor;
        impl<'de> Visitor<'de> for NumVisitor {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number, null, or {set, infinite, number}")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num(Some(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Num, D::Error> {
                d.deserialize_any(self)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Num, A::Error> {
                let (mut set, mut infinite, mut number) = (true, false, None);
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Set => set = map.next_value()?,
                        Key::Infinite => infinite = map.next_value()?,
                        Key::Number => number = map.next_value::<Num>()?.0,
                        Key::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Num(if set && !infinite { number } else { None }))
            }
        }
        deserializer.deserialize_any(NumVisitor)
    }
}

/// The keys of a `{set, infinite, number}` object.
enum Key {
    Set,
    Infinite,
    Number,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(match v {
                    "set" => Key::Set,
                    "infinite" => Key::Infinite,
                    "number" => Key::Number,
                    _ => Key::Other,
                })
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

/// States: `"idle"`, `["IDLE", "DRAIN"]` or `null`, normalised to upper case.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct States(pub Vec<String>);

impl<'de> Deserialize<'de> for States {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StatesVisitor;
        impl<'de> Visitor<'de> for StatesVisitor {
            type Value = States;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a state or a list of states")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<States, E> {
                // 22.05 prints flags after the base state in some places: `idle+drain`.
                Ok(States(
                    v.split('+')
                        .filter(|s| !s.is_empty())
                        .map(str::to_ascii_uppercase)
                        .collect(),
                ))
            }
            fn visit_unit<E: de::Error>(self) -> Result<States, E> {
                Ok(States::default())
            }
            fn visit_none<E: de::Error>(self) -> Result<States, E> {
                Ok(States::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<States, A::Error> {
                let mut states = Vec::new();
                while let Some(state) = seq.next_element::<String>()? {
                    states.push(state.to_ascii_uppercase());
                }
                Ok(States(states))
            }
        }
        deserializer.deserialize_any(StatesVisitor)
    }
}

/// A string that 22.05 prints as `null` when empty.
pub fn opt_string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(deserializer)?.unwrap_or_default())
}

/// A list that may be printed as a comma-separated string (22.05 `features`) or an array.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Names(pub Vec<String>);

impl<'de> Deserialize<'de> for Names {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NamesVisitor;
        impl<'de> Visitor<'de> for NamesVisitor {
            type Value = Names;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a comma-separated string or a list of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Names, E> {
                Ok(Names(
                    v.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                        .collect(),
                ))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Names, E> {
                Ok(Names::default())
            }
            fn visit_none<E: de::Error>(self) -> Result<Names, E> {
                Ok(Names::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Names, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = seq.next_element::<String>()? {
                    names.push(name);
                }
                Ok(Names(names))
            }
        }
        deserializer.deserialize_any(NamesVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_of_every_format_version() {
        let nums: Vec<Num> = serde_json::from_str(
            r#"[5, null, {"set": true, "infinite": false, "number": 7},
                {"set": false, "infinite": false, "number": 0},
                {"set": true, "infinite": true, "number": 0}, 2.5]"#,
        )
        .unwrap();
        assert_eq!(
            nums,
            vec![
                Num(Some(5.0)),
                Num(None),
                Num(Some(7.0)),
                Num(None),
                Num(None),
                Num(Some(2.5))
            ]
        );
    }

    #[test]
    fn states_as_string_or_array() {
        let states: Vec<States> =
            serde_json::from_str(r#"["idle", ["IDLE", "DRAIN"], null, "mixed+drain"]"#).unwrap();
        assert_eq!(states[0].0, vec!["IDLE"]);
        assert_eq!(states[1].0, vec!["IDLE", "DRAIN"]);
        assert!(states[2].0.is_empty());
        assert_eq!(states[3].0, vec!["MIXED", "DRAIN"]);
    }

    #[test]
    fn names_as_string_or_array() {
        let names: Vec<Names> = serde_json::from_str(r#"["a,b", ["c"], null, ""]"#).unwrap();
        assert_eq!(names[0].0, vec!["a", "b"]);
        assert_eq!(names[1].0, vec!["c"]);
        assert!(names[2].0.is_empty() && names[3].0.is_empty());
    }
}
