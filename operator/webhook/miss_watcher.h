// The miss watcher: an opt-in native sidecar (an init container with
// restartPolicy Always, started after the gate) that runs
// `initwarm misses --interval <d>` on the pod's view, so the pod's log says,
// one line per runtime miss, what its serving processes compiled after the
// gate. A pod asks for it with the annotation
//   kernelcache.io/watch-misses: "true"   (every 30 s)
//                                "<duration>"   (5s to 1h, e.g. "10s", "2m")
//                                "false" or absent: none.
// When the gate reaches the operator (--resolve-url), the watcher also
// reports the pod's misses there (core/miss_channel.h): it gets
// `--report-url <that URL> --token-file <core::kMissTokenFile>` and the
// pod a projected ServiceAccount token volume (audience
// core::kMissTokenAudience, an hour, renewed by the kubelet) that only the
// watcher mounts. With spec.harvest.mode Merge the watcher also copies what
// the pod compiled into the volume's inbox (initwarm/misses/miss_inbox.h): it gets
// `--inbox <kInboxMountPath> --harvest-max-files N --harvest-max-bytes B`,
// KC_POD_UID from the downward API, and a writable mount of the cache
// volume's inbox root only (subPath v1/.inbox) at kInboxMountPath that no
// other container of the pod has: the app containers and the gate keep
// their read-only mounts. (One volume mounted twice, not a second volume of
// the same claim: the kubelet never finishes mounting a claim that two
// volumes of one pod name.) The watcher runs as a uid of its own
// (core::MissWatcherSecurity), and a pod whose containers could reach it
// anyway (HarvestRefusal) gets a watcher that reports but never harvests.
// Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/status.h"

namespace kc::webhook {

inline constexpr char kMissWatcherName[] = "kernelcache-misses";
inline constexpr char kAnnotationWatchMisses[] = "kernelcache.io/watch-misses";
inline constexpr std::chrono::seconds kDefaultMissWatchInterval{30};
inline constexpr std::chrono::seconds kMinMissWatchInterval{5};
inline constexpr std::chrono::seconds kMaxMissWatchInterval{3600};
inline constexpr char kInboxMountPath[] = "/var/cache/kernelcache-inbox";

// What a watcher that harvests copies at most (spec.harvest's per-pod caps).
struct WatcherHarvest {
  std::string volume;  // the pod's cache volume, mounted writable for the watcher
  int64_t max_files = 0;
  std::string max_bytes;
};

// The interval `pod`'s annotation asks for; nullopt when it asks for none.
// InvalidArgument naming the annotation, the value and the accepted forms.
StatusOr<std::optional<std::chrono::seconds>> MissWatchInterval(const nlohmann::json& pod);

// Why `pod_spec` may not harvest, "" when it may: it shares its process
// namespace, or one of its containers states the watcher's uid; either way
// its processes could reach the watcher's writable inbox.
std::string HarvestRefusal(const nlohmann::json& pod_spec, int64_t watcher_uid);

// The watcher container: the gate's image and pull policy, the gate's mounts
// made read-only, `security` (core::MissWatcherSecurity); `initwarm misses
// --view <the view> --interval <n>s`, plus the report flags and the token
// mount when `report_url` is not empty; small requests; restartPolicy
// Always.
nlohmann::json BuildMissWatcher(const nlohmann::json& gate, const nlohmann::json& security,
                                std::chrono::seconds interval, const std::string& report_url,
                                const std::optional<WatcherHarvest>& harvest = std::nullopt);

// The pod volume the watcher's token comes from (name core::kMissTokenVolume).
nlohmann::json MissTokenVolume();

}  // namespace kc::webhook
