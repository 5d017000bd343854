#!/usr/bin/env bash
# Installs the Debian packages the test command needs on a fresh CI machine (as root): bubblewrap,
# ripgrep and fd-find for the Working tools' sandbox suites (issue 26); Chromium
# for the web console's browser suite (packages/console, driven by playwright-core at
# /usr/bin/chromium), and PostgreSQL for the store suites (issue 15: Debian's `postgresql`, whose
# binaries under /usr/lib/postgresql/<ver>/bin scripts/pg-test-cluster.sh runs; no cluster of the
# package's is used or relied on), and bubblewrap for the Working-tool sandbox's suites
# (packages/sandbox, issue 26; they fail under CI=true without it). Under CI=true a suite that cannot find them fails, so CI
# installs them here rather than letting a test skip. A developer machine:
# `sudo bash scripts/ci-system-deps.sh`.
set -euo pipefail
# apt verifies signatures as the `_apt` user, which writes its temp files to /tmp: a /tmp that is
# not world-writable (seen on a CI machine here: mode 755) makes every later `apt-get update` fail
# with "Couldn't create temporary file /tmp/apt.conf…" — the images phase installs docker.io so.
if [ "$(id -u)" -eq 0 ] && [ "$(stat -c %a /tmp)" != 1777 ]; then
  echo "system deps: /tmp is mode $(stat -c %a /tmp); setting 1777 (apt's _apt user writes there)"
  chmod 1777 /tmp
fi
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
# The Harness's grep and find Working tools run ripgrep and fd (Debian's fd-find, `fdfind`); the
# escape suites call both through real tool calls, so CI installs them as the Harness image does.
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
command -v fdfind >/dev/null 2>&1 || command -v fd >/dev/null 2>&1 || need+=(fd-find)
# Repo Slots (issue 28): real git (its http-backend serves the https remote) and openssl, which
# makes that remote's throwaway certificate.
command -v git >/dev/null 2>&1 || need+=(git)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
if [ ${#need[@]} -eq 0 ]; then
  echo "system deps: present (chromium $(chromium --version 2>/dev/null | awk '{print $2}'), postgresql $(ls /usr/lib/postgresql | sort -V | tail -1), $(bwrap --version))"
  exit 0
fi
echo "system deps: installing ${need[*]} from Debian"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
echo "system deps: installed ${need[*]}"
