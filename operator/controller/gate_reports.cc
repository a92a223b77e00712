#include "operator/controller/gate_reports.h"

#include "api/pod.h"
#include "core/api_types.h"

namespace kc::op {

std::vector<GateReportView> GateReportsFromPod(const Json& json) {
  std::vector<GateReportView> out;
  if (!json.is_object()) return out;
  api::Pod pod;
  from_json(json, pod);
  for (const api::ContainerStatus& cs : pod.init_container_statuses) {
    if (cs.name != core::kGateContainer) continue;
    for (const auto* term : {&cs.last_terminated, &cs.terminated}) {
      if (!term->has_value() || (*term)->message.empty()) continue;
      auto report = core::ParseGateReport((*term)->message);
      if (!report.ok()) continue;
      GateReportView v;
      v.pod = pod.metadata.name;
      v.pod_uid = pod.metadata.uid;
      v.node = pod.node_name;
      v.container_id = (*term)->container_id;
      v.report = std::move(*report);
      v.finished = (*term)->finished_at;
      out.push_back(std::move(v));
    }
  }
  return out;
}

}  // namespace kc::op
