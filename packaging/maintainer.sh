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
        install -d -o accelfed -g accelfed -m 0755 /run/accelfed
    fi
}

# systemd re-reads unit files, where it runs.
accelfed_reload() {
    if [ -d /run/systemd/system ]; then
        systemctl daemon-reload || true
    fi
}

# Stops the units (before removal), where systemd runs; nothing is enabled by the package, so
# nothing is disabled here either: `systemctl disable` of a removed unit is the admin's.
accelfed_stop() {
    if [ -d /run/systemd/system ]; then
        systemctl stop @UNITS@ || true
    fi
}
