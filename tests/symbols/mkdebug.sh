#!/bin/sh
# mkdebug.sh BIN DEBUGFILE ROOT — install DEBUGFILE as ROOT/.build-id/xx/rest.debug,
# named by BIN's build-id, the layout of /usr/lib/debug for -dbgsym packages.
set -e
bid=$(readelf -n "$1" | awk '/Build ID:/ {print $3; exit}')
[ -n "$bid" ] || { echo "mkdebug.sh: $1 has no build-id" >&2; exit 1; }
dir="$3/.build-id/$(echo "$bid" | cut -c1-2)"
mkdir -p "$dir"
cp "$2" "$dir/$(echo "$bid" | cut -c3-).debug"
