#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time and fails on any crash, hang
# (an input slower than -timeout), out-of-memory, leak or sanitizer report.
#
#   fuzz/run_fuzzers.sh BIN_DIR [SECONDS] [TARGET...]
#
# BIN_DIR holds fuzz_urdf, fuzz_world, fuzz_vector, fuzz_mesh (a build with
# -DPLUME_FUZZ=ON, e.g. build-asan/fuzz). Each target starts from a fresh
# corpus seeded with models/ (URDFs, worlds), fuzz/seeds/<target>/ and the
# kept regression inputs tests/fuzz_regressions/<target>/. Inputs that fail
# are copied to $PLUME_FUZZ_ARTIFACTS (default: BIN_DIR/artifacts) and
# printed in hex; keep them under tests/fuzz_regressions/<target>/.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
bin=${1:?usage: run_fuzzers.sh BIN_DIR [SECONDS] [TARGET...]}
seconds=${2:-60}
shift $(( $# >= 2 ? 2 : 1 ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(urdf world vector mesh)
artifacts=${PLUME_FUZZ_ARTIFACTS:-$bin/artifacts}
mkdir -p "$artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# LeakSanitizer is on (ASan's default); UBSan reports are fatal (the targets
# are built with -fno-sanitize-recover=undefined); print stacks.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Leaks inside third-party libraries (fuzz/lsan.supp says which and why).
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/lsan.supp}

failed=0
for t in "${targets[@]}"; do
  exe="$bin/fuzz_$t"
  [ -x "$exe" ] || { echo "run_fuzzers: $exe not found"; exit 2; }
  corpus="$work/$t"
  mkdir -p "$corpus"
  case "$t" in
    urdf) cp "$root"/models/*.urdf "$corpus"/ ;;
    world) cp "$root"/models/worlds/*.xml "$corpus"/ ;;
  esac
  cp "$here/seeds/$t"/* "$corpus"/ 2>/dev/null
  cp "$root/tests/fuzz_regressions/$t"/* "$corpus"/ 2>/dev/null
  rm -f "$corpus/README.md"
  log="$work/$t.log"
  SECONDS=0
  "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
         -dict="$here/$t.dict" -artifact_prefix="$artifacts/${t}-" -print_final_stats=1 \
         "$corpus" > "$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  if [ $rc -ne 0 ]; then
    failed=1
    echo "== fuzz_$t: FAILED after ${SECONDS}s (exit $rc); the end of its log:"
    tail -n 60 "$log"
    for a in "$artifacts/${t}-"*; do
      [ -f "$a" ] || continue
      echo "== failing input $a ($(wc -c < "$a") bytes):"
      head -c 2048 "$a" | od -A d -c | head -n 40
    done
  else
    echo "== fuzz_$t: ${SECONDS}s, ${runs:-?} inputs, ${cov:-cov: ?} edges, no crash, hang, leak or sanitizer report"
  fi
done
exit $failed
