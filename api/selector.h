// metav1.LabelSelector: the struct, its JSON, and matching labels against it.
// Pure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/json_read.h"

namespace kc::api {

struct LabelSelectorRequirement {
  std::string key;
  std::string op;  // "operator": In | NotIn | Exists | DoesNotExist
  std::vector<std::string> values;
  friend bool operator==(const LabelSelectorRequirement&,
                         const LabelSelectorRequirement&) = default;
};

struct LabelSelector {
  std::map<std::string, std::string> match_labels;          // "matchLabels"
  std::vector<LabelSelectorRequirement> match_expressions;  // "matchExpressions"
  bool empty() const { return match_labels.empty() && match_expressions.empty(); }
  friend bool operator==(const LabelSelector&, const LabelSelector&) = default;
};

// True when `labels` satisfy `selector` (metav1.LabelSelector semantics; an
// empty selector matches everything; an unknown operator matches nothing).
bool SelectorMatches(const LabelSelector& selector,
                     const std::map<std::string, std::string>& labels);

// `path` names the selector object for errors ("spec.podSelector").
LabelSelector LabelSelectorFromJson(const Json& j, const std::string& path = "",
                                    FieldErrors* errors = nullptr);
// Always an object; empty parts are omitted.
Json LabelSelectorToJson(const LabelSelector& s);

}  // namespace kc::api
