// ClusterConfig: where the API server is and how to authenticate to it.
//
// Sources, in LoadDefault() order:
//   1. an explicit kubeconfig path (a --kubeconfig flag);
//   2. $KUBECONFIG (the first existing file of a ':'-separated list; files
//      are not merged);
//   3. in-cluster: the service-account token, CA and namespace under
//      /var/run/secrets/kubernetes.io/serviceaccount plus
//      KUBERNETES_SERVICE_HOST/PORT;
//   4. ~/.kube/config.
// Kubeconfig support: clusters (server, certificate-authority[-data],
// insecure-skip-tls-verify, tls-server-name), users (client-certificate[-data],
// client-key[-data], token, tokenFile), contexts (cluster, user, namespace),
// current-context. Relative file paths resolve against the kubeconfig's
// directory. Files are read at load time into the *_pem fields; a token
// file stays a path (token_file) because service-account tokens rotate.
// exec and auth-provider plugins, and username/password, are not supported
// and are reported as such.
//
// Errors are InvalidArgument (NotFound for a missing kubeconfig file) and
// name the file, the field (e.g. `users[0].user.client-key-data`) and the fix.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "base/status.h"

namespace kc::kube {

struct ClusterConfig {
  std::string server;  // "https://127.0.0.1:6443"
  std::string ca_pem;  // empty: the system trust store
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string bearer_token;  // static token
  std::string token_file;    // re-read periodically (rotating tokens); wins over bearer_token
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;    // overrides the name checked in the server certificate
  std::string default_namespace;  // context namespace / in-cluster namespace; "" = "default"
  std::string source;             // where this came from, for messages

  std::chrono::milliseconds request_timeout{30'000};
  // Idle timeout of a watch stream. The API server sends a bookmark about
  // once a minute, so a watch quiet for longer than this is presumed dead.
  std::chrono::milliseconds watch_idle_timeout{150'000};
  // How often token_file is re-read (service-account tokens rotate hourly).
  std::chrono::milliseconds token_refresh{60'000};
  double qps = 20;  // client-side rate limit; <= 0 disables it
  int burst = 40;
};

// Loads `path`; `context_name` empty = current-context.
StatusOr<ClusterConfig> LoadKubeconfig(const std::string& path,
                                       const std::string& context_name = "");

// Parses kubeconfig text; `path` names it in messages and anchors relative
// file paths.
StatusOr<ClusterConfig> ParseKubeconfig(const std::string& yaml, const std::string& path,
                                        const std::string& context_name = "");

struct InClusterOptions {
  std::string dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  // Environment lookup (KUBERNETES_SERVICE_HOST/PORT); nullptr result = unset.
  std::function<const char*(const char*)> getenv;  // empty = ::getenv
};

StatusOr<ClusterConfig> LoadInClusterConfig(const InClusterOptions& options = {});

// True when the in-cluster environment is present (host variable set and
// the token file exists).
bool InClusterAvailable(const InClusterOptions& options = {});

struct DefaultConfigOptions {
  std::string explicit_path;  // --kubeconfig
  std::string context_name;   // --context
  InClusterOptions in_cluster;
  std::string home;  // empty: $HOME
};

StatusOr<ClusterConfig> LoadDefault(const DefaultConfigOptions& options);
// Shorthand: LoadDefault({.explicit_path = explicit_path}).
StatusOr<ClusterConfig> LoadDefault(const std::string& explicit_path = "");

}  // namespace kc::kube
