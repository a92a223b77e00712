// node_store_bench: see CMakeLists.txt. The fleet is bench/scale's: 6 GPU
// products x 3 driver versions, the labels GPU Feature Discovery and the
// kubelet write (22 a node), every 50th node cordoned.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/fingerprint.h"
#include "operator/controller/node_index.h"
#include "operator/decide/decide_nodes.h"

namespace {

namespace core = kc::core;

using Labels = std::map<std::string, std::string>;

const char* const kProducts[][3] = {{"NVIDIA-H200", "9", "0"},
                                    {"NVIDIA-H100-80GB-HBM3", "9", "0"},
                                    {"NVIDIA-A100-SXM4-80GB", "8", "0"},
                                    {"NVIDIA-L40S", "8", "9"},
                                    {"NVIDIA-L4", "8", "9"},
                                    {"NVIDIA-B200", "10", "0"}};
const char* const kDrivers[] = {"550.127.08", "560.35.03", "570.124.06"};

Labels NodeLabels(int i) {
  const auto& p = kProducts[i % 6];
  const std::string driver = kDrivers[(i / 6) % 3];
  char host[16];
  std::snprintf(host, sizeof host, "gpu-%05d", i);
  return {{"kubernetes.io/hostname", host},
          {"type", "kwok"},
          {"kc-scale", "1"},
          {"nvidia.com/gpu.present", "true"},
          {"nvidia.com/gpu.product", p[0]},
          {"nvidia.com/gpu.compute.major", p[1]},
          {"nvidia.com/gpu.compute.minor", p[2]},
          {"nvidia.com/gpu.count", "8"},
          {"nvidia.com/gpu.memory", "81559"},
          {"nvidia.com/cuda.driver-version.full", driver},
          {"nvidia.com/cuda.driver-version.major", driver.substr(0, 3)},
          {"nvidia.com/cuda.runtime-version.full", "12.8"},
          {"nvidia.com/cuda.runtime-version.major", "12"},
          {"nvidia.com/cuda.runtime-version.minor", "8"},
          {"nvidia.com/gfd.timestamp", "1764700000"},
          {"kubernetes.io/arch", "amd64"},
          {"kubernetes.io/os", "linux"},
          {"beta.kubernetes.io/arch", "amd64"},
          {"beta.kubernetes.io/os", "linux"},
          {"node.kubernetes.io/instance-type", "gpu-8x"},
          {"topology.kubernetes.io/zone", "zone-" + std::to_string(i % 3)}};
}

size_t HeapInUse() {
  malloc_trim(0);
  return mallinfo2().uordblks;
}

// ---- The form it replaced: labels as std::map of strings, every pair indexed.
struct MapNode {
  std::string name;
  Labels labels;
  bool unschedulable = false;
  int64_t gpus = 8;
};

struct MapStore {
  std::map<std::string, MapNode> nodes;
  std::map<std::string, std::set<std::string>> by_label;
  void Upsert(MapNode n) {
    // NOLINTNEXTLINE(performance-inefficient-string-concatenation): the form replaced
    for (const auto& [k, v] : n.labels) by_label[k + "=" + v].insert(n.name);
    const std::string name = n.name;
    nodes.insert_or_assign(name, std::move(n));
  }
  std::vector<MapNode> Selected(const Labels& selector) const {
    std::vector<MapNode> out;
    const std::set<std::string>* rarest = nullptr;
    for (const auto& [k, v] : selector) {
      // NOLINTNEXTLINE(performance-inefficient-string-concatenation): the form replaced
      auto it = by_label.find(k + "=" + v);
      if (it == by_label.end()) return out;
      if (rarest == nullptr || it->second.size() < rarest->size()) rarest = &it->second;
    }
    for (const auto& name : *rarest) out.push_back(nodes.at(name));
    return out;
  }
};

// GroupNodes' per-node steps on map labels, as a pass ran them on copies.
size_t MapPass(const MapStore& store, const Labels& selector, const core::RuntimeFacts& runtime) {
  std::vector<MapNode> nodes = store.Selected(selector);
  std::vector<std::pair<core::NodeFacts, std::string>> ids;
  std::map<std::string, std::string> node_fp;
  std::map<std::string, std::vector<Labels>> label_sets;
  for (const auto& n : nodes) {
    auto facts = core::NodeFactsFromLabels(n.labels);
    if (!facts.ok()) continue;
    auto known =
        std::find_if(ids.begin(), ids.end(), [&](const auto& f) { return f.first == *facts; });
    if (known == ids.end()) {
      ids.emplace_back(*facts, core::ComputeFingerprint(*facts, runtime).id);
      known = std::prev(ids.end());
    }
    node_fp[n.name] = known->second;
    if (n.unschedulable) continue;
    auto labels = core::FingerprintLabels(n.labels);
    auto& sets = label_sets[known->second];
    if (std::find(sets.begin(), sets.end(), labels) == sets.end()) sets.push_back(labels);
  }
  return node_fp.size();
}

size_t IndexPass(const kc::op::NodeIndex& index, const kc::core::KernelCacheSpec& spec) {
  std::vector<kc::op::NodeView> nodes = index.Selected(spec.node_selector);
  auto groups = kc::op::decide::GroupNodes(spec, nodes, nullptr, nullptr);
  return groups.node_fp.size();
}

double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace

int main(int argc, char** argv) {
  int n = 5000;
  int passes = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    char* end = nullptr;
    const long v = std::strtol(argv[i + 1], &end, 10);
    if (end == argv[i + 1] || *end != '\0' || v < 1 || v > 1000000) {
      std::fprintf(stderr, "node_store_bench: %s %s: give a whole number 1..1000000\n",
                   flag.c_str(), argv[i + 1]);
      return 2;
    }
    if (flag == "--nodes") {
      n = static_cast<int>(v);
    } else if (flag == "--passes") {
      passes = static_cast<int>(v);
    } else {
      std::fprintf(stderr, "node_store_bench: unknown flag %s (--nodes N, --passes N)\n",
                   flag.c_str());
      return 2;
    }
  }
  kc::core::KernelCacheSpec spec;
  spec.node_selector = {{"nvidia.com/gpu.present", "true"},
                        {"nvidia.com/gpu.product", kProducts[1][0]}};
  spec.image = "registry.example/llama@sha256:" + std::string(64, '1');
  const kc::core::RuntimeFacts runtime = kc::core::RuntimeFactsFor(spec);

  const size_t h0 = HeapInUse();
  MapStore maps;
  for (int i = 0; i < n; ++i) {
    Labels l = NodeLabels(i);
    const std::string name = l.at("kubernetes.io/hostname");
    maps.Upsert({name, std::move(l), i % 50 == 3, 8});
  }
  const size_t map_bytes = HeapInUse() - h0;

  const size_t h1 = HeapInUse();
  kc::op::NodeIndex index;
  for (int i = 0; i < n; ++i) {
    kc::op::NodeView v;
    v.name = NodeLabels(i).at("kubernetes.io/hostname");
    v.labels = NodeLabels(i);
    v.unschedulable = i % 50 == 3;
    v.gpu_allocatable = 8;
    index.Upsert(std::move(v));
  }
  (void)index.Selected(spec.node_selector);  // index the selector's keys
  const size_t index_bytes = HeapInUse() - h1;

  // Passes over one pool, alternating the two forms so both see the same
  // machine state; the node counts must agree.
  std::chrono::steady_clock::duration map_time{};
  std::chrono::steady_clock::duration index_time{};
  size_t map_nodes = 0;
  size_t index_nodes = 0;
  for (int p = 0; p < passes; ++p) {
    auto t0 = std::chrono::steady_clock::now();
    map_nodes = MapPass(maps, spec.node_selector, runtime);
    auto t1 = std::chrono::steady_clock::now();
    index_nodes = IndexPass(index, spec);
    auto t2 = std::chrono::steady_clock::now();
    map_time += t1 - t0;
    index_time += t2 - t1;
  }
  if (map_nodes != index_nodes) {
    std::fprintf(stderr, "node_store_bench: the forms disagree: %zu vs %zu pool nodes\n", map_nodes,
                 index_nodes);
    return 1;
  }
  std::printf("fleet: %d nodes, %zu labels a node; pool pass: %zu nodes, %d passes each\n", n,
              NodeLabels(0).size(), index_nodes, passes);
  std::printf("| figure | std::map labels, every pair indexed | NodeIndex (LabelSet) | ratio |\n");
  std::printf("|---|---|---|---|\n");
  std::printf("| node store heap (MB) | %.1f | %.1f | %.2f |\n",
              static_cast<double>(map_bytes) / 1e6, static_cast<double>(index_bytes) / 1e6,
              static_cast<double>(index_bytes) / static_cast<double>(map_bytes));
  std::printf("| heap per node (bytes) | %zu | %zu | |\n", map_bytes / n, index_bytes / n);
  std::printf("| CPU per pool pass (ms) | %.3f | %.3f | %.3f |\n", Ms(map_time) / passes,
              Ms(index_time) / passes, Ms(index_time) / Ms(map_time));
  std::printf("| interned strings | - | %zu | |\n", kc::op::LabelSet::InternedStrings());
  return 0;
}
