# shellcheck shell=bash
# Shared helpers for scripts/provision/*.sh (sourced, not executed).
#
# - All progress goes to stderr, so a script's stdout can carry its result.
# - apt-get update runs at most once per sources configuration: a stamp records the
#   digest of the apt sources it was run with, and a later script (e.g. postgres.sh
#   after system.sh in .ci/run) skips the refresh while that stamp is fresh.
# - Quiver's one extra apt entry (Debian 13 "trixie" *source* packages, for building
#   pgvector) is written before every refresh, so that single refresh covers it too.

QUIVER_PROVISION_TAG=${QUIVER_PROVISION_TAG:-provision}
QUIVER_PROVISION_STATE=/var/cache/quiver-provision
QUIVER_TRIXIE_SRC_LIST=/etc/apt/sources.list.d/quiver-trixie-src.list
QUIVER_APT_STAMP_MAX_AGE_MIN=60

log() { printf '[%s] %s\n' "$QUIVER_PROVISION_TAG" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
set -Eeuo pipefail
trap 'rc=$?; log "ERROR: command failed (exit $rc) at ${BASH_SOURCE[0]##*/}:$LINENO: $BASH_COMMAND"' ERR

# Runs a command as root: directly, or through sudo (prompting only on a terminal).
as_root() {
  if [[ $EUID -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    if [[ -t 0 ]]; then sudo -- "$@"; else sudo -n -- "$@"; fi
  else
    die "root is needed for: $* (run as root or install sudo)"
  fi
}

apt_get() {
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 "$@" </dev/null >&2
}

is_installed() {
  [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" == installed ]]
}

# The Debian archive URI this machine already uses for its own release, as apt parses it
# (one-line .list or deb822 .sources alike). QUIVER_DEBIAN_MIRROR overrides it.
debian_mirror() {
  if [[ -n "${QUIVER_DEBIAN_MIRROR:-}" ]]; then
    printf '%s\n' "$QUIVER_DEBIAN_MIRROR"
    return
  fi
  local codename uri
  codename=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
  [[ -n $codename ]] || die "cannot read VERSION_CODENAME from /etc/os-release"
  # Prefer an entry whose downloaded Release file says Origin: Debian; without indexes yet
  # (freshly cleaned image) fall back to the first entry for the release itself.
  uri=$(apt-get indextargets --format '$(REPO_URI)' "Release: $codename" 'Target-Of: deb' 'Origin: Debian' | sed -n 1p)
  [[ -n $uri ]] || uri=$(apt-get indextargets --no-release-info --format '$(REPO_URI)' "Release: $codename" 'Target-Of: deb' | sed -n 1p)
  [[ -n $uri ]] || die "no apt source for Debian '$codename' found in /etc/apt/sources.list*; set QUIVER_DEBIAN_MIRROR"
  printf '%s\n' "${uri%/}"
}

# Source-only trixie entry: lets `apt-get source pgvector` work. There is deliberately no
# binary `deb` line for trixie, so no trixie binary package can ever be installed from it.
ensure_trixie_sources() {
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg options='' mirror content
  [[ -f $keyring ]] && options="[signed-by=$keyring] "
  mirror=$(debian_mirror) || exit 1
  content="# Managed by Quiver's scripts/provision/lib.sh. Debian 13 (trixie) SOURCE packages only,
# used to build pgvector for PostgreSQL 15 (not packaged for bookworm). No binary 'deb' line on purpose.
deb-src ${options}${mirror} trixie main"
  if [[ -f $QUIVER_TRIXIE_SRC_LIST && "$(<"$QUIVER_TRIXIE_SRC_LIST")" == "$content" ]]; then
    return
  fi
  log "writing $QUIVER_TRIXIE_SRC_LIST (trixie deb-src only)"
  printf '%s\n' "$content" | as_root tee "$QUIVER_TRIXIE_SRC_LIST" >/dev/null ||
    die "cannot write $QUIVER_TRIXIE_SRC_LIST"
}

apt_sources_digest() {
  { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null || true; } |
    sha256sum | cut -d ' ' -f 1
}

# apt-get update, unless this process already did, or any process did within the last hour
# with the same sources. `apt_update_once force` ignores the stamp (not this process's run).
_quiver_apt_updated=''
_quiver_apt_update_skipped=''
apt_update_once() {
  [[ -z $_quiver_apt_updated ]] || return 0
  ensure_trixie_sources
  local stamp=$QUIVER_PROVISION_STATE/apt-update.stamp digest
  digest=$(apt_sources_digest)
  if [[ "${1:-}" != force && -f $stamp && "$(<"$stamp")" == "$digest" &&
        -n "$(find "$stamp" -mmin -"$QUIVER_APT_STAMP_MAX_AGE_MIN")" ]]; then
    log "apt indexes were refreshed less than ${QUIVER_APT_STAMP_MAX_AGE_MIN} min ago for these sources; skipping apt-get update"
    _quiver_apt_update_skipped=1
  else
    log "apt-get update"
    apt_get update || die "apt-get update failed"
    as_root mkdir -p "$QUIVER_PROVISION_STATE" &&
      printf '%s\n' "$digest" | as_root tee "$stamp" >/dev/null || die "cannot write $stamp"
    _quiver_apt_update_skipped=''
  fi
  _quiver_apt_updated=1
}

# Runs an apt command after apt_update_once, dying if it fails. If it fails and the refresh
# had been skipped (stale indexes, e.g. a cleaned /var/lib/apt/lists), refreshes and retries once.
with_fresh_apt() {
  apt_update_once
  if "$@"; then return 0; fi
  [[ -n $_quiver_apt_update_skipped ]] || die "failed: $*"
  log "retrying after a forced apt-get update"
  _quiver_apt_updated=''
  apt_update_once force
  "$@" || die "failed: $*"
}

# Installs whichever of the given Debian packages are not installed yet (no recommends).
apt_install() {
  local package missing=()
  for package in "$@"; do
    is_installed "$package" || missing+=("$package")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    log "already installed: $*"
    return 0
  fi
  log "installing: ${missing[*]}"
  with_fresh_apt apt_get install -y --no-install-recommends "${missing[@]}"
}
