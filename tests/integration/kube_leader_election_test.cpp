// Two processes campaign for one Lease on the real API server.
#include <thread>

#include <catch2/catch.hpp>
#include <signal.h>

#include "base/files.h"
#include "base/process.h"
#include "base/time.h"
#include "kube/leader_election.h"
#include "metrics/registry.h"
#include "support/control_plane.h"
#include "support/metrics_text.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::ControlPlane;
using sriovdra::testing::eventually;

namespace {

struct Candidate {
  std::string identity;
  std::string out;
  ChildProcess process;
  bool said(const std::string& line) const {
    auto text = readFile(out);
    return text.ok() && text->find(line + "\n") != std::string::npos;
  }
};

Candidate launch(const ControlPlane& cp, const std::string& ns, const std::string& identity) {
  Candidate c{identity, cp.dir() + "/" + ns + "-" + identity + ".out", {}};
  ProcessSpec spec;
  spec.argv = {std::string(SRIOV_DRA_TEST_TOOLS) + "/leader_probe", cp.kubeconfig(), ns,
               "probe-lease", identity};
  spec.kill_with_parent = true;
  spec.stdout_path = c.out;
  spec.stderr_path = cp.dir() + "/" + ns + "-" + identity + ".log";
  auto child = ChildProcess::spawn(spec);
  REQUIRE(child.ok());
  c.process = std::move(*child);
  return c;
}

std::string holder(kube::Client& client, const std::string& ns,
                   const std::string& lease_name = "probe-lease") {
  auto lease = client.get(kube::resources::kLeases, ns, lease_name);
  if (!lease.ok()) return "<" + lease.status().toString() + ">";
  return std::string(json::stringOr(*json::at(*lease, {"spec"}), "holderIdentity"));
}

std::string renewTime(kube::Client& client, const std::string& ns) {
  auto lease = client.get(kube::resources::kLeases, ns, "probe-lease");
  if (!lease.ok()) return "";
  return std::string(json::stringOr(*json::at(*lease, {"spec"}), "renewTime"));
}

}  // namespace

TEST_CASE("exactly one of two candidates leads; the other takes over when it dies or leaves",
          "[leaderelection][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("leader");
  Candidate a = launch(cp, ns, "candidate-a");
  Candidate b = launch(cp, ns, "candidate-b");

  eventually([&] { return a.said("started-leading") || b.said("started-leading"); }, 30s,
             [&] { return "no candidate leads; lease holder: " + holder(*client, ns); });
  Candidate& leader = a.said("started-leading") ? a : b;
  Candidate& standby = &leader == &a ? b : a;
  CHECK(holder(*client, ns) == leader.identity);
  // The standby keeps polling and must not lead while the leader renews: await two renewals.
  std::string renewed = renewTime(*client, ns);
  int renewals = 0;
  eventually(
      [&] {
        std::string now = renewTime(*client, ns);
        if (now != renewed) {
          ++renewals;
          renewed = now;
        }
        return renewals >= 2;
      },
      30s, [&] { return "the leader did not renew; holder " + holder(*client, ns); });
  CHECK_FALSE(standby.said("started-leading"));
  // It learns who leads at its next poll (a retry period with jitter, up to 4.4 s).
  eventually([&] { return standby.said("new-leader " + leader.identity); }, 10s,
             [] { return "the standby never reported the leader"; });

  SECTION("SIGKILL: the standby leads within lease duration + retry period (with jitter)") {
    auto killed_at = std::chrono::steady_clock::now();
    leader.process.stop(SIGKILL);
    // Bound: 15 s lease, plus up to one jittered retry period (2 s x 2.2) before the standby
    // notices the expiry, plus one retry period of observation lag and 1 s of API latency.
    eventually([&] { return standby.said("started-leading"); }, 23s,
               [&] { return "standby did not take over; holder " + holder(*client, ns); });
    auto took = std::chrono::steady_clock::now() - killed_at;
    WARN("failover after SIGKILL took "
         << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
    CHECK(took >= 10s);  // the dead leader's lease was honoured, not stolen
    CHECK(holder(*client, ns) == standby.identity);
  }
  SECTION("SIGTERM: the leader releases the lease and the standby leads at once") {
    auto stopped_at = std::chrono::steady_clock::now();
    leader.process.stop(SIGTERM);
    CHECK(leader.said("stopped-leading"));
    CHECK(leader.said("exit"));
    eventually([&] { return standby.said("started-leading"); }, 7s,
               [&] { return "standby did not take over; holder " + holder(*client, ns); });
    auto took = std::chrono::steady_clock::now() - stopped_at;
    WARN("hand-over after SIGTERM took "
         << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
    CHECK(holder(*client, ns) == standby.identity);
    auto lease = client->get(kube::resources::kLeases, ns, "probe-lease");
    REQUIRE(lease.ok());
    CHECK(json::intOr(*json::at(*lease, {"spec"}), "leaseTransitions", -1) == 1);
  }
}

TEST_CASE("a leader whose API server hangs stops leading within the renew deadline",
          "[leaderelection][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("leader-hang");
  Candidate only = launch(cp, ns, "candidate-hang");
  eventually([&] { return only.said("started-leading"); }, 30s,
             [&] { return "never led; holder " + holder(*client, ns); });
  {
    auto frozen = cp.freezeApiServer();
    // The renew deadline (10 s) after the last renewal, which is at most one retry period (2 s)
    // old; every request of the renewal is bounded by what is left of it. Requests without that
    // bound hang for the client timeout (30 s), longer than the lease (15 s).
    eventually([&] { return only.said("stopped-leading"); }, 14s,
               [&] { return "still leading with a frozen API server"; });
  }
  CHECK(only.said("exit"));
}

TEST_CASE("a leader reports itself in metrics and health, and releases on stop",
          "[leaderelection][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("leader-inproc");
  std::atomic<bool> started{false};
  std::atomic<bool> stopped{false};
  kube::LeaderElector elector(client,
                              {.lease_namespace = ns, .lease_name = "inproc", .identity = "me"},
                              {.on_started_leading = [&] { started = true; },
                               .on_stopped_leading = [&] { stopped = true; }});
  std::jthread runner([&](const std::stop_token& stop) { elector.run(stop); });
  eventually([&] { return started.load(); }, 10s, [] { return "never started leading"; });
  CHECK(elector.isLeader());
  CHECK(elector.leader() == "me");
  CHECK(elector.check().isOk());
  auto status = [] {
    return testing::sampleValue(metrics::renderText(),
                                "leader_election_master_status{name=\"inproc\"}");
  };
  CHECK(status() == 1);

  runner.request_stop();
  runner.join();
  CHECK(stopped);
  CHECK_FALSE(elector.isLeader());
  CHECK(status() == 0);
  CHECK(holder(*client, ns, "inproc").empty());  // released, not left to expire
}
