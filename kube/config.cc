#include "kube/config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/base64.h"

namespace kc::kube {
namespace {

namespace fs = std::filesystem;

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot read \"" + path + "\"");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string Trim(std::string s) {
  const char* ws = " \t\r\n";
  s.erase(0, s.find_first_not_of(ws));
  s.erase(s.find_last_not_of(ws) + 1);
  return s;
}

// Reads one kubeconfig, remembering its path for messages.
class KubeconfigReader {
 public:
  KubeconfigReader(std::string path) : path_(std::move(path)) {  // NOLINT
    dir_ = fs::path(path_).parent_path().string();
  }

  Status Error(const std::string& field, const std::string& problem, const std::string& fix) const {
    std::string m = "kubeconfig \"" + path_ + "\": ";
    if (!field.empty()) m += field + ": ";
    m += problem;
    if (!fix.empty()) m += "; " + fix;
    return InvalidArgumentError(std::move(m));
  }

  // A scalar string field; "" when absent (or `node` is not a map: yaml-cpp
  // throws on a scalar's operator[]); error when present but not a scalar.
  StatusOr<std::string> String(const YAML::Node& node, const std::string& key,
                               const std::string& field) const {
    if (!node.IsMap()) return std::string();
    YAML::Node v = node[key];
    if (!v.IsDefined() || v.IsNull()) return std::string();
    if (!v.IsScalar()) return Error(field, "must be a string", "write it as `" + key + ": value`");
    return v.as<std::string>();
  }

  StatusOr<bool> Bool(const YAML::Node& node, const std::string& key,
                      const std::string& field) const {
    if (!node.IsMap()) return false;
    YAML::Node v = node[key];
    if (!v.IsDefined() || v.IsNull()) return false;
    bool out = false;
    if (!v.IsScalar() || !YAML::convert<bool>::decode(v, out)) {
      return Error(field, "must be true or false", "");
    }
    return out;
  }

  std::string Resolve(const std::string& file) const {
    if (file.empty() || fs::path(file).is_absolute() || dir_.empty()) return file;
    return (fs::path(dir_) / file).string();
  }

  // Finds `name` in the named list `list` (clusters/users/contexts); returns
  // its index and sets *entry to the inner map (cluster/user/context).
  StatusOr<int> Find(const YAML::Node& root, const std::string& list, const std::string& inner,
                     const std::string& name, const std::string& referenced_by,
                     YAML::Node* entry) const {
    YAML::Node seq = root[list];
    if (!seq.IsDefined() || seq.IsNull()) {
      return Error(list, "missing, but " + referenced_by + " refers to \"" + name + "\"",
                   "add a `" + list + "` entry named \"" + name + "\"");
    }
    if (!seq.IsSequence()) return Error(list, "must be a list", "");
    std::vector<std::string> names;
    for (size_t i = 0; i < seq.size(); ++i) {
      const std::string field = list + "[" + std::to_string(i) + "]";
      if (!seq[i].IsMap()) {
        return Error(field, "must be a map",
                     "write it as `- name: <name>` with its `" + inner + "`");
      }
      KC_ASSIGN_OR_RETURN(std::string n, String(seq[i], "name", field + ".name"));
      if (n == name) {
        YAML::Node body = seq[i][inner];
        if (!body.IsDefined() || body.IsNull()) body = YAML::Node(YAML::NodeType::Map);
        if (!body.IsMap())
          return Error(std::string(field).append(".").append(inner), "must be a map", "");
        *entry = body;
        return static_cast<int>(i);
      }
      names.push_back(n);
    }
    std::string have;
    for (const auto& n : names) {
      if (!have.empty()) have += ", ";
      have += '"';
      have += n;
      have += '"';
    }
    return Error(referenced_by, "no entry named \"" + name + "\" in " + list,
                 "use one of: " + (have.empty() ? std::string("(none)") : have));
  }

  // Reads PEM material given inline (base64 `data_key`) or as a file
  // (`file_key`); checks that it looks like `pem_kind` PEM.
  StatusOr<std::string> Pem(const YAML::Node& node, const std::string& prefix,
                            const std::string& data_key, const std::string& file_key,
                            const std::string& pem_marker) const {
    KC_ASSIGN_OR_RETURN(std::string data, String(node, data_key, prefix + data_key));
    KC_ASSIGN_OR_RETURN(std::string file, String(node, file_key, prefix + file_key));
    std::string pem;
    std::string field;
    if (!data.empty()) {
      field = prefix + data_key;
      StatusOr<std::string> decoded = DecodeBase64(data);
      if (!decoded.ok()) {
        return Error(field, "not valid base64 (" + decoded.status().message() + ")",
                     "paste the output of `base64 -w0 <file>`");
      }
      pem = *std::move(decoded);
    } else if (!file.empty()) {
      field = prefix + file_key;
      const std::string resolved = Resolve(file);
      StatusOr<std::string> content = ReadFile(resolved);
      if (!content.ok()) {
        return Error(field, "cannot read file \"" + resolved + "\"",
                     "fix the path (relative paths are relative to the kubeconfig's directory)");
      }
      pem = *std::move(content);
    } else {
      return std::string();
    }
    if (pem.find("-----BEGIN") == std::string::npos || pem.find(pem_marker) == std::string::npos) {
      return Error(field, "does not hold PEM data (expected a \"" + pem_marker + "\" block)",
                   "point it at the PEM file (or its base64 for *-data)");
    }
    return pem;
  }

  StatusOr<ClusterConfig> Parse(const std::string& yaml, const std::string& context_name) const {
    YAML::Node root;
    try {
      root = YAML::Load(yaml);
    } catch (const YAML::Exception& e) {
      return Error("", "not valid YAML at line " + std::to_string(e.mark.line + 1) + ": " + e.msg,
                   "fix the syntax");
    }
    if (!root.IsMap()) {
      return Error("", "not a kubeconfig (the top level is not a map)",
                   "pass a file written by `kubectl config view --raw`");
    }
    ClusterConfig config;
    config.source = path_;

    std::string context = context_name;
    if (context.empty()) {
      KC_ASSIGN_OR_RETURN(context, String(root, "current-context", "current-context"));
      if (context.empty()) {
        return Error("current-context", "not set and no context was asked for",
                     "run `kubectl config use-context NAME` or pass --context NAME");
      }
    }
    const std::string ctx_ref =
        context_name.empty() ? std::string("current-context") : std::string("--context");
    YAML::Node ctx;
    KC_ASSIGN_OR_RETURN(int ci, Find(root, "contexts", "context", context, ctx_ref, &ctx));
    const std::string ctx_field = "contexts[" + std::to_string(ci) + "].context.";
    KC_ASSIGN_OR_RETURN(std::string cluster_name, String(ctx, "cluster", ctx_field + "cluster"));
    KC_ASSIGN_OR_RETURN(std::string user_name, String(ctx, "user", ctx_field + "user"));
    KC_ASSIGN_OR_RETURN(config.default_namespace,
                        String(ctx, "namespace", ctx_field + "namespace"));
    if (cluster_name.empty()) {
      return Error(ctx_field + "cluster", "missing", "name the cluster this context uses");
    }

    YAML::Node cluster;
    KC_ASSIGN_OR_RETURN(
        int cl, Find(root, "clusters", "cluster", cluster_name, ctx_field + "cluster", &cluster));
    const std::string cl_field = "clusters[" + std::to_string(cl) + "].cluster.";
    KC_ASSIGN_OR_RETURN(config.server, String(cluster, "server", cl_field + "server"));
    if (config.server.empty()) {
      return Error(cl_field + "server", "missing",
                   "set it to the API server URL, https://HOST:PORT");
    }
    if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
      return Error(cl_field + "server", "\"" + config.server + "\" is not an http(s) URL",
                   "write it as https://HOST:PORT");
    }
    while (config.server.size() > 8 && config.server.back() == '/') config.server.pop_back();
    KC_ASSIGN_OR_RETURN(config.ca_pem, Pem(cluster, cl_field, "certificate-authority-data",
                                           "certificate-authority", "CERTIFICATE-----"));
    KC_ASSIGN_OR_RETURN(
        config.insecure_skip_tls_verify,
        Bool(cluster, "insecure-skip-tls-verify", cl_field + "insecure-skip-tls-verify"));
    KC_ASSIGN_OR_RETURN(config.tls_server_name,
                        String(cluster, "tls-server-name", cl_field + "tls-server-name"));

    if (user_name.empty()) return config;  // anonymous
    YAML::Node user;
    KC_ASSIGN_OR_RETURN(int ui, Find(root, "users", "user", user_name, ctx_field + "user", &user));
    const std::string u_field = "users[" + std::to_string(ui) + "].user.";
    for (const char* unsupported : {"exec", "auth-provider"}) {
      if (user[unsupported].IsDefined() && !user[unsupported].IsNull()) {
        return Error(u_field + unsupported, "credential plugins are not supported",
                     "use a client certificate, a token or a tokenFile for this user");
      }
    }
    if (user["username"].IsDefined() || user["password"].IsDefined()) {
      return Error(u_field + "username", "basic authentication is not supported",
                   "use a client certificate, a token or a tokenFile for this user");
    }
    KC_ASSIGN_OR_RETURN(config.client_cert_pem, Pem(user, u_field, "client-certificate-data",
                                                    "client-certificate", "CERTIFICATE-----"));
    KC_ASSIGN_OR_RETURN(config.client_key_pem,
                        Pem(user, u_field, "client-key-data", "client-key", "PRIVATE KEY-----"));
    if (!config.client_cert_pem.empty() && config.client_key_pem.empty()) {
      return Error(u_field + "client-key-data",
                   "missing: the user has a client certificate but no key",
                   "add client-key (a file) or client-key-data (base64 PEM)");
    }
    if (config.client_cert_pem.empty() && !config.client_key_pem.empty()) {
      return Error(u_field + "client-certificate-data",
                   "missing: the user has a client key but no certificate",
                   "add client-certificate or client-certificate-data");
    }
    KC_ASSIGN_OR_RETURN(config.bearer_token, String(user, "token", u_field + "token"));
    KC_ASSIGN_OR_RETURN(std::string token_file, String(user, "tokenFile", u_field + "tokenFile"));
    if (!token_file.empty()) {
      config.token_file = Resolve(token_file);
      if (!fs::exists(config.token_file)) {
        return Error(u_field + "tokenFile", "file \"" + config.token_file + "\" does not exist",
                     "fix the path (relative paths are relative to the kubeconfig's directory)");
      }
    }
    return config;
  }

 private:
  std::string path_;
  std::string dir_;
};

const char* Env(const InClusterOptions& options, const char* name) {
  return options.getenv ? options.getenv(name) : std::getenv(name);
}

}  // namespace

StatusOr<ClusterConfig> ParseKubeconfig(const std::string& yaml, const std::string& path,
                                        const std::string& context_name) {
  return KubeconfigReader(path).Parse(yaml, context_name);
}

StatusOr<ClusterConfig> LoadKubeconfig(const std::string& path, const std::string& context_name) {
  StatusOr<std::string> content = ReadFile(path);
  if (!content.ok()) {
    return NotFoundError("kubeconfig \"" + path +
                         "\" cannot be read; check the path given with --kubeconfig or "
                         "$KUBECONFIG");
  }
  return ParseKubeconfig(*content, path, context_name);
}

bool InClusterAvailable(const InClusterOptions& options) {
  const char* host = Env(options, "KUBERNETES_SERVICE_HOST");
  return host != nullptr && *host != '\0' && fs::exists(options.dir + "/token");
}

StatusOr<ClusterConfig> LoadInClusterConfig(const InClusterOptions& options) {
  const char* host = Env(options, "KUBERNETES_SERVICE_HOST");
  const char* port = Env(options, "KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0') {
    return InvalidArgumentError(
        "in-cluster config: KUBERNETES_SERVICE_HOST is not set; this process is not running in a "
        "pod (pass --kubeconfig instead)");
  }
  ClusterConfig config;
  config.source = "in-cluster (" + options.dir + ")";
  std::string h = host;
  if (h.find(':') != std::string::npos && h.front() != '[') h = "[" + h + "]";  // IPv6
  config.server = "https://" + h + ":" + ((port != nullptr && *port != '\0') ? port : "443");
  config.token_file = options.dir + "/token";
  StatusOr<std::string> token = ReadFile(config.token_file);
  if (!token.ok() || Trim(*token).empty()) {
    return InvalidArgumentError("in-cluster config: service-account token \"" + config.token_file +
                                "\" is missing or empty; mount a service-account token "
                                "(automountServiceAccountToken: true)");
  }
  StatusOr<std::string> ca = ReadFile(options.dir + "/ca.crt");
  if (!ca.ok() || ca->find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    return InvalidArgumentError("in-cluster config: CA \"" + options.dir +
                                "/ca.crt\" is missing or not PEM; mount the service-account "
                                "volume with its ca.crt");
  }
  config.ca_pem = *std::move(ca);
  StatusOr<std::string> ns = ReadFile(options.dir + "/namespace");
  config.default_namespace = ns.ok() ? Trim(*ns) : "";
  if (config.default_namespace.empty()) config.default_namespace = "default";
  return config;
}

StatusOr<ClusterConfig> LoadDefault(const DefaultConfigOptions& options) {
  if (!options.explicit_path.empty()) {
    return LoadKubeconfig(options.explicit_path, options.context_name);
  }
  const char* env = Env(options.in_cluster, "KUBECONFIG");
  if (env != nullptr && *env != '\0') {
    std::stringstream paths(env);
    std::string p;
    while (std::getline(paths, p, ':')) {
      if (!p.empty() && fs::exists(p)) return LoadKubeconfig(p, options.context_name);
    }
    return NotFoundError(std::string("KUBECONFIG=\"") + env +
                         "\" names no existing file; fix or unset it");
  }
  if (InClusterAvailable(options.in_cluster)) return LoadInClusterConfig(options.in_cluster);
  std::string home = options.home;
  if (home.empty()) {
    const char* h = Env(options.in_cluster, "HOME");
    if (h != nullptr) home = h;
  }
  const std::string fallback = home.empty() ? "" : home + "/.kube/config";
  if (!fallback.empty() && fs::exists(fallback)) {
    return LoadKubeconfig(fallback, options.context_name);
  }
  return NotFoundError(
      "no Kubernetes configuration found: no --kubeconfig, $KUBECONFIG unset, not in a pod, and "
      "no " +
      (fallback.empty() ? std::string("~/.kube/config") : fallback) + "; pass --kubeconfig FILE");
}

StatusOr<ClusterConfig> LoadDefault(const std::string& explicit_path) {
  DefaultConfigOptions options;
  options.explicit_path = explicit_path;
  return LoadDefault(options);
}

}  // namespace kc::kube
