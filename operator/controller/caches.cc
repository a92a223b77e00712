#include "operator/controller/caches.h"

#include "api/meta.h"
#include "core/gate_report.h"
#include "operator/decide/types.h"

namespace kc::op {

std::optional<kube::Json> Caches::Get(const std::vector<const kube::Store*>& stores,
                                      const std::string& key) {
  for (const kube::Store* s : stores) {
    if (auto obj = s->Get(key)) return obj;
  }
  return std::nullopt;
}

std::vector<kube::Json> Caches::All(const std::vector<const kube::Store*>& stores) {
  std::vector<kube::Json> out;
  for (const kube::Store* s : stores) {
    auto items = s->List();
    out.insert(out.end(), std::make_move_iterator(items.begin()),
               std::make_move_iterator(items.end()));
  }
  return out;
}

std::vector<std::string> Caches::IndexedLabels() { return {kLabelName, core::kConsumerLabel}; }

std::vector<kube::Json> Caches::ByLabel(const std::vector<const kube::Store*>& stores,
                                        const std::string& ns, const std::string& key,
                                        const std::string& value) {
  std::vector<kube::Json> out;
  const std::string index_value = key + "=" + value;
  for (const kube::Store* s : stores) {
    for (auto& obj : s->ByIndex(kube::kLabelIndex, index_value)) {
      if (api::MetaString(obj, "namespace") == ns) out.push_back(std::move(obj));
    }
  }
  return out;
}

}  // namespace kc::op
