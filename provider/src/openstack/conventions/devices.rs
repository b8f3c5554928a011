//! The conventions that name GPUs through the configured devices: PCI aliases, vGPU and custom
//! resource classes (placement traits). Each resolves a flavor's names against `[[openstack.devices]]`.

use super::*;

/// `pci_passthrough:alias = alias:count[,alias:count]`, aliases described in the configuration.
/// Aliases described as `type = "Other"` (a NIC, say) are not accelerators and are left out:
/// `a100:1,nic-sriov:1` is one A100, and a flavor with only such aliases does not use this
/// convention. Aliases the configuration does not list are left out too; a flavor whose aliases
/// are all unknown is reported (it may be a GPU the site forgot to describe), not counted.
pub fn pci_alias(specs: &Specs, devices: &Devices) -> Read {
    let value = specs.get("pci_passthrough:alias")?;
    (|| -> Result<Option<FlavorGpu>, String> {
        let mut found: Option<FlavorGpu> = None;
        let mut unknown = Vec::new();
        let mut others = 0usize;
        for item in value.split(',') {
            let (alias, number) = item.split_once(':').ok_or_else(|| {
                format!("pci_passthrough:alias={value:?}: {item:?} is not alias:count")
            })?;
            let number: u32 = number.trim().parse().map_err(|_| {
                format!("pci_passthrough:alias={value:?}: count {number:?} is not a whole number")
            })?;
            let alias = alias.trim();
            let Some(device) = devices.pci_alias.get(alias) else {
                unknown.push(alias.to_owned());
                continue;
            };
            if !is_accelerator(device) {
                others += 1;
                continue;
            }
            let spec = from_device(device, Virtualization::Passthrough);
            match &mut found {
                None => {
                    let mut first = gpu(spec, GpuCount::whole(number), Convention::PciAlias);
                    first.resource_class = device.pci_class();
                    found = Some(first);
                }
                Some(first) if first.spec == spec => {
                    first.count = first.count + GpuCount::whole(number);
                }
                Some(_) => {
                    return Err(format!(
                        "pci_passthrough:alias={value:?} names GPUs of two models; one instance type carries one"
                    ));
                }
            }
        }
        match found {
            Some(found) => Ok(Some(found)),
            // Only devices the site says are not accelerators: not a GPU flavor, nothing to say.
            None if unknown.is_empty() && others > 0 => Ok(None),
            None => Err(format!(
                "pci_passthrough:alias={value:?}: alias {} not described under [openstack.pci_alias]",
                unknown.join(", ")
            )),
        }
    })()
    .transpose()
}

/// `resources[N]:CLASS = amount` pairs: the request group suffix, the class and the amount.
pub(super) fn resources(specs: &Specs) -> impl Iterator<Item = (&str, &str, &str)> {
    specs.iter().filter_map(|(key, value)| {
        let rest = key.strip_prefix("resources")?;
        let (group, class) = rest.split_once(':')?;
        Some((group, class, value.as_str()))
    })
}

/// `resources[N]:VGPU`, the type from a required `trait[N]:CUSTOM_*` of the same group.
pub fn vgpu(specs: &Specs, devices: &Devices) -> Read {
    let groups: Vec<(&str, &str)> = resources(specs)
        .filter(|(_, class, _)| *class == "VGPU")
        .map(|(group, _, amount)| (group, amount))
        .collect();
    if groups.is_empty() {
        return None;
    }
    Some((|| {
        let mut total = 0u32;
        let mut traits = Vec::new();
        for (group, amount) in &groups {
            total += amount
                .trim()
                .parse::<u32>()
                .map_err(|_| format!("resources{group}:VGPU={amount:?} is not a whole number"))?;
            let prefix = format!("trait{group}:CUSTOM_");
            traits.extend(
                specs
                    .iter()
                    .filter(|(key, value)| key.starts_with(&prefix) && *value == "required")
                    .map(|(key, _)| key[prefix.len() - "CUSTOM_".len()..].to_owned()),
            );
        }
        let spec = vgpu_spec(&traits, devices)?;
        let mut found = gpu(spec, GpuCount::whole(total), Convention::Vgpu);
        found.resource_class = Some("VGPU".to_owned());
        found.spec.sharing = vgpu_sharing(&traits, devices);
        Ok(found)
    })())
}

/// The vGPU type a flavor's required traits name (the configured one, else its first `CUSTOM_*`
/// trait, else `VGPU` for a flavor that names none) with the instances per physical GPU the
/// configuration gives for it (`per_gpu`; 0 when it does not: Placement may still say).
pub fn vgpu_sharing(traits: &[String], devices: &Devices) -> Sharing {
    let configured = traits
        .iter()
        .find_map(|t| devices.vgpu_type.get_key_value(t))
        .or_else(|| devices.vgpu_type.get_key_value("default"));
    let name = match configured {
        Some((name, _)) if name != "default" => name.as_str(),
        _ => traits
            .iter()
            .find(|t| t.starts_with("CUSTOM_"))
            .map_or("VGPU", String::as_str),
    };
    Sharing::Vgpu {
        vgpu_type: Text::new(name).unwrap_or_else(|_| Text::literal("VGPU")),
        per_gpu: configured.and_then(|(_, d)| d.per_gpu).unwrap_or(0),
    }
}

/// The vGPU type behind a set of `CUSTOM_*` traits (a flavor's required ones, or a VGPU resource
/// provider's): configured under `[openstack.vgpu_type]`, its `default`, or named after the trait.
pub fn vgpu_spec(traits: &[String], devices: &Devices) -> Result<GpuSpec, String> {
    let known = traits.iter().find_map(|t| devices.vgpu_type.get(t));
    if let Some(device) = known.or_else(|| devices.vgpu_type.get("default")) {
        return Ok(from_device(device, Virtualization::Vgpu));
    }
    let name = traits
        .iter()
        .find(|t| t.starts_with("CUSTOM_"))
        .map_or("VGPU", |t| t.trim_start_matches("CUSTOM_"));
    let vendor = ["NVIDIA", "AMD", "INTEL"]
        .into_iter()
        .find(|v| name.to_ascii_uppercase().contains(v))
        .unwrap_or("unknown");
    let mut spec = GpuSpec::new(text(vendor, "vendor")?, model(name, "trait")?);
    spec.virtualization = Virtualization::Vgpu;
    Ok(spec)
}

/// `resources[N]:CUSTOM_PCI_<VENDOR>_<PRODUCT>` (Nova's PCI-in-Placement classes) of GPU vendors
/// (NVIDIA, AMD) and classes described under `[openstack.resource_class]` (or as a PCI alias's
/// class) that are not `type = "Other"`. Other vendors' classes count only when described.
pub fn resource_class(specs: &Specs, devices: &Devices) -> Read {
    // Only accelerator classes: a NIC's `CUSTOM_PCI_15B3_*` beside the GPU's class neither makes
    // the flavor a GPU flavor nor hides the GPU.
    let (group, class, amount) =
        resources(specs).find(|(_, class, _)| *class != "VGPU" && devices.is_gpu_class(class))?;
    Some((|| {
        let number: u32 = amount
            .trim()
            .parse()
            .map_err(|_| format!("resources{group}:{class}={amount:?} is not a whole number"))?;
        let spec = class_spec(class, devices)?;
        let mut found = gpu(spec, GpuCount::whole(number), Convention::ResourceClass);
        found.resource_class = Some(class.to_owned());
        Ok(found)
    })())
}

/// The GPU behind a Placement resource class: configured, or named from its PCI ids.
pub fn class_spec(class: &str, devices: &Devices) -> Result<GpuSpec, String> {
    if let Some(device) = devices.resource_class.get(class) {
        return Ok(from_device(device, Virtualization::Passthrough));
    }
    let alias = devices
        .pci_alias
        .values()
        .find(|device| device.pci_class().as_deref() == Some(class));
    if let Some(device) = alias {
        return Ok(from_device(device, Virtualization::Passthrough));
    }
    let (vendor, product) = pci_ids::split_class(class).ok_or_else(|| {
        format!("resource class {class} is not described under [openstack.resource_class]")
    })?;
    // The one PCI table (schemas::gpu::PciId, sources there): canonical model names, memory from
    // the model catalogue. Unknown ids keep a name made of the ids, so they are still counted.
    let id = PciId::from_hex(&vendor, &product);
    let vendor_name = id
        .and_then(PciId::vendor_name)
        .map_or_else(|| vendor.clone(), str::to_owned);
    let known = id.and_then(PciId::model);
    let name = known.map_or_else(|| format!("PCI {vendor}:{product}"), str::to_owned);
    let memory = known
        .and_then(catalog::by_name)
        .map(|entry| u64::from(entry.memory_gb) * 1000);
    let mut spec = GpuSpec::new(text(&vendor_name, "vendor")?, model(&name, "model")?);
    spec.memory = memory.map(MemoryMb::new);
    spec.virtualization = Virtualization::Passthrough;
    Ok(spec)
}
