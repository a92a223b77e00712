// Structure checks of crds/kernelcache.kernelcache.io.yaml without a
// cluster: names, printer columns, a description on every field, and that
// every field core/api_types writes exists in the schema (the API server
// prunes unknown fields of a structural schema, so a field missing here
// would be silently dropped from status). tests/operator runs the CRD
// against the real API server.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/duration.h"
#include "core/api_types.h"
#include "core/consume.h"
#include "core/spec_validation.h"
#include "core/validate.h"

namespace kc::op {
namespace {

using Json = nlohmann::json;

Json ToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      Json j = Json::object();
      for (const auto& kv : n) j[kv.first.as<std::string>()] = ToJson(kv.second);
      return j;
    }
    case YAML::NodeType::Sequence: {
      Json j = Json::array();
      for (const auto& v : n) j.push_back(ToJson(v));
      return j;
    }
    case YAML::NodeType::Scalar:
      return n.as<std::string>();
    default:
      return nullptr;
  }
}

Json Crd() {
  return ToJson(
      YAML::LoadFile(std::string(KC_SOURCE_DIR) + "/crds/kernelcache.kernelcache.io.yaml"));
}

std::string Child(const std::string& path, const std::string& key) {
  std::string out = path;
  out += ".";
  out += key;
  return out;
}

const Json& Schema(const Json& crd) {
  return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
}

TEST(Crd, Names) {
  Json crd = Crd();
  EXPECT_EQ(crd["metadata"]["name"], "kernelcaches.kernelcache.io");
  EXPECT_EQ(crd["spec"]["group"], "kernelcache.io");
  EXPECT_EQ(crd["spec"]["scope"], "Namespaced");
  EXPECT_EQ(crd["spec"]["names"]["kind"], "KernelCache");
  EXPECT_EQ(crd["spec"]["names"]["shortNames"], Json::array({"kcache"}));
  EXPECT_EQ(crd["spec"]["names"]["categories"], Json::array({"all"}));
  const Json& v = crd["spec"]["versions"][0];
  EXPECT_EQ(v["name"], "v1alpha1");
  EXPECT_TRUE(v["subresources"].contains("status"));
  std::vector<std::string> columns;
  for (const auto& c : v["additionalPrinterColumns"]) columns.push_back(c["name"]);
  EXPECT_EQ(columns, (std::vector<std::string>{"Ready", "Phase", "Size", "Age"}));
}

TEST(Crd, EveryFieldHasADescription) {
  Json crd = Crd();
  std::vector<std::string> missing;
  std::function<void(const Json&, const std::string&)> walk = [&](const Json& s,
                                                                  const std::string& path) {
    if (!s.contains("description") && path != ".metadata") missing.push_back(path);
    if (s.contains("properties")) {
      for (const auto& [k, v] : s["properties"].items()) walk(v, Child(path, k));
    }
    if (s.contains("items")) walk(s["items"], path + "[]");
  };
  walk(Schema(crd), "");
  EXPECT_TRUE(missing.empty()) << missing[0];
}

TEST(Crd, CelRulesNameTheField) {
  Json crd = Crd();
  int rules = 0;
  std::function<void(const Json&)> walk = [&](const Json& s) {
    if (s.contains("x-kubernetes-validations")) {
      for (const auto& r : s["x-kubernetes-validations"]) {
        ++rules;
        EXPECT_EQ(r["message"].get<std::string>().rfind("spec.", 0), 0u) << r["message"];
      }
    }
    if (s.contains("properties")) {
      for (const auto& [k, v] : s["properties"].items()) walk(v);
    }
    if (s.contains("items")) walk(s["items"]);
  };
  walk(Schema(crd));
  EXPECT_GE(rules, 5);
}

// Every key in `value` must be declared in `schema` (unless the schema
// preserves unknown fields there).
void ExpectDeclared(const Json& schema, const Json& value, const std::string& path) {
  if (schema.contains("x-kubernetes-preserve-unknown-fields")) return;
  if (value.is_object()) {
    if (schema.contains("additionalProperties")) return;
    ASSERT_TRUE(schema.contains("properties")) << path << " has no properties in the schema";
    for (const auto& [k, v] : value.items()) {
      ASSERT_TRUE(schema["properties"].contains(k)) << path << "." << k << " is not in the CRD";
      ExpectDeclared(schema["properties"][k], v, Child(path, k));
    }
  } else if (value.is_array()) {
    for (const auto& v : value) ExpectDeclared(schema["items"], v, path + "[]");
  }
}

TEST(Crd, EveryFieldWeWriteIsDeclared) {
  core::KernelCache kc;
  kc.metadata.name = "llama";
  kc.spec.pod_selector.match_labels = {{"app", "llama"}};
  kc.spec.pod_selector.match_expressions = {{"tier", "In", {"gpu"}}};
  kc.spec.node_selector = {{"a", "b"}};
  kc.spec.tolerations = {{{"key", "k"}, {"operator", "Exists"}}};
  kc.spec.image = "i";
  kc.spec.runtime = {{"pytorch", "2.11.0"}};
  kc.spec.warmup.command = {"x"};
  kc.spec.warmup.args = {"y"};
  kc.spec.warmup.env = {{{"name", "A"}, {"value", "b"}}};
  kc.spec.warmup.shapes = {{{"batch", 1}}};
  kc.spec.warmup.resources = {{"limits", {{"cpu", "1"}}}};
  kc.spec.warmup.pod_annotations = {{"sidecar.istio.io/inject", "false"}};
  kc.spec.storage = {"nfs", "20Gi", "c"};
  kc.spec.retention = {"24h", "168h", "10Gi", "168h"};
  kc.spec.security_context.fs_group = 2000;
  kc.spec.security_context.run_as_user = 1000;
  api::Condition c{"Ready", "True", "R", "m", 1, {}};
  kc.status.conditions = {c};
  kc.status.phase = "Ready";
  kc.status.ready = "1/1";
  kc.status.size = "1Gi";
  kc.status.claim_name = "c";
  core::FingerprintStatus f;
  f.id = "0123456789abcdef";
  f.job = "j";
  f.manifest_digest = "d";
  f.ready_at = f.stale_since = f.absent_since = f.last_failure_time = f.last_transition_time =
      std::chrono::system_clock::now();
  f.last_nodes = {"gpu-1"};
  f.last_failure = "x";
  f.warm_generation = 1;
  f.job_uid = "u";
  kc.status.fingerprints = {f};
  Json j = core::KernelCacheToJson(kc);
  j.erase("metadata");
  j.erase("apiVersion");
  j.erase("kind");
  ExpectDeclared(Schema(Crd()), j, "");
}

// consume.verify in the CRD offers exactly the levels `initwarm wait
// --verify` accepts (core::Level; it lacked Fingerprint and TargetArch),
// and ValidateSpec accepts each of them.
TEST(Crd, VerifyEnumMatchesTheValidationLadder) {
  const Json crd = Crd();
  const Json& verify =
      Schema(crd)["properties"]["spec"]["properties"]["consume"]["properties"]["verify"];
  std::vector<std::string> in_crd;
  for (const Json& v : verify["enum"]) in_crd.push_back(v.get<std::string>());
  std::vector<std::string> in_code;
  for (core::Level l : {core::Level::kManifest, core::Level::kFingerprint, core::Level::kChecksums,
                        core::Level::kTargetArch, core::Level::kLoadTest}) {
    in_code.emplace_back(core::LevelName(l));
    ASSERT_TRUE(core::ParseLevel(in_code.back()).ok()) << in_code.back();
  }
  EXPECT_EQ(in_crd, in_code);
  for (const std::string& level : in_code) {
    std::vector<std::string> errors;
    const core::KernelCacheSpec spec = core::SpecFromJson(
        {{"consume", {{"verify", level}}}, {"storage", {{"size", "1Gi"}}}}, &errors);
    EXPECT_EQ(core::LevelName(spec.consume.verify), level);
    for (const std::string& e : errors) {
      EXPECT_EQ(e.find("spec.consume.verify"), std::string::npos) << e;
    }
  }
}

// The CRD's consume enums are the names core parses (core/consume.h), and
// its defaults are core's, the ones `initwarm wait` uses without a flag.
TEST(Crd, ConsumeEnumsAndDefaultsAreCores) {
  const Json crd = Crd();
  const Json& consume = Schema(crd)["properties"]["spec"]["properties"]["consume"]["properties"];
  auto names = [](const Json& field) {
    std::vector<std::string> out;
    for (const Json& v : field["enum"]) out.push_back(v.get<std::string>());
    return out;
  };
  std::vector<std::string> modes;
  for (core::ConsumeMode m : {core::ConsumeMode::kCopy, core::ConsumeMode::kShared,
                              core::ConsumeMode::kSharedReadWrite}) {
    modes.emplace_back(core::ConsumeModeName(m));
  }
  EXPECT_EQ(names(consume["mode"]), modes);
  std::vector<std::string> on_timeouts;
  for (core::OnTimeout t : {core::OnTimeout::kFail, core::OnTimeout::kStartCold}) {
    on_timeouts.emplace_back(core::OnTimeoutName(t));
  }
  EXPECT_EQ(names(consume["onTimeout"]), on_timeouts);
  EXPECT_EQ(consume["mode"]["default"],
            std::string(core::ConsumeModeName(core::kDefaultConsumeMode)));
  EXPECT_EQ(consume["onTimeout"]["default"],
            std::string(core::OnTimeoutName(core::kDefaultOnTimeout)));
  EXPECT_EQ(consume["verify"]["default"], std::string(core::LevelName(core::kDefaultVerifyLevel)));
  EXPECT_EQ(consume["waitTimeoutSeconds"]["default"],
            std::to_string(core::kDefaultWaitTimeoutSeconds));
  // The API struct's defaults (an object built in code) are the same.
  const core::ConsumeSpec spec;
  EXPECT_EQ(core::ConsumeModeName(spec.mode), consume["mode"]["default"]);
  EXPECT_EQ(core::OnTimeoutName(spec.on_timeout), consume["onTimeout"]["default"]);
  EXPECT_EQ(core::LevelName(spec.verify), consume["verify"]["default"]);
  EXPECT_EQ(std::to_string(spec.wait_timeout_seconds), consume["waitTimeoutSeconds"]["default"]);
}

// spec.harvest's mode enum and its defaults are core's (core/harvest.h),
// and an object built in code writes the same.
TEST(Crd, HarvestModeAndDefaultsAreCores) {
  const Json crd = Crd();
  const Json& harvest = Schema(crd)["properties"]["spec"]["properties"]["harvest"]["properties"];
  std::vector<std::string> modes;
  for (const Json& v : harvest["mode"]["enum"]) modes.push_back(v.get<std::string>());
  std::vector<std::string> ours;
  for (core::HarvestMode m : core::kHarvestModes) ours.emplace_back(core::HarvestModeName(m));
  EXPECT_EQ(modes, ours);
  EXPECT_EQ(harvest["mode"]["default"],
            std::string(core::HarvestModeName(core::kDefaultHarvestMode)));
  EXPECT_EQ(harvest["interval"]["default"], FormatDuration(core::kDefaultHarvestInterval));
  const Json written = core::SpecToJson(core::KernelCacheSpec{})["harvest"];
  EXPECT_EQ(written["mode"], harvest["mode"]["default"]);
  EXPECT_EQ(written["interval"], harvest["interval"]["default"]);
}

// Every string, list and map of the spec has a bound (maxLength, maxItems,
// maxProperties, an enum or a pattern with a bound), so no object the API
// server accepts is unbounded there; integers of the spec have a range or
// are passed through to Kubernetes, which checks them.
TEST(Crd, SpecValuesAreBounded) {
  std::vector<std::string> unbounded;
  std::function<void(const Json&, const std::string&)> walk = [&](const Json& s,
                                                                  const std::string& path) {
    const std::string type = s.value("type", "");
    if (s.value("x-kubernetes-preserve-unknown-fields", "") == "true") return;  // free-form
    if (type == "string" && !s.contains("maxLength") && !s.contains("enum")) {
      unbounded.push_back(path);
    }
    if (type == "array" && !s.contains("maxItems")) unbounded.push_back(path);
    if (type == "object" && s.contains("additionalProperties") && !s.contains("maxProperties")) {
      unbounded.push_back(path);
    }
    if (s.contains("properties")) {
      for (const auto& [k, v] : s["properties"].items()) walk(v, Child(path, k));
    }
    if (s.contains("items")) walk(s["items"], path + "[]");
    if (s.contains("additionalProperties") && s["additionalProperties"].is_object()) {
      walk(s["additionalProperties"], path + ".*");
    }
  };
  const Json crd = Crd();
  walk(Schema(crd)["properties"]["spec"], "spec");
  EXPECT_TRUE(unbounded.empty()) << Json(unbounded).dump();
}

}  // namespace
}  // namespace kc::op
