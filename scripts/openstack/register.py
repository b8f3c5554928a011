"""Keystone registration for cloud.sh (idempotent): service users and the catalog. With
--count-providers it prints how many Placement resource providers exist (the readiness check)."""
import json
import os
import sys
import urllib.request

import openstack

PORT = int(os.environ.get("ACCELFED_OS_PORT", "25000"))
PASSWORD = sys.argv[1]
conn = openstack.connect(
    auth_url=f"http://127.0.0.1:{PORT}/v3", username="admin", password=PASSWORD,
    project_name="admin", user_domain_name="Default", project_domain_name="Default",
    region_name="RegionOne")

if "--count-providers" in sys.argv:
    request = urllib.request.Request(
        f"http://127.0.0.1:{PORT + 1}/resource_providers",
        headers={"X-Auth-Token": conn.auth_token})
    with urllib.request.urlopen(request, timeout=10) as response:
        print(len(json.load(response)["resource_providers"]))
    sys.exit(0)

idn = conn.identity
service_project = (idn.find_project("service", domain_id="default")
                   or idn.create_project(name="service", domain_id="default"))
admin_role = idn.find_role("admin")
SERVICES = [  # user, service type, port, path
    ("placement", "placement", PORT + 1, ""),
    ("nova", "compute", PORT + 2, "/v2.1"),
    ("glance", "image", PORT + 3, ""),
    ("neutron", "network", PORT + 4, ""),
]
for user, kind, port, path in SERVICES:
    account = (idn.find_user(user, domain_id="default")
               or idn.create_user(name=user, password=PASSWORD, domain_id="default"))
    idn.assign_project_role_to_user(service_project, account, admin_role)
    if not list(idn.services(type=kind)):
        service = idn.create_service(name=user, type=kind)
        for interface in ("public", "internal", "admin"):
            idn.create_endpoint(service_id=service.id, interface=interface,
                                url=f"http://127.0.0.1:{port}{path}", region_id="RegionOne")
