#!/bin/sh
# Install the Debian packages listed in deploy/apt-packages.txt that are missing.
# Only root on a Debian-like system can do this; elsewhere it says what to install and goes on.
set -eu
here=$(dirname "$0")
missing=""
for pkg in $(grep -v '^#' "$here/apt-packages.txt" | tr -s ' \n' ' '); do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
else
    echo "factbot: please install these system packages:$missing" >&2
fi
