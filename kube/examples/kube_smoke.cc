// kube-smoke: a short end-to-end run of the kube/ client against a cluster.
//
//   kube-smoke [--kubeconfig FILE] [--context NAME] [--namespace NS]
//
// Lists the nodes, creates a ConfigMap, watches it while patching it twice,
// deletes it, and prints one line per watch event. Exits 0 when the watch
// saw ADDED, MODIFIED, MODIFIED, DELETED in that order; 1 otherwise (with
// the reason on stderr); 2 on bad usage.
#include <unistd.h>

#include <chrono>
#include <future>
#include <iostream>
#include <string>
#include <vector>

#include "api/node.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/rest_client.h"
#include "kube/watch_decoder.h"

namespace {

using kc::kube::Json;
using kc::kube::WatchEvent;

int Fail(const std::string& what, const kc::Status& s) {
  std::cerr << "kube-smoke: " << what << ": " << s << "\n";
  return 1;
}

int Usage() {
  std::cerr << "usage: kube-smoke [--kubeconfig FILE] [--context NAME] [--namespace NS]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  kc::kube::DefaultConfigOptions config_options;
  std::string ns = "default";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) {
        std::cerr << "kube-smoke: " << flag << " needs a value\n";
        return nullptr;
      }
      return argv[++i];
    };
    const char* v = nullptr;
    if (arg == "--kubeconfig") {
      if ((v = value("--kubeconfig")) == nullptr) return Usage();
      config_options.explicit_path = v;
    } else if (arg == "--context") {
      if ((v = value("--context")) == nullptr) return Usage();
      config_options.context_name = v;
    } else if (arg == "--namespace" || arg == "-n") {
      if ((v = value("--namespace")) == nullptr) return Usage();
      ns = v;
    } else if (arg == "--help" || arg == "-h") {
      Usage();
      return 0;
    } else {
      std::cerr << "kube-smoke: unknown argument \"" << arg << "\"\n";
      return Usage();
    }
  }

  auto config = kc::kube::LoadDefault(config_options);
  if (!config.ok()) return Fail("loading the cluster config", config.status());
  auto made = kc::kube::NewClient(*config);
  if (!made.ok()) return Fail("creating the client", made.status());
  kc::kube::Client& client = **made;
  std::cout << "server: " << config->server << " (from " << config->source << ")\n";

  auto nodes = kc::kube::ListAll(client, kc::kube::resources::kNodes, "", {});
  if (!nodes.ok()) return Fail("listing nodes", nodes.status());
  std::cout << "nodes: " << nodes->items.size() << "\n";
  for (const Json& item : nodes->items) {
    const auto node = item.get<kc::api::Node>();
    std::cout << "  node " << node.metadata.name << (node.Ready() ? " Ready" : " NotReady")
              << (node.unschedulable ? " (cordoned)" : "") << "\n";
  }

  const kc::kube::Resource& cm = kc::kube::resources::kConfigMaps;
  const std::string name = "kube-smoke-" + std::to_string(::getpid());
  kc::kube::ListOptions list;
  list.field_selector = "metadata.name=" + name;
  auto start = client.List(cm, ns, list);
  if (!start.ok()) return Fail("listing configmaps", start.status());

  // Watch from the list's resourceVersion, so every change made after it
  // arrives, even those made before the stream is open.
  kc::kube::WatchOptions watch_options;
  watch_options.field_selector = list.field_selector;
  watch_options.resource_version = start->resource_version;
  watch_options.timeout_seconds = 60;
  std::vector<WatchEvent::Type> seen;
  std::stop_source stop;
  auto watch = std::async(std::launch::async, [&] {
    return client.Watch(cm, ns, watch_options, stop.get_token(), [&](const WatchEvent& e) {
      if (e.type == WatchEvent::Type::kBookmark) return true;
      const Json& data = e.object.contains("data") ? e.object["data"] : Json::object();
      std::cout << "event " << kc::kube::WatchEventTypeName(e.type) << " configmap/" << ns << "/"
                << e.object["metadata"].value("name", "")
                << " resourceVersion=" << e.object["metadata"].value("resourceVersion", "")
                << " data=" << data.dump() << std::endl;
      seen.push_back(e.type);
      return e.type != WatchEvent::Type::kDeleted;
    });
  });

  auto cleanup_and_fail = [&](const std::string& what, const kc::Status& s) {
    stop.request_stop();
    (void)client.Delete(cm, ns, name);
    return Fail(what, s);
  };
  auto created =
      client.Create(cm, ns, Json{{"metadata", {{"name", name}}}, {"data", {{"step", "created"}}}});
  if (!created.ok()) return cleanup_and_fail("creating configmap " + name, created.status());
  std::cout << "created configmap/" << ns << "/" << name << "\n";
  for (const char* step : {"patched-1", "patched-2"}) {
    auto patched =
        client.Patch(cm, ns, name, kc::kube::PatchType::kMerge, Json{{"data", {{"step", step}}}});
    if (!patched.ok()) return cleanup_and_fail("patching configmap " + name, patched.status());
    std::cout << "patched configmap/" << ns << "/" << name << " step=" << step << "\n";
  }
  kc::Status deleted = client.Delete(cm, ns, name);
  if (!deleted.ok()) return cleanup_and_fail("deleting configmap " + name, deleted);
  std::cout << "deleted configmap/" << ns << "/" << name << "\n";

  if (watch.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    stop.request_stop();
    watch.wait();
    return Fail("watching", kc::DeadlineExceededError("the DELETED event did not arrive in 30s"));
  }
  kc::Status watched = watch.get();
  if (!watched.ok()) return Fail("watching", watched);
  const std::vector<WatchEvent::Type> want = {WatchEvent::Type::kAdded, WatchEvent::Type::kModified,
                                              WatchEvent::Type::kModified,
                                              WatchEvent::Type::kDeleted};
  if (seen != want) {
    return Fail("watching", kc::InternalError("expected ADDED, MODIFIED, MODIFIED, DELETED; saw " +
                                              std::to_string(seen.size()) + " events"));
  }
  std::cout << "ok: the watch saw every change in order\n";
  return 0;
}
