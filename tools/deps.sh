#!/usr/bin/env bash
# Installs the Debian packages cbottleneck builds and tests with, if any is missing.
set -euo pipefail
pkgs=(cmake make gcc pkg-config libunwind-dev libdw-dev libelf-dev libcjson-dev zlib1g-dev python3 python3-jsonschema binutils)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "cbottleneck: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
