// Gate reports: what the `kernelcache-wait` init container of a gated model
// pod (label kernelcache.io/consumer=<KernelCache>) reported, read from the
// kubelet-written pod status: initContainerStatuses[name=kernelcache-wait]
// .state.terminated.message and .lastState.terminated.message (a pod of a
// Deployment restarts a failed gate; the report of the attempt before
// stays in lastState). Messages that do not parse as a core::GateReport are
// skipped (an older initwarm, or a container that wrote nothing). Each view
// names its gate run (the pod's uid, the run's containerID, finishedAt), so
// the gate metrics count it once (operator/controller/gate_metrics.h).
// Pure: no I/O.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "operator/decide/types.h"

namespace kc::op {

std::vector<GateReportView> GateReportsFromPod(const Json& pod);

}  // namespace kc::op
