"""Runs each tool for its job against one mode's configuration (configs.py), RUNS times in
interleaved rounds, and reads what each found. Prints one JSON document:
{tool: {"job", "walls": [s...], "median": s, "found": {...}}}.

  accelfed provide      vs  cloud-info-provider (GLUE 2.1 JSON of the cloud, every VO's share)
  accelfed meter        vs  caso-extract        (the month's VM records and GPU records)

Each meter run starts from an empty spool and each cASO run from an empty output queue and spool,
so every run does the whole job. Both meter from SINCE; a run whose tool exits non-zero stops the
benchmark with its output.

usage: bench.py DIR STATE_JSON ACCELFED VENV PASSWORD KEYSTONE_URL SINCE RUNS"""
import glob
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

DIR, STATE, ACCELFED, VENV, PASSWORD, KEYSTONE, SINCE, RUNS = sys.argv[1:9]
RUNS = int(RUNS)
HERE = os.path.dirname(os.path.abspath(__file__))
state = json.load(open(STATE))
OUT = os.path.join(DIR, "out")


def fresh(*paths):
    for path in paths:
        for p in glob.glob(path + "*"):
            shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)


def accelfed_provide():
    return [ACCELFED, "provide", "--config", f"{DIR}/site.toml", "--output", f"{OUT}/provide.json"]


def accelfed_meter():
    fresh(f"{DIR}/spool.sqlite")
    return [ACCELFED, "meter", "--config", f"{DIR}/site.toml", "--since", SINCE]


def cloud_info_provider():
    return [f"{VENV}/bin/python", f"{HERE}/cip.py", "--middleware", "openstack",
            "--format", "glue21json", "--os-auth-url", KEYSTONE, "--os-username", "admin",
            "--os-password", PASSWORD, "--os-user-domain-name", "Default",
            "--os-project-domain-name", "Default", "--os-region-name", "RegionOne",
            f"{DIR}/cip-site.yaml"]


def caso_extract():
    fresh(f"{DIR}/caso-out", f"{DIR}/caso-spool")
    return [f"{VENV}/bin/caso-extract", "--config-file", f"{DIR}/caso.conf",
            "--extract-from", SINCE]


TOOLS = {  # name: (job, command, file its standard output goes to)
    "accelfed provide": ("provide", accelfed_provide, None),
    "cloud-info-provider": ("provide", cloud_info_provider, "cip.json"),
    "accelfed meter": ("meter", accelfed_meter, None),
    "caso-extract": ("meter", caso_extract, None),
}


def run(name):
    _, command, stdout = TOOLS[name]
    argv = command()
    out = open(os.path.join(OUT, stdout), "wb") if stdout else subprocess.DEVNULL
    err = open(os.path.join(OUT, name.replace(" ", "-") + ".err"), "wb")
    # SBS_RUST_LOG=warn,accelfed_provider=debug logs accelfed's API calls with their times
    env = dict(os.environ, RUST_LOG=os.environ.get("SBS_RUST_LOG", "warn"), NO_COLOR="1")
    start = time.monotonic()
    code = subprocess.call(argv, stdout=out, stderr=err, env=env)
    wall = time.monotonic() - start
    if code != 0:
        sys.exit(f"{name} exited {code}: {' '.join(argv)}\n"
                 + open(err.name, errors="replace").read()[-3000:])
    return wall


# ---- what each found --------------------------------------------------------------------------

def glue_found(path):
    """GPU flavors in a GLUE 2.1 JSON document (cloud-info-provider's layout, which accelfed's
    follows): instance types linked to a virtual accelerator (from either side of the link),
    counted once per flavor name and once per instance-type entity (a flavor as offered to one
    share); shares; whether GPU capacity (total/used accelerators) is published."""
    doc = json.load(open(path))
    linked = set()
    for acc in doc.get("CloudComputingVirtualAccelerator", []):
        linked.update(acc.get("Associations", {}).get("CloudComputingInstanceType", []))
    flavors, offered = set(), 0
    for itype in doc.get("CloudComputingInstanceType", []):
        assoc = itype.get("Associations", {})
        if itype["ID"] in linked or any("VirtualAccelerator" in k and v
                                         for k, v in assoc.items()):
            flavors.add(itype["Name"])
            shares = assoc.get("Share", [])
            offered += len(shares) if isinstance(shares, list) else 1
    capacity = "TotalAccelerators" in json.dumps(doc)
    return {"gpu_flavors": sorted(flavors), "gpu_flavor_share_pairs": offered,
            "shares": len(doc.get("Share", [])), "gpu_capacity_published": capacity}


def accelfed_records():
    """The spool's records: (resource id, month) -> (count, seconds, vo)."""
    db = sqlite3.connect(f"{DIR}/spool.sqlite")
    found = {}
    for month, body in db.execute("SELECT month, body FROM records"):
        r = json.loads(body)
        found[(r["associated_record"], month)] = r
    return found


def caso_records():
    """cASO's SSM queue: accelerator messages (JSON) and cloud messages (APEL text)."""
    acc, cloud = [], 0
    for path in glob.glob(f"{DIR}/caso-out/*/*"):
        text = open(path, errors="replace").read()
        if text.startswith("{"):
            message = json.loads(text)
            if message.get("Type") == "APEL-accelerator-message":
                acc += message["UsageRecords"]
        elif text.startswith("APEL-cloud-message"):
            cloud += text.count("VMUUID:")
    return acc, cloud


def meter_found():
    """GPU records, VMs, VOs and GPU-hours of both meters. The VMs still running accrue time
    between the two tools' runs, so the records of deleted VMs (closed intervals, the same
    whenever metered) are also compared one by one."""
    gpus, servers = state["gpus"], state["servers"]
    egi = {sid for sid, s in servers.items() if state["conventions"][s["flavor"]] == "egi"}
    closed = {sid for sid, s in servers.items() if s["deleted"]}
    ours = {(k[0], int(k[1][-2:])): r for k, r in accelfed_records().items()
            if float(r["count"]) > 0}
    acc, cloud = caso_records()
    theirs = {(r["AssociatedRecord"], int(r["MeasurementMonth"])): r for r in acc}

    def hours(records, count, seconds, keep=lambda key: True):
        return round(sum(float(r[count]) * r[seconds] for k, r in records.items() if keep(k))
                     / 3600, 3)

    differing = [k for k in theirs.keys() & ours.keys() if k[0] in closed
                 and (float(ours[k]["count"]), ours[k]["available_duration"])
                 != (float(theirs[k]["Count"]), theirs[k]["AvailableDuration"])]
    return {
        "accelfed meter": {
            "gpu_records": len(ours), "gpu_vms": len({k[0] for k in ours}),
            "gpu_vms_in_cloud": sum(1 for s in servers.values() if gpus[s["flavor"]] > 0),
            "vos": len({r.get("vo") for r in ours.values()}),
            "gpu_hours": hours(ours, "count", "available_duration"),
            "gpu_hours_egi_flavors": hours(ours, "count", "available_duration",
                                           lambda k: k[0] in egi),
            "gpu_hours_deleted_vms": hours(ours, "count", "available_duration",
                                           lambda k: k[0] in closed),
        },
        "caso-extract": {
            "gpu_records": len(theirs), "gpu_vms": len({k[0] for k in theirs}),
            "vm_records": cloud, "vos": len({r.get("FQAN") for r in acc}),
            "gpu_hours": hours(theirs, "Count", "AvailableDuration"),
            "gpu_hours_deleted_vms": hours(theirs, "Count", "AvailableDuration",
                                           lambda k: k[0] in closed),
            "records_accelfed_lacks": sorted(f"{u} month {m}" for u, m in theirs.keys() - ours.keys()),
            "deleted_vm_records_differing": sorted(f"{u} month {m}" for u, m in differing),
        },
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    walls = {name: [] for name in TOOLS}
    for _ in range(RUNS):
        for name in TOOLS:
            walls[name].append(run(name))
    result = {name: {"job": TOOLS[name][0], "walls": [round(w, 3) for w in ws],
                     "median": round(statistics.median(ws), 3)} for name, ws in walls.items()}
    result["accelfed provide"]["found"] = glue_found(f"{OUT}/provide.json")
    result["cloud-info-provider"]["found"] = glue_found(f"{OUT}/cip.json")
    for name, found in meter_found().items():
        result[name]["found"] = found
    print(json.dumps(result, indent=1))


main()
