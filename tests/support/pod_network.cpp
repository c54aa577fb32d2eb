#include "support/pod_network.h"

#include <catch2/catch.hpp>
#include <unistd.h>

namespace sriovdra::testing {

ProcessOutput ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto out = runProcess({.argv = argv}, std::chrono::seconds(10));
  REQUIRE(out.ok());
  return *out;
}

PodNetwork::PodNetwork(std::string netns, std::string device)
    : netns_(std::move(netns)), device_(std::move(device)) {
  (void)ip({"link", "del", device_});
  auto ns = ip({"netns", "add", netns_});
  INFO(ns.err);
  REQUIRE(ns.exit_code == 0);
  auto made = ip({"link", "add", device_, "type", "ifb"});
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
}

PodNetwork::~PodNetwork() {
  (void)ip({"netns", "del", netns_});
  (void)ip({"link", "del", device_});
}

std::string PodNetwork::inPod(const std::string& ifname) const {
  auto out = ip({"-n", netns_, "-br", "addr", "show", "dev", ifname});
  return out.exit_code == 0 ? out.out : "";
}

bool PodNetwork::deviceOnHost() const {
  return ip({"link", "show", "dev", device_}).exit_code == 0;
}

}  // namespace sriovdra::testing
