#include "api/selector.h"

#include <algorithm>

namespace kc::api {

bool SelectorMatches(const LabelSelector& selector,
                     const std::map<std::string, std::string>& labels) {
  for (const auto& [k, v] : selector.match_labels) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  for (const auto& req : selector.match_expressions) {
    auto it = labels.find(req.key);
    const bool has = it != labels.end();
    const bool in =
        has && std::find(req.values.begin(), req.values.end(), it->second) != req.values.end();
    if (req.op == "In") {
      if (!in) return false;
    } else if (req.op == "NotIn") {
      if (in) return false;
    } else if (req.op == "Exists") {
      if (!has) return false;
    } else if (req.op == "DoesNotExist") {
      if (has) return false;
    } else {
      return false;
    }
  }
  return true;
}

LabelSelector LabelSelectorFromJson(const Json& j, const std::string& path, FieldErrors* errors) {
  LabelSelector s;
  ReadStringMap(j, "matchLabels", path, errors, &s.match_labels);
  std::vector<Json> exprs;
  ReadObjectList(j, "matchExpressions", path, errors, &exprs);
  for (size_t i = 0; i < exprs.size(); ++i) {
    const std::string ep = JoinPath(path, "matchExpressions[" + std::to_string(i) + "]");
    LabelSelectorRequirement r;
    ReadString(exprs[i], "key", ep, errors, &r.key);
    ReadString(exprs[i], "operator", ep, errors, &r.op);
    ReadStringList(exprs[i], "values", ep, errors, &r.values);
    s.match_expressions.push_back(std::move(r));
  }
  return s;
}

Json LabelSelectorToJson(const LabelSelector& s) {
  Json ps = Json::object();
  if (!s.match_labels.empty()) ps["matchLabels"] = s.match_labels;
  if (!s.match_expressions.empty()) {
    Json exprs = Json::array();
    for (const auto& r : s.match_expressions) {
      Json e = {{"key", r.key}, {"operator", r.op}};
      if (!r.values.empty()) e["values"] = r.values;
      exprs.push_back(std::move(e));
    }
    ps["matchExpressions"] = std::move(exprs);
  }
  return ps;
}

}  // namespace kc::api
