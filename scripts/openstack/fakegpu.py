"""A fake nova virt driver with GPUs, for tests: nova.virt.fake.FakeDriver plus
- FAKEGPU_PCI passthrough devices 10de:1db4 (V100), which Nova (with [pci] report_in_placement)
  turns into child resource providers with CUSTOM_PCI_10DE_1DB4 inventory;
- FAKEGPU_PGPUS child providers named <node>_pci_0000_XX_00_0 holding FAKEGPU_VGPUS_PER_PGPU
  units of VGPU and the trait CUSTOM_NVIDIA_A100_4C, as libvirt's mdev support reports them."""
import os

from oslo_serialization import jsonutils

from nova.virt import fake


def _int(name, default):
    return int(os.environ.get(name, default))


class FakeGPUDriver(fake.FakeDriver):
    vcpus = _int("FAKE_VCPUS", 64)
    memory_mb = _int("FAKE_MEMORY_MB", 524288)
    local_gb = _int("FAKE_DISK_GB", 2000)

    def get_available_resource(self, nodename):
        resources = super().get_available_resource(nodename)
        devices = [{
            "address": "0000:%02x:00.0" % (0x3b + n), "vendor_id": "10de", "product_id": "1db4",
            "dev_type": "type-PCI", "status": "available", "parent_addr": None,
            "numa_node": None, "label": "label_10de_1db4",
        } for n in range(_int("FAKEGPU_PCI", 0))]
        resources["pci_passthrough_devices"] = jsonutils.dumps(devices)
        return resources

    def get_host_uptime(self):
        return " 10:00:00 up 1 day,  1:00,  0 users,  load average: 0.00, 0.00, 0.00"

    def update_provider_tree(self, provider_tree, nodename, allocations=None):
        super().update_provider_tree(provider_tree, nodename, allocations=allocations)
        per_gpu = _int("FAKEGPU_VGPUS_PER_PGPU", 8)
        for n in range(_int("FAKEGPU_PGPUS", 0)):
            name = "%s_pci_0000_%02x_00_0" % (nodename, 0x81 + n)
            if not provider_tree.exists(name):
                provider_tree.new_child(name=name, parent=nodename)
            provider_tree.update_inventory(name, {"VGPU": {
                "total": per_gpu, "reserved": 0, "min_unit": 1, "max_unit": per_gpu,
                "step_size": 1, "allocation_ratio": 1.0}})
            provider_tree.update_traits(name, ["CUSTOM_NVIDIA_A100_4C"])
