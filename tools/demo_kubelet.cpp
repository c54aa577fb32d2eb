// demo-kubelet: what kubelet does for the demo's pods on nodes that have no kubelet. Registers
// with the agent's kubelet plugin (GetInfo, NotifyRegistrationStatus) and calls
// NodePrepareResources (DRA v1) for the claims given. The demo only; tests drive the plugin with
// their own gRPC client (tests/support/kubelet_client.h).
//
//   demo-kubelet --registry-dir DIR --claim NAMESPACE/NAME/UID [--claim ...]
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "dra/v1/api.grpc.pb.h"
#include "pluginregistration/api.grpc.pb.h"

namespace {

constexpr const char* kDriver = "sriovnetwork.k8snetworkplumbingwg.io";

std::shared_ptr<grpc::Channel> unixChannel(const std::string& path) {
  return grpc::CreateChannel("unix://" + path, grpc::InsecureChannelCredentials());
}

std::unique_ptr<grpc::ClientContext> withDeadline() {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return ctx;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"demo-kubelet: register with the agent's DRA plugin and prepare claims"};
  std::string registry_dir;
  std::vector<std::string> claims;
  app.add_option("--registry-dir", registry_dir, "kubelet's plugin registration directory")
      ->required();
  app.add_option("--claim", claims, "NAMESPACE/NAME/UID of a claim to prepare")->required();
  CLI11_PARSE(app, argc, argv);

  auto registration = pluginregistration::Registration::NewStub(
      unixChannel(registry_dir + "/" + kDriver + "-reg.sock"));
  pluginregistration::PluginInfo info;
  if (auto st = registration->GetInfo(withDeadline().get(), {}, &info); !st.ok()) {
    std::cerr << "demo-kubelet: GetInfo: " << st.error_message() << "\n";
    return 1;
  }
  pluginregistration::RegistrationStatus registered;
  registered.set_plugin_registered(true);
  pluginregistration::RegistrationStatusResponse ack;
  if (auto st = registration->NotifyRegistrationStatus(withDeadline().get(), registered, &ack);
      !st.ok()) {
    std::cerr << "demo-kubelet: NotifyRegistrationStatus: " << st.error_message() << "\n";
    return 1;
  }

  k8s::io::kubelet::pkg::apis::dra::v1::NodePrepareResourcesRequest request;
  for (const auto& c : claims) {
    auto first = c.find('/');
    auto last = c.rfind('/');
    if (first == std::string::npos || first == last) {
      std::cerr << "demo-kubelet: --claim " << c << " is not NAMESPACE/NAME/UID\n";
      return 2;
    }
    auto* claim = request.add_claims();
    claim->set_namespace_(c.substr(0, first));
    claim->set_name(c.substr(first + 1, last - first - 1));
    claim->set_uid(c.substr(last + 1));
  }
  auto dra = k8s::io::kubelet::pkg::apis::dra::v1::DRAPlugin::NewStub(unixChannel(info.endpoint()));
  k8s::io::kubelet::pkg::apis::dra::v1::NodePrepareResourcesResponse response;
  if (auto st = dra->NodePrepareResources(withDeadline().get(), request, &response); !st.ok()) {
    std::cerr << "demo-kubelet: NodePrepareResources: " << st.error_message() << "\n";
    return 1;
  }
  int failed = 0;
  for (const auto& [uid, result] : response.claims()) {
    if (!result.error().empty()) {
      std::cout << "claim " << uid << ": " << result.error() << "\n";
      ++failed;
      continue;
    }
    for (const auto& d : result.devices()) {
      std::cout << "claim " << uid << ": prepared " << d.device_name() << " (CDI";
      for (const auto& id : d.cdi_device_ids()) std::cout << " " << id;
      std::cout << ")\n";
    }
  }
  return failed == 0 ? 0 : 1;
}
