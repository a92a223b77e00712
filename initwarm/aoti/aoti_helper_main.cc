// kc-aoti-check: loads an AOTInductor package (.pt2) through libtorch's
// AOTIModelPackageLoader and runs it on random inputs on the GPU.
//
//   kc-aoti-check --package PATH [--model-name model] [--runs N]
//                 [--inputs "bfloat16:4x256x512;int64:4"] [--prime]
//
// --prime: after constructing the loader, run the model once on synthetic
// inputs (reported as prime_ms) before the timed first call on fresh
// inputs, as a server does before it reports ready. The first call of a
// process otherwise pays for loading the package's kernels (the AOTI
// runtime loads each cubin on first use) and for cuBLAS initialisation.
//
// Without --inputs the shapes come from the package's own metadata key
// "kc.inputs" (set by the warmup through aot_inductor.metadata). Prints one
// JSON object: {"ok":true,"load_ms","first_run_ms","steady_run_ms",
// "outputs":[[dims]...]} and exits 0, or {"ok":false,"error"} and exits 1.
// Built only where libtorch is found; `initwarm` runs it as a child process
// (initwarm/aoti/aoti_check.h) so initwarm itself stays static.
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct InputSpec {
  c10::ScalarType dtype;
  std::vector<int64_t> dims;
};

bool ParseDtype(const std::string& s, c10::ScalarType* out) {
  if (s == "float32" || s == "float")
    *out = c10::kFloat;
  else if (s == "float16" || s == "half")
    *out = c10::kHalf;
  else if (s == "bfloat16")
    *out = c10::kBFloat16;
  else if (s == "int64" || s == "long")
    *out = c10::kLong;
  else if (s == "int32" || s == "int")
    *out = c10::kInt;
  else
    return false;
  return true;
}

// "bfloat16:4x256x512;int64:4"
bool ParseInputs(const std::string& spec, std::vector<InputSpec>* out, std::string* err) {
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ';');) {
    if (item.empty()) continue;
    auto colon = item.find(':');
    if (colon == std::string::npos) {
      *err = "input \"" + item + "\" is not dtype:d0xd1x...";
      return false;
    }
    InputSpec in{};
    if (!ParseDtype(item.substr(0, colon), &in.dtype)) {
      *err = "unknown dtype in \"" + item + "\"";
      return false;
    }
    std::stringstream ds(item.substr(colon + 1));
    for (std::string d; std::getline(ds, d, 'x');) {
      try {
        in.dims.push_back(std::stoll(d));
      } catch (const std::exception&) {
        *err = "bad dimension \"" + d + "\" in \"" + item + "\"";
        return false;
      }
    }
    out->push_back(std::move(in));
  }
  if (out->empty()) {
    *err = "no inputs given";
    return false;
  }
  return true;
}

double MsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

int Fail(const std::string& why) {
  std::cout << nlohmann::json{{"ok", false}, {"error", why}}.dump() << std::endl;
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string package;
  std::string model_name = "model";
  std::string inputs_spec;
  int runs = 10;
  bool prime = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : std::string(); };
    if (a == "--package")
      package = next();
    else if (a == "--model-name")
      model_name = next();
    else if (a == "--inputs")
      inputs_spec = next();
    else if (a == "--prime")
      prime = true;
    else if (a == "--runs")
      runs = std::max(2, std::atoi(next().c_str()));
    else
      return Fail("unknown argument " + a);
  }
  if (package.empty()) return Fail("--package is required");
  try {
    if (!torch::cuda::is_available()) return Fail("no CUDA device visible to libtorch");
    torch::NoGradGuard no_grad;
    auto t0 = std::chrono::steady_clock::now();
    torch::inductor::AOTIModelPackageLoader loader(package, model_name);
    double load_ms = MsSince(t0);
    if (inputs_spec.empty()) {
      auto meta = loader.get_metadata();
      auto it = meta.find("kc.inputs");
      if (it == meta.end()) {
        return Fail("package has no \"kc.inputs\" metadata; pass --inputs dtype:d0xd1;...");
      }
      inputs_spec = it->second;
    }
    std::vector<InputSpec> specs;
    std::string err;
    if (!ParseInputs(inputs_spec, &specs, &err)) return Fail(err);
    auto make_inputs = [&specs]() {
      std::vector<at::Tensor> inputs;
      for (const auto& s : specs) {
        auto opts = torch::TensorOptions().dtype(s.dtype).device(torch::kCUDA);
        if (c10::isIntegralType(s.dtype, false)) {
          inputs.push_back(torch::randint(0, 100, s.dims, opts));
        } else {
          inputs.push_back(torch::randn(s.dims, opts));
        }
      }
      return inputs;
    };
    double prime_ms = 0;
    if (prime) {
      std::vector<at::Tensor> synthetic = make_inputs();
      torch::cuda::synchronize();
      auto tp = std::chrono::steady_clock::now();
      loader.run(synthetic);
      torch::cuda::synchronize();
      prime_ms = MsSince(tp);
    }
    std::vector<at::Tensor> inputs = make_inputs();
    torch::cuda::synchronize();
    auto t1 = std::chrono::steady_clock::now();
    std::vector<at::Tensor> outputs = loader.run(inputs);
    torch::cuda::synchronize();
    double first_ms = MsSince(t1);
    std::vector<double> steady;
    for (int r = 1; r < runs; ++r) {
      auto t = std::chrono::steady_clock::now();
      outputs = loader.run(inputs);
      torch::cuda::synchronize();
      steady.push_back(MsSince(t));
    }
    std::vector<double> steady_in_order = steady;
    std::sort(steady.begin(), steady.end());
    nlohmann::json shapes = nlohmann::json::array();
    bool finite = true;
    for (const auto& o : outputs) {
      shapes.push_back(o.sizes().vec());
      if (o.is_floating_point() && !torch::isfinite(o).all().item<bool>()) finite = false;
    }
    if (!finite) return Fail("package ran but produced non-finite outputs");
    std::cout << nlohmann::json{{"ok", true},
                                {"package", package},
                                {"load_ms", load_ms},
                                {"primed", prime},
                                {"prime_ms", prime_ms},
                                {"second_run_ms", steady.empty() ? 0.0 : steady_in_order[0]},
                                {"first_run_ms", first_ms},
                                {"steady_run_ms", steady[steady.size() / 2]},
                                {"inputs", inputs_spec},
                                {"outputs", shapes}}
                     .dump()
              << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::string what = e.what();
    auto nl = what.find("\nException raised from");
    if (nl != std::string::npos) what.resize(nl);
    return Fail(what);
  }
}
