// The warmup pod of the server form (spec.warmup.server): the model's own
// pod template run once per fingerprint, driven by requests. Pure.
//
//   init "prepare":    as in the command form (staging, view, lock), volumes
//                      kc-cache and kc-run.
//   the template's init containers, unchanged but for the security context.
//   every template container as a native sidecar (restartPolicy Always), in
//   order: probes removed (a slow first compile is not a dead server; the
//   driver waits for readiness itself), hostPort/hostIP removed, the cache
//   view environment set (over any the template had), KC_FINGERPRINT and
//   KC_NODE_NAME added, the cache and run volumes mounted; resources (GPUs
//   included) kept.
//   main "seal":       `initwarm drive --port=<p> [--ready-path=<path>]
//                      --timeout=<0.9 x activeDeadlineSeconds>
//                      --request-timeout=<requestTimeoutSeconds> --view=...
//                      --termination-log=/dev/termination-log -- seal <the
//                      command form's seal flags>`, env KC_WARMUP_REQUESTS
//                      (core::PlanWarmupCalls), KC_NODE_FACTS,
//                      KC_RUNTIME_FACTS; no GPU of its own. When it exits the
//                      kubelet stops the sidecars; the pod's outcome is the
//                      driver's.
//   pod: the template's volumes, imagePullSecrets, runtimeClassName,
//   schedulerName, dnsPolicy, dnsConfig, hostAliases, enableServiceLinks,
//   terminationGracePeriodSeconds, resourceClaims, serviceAccountName and
//   automountServiceAccountToken (else the operator's policy); nodeSelector
//   and tolerations merged with the KernelCache's; our node affinity,
//   priority class and security context. Not kept: the template's labels
//   (no Service selects the warmup pod), annotations, affinity, spread
//   constraints, hostname, restartPolicy.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/api_types.h"
#include "core/job_args.h"
#include "operator/decide/types.h"

namespace kc::op {

// The pod spec of a server warmup; `seal` is the seal `initwarm drive` runs
// after "--" (core/job_args.h); `node_facts`/`runtime_facts` its KC_NODE_FACTS/KC_RUNTIME_FACTS.
// The template must have passed core::CheckServerTemplate (a template that
// has not gives a pod with only the prepare and seal containers, which the
// API server or the driver refuses, never a crash).
Json BuildServerWarmupPod(const core::KernelCache& kc, const std::string& fp_id,
                          const std::vector<std::string>& prepare_args, const core::SealArgs& seal,
                          const std::string& node_facts, const std::string& runtime_facts,
                          const std::vector<std::map<std::string, std::string>>& label_sets,
                          const Settings& settings);

}  // namespace kc::op
