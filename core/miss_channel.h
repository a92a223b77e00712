// The miss channel: how a gated pod's miss watcher (the `kernelcache-misses`
// native sidecar running `initwarm misses --report-url ...`) tells the
// operator what its serving processes compiled after the gate, without
// giving the model pod any API credentials.
//
//   POST <the gate's --resolve-url base>/v1/misses
//   Authorization: Bearer <the pod's projected ServiceAccount token,
//                          audience kMissTokenAudience>
//   Content-Type: application/json
//   body: core::MissReportToJson(report)  (core/miss_report.h), at most
//         kMaxMissReportBytes; the full current set of the pod's misses,
//         so a report is idempotent and a restarted operator relearns it.
//
//   200 {"accepted": <misses counted>, "new": <not reported before>}
//   400 {"error"}  the body is not a miss report (names the field)
//   401 {"error"}  no token, or TokenReview did not authenticate it
//   403 {"error"}  the token's pod is not a pod this operator knows was
//                  gated Warm by a KernelCache (or not for that fingerprint),
//                  or that KernelCache's status does not list the gate's
//                  fingerprint and manifest digest
//   413            body too large
//   429 {"error"}  too many reports wait for a TokenReview; retry later
//
// The operator checks the token with a TokenReview for kMissTokenAudience
// and takes the pod's name and uid from the review's extra fields
// (kPodNameExtra, kPodUidExtra); the KernelCache and fingerprint come from
// that pod's own labels and gate report, never from the body.
// The webhook mounts the token (a projected serviceAccountToken volume) only
// into the watcher container. Pure constants.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kc::core {

inline constexpr char kMissReportPath[] = "/v1/misses";
inline constexpr char kMissTokenAudience[] = "kernelcache.io";
inline constexpr char kMissTokenVolume[] = "kernelcache-token";
inline constexpr char kMissTokenDir[] = "/var/run/secrets/kernelcache.io";
inline constexpr char kMissTokenFile[] = "/var/run/secrets/kernelcache.io/token";
inline constexpr std::int64_t kMissTokenExpirationSeconds = 3600;
inline constexpr std::size_t kMaxMissReportBytes = 256 * 1024;
inline constexpr char kPodNameExtra[] = "authentication.kubernetes.io/pod-name";
inline constexpr char kPodUidExtra[] = "authentication.kubernetes.io/pod-uid";

}  // namespace kc::core
