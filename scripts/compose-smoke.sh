#!/usr/bin/env bash
# Compose smoke test (SPEC §11, ADR-0103): brings the home-lab stack up from the built images
# with host networking (docker/compose.hostnet.yaml), runs the `review` workflow on a Repo Slot
# end to end against model-sim with the host's built CLI (ADR-0229, ADR-0228): a sample repository and a bare remote in the mounted repositories directory (JR2_REPOS_DIR,
# owned by the sandbox uid 10001 as docker/README.md tells users), checking that the coder's
# commits reached the bare remote; and always brings the stack down again.
#
#   pnpm run setup && docker/build-images.sh --offline   # first: dist/ and both images
#   scripts/compose-smoke.sh                             # exit 0 only when the run is `done`
#
# Compose: `docker compose` (v2) or Debian's `docker-compose` 1.29, installed when neither
# answers (docker/engine.sh compose).
# Env: JR2_SMOKE_PROJECT (compose project, default jr2smoke), JR2_SMOKE_TIMEOUT (seconds for the
# run, default 300), JR2_ORCHESTRATOR_IMAGE / JR2_HARNESS_IMAGE (default the :local tags).
# Never pulls, never creates a network: every service uses the host's network on 127.0.0.1
# (ports 7400 Orchestrator, 7401 Harness, 7402 model-sim, which must be free).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
project=${JR2_SMOKE_PROJECT:-jr2smoke}
run_timeout=${JR2_SMOKE_TIMEOUT:-300}
url=http://127.0.0.1:7400
log() { printf '[smoke %4ss] %s\n' "$SECONDS" "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

# `docker compose` (v2) where the client has it, else Debian's docker-compose (installed here
# when missing and root: a fresh machine has neither).
compose_line=$(bash docker/engine.sh compose) || fail "no Compose here (see docker/engine.sh compose)"
read -r -a compose_cmd <<<"$compose_line"
log "compose: ${compose_cmd[*]} ($("${compose_cmd[@]}" version --short 2>/dev/null || echo '?'))"
cli=packages/orchestrator/dist/cli/main.js
[ -f "$cli" ] || fail "$cli is missing: run \`pnpm run setup\` first"
orchestrator_image=${JR2_ORCHESTRATOR_IMAGE:-jr2-orchestrator:local}
harness_image=${JR2_HARNESS_IMAGE:-jr2-harness:local}
for image in "$orchestrator_image" "$harness_image"; do
  # compose would try to pull a missing image; there is no registry here.
  docker image inspect "$image" >/dev/null 2>&1 ||
    fail "image $image is missing: run docker/build-images.sh --offline first"
done
for port in 7400 7401 7402; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    fail "127.0.0.1:$port is already in use (host networking needs it free)"
  fi
done

work=$(mktemp -d /tmp/jr2-smoke.XXXXXX)
env_file=$work/.env
# The repositories directory the Harness mounts at /repos (its JR2_REPO_ROOTS): a sample
# repository and a bare remote, owned by uid 10001 as a user's must be (docker/README.md).
repos=$work/repos
node --input-type=module -e '
const { ensureSampleRepo } = await import(process.argv[1]);
ensureSampleRepo(process.argv[2]);
' "$root/scripts/sample-repo.mjs" "$repos"
# Owned by the Harness's uid: as root directly, else from a throwaway container of its image.
own() {
  if [ "$(id -u)" -eq 0 ]; then chown -R "$1" "$repos"
  else docker run --rm --network none --user 0 --entrypoint chown -v "$repos:/repos" "$harness_image" -R "$1" /repos; fi
}
own 10001:10001
# Placeholder credential files: compose.git-token.yaml / compose.git-ssh.yaml are only validated.
mkdir -p "$work/secrets" && touch "$work/secrets/git-token" "$work/secrets/git-ssh-key" "$work/secrets/known_hosts"
# Random tokens for this run only; the Harness's token is the sandbox token for `instance`.
node -e '
const { createHmac, randomBytes } = require("node:crypto");
const hex = () => randomBytes(32).toString("hex");
const key = hex();
const sandbox = `instance.${createHmac("sha256", key).update("instance").digest("hex")}`;
console.log([
  `JR2_INSTANCE_TOKEN=${hex()}`, `JR2_SANDBOX_KEY=${key}`, `JR2_HARNESS_TOKEN=${hex()}`,
  `JR2_SANDBOX_TOKEN=${sandbox}`, `JR2_ORCHESTRATOR_IMAGE=${process.argv[1]}`,
  `JR2_HARNESS_IMAGE=${process.argv[2]}`, `JR2_PG_PASSWORD=${hex()}`, `JR2_PEER_KEY=${hex()}`,
  `JR2_REPOS_DIR=${process.argv[3]}/repos`, `JR2_GIT_TOKEN_SOURCE=${process.argv[3]}/secrets/git-token`,
  "JR2_GIT_TOKEN_HOSTS=git.home",
  `JR2_GIT_SSH_KEY_SOURCE=${process.argv[3]}/secrets/git-ssh-key`,
  `JR2_GIT_SSH_KNOWN_HOSTS_SOURCE=${process.argv[3]}/secrets/known_hosts`,
].join("\n"));
' "$orchestrator_image" "$harness_image" "$work" >"$env_file"
chmod 600 "$env_file"
token=$(sed -n 's/^JR2_INSTANCE_TOKEN=//p' "$env_file")

compose() {
  "${compose_cmd[@]}" --env-file "$env_file" -f docker/compose.yaml -f docker/compose.hostnet.yaml \
    -p "$project" "$@"
}
networks() { docker network ls --format '{{.Name}}' | sort; }

ok=false
cleanup() {
  local code=$?
  if ! $ok; then
    log "service logs:"
    compose logs --no-color --tail=200 >&2 || true
  fi
  log "bringing the stack down"
  local down_started=$SECONDS
  compose down --volumes --remove-orphans >/dev/null 2>&1 || log "compose down failed"
  log "down in $((SECONDS - down_started)) s; total $SECONDS s"
  own "$(id -u):$(id -g)" 2>/dev/null || true
  rm -rf "$work"
  exit "$code"
}
trap cleanup EXIT

# Every profile and file combination must validate (vLLM, llama-server and PostgreSQL are only
# checked, never up: no GPU, no registry). The postgres profile is its own file
# (compose.postgres.yaml, bridge networking only) and must refuse to run without a password.
combos=0
for profile in "" "--profile gpu" "--profile llama" "--profile postgres"; do
  for files in "" "-f docker/compose.override.yaml" "-f docker/compose.hostnet.yaml" \
    "-f docker/compose.override.yaml -f docker/compose.git-token.yaml -f docker/compose.git-ssh.yaml"; do
    [ -n "$profile" ] && [[ "$files" == *git-* ]] && continue
    if [ "$profile" = "--profile postgres" ]; then
      [ "$files" = "-f docker/compose.hostnet.yaml" ] && continue
      files="$files -f docker/compose.postgres.yaml"
    fi
    # shellcheck disable=SC2086 # word splitting of $profile and $files is intended
    "${compose_cmd[@]}" --env-file "$env_file" $profile -f docker/compose.yaml $files config -q ||
      fail "compose config rejects: $profile -f docker/compose.yaml $files"
    combos=$((combos + 1))
  done
done
grep -v '^JR2_PG_PASSWORD=' "$env_file" >"$work/no-pg-password.env"
if refusal=$("${compose_cmd[@]}" --env-file "$work/no-pg-password.env" --profile postgres -f docker/compose.yaml \
  -f docker/compose.postgres.yaml config -q 2>&1); then
  fail "the postgres profile ran without JR2_PG_PASSWORD (it must refuse a default)"
fi
grep -q "set JR2_PG_PASSWORD" <<<"$refusal" || fail "the postgres profile's refusal does not name JR2_PG_PASSWORD: $refusal"
grep -v '^JR2_GIT_TOKEN_HOSTS=' "$env_file" >"$work/no-token-hosts.env"
if refusal=$("${compose_cmd[@]}" --env-file "$work/no-token-hosts.env" -f docker/compose.yaml \
  -f docker/compose.override.yaml -f docker/compose.git-token.yaml config -q 2>&1); then
  fail "compose.git-token.yaml ran without JR2_GIT_TOKEN_HOSTS (the token would go to every https host)"
fi
grep -q "set JR2_GIT_TOKEN_HOSTS" <<<"$refusal" || fail "the git token's refusal does not name JR2_GIT_TOKEN_HOSTS: $refusal"
log "compose config: $combos combinations valid (profiles none/gpu/llama × base/override/hostnet, postgres × base/override, the git credential files); postgres without a password and a git token without its hosts refused"

networks_before=$(networks)
log "up -d ($orchestrator_image, $harness_image)"
started=$SECONDS
compose up -d

deadline=$((SECONDS + 120))
until node -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "$url/healthz"; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the Orchestrator did not answer $url/healthz within 120 s"
  sleep 1
done
log "Orchestrator healthy after $((SECONDS - started)) s"

# The Harness's Working tools run in bwrap inside its container (issue 26, ADR-0172/0173): its
# start banner names bwrap and the sandbox uid, or the failing layer and its fix — then review's
# `write` Turns would be refused, so say why here rather than as a fault later.
deadline=$((SECONDS + 60))
until banner=$(compose logs --no-color harness 2>&1 | grep -m1 "jr2 harness sandbox:"); do
  [ "$SECONDS" -lt "$deadline" ] || fail "the Harness printed no sandbox banner within 60 s"
  sleep 1
done
grep -q "jr2 harness sandbox: bwrap " <<<"$banner" || fail "the Harness's sandbox does not work in its container: ${banner#*jr2 harness sandbox: }"
log "Harness sandbox: ${banner#*jr2 harness sandbox: }"

networks_during=$(networks)
[ "$networks_during" = "$networks_before" ] ||
  fail "networks changed: before [$(echo $networks_before)], during [$(echo $networks_during)]"
created=$(docker network ls --filter "label=com.docker.compose.project=$project" -q)
[ -z "$created" ] || fail "compose created a network for $project: $created"
extra=$(echo "$networks_during" | grep -vxE 'bridge|host|none' || true)
[ -z "$extra" ] || fail "networks beyond bridge/host/none: $extra"

# The image serves the web console under its CSP (issue 12): the page, and a bundle it names.
node scripts/console-served.mjs "$url" || fail "the Orchestrator image does not serve the web console at $url/ui/"

# The example `review` is on a Repo Slot (issue 28; the plain-workspace loop runs in the images
# under the conformance tier, which serves its test fixture): the sample repository at /repos/sample, checked out into a
# Worktree by the Harness in its container; merging pushes the run's branch to the bare remote.
log "running review on /repos/sample to done (timeout ${run_timeout} s)"
run_started=$SECONDS
timeout "$run_timeout" node "$cli" run review --follow --answer-gates merge --url "$url" --token "$token" \
  --input '{"repo":"/repos/sample","pushUrl":"/repos/sample-remote.git"}' ||
  fail "the review run did not reach done (exit $?)"
# Host git reads repositories owned by uid 10001 only when told they are safe.
remote_git() { git -c safe.directory='*' -C "$repos/sample-remote.git" "$@"; }
branch=$(remote_git for-each-ref --format='%(refname:short)' 'refs/heads/jr2/review/*')
[ "$(wc -w <<<"$branch")" -eq 1 ] || fail "the bare remote holds no single jr2/review/* branch: [$branch]"
commits=$(remote_git log --format='%an: %s' "$branch")
grep -q "picked finish" <<<"$commits" || fail "the pushed branch $branch holds no coder commit: $commits"
remote_git show "$branch:jr2-worker.txt" | grep -q "written by model-sim's worker" ||
  fail "the pushed branch $branch has no jr2-worker.txt from the coder"
# The coder's `bash` ran its own git in its sandbox (model-sim's gitworker, ADR-0229): the
# Worktree's status, before the pick's commit, is in the run's transcript.
run_id=${branch##*/}
node "$cli" transcript "$run_id" --url "$url" --token "$token" | grep -q '?? jr2-worker.txt' ||
  fail "the coder's git status in its sandbox is not in $run_id's transcript"
log "review done in $((SECONDS - run_started)) s; $branch on the bare remote: $(wc -l <<<"$commits") commit(s) — $(head -1 <<<"$commits")"

ok=true
log "PASS: review (a Repo Slot, pushed to a bare remote) reached done in containers"
