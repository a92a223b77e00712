#include "operator/webhook/miss_watcher.h"

#include <string>

#include "api/meta.h"
#include "base/duration.h"
#include "core/job_args.h"
#include "core/layout.h"
#include "core/miss_channel.h"
#include "core/security_context.h"

namespace kc::webhook {

using Json = nlohmann::json;

StatusOr<std::optional<std::chrono::seconds>> MissWatchInterval(const Json& pod) {
  const api::ObjectMeta meta = api::MetaOf(pod);
  auto it = meta.annotations.find(kAnnotationWatchMisses);
  if (it == meta.annotations.end() || it->second == "false") return std::nullopt;
  if (it->second == "true") return kDefaultMissWatchInterval;
  auto d = ParseDuration(it->second, kInitwarmDurations);
  if (d.ok() && *d >= kMinMissWatchInterval && *d <= kMaxMissWatchInterval) return *d;
  return InvalidArgumentError(std::string("annotation ") + kAnnotationWatchMisses + ": \"" +
                              it->second.substr(0, 64) +
                              "\" is not \"true\", \"false\" or a duration from 5s to 1h "
                              "(for example \"30s\")");
}

std::string HarvestRefusal(const Json& pod_spec, int64_t watcher_uid) {
  if (!pod_spec.is_object()) return "";
  if (auto it = pod_spec.find("shareProcessNamespace"); it != pod_spec.end() && *it == true) {
    return "the pod shares its process namespace (spec.shareProcessNamespace: true), so its "
           "containers could reach the miss watcher's writable inbox through /proc; set it to "
           "false to harvest";
  }
  // Every container but the watcher itself (a reinvocation sees it).
  Json others = pod_spec;
  if (auto it = others.find("initContainers"); it != others.end() && it->is_array()) {
    Json kept = Json::array();
    for (const Json& c : *it) {
      if (!c.is_object() || c.value("name", Json()) != kMissWatcherName) kept.push_back(c);
    }
    *it = std::move(kept);
  }
  for (int64_t uid : core::StatedUids(others)) {
    if (uid == watcher_uid) {
      return "a container of the pod runs as uid " + std::to_string(uid) +
             ", the miss watcher's own (operator --miss-watcher-uid); run it as another uid "
             "to harvest";
    }
  }
  return "";
}

Json BuildMissWatcher(const Json& gate, const Json& security, std::chrono::seconds interval,
                      const std::string& report_url, const std::optional<WatcherHarvest>& harvest) {
  core::MissesArgs a;
  a.interval = interval;
  if (!report_url.empty()) {
    a.report_url = report_url;
    a.token_file = core::kMissTokenFile;
    if (harvest) {
      a.inbox = kInboxMountPath;
      a.harvest_max_files = harvest->max_files;
      a.harvest_max_bytes = harvest->max_bytes;
    }
  }
  Json w = {
      {"name", kMissWatcherName},
      {"image", gate.value("image", "")},
      {"imagePullPolicy", gate.value("imagePullPolicy", "IfNotPresent")},
      {"command", Json::array({"initwarm"})},
      {"args", core::MissesArgv(a)},
      {"restartPolicy", "Always"},
      {"resources",
       {{"requests", {{"cpu", "10m"}, {"memory", "16Mi"}}}, {"limits", {{"memory", "128Mi"}}}}},
      {"securityContext", security}};
  // The gate's mounts (the view and the cache it points into), every one
  // read-only: the watcher only reads them.
  w["volumeMounts"] = Json::array();
  if (const auto it = gate.find("volumeMounts"); it != gate.end() && it->is_array()) {
    for (Json m : *it) {
      if (!m.is_object()) continue;
      m["readOnly"] = true;
      w["volumeMounts"].push_back(std::move(m));
    }
  }
  if (!report_url.empty()) {
    w["volumeMounts"].push_back({{"name", core::kMissTokenVolume},
                                 {"mountPath", std::string(core::kMissTokenDir)},
                                 {"readOnly", true}});
    if (harvest) {
      // Only the volume's inbox root (a subPath), writable: never the
      // published caches, READY files, locks or other caches of the claim.
      w["volumeMounts"].push_back({{"name", harvest->volume},
                                   {"mountPath", kInboxMountPath},
                                   {"subPath", core::Layout::InboxSubPath()}});
      w["env"] = Json::array(
          {{{"name", "KC_POD_UID"},
            {"valueFrom", {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", "metadata.uid"}}}}}}});
    }
  }
  return w;
}

Json MissTokenVolume() {
  const Json token = {{"audience", core::kMissTokenAudience},
                      {"expirationSeconds", core::kMissTokenExpirationSeconds},
                      {"path", "token"}};
  Json sources = Json::array();
  sources.push_back({{"serviceAccountToken", token}});
  return {{"name", core::kMissTokenVolume}, {"projected", {{"sources", std::move(sources)}}}};
}

}  // namespace kc::webhook
