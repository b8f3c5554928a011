//! When a secret file (a token, a password, a TLS key) is exposed: readable by every local user,
//! who could then act as the site or the service. Pure, so that every reader words it alike: the
//! one secret-file reader (`accelfed-net`'s `secret`: the CLI's token files, Slurm's and
//! Kubernetes' tokens, the central service's key and LDAP password) and central.toml's check of a
//! password in `database.url`.

/// What to tell the operator about a secret file of permission bits `mode`, or `None` when no
/// other user may read it (0600, or 0640 for a group of readers).
pub fn exposure(mode: u32) -> Option<String> {
    (mode & 0o004 != 0).then(|| {
        format!(
            "readable by every local user (mode {:o}); `chmod o-r` it (0600, or 0640 with a group)",
            mode & 0o777
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_file_others_may_read_is_exposed() {
        assert_eq!(exposure(0o100600), None);
        assert_eq!(exposure(0o100640), None);
        assert_eq!(exposure(0o100660), None);
        let advice = exposure(0o100644).unwrap();
        assert!(advice.contains("mode 644"), "{advice}");
        assert!(exposure(0o100604).is_some());
    }
}
