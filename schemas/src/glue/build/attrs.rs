//! The attributes of one entity, and the names of each capacity family.

use super::*;

/// Collects attributes, leaving out the absent ones.
pub(super) struct Attrs<'a>(pub(super) Vec<(&'static str, Value<'a>)>);

impl Default for Attrs<'_> {
    fn default() -> Self {
        // Room for the largest class (a manager accelerator has 19), so it never grows.
        Self(Vec::with_capacity(20))
    }
}

impl<'a> Attrs<'a> {
    pub(super) fn text<T: AsRef<str> + ?Sized>(mut self, key: &'static str, value: &'a T) -> Self {
        self.0
            .push((key, Value::Text(Cow::Borrowed(value.as_ref()))));
        self
    }
    pub(super) fn opt_text(self, key: &'static str, value: Option<&'a Text>) -> Self {
        match value {
            Some(value) => self.text(key, value),
            None => self,
        }
    }
    pub(super) fn int(mut self, key: &'static str, value: impl Into<u64>) -> Self {
        self.0.push((key, Value::Int(value.into())));
        self
    }
    pub(super) fn opt_int(self, key: &'static str, value: Option<impl Into<u64>>) -> Self {
        match value {
            Some(value) => self.int(key, value),
            None => self,
        }
    }
    pub(super) fn value(mut self, key: &'static str, value: Value<'a>) -> Self {
        self.0.push((key, value));
        self
    }
    pub(super) fn list(mut self, key: &'static str, values: &[Text]) -> Self {
        if !values.is_empty() {
            self.0.push((
                key,
                Value::List(values.iter().map(|v| v.as_str().to_owned()).collect()),
            ));
        }
        self
    }
    /// The attributes every accelerator class shares: what the device is.
    pub(super) fn gpu(self, gpu: &'a GpuSpec) -> Self {
        self.text("Type", gpu.kind.as_str())
            .text("Vendor", &gpu.vendor)
            .text("Model", &gpu.model)
            .opt_int("Memory", gpu.memory.map(|m| m.get()))
            .opt_text("ComputeCapability", gpu.compute_capability.as_ref())
            .opt_int("ClockSpeed", gpu.clock_speed_mhz)
            .text("VirtualizationType", gpu.virtualization.as_str())
            .opt_text("MIGProfile", gpu.mig_profile.as_ref())
            .opt_text("DriverVersion", gpu.driver_version.as_ref())
            .opt_text("CUDAVersion", gpu.cuda_version.as_ref())
            .slot_share(gpu)
    }
    /// What one slot (or one device of a flavor) is of a physical GPU, where it is not a whole one.
    pub(super) fn slot_share(self, gpu: &GpuSpec) -> Self {
        match share_text(&gpu.sharing) {
            Some(share) => self.value("SlotShare", Value::Text(Cow::Owned(share))),
            None => self,
        }
    }
    /// The attributes of a service of either family.
    pub(super) fn service(
        family: &Family,
        name: Option<&'a Text>,
        quality_level: &'a Text,
        capabilities: &[Text],
    ) -> Self {
        Self::default()
            .opt_text("Name", name)
            .text("Type", family.service_type)
            .text("QualityLevel", quality_level)
            .list("Capability", capabilities)
    }
    /// Capacity under the names a class family uses (`AcceleratorSlots` in batch, `Accelerators` in
    /// clouds).
    pub(super) fn capacity(self, names: [&'static str; 3], capacity: &Capacity) -> Self {
        self.value(names[0], Value::Count(capacity.total))
            .value(names[1], Value::Count(capacity.used))
            .value(names[2], Value::Count(capacity.free))
    }
}

pub(super) const BATCH_CAPACITY: [&str; 3] = [
    "TotalAcceleratorSlots",
    "UsedAcceleratorSlots",
    "FreeAcceleratorSlots",
];
pub(super) const CLOUD_CAPACITY: [&str; 3] =
    ["TotalAccelerators", "UsedAccelerators", "FreeAccelerators"];
/// The same capacity in physical GPUs, beside the slots, in every family.
pub(super) const PHYSICAL_CAPACITY: [&str; 3] = [
    "TotalPhysicalAccelerators",
    "UsedPhysicalAccelerators",
    "FreePhysicalAccelerators",
];

/// What differs between the two service families where their entities are otherwise alike (the
/// service, its endpoints, its manager, the manager's and the shares' accelerators).
pub(super) struct Family {
    pub(super) service: Class,
    pub(super) service_type: &'static str,
    pub(super) endpoint: Class,
    pub(super) manager: Class,
    pub(super) manager_accelerator: Class,
    pub(super) share_accelerator: Class,
    pub(super) capacity: [&'static str; 3],
}

pub(super) const BATCH: Family = Family {
    service: Class::ComputingService,
    service_type: "org.ogf.glue.computing.batch",
    endpoint: Class::ComputingEndpoint,
    manager: Class::ComputingManager,
    manager_accelerator: Class::ComputingManagerAccelerator,
    share_accelerator: Class::ComputingShareAccelerator,
    capacity: BATCH_CAPACITY,
};

pub(super) const CLOUD: Family = Family {
    service: Class::CloudComputingService,
    service_type: "org.cloud.iaas",
    endpoint: Class::CloudComputingEndpoint,
    manager: Class::CloudComputingManager,
    manager_accelerator: Class::CloudComputingManagerAccelerator,
    share_accelerator: Class::CloudComputingShareAccelerator,
    capacity: CLOUD_CAPACITY,
};

pub(super) fn sorted(map: &BTreeMap<String, String>) -> Vec<(String, String)> {
    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}
