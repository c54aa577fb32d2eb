#pragma once
// Operator Lifecycle Manager for tests, its own programs (scripts/build-olm.sh; SRIOV_DRA_OLM is
// the directory it printed): OLM's CRDs, the olm and catalog operators as processes against a
// test control plane, file-based catalogs built and served by opm, and a stand-in for kubelet
// that makes the pods OLM's Deployments create Ready (nodes here have none). Plus what the
// bundle checks compare with: config/'s RBAC rules and YAML documents.
#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/json.h"
#include "base/process.h"
#include "support/control_plane.h"

namespace sriovdra::testing {

extern const kube::ResourceType kCsvs;
extern const kube::ResourceType kCatalogSources;
extern const kube::ResourceType kSubscriptions;
extern const kube::ResourceType kInstallPlans;

// JSON with object keys sorted, so objects from a file and from the API server compare.
std::string canonical(const json::Value& v);
std::vector<json::Document> yamlDocuments(const std::string& path);
// The rules of the named (Cluster)Roles in config/rbac and config/agent-daemonset-rbac (the
// bundle's operator deploys the agent), each canonical.
std::multiset<std::string> configRules(const std::string& kind,
                                       const std::vector<std::string>& names);

// OLM's directory (bin/olm, bin/catalog, bin/opm, crds/); fails the test when it is not built.
std::string olmHome();

class Olm {
 public:
  // Installs OLM's CRDs, creates the namespace "olm" and starts both operators there; their
  // logs go to <dir>.
  Olm(ControlPlane& cp, const std::string& dir);
  ~Olm();
  Olm(const Olm&) = delete;
  Olm& operator=(const Olm&) = delete;
  // The last lines of both operators' logs.
  std::string logs() const;

 private:
  std::string dir_;
  ChildProcess olm_;
  ChildProcess catalog_;
};

// A file-based catalog of one package with one channel, served by `opm serve` on loopback.
class Catalog {
 public:
  Catalog(std::string dir, std::string package, std::string channel);
  ~Catalog();
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;
  // Renders the bundle directory with opm into the catalog; `replaces` "" for the first entry.
  void addBundle(const std::string& bundle_dir, const std::string& csv_name,
                 const std::string& replaces = "");
  // Validates the catalog and (re)starts opm serving it; the port stays the same.
  void serve();
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  std::string dir_;
  std::string package_;
  std::string channel_;
  std::vector<std::pair<std::string, std::string>> entries_;  // name, replaces
  int port_;
  int pprof_port_;
  ChildProcess opm_;
};

// Plays kubelet for the pods of a namespace: marks them Running and Ready, and removes the ones
// being deleted, every 200 ms until destroyed.
class PodReadiness {
 public:
  PodReadiness(std::shared_ptr<kube::Client> client, std::string ns);
  ~PodReadiness();
  PodReadiness(const PodReadiness&) = delete;
  PodReadiness& operator=(const PodReadiness&) = delete;

 private:
  void pass();
  std::shared_ptr<kube::Client> client_;
  std::string ns_;
  std::jthread thread_;
};

}  // namespace sriovdra::testing
