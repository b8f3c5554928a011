#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (fuzz/corpus/<target>/) from the project's examples and
recorded fixtures, each list cut to a few items so the corpora stay small. Run from anywhere;
`scripts/fuzz` runs the targets on a copy, so this folder only changes when this script runs.
The files are committed; run this again when the fixtures' formats change."""

import json
import pathlib
import shutil
import struct

FUZZ = pathlib.Path(__file__).resolve().parent
ROOT = FUZZ.parent
CORPUS = FUZZ / "corpus"
KEEP = 3  # items kept of every list


def read(path):
    return (ROOT / path).read_bytes()


def cut(value, keep=KEEP):
    """The document with every list cut to `keep` items."""
    if isinstance(value, list):
        return [cut(item, keep) for item in value[:keep]]
    if isinstance(value, dict):
        return {key: cut(item, keep) for key, item in value.items()}
    return value


def cut_json(path, keep=KEEP):
    return json.dumps(cut(json.loads(read(path)), keep), separators=(",", ":")).encode()


def write(target, name, data):
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


# --- protobuf, just enough to encode UsageRecord and SubmitRequest --------------------------
def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number, kind, value):
    if kind == "string":
        data = value.encode()
        return varint(number << 3 | 2) + varint(len(data)) + data
    if kind == "bytes":
        return varint(number << 3 | 2) + varint(len(value)) + value
    if kind == "double":
        return varint(number << 3 | 1) + struct.pack("<d", value)
    return varint(number << 3) + varint(value)  # int32, int64, uint32


RECORD_FIELDS = {
    "site": (1, "string"), "record_type": (2, "string"), "associated_record": (3, "string"),
    "model": (4, "string"), "year": (5, "int"), "month": (6, "int"),
    "accelerator_type": (7, "string"), "count": (8, "double"), "cores": (9, "int"),
    "active_duration": (10, "int"), "available_duration": (11, "int"),
    "global_user_name": (12, "string"), "fqan": (13, "string"), "vo": (14, "string"),
    "benchmark_type": (15, "string"), "benchmark": (16, "double"), "source": (17, "string"),
    "first_seen": (18, "string"), "last_seen": (19, "string"), "sharing": (20, "string"),
    "sharing_name": (21, "string"), "sharing_parts": (22, "int"), "sharing_of": (23, "int"),
    "installed": (24, "double"),
}


def proto_record(record):
    return b"".join(field(*RECORD_FIELDS[key], value) for key, value in record.items())


BASE = {
    "site": "EXAMPLE-CLOUD", "record_type": "cloud", "associated_record": "vm-0001",
    "model": "NVIDIA A100-SXM4-80GB", "year": 2026, "month": 1, "accelerator_type": "GPU",
    "count": 2.0, "available_duration": 2678400, "source": "openstack",
    "first_seen": "2026-01-01T00:00:00Z", "last_seen": "2026-02-01T00:00:00Z",
}
RECORDS = [
    BASE,
    {**BASE, "associated_record": "hpc:1234", "record_type": "job", "source": "slurm",
     "cores": 16, "active_duration": 3600, "available_duration": 7200, "vo": "atlas",
     "fqan": "/atlas/Role=production", "global_user_name": "/DC=org/CN=Jürgen",
     "benchmark_type": "hepscore23", "benchmark": 812.5, "installed": 8.0},
    {**BASE, "associated_record": "pod/ns/train", "source": "kubernetes", "count": 0.142857,
     "sharing": "mig", "sharing_name": "1g.10gb", "sharing_parts": 1, "sharing_of": 7,
     "vo": "cms"},
    {**BASE, "associated_record": "vm-vgpu", "count": 0.25, "sharing": "vgpu",
     "sharing_name": "GRID A100-10C", "sharing_parts": 4, "vo": "biomed"},
]


def json_record(record):
    """The spool's JSON form of a record (schemas/src/usage/raw.rs)."""
    out = {key: value for key, value in record.items()
           if not key.startswith("sharing") and key not in ("benchmark", "benchmark_type")}
    out["accelerator_type"] = record["accelerator_type"].lower()
    if "benchmark" in record:
        out["benchmark"] = {"type": record["benchmark_type"], "value": record["benchmark"]}
    return json.dumps(out, ensure_ascii=False)


def main():
    if CORPUS.exists():
        shutil.rmtree(CORPUS)

    for name in ["site.toml", "openstack-site.toml", "slurm-site.toml", "kubernetes-site.toml"]:
        write("site_config", name, read(f"examples/{name}"))

    write("central_config", "central.toml", read("examples/central.toml"))

    write("manual_usage", "example.jsonl", read("examples/manual-usage.jsonl"))

    write("glue_json", "sample.glue21.json", read("schemas/tests/golden/sample.glue21.json"))

    sample = read("schemas/tests/golden/sample.glue21.json")
    write("registry_push", "sample.glue21.json", sample)
    # The same document with its first "ID" named twice: refused as a duplicate key.
    write("registry_push", "duplicate-id.json", sample.replace(b'"ID":', b'"ID": "shadow", "ID":', 1))

    for index, value in enumerate([
        "postgres://acct:s3cret@db:5432/acc", "POSTGRESQL://acct:p@ss/w:rd@db/acc?sslmode=require",
        "postgres://acct@db/acc?password=s3cret&application_name=accelfed",
        "host=db user=acct password='s 3' dbname=acc", "/var/lib/accelfed/accounting.sqlite",
    ]):
        write("database_url", f"url-{index}", value.encode())

    for index, record in enumerate(RECORDS):
        write("grpc_record", f"record-{index}.pb", proto_record(record))
    request = b"".join(field(1, "bytes", proto_record(r)) for r in RECORDS) + field(2, "int", 4)
    write("grpc_record", "submit.pb", request)

    slurm = "provider/tests/fixtures/slurm"
    write("slurm", "nodes-38", b"\x00" + cut_json(f"{slurm}/v0.0.38/rest-nodes-idle.json"))
    write("slurm", "nodes-40", b"\x00" + cut_json(f"{slurm}/v0.0.40/scontrol-nodes.json"))
    write("slurm", "nodes-41", b"\x00" + cut_json(f"{slurm}/v0.0.41/rest-nodes.json"))
    write("slurm", "partitions-38", b"\x01" + cut_json(f"{slurm}/v0.0.38/rest-partitions.json"))
    write("slurm", "partitions-40", b"\x01" + cut_json(f"{slurm}/v0.0.40/scontrol-partitions.json"))
    write("slurm", "jobs-38", b"\x02" + cut_json(f"{slurm}/v0.0.38/sacct.json"))
    write("slurm", "jobs-40", b"\x08" + cut_json(f"{slurm}/v0.0.40/sacct.json"))
    write("slurm", "jobs-41", b"\x0e" + cut_json(f"{slurm}/v0.0.41/rest-jobs.json"))
    write("slurm", "scontrol-text", b"\x03" + read(f"{slurm}/v0.0.38/scontrol-partitions.txt"))
    write("slurm", "gres", b"\x04gpu:a100:2(IDX:0,2),gpu:1g.10gb:3(S:1),shard:8,mps:200")
    write("slurm", "tres", b"\x05cpu=64,mem=500G,gres/gpu=4,gres/gpu:a100=4")
    # GRES types of odd shapes (issue 29): only a sharing suffix, 256+ characters, control
    # characters, only colons, huge counts; and AutoDetect's MIG type names (issue 28).
    write("slurm", "gres-shared-suffix", b"\x04gpu:-SHARED:1")
    write("slurm", "gres-long-type", b"\x04gpu:" + b"a" * 300 + b":1")
    write("slurm", "gres-control", b"\x04gpu:a\x07b:1,gpu:\x00:2")
    write("slurm", "gres-colons", b"\x04gpu:::,:::")
    write("slurm", "gres-huge", b"\x04gpu:a100:18446744073709551615,gpu:a100:18446744073709551615")
    write("slurm", "gres-autodetect-mig",
          b"\x04gpu:nvidia_a100_3g.20gb:2,gpu:nvidia_h100_80gb_hbm3_1g.10gb:7(S:0)")
    write("slurm", "tres-shared-suffix", b"\x05cpu=8,gres/gpu=2,gres/gpu:-SHARED=2")

    k8s = "provider/tests/fixtures/kubernetes"
    for case in ["cluster", "sharing"]:
        pages = [f"{k8s}/{case}/{kind}.json" for kind in ["nodes", "pods", "namespaces", "resourcequotas"]]
        write("kubernetes", case, b"\x00".join(
            cut_json(page) if (ROOT / page).exists() else b"" for page in pages))

    os_ = "provider/tests/fixtures/openstack"
    rp = "placement-rp-gpu-a100-01"
    write("openstack", "cloud", b"\x00".join([
        cut_json(f"{os_}/nova-servers-detail-alltenants-2.93.json"),
        cut_json(f"{os_}/nova-flavors-detail-2.61.json", keep=6),
        cut_json(f"{os_}/keystone-projects.json"),
        cut_json(f"{os_}/placement-resource_providers-1.39.json"),
        read(f"{os_}/{rp}-inventories.json"),
        read(f"{os_}/{rp}-usages.json"),
        read(f"{os_}/{rp}-traits.json"),
    ]))
    write("openstack", "servers-2.1", cut_json(f"{os_}/nova-servers-detail-alltenants-2.1.json"))
    write("openstack", "servers-2.47", cut_json(f"{os_}/nova-servers-detail-alltenants-2.47.json"))
    write("openstack", "flavors-2.1", b"\x00" + cut_json(f"{os_}/nova-flavors-detail-2.1.json", keep=6))

    for index, value in enumerate([
        "CESNET-MCC", "urn:accelfed:S:ee:hpc/gpu-node-0001", '#Ünï, "site"+<x>;=\\ ',
        " lead", "GLUE2DomainID=a\\2Cb\\3Dc\\5C,o=glue", "a\\,b+c=d,o=glue", "サイト\\C3\\9C",
    ]):
        write("ldap_dn", f"dn-{index}", value.encode())

    lines = "\n".join(json_record(r) for r in RECORDS).encode()
    write("apel", "records", b"\x00" + lines)
    write("apel", "records-latin1-small", b"\x13" + lines)

    # The node agent: cgroup files of the layouts it reads (selector 0), a state document for
    # `accelfed idle` (selector 2); the state-file reader (1) starts from the idle document's bytes.
    write("agent", "cgroup-slurm", b"\x00" + b"0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n")
    write("agent", "cgroup-pod", b"\x00" + b"0::/kubepods.slice/kubepods-burstable.slice/"
          b"kubepods-burstable-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice/x\n")
    write("agent", "idle-doc", b"\x02" + json.dumps({
        "format_version": 1, "updated_unix_ms": 36000000, "holders": [{
            "kind": "slurm_job", "id": "1", "holding_now": True, "last_activity": "idle",
            "idle_since_unix_ms": 0, "place": "GPU-a"}]}, separators=(",", ":")).encode())


main()
