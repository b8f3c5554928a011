//! TRES lists in Slurm's JSON (`[{"type": "gres", "name": "gpu:a100", "id": 1002, "count": 2}, ...]`),
//! read straight into a [`GpuTresBuilder`] without allocating for the entries that are not GPUs:
//! a job carries a dozen such lists (allocated, requested, and per step max/min/average/total), and
//! the meter reads millions of jobs.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::json::Num;
use super::tres::{GpuTres, GpuTresBuilder};

/// A TRES list reduced to its GPUs. `problem` says which entry could not be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TresList {
    pub gpus: GpuTres,
    pub problem: Option<String>,
}

impl<'de> Deserialize<'de> for TresList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ListVisitor;
        impl<'de> Visitor<'de> for ListVisitor {
            type Value = TresList;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of TRES")
            }
            fn visit_unit<E: de::Error>(self) -> Result<TresList, E> {
                Ok(TresList::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TresList, A::Error> {
                let mut builder = GpuTresBuilder::default();
                let mut problem = None;
                while let Some(entry) = seq.next_element::<Entry>()? {
                    let Some(name) = entry.name else { continue };
                    match entry.count.as_u64() {
                        Some(count) => builder.add("gres", &name.as_str(), count),
                        None => {
                            problem.get_or_insert_with(|| {
                                format!("gres/{} has count {:?}", name.as_str(), entry.count.0)
                            });
                        }
                    }
                }
                Ok(TresList {
                    gpus: builder.finish(),
                    problem,
                })
            }
        }
        deserializer.deserialize_any(ListVisitor)
    }
}

/// The GPU TRES names; everything else is `None` and never allocated.
enum GpuName {
    Gpu,
    GpuUtil,
    Typed(String),
    Shard,
    TypedShard(String),
}

impl GpuName {
    fn as_str(&self) -> String {
        match self {
            GpuName::Gpu => "gpu".to_owned(),
            GpuName::GpuUtil => "gpuutil".to_owned(),
            GpuName::Typed(name) => format!("gpu:{name}"),
            GpuName::Shard => "shard".to_owned(),
            GpuName::TypedShard(name) => format!("shard:{name}"),
        }
    }
}

/// One entry, kept only when it is a GPU `gres`.
struct Entry {
    name: Option<GpuName>,
    count: Num,
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntryVisitor;
        impl<'de> Visitor<'de> for EntryVisitor {
            type Value = Entry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a TRES entry")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entry, A::Error> {
                let (mut is_gres, mut name, mut count) = (false, None, Num::default());
                while let Some(key) = map.next_key_seed(FieldSeed)? {
                    match key {
                        Field::Type => is_gres = map.next_value_seed(IsGres)?,
                        Field::Name => name = map.next_value_seed(NameSeed)?,
                        Field::Count => count = map.next_value()?,
                        Field::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Entry {
                    name: if is_gres { name } else { None },
                    count,
                })
            }
        }
        deserializer.deserialize_map(EntryVisitor)
    }
}

enum Field {
    Type,
    Name,
    Count,
    Other,
}

struct FieldSeed;
impl<'de> DeserializeSeed<'de> for FieldSeed {
    type Value = Field;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Field, D::Error> {
        d.deserialize_identifier(self)
    }
}
impl Visitor<'_> for FieldSeed {
    type Value = Field;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
        Ok(match v {
            "type" => Field::Type,
            "name" => Field::Name,
            "count" => Field::Count,
            _ => Field::Other,
        })
    }
}

struct IsGres;
impl<'de> DeserializeSeed<'de> for IsGres {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}
impl Visitor<'_> for IsGres {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a TRES type")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        Ok(v == "gres")
    }
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
}

struct NameSeed;
impl<'de> DeserializeSeed<'de> for NameSeed {
    type Value = Option<GpuName>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<GpuName>, D::Error> {
        d.deserialize_any(self)
    }
}
impl Visitor<'_> for NameSeed {
    type Value = Option<GpuName>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a TRES name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<GpuName>, E> {
        Ok(match v {
            "gpu" => Some(GpuName::Gpu),
            "gpuutil" => Some(GpuName::GpuUtil),
            "shard" => Some(GpuName::Shard),
            _ => match v.strip_prefix("gpu:") {
                Some(t) => Some(GpuName::Typed(t.to_owned())),
                None => v
                    .strip_prefix("shard:")
                    .map(|t| GpuName::TypedShard(t.to_owned())),
            },
        })
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<GpuName>, E> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocated_list_of_22_05() {
        let list: TresList = serde_json::from_str(
            r#"[{"type": "cpu", "name": null, "id": 1, "count": 1},
                {"type": "energy", "name": null, "id": 3, "count": null},
                {"type": "gres", "name": "gpu", "id": 1001, "count": 2},
                {"type": "gres", "name": "gpu:a100", "id": 1002, "count": 2}]"#,
        )
        .unwrap();
        assert_eq!(list.gpus.count, Some(2));
        assert_eq!(list.gpus.gpu_type.as_deref(), Some("a100"));
        assert_eq!(list.problem, None);
    }

    #[test]
    fn a_gpu_entry_without_a_count_is_a_problem_not_zero() {
        let list: TresList =
            serde_json::from_str(r#"[{"type": "gres", "name": "gpu", "count": null}]"#).unwrap();
        assert_eq!(list.gpus.count, None);
        assert_eq!(list.problem.as_deref(), Some("gres/gpu has count None"));
    }
}
