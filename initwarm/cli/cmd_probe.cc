// `initwarm probe`: prints this node's fingerprint facts as GFD would label
// them, read from NVML and libcuda.
//
//   initwarm probe [--runtime-facts FILE]
//
// Output (one JSON object on stdout):
//   {"source":"nvml","node":{...},"labels":{"nvidia.com/gpu.product":...},
//    "fingerprint":{"id":...,"sha256":...}}   (fingerprint with --runtime-facts)
// --runtime-facts FILE: {"image":"...","runtime":{"pytorch":"2.11.0"},"env":{...}}
// (initwarm-testing also takes --facts-file FILE: node facts from a file;
// initwarm/cli/seams.h.)
// Exit codes (also in --help): 0 facts printed; 2 usage or bad input file;
// 3 no GPU visible; 1 any other failure (e.g. GPUs of different kinds).
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/exit_codes.h"
#include "core/fingerprint.h"
#include "initwarm/cli/cmd_common.h"
#include "initwarm/cli/commands.h"
#include "initwarm/cli/seams.h"
#include "initwarm/gpu/probe.h"

namespace kc::initwarm {

namespace {

StatusOr<core::RuntimeFacts> ReadRuntimeFacts(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError("--runtime-facts " + path + " cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError("--runtime-facts " + path + " is not a JSON object");
  }
  core::RuntimeFacts r;
  try {
    r.image = j.value("image", "");
    if (j.contains("runtime")) r.runtime = j["runtime"].get<std::map<std::string, std::string>>();
    if (j.contains("versions")) r.runtime = j["versions"].get<std::map<std::string, std::string>>();
    if (j.contains("env")) r.env = j["env"].get<std::map<std::string, std::string>>();
    if (j.contains("schema")) r.schema_version = j["schema"].get<int>();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError("--runtime-facts " + path + ": " + e.what() +
                                " (want {\"image\":string,\"runtime\":{string:string},"
                                "\"env\":{string:string}})");
  }
  if (r.image.empty()) {
    return InvalidArgumentError("--runtime-facts " + path + ": \"image\" is missing or empty");
  }
  return r;
}

}  // namespace

int RunProbe(const std::vector<std::string>& args) {
  FlagSet f(CommandUsage("probe"),
            "Prints the node part of the fingerprint, read from NVML and libcuda, as one JSON "
            "object: source, node facts, the labels GFD would set, and with --runtime-facts "
            "the fingerprint.\n\n"
            "exit codes: 0 facts printed; 2 bad flags or a bad input file; 3 no GPU visible; "
            "1 any other failure (e.g. GPUs of different kinds).");
  std::string runtime_path;
  std::string facts_path;
  f.String("runtime-facts", &runtime_path,
           "file with the runtime part: {\"image\",\"runtime\":{},\"env\":{}}; adds the "
           "fingerprint");
  const Seams& seams = InstalledSeams();
  if (seams.file_prober) {
    f.String("facts-file", &facts_path,
             "read node facts from this file instead of NVML (test builds only)");
  }
  if (int rc = ParseOrExit("probe", &f, args); rc >= 0) return rc;
  auto prober = facts_path.empty() ? NewNvmlProber() : seams.file_prober(facts_path);
  auto result = prober->Probe();
  if (!result.ok()) {
    std::cerr << "initwarm probe: " << result.status().ToString() << "\n";
    if (result.status().code() == StatusCode::kUnavailable) return 3;
    if (result.status().code() == StatusCode::kNotFound ||
        result.status().code() == StatusCode::kInvalidArgument) {
      return 2;
    }
    return 1;
  }
  nlohmann::json out;
  out["source"] = result->source;
  out["node"] = nlohmann::json::parse(NodeFactsJson(result->facts));
  out["labels"] = NodeLabels(result->facts);
  if (!runtime_path.empty()) {
    auto runtime = ReadRuntimeFacts(runtime_path);
    if (!runtime.ok()) {
      std::cerr << "initwarm probe: " << runtime.status().ToString() << "\n";
      return 2;
    }
    core::Fingerprint fp = core::ComputeFingerprint(result->facts, *runtime);
    out["fingerprint"] = {{"id", fp.id}, {"sha256", fp.sha256}};
  }
  std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace kc::initwarm
