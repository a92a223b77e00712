#include "core/convergence.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/utf8.h"
#include "core/enum_name.h"

namespace kc::core {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kMaxDetailBytes = 1024;
constexpr std::size_t kMaxKeyBytes = 512;

bool EndsWith(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

std::string Field(const std::string& where, const char* key) {
  return where.empty() ? std::string(key) : where + "." + key;
}

Status Bad(const std::string& field, std::string_view want) {
  return InvalidArgumentError("convergence record: " + field + ": " + std::string(want));
}

StatusOr<std::uint64_t> U64(const Json& j, const std::string& where, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) {
    return Bad(Field(where, key), "want a non-negative integer");
  }
  return it->get<std::uint64_t>();
}

StatusOr<std::int64_t> I64(const Json& j, const std::string& where, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return Bad(Field(where, key), "want an integer");
  return it->get<std::int64_t>();
}

StatusOr<std::string> Str(const Json& j, const std::string& where, const char* key,
                          std::size_t max) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return Bad(Field(where, key), "want a string");
  std::string s = it->get<std::string>();
  if (s.size() > max)
    return Bad(Field(where, key), "longer than " + std::to_string(max) + " bytes");
  return s;
}

Json EntryToJson(const AddedEntry& e) {
  return {{"framework", MissFrameworkName(e.framework)}, {"key", e.key},     {"detail", e.detail},
          {"novelty", NoveltyName(e.novelty)},           {"files", e.files}, {"bytes", e.bytes}};
}

StatusOr<AddedEntry> EntryFromJson(const Json& j, const std::string& where) {
  if (!j.is_object()) return Bad(where, "want an object");
  AddedEntry e;
  KC_ASSIGN_OR_RETURN(std::string fw, Str(j, where, "framework", 64));
  auto f = ParseMissFramework(fw);
  if (!f.ok()) return Bad(where + ".framework", f.status().message());
  e.framework = *f;
  KC_ASSIGN_OR_RETURN(e.key, Str(j, where, "key", kMaxKeyBytes));
  KC_ASSIGN_OR_RETURN(e.detail, Str(j, where, "detail", kMaxDetailBytes));
  KC_ASSIGN_OR_RETURN(std::string nov, Str(j, where, "novelty", 64));
  auto n = ParseNovelty(nov);
  if (!n.ok()) return Bad(where + ".novelty", n.status().message());
  e.novelty = *n;
  KC_ASSIGN_OR_RETURN(e.files, U64(j, where, "files"));
  KC_ASSIGN_OR_RETURN(e.bytes, U64(j, where, "bytes"));
  return e;
}

StatusOr<RunRecord> RunFromJson(const Json& j, const std::string& where) {
  if (!j.is_object()) return Bad(where, "want an object");
  RunRecord r;
  KC_ASSIGN_OR_RETURN(std::int64_t index, I64(j, where, "index"));
  if (index < 0 || index > kMaxMaxPasses) return Bad(where + ".index", "out of range");
  r.index = static_cast<std::int32_t>(index);
  KC_ASSIGN_OR_RETURN(r.duration_ms, I64(j, where, "durationMs"));
  KC_ASSIGN_OR_RETURN(std::int64_t code, I64(j, where, "exitCode"));
  if (code < std::numeric_limits<std::int32_t>::min() ||
      code > std::numeric_limits<std::int32_t>::max()) {
    return Bad(where + ".exitCode", "out of range");
  }
  r.exit_code = static_cast<std::int32_t>(code);
  KC_ASSIGN_OR_RETURN(r.files_added, U64(j, where, "filesAdded"));
  KC_ASSIGN_OR_RETURN(r.bytes_added, U64(j, where, "bytesAdded"));
  KC_ASSIGN_OR_RETURN(r.entries_added, U64(j, where, "entriesAdded"));
  KC_ASSIGN_OR_RETURN(r.autotune_entries, U64(j, where, "autotuneEntries"));
  if (r.autotune_entries > r.entries_added) {
    return Bad(where + ".autotuneEntries", "more than entriesAdded");
  }
  auto bf = j.find("byFramework");
  if (bf == j.end() || !bf->is_object()) return Bad(where + ".byFramework", "want an object");
  for (const auto& [name, n] : bf->items()) {
    const std::string field = where + ".byFramework." + name.substr(0, 64);
    if (!ParseMissFramework(name).ok()) return Bad(field, "not a framework name");
    if (!n.is_number_unsigned()) return Bad(field, "want a non-negative integer");
    r.by_framework[name] = n.get<std::uint64_t>();
  }
  auto es = j.find("entries");
  if (es == j.end() || !es->is_array()) return Bad(where + ".entries", "want an array");
  if (es->size() > kMaxRecordedEntries) {
    return Bad(where + ".entries", "more than " + std::to_string(kMaxRecordedEntries));
  }
  for (std::size_t i = 0; i < es->size(); ++i) {
    KC_ASSIGN_OR_RETURN(AddedEntry e,
                        EntryFromJson((*es)[i], where + ".entries[" + std::to_string(i) + "]"));
    r.entries.push_back(std::move(e));
  }
  return r;
}

}  // namespace

std::string_view NotConvergedPolicyName(NotConvergedPolicy p) {
  return p == NotConvergedPolicy::kFail ? "Fail" : "Publish";
}

StatusOr<NotConvergedPolicy> ParseNotConvergedPolicy(std::string_view name) {
  return ParseEnumName<NotConvergedPolicy>(name, kNotConvergedPolicies, NotConvergedPolicyName);
}

std::string_view NoveltyName(Novelty n) { return n == Novelty::kAutotune ? "autotune" : "new"; }

StatusOr<Novelty> ParseNovelty(std::string_view name) {
  return ParseEnumName<Novelty>(name, kNovelties, NoveltyName);
}

std::int32_t PassesRun(const ConvergenceRecord& r) {
  return r.runs.empty() ? 0 : static_cast<std::int32_t>(r.runs.size()) - 1;
}

Novelty NoveltyOf(const RuntimeMiss& added, const std::set<std::string>& known_kernels) {
  if (added.framework == MissFramework::kTriton) {
    if (added.detail.starts_with("autotune ")) return Novelty::kAutotune;
    if (!added.kernel.empty() && known_kernels.count(added.kernel) > 0) return Novelty::kAutotune;
    return Novelty::kNew;
  }
  if (added.framework == MissFramework::kInductor && EndsWith(added.key, ".best_config")) {
    return Novelty::kAutotune;
  }
  return Novelty::kNew;
}

RunRecord RecordRun(std::int32_t index, const std::vector<RuntimeMiss>& added,
                    const std::set<std::string>& known_kernels) {
  RunRecord r;
  r.index = index;
  std::vector<AddedEntry> fresh;
  std::vector<AddedEntry> autotune;
  for (const RuntimeMiss& m : added) {
    AddedEntry e{m.framework, m.key, m.detail, NoveltyOf(m, known_kernels), m.files, m.bytes};
    r.files_added += m.files;
    r.bytes_added += m.bytes;
    ++r.entries_added;
    ++r.by_framework[std::string(MissFrameworkName(m.framework))];
    if (e.novelty == Novelty::kAutotune) {
      ++r.autotune_entries;
      autotune.push_back(std::move(e));
    } else {
      fresh.push_back(std::move(e));
    }
  }
  for (auto* list : {&fresh, &autotune}) {
    for (auto& e : *list) {
      if (r.entries.size() >= kMaxRecordedEntries) break;
      e.key = TruncateUtf8(e.key, kMaxKeyBytes);
      e.detail = TruncateUtf8(e.detail, kMaxDetailBytes);
      r.entries.push_back(std::move(e));
    }
  }
  return r;
}

PassStep NextPassStep(const std::vector<RunRecord>& runs, std::int32_t max_passes) {
  if (runs.empty()) return PassStep::kRunPass;  // the warmup itself
  const RunRecord& last = runs.back();
  if (last.exit_code != 0) return PassStep::kFailed;
  const auto passes = static_cast<std::int32_t>(runs.size()) - 1;
  if (passes >= 1 && last.entries_added == 0) return PassStep::kConverged;
  if (passes >= max_passes) return PassStep::kNotConverged;
  return PassStep::kRunPass;
}

std::string ConvergenceRecordToJson(const ConvergenceRecord& r) {
  Json runs = Json::array();
  for (const RunRecord& run : r.runs) {
    Json entries = Json::array();
    for (const AddedEntry& e : run.entries) entries.push_back(EntryToJson(e));
    Json by = Json::object();
    for (const auto& [k, v] : run.by_framework) by[k] = v;
    runs.push_back({{"index", run.index},
                    {"durationMs", run.duration_ms},
                    {"exitCode", run.exit_code},
                    {"filesAdded", run.files_added},
                    {"bytesAdded", run.bytes_added},
                    {"entriesAdded", run.entries_added},
                    {"autotuneEntries", run.autotune_entries},
                    {"byFramework", std::move(by)},
                    {"entries", std::move(entries)}});
  }
  Json j = {{"maxPasses", r.max_passes}, {"converged", r.converged}, {"runs", std::move(runs)}};
  return j.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

StatusOr<ConvergenceRecord> ParseConvergenceRecord(std::string_view json) {
  Json j = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Bad("(document)", "not a JSON object");
  ConvergenceRecord r;
  KC_ASSIGN_OR_RETURN(std::int64_t max, I64(j, "", "maxPasses"));
  if (max < 0 || max > kMaxMaxPasses) {
    return Bad("maxPasses", "want 0.." + std::to_string(kMaxMaxPasses));
  }
  r.max_passes = static_cast<std::int32_t>(max);
  auto c = j.find("converged");
  if (c == j.end() || !c->is_boolean()) return Bad("converged", "want true or false");
  r.converged = c->get<bool>();
  auto runs = j.find("runs");
  if (runs == j.end() || !runs->is_array()) return Bad("runs", "want an array");
  if (runs->empty() || runs->size() > static_cast<std::size_t>(r.max_passes) + 1) {
    return Bad("runs", "want 1 to maxPasses+1 runs");
  }
  for (std::size_t i = 0; i < runs->size(); ++i) {
    const std::string where = "runs[" + std::to_string(i) + "]";
    KC_ASSIGN_OR_RETURN(RunRecord run, RunFromJson((*runs)[i], where));
    if (run.index != static_cast<std::int32_t>(i)) return Bad(where + ".index", "out of order");
    r.runs.push_back(std::move(run));
  }
  if (r.converged && NextPassStep(r.runs, r.max_passes) != PassStep::kConverged) {
    return Bad("converged", "true, but the last pass added entries (or there was none)");
  }
  return r;
}

ConvergenceSummary Summarize(const ConvergenceRecord& r) {
  ConvergenceSummary s;
  s.passes = PassesRun(r);
  s.converged = r.converged;
  if (r.runs.empty() || r.converged) return s;
  const RunRecord& last = r.runs.back();
  s.last_entries = last.entries_added;
  s.last_autotune = last.autotune_entries;
  for (const AddedEntry& e : last.entries) {
    if (s.still.size() >= kMaxSummaryEntries) break;
    s.still.push_back(TruncateUtf8(std::string(MissFrameworkName(e.framework)) + " " + e.detail,
                                   kMaxSummaryEntryBytes));
  }
  return s;
}

std::string ConvergenceMessage(const ConvergenceSummary& s) {
  const auto passes = [](std::int32_t n) {
    return std::to_string(n) + (n == 1 ? " pass" : " passes");
  };
  if (s.converged) return "converged after " + passes(s.passes);
  std::string m = "not converged after " + passes(s.passes) + ": the last pass still compiled " +
                  std::to_string(s.last_entries) + (s.last_entries == 1 ? " entry" : " entries");
  if (s.last_entries > 0 && s.last_autotune == s.last_entries) {
    m += ", all nondeterministic autotune";
  } else if (s.last_autotune > 0) {
    m += " (" + std::to_string(s.last_autotune) + " nondeterministic autotune)";
  }
  if (!s.still.empty()) {
    std::string list;
    for (const auto& e : s.still) list += (list.empty() ? "" : "; ") + e;
    m += ": " + list;
    if (s.last_entries > s.still.size()) m += "; ...";
  }
  return m;
}

Status CheckConvergencePolicy(const ConvergenceRecord& r, NotConvergedPolicy policy) {
  if (r.converged || policy == NotConvergedPolicy::kPublish) return OkStatus();
  return FailedPreconditionError("NotConverged: " + ConvergenceMessage(Summarize(r)) +
                                 " (spec.warmup.convergence.onNotConverged is Fail; raise "
                                 "maxPasses, pin the autotuner, or set it to Publish)");
}

}  // namespace kc::core
