#include "core/server_warmup.h"

#include <algorithm>
#include <cctype>

#include "api/json_read.h"
#include "base/strings.h"
#include "core/api_types.h"
#include "core/fingerprint.h"

namespace kc::core {
namespace {

using Json = nlohmann::json;
using api::AddFieldError;

constexpr std::string_view kPath = "spec.warmup.server";
// Volume names the warmup pod's own volumes take; a template may not use them.
constexpr std::string_view kReservedVolumes[] = {"kc-cache", "kc-run"};

std::string Idx(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

const Json& Obj(const Json& j, std::string_view key) {
  static const Json kNull;
  const Json* f = api::Field(j, key);
  return f != nullptr && f->is_object() ? *f : kNull;
}

const Json& List(const Json& j, std::string_view key) {
  static const Json kEmpty = Json::array();
  const Json* f = api::Field(j, key);
  return f != nullptr && f->is_array() ? *f : kEmpty;
}

std::string Str(const Json& j, std::string_view key) {
  const Json* f = api::Field(j, key);
  return f != nullptr && f->is_string() ? f->get<std::string>() : "";
}

// A whole GPU count from a quantity ("2", 2); nullopt when absent,
// InvalidArgument when not a whole number.
StatusOr<std::optional<int64_t>> GpuCount(const Json& resources, std::string_view part) {
  const Json& m = Obj(resources, part);
  const Json* g = api::Field(m, "nvidia.com/gpu");
  if (g == nullptr) return std::optional<int64_t>();
  if (g->is_number_integer() && g->get<int64_t>() >= 0) return std::optional(g->get<int64_t>());
  if (g->is_string()) {
    const auto s = g->get<std::string>();
    if (!s.empty() && s.size() <= 6 &&
        std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); })) {
      return std::optional<int64_t>(std::stoll(s));
    }
  }
  return InvalidArgumentError(std::string("resources.") + std::string(part) +
                              ".nvidia.com/gpu: " + g->dump() + " is not a whole number");
}

StatusOr<int64_t> ContainerGpus(const Json& c) {
  const Json& r = Obj(c, "resources");
  KC_ASSIGN_OR_RETURN(auto limits, GpuCount(r, "limits"));
  if (limits) return *limits;
  KC_ASSIGN_OR_RETURN(auto requests, GpuCount(r, "requests"));
  return requests.value_or(0);
}

// The port of a probe handler (httpGet or tcpSocket): a number, or the name
// of one of the container's ports.
int32_t ProbePort(const Json& handler, const Json& container) {
  const Json* p = api::Field(handler, "port");
  if (p == nullptr) return 0;
  if (p->is_number_integer()) return p->get<int32_t>();
  if (!p->is_string()) return 0;
  const std::string name = p->get<std::string>();
  for (const auto& port : List(container, "ports")) {
    if (Str(port, "name") == name && port.contains("containerPort") &&
        port["containerPort"].is_number_integer()) {
      return port["containerPort"].get<int32_t>();
    }
  }
  if (!name.empty() &&
      std::all_of(name.begin(), name.end(), [](unsigned char ch) { return std::isdigit(ch); }) &&
      name.size() <= 5) {
    return std::stoi(name);
  }
  return 0;
}

WarmupRequest RequestFromJson(const Json& j, const std::string& p, std::vector<std::string>* e) {
  WarmupRequest r;
  api::ReadString(j, "method", p, e, &r.method);
  api::ReadString(j, "path", p, e, &r.path);
  api::ReadStringMap(j, "headers", p, e, &r.headers);
  if (const Json* b = api::Field(j, "body"); b != nullptr) r.body = *b;
  if (const Json* t = api::Field(j, "promptTokens"); t != nullptr) {
    if (!t->is_array()) {
      AddFieldError(e, p + ".promptTokens", "expected a list of whole numbers");
    } else {
      for (size_t i = 0; i < t->size(); ++i) {
        if ((*t)[i].is_number_integer()) {
          r.prompt_tokens.push_back((*t)[i].get<int64_t>());
        } else {
          AddFieldError(e, Idx(p + ".promptTokens", i), "expected a whole number");
        }
      }
    }
  }
  api::ReadInt(j, "repeat", p, e, &r.repeat);
  return r;
}

Json RequestToJson(const WarmupRequest& r) {
  Json j = {{"path", r.path}};
  if (!r.method.empty()) j["method"] = r.method;
  if (!r.headers.empty()) j["headers"] = r.headers;
  if (!r.body.is_null()) j["body"] = r.body;
  if (!r.prompt_tokens.empty()) j["promptTokens"] = r.prompt_tokens;
  if (r.repeat != 1) j["repeat"] = r.repeat;
  return j;
}

bool ValidMethod(std::string_view m) {
  return m == "GET" || m == "POST" || m == "PUT" || m == "PATCH" || m == "DELETE";
}

bool ValidPath(std::string_view p) {
  return !p.empty() && p.front() == '/' && p.size() <= kMaxWarmupPathBytes &&
         std::none_of(p.begin(), p.end(), [](unsigned char c) { return c <= ' ' || c == 0x7f; });
}

void CheckRequest(const WarmupRequest& r, const std::string& p, std::vector<std::string>* e) {
  if (!ValidPath(r.path)) {
    e->push_back(p + ".path: \"" + r.path +
                 "\" must start with '/' and hold no spaces or control characters, e.g. "
                 "/v1/completions");
  }
  if (!r.method.empty() && !ValidMethod(r.method)) {
    e->push_back(p + ".method: \"" + r.method + "\" is not one of GET, POST, PUT, PATCH, DELETE");
  }
  for (const auto& [k, v] : r.headers) {
    const bool token = !k.empty() && std::all_of(k.begin(), k.end(), [](unsigned char c) {
      return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) !=
                                    std::string_view::npos;
    });
    if (!token) e->push_back(StrCat({p, ".headers: \"", k, "\" is not a valid header name"}));
    if (v.find_first_of("\r\n") != std::string::npos || v.size() > kMaxWarmupHeaderBytes) {
      e->push_back(StrCat({p, ".headers.", k, ": a value may hold no line break and at most ",
                           std::to_string(kMaxWarmupHeaderBytes), " bytes"}));
    }
  }
  if (!r.body.is_null() && !r.body.is_object() && !r.body.is_string()) {
    e->push_back(p + ".body: an object (sent as JSON) or a string (sent as is)");
  }
  if (!r.prompt_tokens.empty() && !r.body.is_object()) {
    e->push_back(p +
                 ".promptTokens: needs an object body to set \"prompt\" in, e.g. "
                 "{\"model\": \"m\", \"max_tokens\": 16}");
  }
  for (size_t i = 0; i < r.prompt_tokens.size(); ++i) {
    if (r.prompt_tokens[i] < 1 || r.prompt_tokens[i] > kMaxPromptTokens) {
      e->push_back(Idx(p + ".promptTokens", i) + ": " + std::to_string(r.prompt_tokens[i]) +
                   " is out of range 1.." + std::to_string(kMaxPromptTokens));
    }
  }
  if (r.repeat < 1 || r.repeat > kMaxRequestRepeat) {
    e->push_back(p + ".repeat: " + std::to_string(r.repeat) + " is out of range 1.." +
                 std::to_string(kMaxRequestRepeat));
  }
}

size_t CallCount(const WarmupRequest& r) {
  return std::max<size_t>(1, r.prompt_tokens.size()) * static_cast<size_t>(std::max(1, r.repeat));
}

}  // namespace

std::optional<WorkloadKind> ParseWorkloadKind(std::string_view name) {
  if (name == "Deployment") return WorkloadKind::kDeployment;
  if (name == "StatefulSet") return WorkloadKind::kStatefulSet;
  return std::nullopt;
}

std::string_view WorkloadKindName(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kDeployment:
      return "Deployment";
    case WorkloadKind::kStatefulSet:
      return "StatefulSet";
  }
  return "Deployment";
}

ServerSpec ServerSpecFromJson(const Json& j, const std::string& p,
                              std::vector<std::string>* errors) {
  ServerSpec s;
  const Json& ref = api::ReadObject(j, "workloadRef", p, errors);
  api::ReadString(ref, "kind", p + ".workloadRef", errors, &s.workload_ref.kind);
  api::ReadString(ref, "name", p + ".workloadRef", errors, &s.workload_ref.name);
  if (const Json* t = api::Field(j, "template"); t != nullptr) {
    if (t->is_object()) {
      s.pod_template = *t;
    } else {
      AddFieldError(errors, p + ".template", "expected an object (a pod template)");
    }
  }
  api::ReadString(j, "container", p, errors, &s.container);
  api::ReadInt(j, "port", p, errors, &s.port);
  api::ReadString(j, "readinessPath", p, errors, &s.readiness_path);
  const Json& par = api::ReadObject(j, "parallel", p, errors);
  api::ReadInt(par, "tensor", p + ".parallel", errors, &s.tensor_parallel);
  api::ReadInt(par, "pipeline", p + ".parallel", errors, &s.pipeline_parallel);
  std::vector<Json> requests;
  api::ReadObjectList(j, "requests", p, errors, &requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    s.requests.push_back(RequestFromJson(requests[i], Idx(p + ".requests", i), errors));
  }
  api::ReadInt(j, "requestTimeoutSeconds", p, errors, &s.request_timeout_seconds);
  return s;
}

Json ServerSpecToJson(const ServerSpec& s) {
  Json j = Json::object();
  if (!s.workload_ref.empty()) {
    j["workloadRef"] = {{"kind", s.workload_ref.kind}, {"name", s.workload_ref.name}};
  } else if (!s.pod_template.is_null()) {
    // Only an inline template is written: one filled from workloadRef
    // stays in memory.
    j["template"] = s.pod_template;
  }
  if (!s.container.empty()) j["container"] = s.container;
  if (s.port != 0) j["port"] = s.port;
  if (!s.readiness_path.empty()) j["readinessPath"] = s.readiness_path;
  if (s.tensor_parallel != 0 || s.pipeline_parallel != 0) {
    Json par = Json::object();
    if (s.tensor_parallel != 0) par["tensor"] = s.tensor_parallel;
    if (s.pipeline_parallel != 0) par["pipeline"] = s.pipeline_parallel;
    j["parallel"] = std::move(par);
  }
  if (!s.requests.empty()) {
    Json list = Json::array();
    for (const auto& r : s.requests) list.push_back(RequestToJson(r));
    j["requests"] = std::move(list);
  }
  j["requestTimeoutSeconds"] = s.request_timeout_seconds;
  return j;
}

StatusOr<ServingContainer> ServingContainerOf(const ServerSpec& s) {
  const std::string p(kPath);
  if (!s.pod_template.is_object()) {
    return InvalidArgumentError(
        p + ".template: no pod template" +
        (s.workload_ref.empty()
             ? "; set template or workloadRef"
             : " yet: " + s.workload_ref.kind + " " + s.workload_ref.name + " was not read"));
  }
  const Json& spec = Obj(s.pod_template, "spec");
  const Json& containers = List(spec, "containers");
  if (containers.empty()) {
    return InvalidArgumentError(p + ".template.spec.containers: the template has no container");
  }
  ServingContainer out;
  const Json* chosen = nullptr;
  for (size_t i = 0; i < containers.size(); ++i) {
    const Json& c = containers[i];
    if (!c.is_object()) {
      return InvalidArgumentError(Idx(p + ".template.spec.containers", i) + ": expected an object");
    }
    auto gpus = ContainerGpus(c);
    if (!gpus.ok()) {
      return InvalidArgumentError(Idx(p + ".template.spec.containers", i) + "." +
                                  gpus.status().message());
    }
    out.gpus += *gpus;
    const bool named = !s.container.empty() && Str(c, "name") == s.container;
    if (named || (s.container.empty() && chosen == nullptr && *gpus > 0)) chosen = &c;
  }
  if (chosen == nullptr && !s.container.empty()) {
    return InvalidArgumentError(p + ".container: the template has no container \"" + s.container +
                                "\"");
  }
  if (chosen == nullptr) chosen = &containers[0];
  const Json& c = *chosen;
  out.name = Str(c, "name");
  out.image = Str(c, "image");
  if (out.image.empty()) {
    return InvalidArgumentError(p + ".template: container \"" + out.name + "\" has no image");
  }
  api::Read(c, "command", &out.command);
  api::Read(c, "args", &out.args);
  for (const auto& e : List(c, "env")) {
    const std::string name = Str(e, "name");
    const Json* v = api::Field(e, "value");
    if (v != nullptr && v->is_string() && IsFingerprintEnv(name)) {
      out.keyed_env[name] = v->get<std::string>();
    }
  }
  const Json& probe = Obj(c, "readinessProbe");
  out.readiness_path = s.readiness_path;
  if (out.readiness_path.empty()) out.readiness_path = Str(Obj(probe, "httpGet"), "path");
  out.port = s.port;
  if (out.port == 0) out.port = ProbePort(Obj(probe, "httpGet"), c);
  if (out.port == 0) out.port = ProbePort(Obj(probe, "tcpSocket"), c);
  if (out.port == 0) {
    for (const auto& port : List(c, "ports")) {
      if (port.contains("containerPort") && port["containerPort"].is_number_integer()) {
        out.port = port["containerPort"].get<int32_t>();
        break;
      }
    }
  }
  if (out.port <= 0 || out.port > 65535) {
    return InvalidArgumentError(p + ".port: container \"" + out.name +
                                "\" has no readiness probe port and no containerPort; set "
                                "spec.warmup.server.port to the port it serves on");
  }
  return out;
}

std::vector<std::string> CheckServer(const ServerSpec& s) {
  const std::string p(kPath);
  std::vector<std::string> e;
  const bool ref = !s.workload_ref.empty();
  const bool inline_template = !s.pod_template.is_null() && !s.from_workload;
  if (ref == inline_template) {
    e.push_back(p + ": set exactly one of workloadRef (a Deployment or StatefulSet the " +
                "KernelCache gates) and template (a pod template)");
  }
  if (ref) {
    if (!ParseWorkloadKind(s.workload_ref.kind)) {
      e.push_back(p + ".workloadRef.kind: \"" + s.workload_ref.kind +
                  "\" is not Deployment or StatefulSet");
    }
    if (s.workload_ref.name.empty()) e.push_back(p + ".workloadRef.name: required");
  }
  if (s.port < 0 || s.port > 65535) {
    e.push_back(p + ".port: " + std::to_string(s.port) + " is out of range 1..65535");
  }
  if (!s.readiness_path.empty() && !ValidPath(s.readiness_path)) {
    e.push_back(p + ".readinessPath: \"" + s.readiness_path + "\" must start with '/'");
  }
  if (s.tensor_parallel < 0 || s.pipeline_parallel < 0) {
    e.push_back(p + ".parallel: tensor and pipeline are 1 or more (0: not declared)");
  }
  if (s.request_timeout_seconds < 1 || s.request_timeout_seconds > 86400) {
    e.push_back(p + ".requestTimeoutSeconds: " + std::to_string(s.request_timeout_seconds) +
                " is out of range 1..86400");
  }
  if (s.requests.empty()) {
    e.push_back(p + ".requests: at least one request to send once the server is ready, e.g. " +
                "{path: /v1/completions, body: {model: m, max_tokens: 16}, promptTokens: [128]}");
  }
  size_t calls = 0;
  for (size_t i = 0; i < s.requests.size(); ++i) {
    CheckRequest(s.requests[i], Idx(p + ".requests", i), &e);
    calls += CallCount(s.requests[i]);
  }
  if (calls > kMaxWarmupCalls) {
    e.push_back(p + ".requests: " + std::to_string(calls) + " calls after expansion, over " +
                std::to_string(kMaxWarmupCalls) + "; fewer promptTokens or repeats");
  }
  return e;
}

std::vector<std::string> CheckServerTemplate(const ServerSpec& s, const std::string& where) {
  std::vector<std::string> e;
  auto c = ServingContainerOf(s);
  if (!c.ok()) {
    e.push_back(c.status().message() + " (in " + where + ")");
    return e;
  }
  const Json& spec = Obj(s.pod_template, "spec");
  for (const char* host : {"hostNetwork", "hostPID", "hostIPC"}) {
    const Json* f = api::Field(spec, host);
    if (f != nullptr && f->is_boolean() && f->get<bool>()) {
      e.push_back(where + ".spec." + host +
                  ": a warmup pod does not share the node's namespaces; the warmup runs the "
                  "server without it (remove it, or use the command form of spec.warmup)");
    }
  }
  for (const char* list : {"initContainers", "containers"}) {
    const Json& cs = List(spec, list);
    for (size_t i = 0; i < cs.size(); ++i) {
      const Json& sc = Obj(cs[i], "securityContext");
      const Json* priv = api::Field(sc, "privileged");
      if (priv != nullptr && priv->is_boolean() && priv->get<bool>()) {
        e.push_back(Idx(where + ".spec." + list, i) +
                    ".securityContext.privileged: a warmup pod runs no privileged container");
      }
    }
  }
  for (const auto& v : List(spec, "volumes")) {
    const std::string name = Str(v, "name");
    if (std::find(std::begin(kReservedVolumes), std::end(kReservedVolumes), name) !=
        std::end(kReservedVolumes)) {
      e.push_back(StrCat({where, ".spec.volumes: \"", name,
                          "\" is the name of a volume the operator adds; rename it"}));
    }
  }
  if (c->gpus < 1) {
    e.push_back(where + ": no container asks for nvidia.com/gpu; a server warmup runs on as " +
                "many GPUs as the template asks for (set resources.limits.nvidia.com/gpu)");
  }
  return e;
}

StatusOr<int64_t> PodGpus(const Json& pod_spec) {
  int64_t total = 0;
  for (const auto& c : List(pod_spec, "containers")) {
    if (!c.is_object()) continue;
    KC_ASSIGN_OR_RETURN(int64_t n, ContainerGpus(c));
    total += n;
  }
  return total;
}

std::string ServerCommandDigest(const ServingContainer& c) {
  const Json j = {{"args", c.args}, {"command", c.command}};
  return Sha256Hex(j.dump());
}

std::string PromptOfWords(int64_t words) {
  static constexpr std::string_view kWord = "hello ";
  std::string out;
  if (words <= 0) return out;
  out.reserve(static_cast<size_t>(words) * kWord.size());
  for (int64_t i = 0; i < words; ++i) out += kWord;
  out.pop_back();
  return out;
}

std::vector<WarmupCall> PlanWarmupCalls(const ServerSpec& s) {
  std::vector<WarmupCall> out;
  for (size_t i = 0; i < s.requests.size(); ++i) {
    const WarmupRequest& r = s.requests[i];
    std::vector<int64_t> lengths = r.prompt_tokens;
    if (lengths.empty()) lengths.push_back(0);  // 0: the body as written
    for (int64_t n : lengths) {
      for (int32_t k = 0; k < std::max(1, r.repeat); ++k) {
        WarmupCall c;
        c.method = !r.method.empty() ? r.method : (r.body.is_null() ? "GET" : "POST");
        c.path = r.path;
        c.headers = r.headers;
        Json body = r.body;
        if (n > 0 && body.is_object()) body["prompt"] = PromptOfWords(n);
        if (body.is_string()) {
          c.body = body.get<std::string>();
        } else if (!body.is_null()) {
          c.body = body.dump();
          if (!c.headers.contains("Content-Type")) c.headers["Content-Type"] = "application/json";
        }
        c.label = "requests[" + std::to_string(i) + "]" +
                  (n > 0 ? " prompt=" + std::to_string(n) : "") +
                  (r.repeat > 1 ? " #" + std::to_string(k + 1) : "");
        out.push_back(std::move(c));
      }
    }
  }
  return out;
}

}  // namespace kc::core
