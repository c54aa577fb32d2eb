#!/usr/bin/env bash
# Runs every libFuzzer target in fuzz/ for SECONDS each (default 60), one per core at a time
# ($SRIOV_DRA_FUZZ_JOBS to change), with AddressSanitizer and UndefinedBehaviorSanitizer,
# starting from the seeds in fuzz/corpus/<target> (never modified: new inputs go to a scratch
# corpus that later runs start from too). Installs clang and libFuzzer when missing (as root).
# A finding is kept under $SRIOV_DRA_FUZZ_OUT (default build-fuzz/findings) and fails the run;
# turn it into a unit test, fix it, and add the input to the seeds.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  mapfile -t targets < <(sed -n 's/^sriovdra_fuzzer(\([a-z_]*\) .*/\1/p' fuzz/CMakeLists.txt)
fi

if ! command -v clang++ >/dev/null || ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "fuzz: clang and libFuzzer are missing; run as root to install clang libclang-rt-14-dev" >&2
    exit 1
  fi
  apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null
fi
scripts/install-deps.sh

build_dir="${SRIOV_DRA_FUZZ_BUILD_DIR:-build-fuzz}"
out="${SRIOV_DRA_FUZZ_OUT:-$build_dir/findings}"
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSRIOV_DRA_FUZZ=ON -DSRIOV_DRA_SANITIZE=ON -DSRIOV_DRA_BUILD_TESTS=OFF \
  -DSRIOV_DRA_BUILD_BENCH=OFF >/dev/null
cmake --build "$build_dir" --target "${targets[@]}"

export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$PWD/scripts/ubsan.supp"
mkdir -p "$out"
# One target per core at a time; a line per target as it ends.
fuzz_one() {
  local t="$1" scratch="$build_dir/corpus/$1"
  mkdir -p "$scratch"
  if "$build_dir/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -artifact_prefix="$out/$t-" "$scratch" "fuzz/corpus/$t" \
      >"$out/$t.log" 2>&1; then
    printf 'fuzz: %-26s %4s s ok (%s runs)\n' "$t" "$seconds" \
      "$(grep -o 'Done [0-9]* runs' "$out/$t.log" | tail -1 | cut -d' ' -f2)"
  else
    printf 'fuzz: %-26s %4s s FINDING (see %s)\n' "$t" "$seconds" "$out/$t.log"
    return 1
  fi
}
parallel="${SRIOV_DRA_FUZZ_JOBS:-$(nproc)}"
declare -A running=()  # pid -> target
failed=()
reap() {
  local pid
  wait -n -p pid || failed+=("${running[$pid]}")
  unset "running[$pid]"
}
for t in "${targets[@]}"; do
  while ((${#running[@]} >= parallel)); do reap; done
  fuzz_one "$t" &
  running[$!]="$t"
done
while ((${#running[@]})); do reap; done
if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]}; inputs are in $out" >&2
  exit 1
fi
