//! The only file here that talks to an LDAP server (ldap3, async): connect and bind, read a
//! subtree, carry out a plan.

use std::collections::HashSet;
use std::time::Duration;

use ldap3::adapters::{Adapter, EntriesOnly, PagedResults};
use ldap3::{Ldap, LdapConnAsync, LdapConnSettings, Mod, Scope, SearchEntry};

use super::entry::DirEntry;
use super::error::LdapError;
use super::plan::{Change, LdapOp, PlanCounts};

/// How long connecting, and then each operation, may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Entries per page of a search: under slapd's default size limit of 500, so a server that limits
/// non-root binds still answers every page.
const PAGE: i32 = 400;
/// LDAP result code `noSuchObject`.
const NO_SUCH_OBJECT: u32 = 32;

/// A bound connection.
#[derive(Debug)]
pub struct Connection {
    ldap: Ldap,
    url: String,
}

/// What carrying out a plan did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApplyReport {
    /// The operations the server accepted, by kind.
    pub done: PlanCounts,
    /// `<operation> <dn>: <server's reason>` for each refused operation.
    pub failed: Vec<String>,
}

fn boxed(source: ldap3::LdapError) -> Box<ldap3::LdapError> {
    Box::new(source)
}

impl Connection {
    /// Connects to `url`, trusting `trust` for `ldaps://`; binds as `bind` (DN, password) when
    /// given, else stays anonymous (a BDII allows anonymous reads).
    pub async fn open(
        url: &str,
        bind: Option<(&str, &str)>,
        trust: &accelfed_net::Trust,
    ) -> Result<Self, LdapError> {
        // TLS (`ldaps://`) through the one network layer: the system's roots as every client
        // of the project reads them, plus the configured CA.
        let tls =
            accelfed_net::tls::client_config(trust).map_err(|message| LdapError::Connect {
                url: url.to_owned(),
                source: boxed(ldap3::LdapError::from(std::io::Error::other(message))),
            })?;
        let settings = LdapConnSettings::new()
            .set_conn_timeout(TIMEOUT)
            .set_config(tls);
        let (conn, mut ldap) =
            LdapConnAsync::with_settings(settings, url)
                .await
                .map_err(|source| LdapError::Connect {
                    url: url.to_owned(),
                    source: boxed(source),
                })?;
        ldap3::drive!(conn);
        if let Some((dn, password)) = bind {
            ldap.with_timeout(TIMEOUT)
                .simple_bind(dn, password)
                .await
                .and_then(ldap3::LdapResult::success)
                .map_err(|source| LdapError::Bind {
                    url: url.to_owned(),
                    dn: dn.to_owned(),
                    source: boxed(source),
                })?;
        }
        Ok(Self {
            ldap,
            url: url.to_owned(),
        })
    }

    /// The entries of the subtree under `base` (itself included) that match `filter`, with the
    /// attributes `attrs` (`*` for all user attributes). A missing base is an empty answer.
    pub async fn search(
        &mut self,
        base: &str,
        filter: &str,
        attrs: &[&str],
    ) -> Result<Vec<DirEntry>, LdapError> {
        let error = |source| LdapError::Search {
            url: self.url.clone(),
            base: base.to_owned(),
            filter: filter.to_owned(),
            source: boxed(source),
        };
        let adapters: Vec<Box<dyn Adapter<_, _>>> = vec![
            Box::new(EntriesOnly::new()),
            Box::new(PagedResults::new(PAGE)),
        ];
        let attrs: Vec<String> = attrs.iter().map(|a| (*a).to_owned()).collect();
        let mut stream = self
            .ldap
            .with_timeout(TIMEOUT)
            .streaming_search_with(adapters, base, Scope::Subtree, filter, attrs)
            .await
            .map_err(error)?;
        let mut out = Vec::new();
        while let Some(entry) = stream.next().await.map_err(error)? {
            let entry = SearchEntry::construct(entry);
            out.push(DirEntry::from_search(entry.dn, entry.attrs));
        }
        let result = stream.finish().await;
        if result.rc == NO_SUCH_OBJECT {
            return Ok(Vec::new());
        }
        result.success().map_err(error)?;
        Ok(out)
    }

    /// Sends `ops` in order. A refused operation is recorded and the rest still sent (like
    /// `ldapadd -c`): one bad entry must not keep the other sites' changes from the server; the
    /// next sync plans the refused ones again.
    pub async fn apply(&mut self, ops: &[LdapOp]) -> ApplyReport {
        let mut report = ApplyReport::default();
        for op in ops {
            let ldap = self.ldap.with_timeout(TIMEOUT);
            let (kind, result) = match op {
                LdapOp::Add(entry) => {
                    let attrs: Vec<(&str, HashSet<&str>)> = entry
                        .attributes
                        .values()
                        .map(|a| {
                            (
                                a.name.as_str(),
                                a.values.iter().map(String::as_str).collect(),
                            )
                        })
                        .collect();
                    ("add", ldap.add(&entry.dn, attrs).await)
                }
                LdapOp::Modify { dn, changes } => {
                    let mods: Vec<Mod<&str>> = changes
                        .iter()
                        .map(|change| match change {
                            Change::Replace { name, values } => Mod::Replace(
                                name.as_str(),
                                values.iter().map(String::as_str).collect(),
                            ),
                            Change::Remove { name } => Mod::Delete(name.as_str(), HashSet::new()),
                        })
                        .collect();
                    ("modify", ldap.modify(dn, mods).await)
                }
                LdapOp::Delete { dn } => ("delete", ldap.delete(dn).await),
            };
            match result.and_then(ldap3::LdapResult::success) {
                Ok(_) => match op {
                    LdapOp::Add(_) => report.done.adds += 1,
                    LdapOp::Modify { changes, .. } => {
                        report.done.modifies += 1;
                        report.done.changed_attributes += changes.len();
                    }
                    LdapOp::Delete { .. } => report.done.deletes += 1,
                },
                Err(err) => report.failed.push(format!("{kind} {}: {err}", op.dn())),
            }
        }
        report
    }

    /// Unbinds; the server forgets the connection either way, so a failure is only logged.
    pub async fn close(mut self) {
        if let Err(err) = self.ldap.unbind().await {
            tracing::debug!(url = %self.url, "LDAP unbind: {err}");
        }
    }
}
