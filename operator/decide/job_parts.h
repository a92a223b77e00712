// The parts every Job the operator builds shares (operator/decide/
// warmup_job.h, server_warmup_job.h): labels, the initwarm container, the
// cache and run volumes, the warmup node affinity, the security context,
// the service account policy and the Job shell around a pod.
// Pure: JSON in, JSON out.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/api_types.h"
#include "operator/decide/types.h"

namespace kc::op {

// The names of the cache volume (the claim) and the run volume (an emptyDir
// holding the view symlink): "cache" and "run" in the operator's own pods;
// the server form's pod uses "kc-cache" and "kc-run" beside the template's
// volumes.
struct VolumeNames {
  std::string cache = "cache";
  std::string run = "run";
};
inline const VolumeNames kServerVolumes{"kc-cache", "kc-run"};

// The labels of everything the operator creates for a KernelCache.
Json Labels(const core::KernelCache& kc, const std::string& component);
// The claim at the cache mount and an emptyDir at the run mount.
Json Volumes(const core::KernelCache& kc, const VolumeNames& names = {});
Json Mounts(const VolumeNames& names = {});
// KC_JOB_UID, KC_NODE_NAME and KC_POD_NAME from the downward API.
Json DownwardEnv();
// An initwarm container: `initwarm <args>` with the downward env, both
// mounts and a termination log.
Json InitwarmContainer(const std::string& name, const Settings& settings,
                       std::vector<std::string> args, const VolumeNames& names = {});
// Required node affinity: any of the fingerprint label sets, never on a
// node in a driver upgrade.
Json Affinity(const std::vector<std::map<std::string, std::string>>& label_sets);
// Every container non-root, no privilege escalation, no capabilities; the
// pod as the KernelCache's warmup uid with the cache group.
void Secure(const core::KernelCache& kc, Json& pod);
Json JobShell(const core::KernelCache& kc, const std::string& name, Json labels, Json annotations,
              Json pod_spec, int64_t deadline, int32_t backoff);
// No ServiceAccount token unless --warmup-service-account names an account.
void ServiceAccount(const Settings& settings, Json& pod);

}  // namespace kc::op
