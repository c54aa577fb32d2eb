// A leader-election candidate for the integration tests: runs LeaderElector with the default
// timings and prints what happens, one line each, so a test can drive several processes.
//   leader_probe KUBECONFIG NAMESPACE LEASE IDENTITY
#include <cstdio>

#include "base/signals.h"
#include "kube/leader_election.h"

using namespace sriovdra;

int main(int argc, char** argv) {
  ShutdownSignals signals;
  if (argc != 5) {
    std::fprintf(stderr, "usage: leader_probe KUBECONFIG NAMESPACE LEASE IDENTITY\n");
    return 2;
  }
  auto cfg = kube::loadConfig({.path = argv[1]});
  if (!cfg.ok()) {
    std::fprintf(stderr, "%s\n", cfg.status().toString().c_str());
    return 1;
  }
  auto client = kube::Client::create(*cfg);
  if (!client.ok()) return 1;
  auto say = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  kube::LeaderElector elector(
      *client, {.lease_namespace = argv[2], .lease_name = argv[3], .identity = argv[4]},
      {.on_started_leading = [&] { say("started-leading"); },
       .on_stopped_leading = [&] { say("stopped-leading"); },
       .on_new_leader = [&](const std::string& who) { say("new-leader " + who); }});
  elector.run(signals.token());
  say("exit");
  return 0;
}
