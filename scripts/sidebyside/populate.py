"""The side-by-side cloud's content: VO projects sbs-vo01..sbs-voNN (project property VO=voNN, as
cASO reads it), GPU flavors of every convention accelfed knows (EGI `Accelerator:*` keys, the older
`gpu_*` keys, a PCI alias, vGPU resources with a trait, a custom PCI resource class), and in every
project servers of each, plus one GPU server that ran and was deleted. Prints one JSON document:
the projects and their ids, the flavors (GPUs, convention), every server made (id: name, flavor,
deleted).

usage: populate.py PASSWORD VO_COUNT"""
import concurrent.futures
import json
import os
import sys

import openstack

PORT = int(os.environ.get("ACCELFED_OS_PORT", "25000"))
PASSWORD = sys.argv[1]
COUNT = int(sys.argv[2])


def conn(project="admin"):
    return openstack.connect(
        auth_url=f"http://127.0.0.1:{PORT}/v3", username="admin", password=PASSWORD,
        project_name=project, user_domain_name="Default", project_domain_name="Default",
        region_name="RegionOne", compute_api_version="2.93", api_timeout=60)


def egi(model, number, memory):
    return {"Accelerator:Type": "GPU", "Accelerator:Vendor": "NVIDIA",
            "Accelerator:Model": model, "Accelerator:Number": str(number),
            "Accelerator:Memory": str(memory)}


A100_4C = {"resources:VGPU": "1", "trait:CUSTOM_NVIDIA_A100_4C": "required"}
FLAVORS = [  # name, vcpus, public, extra specs, GPUs per instance, convention
    ("m1.small", 1, True, {}, 0, None),
    ("egi.v100x2", 8, True, dict(egi("Tesla V100-PCIE-16GB", 2, 16),
                                 **{"pci_passthrough:alias": "nvidia-v100:2"}), 2, "egi"),
    ("egi.a100-4c", 4, True, dict(egi("A100-SXM4-40GB", 1, 4), **A100_4C), 1, "egi"),
    ("g1.v100x1", 4, True, {"pci_passthrough:alias": "nvidia-v100:1"}, 1, "pci-alias"),
    ("vg1.a100-4c", 4, True, A100_4C, 1, "vgpu"),
    ("vg2.a100-4c", 8, False, {"resources:VGPU": "2",
                               "trait:CUSTOM_NVIDIA_A100_4C": "required"}, 2, "vgpu"),
    ("rc.v100x1", 4, True, {"resources:CUSTOM_PCI_10DE_1DB4": "1"}, 1, "resource-class"),
    ("legacy.t4", 4, True, {"gpu_number": "1", "gpu_vendor": "NVIDIA",
                            "gpu_model": "Tesla T4"}, 1, "legacy"),
]
GPUS = {f[0]: f[4] for f in FLAVORS}


def servers_of(i):
    """Servers of project i (1-based): a server of each public GPU flavor but rc.v100x1, a CPU-only
    one, and the private vGPU flavor in odd projects (the only ones given access to it).
    rc.v100x1 is published, not booted: Zed's Nova claims PCI devices through aliases only, so a
    bare Placement request for the class would not be a device of the PCI tracker."""
    names = ["egi.v100x2", "egi.a100-4c", "vg1.a100-4c", "legacy.t4", "m1.small", "g1.v100x1"]
    if i % 2 == 1:
        names.append("vg2.a100-4c")
    return names


def main():
    admin = conn()
    idn = admin.identity
    admin_user = idn.find_user("admin", domain_id="default")
    admin_role = idn.find_role("admin")
    projects = {}
    for i in range(1, COUNT + 1):
        name = f"sbs-vo{i:02d}"
        p = (idn.find_project(name, domain_id="default")
             or idn.create_project(name=name, domain_id="default", VO=f"vo{i:02d}"))
        idn.assign_project_role_to_user(p, admin_user, admin_role)
        projects[name] = p.id
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "accelfed-sbs-fake.img")
    with open(path, "wb") as f:
        f.write(b"\0" * 65536)
    image = admin.image.find_image("cirros-fake") or admin.image.create_image(
        name="cirros-fake", filename=path, disk_format="raw", container_format="bare",
        visibility="public", cuda_version="12.2", gpu_driver_version="535.104.05")
    os.unlink(path)
    flavors = {}
    for name, vcpus, public, specs, _, _ in FLAVORS:
        flavor = admin.compute.find_flavor(name, ignore_missing=True, is_public=None)
        if not flavor:
            flavor = admin.compute.create_flavor(name=name, vcpus=vcpus, ram=1024, disk=1,
                                                 is_public=public)
            if specs:
                admin.compute.create_flavor_extra_specs(flavor, specs)
            if not public:
                for i, pid in enumerate(projects.values(), 1):
                    if i % 2 == 1:
                        admin.compute.flavor_add_tenant_access(flavor, pid)
        flavors[name] = flavor

    def boot(args):
        # On 2 busy cores the API services now and then drop a request or a build fails (an RPC
        # timing out): a timeout, and up to three tries, a failed server deleted first (find_server
        # first, so a server is never made twice).
        project, name, flavor = args
        for attempt in range(3):
            try:
                c = conn(project)
                server = c.compute.find_server(name) or c.compute.create_server(
                    name=name, image_id=image.id, flavor_id=flavors[flavor].id,
                    networks="none")
                return c, c.compute.wait_for_server(server, status="ACTIVE",
                                                    failures=["ERROR"], interval=2, wait=900)
            except openstack.exceptions.SDKException as err:
                if attempt == 2:
                    raise
                if isinstance(err, openstack.exceptions.ResourceFailure):
                    failed = c.compute.get_server(server)
                    # `fault` is an attribute only of newer openstacksdk releases (not Debian 12's).
                    why = getattr(failed, "fault", None) or failed.status
                    print(f"populate.py: {name} failed: {why}; again", file=sys.stderr)
                    c.compute.delete_server(failed)
                    c.compute.wait_for_delete(failed, interval=2, wait=300)
                else:
                    print(f"populate.py: {name}: {err}; again", file=sys.stderr)

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        # first a GPU server per project that ran and is gone (a closed accounting interval);
        # its V100s are free again before the others start. Not again in a project that has
        # its servers already (populate.py run twice).
        there = {s.name for s in admin.compute.servers(all_projects=True)}
        done = [(p, f"{p}-done", "egi.v100x2") for p in projects
                if f"{p}-egi.v100x2" not in there]
        for c, server in pool.map(boot, done):
            c.compute.delete_server(server)
            c.compute.wait_for_delete(server, interval=2, wait=300)
        wanted = [(p, f"{p}-{f}", f) for i, p in enumerate(projects, 1) for f in servers_of(i)]
        list(pool.map(boot, wanted))

    # what is there, as the API lists it (deleted servers are listed to admins on request)
    servers = {}
    for deleted in (False, True):
        for s in admin.compute.servers(all_projects=True, deleted=deleted):
            if s.project_id in projects.values() and (s.status == "DELETED") == deleted:
                servers[s.id] = {"name": s.name, "flavor": s.flavor.name, "deleted": deleted}

    conventions = {}
    for _, _, _, _, gpus, convention in FLAVORS:
        if convention:
            conventions[convention] = conventions.get(convention, 0) + 1
    print(json.dumps({"projects": projects, "gpu_flavors": conventions, "gpus": GPUS,
                      "conventions": {f[0]: f[5] for f in FLAVORS}, "servers": servers}))


main()
