// demo-node: the demo's cluster (scripts/demo.sh). A control plane of the pinned release and a real
// node on this machine (kubelet + containerd), the product installed on it with kubectl as pods
// from the images scripts/build-images.sh built, the reference policies, and the stand-ins for the
// hardware: what the `node` tests run (tests/support/product_on_node.h). Prints each step, writes
// the admin kubeconfig, prints "ready", and keeps everything running until SIGINT or SIGTERM;
// then stops the node and the control plane and undoes what they changed on the host.
//
//   demo-node --kubeconfig FILE     (as root; SRIOV_DRA_KUBERNETES, SRIOV_DRA_CONTAINERD and
//                                    SRIOV_DRA_IMAGES name the builds, as for scripts/test.sh)
#include <csignal>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

#include "support/product_on_node.h"

namespace {

// Installs, announces, then waits for one of `stop`'s signals (blocked by the caller before any
// thread started, so none of the harness's threads takes them).
int serveDemo(const std::string& kubeconfig, const sigset_t& stop) {
  std::unique_ptr<sriovdra::testing::ProductOnNode> product;
  try {
    product = sriovdra::testing::ProductOnNode::install(
        [](const std::string& step) { std::cout << "  " << step << std::endl; });
    std::filesystem::copy_file(product->cp().kubeconfig(), kubeconfig,
                               std::filesystem::copy_options::overwrite_existing);
  } catch (const std::exception& e) {
    std::cerr << "demo-node: " << e.what() << "\n";
    return 1;
  }
  std::cout << "ready" << std::endl;
  int sig = 0;
  sigwait(&stop, &sig);
  std::cout << "stopping (signal " << sig << "): the node, then the control plane" << std::endl;
  product.reset();
  std::filesystem::remove(kubeconfig);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"demo-node: the demo's control plane and real node with the product as pods"};
  std::string kubeconfig;
  app.add_option("--kubeconfig", kubeconfig, "where the admin kubeconfig is written")->required();
  CLI11_PARSE(app, argc, argv);
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  return serveDemo(kubeconfig, stop);
}
