#!/usr/bin/env bash
# Syscalls per certificate of one certsmith (or cfssl) variant under newcert load: which system calls
# a recorded certificate costs — fsync/fdatasync (WAL syncs), pwrite64 (WAL frames), futex (thread
# hand-offs), writev (≈ one per HTTP response, the per-certificate denominator). Counted with perf's
# syscall tracepoints (no ptrace: strace slowed the server ≈10×, which made the calling-thread writer
# judge its commits slow and leave them to the store's thread, so its counts were of another path).
#
# Run by hand after `npm run build`, through /work/bin/quiet on the shared machine:
#
#   tools/bench/cert-store/syscalls-per-certificate.sh 'now' 'before@/path/to/main;--processes 1'
#
# Each variant (variants.mjs syntax) gets one variants.mjs run of 2 × 6 s rounds; 7 s in (after the
# 4 s warm-up), perf counts its processes' system calls for 3 s. Needs perf with tracepoints readable
# (perf_event_paranoid ≤ 2 for your own processes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
events=syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync,syscalls:sys_enter_pwrite64,syscalls:sys_enter_writev,syscalls:sys_enter_futex
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '| variant | req/s (round) | fsync+fdatasync / cert | pwrite64 / cert | futex / cert |\n|---|---:|---:|---:|---:|\n'
for variant in "$@"; do
  node "$repo/tools/bench/compare/variants.mjs" --op newcert-ecdsa --rounds 2 --duration 6 "$variant" >"$out/run.txt" 2>&1 &
  runner=$!
  server=''
  # Bounded: 20 s for the server to start.
  for _ in $(seq 1 200); do
    server=$(pgrep -P "$runner" | head -n 1 || true)
    [ -n "$server" ] && break
    sleep 0.1
  done
  sleep 7
  pids=$(echo "$server" $(pgrep -P "$server" || true) | tr ' ' ',')
  perf stat -x, -e "$events" -p "$pids" -- sleep 3 2>"$out/perf.txt" >/dev/null || true
  wait "$runner"
  count() { awk -F, -v e="$1" '$3 == e { print $1 }' "$out/perf.txt"; }
  responses=$(count syscalls:sys_enter_writev)
  syncs=$(( $(count syscalls:sys_enter_fsync) + $(count syscalls:sys_enter_fdatasync) ))
  rate=$(grep -E '^\| ' "$out/run.txt" | tail -n 1 | awk -F'|' '{ gsub(/ /, "", $3); print $3 }')
  awk -v v="$variant" -v r="$rate" -v s="$syncs" -v p="$(count syscalls:sys_enter_pwrite64)" -v f="$(count syscalls:sys_enter_futex)" -v n="$responses" \
    'BEGIN { printf "| %s | %s | %.3f | %.1f | %.2f |\n", v, r, s / n, p / n, f / n }'
done
