#include "operator/webhook/miss_watcher.h"

#include <string>

#include "api/meta.h"
#include "base/duration.h"
#include "core/layout.h"
#include "core/miss_channel.h"

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

Json BuildMissWatcher(const Json& gate, std::chrono::seconds interval,
                      const std::string& report_url, const std::optional<WatcherHarvest>& harvest) {
  Json args = Json::array({"misses", "--view", std::string(core::kDefaultView), "--interval",
                           std::to_string(interval.count()) + "s"});
  if (!report_url.empty()) {
    for (const std::string& a : {std::string("--report-url"), report_url,
                                 std::string("--token-file"), std::string(core::kMissTokenFile)}) {
      args.push_back(a);
    }
    if (harvest) {
      for (const std::string& a :
           {std::string("--inbox"), std::string(kInboxMountPath),
            std::string("--harvest-max-files"), std::to_string(harvest->max_files),
            std::string("--harvest-max-bytes"), harvest->max_bytes}) {
        args.push_back(a);
      }
    }
  }
  Json w = {
      {"name", kMissWatcherName},
      {"image", gate.value("image", "")},
      {"imagePullPolicy", gate.value("imagePullPolicy", "IfNotPresent")},
      {"command", Json::array({"initwarm"})},
      {"args", std::move(args)},
      {"restartPolicy", "Always"},
      {"resources",
       {{"requests", {{"cpu", "10m"}, {"memory", "16Mi"}}}, {"limits", {{"memory", "128Mi"}}}}}};
  for (const char* key : {"volumeMounts", "securityContext"}) {
    if (gate.contains(key)) w[key] = gate[key];
  }
  if (!report_url.empty()) {
    if (!w["volumeMounts"].is_array()) w["volumeMounts"] = Json::array();
    w["volumeMounts"].push_back({{"name", core::kMissTokenVolume},
                                 {"mountPath", std::string(core::kMissTokenDir)},
                                 {"readOnly", true}});
    if (harvest) {
      w["volumeMounts"].push_back({{"name", harvest->volume}, {"mountPath", kInboxMountPath}});
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
