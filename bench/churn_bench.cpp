// A day of pod life in an hour, on the real node (support/product_on_node.h: the product as pods
// under a real kubelet and containerd). Pods from the reference gpu-nic-aligned template are
// created and deleted continuously, `concurrency` at a time, every fifth deleted as soon as it is
// scheduled (while the kubelet starts it), with a disruption every `every` seconds: in the first
// half of the run the agent restarted (in turn its container killed and its pod deleted) and the
// DeviceAttributes of the reference pool changed (the agent republishes its slices) in turn,
// in the second half only the DeviceAttributes. Floor: the same churn of pods without a claim
// and without disruptions, on the same node, before (a quarter of the time, at least a minute).
// At the end the node must hold nothing its pods do not explain (ProductOnNode::leaks; the bench
// fails otherwise), and memory and descriptors must be flat:
//   figure churn_pods_per_min   pods with a VF started per minute; floor: pods without a claim
//                               (a rate: here higher is better, the ratio is ours/floor)
//   figure churn_start (_p99)   create -> Ready of the pods that ran
//   figure agent_rss_growth     the agent's RSS a second before the end; floor: at half time
//   figure agent_open_fds       the same for its open descriptors
//   figure operator_rss_growth  the operators' RSS at the end; floor: after the floor's churn
// The agent's figures compare one process (the bench says so when the PIDs differ): the agent
// the last restart of the first half started, sampled twice under the same churn.
// Usage: churn_bench [minutes=2] [concurrency=3] [every=30]   (as root, with scripts/test.sh's
// environment; `churn_bench 60 4 120` is the hour, docs/development.md#benchmarks)
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "api/names.h"
#include "base/json.h"
#include "base/yaml.h"
#include "support/figures.h"
#include "support/product_on_node.h"

using namespace sriovdra;
using Steady = std::chrono::steady_clock;
using sriovdra::testing::ProductOnNode;
using sriovdra::testing::RealNode;

namespace {

namespace fs = std::filesystem;
const std::string kWorkloads = ProductOnNode::kWorkloads;

std::string field(const json::Value& v, std::initializer_list<std::string_view> path) {
  const json::Value* f = json::at(v, path);
  return f != nullptr && f->IsString() ? std::string(f->GetString(), f->GetStringLength()) : "";
}

bool ready(const json::Value& pod) {
  const json::Value* conditions = json::at(pod, {"status", "conditions"});
  if (conditions == nullptr || !conditions->IsArray()) return false;
  for (const auto& c : conditions->GetArray()) {
    if (json::stringOr(c, "type") == "Ready") return json::stringOr(c, "status") == "True";
  }
  return false;
}

// Polls the pod every 20 ms until pred(pod) (a missing pod is nullptr) or two minutes passed.
template <typename Pred>
void waitPod(ProductOnNode& p, kube::Client& client, const std::string& name, Pred pred,
             const char* what) {
  auto deadline = Steady::now() + std::chrono::minutes(2);
  while (true) {
    auto got = client.get(kube::resources::kPods, kWorkloads, name);
    if (got.ok() ? pred(&*got) : got.status().code() == Code::kNotFound && pred(nullptr)) return;
    if (Steady::now() > deadline) {
      throw std::runtime_error("pod " + name + " was not " + what + " within 2 minutes\n" +
                               p.diagnostics());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The resident set (bytes) and open descriptors of the node's container processes running
// `executable`, summed.
struct Usage {
  double rss = 0;
  double fds = 0;
  std::vector<pid_t> pids;
};
Usage usageOf(const std::string& executable) {
  Usage u;
  u.pids = RealNode::containerProcesses(executable);
  for (pid_t pid : u.pids) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("VmRSS:", 0) == 0) u.rss += std::stod(line.substr(6)) * 1024;
    }
    std::error_code ec;
    for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
         !ec && it != fs::directory_iterator(); it.increment(ec)) {
      u.fds += 1;
    }
  }
  return u;
}

struct Churn {
  std::vector<double> starts;  // seconds, create -> Ready
  long started = 0;
  long cut_short = 0;  // deleted while starting
  double minutes = 0;
};

// `concurrency` workers create and delete pods until `duration` passed; `between` runs on this
// thread meanwhile (the disruptions) with the seconds elapsed, every second.
Churn churn(ProductOnNode& p, bool with_vf, std::chrono::seconds duration, int concurrency,
            const std::function<void(long)>& between) {
  Churn out;
  std::mutex mu;
  std::atomic<bool> failed{false};
  std::string failure;
  const auto start = Steady::now();
  const auto end = start + duration;
  std::vector<std::jthread> workers;
  workers.reserve(concurrency);
  for (int w = 0; w < concurrency; ++w) {
    workers.emplace_back([&, w] {
      auto client = p.cp().client();
      try {
        for (long i = 0; Steady::now() < end && !failed; ++i) {
          const std::string name =
              std::string(with_vf ? "vf-" : "plain-") + std::to_string(w) + "-" + std::to_string(i);
          auto docs = yamlToJson(p.podYaml(name, with_vf));
          if (!docs.ok() || docs->size() != 1) throw std::runtime_error("the pod's YAML");
          const auto created = Steady::now();
          auto made = client->create(kube::resources::kPods, kWorkloads, (*docs)[0]);
          if (!made.ok())
            throw std::runtime_error("creating " + name + ": " + made.status().toString());
          const bool cut = i % 5 == 4;
          if (cut) {
            waitPod(
                p, *client, name,
                [](const json::Value* pod) {
                  return pod != nullptr && !field(*pod, {"spec", "nodeName"}).empty();
                },
                "scheduled");
          } else {
            waitPod(
                p, *client, name,
                [](const json::Value* pod) { return pod != nullptr && ready(*pod); }, "Ready");
          }
          const double seconds = std::chrono::duration<double>(Steady::now() - created).count();
          Status removed = client->remove(kube::resources::kPods, kWorkloads, name);
          if (!removed.isOk())
            throw std::runtime_error("deleting " + name + ": " + removed.toString());
          waitPod(
              p, *client, name, [](const json::Value* pod) { return pod == nullptr; }, "gone");
          std::lock_guard lock(mu);
          if (cut) {
            ++out.cut_short;
          } else {
            ++out.started;
            out.starts.push_back(seconds);
          }
        }
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        if (!failed.exchange(true)) failure = e.what();
      }
    });
  }
  for (long second = 1; Steady::now() < end && !failed; ++second) {
    std::this_thread::sleep_until(start + std::chrono::seconds(second));
    try {
      between(second);
    } catch (const std::exception& e) {
      std::lock_guard lock(mu);
      if (!failed.exchange(true)) failure = e.what();
    }
  }
  workers.clear();
  if (failed) throw std::runtime_error(failure);
  out.minutes = std::chrono::duration<double>(Steady::now() - start).count() / 60;
  return out;
}

void waitAgentReady(ProductOnNode& p) {
  p.kubectl(
      {"-n", "sriov-dra", "rollout", "status", "daemonset/sriov-dra-agent", "--timeout=180s"});
  p.kubectl({"-n", "sriov-dra", "wait", "pod", "-l", "app.kubernetes.io/name=sriov-dra-agent",
             "--for=condition=Ready", "--timeout=180s"});
}

// Everything the report prints, measured on one freshly installed node.
struct Run {
  Churn floor, ours;
  Usage operator_start, operator_end, agent_half, agent_end;
  long disruptions = 0, restarts = 0;
  std::string leaks;  // ProductOnNode::leaks once the churn stopped; "" for none
};

Run measure(long minutes, long concurrency, long every) {
  Run run;
  auto product = ProductOnNode::install();
  auto& p = *product;
  const auto free_vfs = ProductOnNode::hostVfs();
  const auto duration = std::chrono::seconds(minutes * 60);
  const auto floor_duration = std::max(std::chrono::seconds(60), duration / 4);
  std::printf("floor: pods without a claim, %ld at a time, %lld s\n", concurrency,
              static_cast<long long>(floor_duration.count()));
  run.floor = churn(p, false, floor_duration, static_cast<int>(concurrency), [](long) {});
  run.operator_start = usageOf("sriov-dra-operator");

  std::printf("ours: pods with a GPU and a VF, %ld at a time, %ld min, a disruption every %ld s\n",
              concurrency, minutes, every);
  const long half = minutes * 30;
  const long last = minutes * 60 - 1;
  bool sampled = false;
  run.ours = churn(p, true, duration, static_cast<int>(concurrency), [&](long second) {
    if (second >= half && !sampled) {
      waitAgentReady(p);
      run.agent_half = usageOf("sriov-dra-agent");
      sampled = true;
    }
    if (second == last) run.agent_end = usageOf("sriov-dra-agent");
    if (second % every != 0) return;
    if (++run.disruptions % 2 == 1 && second < half) {
      // In turn its container killed (the kubelet starts it again, after a back-off that
      // doubles with each kill of the same pod: 10 s, 20 s, ... 5 min) and its pod deleted (the
      // DaemonSet makes a new one, with no back-off), so the agent is never away for minutes.
      if (++run.restarts % 2 == 1) {
        RealNode::killContainerProcesses("sriov-dra-agent");
      } else {
        p.kubectl({"delete", "pod", "-n", "sriov-dra", "-l",
                   "app.kubernetes.io/name=sriov-dra-agent", "--wait=false"});
      }
      return;
    }
    p.kubectl({"patch", "-n", "sriov-dra", "deviceattributes", "cx6-vfs-attrs", "--type=merge",
               "-p",
               R"({"spec":{"attributes":{"example.com/churnRound":{"int":)" +
                   std::to_string(run.disruptions) + "}}}}"});
  });
  auto settled = Steady::now() + std::chrono::minutes(3);
  do {
    run.leaks = p.leaks(free_vfs);
    if (run.leaks.empty()) break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  } while (Steady::now() < settled);
  run.operator_end = usageOf("sriov-dra-operator");
  return run;
}

bool report(const Run& run, long concurrency) {
  auto perMinute = [](const Churn& c) { return static_cast<double>(c.started) / c.minutes; };
  bench::Report report("a day of pod life on a real node (kubelet, containerd; " +
                       std::to_string(concurrency) + " pods at a time)");
  report.add({"churn_pods_per_min", "pods with a GPU+VF claim started per minute",
              perMinute(run.ours), perMinute(run.floor), bench::Unit::kCount,
              "the same churn of pods without a claim"});
  report.addMedianAndP99("churn_start", "create -> Ready of a pod with a GPU+VF claim",
                         "a pod without a claim, same churn", run.ours.starts, run.floor.starts);
  report.add({"agent_rss_growth", "the agent's resident memory at the end", run.agent_end.rss,
              run.agent_half.rss, bench::Unit::kBytes, "the same agent at half time", 1.25});
  report.add({"agent_open_fds", "the agent's open descriptors at the end", run.agent_end.fds,
              run.agent_half.fds, bench::Unit::kCount, "the same agent at half time", 1.25});
  report.add({"operator_rss_growth", "the operators' resident memory at the end",
              run.operator_end.rss, run.operator_start.rss, bench::Unit::kBytes,
              "the same operators before the churn with claims", 1.25});
  report.note(std::to_string(run.ours.started) + " pods with a VF ran, " +
              std::to_string(run.ours.cut_short) + " were deleted while starting; " +
              std::to_string(run.disruptions - run.restarts) + " DeviceAttributes changes, " +
              std::to_string(run.restarts) + " agent restarts");
  if (run.agent_half.pids != run.agent_end.pids) {
    report.note(
        "the agent restarted after half time: agent_rss_growth and agent_open_fds compare "
        "two processes");
  }
  report.note(run.leaks.empty() ? "leaked objects: 0 (checkpoint, CDI specs, attach records, CNI "
                                  "caches, leases, namespaces, VFs all match the pods)"
                                : "LEAKED:\n" + run.leaks);
  return report.print() && run.leaks.empty();
}

}  // namespace

int main(int argc, char** argv) {
  auto minutes = bench::countArgument(argc, argv, 2, 1, 1440, 1);
  auto concurrency = bench::countArgument(argc, argv, 3, 1, 32, 2);
  auto every = bench::countArgument(argc, argv, 30, 5, 3600, 3);
  if (!minutes || !concurrency || !every) {
    std::fprintf(stderr,
                 "usage: churn_bench [minutes: 1 to 1440] [concurrency: 1 to 32] "
                 "[every: 5 to 3600 seconds]\n");
    return 2;
  }
  try {
    return report(measure(*minutes, *concurrency, *every), *concurrency) ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "churn_bench: %s\n", e.what());
    return 1;
  }
}
