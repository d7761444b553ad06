#!/usr/bin/env bash
# Makes the local PostgreSQL 15 ready for Quiver's tests and prints, as the last line of
# stdout, the URL to put in QUIVER_TEST_DATABASE_URL. Progress goes to stderr.
#
#   1. PostgreSQL 15 (cluster "main") is running and accepting connections.
#   2. pgvector is installed. Debian 12 does not package it, so it is built from Debian 13's
#      (trixie) pgvector source package against postgresql-server-dev-15; see lib.sh for the
#      source-only apt entry. Skipped entirely (no apt, no build) when already installed.
#   3. Database quiver_test (owner postgres) exists, with the vector extension created.
#
# Idempotent; a run with nothing to do takes well under a second.
# Environment: QUIVER_PG_MAJOR (default 15), QUIVER_TEST_DB (default quiver_test).
set -Eeuo pipefail
QUIVER_PROVISION_TAG=provision:postgres
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PG_MAJOR=${QUIVER_PG_MAJOR:-15}
PG_CLUSTER=main
PG_BIN=/usr/lib/postgresql/$PG_MAJOR/bin
PG_EXTENSION_DIR=/usr/share/postgresql/$PG_MAJOR/extension
PG_LIB_DIR=/usr/lib/postgresql/$PG_MAJOR/lib
DB=${QUIVER_TEST_DB:-quiver_test}
[[ $DB =~ ^[a-z_][a-z0-9_]*$ ]] || die "QUIVER_TEST_DB must be a plain lower-case identifier, got '$DB'"

# --- 1. server running ------------------------------------------------------------------
[[ -x $PG_BIN/postgres ]] || die "PostgreSQL $PG_MAJOR is not installed ($PG_BIN/postgres missing; Debian package postgresql-$PG_MAJOR)"
cluster=$(pg_lsclusters -h 2>/dev/null | awk -v v="$PG_MAJOR" -v c="$PG_CLUSTER" '$1 == v && $2 == c { print $3, $4 }')
[[ -n $cluster ]] || die "no PostgreSQL cluster $PG_MAJOR/$PG_CLUSTER (see pg_lsclusters)"
read -r PG_PORT pg_status <<<"$cluster"

if ! pg_isready -q -h 127.0.0.1 -p "$PG_PORT"; then
  if [[ $pg_status != online* ]]; then
    log "starting PostgreSQL $PG_MAJOR/$PG_CLUSTER"
    as_root pg_ctlcluster --skip-systemctl-redirect "$PG_MAJOR" "$PG_CLUSTER" start >&2 ||
      die "pg_ctlcluster could not start $PG_MAJOR/$PG_CLUSTER (see /var/log/postgresql/postgresql-$PG_MAJOR-$PG_CLUSTER.log)"
  fi
  for _ in $(seq 60); do
    pg_isready -q -h 127.0.0.1 -p "$PG_PORT" && break
    sleep 0.5
  done
  pg_isready -q -h 127.0.0.1 -p "$PG_PORT" || die "PostgreSQL did not accept connections on 127.0.0.1:$PG_PORT within 30 s"
fi
log "PostgreSQL $PG_MAJOR is accepting connections on 127.0.0.1:$PG_PORT"

# --- 2. pgvector ------------------------------------------------------------------------
vector_installed() {
  local version
  [[ -f $PG_EXTENSION_DIR/vector.control && -f $PG_LIB_DIR/vector.so ]] || return 1
  version=$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" "$PG_EXTENSION_DIR/vector.control")
  [[ -n $version && -f $PG_EXTENSION_DIR/vector--$version.sql ]]
}

build_pgvector() {
  apt_install "postgresql-server-dev-$PG_MAJOR" build-essential dpkg-dev
  local build_dir source_dir
  build_dir=$(mktemp -d "${TMPDIR:-/tmp}/quiver-pgvector.XXXXXX")
  chmod 755 "$build_dir"
  # Root's apt downloads as the _apt user, which needs write access here.
  if [[ $EUID -eq 0 ]] && id _apt >/dev/null 2>&1; then chown _apt "$build_dir"; fi
  log "fetching the pgvector source package from trixie into $build_dir"
  fetch_source() { (cd "$build_dir" && apt-get source pgvector/trixie </dev/null >&2); }
  with_fresh_apt fetch_source
  source_dir=$(find "$build_dir" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | sed -n 1p)
  [[ -n $source_dir ]] || die "apt-get source pgvector produced no source directory in $build_dir"
  log "building pgvector $(dpkg-parsechangelog -l "$source_dir/debian/changelog" -S Version) for PostgreSQL $PG_MAJOR"
  # OPTFLAGS= keeps upstream's default -march=native out (Debian's no-native patch does the
  # same), so the result runs on any x86-64 machine this image might move to.
  make -C "$source_dir" -j"$(nproc)" PG_CONFIG="$PG_BIN/pg_config" OPTFLAGS= >&2 ||
    die "pgvector build failed (sources kept in $build_dir)"
  as_root make -C "$source_dir" PG_CONFIG="$PG_BIN/pg_config" OPTFLAGS= install >&2 ||
    die "pgvector make install failed (sources kept in $build_dir)"
  rm -rf "$build_dir"
}

if vector_installed; then
  log "pgvector already installed for PostgreSQL $PG_MAJOR"
else
  build_pgvector
  vector_installed || die "pgvector build finished but vector.control/vector.so are not in place for PostgreSQL $PG_MAJOR"
fi

# --- 3. test database -------------------------------------------------------------------
admin_url="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
url="postgres://postgres@127.0.0.1:$PG_PORT/$DB"
sql() { PGCONNECT_TIMEOUT=10 psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

sql "$admin_url" -c 'select 1' >/dev/null ||
  die "cannot connect as user postgres to 127.0.0.1:$PG_PORT (trust auth for 127.0.0.1 expected in pg_hba.conf)"
if [[ -z "$(sql "$admin_url" -c "select 1 from pg_database where datname = '$DB'")" ]]; then
  log "creating database $DB"
  sql "$admin_url" -c "create database $DB owner postgres" || die "could not create database $DB"
fi
version=$(sql "$url" -c 'set client_min_messages = warning' \
  -c 'create extension if not exists vector' -c 'alter extension vector update' \
  -c "select extversion from pg_extension where extname = 'vector'") ||
  die "could not create the vector extension in $DB"
log "database $DB ready with vector $version"
printf '%s\n' "$url"
