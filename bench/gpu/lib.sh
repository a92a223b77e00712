# Shared shell helpers for bench/gpu/*.sh (sourced, not run).
# Every framework cache variable points under one fixed view path, exactly
# as in warmup and model pods (docs/webhook-env.md).
KC_VIEW_ROOT=${KC_VIEW_ROOT:-/var/run/kernelcache}
V=$KC_VIEW_ROOT/view
export TRITON_CACHE_DIR=$V/triton
export TORCHINDUCTOR_CACHE_DIR=$V/inductor
export CUDA_CACHE_PATH=$V/nv
export CUDA_CACHE_MAXSIZE=4294967296
export TRITON_CACHE_AUTOTUNING=1
export PYTHONUNBUFFERED=1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RES=${RES:-/tmp/kc-results}
mkdir -p "$RES" "$KC_VIEW_ROOT"

log() { echo "[$(date -u +%H:%M:%S)] $*"; }

# view_link DIR: the view becomes a symlink to DIR (shared mode / warmup).
view_link() { rm -rf "$V"; mkdir -p "$1"; ln -sfn "$1" "$V"; }
# view_copy DIR: the view becomes a private copy of DIR (copy mode).
view_copy() { rm -rf "$V"; cp -a "$1" "$V"; }

# run_one NAME TIMEOUT CMD...: runs one fresh model process, result in $RES/NAME.json
run_one() {
  local name=$1 to=$2; shift 2
  local t0=$(date +%s.%N)
  timeout "$to" "$@" --out "$RES/$name.json" > "$RES/$name.log" 2>&1
  local rc=$?
  local t1=$(date +%s.%N)
  log "$name rc=$rc wall=$(python3 -c "print(round($t1-$t0,2))")s"
  [ $rc -ne 0 ] && tail -5 "$RES/$name.log"
  return $rc
}

# run_four NAME TIMEOUT DIRS_MODE CMD...: four processes at once. DIRS_MODE
# "cold": each process gets its own empty cache dirs (pods without
# KernelCache); "view": all four read through the view.
run_four() {
  local name=$1 to=$2 mode=$3; shift 3
  local pids=() t0=$(date +%s.%N)
  for i in 1 2 3 4; do
    if [ "$mode" = cold ]; then
      local d=$RES/cache-$name-$i; rm -rf "$d"; mkdir -p "$d"
      TRITON_CACHE_DIR=$d/triton TORCHINDUCTOR_CACHE_DIR=$d/inductor CUDA_CACHE_PATH=$d/nv \
        timeout "$to" "$@" --out "$RES/$name-$i.json" > "$RES/$name-$i.log" 2>&1 &
    else
      timeout "$to" "$@" --out "$RES/$name-$i.json" > "$RES/$name-$i.log" 2>&1 &
    fi
    pids+=($!)
  done
  local rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  log "$name (x4) rc=$rc wall=$(python3 -c "print(round($(date +%s.%N)-$t0,2))")s"
  rm -rf "$RES"/cache-"$name"-*
  return $rc
}
