#include "support/olm.h"

#include <cstdlib>
#include <filesystem>

#include <catch2/catch.hpp>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/files.h"
#include "base/yaml.h"
#include "support/logged_process.h"
#include "support/ports.h"

namespace sriovdra::testing {

const kube::ResourceType kCsvs{"operators.coreos.com", "v1alpha1", "clusterserviceversions",
                               "ClusterServiceVersion", true};
const kube::ResourceType kCatalogSources{"operators.coreos.com", "v1alpha1", "catalogsources",
                                         "CatalogSource", true};
const kube::ResourceType kSubscriptions{"operators.coreos.com", "v1alpha1", "subscriptions",
                                        "Subscription", true};
const kube::ResourceType kInstallPlans{"operators.coreos.com", "v1alpha1", "installplans",
                                       "InstallPlan", true};

namespace {

std::string tail(const std::string& path, size_t bytes = 4000) {
  std::string text = readFile(path, 64u << 20).valueOr("");
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

bool accepts(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::string canonical(const json::Value& v) {
  if (v.IsObject()) {
    std::map<std::string, std::string> members;
    for (const auto& m : v.GetObject()) members[m.name.GetString()] = canonical(m.value);
    std::string out = "{";
    for (const auto& [k, val] : members) {
      if (out.size() > 1) out += ",";
      out.append(k).append(":").append(val);
    }
    return out + "}";
  }
  if (v.IsArray()) {
    std::string out = "[";
    for (const auto& item : v.GetArray()) {
      if (out.size() > 1) out += ",";
      out += canonical(item);
    }
    return out + "]";
  }
  return json::dump(v);
}

std::vector<json::Document> yamlDocuments(const std::string& path) {
  auto text = readFile(path);
  REQUIRE(text.ok());
  auto docs = yamlToJson(*text);
  REQUIRE(docs.ok());
  return std::move(*docs);
}

std::multiset<std::string> configRules(const std::string& kind,
                                       const std::vector<std::string>& names) {
  std::multiset<std::string> out;
  for (const char* dir : {"config/rbac", "config/agent-daemonset-rbac"}) {
    for (const auto& e : std::filesystem::directory_iterator(sourceDir() + "/" + dir)) {
      if (e.path().filename() == "kustomization.yaml") continue;
      for (const auto& d : yamlDocuments(e.path().string())) {
        if (json::stringOr(d, "kind") != kind) continue;
        std::string name(json::stringOr(*json::objectMember(d, "metadata"), "name"));
        if (std::find(names.begin(), names.end(), name) == names.end()) continue;
        for (const auto& r : d["rules"].GetArray()) out.insert(canonical(r));
      }
    }
  }
  return out;
}

std::string olmHome() {
  const char* env = std::getenv("SRIOV_DRA_OLM");
  if (env == nullptr || *env == '\0') {
    FAIL(
        "SRIOV_DRA_OLM is not set: run scripts/test.sh, or scripts/build-olm.sh and set "
        "SRIOV_DRA_OLM to the directory it printed");
  }
  return env;
}

Olm::Olm(ControlPlane& cp, const std::string& dir) : dir_(dir) {
  std::string home = olmHome();
  for (const auto& e : std::filesystem::directory_iterator(home + "/crds")) {
    cp.applyYamlFile(e.path().string());
  }
  cp.applyYaml("apiVersion: v1\nkind: Namespace\nmetadata: {name: olm}\n");
  std::string kubeconfig = cp.kubeconfig("admin");
  std::vector<std::pair<std::string, std::string>> env = {
      {"KUBECONFIG", kubeconfig}, {"OPERATOR_NAMESPACE", "olm"}, {"OPERATOR_NAME", "olm-operator"}};
  olm_ = spawnLogged({home + "/bin/olm", "--namespace", "olm", "--writeStatusName", ""}, env,
                     dir_ + "/olm.log");
  catalog_ = spawnLogged({home + "/bin/catalog", "--namespace", "olm", "--writeStatusName", "",
                          "--kubeconfig", kubeconfig},
                         env, dir_ + "/catalog.log");
}

Olm::~Olm() {
  catalog_.stop(SIGTERM, std::chrono::seconds(5));
  olm_.stop(SIGTERM, std::chrono::seconds(5));
}

std::string Olm::logs() const {
  return "olm operator:\n" + tail(dir_ + "/olm.log") + "\ncatalog operator:\n" +
         tail(dir_ + "/catalog.log");
}

Catalog::Catalog(std::string dir, std::string package, std::string channel)
    : dir_(std::move(dir)),
      package_(std::move(package)),
      channel_(std::move(channel)),
      port_(freePort()),
      pprof_port_(freePort()) {
  std::filesystem::create_directories(dir_ + "/catalog/" + package_);
}

Catalog::~Catalog() { opm_.stop(SIGTERM, std::chrono::seconds(5)); }

void Catalog::addBundle(const std::string& bundle_dir, const std::string& csv_name,
                        const std::string& replaces) {
  ProcessSpec spec;
  spec.argv = {olmHome() + "/bin/opm", "render", bundle_dir, "-o", "yaml"};
  auto rendered = runProcess(spec, std::chrono::seconds(60), 16u << 20);
  REQUIRE(rendered.ok());
  INFO(rendered->err);
  REQUIRE(rendered->exit_code == 0);
  REQUIRE(writeFileAtomic(dir_ + "/catalog/" + package_ + "/" + csv_name + ".yaml", rendered->out)
              .isOk());
  entries_.emplace_back(csv_name, replaces);
}

void Catalog::serve() {
  std::string channel =
      "---\nschema: olm.package\nname: " + package_ + "\ndefaultChannel: " + channel_ +
      "\n---\nschema: olm.channel\npackage: " + package_ + "\nname: " + channel_ + "\nentries:\n";
  for (const auto& [name, replaces] : entries_) {
    channel += "- name: " + name + "\n";
    if (!replaces.empty()) channel += "  replaces: " + replaces + "\n";
  }
  REQUIRE(writeFileAtomic(dir_ + "/catalog/" + package_ + "/package.yaml", channel).isOk());
  ProcessSpec validate;
  validate.argv = {olmHome() + "/bin/opm", "validate", dir_ + "/catalog"};
  auto valid = runProcess(validate, std::chrono::seconds(60));
  REQUIRE(valid.ok());
  INFO(valid->out << valid->err);
  REQUIRE(valid->exit_code == 0);
  opm_.stop(SIGTERM, std::chrono::seconds(5));
  opm_ =
      spawnLogged({olmHome() + "/bin/opm", "serve", dir_ + "/catalog", "-p", std::to_string(port_),
                   "--pprof-addr", "127.0.0.1:" + std::to_string(pprof_port_)},
                  {}, dir_ + "/opm.log");
  eventually([&] { return accepts(port_); }, std::chrono::seconds(60),
             [&] { return "opm does not serve the catalog:\n" + tail(dir_ + "/opm.log"); });
}

PodReadiness::PodReadiness(std::shared_ptr<kube::Client> client, std::string ns)
    : client_(std::move(client)), ns_(std::move(ns)) {
  thread_ = std::jthread([this](const std::stop_token& stop) {
    while (!stop.stop_requested()) {
      pass();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
}

PodReadiness::~PodReadiness() {
  thread_.request_stop();
  thread_.join();
}

void PodReadiness::pass() {
  auto pods = client_->list(kube::resources::kPods, ns_);
  if (!pods.ok()) return;
  for (const auto& p : (*pods)["items"].GetArray()) {
    auto meta = kube::ObjectMeta::decode(p);
    if (!meta.deletion_timestamp.empty()) {
      (void)client_->remove(kube::resources::kPods, ns_, meta.name, {.grace_period_seconds = 0});
      continue;
    }
    std::string ready;
    if (const json::Value* conditions = json::at(p, {"status", "conditions"});
        conditions != nullptr && conditions->IsArray()) {
      for (const auto& c : conditions->GetArray()) {
        if (json::stringOr(c, "type") == "Ready") ready = std::string(json::stringOr(c, "status"));
      }
    }
    if (ready == "True") continue;
    (void)client_->patch(kube::resources::kPods, ns_, meta.name, kube::PatchType::kMerge,
                         R"({"status":{"phase":"Running","conditions":[{"type":"Ready",)"
                         R"("status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}})",
                         {}, "status");
  }
}

}  // namespace sriovdra::testing
