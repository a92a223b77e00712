#!/usr/bin/env bash
# bench/scale/heaptrack_operator.sh: kernelcache-operator under heaptrack, for
# run.sh --operator (a heap profile of a scale run; its timings and RSS are
# heaptrack's, not the operator's). heaptrack runs in a session of its own,
# so the rig's stop (SIGTERM to this script's process group) reaches only
# this script, which stops the operator and waits for heaptrack to write
# its file. Each start (the rig restarts the operator once) writes one file.
#
#   KC_OPERATOR=build/operator/kernelcache-operator KC_HEAP_OUT=/tmp/heap \
#     bench/scale/run.sh --nodes 1000 --kcs 200 --only ours --operator bench/scale/heaptrack_operator.sh
#   heaptrack_print -f /tmp/heap-<pid>.zst --flamegraph-cost-type peak -F stacks.txt
set -uo pipefail
operator="${KC_OPERATOR:?set KC_OPERATOR to the kernelcache-operator binary}"
out="${KC_HEAP_OUT:?set KC_HEAP_OUT to the heaptrack file prefix}"
command -v heaptrack >/dev/null || { echo "heaptrack_operator.sh: heaptrack not found (apt-get install heaptrack)" >&2; exit 1; }
[[ -x "$operator" ]] || { echo "heaptrack_operator.sh: KC_OPERATOR=$operator is not an executable" >&2; exit 1; }
setsid heaptrack -o "$out-$$" "$operator" "$@" </dev/null &
hp=$!
trap 'pkill -TERM -f "^$operator " ; wait "$hp"; exit 0' TERM
wait "$hp"
