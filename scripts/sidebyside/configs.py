"""Every tool's configuration for one side-by-side mode, all pointing at the same Keystone URL
(the cloud's own, or the latency proxy's): accelfed's site.toml and clouds.yaml, the site YAML of
cloud-info-provider, caso.conf. The VO of every project is its Keystone property VO, which accelfed
and cASO both read; cloud-info-provider has no such lookup and is given the project of each VO.

usage: configs.py DIR KEYSTONE_URL STATE_JSON PASSWORD"""
import json
import os
import sys

DIR, KEYSTONE, STATE, PASSWORD = sys.argv[1:5]
SITE = "SBS-CLOUD"
state = json.load(open(STATE))
os.makedirs(DIR, exist_ok=True)


def write(name, text):
    with open(os.path.join(DIR, name), "w") as f:
        f.write(text)


write("clouds.yaml", f"""clouds:
  sbs:
    region_name: RegionOne
    auth:
      auth_url: {KEYSTONE}
      username: admin
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
""")
write("secure.yaml", f"clouds:\n  sbs:\n    auth:\n      password: {PASSWORD}\n")

# The spool is relative to the file; each run gets a fresh one (bench.py removes it).
write("site.toml", f"""[site]
name = "{SITE}"
gocdb_id = "1G0"
validity = 3600

[[openstack]]
id = "cloud"
cloud = "sbs"
clouds_file = "{DIR}/clouds.yaml"
vo_property = "VO"

[openstack.pci_alias.nvidia-v100]
vendor = "NVIDIA"
model = "Tesla V100-PCIE-16GB"
memory = "16 GB"
vendor_id = "10de"
product_id = "1db4"

[openstack.vgpu_type.CUSTOM_NVIDIA_A100_4C]
vendor = "NVIDIA"
model = "A100-SXM4-40GB"
memory = "4 GB"

[accounting]
spool = "spool.sqlite"
""")

vos = "".join(f"  - name: {name.removeprefix('sbs-')}\n    auth:\n      project_id: {pid}\n"
              for name, pid in sorted(state["projects"].items()))
write("cip-site.yaml", f"gocdb: {SITE}\nendpoint: {KEYSTONE}\nvos:\n{vos}")

projects = ",".join(pid for _, pid in sorted(state["projects"].items()))
# extractor = nova only: cASO's cinder and neutron extractors make storage and IP records, which
# accelfed does not meter; the job compared is VM and GPU accounting.
write("caso.conf", f"""[DEFAULT]
site_name = {SITE}
service_name = {SITE}
projects = {projects}
vo_property = VO
mapping_file = {DIR}/no-voms.json
extractor = nova
messengers = ssm
spooldir = {DIR}/caso-spool

[keystone_auth]
auth_type = password
auth_url = {KEYSTONE}
username = admin
password = {PASSWORD}
user_domain_name = Default
project_domain_name = Default

[ssm]
output_path = {DIR}/caso-out
""")
