#include "operator/gate_reports.h"

#include "core/api_types.h"

namespace kc::op {

std::vector<GateReportView> GateReportsFromPod(const Json& pod) {
  std::vector<GateReportView> out;
  if (!pod.is_object()) return out;
  auto str = [](const Json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const Json& meta =
      pod.contains("metadata") && pod["metadata"].is_object() ? pod["metadata"] : Json::object();
  const Json& spec = pod.contains("spec") && pod["spec"].is_object() ? pod["spec"] : Json::object();
  auto status = pod.find("status");
  if (status == pod.end() || !status->is_object()) return out;
  auto list = status->find("initContainerStatuses");
  if (list == status->end() || !list->is_array()) return out;
  for (const Json& cs : *list) {
    if (!cs.is_object() || str(cs, "name") != core::kGateContainer) continue;
    for (const char* which : {"lastState", "state"}) {
      auto st = cs.find(which);
      if (st == cs.end() || !st->is_object()) continue;
      auto term = st->find("terminated");
      if (term == st->end() || !term->is_object()) continue;
      const std::string message = str(*term, "message");
      if (message.empty()) continue;
      auto report = core::ParseGateReport(message);
      if (!report.ok()) continue;
      GateReportView v;
      v.pod = str(meta, "name");
      v.node = str(spec, "nodeName");
      v.report = std::move(*report);
      if (auto t = core::ParseTime(str(*term, "finishedAt")); t.ok()) v.finished = *t;
      out.push_back(std::move(v));
    }
  }
  return out;
}

}  // namespace kc::op
