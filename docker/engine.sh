#!/usr/bin/env bash
# Make a Docker engine answer on this machine, and stop it again if we started it.
#
#   docker/engine.sh start    # no-op when `docker info` answers; else install docker.io
#                             # (apt, as root) and start dockerd without a bridge
#   docker/engine.sh stop     # stops dockerd only if `start` started it
#   docker/engine.sh status
#   docker/engine.sh compose  # print the Compose command that works here (`docker compose` v2,
#                             # else `docker-compose`), installing Debian's docker-compose (apt,
#                             # as root) when neither answers
#
# dockerd runs with --bridge=none --iptables=false: these machines never create a bridge
# network, and every container runs with host networking (SPEC §11).
# Env: JR2_DOCKERD_STATE (default /tmp/jr2-dockerd) holds the pid file and the log.
set -euo pipefail

state_dir=${JR2_DOCKERD_STATE:-/tmp/jr2-dockerd}
pid_file=$state_dir/dockerd.pid
log_file=$state_dir/dockerd.log

log() { printf '[engine] %s\n' "$*" >&2; }

engine_answers() { timeout 10 docker info >/dev/null 2>&1; }

install_engine() {
  if command -v dockerd >/dev/null 2>&1 && command -v docker >/dev/null 2>&1; then return; fi
  if [ "$(id -u)" -ne 0 ]; then
    log "no dockerd here and not root: install Debian's docker.io, or start an engine"; exit 1
  fi
  log "installing Debian's docker.io"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # --no-install-recommends: no apparmor/cgroupfs-mount/etc.; dockerd needs only these.
  apt-get install -y -qq --no-install-recommends docker.io containerd runc iptables >/dev/null
}

start_engine() {
  if engine_answers; then log "an engine already answers; leaving it alone"; return; fi
  install_engine
  mkdir -p "$state_dir"
  log "starting dockerd --bridge=none --iptables=false (log: $log_file)"
  # setsid: dockerd outlives this script and is not killed with its process group.
  setsid dockerd --bridge=none --iptables=false --ip6tables=false >"$log_file" 2>&1 < /dev/null &
  echo $! >"$pid_file"
  for _ in $(seq 1 60); do
    if engine_answers; then log "dockerd answers (pid $(cat "$pid_file"))"; return; fi
    if ! kill -0 "$(cat "$pid_file")" 2>/dev/null; then
      log "dockerd exited; last lines of $log_file:"; tail -20 "$log_file" >&2; rm -f "$pid_file"; exit 1
    fi
    sleep 1
  done
  log "dockerd did not answer within 60 s; see $log_file"; exit 1
}

stop_engine() {
  if [ ! -f "$pid_file" ]; then log "we did not start dockerd; nothing to stop"; return; fi
  pid=$(cat "$pid_file")
  if kill -0 "$pid" 2>/dev/null; then
    log "stopping dockerd (pid $pid)"
    kill -TERM "$pid"
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    if kill -0 "$pid" 2>/dev/null; then log "dockerd still up after 30 s; sending KILL"; kill -KILL "$pid"; fi
  fi
  rm -f "$pid_file"
}

# Compose v2 (`docker compose`) if the client has the plugin, else Debian's docker-compose 1.29.
compose_command() {
  if docker compose version >/dev/null 2>&1; then echo "docker compose"; return; fi
  if command -v docker-compose >/dev/null 2>&1; then echo "docker-compose"; return; fi
  if [ "$(id -u)" -ne 0 ]; then
    log "no Compose here and not root: install Debian's docker-compose or the Compose v2 plugin"; exit 1
  fi
  log "installing Debian's docker-compose"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
  command -v docker-compose >/dev/null 2>&1 || { log "docker-compose did not install"; exit 1; }
  echo "docker-compose"
}

case "${1:-}" in
  start) start_engine ;;
  compose) compose_command ;;
  stop) stop_engine ;;
  status) if engine_answers; then echo "engine answers"; else echo "no engine"; exit 1; fi ;;
  *) echo "usage: $0 start|stop|status|compose" >&2; exit 2 ;;
esac
