//! The generated large cloud: every response the client would receive (flavors, servers,
//! projects, resource providers with inventories, usages and traits, flavor access, quotas, images)
//! in the shapes of the real captures.

use super::*;

pub(crate) fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../provider/tests/fixtures/openstack")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// A uuid-shaped id, distinct per kind and number.
pub(crate) fn uuid(kind: u32, n: usize) -> String {
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        kind as usize * 0x1000_0000 + n,
        n % 65_536,
        kind,
        (n / 7) % 4096,
        n * 40_503
    )
}

/// One provider's inventories, then its usages and traits where the client asks for them.
pub(crate) type ProviderDocs = (Vec<u8>, Option<Vec<u8>>, Option<Vec<u8>>);

/// The responses of the generated cloud, as the client would receive them.
pub(crate) struct Responses {
    pub(crate) flavor_pages: Vec<Vec<u8>>,
    pub(crate) server_pages: Vec<Vec<u8>>,
    pub(crate) projects: Vec<u8>,
    pub(crate) provider_list: Vec<u8>,
    /// Per provider, in list order: inventories, then usages and traits where the client asks.
    pub(crate) provider_docs: Vec<ProviderDocs>,
    pub(crate) flavor_access: Vec<(String, Vec<u8>)>,
    pub(crate) quotas: Vec<(String, Vec<u8>)>,
    pub(crate) images: Vec<u8>,
}

impl Responses {
    pub(crate) fn bytes(&self) -> usize {
        self.meter_documents().map(<[u8]>::len).sum::<usize>()
            + self.provider_list.len()
            + self
                .provider_docs
                .iter()
                .map(|(i, u, t)| {
                    i.len() + u.as_ref().map_or(0, Vec::len) + t.as_ref().map_or(0, Vec::len)
                })
                .sum::<usize>()
            + self
                .flavor_access
                .iter()
                .map(|(_, d)| d.len())
                .sum::<usize>()
            + self.quotas.iter().map(|(_, d)| d.len()).sum::<usize>()
            + self.images.len()
    }

    /// What the meter reads: flavors, projects, servers.
    /// What `accelfed meter` reads: flavors, servers, projects and, because the cloud has vGPU
    /// flavors, Placement's providers (their vGPUs per physical GPU make a vGPU's share).
    pub(crate) fn meter_documents(&self) -> impl Iterator<Item = &[u8]> {
        self.flavor_pages
            .iter()
            .chain(&self.server_pages)
            .map(Vec::as_slice)
            .chain(std::iter::once(self.projects.as_slice()))
            .chain(std::iter::once(self.provider_list.as_slice()))
            .chain(self.provider_docs.iter().flat_map(|(i, u, t)| {
                std::iter::once(i.as_slice())
                    .chain(u.as_deref())
                    .chain(t.as_deref())
            }))
    }

    pub(crate) fn all_documents(&self) -> impl Iterator<Item = &[u8]> {
        self.meter_documents()
            .chain(self.flavor_access.iter().map(|(_, d)| d.as_slice()))
            .chain(self.quotas.iter().map(|(_, d)| d.as_slice()))
            .chain(std::iter::once(self.images.as_slice()))
    }
}

/// Flavor `n`: a fifth each PCI alias, vGPU, EGI keys (with the alias Nova schedules by), a
/// `resources:CUSTOM_PCI_*` class, and no GPU; every tenth private.
pub(crate) fn flavor_specs(n: usize) -> (String, Value) {
    let count = [1, 2, 4, 8][(n / 5) % 4];
    match n % 5 {
        0 => (
            format!("g1.v100x{count}.{n}"),
            json!({"pci_passthrough:alias": format!("nvidia-v100:{count}")}),
        ),
        1 => (
            format!("vg1.a100-4c.{n}"),
            json!({"resources:VGPU": "1", "trait:CUSTOM_NVIDIA_A100_4C": "required"}),
        ),
        2 => (
            format!("egi.v100x{count}.{n}"),
            json!({"Accelerator:Type": "GPU", "Accelerator:Vendor": "NVIDIA",
                "Accelerator:Model": "Tesla V100-PCIE-16GB", "Accelerator:Number": count.to_string(),
                "Accelerator:Memory": "16", "Accelerator:VirtualizationType": "passthrough",
                "pci_passthrough:alias": format!("nvidia-v100:{count}")}),
        ),
        3 => (
            format!("p1.v100x{count}.{n}"),
            json!({"resources:CUSTOM_PCI_10DE_1DB4": count.to_string(),
                "hw:cpu_policy": "dedicated"}),
        ),
        _ => (
            format!("m1.cpu.{n}"),
            json!({"hw:cpu_policy": "shared", "quota:disk_read_iops_sec": "5000"}),
        ),
    }
}

pub(crate) fn page_of(key: &str, items: &[Value], next: Option<String>) -> Vec<u8> {
    let mut page = json!({ key: items });
    if let Some(marker) = next {
        page[format!("{key}_links")] = json!([{"rel": "next", "href": format!(
            "http://127.0.0.1:8774/v2.1/{key}/detail?limit={PAGE}&marker={marker}")}]);
    }
    serde_json::to_vec(&page).unwrap()
}

pub(crate) fn paginate(key: &str, items: &[Value]) -> Vec<Vec<u8>> {
    items
        .chunks(PAGE)
        .enumerate()
        .map(|(index, chunk)| {
            let more = (index + 1) * PAGE < items.len();
            let last = chunk
                .last()
                .and_then(|i| i["id"].as_str())
                .map(str::to_owned);
            page_of(key, chunk, last.filter(|_| more))
        })
        .collect()
}

/// The project a server belongs to.
pub(crate) fn project_id(n: usize) -> String {
    uuid(3, n % PROJECTS).replace('-', "")
}

pub(crate) fn generate(servers: usize) -> Responses {
    let flavor_template = fixture("nova-flavors-detail-2.61.json")["flavors"][0].clone();
    let flavors: Vec<Value> = (0..FLAVORS)
        .map(|n| {
            let (name, specs) = flavor_specs(n);
            let mut f = flavor_template.clone();
            let id = uuid(1, n);
            f["id"] = json!(id);
            f["name"] = json!(name);
            f["vcpus"] = json!(4 * (1 + n % 8));
            f["ram"] = json!(8192 * (1 + n % 8));
            f["os-flavor-access:is_public"] = json!(n % 10 != 9);
            f["extra_specs"] = specs;
            f["links"][0]["href"] = json!(format!("http://127.0.0.1:8774/v2.1/flavors/{id}"));
            f["links"][1]["href"] = json!(format!("http://127.0.0.1:8774/flavors/{id}"));
            f
        })
        .collect();
    let flavor_access = flavors
        .iter()
        .filter(|f| f["os-flavor-access:is_public"] == false)
        .enumerate()
        .map(|(k, f)| {
            let id = f["id"].as_str().unwrap().to_owned();
            let doc = json!({"flavor_access": [
                {"flavor_id": id, "tenant_id": project_id(k)},
                {"flavor_id": id, "tenant_id": project_id(k + 1)}]});
            (id, serde_json::to_vec(&doc).unwrap())
        })
        .collect();

    let project_template = fixture("keystone-projects.json")["projects"][0].clone();
    let projects: Vec<Value> = (0..PROJECTS)
        .map(|n| {
            let mut p = project_template.clone();
            let id = project_id(n);
            p["id"] = json!(id);
            p["name"] = json!(format!("vo-{n:02}"));
            p["description"] = json!(format!("VO project {n}"));
            p["VO"] = json!(format!("vo{n:02}.example.org"));
            p["links"]["self"] = json!(format!("http://127.0.0.1:5000/v3/projects/{id}"));
            p
        })
        .collect();
    let projects_doc = serde_json::to_vec(&json!({"projects": projects, "links": {
        "next": null, "self": "http://127.0.0.1:5000/v3/projects", "previous": null}}))
    .unwrap();

    // Servers: round-robin over projects and GPU-or-not flavors; a twentieth shelved, a twentieth
    // deleted (as `changes-since` returns them).
    let server_template = fixture("nova-servers-detail-alltenants-2.93.json")["servers"][0].clone();
    let start = Utc.with_ymd_and_hms(2026, 10, 1, 0, 0, 0).unwrap();
    let mut used_v100 = 0u64;
    let mut used_vgpu = 0u64;
    let server_values: Vec<Value> = (0..servers)
        .map(|n| {
            let flavor = &flavors[(n * 7) % FLAVORS];
            let mut s = server_template.clone();
            let id = uuid(2, n);
            let created = start + chrono::Duration::seconds((n as i64 * 37) % (50 * 86_400));
            let status = match n % 20 {
                0 => "SHELVED_OFFLOADED",
                1 => "DELETED",
                _ => "ACTIVE",
            };
            s["id"] = json!(id);
            s["name"] = json!(format!("vm-{n}"));
            s["status"] = json!(status);
            s["OS-EXT-STS:vm_state"] = json!(status.to_ascii_lowercase());
            s["tenant_id"] = json!(project_id(n));
            s["user_id"] = json!(uuid(4, n % 3_000).replace('-', ""));
            s["created"] = json!(created.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
            let updated = created + chrono::Duration::hours(1 + (n % 300) as i64);
            s["updated"] = json!(updated.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
            s["OS-SRV-USG:launched_at"] =
                json!(created.format("%Y-%m-%dT%H:%M:%S.000000").to_string());
            if status == "DELETED" {
                s["OS-SRV-USG:terminated_at"] =
                    json!(updated.format("%Y-%m-%dT%H:%M:%S.000000").to_string());
            }
            let host = format!("gpu-{:03}", n % (V100_HOSTS + A100_HOSTS));
            s["OS-EXT-SRV-ATTR:host"] = json!(host);
            s["OS-EXT-SRV-ATTR:hypervisor_hostname"] = json!(host);
            s["OS-EXT-SRV-ATTR:instance_name"] = json!(format!("instance-{n:08x}"));
            s["OS-EXT-SRV-ATTR:hostname"] = json!(format!("vm-{n}"));
            s["flavor"] = json!({"vcpus": flavor["vcpus"], "ram": flavor["ram"], "disk": flavor["disk"],
                "ephemeral": 0, "swap": 0, "original_name": flavor["name"],
                "extra_specs": flavor["extra_specs"]});
            s["links"][0]["href"] = json!(format!("http://127.0.0.1:8774/v2.1/servers/{id}"));
            s["links"][1]["href"] = json!(format!("http://127.0.0.1:8774/servers/{id}"));
            if status == "ACTIVE" {
                let specs = &flavor["extra_specs"];
                if specs.get("resources:VGPU").is_some() {
                    used_vgpu += 1;
                } else if let Some(alias) = specs["pci_passthrough:alias"].as_str() {
                    used_v100 += alias.split(':').nth(1).unwrap().parse::<u64>().unwrap();
                } else if let Some(count) = specs["resources:CUSTOM_PCI_10DE_1DB4"].as_str() {
                    used_v100 += count.parse::<u64>().unwrap();
                }
            }
            s
        })
        .collect();

    // Placement: usages spread the used GPUs over the providers, capped at their inventory.
    let rp_template =
        fixture("placement-resource_providers-1.39.json")["resource_providers"][0].clone();
    let root_inventory = fixture("placement-rp-gpu-v100-01-inventories.json");
    let pci_inventory = fixture("placement-rp-gpu-v100-01_0000-3B-00.0-inventories.json");
    let vgpu_inventory = fixture("placement-rp-gpu-a100-01_pci_0000_81_00_0-inventories.json");
    let vgpu_traits = fixture("placement-rp-gpu-a100-01_pci_0000_81_00_0-traits.json");
    let provider = |uuid: &str, name: &str, root: &str, parent: Option<&str>| {
        let mut rp = rp_template.clone();
        rp["uuid"] = json!(uuid);
        rp["name"] = json!(name);
        rp["parent_provider_uuid"] = json!(parent);
        rp["root_provider_uuid"] = json!(root);
        for link in rp["links"].as_array_mut().unwrap() {
            let href = link["href"].as_str().unwrap().to_owned();
            let tail = href
                .rsplit_once(rp_template["uuid"].as_str().unwrap())
                .unwrap()
                .1;
            link["href"] = json!(format!("/resource_providers/{uuid}{tail}"));
        }
        rp
    };
    let mut list = Vec::new();
    let mut docs = Vec::new();
    let (mut v100_left, mut vgpu_left) = (used_v100.min(1_600), used_vgpu.min(3_200));
    for host in 0..V100_HOSTS + A100_HOSTS {
        let root = uuid(5, host);
        let host_name = format!("gpu-{host:03}");
        list.push(provider(&root, &host_name, &root, None));
        docs.push((serde_json::to_vec(&root_inventory).unwrap(), None, None));
        for gpu in 0..GPUS_PER_HOST {
            let child = uuid(6, host * GPUS_PER_HOST + gpu);
            let a100 = host >= V100_HOSTS;
            let name = if a100 {
                format!("{host_name}_pci_0000_{:02x}_00_0", 0x81 + gpu)
            } else {
                format!("{host_name}_0000:{:02X}:00.0", 0x3B + gpu)
            };
            list.push(provider(&child, &name, &root, Some(&root)));
            let (class, inventory, used) = if a100 {
                let used = vgpu_left.min(VGPUS_PER_GPU);
                vgpu_left -= used;
                ("VGPU", &vgpu_inventory, used)
            } else {
                let used = v100_left.min(1);
                v100_left -= used;
                ("CUSTOM_PCI_10DE_1DB4", &pci_inventory, used)
            };
            let usages = json!({"resource_provider_generation": 6, "usages": {class: used}});
            docs.push((
                serde_json::to_vec(inventory).unwrap(),
                Some(serde_json::to_vec(&usages).unwrap()),
                a100.then(|| serde_json::to_vec(&vgpu_traits).unwrap()),
            ));
        }
    }
    let provider_list = serde_json::to_vec(&json!({"resource_providers": list})).unwrap();
    let quotas = (0..PROJECTS)
        .map(|n| {
            let id = project_id(n);
            let doc = json!({"limits": {"rate": [], "absolute": {
                "maxTotalInstances": 4000, "maxTotalCores": 2048, "maxTotalRAMSize": 16_384_000,
                "maxServerMeta": 128, "maxImageMeta": 128, "maxPersonality": 5,
                "maxPersonalitySize": 10240, "maxTotalKeypairs": 100, "maxServerGroups": 10,
                "maxServerGroupMembers": 10, "maxTotalFloatingIps": -1, "maxSecurityGroups": -1,
                "maxSecurityGroupRules": -1, "totalRAMUsed": 81_920, "totalCoresUsed": 40,
                "totalInstancesUsed": 20, "totalFloatingIpsUsed": 0,
                "totalSecurityGroupsUsed": 0, "totalServerGroupsUsed": 0}}});
            (id, serde_json::to_vec(&doc).unwrap())
        })
        .collect();
    let images: Vec<Value> = (0..40)
        .map(|n| {
            json!({"id": uuid(7, n), "name": format!("ubuntu-22.04-cuda-12.{}", n % 5),
            "status": "active", "visibility": if n % 4 == 0 { "private" } else { "public" },
            "owner": project_id(n), "os_distro": "ubuntu", "os_version": "22.04",
            "architecture": "x86_64", "gpu_driver_version": "535.104.05",
            "cuda_version": format!("12.{}", n % 5), "container_format": "bare",
            "disk_format": "qcow2", "min_disk": 0, "min_ram": 0, "protected": false,
            "tags": [], "size": 2_143_027_200u64, "created_at": "2026-10-01T00:00:00Z",
            "updated_at": "2026-10-01T00:00:00Z", "schema": "/v2/schemas/image"})
        })
        .collect();
    Responses {
        flavor_pages: paginate("flavors", &flavors),
        server_pages: paginate("servers", &server_values),
        projects: projects_doc,
        provider_list,
        provider_docs: docs,
        flavor_access,
        quotas,
        images: serde_json::to_vec(&json!({"images": images, "first": "/v2/images?limit=1000",
            "schema": "/v2/schemas/images"}))
        .unwrap(),
    }
}
