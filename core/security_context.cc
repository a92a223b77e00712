#include "core/security_context.h"

#include <algorithm>

namespace kc::core {
namespace {

// A positive integer field of `sc`, or 0 when absent, malformed or root.
int64_t Id(const Json& sc, const char* key) {
  if (!sc.is_object()) return 0;
  auto it = sc.find(key);
  if (it == sc.end() || !it->is_number_integer()) return 0;
  const int64_t v = it->get<int64_t>();
  return v >= kMinSecurityId && v <= kMaxSecurityId ? v : 0;
}

const Json& Field(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

Json LockedDownContainer() {
  return {{"allowPrivilegeEscalation", false},
          {"capabilities", {{"drop", Json::array({"ALL"})}}},
          {"runAsNonRoot", true}};
}

}  // namespace

int64_t CacheGroup(const KernelCacheSpec& spec) {
  return spec.security_context.fs_group.value_or(kDefaultCacheGroup);
}

int64_t WarmupUid(const KernelCacheSpec& spec) {
  return spec.security_context.run_as_user.value_or(kInitwarmUid);
}

PodSecurity WarmupPodSecurity(const KernelCacheSpec& spec) {
  const int64_t group = CacheGroup(spec);
  PodSecurity s;
  s.pod = {{"runAsUser", WarmupUid(spec)},
           {"runAsGroup", group},
           {"runAsNonRoot", true},
           {"fsGroup", group},
           {"fsGroupChangePolicy", "OnRootMismatch"},
           {"seccompProfile", {{"type", "RuntimeDefault"}}}};
  s.container = LockedDownContainer();
  return s;
}

GateSecurity ModelPodSecurity(const KernelCacheSpec& spec, const Json& pod_spec) {
  const int64_t group = CacheGroup(spec);
  const Json& pod_sc = Field(pod_spec, "securityContext");
  // The app's ids: the first container's own, else the pod's.
  const Json& containers = Field(pod_spec, "containers");
  static const Json kNone;
  const Json& app_sc = containers.is_array() && !containers.empty()
                           ? Field(containers[0], "securityContext")
                           : kNone;
  int64_t uid = Id(app_sc, "runAsUser");
  if (uid == 0) uid = Id(pod_sc, "runAsUser");
  int64_t gid = Id(app_sc, "runAsGroup");
  if (gid == 0) gid = Id(pod_sc, "runAsGroup");

  GateSecurity g;
  g.container = LockedDownContainer();
  // The gate writes only to the view emptyDir and the cache volume.
  g.container["readOnlyRootFilesystem"] = true;
  g.container["seccompProfile"] = {{"type", "RuntimeDefault"}};
  g.container["runAsUser"] = uid != 0 ? uid : kInitwarmUid;
  g.container["runAsGroup"] = gid != 0 ? gid : group;

  const Json& groups = Field(pod_sc, "supplementalGroups");
  if (groups.is_array()) {
    for (const auto& v : groups) {
      if (v.is_number_integer()) g.supplemental_groups.push_back(v.get<int64_t>());
    }
  }
  const bool has = std::find(g.supplemental_groups.begin(), g.supplemental_groups.end(), group) !=
                   g.supplemental_groups.end();
  if (!has && Id(pod_sc, "fsGroup") != group) g.supplemental_groups.push_back(group);
  return g;
}

Json MissWatcherSecurity(const KernelCacheSpec& spec, int64_t watcher_uid) {
  Json c = LockedDownContainer();
  c["readOnlyRootFilesystem"] = true;
  c["seccompProfile"] = {{"type", "RuntimeDefault"}};
  c["runAsUser"] = watcher_uid;
  c["runAsGroup"] = CacheGroup(spec);
  return c;
}

std::vector<int64_t> StatedUids(const Json& pod_spec) {
  std::vector<int64_t> out;
  auto add = [&out](const Json& sc) {
    const Json& v = Field(sc, "runAsUser");
    if (v.is_number_integer()) out.push_back(v.get<int64_t>());
  };
  add(Field(pod_spec, "securityContext"));
  for (const char* list : {"initContainers", "containers"}) {
    const Json& cs = Field(pod_spec, list);
    if (!cs.is_array()) continue;
    for (const Json& c : cs) add(Field(c, "securityContext"));
  }
  return out;
}

std::string ExportFix(std::string_view root, int64_t uid, int64_t gid) {
  // The commands come first: the operator shows a failed container's
  // message cut to ~300 characters (the fingerprint's lastFailure).
  const std::string g = std::to_string(gid);
  return "the cache volume at " + std::string(root) + " is not writable by uid " +
         std::to_string(uid) + " gid " + g +
         "; fix the export once, as root on the storage server or in any pod that mounts it: "
         "`chgrp " +
         g + " <export> && chmod 2775 <export>` (or `chown " + std::to_string(uid) + ":" + g +
         " <export>`), or set spec.securityContext.fsGroup to a group that may write it. A "
         "fresh NFS export or hostPath is usually root:root 0755 and fsGroup does not apply to "
         "it; with root-squashing NFS only the export's own owner and mode help. See "
         "docs/permissions.md";
}

}  // namespace kc::core
