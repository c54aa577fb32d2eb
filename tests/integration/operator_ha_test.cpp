// Two operator replicas with leader election, and an idle operator that must not write.
#include <thread>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "support/audit.h"
#include "support/eventually.h"
#include "support/operator_env.h"
#include "support/policy_fixtures.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::eventually;
using sriovdra::testing::leaseWritesBy;
using sriovdra::testing::OperatorEnv;
using sriovdra::testing::writesBy;

namespace {

void applyReference(OperatorEnv& env) { env.applyReferencePolicies(); }

bool converged(const OperatorEnv& env, const std::string& node) {
  auto s = env.nodeState(node);
  if (!s || s->spec.devices.size() != 8) return false;
  for (const auto& [rt, name] : {std::pair{&api::resources::kSriovNetworkNodePolicies, "cx6-vfs"},
                                 {&api::resources::kSriovResourcePolicies, "cx6-advertise-vfs"},
                                 {&api::resources::kDeviceAttributes, "cx6-vfs-attrs"}}) {
    auto st = env.policyStatus(*rt, name);
    auto ready = st ? api::findCondition(st->conditions, "Ready") : nullptr;
    if (!ready || ready->status != "True") return false;
  }
  return env.deviceClassExists("cx6-vfs.sriovnetwork.k8snetworkplumbingwg.io");
}

bool leads(const testing::OperatorProcess& p) {
  return p.logs().find("acquired lease") != std::string::npos;
}

}  // namespace

TEST_CASE("with two replicas only the leader writes; after SIGKILL the other takes over",
          "[operator][leaderelection][integration]") {
  OperatorEnv env("ha");
  auto a = env.startOperator({.user = "operator", .leader_elect = true, .name = "replica-a"});
  auto b = env.startOperator({.user = "operator-b", .leader_elect = true, .name = "replica-b"});
  eventually([&] { return leads(*a) || leads(*b); }, 30s, [] { return "nobody leads"; });
  auto& leader = leads(*a) ? a : b;
  auto& follower = leads(*a) ? b : a;
  std::string leader_user = leads(*a) ? "operator" : "operator-b";
  std::string follower_user = leads(*a) ? "operator-b" : "operator";

  std::string node = env.createNode("a100", {{"dra-sriov-cx6", "true"}});
  applyReference(env);
  env.reportStatus(node, testing::fixture::a100Status(1));
  eventually([&] { return converged(env, node); }, 30s, [&] { return leader->logs(); });
  CHECK(writesBy(env.cp(), leader_user, env.ns()) > 0);
  CHECK(writesBy(env.cp(), follower_user, env.ns()) == 0);
  CHECK_FALSE(leads(*follower));

  leader->stop(SIGKILL);
  env.setNodeLabel(node, "dra-sriov-cx6", std::nullopt);
  // Lease duration (15 s) plus the follower's retry period and a reconcile.
  eventually(
      [&] {
        auto s = env.nodeState(node);
        return s && s->spec.devices.empty();
      },
      40s, [&] { return follower->logs(); });
  CHECK(leads(*follower));
  // The API server logs a request's audit event after it answered: the write is seen first.
  eventually([&] { return writesBy(env.cp(), follower_user, env.ns()) > 0; }, 10s,
             [] { return "no write of the new leader in the audit log"; });
}

TEST_CASE("an operator that loses its lease exits at once, without a graceful shutdown",
          "[operator][leaderelection][integration]") {
  OperatorEnv env("ha-lost");
  auto op = env.startOperator({.leader_elect = true, .name = "replica-lost"});
  eventually([&] { return leads(*op); }, 30s, [&] { return op->logs(); });
  {
    auto frozen = env.cp().freezeApiServer();
    // Renew deadline (10 s) after the last renewal (at most a retry period, 2 s, before).
    eventually([&] { return !op->running(); }, 14s,
               [&] { return "still running with a frozen API server:\n" + op->logs(); });
  }
  CHECK(op->exitCode() == 1);
  CHECK_THAT(op->logs(), Catch::Contains("lost leadership; exiting at once"));
}

TEST_CASE("an idle operator writes nothing but Lease renewals", "[operator][idle][integration]") {
  OperatorEnv env("idle");
  auto op = env.startOperator({.leader_elect = true});
  std::string node = env.createNode("a100", {{"dra-sriov-cx6", "true"}});
  applyReference(env);
  env.reportStatus(node, testing::fixture::a100Status(1));
  eventually([&] { return converged(env, node); }, 30s, [&] { return op->logs(); });
  // Quiet: two Lease renewals (the operator's own clock ticking) with no other write between.
  int before = writesBy(env.cp(), "operator", env.ns());
  eventually(
      [&] {
        int now = writesBy(env.cp(), "operator", env.ns());
        if (now != before) {
          before = now;
          return false;
        }
        testing::awaitLeaseRenewals(env.cp(), "operator", 2);
        return writesBy(env.cp(), "operator", env.ns()) == before;
      },
      60s, [] { return "the operator kept writing after convergence"; });
  // Idle: six more renewals (about 12 s, past every periodic retry of the operator, the 5 s
  // rollout retry twice) and not one other write.
  int leases_before = leaseWritesBy(env.cp(), "operator");
  testing::awaitLeaseRenewals(env.cp(), "operator", 6);
  int after = writesBy(env.cp(), "operator", env.ns());
  int lease_writes = leaseWritesBy(env.cp(), "operator") - leases_before;
  CHECK(after == before);
  CHECK(lease_writes >= 6);
  WARN("idle: " << after - before << " writes during " << lease_writes << " Lease renewals");
}
