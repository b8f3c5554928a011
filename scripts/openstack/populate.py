"""Test content for the cloud cloud.sh started: two VO projects (vo-atlas carries the project
property VO=atlas; vo-cms has none and is mapped by accelfed's config), GPU flavors of several
conventions, servers, and Placement's own totals. Prints one JSON document on stdout.

usage: populate.py PASSWORD             create everything, wait for ACTIVE, print the state
       populate.py PASSWORD delete NAME delete server NAME and wait until it is gone, print the state
       populate.py PASSWORD stop NAME   stop server NAME and wait until it is SHUTOFF, print the state
       populate.py PASSWORD start NAME  start server NAME and wait until it is ACTIVE, print the state"""
import json
import os
import sys
import time
import urllib.request

import openstack

PORT = int(os.environ.get("ACCELFED_OS_PORT", "25000"))
PASSWORD = sys.argv[1]


def conn(user="admin", project="admin"):
    return openstack.connect(
        auth_url=f"http://127.0.0.1:{PORT}/v3", username=user, password=PASSWORD,
        project_name=project, user_domain_name="Default", project_domain_name="Default",
        region_name="RegionOne", compute_api_version="2.93")


admin = conn()
idn = admin.identity
EGI_V100 = {"Accelerator:Type": "GPU", "Accelerator:Vendor": "NVIDIA",
            "Accelerator:Model": "Tesla V100-PCIE-16GB", "Accelerator:Memory": "16"}
FLAVORS = [  # name, vcpus, public, extra specs, GPUs per instance
    ("m1.small", 1, True, {}, 0),
    ("g1.v100x2", 8, True, dict(EGI_V100, **{"Accelerator:Number": "2",
                                              "pci_passthrough:alias": "nvidia-v100:2"}), 2),
    ("g1.v100x1", 4, True, {"pci_passthrough:alias": "nvidia-v100:1"}, 1),
    ("vg1.a100-4c", 4, True, {"resources:VGPU": "1", "trait:CUSTOM_NVIDIA_A100_4C": "required"}, 1),
    ("vg2.a100-4c", 8, False, {"resources:VGPU": "2", "trait:CUSTOM_NVIDIA_A100_4C": "required"}, 2),
    ("legacy.t4", 4, True, {"gpu_number": "1", "gpu_vendor": "NVIDIA", "gpu_model": "Tesla T4"}, 1),
]
SERVERS = [  # project, name, flavor
    ("vo-atlas", "atlas-v100", "g1.v100x2"),
    ("vo-atlas", "atlas-vgpu", "vg2.a100-4c"),
    ("vo-atlas", "atlas-cpu", "m1.small"),
    ("vo-cms", "cms-v100", "g1.v100x1"),
    ("vo-cms", "cms-vgpu", "vg1.a100-4c"),
]


# Nova's instances quota of each VO project, which accelfed publishes as the share's MaxVM.
QUOTA_INSTANCES = {"vo-atlas": 12, "vo-cms": 7}


def project(name, **extra):
    found = idn.find_project(name, domain_id="default")
    return found or idn.create_project(name=name, domain_id="default", **extra)


def setup():
    projects = {"vo-atlas": project("vo-atlas", VO="atlas"), "vo-cms": project("vo-cms")}
    for name, instances in QUOTA_INSTANCES.items():
        admin.set_compute_quotas(projects[name].id, instances=instances)
    member, admin_role = idn.find_role("member"), idn.find_role("admin")
    for name, p in projects.items():
        user = (idn.find_user(name + "-user", domain_id="default")
                or idn.create_user(name=name + "-user", password=PASSWORD, domain_id="default"))
        idn.assign_project_role_to_user(p, user, member)
        idn.assign_project_role_to_user(p, idn.find_user("admin", domain_id="default"), admin_role)
    image = admin.image.find_image("cirros-fake")
    if not image:
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "accelfed-fake.img")
        with open(path, "wb") as f:
            f.write(b"\0" * 65536)
        image = admin.image.create_image(
            name="cirros-fake", filename=path, disk_format="raw", container_format="bare",
            visibility="public", cuda_version="12.2", gpu_driver_version="535.104.05")
    flavors = {}
    for name, vcpus, public, specs, _ in FLAVORS:
        flavor = admin.compute.find_flavor(name, ignore_missing=True, is_public=None)
        if not flavor:
            flavor = admin.compute.create_flavor(name=name, vcpus=vcpus, ram=1024, disk=1,
                                                 is_public=public)
            if specs:
                admin.compute.create_flavor_extra_specs(flavor, specs)
            if not public:
                admin.compute.flavor_add_tenant_access(flavor, projects["vo-atlas"].id)
        flavors[name] = flavor
    made = []
    for proj, name, flavor in SERVERS:
        c = conn(proj + "-user", proj)
        server = c.compute.find_server(name)
        if not server:
            server = c.compute.create_server(name=name, image_id=image.id,
                                             flavor_id=flavors[flavor].id, networks="none")
        made.append((c, server))
    for c, server in made:
        c.compute.wait_for_server(server, status="ACTIVE", failures=["ERROR"], interval=1, wait=300)


def placement_truth():
    token = admin.auth_token
    def get(path):
        request = urllib.request.Request(
            f"http://127.0.0.1:{PORT + 1}{path}",
            headers={"X-Auth-Token": token, "OpenStack-API-Version": "placement 1.39"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)
    truth = {}
    for rp in get("/resource_providers")["resource_providers"]:
        inventories = get(f"/resource_providers/{rp['uuid']}/inventories")["inventories"]
        usages = get(f"/resource_providers/{rp['uuid']}/usages")["usages"]
        for rc, inv in inventories.items():
            if rc == "VGPU" or rc.startswith("CUSTOM_PCI_"):
                t = truth.setdefault(rc, {"total": 0, "used": 0, "reserved": 0})
                t["total"] += inv["total"]
                t["reserved"] += inv["reserved"]
                t["used"] += usages.get(rc, 0)
    return truth


def state():
    gpus = {name: n for name, _, _, _, n in FLAVORS}
    servers = []
    for s in admin.compute.servers(all_projects=True):
        servers.append({"id": s.id, "name": s.name, "project": s.project_id,
                        "created": s.created_at, "gpus": gpus[s.flavor.name], "status": s.status})
    projects = {p.name: p.id for p in idn.projects() if p.name.startswith("vo-")}
    return {"projects": projects, "servers": servers, "placement": placement_truth()}


if len(sys.argv) > 3 and sys.argv[2] in ("delete", "stop", "start"):
    server = next(s for s in admin.compute.servers(all_projects=True) if s.name == sys.argv[3])
    if sys.argv[2] == "delete":
        admin.compute.delete_server(server)
        admin.compute.wait_for_delete(server, interval=1, wait=120)
    elif sys.argv[2] == "stop":
        admin.compute.stop_server(server)
        admin.compute.wait_for_server(server, status="SHUTOFF", failures=["ERROR"], interval=1, wait=120)
    else:
        admin.compute.start_server(server)
        admin.compute.wait_for_server(server, status="ACTIVE", failures=["ERROR"], interval=1, wait=120)
else:
    setup()
print(json.dumps(state()))
