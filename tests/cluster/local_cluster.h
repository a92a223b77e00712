// LocalCluster: a real Kubernetes 1.34 control plane on loopback, for tests.
//
// Contract:
// - Start() runs `tests/cluster/cluster.sh up` against a state directory:
//   etcd 3.6, kube-apiserver (RBAC, TLS with a generated CA, IP SAN
//   127.0.0.1), kube-controller-manager, kube-scheduler and optionally kwok,
//   all bound to 127.0.0.1 on free ports chosen at start, so parallel test
//   binaries do not collide. It returns once /readyz answers "ok".
// - The binaries come from the cache that tests/cluster/build.sh fills
//   (${KC_CACHE_DIR:-$HOME/.cache/kernelcache}/bin/<component>-<version>/).
//   When they are missing, Start() fails with FailedPrecondition telling you
//   to run tests/cluster/build.sh (the first build takes ~20-25 minutes on two
//   cores); set KC_BUILD_IF_MISSING=1 to have Start() run it instead.
// - The components are tied to this process: if the test process dies
//   without calling the destructor, a watchdog started by cluster.sh stops
//   them (within about a second) so no stray processes remain.
// - The destructor (or Stop()) stops every component and waits for them to
//   exit. A directory that Start() created itself (Options::dir empty) is
//   removed afterwards unless KC_KEEP_CLUSTER_DIR=1 is set or Start() failed
//   (then the logs under <dir>/logs/ are kept for diagnosis).
// - Starting again on an existing directory reuses its certificates and its
//   etcd data (the same objects are still there).
//
// The admin identity is a client certificate in group system:masters; the
// kubeconfig at kubeconfig_path() embeds the CA and the client cert/key as
// data; the same material is also available as files (ca_file() ...), for
// clients that want to exercise both forms.
//
// Thread-safety: none; use one LocalCluster from one thread at a time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace kc {

struct LocalClusterOptions {
  // State directory (certs, etcd data, logs, kubeconfig, pids). Empty: a
  // fresh directory under $TMPDIR (or /tmp) that is removed on destruction.
  std::string dir;
  // Also start kwok, managing nodes annotated kwok.x-k8s.io/node=fake, with
  // its default stages (pods on fake nodes become Running; deletion works).
  bool with_kwok = false;
  // Also start a real node (tests/cluster/node.sh: containerd, kubelet,
  // kube-proxy; pods run as real containers). Needs root, the
  // kubernetes-node binaries and the images of scripts/build-images.sh.
  // One per machine: another cluster's running node makes Start() fail.
  bool with_node = false;
  // Extra kwok Stage YAML files (kind: Stage), passed to kwok with --config.
  // They are added to the default stages. Requires with_kwok.
  std::vector<std::string> kwok_stage_files;
  // Extra kube-apiserver flags, e.g. "--watch-cache=false" (then watches are
  // served by etcd directly, so Compact() makes resumed watches get 410 Gone
  // at once). Kept for StartApiServer()/RestartApiServer().
  std::vector<std::string> apiserver_args;
  // Leave the components running when this object is destroyed (no
  // watchdog either); Stop() still stops them. For attaching to a cluster
  // that outlives the test process (see KC_TEST_CLUSTER_DIR below).
  bool leave_running = false;
  // How long Start()/StartApiServer() wait for /readyz.
  std::chrono::seconds ready_timeout{180};
};

class LocalCluster {
 public:
  using Options = LocalClusterOptions;

  // Starts (or restarts against existing data) the control plane and waits
  // until it is ready. Errors carry the tail of the failing component's log.
  static StatusOr<std::unique_ptr<LocalCluster>> Start(const Options& options);

  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;
  ~LocalCluster();  // Stop() (unless leave_running), then remove a self-created dir.

  const std::string& dir() const { return dir_; }
  // <dir>/kubeconfig: context "kernelcache-local", user "admin", cert data.
  const std::string& kubeconfig_path() const { return kubeconfig_path_; }
  // "https://127.0.0.1:<port>".
  std::string server() const { return server_; }
  // PEM files of the cluster CA and the admin client certificate and key.
  std::string ca_file() const { return dir_ + "/pki/ca.crt"; }
  std::string client_cert_file() const { return dir_ + "/pki/admin.crt"; }
  std::string client_key_file() const { return dir_ + "/pki/admin.key"; }
  // Cached binaries (absolute paths).
  std::string kubectl_path() const { return bin_dir_ + "/kubectl"; }
  std::string helm_path() const { return helm_path_; }

  // Stops the API server only (etcd, controllers and kwok keep running);
  // clients see connection refused until StartApiServer().
  Status StopApiServer();
  // Starts it again on the same port and waits for /readyz.
  Status StartApiServer();
  Status RestartApiServer();
  // Compacts etcd at its current revision, so watches and lists that resume
  // from an older resourceVersion get 410 Gone. *revision (if given) receives
  // the revision compacted at.
  Status Compact(int64_t* revision = nullptr);

  // Runs the cached kubectl against this cluster. `out` (if given) receives
  // stdout; on a non-zero exit the error message holds stderr.
  Status Kubectl(const std::vector<std::string>& args, std::string* out = nullptr);
  // Same, with `stdin_data` fed to kubectl's stdin (e.g. `apply -f -`).
  Status KubectlWithInput(const std::vector<std::string>& args, const std::string& stdin_data,
                          std::string* out = nullptr);

  // kubectl apply -f `manifest`, then waits until the CRD `crd` (e.g.
  // "kernelcaches.kernelcache.io") is Established: cluster.sh wait-crd, which
  // retries the kubectl wait errors of a CRD the API server has only just
  // stored.
  Status ApplyCrd(const std::string& manifest, const std::string& crd);

  // PIDs of the running components as recorded in <dir>/pids/ (etcd,
  // kube-apiserver, ...). For tests that check nothing is left running.
  std::vector<pid_t> RecordedPids() const;

  // Stops everything and waits; idempotent. The destructor calls it.
  Status Stop();

 private:
  LocalCluster() = default;
  Status RunScript(const std::vector<std::string>& args, std::string* out);

  std::string dir_;
  std::string kubeconfig_path_;
  std::string server_;
  std::string bin_dir_;
  std::string helm_path_;
  bool owns_dir_ = false;
  bool stopped_ = false;
  bool leave_running_ = false;
};

// One cluster per test binary: started on the first call (with that call's
// options; later calls' options are ignored), stopped at process exit (static
// destruction; the watchdog covers crashes). A failed start is remembered and
// returned again, so later tests fail fast with the same message.
// With KC_TEST_CLUSTER_DIR=<dir> set, it instead starts or reuses the cluster
// in <dir> and leaves it running at exit, so a series of test processes
// shares one cluster (start it with `cluster.sh --dir <dir> up --with-kwok`,
// stop it with `cluster.sh --dir <dir> down`); saves ~10 s per process.
// Typical use in a test fixture:
//   auto cluster = kc::SharedLocalCluster();
//   ASSERT_TRUE(cluster.ok()) << cluster.status();
//   ... (*cluster)->kubeconfig_path() ...
StatusOr<LocalCluster*> SharedLocalCluster(const LocalClusterOptions& options = {});

// Path of tests/cluster/cluster.sh (compiled in; override with
// KC_CLUSTER_SCRIPT).
std::string LocalClusterScriptPath();

}  // namespace kc
