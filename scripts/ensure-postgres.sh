#!/usr/bin/env bash
# Makes sure a PostgreSQL server answers on 127.0.0.1:5432 for the API
# tests (they run every suite on SQLite and on PostgreSQL). Starts the
# machine's cluster if it is stopped; installs Debian's server if there is
# none. Tests use BERTH_TEST_PG_URL (default postgres://127.0.0.1:5432/test).
set -euo pipefail
url="${BERTH_TEST_PG_URL:-postgres://127.0.0.1:5432/test}"

ready() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }

if ready; then exit 0; fi
if ! command -v pg_ctlcluster >/dev/null; then
  echo "installing PostgreSQL (Debian package; the API tests run on it too)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
fi
version="$(ls /etc/postgresql | sort -V | tail -1)"
echo "starting PostgreSQL $version"
pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
for _ in $(seq 1 30); do
  if ready; then break; fi
  sleep 1
done
if ! ready; then
  echo "PostgreSQL did not come up on 127.0.0.1:5432; the API tests need it (or set BERTH_TEST_PG_URL)" >&2
  exit 1
fi
# A fresh cluster has no `test` database or role for this user: create them.
if ! psql "$url" -qAt -c 'select 1' >/dev/null 2>&1; then
  su postgres -c "psql -qc \"DO \\\$\\\$ BEGIN CREATE ROLE $(whoami) SUPERUSER LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END \\\$\\\$;\"" || true
  su postgres -c "createdb -O $(whoami) test" || true
fi
psql "$url" -qAt -c 'select 1' >/dev/null
