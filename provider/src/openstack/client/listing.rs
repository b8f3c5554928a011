//! The listings, each done once as admin: Nova and Glance paginate (`limit`/`marker`, `*_links`,
//! `next`), Placement does not; per-object follow-ups (extra specs before 2.61, flavor access,
//! provider inventories, quotas) fan out under the session's concurrency limit.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use serde::Deserialize;
use tokio::task::JoinSet;

use super::super::api::{
    Flavor, FlavorAccess, GlanceImage, Inventories, Project, ProjectQuota, ResourceProvider,
    Server, Traits, Usages,
};
use super::super::capacity::ProviderState;
use super::super::conventions::Devices;
use super::super::error::OpenstackError;
use super::page::{NovaItem, NovaPage, read_nova_page};
use super::session::Session;

/// Page size asked of Nova and Glance.
const PAGE: usize = 1000;

/// Runs `task` for every item, at most the session's limit at once, keeping the input order.
pub async fn fan_out<I, T, F, Fut>(items: Vec<I>, task: F) -> Vec<T>
where
    I: Send + 'static,
    T: Send + 'static,
    F: Fn(I) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
{
    let mut set = JoinSet::new();
    for (index, item) in items.into_iter().enumerate() {
        let future = task(item);
        set.spawn(async move { (index, future.await) });
    }
    let mut out: Vec<(usize, T)> = Vec::with_capacity(set.len());
    while let Some(joined) = set.join_next().await {
        if let Ok(pair) = joined {
            out.push(pair);
        }
    }
    out.sort_by_key(|(index, _)| *index);
    out.into_iter().map(|(_, value)| value).collect()
}

/// `(major, minor)` of `2.93`.
pub fn parse_version(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.trim().split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The compute microversion to use: the highest the cloud offers, capped at 2.93 (Zed), the newest
/// accelfed was tested against. `None` on clouds that answer no version document (2.1 only).
pub async fn compute_microversion(session: &Session, compute: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Doc {
        version: Version,
    }
    #[derive(Deserialize)]
    struct Version {
        #[serde(default)]
        version: String,
    }
    let doc: Doc = session
        .get("nova", &format!("{compute}/"), None)
        .await
        .ok()?;
    let offered = parse_version(&doc.version.version)?;
    let chosen = offered.min((2, 93));
    Some(format!("{}.{}", chosen.0, chosen.1))
}

/// The placement microversion: highest offered, capped at 1.39.
pub async fn placement_microversion(session: &Session, placement: &str) -> String {
    #[derive(Deserialize)]
    struct Doc {
        versions: Vec<Version>,
    }
    #[derive(Deserialize)]
    struct Version {
        max_version: String,
    }
    let doc: Result<Doc, _> = session
        .get("placement", &format!("{placement}/"), None)
        .await;
    let offered = doc
        .ok()
        .and_then(|d| {
            d.versions
                .first()
                .and_then(|v| parse_version(&v.max_version))
        })
        .unwrap_or((1, 0));
    let chosen = offered.min((1, 39));
    format!("{}.{}", chosen.0, chosen.1)
}

/// Follows Nova's `<key>_links` `next` by its marker, against our own endpoint URL (the links may
/// name a proxy's host). Each page is read straight into its items ([`NovaPage`]).
async fn nova_pages<T: NovaItem>(
    session: &Session,
    compute: &str,
    path: &str,
    microversion: Option<&str>,
) -> Result<Vec<T>, OpenstackError> {
    let mut all = Vec::new();
    let mut marker: Option<String> = None;
    let separator = if path.contains('?') { '&' } else { '?' };
    loop {
        let mut url = format!("{compute}{path}{separator}limit={PAGE}");
        if let Some(marker) = &marker {
            url.push_str(&format!("&marker={marker}"));
        }
        let page: NovaPage<T> = session
            .get_read(
                "nova",
                &url,
                microversion.map(|v| ("compute", v)),
                read_nova_page,
            )
            .await?;
        let next = page.next_marker();
        let got = page.items.len();
        all.extend(page.items);
        match next {
            Some(next) if got > 0 && marker.as_deref() != Some(&next) => marker = Some(next),
            _ => return Ok(all),
        }
    }
}

/// All flavors, private ones included, each with its extra specs.
pub async fn flavors(
    session: &Arc<Session>,
    compute: &str,
    microversion: Option<&str>,
) -> Result<Vec<Flavor>, OpenstackError> {
    let inline = microversion
        .and_then(parse_version)
        .is_some_and(|v| v >= (2, 61));
    let mut flavors: Vec<Flavor> = nova_pages(
        session,
        compute,
        "/flavors/detail?is_public=None",
        microversion,
    )
    .await?;
    if !inline {
        #[derive(Deserialize)]
        struct Specs {
            extra_specs: BTreeMap<String, String>,
        }
        let ids: Vec<String> = flavors.iter().map(|f| f.id.clone()).collect();
        let specs = fan_out(ids, |id| {
            let session = Arc::clone(session);
            let url = format!("{compute}/flavors/{id}/os-extra_specs");
            async move { session.get::<Specs>("nova", &url, None).await }
        })
        .await;
        for (flavor, specs) in flavors.iter_mut().zip(specs) {
            flavor.extra_specs = Some(specs?.extra_specs);
        }
    }
    Ok(flavors)
}

/// Which projects each private flavor is shared with.
pub async fn flavor_access(
    session: &Arc<Session>,
    compute: &str,
    flavors: &[Flavor],
) -> Result<BTreeMap<String, Vec<String>>, OpenstackError> {
    #[derive(Deserialize)]
    struct Access {
        flavor_access: Vec<FlavorAccess>,
    }
    let private: Vec<String> = flavors
        .iter()
        .filter(|f| !f.is_public)
        .map(|f| f.id.clone())
        .collect();
    let lists = fan_out(private.clone(), |id| {
        let session = Arc::clone(session);
        let url = format!("{compute}/flavors/{id}/os-flavor-access");
        async move { session.get::<Access>("nova", &url, None).await }
    })
    .await;
    let mut access = BTreeMap::new();
    for (id, list) in private.into_iter().zip(lists) {
        access.insert(
            id,
            list?
                .flavor_access
                .into_iter()
                .map(|a| a.tenant_id)
                .collect(),
        );
    }
    Ok(access)
}

/// Servers of every project; with `changes_since`, also those deleted since then.
///
/// The two listings run at once: neither depends on the other, and on a cloud that builds each
/// page slowly (Nova renders every server with its flavor) they are the meter's longest calls.
///
/// The second asks only for the deleted ones (`deleted=true`, an admin filter, like
/// `all_tenants`): `changes-since` alone also returns every live server changed since, which the
/// first listing already has, and on a cloud whose servers were all started or changed in the
/// window Nova then renders each of them twice. Nova drops filters a caller may not use, so
/// where `deleted` is not allowed the answer is `changes-since`'s whole set, which the merge
/// below reads just as well.
pub async fn servers(
    session: &Session,
    compute: &str,
    microversion: Option<&str>,
    changes_since: Option<&str>,
) -> Result<Vec<Server>, OpenstackError> {
    let current = nova_pages(
        session,
        compute,
        "/servers/detail?all_tenants=1",
        microversion,
    );
    let Some(since) = changes_since else {
        return current.await;
    };
    let path = format!("/servers/detail?all_tenants=1&deleted=true&changes-since={since}");
    let changed = nova_pages::<Server>(session, compute, &path, microversion);
    let (all, changed) = tokio::join!(current, changed);
    let mut all: Vec<Server> = all?;
    let known: std::collections::HashSet<String> = all.iter().map(|s| s.id().to_owned()).collect();
    all.extend(changed?.into_iter().filter(|s| !known.contains(s.id())));
    Ok(all)
}

/// Keystone projects, following `links.next`.
pub async fn projects(session: &Session, identity: &str) -> Result<Vec<Project>, OpenstackError> {
    #[derive(Deserialize)]
    struct Page {
        projects: Vec<Project>,
        #[serde(default)]
        links: Option<Links>,
    }
    #[derive(Deserialize)]
    struct Links {
        #[serde(default)]
        next: Option<String>,
    }
    let mut all = Vec::new();
    let mut url = format!("{identity}/projects");
    loop {
        let page: Page = session.get("keystone", &url, None).await?;
        all.extend(page.projects);
        match page.links.and_then(|l| l.next) {
            Some(next) if next != url => url = next,
            _ => return Ok(all),
        }
    }
}

/// Resource providers with their inventories; traits only where vGPUs are, and usages (with
/// `usages`) only where GPUs are: the meter reads what is installed, not what is in use.
pub async fn providers(
    session: &Arc<Session>,
    placement: &str,
    devices: &Devices,
    usages: bool,
) -> Result<Vec<(ResourceProvider, ProviderState)>, OpenstackError> {
    #[derive(Deserialize)]
    struct List {
        resource_providers: Vec<ResourceProvider>,
    }
    let version = placement_microversion(session, placement).await;
    let list: List = session
        .get(
            "placement",
            &format!("{placement}/resource_providers"),
            Some(("placement", &version)),
        )
        .await?;
    let devices = Arc::new(devices.clone());
    let states = fan_out(list.resource_providers.clone(), |rp| {
        let session = Arc::clone(session);
        let base = format!("{placement}/resource_providers/{}", rp.uuid);
        let version = version.clone();
        let devices = Arc::clone(&devices);
        async move {
            let mv = Some(("placement", version.as_str()));
            let inventories: Inventories = session
                .get("placement", &format!("{base}/inventories"), mv)
                .await?;
            let mut state = ProviderState {
                inventories: inventories.inventories,
                ..ProviderState::default()
            };
            if state
                .inventories
                .keys()
                .any(|class| devices.is_gpu_class(class))
            {
                if usages {
                    let usages: Usages = session
                        .get("placement", &format!("{base}/usages"), mv)
                        .await?;
                    state.usages = usages.usages;
                }
                if state.inventories.contains_key("VGPU") {
                    let traits: Traits = session
                        .get("placement", &format!("{base}/traits"), mv)
                        .await?;
                    state.traits = traits.traits;
                }
            }
            Ok::<_, OpenstackError>(state)
        }
    })
    .await;
    let mut out = Vec::with_capacity(states.len());
    for (rp, state) in list.resource_providers.into_iter().zip(states) {
        out.push((rp, state?));
    }
    Ok(out)
}

/// Glance v2 images, following `next`.
pub async fn images(session: &Session, image: &str) -> Result<Vec<GlanceImage>, OpenstackError> {
    #[derive(Deserialize)]
    struct Page {
        images: Vec<GlanceImage>,
        #[serde(default)]
        next: Option<String>,
    }
    let root = image.trim_end_matches("/v2");
    let mut url = format!("{root}/v2/images?limit={PAGE}");
    let mut all = Vec::new();
    loop {
        let page: Page = session.get("glance", &url, None).await?;
        all.extend(page.images);
        match page.next {
            Some(next) if !next.is_empty() => url = format!("{root}{next}"),
            _ => return Ok(all),
        }
    }
}

/// Nova quotas of each project; a project whose quota cannot be read is named in the errors.
///
/// Read from `GET /limits?tenant_id=` (the project's absolute limits, which are its quotas) rather
/// than `GET /os-quota-sets/{id}`: Nova answers a quota set only after asking Keystone whether the
/// project exists, one more request and token validation per project. On the test cloud a quota
/// set took 127 ms and the same project's limits 19 ms (medians of 15).
pub async fn quotas(
    session: &Arc<Session>,
    compute: &str,
    project_ids: Vec<String>,
) -> (
    BTreeMap<String, ProjectQuota>,
    BTreeMap<String, OpenstackError>,
) {
    #[derive(Deserialize)]
    struct Body {
        limits: Limits,
    }
    #[derive(Deserialize)]
    struct Limits {
        absolute: ProjectQuota,
    }
    let results = fan_out(project_ids.clone(), |id| {
        let session = Arc::clone(session);
        let url = format!("{compute}/limits?tenant_id={id}");
        async move { session.get::<Body>("nova", &url, None).await }
    })
    .await;
    let (mut ok, mut failed) = (BTreeMap::new(), BTreeMap::new());
    for (id, result) in project_ids.into_iter().zip(results) {
        match result {
            Ok(body) => {
                ok.insert(id, body.limits.absolute);
            }
            Err(err) => {
                failed.insert(id, err);
            }
        }
    }
    (ok, failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("2.93"), Some((2, 93)));
        assert!(parse_version("2.47").unwrap() < (2, 61));
        assert_eq!(parse_version("x"), None);
    }
}
