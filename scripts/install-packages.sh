#!/usr/bin/env bash
# Installs the Debian packages named on the command line that are not
# installed yet (apt-get, through sudo when not root); says which, or that
# none were missing. Shared by setup.sh and build-asan.sh.
#
#   bash scripts/install-packages.sh cmake ninja-build ...
set -euo pipefail

missing=()
for package in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "==> Debian packages already installed: $*"
  exit 0
fi
echo "==> Installing ${missing[*]}"
sudo_cmd=()
[[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
