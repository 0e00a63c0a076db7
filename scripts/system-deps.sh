#!/usr/bin/env bash
# Debian packages the test suite uses beyond Node, Go and Java. Installs only what is missing; a no-op where
# everything is present. Needs root (CI machines run as root); elsewhere it says what to install.
set -euo pipefail
# package:command pairs (a command with a slash is a path)
wanted=(
  "docker-compose:docker-compose"   # validates docker-compose.temporal.yml without a Docker engine
  "postgresql-15:/usr/lib/postgresql/15/bin/postgres"   # FerretDB's PostgreSQL backend (scripts/lib/postgres.js)
)
missing=()
for pair in "${wanted[@]}"; do
  pkg=${pair%%:*}; cmd=${pair##*:}
  if [[ $cmd == */* ]]; then [ -x "$cmd" ] || missing+=("$pkg")
  else command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg"); fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "missing system packages: ${missing[*]} (install them with your package manager)" >&2
  exit 1
fi
echo "installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# The gateway runs PostgreSQL as a private cluster of its own (scripts/lib/postgres.js): the package is not to create
# and start the system's default cluster.
if [[ " ${missing[*]} " == *" postgresql-"* ]]; then
  mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.d/invoice-gateway.conf
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
