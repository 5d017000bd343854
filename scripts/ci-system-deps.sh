#!/usr/bin/env bash
# Installs the Debian packages the test command needs on a fresh CI machine (as root): Chromium
# for the web console's browser suite (packages/console, driven by playwright-core at
# /usr/bin/chromium). Under CI=true a suite that cannot find it fails, so CI installs it here
# rather than letting a test skip. A developer machine: `sudo bash scripts/ci-system-deps.sh`.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -eq 0 ]; then
  echo "system deps: present (chromium $(chromium --version 2>/dev/null | awk '{print $2}'))"
  exit 0
fi
echo "system deps: installing ${need[*]} from Debian"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
echo "system deps: installed ${need[*]}"
