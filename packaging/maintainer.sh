# Shell functions shared by the .deb's and the .rpm's maintainer scripts (scripts/package puts
# this text into each script). POSIX sh: EL9's and Debian's /bin/sh.

# The system user and group accelfed, from the sysusers.d file, or with useradd where
# systemd-sysusers is missing (a container without systemd).
accelfed_user() {
    if command -v systemd-sysusers >/dev/null 2>&1; then
        systemd-sysusers --replace=/usr/lib/sysusers.d/accelfed.conf - <<'SYSUSERS'
@SYSUSERS@
SYSUSERS
    elif ! getent passwd accelfed >/dev/null; then
        getent group accelfed >/dev/null || groupadd --system accelfed
        useradd --system --gid accelfed --home-dir /var/lib/accelfed --no-create-home \
            --shell /usr/sbin/nologin --comment "accelfed GPU information and accounting" accelfed
    fi
}

# /var/lib/accelfed and /var/spool/accelfed with their owners and modes, from the tmpfiles.d file
# (by hand where systemd-tmpfiles is missing).
accelfed_folders() {
    if command -v systemd-tmpfiles >/dev/null 2>&1; then
        systemd-tmpfiles --create /usr/lib/tmpfiles.d/accelfed.conf
    else
        install -d -o accelfed -g accelfed -m 0755 /var/lib/accelfed
        install -d -o accelfed -g accelfed -m 0750 /var/spool/accelfed
        install -d -o accelfed -g accelfed -m 0750 /var/lib/accelfed/agents
        install -d -o accelfed -g accelfed -m 0755 /run/accelfed
    fi
}

# systemd re-reads unit files, where it runs.
accelfed_reload() {
    if [ -d /run/systemd/system ]; then
        systemctl daemon-reload || true
    fi
}

# Stops the units (before removal), where systemd runs. Nothing is disabled on remove: the site
# enabled its timers, and a reinstall after a remove (not a purge) finds them enabled as before.
accelfed_stop() {
    if [ -d /run/systemd/system ]; then
        systemctl stop @UNITS@ || true
    fi
}

# After an upgrade: a running `serve` is restarted on the new binary (try-restart: one that is
# stopped stays stopped). The timers' units are oneshot runs that start the new binary anyway.
accelfed_restart_serve() {
    if [ -d /run/systemd/system ]; then
        systemctl try-restart accelfed-serve.service || true
    fi
}

# Debian: deb-systemd-helper records the links each unit's [Install] section makes (enabled or
# not; nothing is enabled here), so that purge can remove the links the site made with
# `systemctl enable` after the unit files are gone. Works with or without a running systemd.
accelfed_track_units() {
    if [ -x /usr/bin/deb-systemd-helper ]; then
        for unit in @UNITS@; do
            deb-systemd-helper update-state "$unit" >/dev/null 2>&1 || true
        done
    fi
}

# Purge: the timers and services the site enabled are disabled, their links removed (by
# deb-systemd-helper's record, and any link left to a unit of this package, e.g. one enabled
# before the record existed), so nothing dangles and a later install starts with nothing enabled.
accelfed_purge_units() {
    if [ -x /usr/bin/deb-systemd-helper ]; then
        for unit in @UNITS@; do
            deb-systemd-helper purge "$unit" >/dev/null 2>&1 || true
            deb-systemd-helper unmask "$unit" >/dev/null 2>&1 || true
        done
    fi
    for unit in @UNITS@; do
        find /etc/systemd/system -type l -name "$unit" -delete 2>/dev/null || true
    done
}

# Purge keeps what cannot be made again: /etc/accelfed's tokens, keys and private CA,
# /var/lib/accelfed's databases and /var/spool/accelfed's records not yet shipped, unless the
# administrator asks with ACCELFED_PURGE_DATA=yes in dpkg's environment (no debconf question:
# the answer must be the same with and without a terminal). Empty folders go.
accelfed_purge_data() {
    if [ "${ACCELFED_PURGE_DATA:-}" = yes ]; then
        rm -rf /etc/accelfed /var/lib/accelfed /var/spool/accelfed
        return 0
    fi
    kept=""
    for folder in /etc/accelfed /var/lib/accelfed /var/spool/accelfed; do
        [ -d "$folder" ] || continue
        rmdir "$folder" 2>/dev/null || kept="$kept $folder"
    done
    if [ -n "$kept" ]; then
        echo "accelfed: purge kept$kept (tokens, keys, databases, unshipped records);" \
            "delete them by hand, or purge with ACCELFED_PURGE_DATA=yes" >&2
    fi
}
