#include "core/server_warmup.h"

#include <gtest/gtest.h>

#include "core/api_types.h"
#include "core/fingerprint.h"

namespace kc::core {
namespace {

using Json = nlohmann::json;

Json Template(Json containers, Json extra = Json::object()) {
  Json spec = {{"containers", std::move(containers)}};
  for (const auto& [k, v] : extra.items()) spec[k] = v;
  return {{"metadata", {{"labels", {{"app", "llm"}}}}}, {"spec", std::move(spec)}};
}

Json Vllm(int gpus = 2) {
  return {{"name", "vllm"},
          {"image", "vllm/vllm-openai@sha256:abc"},
          {"args", {"--model", "/models/m", "--tensor-parallel-size", std::to_string(gpus)}},
          {"env", {{{"name", "VLLM_USE_V1"}, {"value", "1"}}, {{"name", "HOME"}, {"value", "/x"}}}},
          {"ports", {{{"name", "http"}, {"containerPort", 8000}}}},
          {"readinessProbe", {{"httpGet", {{"path", "/health"}, {"port", "http"}}}}},
          {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}};
}

ServerSpec Server(Json tmpl) {
  ServerSpec s;
  s.pod_template = std::move(tmpl);
  WarmupRequest r;
  r.path = "/v1/completions";
  r.body = {{"model", "m"}, {"max_tokens", 4}};
  r.prompt_tokens = {8, 64};
  s.requests.push_back(r);
  return s;
}

TEST(ServingContainerOf, ReadsTheServerFromTheTemplate) {
  auto c = ServingContainerOf(Server(Template({Vllm(4)})));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->name, "vllm");
  EXPECT_EQ(c->image, "vllm/vllm-openai@sha256:abc");
  EXPECT_EQ(c->gpus, 4);
  EXPECT_EQ(c->port, 8000);  // the probe's named port
  EXPECT_EQ(c->readiness_path, "/health");
  EXPECT_EQ(c->keyed_env, (std::map<std::string, std::string>{{"VLLM_USE_V1", "1"}}));
}

TEST(ServingContainerOf, Table) {
  Json sidecar = {{"name", "log"}, {"image", "busybox"}};
  Json tcp = Vllm(1);
  tcp.erase("readinessProbe");
  tcp["readinessProbe"] = {{"tcpSocket", {{"port", 9000}}}};
  Json portless = Vllm(1);
  portless.erase("readinessProbe");
  portless.erase("ports");
  Json bad_gpu = Vllm(1);
  bad_gpu["resources"]["limits"]["nvidia.com/gpu"] = "1.5";
  Json requests_only = Vllm(1);
  requests_only["resources"] = {{"requests", {{"nvidia.com/gpu", 3}}}};
  Json imageless = Vllm(1);
  imageless.erase("image");
  struct Case {
    std::string name;
    Json tmpl;
    std::string container;
    std::string want_name;  // "" = an error
    int64_t want_gpus;
    int32_t want_port;
    std::string want_error;
  };
  const Case cases[] = {
      {"the GPU container, not the first", Template({sidecar, Vllm(2)}), "", "vllm", 2, 8000, ""},
      {"a named container", Template({sidecar, Vllm(2)}), "log", "", 0, 0,
       "spec.warmup.server.port"},
      {"GPUs summed over containers", Template({Vllm(2), Vllm(2)}), "", "vllm", 4, 8000, ""},
      {"tcpSocket probe port", Template({tcp}), "", "vllm", 1, 9000, ""},
      {"requests when no limits", Template({requests_only}), "", "vllm", 3, 8000, ""},
      {"no port anywhere", Template({portless}), "", "", 0, 0, "spec.warmup.server.port"},
      {"no such container", Template({Vllm(1)}), "server", "", 0, 0,
       "spec.warmup.server.container: the template has no container \"server\""},
      {"no containers", Template(Json::array()), "", "", 0, 0,
       "spec.warmup.server.template.spec.containers"},
      {"a fractional GPU", Template({bad_gpu}), "", "", 0, 0,
       "containers[0].resources.limits.nvidia.com/gpu: \"1.5\" is not a whole number"},
      {"no image", Template({imageless}), "", "", 0, 0, "has no image"},
      {"no template", nullptr, "", "", 0, 0, "no pod template"},
      {"a container that is not an object", Template({"vllm"}), "", "", 0, 0,
       "containers[0]: expected an object"},
  };
  for (const auto& c : cases) {
    ServerSpec s = Server(c.tmpl);
    s.container = c.container;
    auto got = ServingContainerOf(s);
    if (c.want_name.empty()) {
      ASSERT_FALSE(got.ok()) << c.name;
      EXPECT_NE(got.status().message().find(c.want_error), std::string::npos)
          << c.name << ": " << got.status().message();
      continue;
    }
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status().message();
    EXPECT_EQ(got->name, c.want_name) << c.name;
    EXPECT_EQ(got->gpus, c.want_gpus) << c.name;
    EXPECT_EQ(got->port, c.want_port) << c.name;
  }
}

TEST(CheckServer, Table) {
  struct Case {
    std::string name;
    std::function<void(ServerSpec&)> edit;
    std::string want;  // "" = valid
  };
  const Case cases[] = {
      {"valid", [](ServerSpec&) {}, ""},
      {"both sources",
       [](ServerSpec& s) {
         s.workload_ref = {"Deployment", "llm"};
       },
       "set exactly one of workloadRef"},
      {"neither source", [](ServerSpec& s) { s.pod_template = nullptr; }, "set exactly one"},
      {"a workload of another kind",
       [](ServerSpec& s) {
         s.pod_template = nullptr;
         s.workload_ref = {"DaemonSet", "llm"};
       },
       "workloadRef.kind: \"DaemonSet\" is not Deployment or StatefulSet"},
      {"no requests", [](ServerSpec& s) { s.requests.clear(); }, "requests: at least one"},
      {"a path without a slash", [](ServerSpec& s) { s.requests[0].path = "v1"; },
       "requests[0].path: \"v1\" must start with '/'"},
      {"a path with a space", [](ServerSpec& s) { s.requests[0].path = "/a b"; }, ".path:"},
      {"a method", [](ServerSpec& s) { s.requests[0].method = "TRACE"; },
       "requests[0].method: \"TRACE\""},
      {"a header with a line break",
       [](ServerSpec& s) { s.requests[0].headers["X"] = "a\r\nEvil: 1"; }, "headers.X"},
      {"a header name", [](ServerSpec& s) { s.requests[0].headers["a b"] = "1"; },
       "\"a b\" is not a valid header name"},
      {"prompt lengths on a string body", [](ServerSpec& s) { s.requests[0].body = "raw"; },
       "promptTokens: needs an object body"},
      {"a body that is a number", [](ServerSpec& s) { s.requests[0].body = 3; }, ".body:"},
      {"a prompt length of 0", [](ServerSpec& s) { s.requests[0].prompt_tokens = {0}; },
       "promptTokens[0]: 0 is out of range"},
      {"repeat", [](ServerSpec& s) { s.requests[0].repeat = 0; }, "repeat: 0 is out of range"},
      {"too many calls",
       [](ServerSpec& s) {
         s.requests[0].prompt_tokens = std::vector<int64_t>(20, 8);
         s.requests[0].repeat = 60;
       },
       "1200 calls after expansion"},
      {"a port", [](ServerSpec& s) { s.port = 70000; }, "port: 70000"},
      {"a readiness path", [](ServerSpec& s) { s.readiness_path = "health"; }, "readinessPath"},
      {"a timeout", [](ServerSpec& s) { s.request_timeout_seconds = 0; }, "requestTimeoutSeconds"},
  };
  for (const auto& c : cases) {
    ServerSpec s = Server(Template({Vllm()}));
    c.edit(s);
    auto errors = CheckServer(s);
    if (c.want.empty()) {
      EXPECT_TRUE(errors.empty()) << c.name << ": " << (errors.empty() ? "" : errors[0]);
      continue;
    }
    bool found = false;
    for (const auto& e : errors) found = found || e.find(c.want) != std::string::npos;
    EXPECT_TRUE(found) << c.name << ": " << (errors.empty() ? "no error" : errors[0]);
  }
}

TEST(CheckServerTemplate, RefusesWhatAWarmupPodMayNotDo) {
  const std::string where = "Deployment llm's spec.template";
  EXPECT_TRUE(CheckServerTemplate(Server(Template({Vllm()})), where).empty());
  Json priv = Vllm();
  priv["securityContext"] = {{"privileged", true}};
  struct Case {
    Json tmpl;
    std::string want;
  };
  const Case cases[] = {
      {Template({Vllm()}, {{"hostNetwork", true}}), where + ".spec.hostNetwork"},
      {Template({Vllm()}, {{"hostIPC", true}}), where + ".spec.hostIPC"},
      {Template({priv}), where + ".spec.containers[0].securityContext.privileged"},
      {Template({Vllm()}, {{"volumes", {{{"name", "kc-cache"}, {"emptyDir", Json::object()}}}}}),
       "\"kc-cache\" is the name of a volume the operator adds"},
      {Template({Vllm(0)}), "no container asks for nvidia.com/gpu"},
      {Template(Json::array()), "(in " + where + ")"},
  };
  for (const auto& c : cases) {
    auto errors = CheckServerTemplate(Server(c.tmpl), where);
    ASSERT_FALSE(errors.empty()) << c.want;
    EXPECT_NE(errors[0].find(c.want), std::string::npos) << errors[0];
  }
}

TEST(PlanWarmupCalls, OneCallPerLengthAndRepeat) {
  ServerSpec s = Server(Template({Vllm()}));
  s.requests[0].repeat = 2;
  WarmupRequest health;
  health.path = "/health";
  s.requests.push_back(health);
  WarmupRequest raw;
  raw.path = "/raw";
  raw.method = "PUT";
  raw.body = "a b c";
  s.requests.push_back(raw);
  const auto calls = PlanWarmupCalls(s);
  ASSERT_EQ(calls.size(), 6u);
  EXPECT_EQ(calls[0].label, "requests[0] prompt=8 #1");
  EXPECT_EQ(calls[1].label, "requests[0] prompt=8 #2");
  EXPECT_EQ(calls[2].label, "requests[0] prompt=64 #1");
  EXPECT_EQ(calls[0].method, "POST");
  EXPECT_EQ(calls[0].headers.at("Content-Type"), "application/json");
  const Json body = Json::parse(calls[2].body);
  EXPECT_EQ(body["model"], "m");
  EXPECT_EQ(body["max_tokens"], 4);
  EXPECT_EQ(body["prompt"], PromptOfWords(64));
  EXPECT_EQ(calls[4].method, "GET");
  EXPECT_EQ(calls[4].body, "");
  EXPECT_EQ(calls[4].label, "requests[1]");
  EXPECT_EQ(calls[5].method, "PUT");
  EXPECT_EQ(calls[5].body, "a b c");
  EXPECT_FALSE(calls[5].headers.contains("Content-Type"));
}

TEST(PromptOfWords, CountsWords) {
  EXPECT_EQ(PromptOfWords(0), "");
  EXPECT_EQ(PromptOfWords(1), "hello");
  EXPECT_EQ(PromptOfWords(3), "hello hello hello");
}

TEST(ServerSpecJson, RoundTripAndFieldErrors) {
  ServerSpec s = Server(Template({Vllm()}));
  s.container = "vllm";
  s.port = 8000;
  s.readiness_path = "/ready";
  s.tensor_parallel = 2;
  s.pipeline_parallel = 1;
  s.requests[0].headers["Authorization"] = "Bearer x";
  s.requests[0].repeat = 3;
  s.request_timeout_seconds = 30;
  std::vector<std::string> errors;
  EXPECT_EQ(ServerSpecFromJson(ServerSpecToJson(s), "spec.warmup.server", &errors), s);
  EXPECT_TRUE(errors.empty());

  ServerSpec ref = Server(Template({Vllm()}));  // filled from the workload: never written back
  ref.workload_ref = {"Deployment", "llm"};
  ref.from_workload = true;
  EXPECT_FALSE(ServerSpecToJson(ref).contains("template"));
  EXPECT_TRUE(CheckServer(ref).empty()) << "one source: the workload";

  const Json bad = {{"template", "x"},
                    {"port", "8000"},
                    {"requests", {{{"path", 1}, {"promptTokens", {1, "2"}}}}}};
  ServerSpecFromJson(bad, "spec.warmup.server", &errors);
  const std::string all = [&] {
    std::string a;
    for (const auto& e : errors) a += e + "\n";
    return a;
  }();
  EXPECT_NE(all.find("spec.warmup.server.template: expected an object"), std::string::npos);
  EXPECT_NE(all.find("spec.warmup.server.port"), std::string::npos);
  EXPECT_NE(all.find("spec.warmup.server.requests[0].path"), std::string::npos);
  EXPECT_NE(all.find("spec.warmup.server.requests[0].promptTokens[1]"), std::string::npos);
}

TEST(ParseWorkloadKind, OneNamePerKind) {
  for (auto k : {WorkloadKind::kDeployment, WorkloadKind::kStatefulSet}) {
    EXPECT_EQ(ParseWorkloadKind(WorkloadKindName(k)), k);
  }
  EXPECT_FALSE(ParseWorkloadKind("deployment"));
}

// The fingerprint's server inputs: each one moves the id; the command
// form's ids stay where they were.
TEST(RuntimeFactsFor, TheServerFormKeysOnTheTemplate) {
  NodeFacts node{"NVIDIA-H200", "9.0", "580.1", "13.0", "amd64"};
  KernelCacheSpec command_form;
  command_form.image = "img";
  command_form.warmup.command = {"python3"};
  const RuntimeFacts cmd = RuntimeFactsFor(command_form);
  EXPECT_EQ(cmd.gpus, 1);
  EXPECT_EQ(CanonicalJson(node, cmd).find("gpus"), std::string::npos);

  KernelCacheSpec spec;
  spec.warmup.server = Server(Template({Vllm(2)}));
  const RuntimeFacts r = RuntimeFactsFor(spec);
  EXPECT_EQ(r.image, "vllm/vllm-openai@sha256:abc");
  EXPECT_EQ(r.gpus, 2);
  EXPECT_EQ(r.env.at("VLLM_USE_V1"), "1");
  EXPECT_EQ(r.server.size(), 64u);
  EXPECT_EQ(WarmupGpus(spec), 2);
  const std::string base = ComputeFingerprint(node, r).id;

  auto id_after = [&](const std::function<void(KernelCacheSpec&)>& edit) {
    KernelCacheSpec s = spec;
    edit(s);
    return ComputeFingerprint(node, RuntimeFactsFor(s)).id;
  };
  auto c0 = [](KernelCacheSpec& s) -> Json& {
    return s.warmup.server->pod_template["spec"]["containers"][0];
  };
  EXPECT_NE(base, id_after([](KernelCacheSpec& s) { s.warmup.server->tensor_parallel = 2; }));
  EXPECT_NE(base, id_after([](KernelCacheSpec& s) { s.warmup.server->pipeline_parallel = 2; }));
  EXPECT_NE(base, id_after([&](KernelCacheSpec& s) {
              c0(s)["resources"]["limits"]["nvidia.com/gpu"] = "4";
            }));
  EXPECT_NE(base,
            id_after([&](KernelCacheSpec& s) { c0(s)["args"].push_back("--enforce-eager"); }));
  EXPECT_NE(base, id_after([&](KernelCacheSpec& s) { c0(s)["env"][0]["value"] = "0"; }));
  EXPECT_NE(base, id_after([&](KernelCacheSpec& s) { c0(s)["image"] = "other"; }));
  // Not keyed: a variable outside the cache-affecting prefixes, the requests.
  EXPECT_EQ(base, id_after([&](KernelCacheSpec& s) { c0(s)["env"][1]["value"] = "/y"; }));
  EXPECT_EQ(base, id_after([](KernelCacheSpec& s) { s.warmup.server->requests[0].repeat = 2; }));

  KernelCacheSpec unresolved;
  unresolved.warmup.server = ServerSpec{};
  unresolved.warmup.server->workload_ref = {"Deployment", "llm"};
  EXPECT_EQ(RuntimeFactsFor(unresolved).image, "");
  EXPECT_EQ(WarmupGpus(unresolved), 0);
}

}  // namespace
}  // namespace kc::core
