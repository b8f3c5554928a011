#!/usr/bin/env bash
# accelfed side by side with the tools sites run today (issue 6): EGI's cloud-info-provider and
# cASO, against the same test cloud (scripts/openstack/cloud.sh) with SBS_VOS VO projects, once
# direct and once through a proxy adding SBS_DELAY_MS to every API call. scripts/test runs a small
# round (SBS_VOS=2 SBS_RUNS=1) so it cannot rot; BENCHMARKS.md's figures are SBS_VOS=20.
#
#   scripts/sidebyside/run.sh            build, start the cloud, run, print the table, clean up
#
# SBS_VOS (20) VO projects, SBS_RUNS (5) runs per tool and mode (the median is reported),
# SBS_DELAY_MS (20), ACCELFED_OS_PORT (25200; the proxies listen on PORT+10..PORT+14),
# SBS_RUST_LOG (warn; e.g. warn,accelfed_provider=debug for each API call with its time),
# ACCELFED_BIN (default: `cargo build --release` and target/release/accelfed).
# The cloud's databases are accelfed_sbs_* and its RabbitMQ vhost accelfed_sbs, so a test's cloud
# (accelfed_os_*) can run beside it. The peers are installed from PyPI into target/sidebyside-venv
# (cloud_info_provider 1.2.0, caso 5.2.2). Everything else lives in a temporary directory that
# is removed at the end, with the cloud stopped and its databases dropped, whatever happened.
# Results: the last run's outputs and results.json are copied to target/sidebyside/.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VOS=${SBS_VOS:-20}
RUNS=${SBS_RUNS:-5}
DELAY=${SBS_DELAY_MS:-20}
export ACCELFED_OS_PORT=${ACCELFED_OS_PORT:-25200}
export ACCELFED_OS_NAME=accelfed_sbs
# Enough fake GPUs for every VO's servers: 3 V100s and 2 (even) or 4 (odd projects) vGPUs a project,
# with room to spare; the deleted servers run (2 V100s each) before the others start.
export ACCELFED_OS_V100_PCI=$((VOS * 3 + 4))
export ACCELFED_OS_A100_PGPUS=$(((VOS * 4 + 7) / 8))
PASS=accelfed-test
PORT=$ACCELFED_OS_PORT
VENV=$ROOT/target/sidebyside-venv
RESULTS=$ROOT/target/sidebyside

say() { echo "[sidebyside $(date +%H:%M:%S)] $*" >&2; }

WORK=$(mktemp -d -t accelfed-sidebyside.XXXXXX)
PROXY_PID=
cleanup() {
  local rc=$?
  [ -z "$PROXY_PID" ] || kill "$PROXY_PID" 2>/dev/null || true
  if [ $rc != 0 ] && [ -d "$WORK/cloud/log" ]; then
    rm -rf "$RESULTS/failed-logs" && mkdir -p "$RESULTS" && cp -r "$WORK/cloud/log" "$RESULTS/failed-logs"
    say "failed ($rc): the cloud's logs are in $RESULTS/failed-logs"
  fi
  say "stopping the cloud"
  "$ROOT/scripts/openstack/cloud.sh" down "$WORK/cloud" > /dev/null 2>&1 || true
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT INT TERM

ACCELFED=${ACCELFED_BIN:-}
if [ -z "$ACCELFED" ]; then
  say "building accelfed"
  (cd "$ROOT" && cargo build --release --workspace --locked -q)
  ACCELFED=$ROOT/target/release/accelfed
fi
if ! "$VENV/bin/pip" show -q caso cloud_info_provider > /dev/null 2>&1; then
  say "installing cloud-info-provider and caso into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "cloud_info_provider==1.2.0" "caso==5.2.2"
fi

say "starting the cloud ($VOS VO projects)"
"$ROOT/scripts/openstack/cloud.sh" install
"$ROOT/scripts/openstack/cloud.sh" up "$WORK/cloud"
say "projects, flavors, servers"
/usr/bin/python3 "$HERE/populate.py" "$PASS" "$VOS" > "$WORK/state.json"

maps=()
for n in 0 1 2 3 4; do maps+=("$((PORT + n)):$((PORT + 10 + n))"); done
/usr/bin/python3 "$HERE/proxy.py" "$DELAY" "${maps[@]}" > "$WORK/proxy.log" 2>&1 &
PROXY_PID=$!

# the start of the previous month, accelfed meter's default window, for both meters
SINCE=$(date -u -d "$(date -u +%Y-%m-01) -1 month" +%Y-%m-%d)
mkdir -p "$RESULTS"
for mode in plain proxied; do
  url=http://127.0.0.1:$PORT/v3
  [ $mode = plain ] || url=http://127.0.0.1:$((PORT + 10))/v3
  /usr/bin/python3 "$HERE/configs.py" "$WORK/$mode" "$url" "$WORK/state.json" "$PASS"
  say "$mode: $RUNS rounds of the four tools"
  "$VENV/bin/python" "$HERE/bench.py" "$WORK/$mode" "$WORK/state.json" \
    "$ACCELFED" "$VENV" "$PASS" "$url" "$SINCE" "$RUNS" > "$WORK/$mode.json"
  rm -rf "${RESULTS:?}/$mode"
  cp -r "$WORK/$mode/out" "$RESULTS/$mode"
done
cp "$WORK/state.json" "$RESULTS/state.json"
/usr/bin/python3 "$HERE/table.py" "$WORK/plain.json" "$WORK/proxied.json" "$DELAY" "$VOS" \
  | tee "$RESULTS/table.md"
