// Users and permissions: which uid and gid every KernelCache container runs
// as, and the modes of what initwarm writes (docs/permissions.md). Pure.
//
// The contract in one paragraph: every cache directory belongs to the
// *cache group* (spec.securityContext.fsGroup, default 65532) and is
// setgid and group-writable (2775), so any process in that group can
// create, publish, quarantine and remove caches whatever its uid; sealed
// files are 0644 (nobody but their owner may change them; the manifest
// digest catches any change anyway). Warmup and GC pods run as
// spec.securityContext.runAsUser (default 65532, the initwarm image's user)
// with the cache group as primary group and fsGroup. A model pod's gate runs
// as the app containers' uid/gid with the cache group as a supplemental
// group, so the view it builds is theirs.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/api_types.h"

namespace kc::core {

// The initwarm image's USER (images/Dockerfile.initwarm) and the default
// cache group.
inline constexpr int64_t kInitwarmUid = 65532;
inline constexpr int64_t kDefaultCacheGroup = 65532;

// The miss watcher's default uid: one of its own, never the app's
// (operator --miss-watcher-uid).
inline constexpr int64_t kDefaultMissWatcherUid = 65533;

// Modes initwarm gives what it creates.
inline constexpr unsigned kCacheDirMode = 02775;   // every directory: setgid, group-writable
inline constexpr unsigned kSealedFileMode = 0644;  // published files: read-only but for the owner
inline constexpr unsigned kCopyFileMode = 0664;    // a Copy-mode view: the app may rewrite it

// spec.securityContext.fsGroup, else kDefaultCacheGroup.
int64_t CacheGroup(const KernelCacheSpec& spec);
// spec.securityContext.runAsUser, else kInitwarmUid.
int64_t WarmupUid(const KernelCacheSpec& spec);

struct PodSecurity {
  Json pod;        // the pod's securityContext (PodSecurityContext)
  Json container;  // every container's securityContext
};

// Warmup and GC Job pods: pod {runAsUser: WarmupUid, runAsGroup:
// CacheGroup, fsGroup: CacheGroup, fsGroupChangePolicy: OnRootMismatch,
// runAsNonRoot, seccompProfile RuntimeDefault}; containers
// {allowPrivilegeEscalation: false, capabilities.drop [ALL], runAsNonRoot}.
// One uid for prepare, the user's warmup and seal, so seal owns (and can
// normalise the modes of) everything it publishes.
PodSecurity WarmupPodSecurity(const KernelCacheSpec& spec);

struct GateSecurity {
  // The gate (`initwarm wait`) init container's securityContext: the app
  // containers' runAsUser/runAsGroup when the pod states them (and they are
  // not root), else kInitwarmUid / the cache group; no privilege escalation,
  // no capabilities, non-root.
  Json container;
  // The pod's securityContext.supplementalGroups to set: the pod's own plus
  // the cache group (unless it is already the pod's fsGroup), so every
  // container of the pod, whatever its uid, may read the cache and write a
  // Copy-mode view.
  std::vector<int64_t> supplemental_groups;
};

// `pod_spec`: the model pod's spec (its securityContext and containers[]).
GateSecurity ModelPodSecurity(const KernelCacheSpec& spec, const Json& pod_spec);

// The miss watcher's securityContext: runAsUser `watcher_uid` (its own, so
// the app's processes cannot reach its mounts, its token or its inbox
// through /proc/<pid>/root, which needs the same uid), runAsGroup the cache
// group (it reads the view and writes the inbox), a read-only root file
// system, no privilege escalation, no capabilities, non-root.
Json MissWatcherSecurity(const KernelCacheSpec& spec, int64_t watcher_uid);

// The uids `pod_spec` states (the pod's runAsUser, every container's and
// init container's), root included; what an image's USER picks is unknown
// here.
std::vector<int64_t> StatedUids(const Json& pod_spec);

// What to tell the user when the cache volume's `root` is not writable by
// `uid`/`gid` (typically an NFS export or hostPath owned by root, 0755,
// where fsGroup does not apply): the exact commands and the spec field.
std::string ExportFix(std::string_view root, int64_t uid, int64_t gid);

}  // namespace kc::core
