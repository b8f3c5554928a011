#!/usr/bin/env bash
# A private, real OpenStack (Debian 12 / Zed packages) for accelfed's tests: Keystone, Glance,
# Placement, Neutron server (no agents), Nova API / conductor / scheduler and two nova-compute
# processes running a fake GPU virt driver (fakegpu.py beside this script). Every listener is on
# 127.0.0.1; databases `accelfed_os_*` on the machine's MariaDB (127.0.0.1:3306, root); RabbitMQ
# vhost `accelfed_os`. Nothing of anybody else's is touched.
#
#   cloud.sh install       install the Debian packages (no service of theirs is started)
#   cloud.sh up DIR        fresh databases, configure under DIR, start, wait until computes report
#   cloud.sh down DIR      stop what `up DIR` started (by pid files), drop the databases
#
# Ports: ACCELFED_OS_PORT (default 25000) + 0 keystone, 1 placement, 2 nova, 3 glance, 4 neutron.
# ACCELFED_OS_NAME (default accelfed_os) names the databases (NAME_*) and the RabbitMQ vhost, so a
# second cloud (scripts/sidebyside/) can run beside a test's. ACCELFED_OS_V100_PCI (default 4) and
# ACCELFED_OS_A100_PGPUS (default 2, 8 vGPUs each) size the two computes' fake GPUs.
set -euo pipefail
# grep that reads all its input: `grep -q` leaves at the first match, and under pipefail the
# writer's SIGPIPE then fails the whole pipe (a check that passes or fails by chance).
has() { grep "$@" >/dev/null; }
HERE=$(cd "$(dirname "$0")" && pwd)
PORT=${ACCELFED_OS_PORT:-25000}
KS=$PORT PL=$((PORT + 1)) NV=$((PORT + 2)) GL=$((PORT + 3)) NE=$((PORT + 4))
PASS=accelfed-test
VHOST=${ACCELFED_OS_NAME:-accelfed_os}
DBP=${VHOST}_
V100_PCI=${ACCELFED_OS_V100_PCI:-4}
A100_PGPUS=${ACCELFED_OS_A100_PGPUS:-2}
DBURL="mysql+pymysql://root@127.0.0.1:3306/$DBP"
PACKAGES="keystone placement-api nova-api nova-conductor nova-scheduler python3-nova
  python3-openstackclient glance-api neutron-server python3-pymysql uwsgi-plugin-python3 curl"

say() { echo "[cloud.sh $(date +%H:%M:%S)] $*" >&2; }

install() {
  # shellcheck disable=SC2086
  if dpkg-query -W -f='${Status}\n' $PACKAGES 2>/dev/null | has -v 'install ok installed' \
    || [ "$(dpkg-query -W -f='${Status}\n' $PACKAGES 2>/dev/null | wc -l)" -lt "$(echo $PACKAGES | wc -w)" ]; then
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    debconf-set-selections <<'SELECTIONS'
keystone keystone/configure_db boolean false
keystone keystone/create-admin-tenant boolean false
keystone keystone/register-endpoint boolean false
nova-common nova/configure_db boolean false
nova-api nova/register-endpoint boolean false
placement-common placement/configure_db boolean false
placement-api placement/register-endpoint boolean false
glance-common glance/configure_db boolean false
glance-api glance/register-endpoint boolean false
neutron-common neutron/configure_db boolean false
SELECTIONS
    local made=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; made=1; fi
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $PACKAGES > /dev/null
    [ $made = 0 ] || rm -f /usr/sbin/policy-rc.d
  fi
}

sql() { mysql -h127.0.0.1 -P3306 -uroot "$@"; }

configure() {
  local D=$1
  mkdir -p "$D"/{run,log,etc/keystone,etc/nova,etc/glance,etc/neutron,etc/placement,glance,nova/instances,lock}
  local auth="auth_url = http://127.0.0.1:$KS/v3
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
region_name = RegionOne
password = $PASS"
  local authtoken="[keystone_authtoken]
www_authenticate_uri = http://127.0.0.1:$KS/
$auth"
  local rabbit="rabbit://guest:guest@127.0.0.1:5672/$VHOST"
  cat > "$D/etc/keystone/keystone.conf" <<EOF
[DEFAULT]
log_file = $D/log/keystone.log
[database]
connection = ${DBURL}keystone
[token]
provider = fernet
expiration = ${ACCELFED_OS_TOKEN_TTL:-3600}
[fernet_tokens]
key_repository = $D/etc/keystone/fernet
[credential]
key_repository = $D/etc/keystone/credential
EOF
  cat > "$D/etc/placement/placement.conf" <<EOF
[DEFAULT]
log_file = $D/log/placement.log
[api]
auth_strategy = keystone
$authtoken
username = placement
[placement_database]
connection = ${DBURL}placement
EOF
  cp /etc/glance/glance-api-paste.ini "$D/etc/glance/"
  cat > "$D/etc/glance/glance-api.conf" <<EOF
[DEFAULT]
bind_host = 127.0.0.1
bind_port = $GL
workers = 1
log_file = $D/log/glance.log
enabled_backends = fs:file
[glance_store]
default_backend = fs
[fs]
filesystem_store_datadir = $D/glance
[os_glance_staging_store]
filesystem_store_datadir = $D/glance/staging
[os_glance_tasks_store]
filesystem_store_datadir = $D/glance/tasks
[database]
connection = ${DBURL}glance
$authtoken
username = glance
[paste_deploy]
flavor = keystone
EOF
  cp /etc/neutron/api-paste.ini "$D/etc/neutron/"
  cat > "$D/etc/neutron/neutron.conf" <<EOF
[DEFAULT]
bind_host = 127.0.0.1
bind_port = $NE
core_plugin = ml2
service_plugins =
auth_strategy = keystone
transport_url = $rabbit
api_workers = 1
rpc_workers = 1
rpc_state_report_workers = 0
api_paste_config = $D/etc/neutron/api-paste.ini
state_path = $D/lock
notify_nova_on_port_status_changes = False
notify_nova_on_port_data_changes = False
log_file = $D/log/neutron.log
[database]
connection = ${DBURL}neutron
$authtoken
username = neutron
[nova]
$auth
username = nova
[oslo_concurrency]
lock_path = $D/lock
[ml2]
type_drivers = flat,vlan
tenant_network_types =
mechanism_drivers =
extension_drivers = port_security
[ml2_type_flat]
flat_networks = physnet1
EOF
  cp /etc/nova/api-paste.ini "$D/etc/nova/"
  cat > "$D/etc/nova/nova.conf" <<EOF
[DEFAULT]
transport_url = $rabbit
my_ip = 127.0.0.1
state_path = $D/nova
instances_path = $D/nova/instances
osapi_compute_listen = 127.0.0.1
enabled_apis = osapi_compute
compute_driver = fakegpu.FakeGPUDriver
heal_instance_info_cache_interval = -1
[api]
auth_strategy = keystone
$authtoken
username = nova
[placement]
$auth
username = nova
[neutron]
$auth
username = nova
[glance]
region_name = RegionOne
[wsgi]
api_paste_config = $D/etc/nova/api-paste.ini
[conductor]
workers = 1
[scheduler]
workers = 1
discover_hosts_in_cells_interval = 5
[filter_scheduler]
available_filters = nova.scheduler.filters.all_filters
enabled_filters = ComputeFilter,PciPassthroughFilter
[pci]
alias = {"name": "nvidia-v100", "vendor_id": "10de", "product_id": "1db4", "device_type": "type-PCI"}
[quota]
instances = 50
cores = 1000
ram = 4096000
[vnc]
enabled = False
[oslo_concurrency]
lock_path = $D/lock
[oslo_messaging_notifications]
driver = noop
[api_database]
connection = ${DBURL}nova_api
[database]
connection = ${DBURL}nova
EOF
  printf '[DEFAULT]\nhost = gpu-v100-01\n[pci]\ndevice_spec = {"vendor_id": "10de", "product_id": "1db4"}\nreport_in_placement = True\n' > "$D/etc/nova/v100.conf"
  printf '[DEFAULT]\nhost = gpu-a100-01\n' > "$D/etc/nova/a100.conf"
}

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
daemon() { # DIR name cmd...
  local D=$1 n=$2; shift 2
  setsid "$@" > "$D/log/$n.out" 2>&1 < /dev/null &
  echo $! > "$D/run/$n.pid"
}
# Nova's API is eventlet code: under several uwsgi threads of one process it stops answering
# ("greenlet.error: cannot switch to a different thread") once requests overlap, so it runs as
# processes of one thread each, as production deployments run it. Keystone and Placement run a
# process per core, as devstack runs them (API_WORKERS): one Python process holds the GIL, so on
# one process their requests would take turns whatever the clients send at once.
wsgi() { # DIR name port file VAR=value [processes threads]
  local D=$1 n=$2 port=$3 file=$4 env=$5 processes=${6:-1} threads=${7:-4}
  setsid /usr/bin/uwsgi_python3 --http-socket "127.0.0.1:$port" --wsgi-file "$file" --master \
    --processes "$processes" --threads "$threads" --enable-threads --lazy-apps --die-on-term --buffer-size 65535 \
    --add-header "Connection: close" --env "$env" --logto "$D/log/$n-uwsgi.log" \
    --pidfile "$D/run/$n.pid" > /dev/null 2>&1 < /dev/null &
}
wait_http() { # url seconds
  for _ in $(seq "$2"); do curl -s -o /dev/null "$1" && return 0; sleep 1; done
  say "timeout waiting for $1"; return 1
}

up() {
  local D=$1
  mkdir -p "$D"; D=$(cd "$D" && pwd)
  say "databases"
  for db in keystone placement glance neutron nova_api nova nova_cell0; do
    sql -e "DROP DATABASE IF EXISTS $DBP$db; CREATE DATABASE $DBP$db"
  done
  rabbitmqctl -q delete_vhost "$VHOST" > /dev/null 2>&1 || true
  rabbitmqctl -q add_vhost "$VHOST" > /dev/null
  rabbitmqctl -q set_permissions -p "$VHOST" guest '.*' '.*' '.*' > /dev/null
  configure "$D"
  local KM="keystone-manage --config-file $D/etc/keystone/keystone.conf"
  say "keystone"
  $KM db_sync 2>> "$D/log/bootstrap.err"
  $KM fernet_setup --keystone-user root --keystone-group root 2>> "$D/log/bootstrap.err"
  $KM credential_setup --keystone-user root --keystone-group root 2>> "$D/log/bootstrap.err"
  $KM bootstrap --bootstrap-password "$PASS" --bootstrap-region-id RegionOne \
    --bootstrap-admin-url "http://127.0.0.1:$KS/v3/" --bootstrap-internal-url "http://127.0.0.1:$KS/v3/" \
    --bootstrap-public-url "http://127.0.0.1:$KS/v3/" 2>> "$D/log/bootstrap.err"
  wsgi "$D" keystone "$KS" /usr/bin/keystone-wsgi-public "OS_KEYSTONE_CONFIG_DIR=$D/etc/keystone" "$(nproc)"
  wait_http "http://127.0.0.1:$KS/v3" 60
  ACCELFED_OS_PORT=$PORT /usr/bin/python3 "$HERE/register.py" "$PASS"
  say "database schemas"
  local NM="nova-manage --config-file $D/etc/nova/nova.conf"
  {
    placement-manage --config-file "$D/etc/placement/placement.conf" db sync
    glance-manage --config-file "$D/etc/glance/glance-api.conf" db_sync
    neutron-db-manage --config-file "$D/etc/neutron/neutron.conf" upgrade head
    $NM api_db sync
    $NM cell_v2 map_cell0 --database_connection "${DBURL}nova_cell0"
    $NM cell_v2 create_cell --name=cell1
    $NM db sync
  } >> "$D/log/bootstrap.out" 2>> "$D/log/bootstrap.err"
  say "services"
  wsgi "$D" placement "$PL" /usr/bin/placement-api "OS_PLACEMENT_CONFIG_DIR=$D/etc/placement" "$(nproc)"
  wsgi "$D" nova-api "$NV" /usr/bin/nova-api-wsgi "OS_NOVA_CONFIG_DIR=$D/etc/nova" 4 1
  daemon "$D" glance /usr/bin/glance-api --config-file "$D/etc/glance/glance-api.conf"
  daemon "$D" neutron /usr/bin/neutron-server --config-file "$D/etc/neutron/neutron.conf"
  daemon "$D" conductor /usr/bin/nova-conductor --config-file "$D/etc/nova/nova.conf" --log-file "$D/log/conductor.log"
  daemon "$D" scheduler /usr/bin/nova-scheduler --config-file "$D/etc/nova/nova.conf" --log-file "$D/log/scheduler.log"
  for p in $PL $NV $GL $NE; do wait_http "http://127.0.0.1:$p/" 120; done
  say "computes"
  daemon "$D" compute-v100 env PYTHONPATH="$HERE" FAKEGPU_PCI=$V100_PCI FAKE_VCPUS=64 \
    /usr/bin/python3 "$HERE/compute.py" --config-file "$D/etc/nova/nova.conf" \
    --config-file "$D/etc/nova/v100.conf" --log-file "$D/log/compute-v100.log"
  daemon "$D" compute-a100 env PYTHONPATH="$HERE" FAKEGPU_PGPUS=$A100_PGPUS FAKEGPU_VGPUS_PER_PGPU=8 FAKE_VCPUS=128 \
    /usr/bin/python3 "$HERE/compute.py" --config-file "$D/etc/nova/nova.conf" \
    --config-file "$D/etc/nova/a100.conf" --log-file "$D/log/compute-a100.log"
  # ready when placement holds both hosts' GPU providers (PCI and VGPU children, 2 roots)
  for _ in $(seq 180); do
    for c in v100 a100; do running "$D/run/compute-$c.pid" || { say "nova-compute $c died"; return 1; }; done
    # discover_hosts maps only the compute nodes already registered: map again after the
    # providers appear and insist on both hosts, or the scheduler may pick an unmapped host
    # (HostMappingNotFound puts the server in ERROR).
    [ "$(ACCELFED_OS_PORT=$PORT /usr/bin/python3 "$HERE/register.py" "$PASS" --count-providers)" -ge $((V100_PCI + A100_PGPUS + 2)) ] && {
      $NM cell_v2 discover_hosts > /dev/null 2>> "$D/log/bootstrap.err" || true
      local hosts
      hosts=$($NM cell_v2 list_hosts 2>> "$D/log/bootstrap.err" || true)
      if grep -q gpu-v100-01 <<< "$hosts" && grep -q gpu-a100-01 <<< "$hosts"; then say "up"; return 0; fi
    }
    sleep 2
  done
  say "resource providers never appeared"; return 1
}

down() {
  local D=$1 f
  for f in "$D"/run/*.pid; do
    [ -f "$f" ] || continue
    kill -TERM -- "-$(cat "$f")" 2>/dev/null || kill -TERM "$(cat "$f")" 2>/dev/null || true
  done
  sleep 3
  for f in "$D"/run/*.pid; do
    [ -f "$f" ] || continue
    kill -KILL -- "-$(cat "$f")" 2>/dev/null || true
    rm -f "$f"
  done
  for db in keystone placement glance neutron nova_api nova nova_cell0; do
    sql -e "DROP DATABASE IF EXISTS $DBP$db" || true
  done
  rabbitmqctl -q delete_vhost "$VHOST" > /dev/null 2>&1 || true
}

case "${1:-}" in
  install) install ;;
  up) up "${2:?DIR}" ;;
  down) down "${2:?DIR}" ;;
  *) echo "usage: $0 install | up DIR | down DIR" >&2; exit 2 ;;
esac
