# Shell functions that walk a node through a GPU driver upgrade the way the
# GPU Operator's upgrade controller does (k8s-operator-libs, in-place mode,
# drain disabled as by default): the label nvidia.com/gpu-driver-upgrade-state
# through its states, the cordon and the uncordon, and the driver labels
# GPU Feature Discovery rewrites once the new driver runs. Shared by
# scripts/demo.sh and tests/node/driver_upgrade_test.sh. Sourced; needs
# $kubectl.
#
#   gpu_upgrade_start <node>     upgrade-required, cordon-required (cordon),
#                                wait-for-jobs-required, pod-deletion-required,
#                                drain-required; prints the resourceVersion
#                                the node got with the cordon
#   gpu_upgrade_state <node> <state>
#   gpu_driver_labels <node> <driver>  e.g. 580.200.01: what GFD relabels
#   gpu_upgrade_finish <node>    validation-required, uncordon-required
#                                (uncordon), upgrade-done; prints the
#                                resourceVersion the node got with upgrade-done
GPU_UPGRADE_STATE_LABEL=nvidia.com/gpu-driver-upgrade-state

gpu_upgrade_state() {
  "$kubectl" label node "$1" "$GPU_UPGRADE_STATE_LABEL=$2" --overwrite >/dev/null
}

gpu_upgrade_start() {
  local s rv
  gpu_upgrade_state "$1" upgrade-required
  gpu_upgrade_state "$1" cordon-required
  # The cordon (kubectl cordon's patch), keeping its resourceVersion.
  rv=$("$kubectl" patch node "$1" -p '{"spec":{"unschedulable":true}}' -o jsonpath='{.metadata.resourceVersion}')
  # Pod deletion concerns pods that use nvidia.com/gpu; drain is off by default.
  for s in wait-for-jobs-required pod-deletion-required drain-required; do gpu_upgrade_state "$1" "$s"; done
  echo "$rv"
}

gpu_driver_labels() {
  local major minor rev
  IFS=. read -r major minor rev <<<"$2"
  "$kubectl" label node "$1" --overwrite >/dev/null \
    "nvidia.com/cuda.driver-version.full=$2" "nvidia.com/cuda.driver-version.major=$major" \
    "nvidia.com/cuda.driver-version.minor=$minor" "nvidia.com/cuda.driver-version.revision=$rev"
}

gpu_upgrade_finish() {
  gpu_upgrade_state "$1" validation-required
  gpu_upgrade_state "$1" uncordon-required
  "$kubectl" uncordon "$1" >/dev/null
  "$kubectl" label node "$1" "$GPU_UPGRADE_STATE_LABEL=upgrade-done" --overwrite \
    -o jsonpath='{.metadata.resourceVersion}'
}
