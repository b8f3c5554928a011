//! Builds the entity list of a snapshot (see [`super::entity`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use super::capacity::{physical, share_text, total_pairs, whole_physical_counts};
use super::entity::{Class, Entity, Value};
use super::ids::{Ids, Kind};
use super::{
    AcceleratorCapacity, AdminDomain, CloudService, ComputingService, Endpoint,
    ExecutionEnvironment, Service, SiteSnapshot, VoAccess,
};
use crate::gpu::{Capacity, GpuSpec};
use crate::names::Text;

mod accelerators;
mod apportion;
mod attrs;
mod batch;
mod cloud;

use apportion::{Part, apportion};

use attrs::*;

impl SiteSnapshot {
    /// The GLUE2 entities of this snapshot, parents before children.
    ///
    /// Text attributes borrow from the snapshot: a large site has hundreds of thousands of them.
    pub fn entities(&self) -> Vec<Entity<'_>> {
        let entities = self.entities_unchecked();
        // Every rendering starts here: in debug builds (every test), no document with two
        // physical truths gets past, whichever path built it. Providers refuse it earlier, in
        // `validate`, with the same checker.
        #[cfg(debug_assertions)]
        if let Err(mismatch) = super::physical::check(&entities) {
            panic!("site {}: {mismatch}", self.domain.name);
        }
        entities
    }

    /// [`Self::entities`] without the debug builds' physical check, for
    /// [`SiteSnapshot::validate`], which reports what that check finds as an error.
    pub(super) fn entities_unchecked(&self) -> Vec<Entity<'_>> {
        let mut builder = Builder {
            ids: Ids::new(&self.domain.name),
            out: Vec::new(),
        };
        let managers = self.services.iter().flat_map(|service| match service {
            Service::Computing(service) => &service.manager.accelerators,
            Service::Cloud(service) => &service.manager.accelerators,
        });
        let site = builder.domain(&self.domain, total_pairs(managers));
        for service in &self.services {
            match service {
                Service::Computing(service) => builder.computing(site, service),
                Service::Cloud(service) => builder.cloud(site, service),
            }
        }
        builder.out
    }
}

struct Builder<'a> {
    ids: Ids,
    out: Vec<Entity<'a>>,
}

impl<'a> Builder<'a> {
    fn push(
        &mut self,
        class: Class,
        id: String,
        parent: Option<usize>,
        attrs: Attrs<'a>,
        other_info: Vec<(String, String)>,
        associations: Vec<(Class, String)>,
    ) -> usize {
        let (attributes, other_info) = whole_physical_counts(attrs.0, other_info);
        self.out.push(Entity {
            class,
            id,
            parent,
            attributes,
            other_info,
            associations,
        });
        self.out.len() - 1
    }

    fn id_of(&self, index: usize) -> String {
        self.out[index].id.clone()
    }

    fn domain(&mut self, domain: &'a AdminDomain, totals: Vec<(String, String)>) -> usize {
        let mut other = sorted(&domain.other_info);
        if let Some(gocdb) = &domain.gocdb_id {
            other.push(("gocdb_id".into(), gocdb.to_string()));
        }
        other.extend(totals);
        other.sort();
        let attrs = Attrs::default()
            .text("Name", &domain.name)
            .opt_text("Description", domain.description.as_ref())
            .opt_text("WWW", domain.www.as_ref());
        // The AdminDomain ID is the site name itself, as BDIIs and cloud-info-api expect.
        let site = self.push(
            Class::AdminDomain,
            domain.name.to_string(),
            None,
            attrs,
            other,
            vec![],
        );
        let site_id = self.id_of(site);
        if let Some(location) = &domain.location {
            let mut attrs = Attrs::default()
                .opt_text("Place", location.place.as_ref())
                .opt_text("Country", location.country.as_ref());
            if let Some(latitude) = location.latitude {
                attrs = attrs.value("Latitude", Value::Float(latitude));
            }
            if let Some(longitude) = location.longitude {
                attrs = attrs.value("Longitude", Value::Float(longitude));
            }
            let id = self.ids.id(Kind::Location, &[domain.name.as_str()]);
            self.push(
                Class::Location,
                id,
                Some(site),
                attrs,
                vec![],
                vec![(Class::AdminDomain, site_id.clone())],
            );
        }
        for (index, contact) in domain.contacts.iter().enumerate() {
            let attrs = Attrs::default()
                .text("Detail", &contact.detail)
                .text("Type", &contact.kind);
            let id = self.ids.id(Kind::Contact, &[&index.to_string()]);
            self.push(
                Class::Contact,
                id,
                Some(site),
                attrs,
                vec![],
                vec![(Class::AdminDomain, site_id.clone())],
            );
        }
        site
    }

    fn endpoint(&mut self, class: Class, service: usize, svc: &str, endpoint: &'a Endpoint) {
        let id = self
            .ids
            .id(Kind::Endpoint, &[svc, endpoint.local_id.as_str()]);
        let attrs = Attrs::default()
            .text("URL", &endpoint.url)
            .list("Capability", &endpoint.capabilities)
            .text("Technology", &endpoint.technology)
            .text("InterfaceName", &endpoint.interface_name)
            .opt_text("InterfaceVersion", endpoint.interface_version.as_ref())
            .opt_text("ImplementationName", endpoint.implementation_name.as_ref())
            .opt_text(
                "ImplementationVersion",
                endpoint.implementation_version.as_ref(),
            )
            .text("QualityLevel", &endpoint.quality_level)
            .text("HealthState", &endpoint.health_state)
            .opt_text("HealthStateInfo", endpoint.health_state_info.as_ref())
            .text("ServingState", &endpoint.serving_state);
        let service_class = self.out[service].class;
        let service_id = self.id_of(service);
        let index = self.push(
            class,
            id,
            Some(service),
            attrs,
            vec![],
            vec![(service_class, service_id)],
        );
        if endpoint.access.is_empty() {
            return;
        }
        let endpoint_id = self.id_of(index);
        // A VO admitted through several shares (and once more with a role) is one rule and one
        // UserDomain: LDAP rejects an entry that repeats a value.
        let rules = unique(endpoint.access.iter().flat_map(VoAccess::rules));
        let attrs = Attrs::default()
            .text("Scheme", "org.glite.standard")
            .value("Rule", Value::List(rules));
        let mut associations = vec![(Class::ComputingEndpoint, endpoint_id)];
        if class == Class::CloudComputingEndpoint {
            associations[0].0 = Class::CloudComputingEndpoint;
        }
        associations.extend(
            unique(endpoint.access.iter().map(|a| a.vo.to_string()))
                .into_iter()
                .map(|vo| (Class::UserDomain, vo)),
        );
        let id = self
            .ids
            .id(Kind::AccessPolicy, &[svc, endpoint.local_id.as_str()]);
        self.push(
            Class::AccessPolicy,
            id,
            Some(index),
            attrs,
            vec![],
            associations,
        );
    }

    /// One MappingPolicy per VO of a share: cloud-info-api reads exactly one VO per policy.
    fn mapping_policies(
        &mut self,
        share: usize,
        share_class: Class,
        svc: &str,
        local: &str,
        access: &[VoAccess],
    ) {
        let share_id = self.id_of(share);
        for vo in access {
            let attrs = Attrs::default()
                .text("Scheme", "org.glite.standard")
                .value("Rule", Value::List(vo.rules()));
            let id = self
                .ids
                .id(Kind::MappingPolicy, &[svc, local, vo.vo.as_str()]);
            let associations = vec![
                (share_class, share_id.clone()),
                (Class::UserDomain, vo.vo.to_string()),
            ];
            self.push(
                Class::MappingPolicy,
                id,
                Some(share),
                attrs,
                vec![],
                associations,
            );
        }
    }

    /// The service entity of either family, under the site, and its endpoints; returns its index.
    fn service(
        &mut self,
        family: &Family,
        site: usize,
        svc: &str,
        attrs: Attrs<'a>,
        other_info: Vec<(String, String)>,
        endpoints: &'a [Endpoint],
    ) -> usize {
        let site_id = self.id_of(site);
        let id = self.ids.id(Kind::Service, &[svc]);
        let service_index = self.push(
            family.service,
            id,
            None,
            attrs,
            other_info,
            vec![(Class::AdminDomain, site_id)],
        );
        for endpoint in endpoints {
            self.endpoint(family.endpoint, service_index, svc, endpoint);
        }
        service_index
    }
}

/// For each environment (by local id), the indexes of the shares that list it, in share order.
///
/// Asking every share about every environment instead is shares x environments x listed
/// environments string comparisons: billions at a large site.
fn shares_by_environment(service: &ComputingService) -> HashMap<&str, Vec<usize>> {
    let mut shares_of: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, share) in service.shares.iter().enumerate() {
        for environment in &share.environments {
            let shares = shares_of.entry(environment.as_str()).or_default();
            // A share that lists an environment twice is still one association.
            if shares.last() != Some(&index) {
                shares.push(index);
            }
        }
    }
    shares_of
}

/// A service's OtherInfo and its physical GPUs per model (`TotalPhysicalAccelerators:<model>`,
/// its manager's), sorted.
fn with_totals(
    other_info: &BTreeMap<String, String>,
    accelerators: &[AcceleratorCapacity],
) -> Vec<(String, String)> {
    let mut other = sorted(other_info);
    other.extend(total_pairs(accelerators));
    other.sort();
    other
}

/// `items` without repeats, in the order they first appear.
fn unique(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}
