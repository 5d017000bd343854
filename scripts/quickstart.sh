#!/usr/bin/env bash
# The README's quickstart, one command: installs pnpm if needed, installs and builds jr2, then
# runs the `review` workflow (a coder and a reviewer on a Repo Slot of a sample repository, or
# the workflow named as $1) end to end (against model-sim unless JR2_MODELS maps its models to a
# real endpoint), shows the branch it pushed to the sample's bare remote and stops the stack.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null 2>&1; then
  echo "quickstart: node is missing; jr2 needs Node.js 20.6 or newer (https://nodejs.org/, or your package manager)" >&2
  exit 1
fi
# The ports first (7400–7402, JR2_PORT / JR2_HARNESS_PORT / JR2_SIM_PORT): a taken one fails here
# in seconds, naming what holds it, not after minutes of install and build (scripts/ports.mjs
# needs no dependency).
node scripts/ports.mjs --name quickstart --as "bash scripts/quickstart.sh${1:+ $1}"
# Every Working tool runs in its run's bubblewrap sandbox (issue 26, ADR-0170): without bwrap,
# stop here with the install command, unless the user turned the sandbox off (JR2_SANDBOX=off).
if [ "${JR2_SANDBOX:-on}" != "off" ]; then
  if ! command -v bwrap >/dev/null 2>&1; then
    echo "quickstart: bubblewrap (bwrap) is missing; Working tools run in a bwrap sandbox per run." >&2
    echo "  install it:  sudo apt-get install bubblewrap   (Fedora: sudo dnf install bubblewrap)" >&2
    echo "  or run without the sandbox (tools then reach everything this user can):  JR2_SANDBOX=off bash scripts/quickstart.sh" >&2
    exit 1
  fi
  if ! bwrap --unshare-all --ro-bind / / --proc /proc --dev /dev true 2>/dev/null; then
    echo "quickstart: bwrap is installed but cannot create its namespaces here:" >&2
    bwrap --unshare-all --ro-bind / / --proc /proc --dev /dev true 2>&1 | sed 's/^/  /' >&2 || true
    echo "  see docs/adr/0172-sandbox-deployment.md (user namespaces, AppArmor, /proc), or JR2_SANDBOX=off" >&2
    exit 1
  fi
fi
if ! command -v pnpm >/dev/null 2>&1 || ! pnpm -v | grep -q '^10\.'; then
  echo "quickstart: installing pnpm@10"
  npm i -g pnpm@10 >/dev/null
fi
pnpm run setup
exec node scripts/start.mjs --run "${1:-review}"
