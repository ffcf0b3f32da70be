#!/usr/bin/env bash
# Install Debian's chromium for the headless report render test (tests/test_report_render.py).
# Idempotent and quiet: does nothing when chromium is already installed. Needs root or sudo.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "install-chromium.sh: chromium is missing and this user cannot run apt-get" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium >/dev/null 2>&1
