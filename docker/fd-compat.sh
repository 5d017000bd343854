#!/bin/sh
# `fd` for the Harness image (ADR-0102). pi's find tool runs
#   fd --glob --color=never --hidden --no-require-git --max-results N [--full-path] -- PATTERN PATH
# Debian bookworm ships fd 8.6 as `fdfind`, which predates --no-require-git and rejects it.
# This drops that one flag (before `--`) and runs fdfind. The difference: outside a git
# repository, .gitignore files are not applied (fd 8.6 applies them only inside a repo).
past_options=false
for arg in "$@"; do
  shift
  if ! $past_options; then
    [ "$arg" = "--" ] && past_options=true
    [ "$arg" = "--no-require-git" ] && continue
  fi
  set -- "$@" "$arg"
done
exec fdfind "$@"
