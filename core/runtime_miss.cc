#include "core/runtime_miss.h"

#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/enum_name.h"

namespace kc::core {
namespace {

using json = nlohmann::json;

std::vector<std::string> Components(std::string_view path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = path.find('/', start);
    const std::string_view part =
        path.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!part.empty()) out.emplace_back(part);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

std::string Join(const std::vector<std::string>& c, std::size_t from, std::size_t to) {
  std::string s;
  for (std::size_t i = from; i < to && i < c.size(); ++i) {
    if (!s.empty()) s += '/';
    s += c[i];
  }
  return s;
}

// At most `n` bytes of `s`, "..." marking a cut.
std::string Cut(std::string s, std::size_t n) {
  if (s.size() > n) {
    s.resize(n);
    s += "...";
  }
  return s;
}

std::string IntField(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_number_integer()) return "";
  return std::string(" ") + name + "=" + std::to_string(it->get<std::int64_t>());
}

std::string ArchOf(const json& j) {
  auto t = j.find("target");
  if (t == j.end() || !t->is_object()) return "";
  auto a = t->find("arch");
  if (a == t->end()) return "";
  if (a->is_number_integer()) return " sm_" + std::to_string(a->get<std::int64_t>());
  if (a->is_string()) return " " + Cut(a->get<std::string>(), 16);
  return "";
}

// "kernel <name> num_warps=.. num_stages=.. num_ctas=.. sm_90 signature=.."
// from a Triton kernel's metadata JSON; "" when it says nothing usable.
// `name` gets the kernel's name.
std::string TritonKernelDetail(std::string_view text, std::string* name_out) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "";
  auto name = j.find("name");
  if (name == j.end() || !name->is_string()) return "";
  *name_out = Cut(name->get<std::string>(), 128);
  std::string d = "kernel " + *name_out;
  d += IntField(j, "num_warps");
  d += IntField(j, "num_stages");
  d += IntField(j, "num_ctas");
  d += ArchOf(j);
  for (const char* f : {"signature", "constants"}) {
    auto it = j.find(f);
    if (it != j.end() && !it->is_null()) d += std::string(" ") + f + "=" + Cut(it->dump(), 160);
  }
  return d;
}

// "autotune <fn> key=[...]" from a Triton autotune result.
std::string TritonAutotuneDetail(std::string_view file, std::string_view text) {
  std::string d = "autotune " + Cut(std::string(file.substr(0, file.size() - 14)), 128);
  const json j = json::parse(text, nullptr, false);
  if (!j.is_discarded() && j.is_object()) {
    auto k = j.find("key");
    if (k != j.end()) d += " key=" + Cut(k->dump(), 160);
  }
  return d;
}

// "(x: *f32, y: *f32, n: i32)" from the `tt.func public @name(...)` line of a
// Triton kernel's TTIR source (<name>.source): the argument types the
// kernel was specialised for. "" when there is no such line.
std::string TritonSignature(std::string_view text) {
  const std::size_t at = text.find("tt.func public @");
  if (at == std::string_view::npos) return "";
  std::size_t i = text.find('(', at);
  const std::size_t eol = text.find('\n', at);
  if (i == std::string_view::npos || (eol != std::string_view::npos && i > eol)) return "";
  std::string out = "(";
  int depth = 0;  // of () <> {} [] inside the argument list
  for (++i; i < text.size() && text[i] != '\n'; ++i) {
    const char c = text[i];
    if (depth == 0 && c == ')') break;
    if (c == '(' || c == '<' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '>' || c == '}' || c == ']') --depth;
    if (depth != 0 || c != '%') continue;
    // %name: type [attributes] loc(...)
    const std::size_t colon = text.find(": ", i);
    if (colon == std::string_view::npos || colon > eol) break;
    std::size_t end = colon + 2;
    int tdepth = 0;
    while (end < text.size() && (tdepth > 0 || (text[end] != ' ' && text[end] != ',' &&
                                                text[end] != ')' && text[end] != '\n'))) {
      if (text[end] == '<') ++tdepth;
      if (text[end] == '>') --tdepth;
      ++end;
    }
    std::string type(text.substr(colon + 2, end - colon - 2));
    if (type.starts_with("!tt.ptr<") && type.ends_with(">"))
      type = "*" + type.substr(8, type.size() - 9);
    if (out.size() > 1) out += ", ";
    out += std::string(text.substr(i + 1, colon - i - 1)) + ": " + type;
    if (out.size() > 200) break;
    i = end - 1;
  }
  return Cut(out, 200) + ")";
}

bool EndsWith(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

struct Key {
  MissFramework framework;
  std::string key;
  std::string detail;  // a default detail; a Triton metadata file refines it
};

Key TritonKey(const std::vector<std::string>& c) {
  if (c.size() < 3) return {MissFramework::kTriton, Join(c, 1, c.size()), "file"};
  return {MissFramework::kTriton, c[1], "entry " + Cut(c[1], 64)};
}

Key InductorKey(const std::vector<std::string>& c) {
  if (c.size() < 3) return {MissFramework::kInductor, Join(c, 1, c.size()), "file"};
  if (c[1].size() == 2)
    return {MissFramework::kInductor, Join(c, 1, 3), "generated module " + c[2]};
  const std::string& kind = c[1];
  if (c.size() >= 4 && c[2].size() == 2) {
    return {MissFramework::kInductor, kind + "/" + c[3], kind + " entry " + Cut(c[3], 64)};
  }
  return {MissFramework::kInductor, kind + "/" + c[2], kind + " entry " + Cut(c[2], 64)};
}

Key VllmKey(const std::vector<std::string>& c) {
  if (c.size() >= 4 && c[1] == "torch_compile_cache") {
    const std::string where = c[2] + "/" + c[3];
    return {MissFramework::kVllm, where, "torch.compile cache " + where};
  }
  const std::string where = Join(c, 1, std::min<std::size_t>(3, c.size() - 1));
  return {MissFramework::kVllm, where, "entry " + where};
}

// The module a JIT library's file belongs to.
Key ModuleKey(MissFramework f, const std::vector<std::string>& c) {
  std::size_t at = 1;
  if (f == MissFramework::kFlashInfer) {
    for (std::size_t i = 1; i + 1 < c.size(); ++i) {
      if (c[i] == "cached_ops") at = i + 1;
    }
  } else if (f == MissFramework::kDeepGemm) {
    at = c.size() >= 3 ? c.size() - 2 : 1;
  } else if (f == MissFramework::kTorchExtensions && c.size() >= 4 && c[1].starts_with("py") &&
             c[1].find("_cu") != std::string::npos) {
    at = 2;
  }
  const std::string module = at < c.size() ? c[at] : Join(c, 1, c.size());
  return {f, module, "module " + Cut(module, 128)};
}

Key KeyOf(std::string_view path) {
  const std::vector<std::string> c = Components(path);
  if (c.empty()) return {MissFramework::kOther, "", "file"};
  const std::string& top = c[0];
  if (top == "triton") return TritonKey(c);
  if (top == "inductor") return InductorKey(c);
  if (top == "vllm") return VllmKey(c);
  if (top == "nv") return {MissFramework::kComputeCache, "ComputeCache", "CUDA ComputeCache"};
  static const std::map<std::string, MissFramework, std::less<>> kModules = {
      {"flashinfer", MissFramework::kFlashInfer},
      {"deep_gemm", MissFramework::kDeepGemm},
      {"tilelang", MissFramework::kTileLang},
      {"torch_extensions", MissFramework::kTorchExtensions},
      {"sglang", MissFramework::kSglang}};
  auto m = kModules.find(top);
  if (m != kModules.end() && c.size() >= 2) return ModuleKey(m->second, c);
  const std::string where = Join(c, 0, 2);
  return {MissFramework::kOther, where, "entry " + where};
}

}  // namespace

std::string_view MissFrameworkName(MissFramework f) {
  switch (f) {
    case MissFramework::kTriton:
      return "triton";
    case MissFramework::kInductor:
      return "inductor";
    case MissFramework::kVllm:
      return "vllm";
    case MissFramework::kComputeCache:
      return "computecache";
    case MissFramework::kFlashInfer:
      return "flashinfer";
    case MissFramework::kDeepGemm:
      return "deepgemm";
    case MissFramework::kTileLang:
      return "tilelang";
    case MissFramework::kTorchExtensions:
      return "torch_extensions";
    case MissFramework::kSglang:
      return "sglang";
    case MissFramework::kOther:
      return "other";
  }
  return "?";
}

StatusOr<MissFramework> ParseMissFramework(std::string_view name) {
  return ParseEnumName<MissFramework>(name, kMissFrameworks, MissFrameworkName);
}

bool WantsContent(std::string_view rel) {
  if (!rel.starts_with("triton/")) return false;
  if (EndsWith(rel, ".source")) return true;
  if (!EndsWith(rel, ".json")) return false;
  const std::size_t slash = rel.rfind('/');
  return !rel.substr(slash + 1).starts_with("__grp__");
}

std::vector<RuntimeMiss> ClassifyMisses(const std::vector<WrittenFile>& files) {
  std::map<std::pair<MissFramework, std::string>, RuntimeMiss> by_key;
  std::map<std::pair<MissFramework, std::string>, std::string> signatures;  // Triton's, by key
  std::map<std::pair<MissFramework, std::string>, std::string> names;       // Triton's, by key
  for (const WrittenFile& f : files) {
    Key k = KeyOf(f.path);
    RuntimeMiss& m = by_key[{k.framework, k.key}];
    if (m.files == 0) {
      m.framework = k.framework;
      m.key = k.key;
      m.detail = std::move(k.detail);
    }
    ++m.files;
    m.bytes += f.size;
    if (k.framework != MissFramework::kTriton || !WantsContent(f.path) || f.content.empty()) {
      continue;
    }
    const std::string_view file = std::string_view(f.path).substr(f.path.rfind('/') + 1);
    if (EndsWith(file, ".source")) {
      signatures[{k.framework, k.key}] = TritonSignature(f.content);
      continue;
    }
    std::string name;
    std::string d = EndsWith(file, ".autotune.json") ? TritonAutotuneDetail(file, f.content)
                                                     : TritonKernelDetail(f.content, &name);
    if (!name.empty()) names[{k.framework, k.key}] = name;
    // A kernel's metadata names it best; an autotune result only when no
    // metadata said more.
    if (!d.empty() && (!m.detail.starts_with("kernel ") || d.starts_with("kernel "))) {
      m.detail = std::move(d);
    }
  }
  std::vector<RuntimeMiss> out;
  out.reserve(by_key.size());
  for (auto& [key, m] : by_key) {
    auto sig = signatures.find(key);
    auto name = names.find(key);
    if (name != names.end()) {
      m.kernel = name->second;
      if (sig != signatures.end() && sig->second.size() > 2) m.kernel += sig->second;
    }
    if (sig != signatures.end() && sig->second.size() > 2 && m.detail.starts_with("kernel ") &&
        m.detail.find(" signature=") == std::string::npos) {
      m.detail += " signature=" + sig->second;
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::string MissLine(const RuntimeMiss& m) {
  std::string s = "runtime miss: ";
  s += MissFrameworkName(m.framework);
  s += ' ';
  s += m.detail;
  s += " (";
  s += m.key;
  s += ", ";
  s += std::to_string(m.files);
  s += m.files == 1 ? " file, " : " files, ";
  s += std::to_string(m.bytes);
  s += " bytes)";
  return s;
}

}  // namespace kc::core
