#!/usr/bin/env bash
# The README's quickstart, one command: installs pnpm if needed, installs and builds jr2, then
# runs the `review` workflow end to end (against model-sim unless JR2_MODELS maps its models to a real
# endpoint) and stops the stack when the run settles.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v pnpm >/dev/null 2>&1 || ! pnpm -v | grep -q '^10\.'; then
  echo "quickstart: installing pnpm@10"
  npm i -g pnpm@10 >/dev/null
fi
pnpm run setup
exec node scripts/start.mjs --run "${1:-review}"
