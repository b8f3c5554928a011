"""The side-by-side table (Markdown) from bench.py's two results, direct and through the proxy.

usage: table.py PLAIN_JSON PROXIED_JSON DELAY_MS VO_COUNT"""
import json
import sys

plain, proxied = (json.load(open(p)) for p in sys.argv[1:3])
delay, vos = sys.argv[3], sys.argv[4]
PEERS = {"cloud-info-provider": "accelfed provide", "caso-extract": "accelfed meter"}


def found(name):
    f = proxied[name]["found"]
    if "gpu_flavors" in f:
        return (f"{len(f['gpu_flavors'])} GPU flavors ({', '.join(f['gpu_flavors'])}), "
                f"{f['gpu_flavor_share_pairs']} flavor-share pairs, {f['shares']} shares, "
                f"capacity {'yes' if f['gpu_capacity_published'] else 'no'}")
    return (f"{f['gpu_records']} GPU records of {f['gpu_vms']} VMs in {f['vos']} VOs, "
            f"{f['gpu_hours']} GPU-hours")


def ratio(name, result):
    if name not in PEERS:
        return ""
    return f"{result[name]['median'] / result[PEERS[name]]['median']:.1f}x"


runs = len(plain["accelfed provide"]["walls"])
print(f"| tool | job | wall, direct | wall, +{delay} ms per call | peer / accelfed, direct "
      f"| peer / accelfed, +{delay} ms | found (+{delay} ms run) |")
print("|---|---|---|---|---|---|---|")
for name in ("accelfed provide", "cloud-info-provider", "accelfed meter", "caso-extract"):
    print(f"| {name} | {plain[name]['job']} | {plain[name]['median']:.3f} s "
          f"| {proxied[name]['median']:.3f} s | {ratio(name, plain)} | {ratio(name, proxied)} "
          f"| {found(name)} |")
print()
print(f"Medians of {runs} runs each, {vos} VO projects. All runs (s):")
for mode, result in (("direct", plain), (f"+{delay} ms", proxied)):
    for name, r in result.items():
        print(f"- {mode}, {name}: {', '.join(f'{w:.3f}' for w in r['walls'])}")
print()
print("Meter details (+%s ms run): accelfed %s; cASO %s" % (
    delay, json.dumps(proxied["accelfed meter"]["found"]),
    json.dumps(proxied["caso-extract"]["found"])))
