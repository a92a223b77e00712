// Builders for the objects the operator creates: the warmup Job of one
// fingerprint, the GC Job, and the cache PVC. Pure: JSON in, JSON out.
//
// Warmup pod (restartPolicy Never, one GPU, owned by the KernelCache):
//   init "prepare": <initwarm image> initwarm prepare --root=/var/cache/kernelcache
//        --view=/var/run/kernelcache/view --fingerprint=<id> --staging-id=$(KC_JOB_UID)
//        [--break-lock-of=<uid,...>]: the uids of this fingerprint's earlier warmup
//        Jobs that are finished or gone (`break_lock_of`), whose lock prepare may
//        break at once (a failed warmup never reaches seal, which would release it)
//   init "warmup":  <spec.image> spec.warmup.command/args; env = spec.warmup.env
//        (minus the cache-view names) + the cache-view environment + KC_WARMUP_SHAPES
//        (JSON array of spec.warmup.shapes) + KC_FINGERPRINT + KC_NODE_NAME;
//        resources = spec.warmup.resources with nvidia.com/gpu limited to 1.
//   main "seal":    <initwarm image> initwarm seal --root=... --fingerprint=<id>
//        --staging-id=$(KC_JOB_UID) --termination-log=/dev/termination-log --replace,
//        env KC_NODE_FACTS / KC_RUNTIME_FACTS (core/manifest.h JSON) so seal recomputes
//        the fingerprint, refuses a mismatch and records the inputs in the manifest;
//        --replace: a purge re-warm or a retry after a lost result replaces (and
//        quarantines) a READY cache of the same fingerprint;
//        nvidia.com/gpu: 1 as well (the kubelet hands it the init container's
//        device, so seal can cross-check the node with the probe; the pod
//        still asks for one GPU: max(init, sum(main))).
//   volumes: "cache" = the claim at /var/cache/kernelcache, "run" = emptyDir at
//        /var/run/kernelcache.
//   placement: pod nodeSelector = spec.nodeSelector; required node affinity
//        with, for each distinct fingerprint label set of the eligible nodes,
//        two terms (terms are ORed, expressions within a term ANDed):
//          labels In [value] AND gpu-driver-upgrade-state DoesNotExist
//          labels In [value] AND gpu-driver-upgrade-state In ["", "upgrade-done"]
//        so the Job never lands on a node in a driver upgrade. Cordoned and
//        NotReady nodes are the scheduler's to avoid.
// KC_JOB_UID comes from the downward API (label
// batch.kubernetes.io/controller-uid), so a retried Job stages elsewhere.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/api_types.h"
#include "operator/decide/types.h"

namespace kc::op {

inline constexpr char kCacheMountPath[] = "/var/cache/kernelcache";
inline constexpr char kRunMountPath[] = "/var/run/kernelcache";
inline constexpr char kViewPath[] = "/var/run/kernelcache/view";

// The cache-view environment: core::CacheViewEnv() (core/cache_env.h),
// shared with the admission webhook.

// metadata.ownerReferences entry pointing at the KernelCache (controller).
Json OwnerReference(const core::KernelCache& kc);

// The warmup Job for fingerprint `fp_id` of node part `node`. `label_sets`:
// the core::FingerprintLabels of the fingerprint's eligible nodes
// (deduplicated by the caller; must not be empty).
Json BuildWarmupJob(const core::KernelCache& kc, const std::string& fp_id,
                    const core::NodeFacts& node, int32_t warm_generation,
                    const std::vector<std::map<std::string, std::string>>& label_sets,
                    const Settings& settings, const std::vector<std::string>& break_lock_of = {});

// `initwarm gc --root=/var/cache/kernelcache --remove=<id>[:<digest>] ...`:
// removes exactly the listed fingerprints' caches (a published one only
// while its READY still holds the recorded manifest digest, so neither a
// cache sealed after this Job was made nor another KernelCache's on a
// shared claim is touched) and their leftovers. `remove`: fingerprint ->
// status manifestDigest ("" when none was recorded: only leftovers go).
// The ids are recorded in the annotation kernelcache.io/gc-fingerprints
// (and name the Job). `break_lock_of`: the dead warmup owners of those
// fingerprints (decide_fingerprint.h DeadOwners), `--break-lock-of=<uids>`:
// their locks and staging go at once.
Json BuildGcJob(const core::KernelCache& kc, const std::map<std::string, std::string>& remove,
                const Settings& settings, const std::vector<std::string>& break_lock_of = {});

// The harvest Job of fingerprint `fp_id` (spec.harvest.mode Merge): one
// container "harvest", `initwarm harvest --root=/var/cache/kernelcache
// --fingerprint=<id> --base-digest=<digest> <the caps>`, the accept list in
// env KC_HARVEST_ACCEPT, KC_JOB_UID from the downward API (lock owner and
// staging name); no GPU, no node affinity (any node that mounts the claim);
// the warmup's users and groups; backoffLimit 0 (a failed merge is recorded
// and tried again after spec.harvest.interval). Labels: component harvest
// and the fingerprint.
Json BuildHarvestJob(const core::KernelCache& kc, const std::string& fp_id,
                     const std::string& base_digest, const std::string& accept_json,
                     const core::HarvestCaps& caps, const Settings& settings);

// The ReadWriteMany claim "<kc>-cache" of spec.storage.size (and class).
Json BuildPvc(const core::KernelCache& kc);

}  // namespace kc::op
