#!/usr/bin/env bash
# Installs the Debian packages Quiver's test suite needs beyond Node.js and PostgreSQL:
#   bubblewrap  the plugin sandbox (bwrap)
#   chromium    headless browser tests (no chromium-driver; no recommends, which would pull
#               in systemd, avahi, CUPS helpers and the like)
#   git         plugin installs from git repositories
#   haproxy     the load balancer in front of three `quiver serve` replicas (test/replicas, the
#               replicas bench; issue #16)
#   iproute2    `ip`, and util-linux `unshare`: the network namespace of a sandboxed plugin with an
#               egress allow-list (src/runtime/sandbox-egress.ts) is made and brought up with them
#   python3 python3-venv python3-pip  Python plugins (issue #26): a system python3 under /usr (the
#               sandbox shows nothing else) with venv/ensurepip; pip builds the test's wheel
#   podman runc  container plugins (issue #26, src/runtime/container.ts): the engine Quiver finds on
#               PATH. runc, not Debian's default crun: crun 1.8 refuses hosts whose cgroups are
#               mounted in hybrid mode (v1 controllers plus an empty cgroup2 at /sys/fs/cgroup/unified,
#               as on the CI machines: "cgroups in hybrid mode not supported"), so a drop-in makes
#               runc podman's runtime. Without recommends (no systemd units pulled in).
# Idempotent: packages already installed are skipped, and apt-get update runs only if
# something has to be installed (see lib.sh). Progress goes to stderr.
set -Eeuo pipefail
QUIVER_PROVISION_TAG=provision:system
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

apt_install bubblewrap chromium git haproxy iproute2 util-linux python3 python3-venv python3-pip podman runc

podman_conf=/etc/containers/containers.conf.d/50-quiver-runc.conf
if [[ ! -e $podman_conf ]]; then
  as_root mkdir -p "$(dirname "$podman_conf")"
  printf '# Written by Quiver'"'"'s scripts/provision/system.sh: crun cannot run on hybrid cgroup hosts.\n[engine]\nruntime = "runc"\n' | as_root tee "$podman_conf" >/dev/null
  log "podman: runtime runc ($podman_conf)"
fi

log "$(bwrap --version); $(chromium --version 2>/dev/null); $(git --version); $(podman --version)"
