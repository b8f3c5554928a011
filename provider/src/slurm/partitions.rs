//! Partitions: who may submit (AllowAccounts, AllowGroups, AllowQos and their Deny lists), the time
//! limit and the state. Read from slurmrestd or `scontrol show partitions --json` (23.02+), or from
//! `scontrol show partition -o` text where 22.05 has no JSON for them.

use serde::Deserialize;

use super::json::{Num, States, opt_string};

/// Who a partition admits by one kind of Slurm name: everyone, or a list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Allow {
    #[default]
    All,
    Only(Vec<String>),
}

impl Allow {
    /// `ALL`, empty or absent means everyone; else a comma-separated list.
    fn from_list(text: &str) -> Self {
        let text = text.trim();
        if text.is_empty() || text.eq_ignore_ascii_case("ALL") || text == "(null)" {
            Allow::All
        } else {
            Allow::Only(split(text))
        }
    }

    pub fn admits(&self, name: &str) -> bool {
        match self {
            Allow::All => true,
            Allow::Only(names) => names.iter().any(|n| n == name),
        }
    }
}

fn split(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "(null)")
        .map(str::to_owned)
        .collect()
}

/// A partition, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmPartition {
    pub name: String,
    pub accounts: Allow,
    pub deny_accounts: Vec<String>,
    pub groups: Allow,
    pub qos: Allow,
    pub deny_qos: Vec<String>,
    pub max_time_s: Option<u64>,
    /// `UP`, `DOWN`, `DRAIN`, `INACTIVE`.
    pub state: String,
}

/// A partition as the JSON carries it: v0.0.38 flat fields and v0.0.39+ nested ones.
#[derive(Debug, Clone, Deserialize)]
pub struct RawPartition {
    pub name: String,
    // v0.0.38
    #[serde(default, deserialize_with = "opt_string")]
    allowed_accounts: String,
    #[serde(default, deserialize_with = "opt_string")]
    denied_accounts: String,
    #[serde(default, deserialize_with = "opt_string")]
    allowed_groups: String,
    #[serde(default, deserialize_with = "opt_string")]
    allowed_qos: String,
    #[serde(default, deserialize_with = "opt_string")]
    denied_qos: String,
    /// Minutes.
    #[serde(default)]
    max_time_limit: Num,
    #[serde(default)]
    state: Option<States>,
    // v0.0.39+ (v0.0.38 has a string `qos`, the partition's own QOS: read as absent)
    #[serde(default, deserialize_with = "allow_deny")]
    accounts: Option<AllowDeny>,
    #[serde(default, deserialize_with = "allow_deny")]
    groups: Option<AllowDeny>,
    #[serde(default, deserialize_with = "allow_deny")]
    qos: Option<AllowDeny>,
    #[serde(default)]
    maximums: Option<Maximums>,
    #[serde(default)]
    partition: Option<PartitionState>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct AllowDeny {
    #[serde(default, deserialize_with = "opt_string")]
    allowed: String,
    #[serde(default, deserialize_with = "opt_string")]
    deny: String,
}

fn allow_deny<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<AllowDeny>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Lists(AllowDeny),
        Other(serde::de::IgnoredAny),
    }
    Ok(match Either::deserialize(d)? {
        Either::Lists(lists) => Some(lists),
        Either::Other(_) => None,
    })
}

#[derive(Debug, Clone, Default, Deserialize)]
struct Maximums {
    /// Minutes.
    #[serde(default)]
    time: Num,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct PartitionState {
    #[serde(default)]
    state: States,
}

impl RawPartition {
    pub fn read(self) -> SlurmPartition {
        let accounts = self.accounts.unwrap_or(AllowDeny {
            allowed: self.allowed_accounts,
            deny: self.denied_accounts,
        });
        let groups = self.groups.unwrap_or(AllowDeny {
            allowed: self.allowed_groups,
            deny: String::new(),
        });
        let qos = self.qos.unwrap_or(AllowDeny {
            allowed: self.allowed_qos,
            deny: self.denied_qos,
        });
        let minutes = self.maximums.map_or(self.max_time_limit, |m| m.time);
        let state = self
            .partition
            .map(|p| p.state)
            .or(self.state)
            .unwrap_or_default();
        SlurmPartition {
            name: self.name,
            accounts: Allow::from_list(&accounts.allowed),
            deny_accounts: split(&accounts.deny),
            groups: Allow::from_list(&groups.allowed),
            qos: Allow::from_list(&qos.allowed),
            deny_qos: split(&qos.deny),
            max_time_s: minutes.as_u64().map(|m| m * 60),
            state: state.0.first().cloned().unwrap_or_else(|| "UP".to_owned()),
        }
    }
}

/// Reads `scontrol show partition -o` (one partition per line, `Key=Value` pairs).
pub fn parse_scontrol_text(text: &str) -> Vec<SlurmPartition> {
    text.lines()
        .filter(|line| line.starts_with("PartitionName="))
        .map(|line| {
            let value = |key: &str| -> String {
                line.split_whitespace()
                    .find_map(|pair| pair.strip_prefix(key)?.strip_prefix('='))
                    .unwrap_or("")
                    .to_owned()
            };
            SlurmPartition {
                name: value("PartitionName"),
                accounts: Allow::from_list(&value("AllowAccounts")),
                deny_accounts: split(&value("DenyAccounts")),
                groups: Allow::from_list(&value("AllowGroups")),
                qos: Allow::from_list(&value("AllowQos")),
                deny_qos: split(&value("DenyQos")),
                max_time_s: duration_s(&value("MaxTime")),
                state: value("State"),
            }
        })
        .collect()
}

/// `UNLIMITED`, `60` (minutes), `01:00:00`, `2-00:00:00`.
fn duration_s(text: &str) -> Option<u64> {
    let (days, rest) = match text.split_once('-') {
        Some((days, rest)) => (days.parse::<u64>().ok()?, rest),
        None => (0, text),
    };
    let parts: Vec<u64> = rest
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let seconds = match parts.as_slice() {
        [minutes] => minutes * 60,
        [minutes, seconds] => minutes * 60 + seconds,
        [hours, minutes, seconds] => hours * 3600 + minutes * 60 + seconds,
        _ => return None,
    };
    Some(days * 86_400 + seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scontrol_text_of_22_05() {
        let parts = parse_scontrol_text(
            "PartitionName=gpu AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL MaxTime=UNLIMITED State=UP\n\
             PartitionName=atlas AllowGroups=atlas,cms AllowAccounts=vo.atlas DenyQos=low MaxTime=1-01:00:00 State=DRAIN\n",
        );
        assert_eq!(parts[0].accounts, Allow::All);
        assert_eq!(parts[0].max_time_s, None);
        assert_eq!(parts[1].accounts, Allow::Only(vec!["vo.atlas".into()]));
        assert_eq!(
            parts[1].groups,
            Allow::Only(vec!["atlas".into(), "cms".into()])
        );
        assert_eq!(parts[1].deny_qos, vec!["low"]);
        assert_eq!(parts[1].max_time_s, Some(90_000));
        assert_eq!(parts[1].state, "DRAIN");
    }

    #[test]
    fn json_of_both_layouts() {
        let old: RawPartition = serde_json::from_str(
            r#"{"name": "atlas", "allowed_accounts": "vo.atlas", "allowed_groups": "",
                "max_time_limit": 60, "state": "UP"}"#,
        )
        .unwrap();
        let old = old.read();
        assert_eq!(old.accounts, Allow::Only(vec!["vo.atlas".into()]));
        assert_eq!(old.max_time_s, Some(3600));
        let new: RawPartition = serde_json::from_str(
            r#"{"name": "atlas", "accounts": {"allowed": "vo.atlas,vo.cms", "deny": ""},
                "groups": {"allowed": ""}, "qos": {"allowed": "", "deny": "", "assigned": ""},
                "maximums": {"time": {"set": true, "infinite": false, "number": 120}},
                "partition": {"state": ["UP"]}}"#,
        )
        .unwrap();
        let new = new.read();
        assert!(new.accounts.admits("vo.cms") && !new.accounts.admits("vo.lhcb"));
        assert_eq!(new.max_time_s, Some(7200));
        assert_eq!(new.groups, Allow::All);
    }
}
