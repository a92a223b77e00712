#include "core/api_types.h"

#include <algorithm>
#include <cctype>

#include "api/json_read.h"
#include "base/duration.h"
#include "base/numbers.h"
#include "core/cache_env.h"

namespace kc::core {
namespace {

using api::AddFieldError;
using api::ReadBool;
using api::ReadInt;
using api::ReadObject;
using api::ReadObjectList;
using api::ReadString;
using api::ReadStringList;
using api::ReadStringMap;
using api::ReadTime;
using Errors = api::FieldErrors;

// A string decoded by `parse` (text -> StatusOr<T>: an enum's Parse*
// function, ParseApiDuration): a value it refuses is an error quoting its
// message ("path.key: <message>") and leaves *out. Absent or null: *out
// stays (the default).
template <typename T, typename Parse>
void ReadDecoded(const Json& j, std::string_view key, const std::string& path, Errors* errors,
                 Parse parse, T* out) {
  const Json* v = api::Field(j, key);
  if (v == nullptr || v->is_null()) return;
  if (!v->is_string()) return AddFieldError(errors, api::JoinPath(path, key), "expected a string");
  auto decoded = parse(v->get_ref<const std::string&>());
  if (!decoded.ok()) {
    return AddFieldError(errors, api::JoinPath(path, key), decoded.status().message());
  }
  *out = *decoded;
}

// spec durations: Go's form (base/duration.h's kApiDurations).
StatusOr<std::chrono::seconds> ParseApiDuration(std::string_view text) {
  return ParseDuration(text);
}

void PutTime(Json& j, const char* key, const std::optional<api::Time>& t) {
  if (t) j[key] = api::FormatTime(*t);
}

RuntimeMissStatus RuntimeMissesFromJson(const Json& fp_json, const std::string& fp,
                                        Errors* errors) {
  const std::string p = api::JoinPath(fp, "runtimeMisses");
  const Json& j = ReadObject(fp_json, "runtimeMisses", fp, errors);
  RuntimeMissStatus m;
  ReadInt(j, "count", p, errors, &m.count);
  ReadInt(j, "pods", p, errors, &m.pods);
  std::vector<Json> top;
  ReadObjectList(j, "top", p, errors, &top);
  for (size_t i = 0; i < top.size() && i < kMaxRuntimeMissTop; ++i) {
    const std::string tp = p + ".top[" + std::to_string(i) + "]";
    RuntimeMissTop t;
    ReadString(top[i], "framework", tp, errors, &t.framework);
    ReadString(top[i], "detail", tp, errors, &t.detail);
    ReadInt(top[i], "pods", tp, errors, &t.pods);
    m.top.push_back(std::move(t));
  }
  return m;
}

Json RuntimeMissesToJson(const RuntimeMissStatus& m) {
  Json top = Json::array();
  for (const auto& t : m.top) {
    top.push_back({{"framework", t.framework}, {"detail", t.detail}, {"pods", t.pods}});
  }
  return {{"count", m.count}, {"pods", m.pods}, {"top", std::move(top)}};
}

HarvestStatus HarvestStatusFromJson(const Json& fp_json, const std::string& fp, Errors* errors) {
  const std::string p = api::JoinPath(fp, "harvest");
  const Json& j = ReadObject(fp_json, "harvest", fp, errors);
  HarvestStatus h;
  ReadInt(j, "generation", p, errors, &h.generation);
  ReadString(j, "job", p, errors, &h.job);
  ReadString(j, "jobUid", p, errors, &h.job_uid);
  ReadDecoded(j, "lastResult", p, errors, ParseHarvestOutcome, &h.last_result);
  ReadTime(j, "lastTime", p, errors, &h.last_time);
  ReadString(j, "baseDigest", p, errors, &h.base_digest);
  ReadInt(j, "addedFiles", p, errors, &h.added_files);
  ReadInt(j, "addedBytes", p, errors, &h.added_bytes);
  ReadStringList(j, "added", p, errors, &h.added);
  ReadInt(j, "conflicts", p, errors, &h.conflicts);
  ReadInt(j, "rejected", p, errors, &h.rejected);
  ReadString(j, "message", p, errors, &h.message);
  return h;
}

Json HarvestStatusToJson(const HarvestStatus& h) {
  Json j = {{"generation", h.generation},  {"addedFiles", h.added_files},
            {"addedBytes", h.added_bytes}, {"added", h.added},
            {"conflicts", h.conflicts},    {"rejected", h.rejected}};
  if (!h.job.empty()) j["job"] = h.job;
  if (!h.job_uid.empty()) j["jobUid"] = h.job_uid;
  if (h.last_result) j["lastResult"] = HarvestOutcomeName(*h.last_result);
  PutTime(j, "lastTime", h.last_time);
  if (!h.base_digest.empty()) j["baseDigest"] = h.base_digest;
  if (!h.message.empty()) j["message"] = h.message;
  return j;
}

ConvergenceStatus ConvergenceStatusFromJson(const Json& fp_json, const std::string& fp,
                                            Errors* errors) {
  const std::string p = api::JoinPath(fp, "convergence");
  const Json& j = ReadObject(fp_json, "convergence", fp, errors);
  ConvergenceStatus c;
  ReadInt(j, "passes", p, errors, &c.passes);
  ReadBool(j, "converged", p, errors, &c.converged);
  ReadInt(j, "lastPassEntries", p, errors, &c.last_pass_entries);
  ReadInt(j, "lastPassAutotune", p, errors, &c.last_pass_autotune);
  ReadString(j, "message", p, errors, &c.message);
  return c;
}

Json ConvergenceStatusToJson(const ConvergenceStatus& c) {
  return {{"passes", c.passes},
          {"converged", c.converged},
          {"lastPassEntries", c.last_pass_entries},
          {"lastPassAutotune", c.last_pass_autotune},
          {"message", c.message}};
}

ConvergenceSpec ConvergenceSpecFromJson(const Json& w, const std::string& wp, Errors* errors) {
  const std::string p = wp + ".convergence";
  const Json& j = ReadObject(w, "convergence", wp, errors);
  ConvergenceSpec c;
  ReadInt(j, "maxPasses", p, errors, &c.max_passes);
  ReadDecoded(j, "onNotConverged", p, errors, ParseNotConvergedPolicy, &c.on_not_converged);
  return c;
}

}  // namespace

KernelCacheSpec SpecFromJson(const Json& s, std::vector<std::string>* errors) {
  KernelCacheSpec spec;
  if (!s.is_object()) {
    AddFieldError(errors, "spec", "expected an object");
    return spec;
  }
  const std::string p = "spec";
  spec.pod_selector = api::LabelSelectorFromJson(ReadObject(s, "podSelector", p, errors),
                                                 "spec.podSelector", errors);
  ReadStringMap(s, "nodeSelector", p, errors, &spec.node_selector);
  ReadObjectList(s, "tolerations", p, errors, &spec.tolerations);
  ReadString(s, "image", p, errors, &spec.image);
  ReadStringMap(s, "runtime", p, errors, &spec.runtime);

  const std::string wp = "spec.warmup";
  const Json& w = ReadObject(s, "warmup", p, errors);
  ReadStringList(w, "command", wp, errors, &spec.warmup.command);
  ReadStringList(w, "args", wp, errors, &spec.warmup.args);
  ReadObjectList(w, "env", wp, errors, &spec.warmup.env);
  ReadObjectList(w, "shapes", wp, errors, &spec.warmup.shapes);
  if (auto it = w.find("resources"); it != w.end() && !it->is_null()) {
    if (it->is_object()) {
      spec.warmup.resources = *it;
    } else {
      AddFieldError(errors, wp + ".resources", "expected an object");
    }
  }
  ReadInt(w, "activeDeadlineSeconds", wp, errors, &spec.warmup.active_deadline_seconds);
  ReadInt(w, "backoffLimit", wp, errors, &spec.warmup.backoff_limit);
  ReadStringMap(w, "podAnnotations", wp, errors, &spec.warmup.pod_annotations);
  spec.warmup.convergence = ConvergenceSpecFromJson(w, wp, errors);
  if (const Json* server = api::Field(w, "server"); server != nullptr) {
    if (server->is_object()) {
      spec.warmup.server = ServerSpecFromJson(*server, wp + ".server", errors);
    } else {
      AddFieldError(errors, wp + ".server", "expected an object");
    }
  }

  const std::string sp = "spec.storage";
  const Json& st = ReadObject(s, "storage", p, errors);
  ReadString(st, "storageClassName", sp, errors, &spec.storage.storage_class_name);
  ReadString(st, "size", sp, errors, &spec.storage.size);
  ReadString(st, "existingClaim", sp, errors, &spec.storage.existing_claim);
  ReadBool(st, "shareExistingClaim", sp, errors, &spec.storage.share_existing_claim);

  const std::string cp = "spec.consume";
  const Json& c = ReadObject(s, "consume", p, errors);
  ReadDecoded(c, "mode", cp, errors, ParseConsumeMode, &spec.consume.mode);
  ReadInt(c, "waitTimeoutSeconds", cp, errors, &spec.consume.wait_timeout_seconds);
  ReadDecoded(c, "onTimeout", cp, errors, ParseOnTimeout, &spec.consume.on_timeout);
  ReadDecoded(c, "verify", cp, errors, ParseLevel, &spec.consume.verify);

  const std::string rp = "spec.retention";
  const Json& r = ReadObject(s, "retention", p, errors);
  ReadString(r, "staleAfter", rp, errors, &spec.retention.stale_after);
  ReadString(r, "absentAfter", rp, errors, &spec.retention.absent_after);
  ReadString(r, "maxBytes", rp, errors, &spec.retention.max_bytes);
  ReadString(r, "purgeSchedule", rp, errors, &spec.retention.purge_schedule);

  const std::string hp = "spec.harvest";
  const Json& h = ReadObject(s, "harvest", p, errors);
  ReadDecoded(h, "mode", hp, errors, ParseHarvestMode, &spec.harvest.mode);
  ReadDecoded(h, "interval", hp, errors, ParseApiDuration, &spec.harvest.interval);
  ReadInt(h, "maxFilesPerPod", hp, errors, &spec.harvest.max_files_per_pod);
  ReadString(h, "maxBytesPerPod", hp, errors, &spec.harvest.max_bytes_per_pod);
  ReadInt(h, "maxFilesPerFingerprint", hp, errors, &spec.harvest.max_files_per_fingerprint);
  ReadString(h, "maxBytesPerFingerprint", hp, errors, &spec.harvest.max_bytes_per_fingerprint);

  const std::string scp = "spec.securityContext";
  const Json& sc = ReadObject(s, "securityContext", p, errors);
  for (auto [key, field] : {std::pair{"fsGroup", &spec.security_context.fs_group},
                            std::pair{"runAsUser", &spec.security_context.run_as_user}}) {
    auto it = sc.find(key);
    if (it == sc.end() || it->is_null()) continue;
    int64_t v = 0;
    Errors local;
    ReadInt(sc, key, scp, &local, &v);
    if (local.empty()) {
      *field = v;
    } else if (errors != nullptr) {
      errors->insert(errors->end(), local.begin(), local.end());
    }
  }
  return spec;
}

Json SpecToJson(const KernelCacheSpec& spec) {
  Json s = Json::object();
  s["podSelector"] = api::LabelSelectorToJson(spec.pod_selector);
  if (!spec.node_selector.empty()) s["nodeSelector"] = spec.node_selector;
  if (!spec.tolerations.empty()) s["tolerations"] = spec.tolerations;
  s["image"] = spec.image;
  if (!spec.runtime.empty()) s["runtime"] = spec.runtime;
  Json w = Json::object();
  if (!spec.warmup.command.empty() || !spec.warmup.server) w["command"] = spec.warmup.command;
  if (spec.warmup.server) w["server"] = ServerSpecToJson(*spec.warmup.server);
  if (!spec.warmup.args.empty()) w["args"] = spec.warmup.args;
  if (!spec.warmup.env.empty()) w["env"] = spec.warmup.env;
  if (!spec.warmup.shapes.empty()) w["shapes"] = spec.warmup.shapes;
  if (!spec.warmup.resources.empty()) w["resources"] = spec.warmup.resources;
  w["activeDeadlineSeconds"] = spec.warmup.active_deadline_seconds;
  w["backoffLimit"] = spec.warmup.backoff_limit;
  if (!spec.warmup.pod_annotations.empty()) w["podAnnotations"] = spec.warmup.pod_annotations;
  if (spec.warmup.convergence != ConvergenceSpec{}) {
    w["convergence"] = {
        {"maxPasses", spec.warmup.convergence.max_passes},
        {"onNotConverged", NotConvergedPolicyName(spec.warmup.convergence.on_not_converged)}};
  }
  s["warmup"] = std::move(w);
  Json st = Json::object();
  if (!spec.storage.storage_class_name.empty()) {
    st["storageClassName"] = spec.storage.storage_class_name;
  }
  if (!spec.storage.size.empty()) st["size"] = spec.storage.size;
  if (!spec.storage.existing_claim.empty()) st["existingClaim"] = spec.storage.existing_claim;
  if (spec.storage.share_existing_claim) st["shareExistingClaim"] = true;
  s["storage"] = std::move(st);
  s["consume"] = {{"mode", ConsumeModeName(spec.consume.mode)},
                  {"waitTimeoutSeconds", spec.consume.wait_timeout_seconds},
                  {"onTimeout", OnTimeoutName(spec.consume.on_timeout)},
                  {"verify", LevelName(spec.consume.verify)}};
  Json r = {{"staleAfter", spec.retention.stale_after},
            {"absentAfter", spec.retention.absent_after}};
  if (!spec.retention.max_bytes.empty()) r["maxBytes"] = spec.retention.max_bytes;
  if (!spec.retention.purge_schedule.empty()) r["purgeSchedule"] = spec.retention.purge_schedule;
  s["retention"] = std::move(r);
  s["harvest"] = {{"mode", HarvestModeName(spec.harvest.mode)},
                  {"interval", FormatDuration(spec.harvest.interval)},
                  {"maxFilesPerPod", spec.harvest.max_files_per_pod},
                  {"maxBytesPerPod", spec.harvest.max_bytes_per_pod},
                  {"maxFilesPerFingerprint", spec.harvest.max_files_per_fingerprint},
                  {"maxBytesPerFingerprint", spec.harvest.max_bytes_per_fingerprint}};
  Json sc = Json::object();
  if (spec.security_context.fs_group) sc["fsGroup"] = *spec.security_context.fs_group;
  if (spec.security_context.run_as_user) sc["runAsUser"] = *spec.security_context.run_as_user;
  if (!sc.empty()) s["securityContext"] = std::move(sc);
  return s;
}

KernelCacheStatus StatusFromJson(const Json& s, std::vector<std::string>* errors) {
  KernelCacheStatus st;
  if (!s.is_object()) return st;
  const std::string p = "status";
  ReadInt(s, "observedGeneration", p, errors, &st.observed_generation);
  ReadString(s, "phase", p, errors, &st.phase);
  ReadInt(s, "readyFingerprints", p, errors, &st.ready_fingerprints);
  ReadInt(s, "totalFingerprints", p, errors, &st.total_fingerprints);
  ReadString(s, "ready", p, errors, &st.ready);
  ReadInt(s, "totalBytes", p, errors, &st.total_bytes);
  ReadString(s, "size", p, errors, &st.size);
  ReadString(s, "claimName", p, errors, &st.claim_name);
  st.conditions = api::ConditionsFromJson(s, "conditions", p, errors);
  std::vector<Json> fps;
  ReadObjectList(s, "fingerprints", p, errors, &fps);
  for (size_t i = 0; i < fps.size(); ++i) {
    const std::string fp = "status.fingerprints[" + std::to_string(i) + "]";
    const Json& j = fps[i];
    FingerprintStatus f;
    ReadString(j, "id", fp, errors, &f.id);
    ReadString(j, "gpuProduct", fp, errors, &f.gpu_product);
    ReadString(j, "computeCapability", fp, errors, &f.compute_capability);
    ReadString(j, "driver", fp, errors, &f.driver);
    ReadString(j, "cudaDriver", fp, errors, &f.cuda_driver);
    ReadString(j, "arch", fp, errors, &f.arch);
    ReadInt(j, "nodes", fp, errors, &f.nodes);
    ReadString(j, "state", fp, errors, &f.state);
    ReadString(j, "job", fp, errors, &f.job);
    ReadInt(j, "bytes", fp, errors, &f.bytes);
    ReadInt(j, "files", fp, errors, &f.files);
    ReadString(j, "manifestDigest", fp, errors, &f.manifest_digest);
    ReadTime(j, "readyAt", fp, errors, &f.ready_at);
    ReadTime(j, "staleSince", fp, errors, &f.stale_since);
    ReadTime(j, "absentSince", fp, errors, &f.absent_since);
    ReadStringList(j, "lastNodes", fp, errors, &f.last_nodes);
    ReadInt(j, "failures", fp, errors, &f.failures);
    ReadString(j, "lastFailure", fp, errors, &f.last_failure);
    ReadTime(j, "lastFailureTime", fp, errors, &f.last_failure_time);
    ReadInt(j, "warmGeneration", fp, errors, &f.warm_generation);
    ReadString(j, "jobUid", fp, errors, &f.job_uid);
    ReadStringList(j, "cancelledJobUids", fp, errors, &f.cancelled_job_uids);
    ReadTime(j, "lastTransitionTime", fp, errors, &f.last_transition_time);
    if (j.contains("runtimeMisses")) f.runtime_misses = RuntimeMissesFromJson(j, fp, errors);
    if (j.contains("harvest")) f.harvest = HarvestStatusFromJson(j, fp, errors);
    if (j.contains("convergence")) f.convergence = ConvergenceStatusFromJson(j, fp, errors);
    st.fingerprints.push_back(std::move(f));
  }
  return st;
}

Json StatusToJson(const KernelCacheStatus& st) {
  Json s = Json::object();
  s["observedGeneration"] = st.observed_generation;
  Json conds = Json::array();
  for (const auto& c : st.conditions) conds.push_back(api::ConditionToJson(c));
  s["conditions"] = std::move(conds);
  if (!st.phase.empty()) s["phase"] = st.phase;
  s["readyFingerprints"] = st.ready_fingerprints;
  s["totalFingerprints"] = st.total_fingerprints;
  if (!st.ready.empty()) s["ready"] = st.ready;
  s["totalBytes"] = st.total_bytes;
  if (!st.size.empty()) s["size"] = st.size;
  if (!st.claim_name.empty()) s["claimName"] = st.claim_name;
  Json fps = Json::array();
  for (const auto& f : st.fingerprints) {
    Json j = {{"id", f.id},
              {"gpuProduct", f.gpu_product},
              {"computeCapability", f.compute_capability},
              {"driver", f.driver},
              {"cudaDriver", f.cuda_driver},
              {"arch", f.arch},
              {"nodes", f.nodes},
              {"state", f.state},
              {"bytes", f.bytes},
              {"files", f.files},
              {"failures", f.failures}};
    if (!f.job.empty()) j["job"] = f.job;
    if (!f.manifest_digest.empty()) j["manifestDigest"] = f.manifest_digest;
    PutTime(j, "readyAt", f.ready_at);
    PutTime(j, "staleSince", f.stale_since);
    PutTime(j, "absentSince", f.absent_since);
    if (!f.last_nodes.empty()) j["lastNodes"] = f.last_nodes;
    if (!f.last_failure.empty()) j["lastFailure"] = f.last_failure;
    PutTime(j, "lastFailureTime", f.last_failure_time);
    if (f.warm_generation != 0) j["warmGeneration"] = f.warm_generation;
    if (!f.job_uid.empty()) j["jobUid"] = f.job_uid;
    if (!f.cancelled_job_uids.empty()) j["cancelledJobUids"] = f.cancelled_job_uids;
    PutTime(j, "lastTransitionTime", f.last_transition_time);
    if (f.runtime_misses) j["runtimeMisses"] = RuntimeMissesToJson(*f.runtime_misses);
    if (f.harvest) j["harvest"] = HarvestStatusToJson(*f.harvest);
    if (f.convergence) j["convergence"] = ConvergenceStatusToJson(*f.convergence);
    fps.push_back(std::move(j));
  }
  s["fingerprints"] = std::move(fps);
  return s;
}

KernelCache KernelCacheFromJson(const Json& j, std::vector<std::string>* errors) {
  KernelCache kc;
  std::vector<std::string>& found = kc.decode_errors;
  if (!j.is_object()) {
    AddFieldError(&found, "(object)", "expected a JSON object");
  } else {
    if (auto it = j.find("metadata"); it != j.end()) {
      kc.metadata = api::MetadataFromJson(*it, &found);
    }
    if (auto it = j.find("spec"); it != j.end() && !it->is_null()) {
      kc.spec = SpecFromJson(*it, &found);
    } else {
      AddFieldError(&found, "spec", "missing: a KernelCache needs a spec");
    }
    // Status is ours: a malformed one is reset, not reported as a spec error.
    if (auto it = j.find("status"); it != j.end()) kc.status = StatusFromJson(*it, nullptr);
  }
  if (errors != nullptr) errors->insert(errors->end(), found.begin(), found.end());
  return kc;
}

Json KernelCacheToJson(const KernelCache& kc) {
  return {{"apiVersion", kApiVersion},
          {"kind", kKind},
          {"metadata", api::MetadataToJson(kc.metadata)},
          {"spec", SpecToJson(kc.spec)},
          {"status", StatusToJson(kc.status)}};
}

RuntimeFacts RuntimeFactsFor(const KernelCacheSpec& spec) {
  RuntimeFacts r;
  r.image = spec.image;
  r.runtime = spec.runtime;
  if (spec.warmup.server) {
    const ServerSpec& s = *spec.warmup.server;
    auto c = ServingContainerOf(s);
    if (!c.ok()) return r;
    r.image = c->image;
    r.env = c->keyed_env;
    r.gpus = c->gpus;
    if (s.tensor_parallel > 0) r.parallel["tensor"] = s.tensor_parallel;
    if (s.pipeline_parallel > 0) r.parallel["pipeline"] = s.pipeline_parallel;
    r.server = ServerCommandDigest(*c);
    return r;
  }
  for (const auto& e : spec.warmup.env) {
    if (!e.contains("name") || !e["name"].is_string()) continue;
    if (!e.contains("value") || !e["value"].is_string()) continue;  // valueFrom: not literal
    const std::string name = e["name"].get<std::string>();
    if (IsFingerprintEnv(name)) r.env[name] = e["value"].get<std::string>();
  }
  return r;
}

int64_t WarmupGpus(const KernelCacheSpec& spec) {
  if (!spec.warmup.server) return 1;
  auto c = ServingContainerOf(*spec.warmup.server);
  return c.ok() ? c->gpus : 0;
}

bool IsFingerprintEnv(std::string_view name) {
  static constexpr std::string_view kPrefixes[] = {"TRITON_", "TORCH",   "PYTORCH_", "VLLM_",
                                                   "CUDA_",   "NVIDIA_", "XLA_"};
  if (IsCacheViewEnv(name)) return false;
  for (auto p : kPrefixes) {
    if (name.starts_with(p)) return true;
  }
  return false;
}

std::string ClaimName(const KernelCache& kc) {
  if (!kc.spec.storage.existing_claim.empty()) return kc.spec.storage.existing_claim;
  return kc.metadata.name + "-cache";
}

}  // namespace kc::core
