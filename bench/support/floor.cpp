#include "support/floor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "base/parallel.h"
#include "metrics/registry.h"
#include "support/figures.h"
#include "support/metrics_text.h"

namespace sriovdra::bench {

void mustBeOk(const Status& st, const std::string& doing) {
  if (st.isOk()) return;
  std::fprintf(stderr, "bench: %s: %s\n", doing.c_str(), st.toString().c_str());
  std::exit(2);
}

WriterSweep sweepWriters(const std::vector<int>& counts,
                         const std::function<double(int writers, size_t round)>& round) {
  WriterSweep out;
  std::vector<double> times;
  for (size_t i = 0; i < counts.size(); ++i) {
    times.push_back(round(counts[i], i));
    out.text += (out.text.empty() ? "" : ", ") + std::to_string(counts[i]) + " writers " +
                formatValue(times.back(), Unit::kSeconds);
  }
  double fastest = times.empty() ? 0 : *std::min_element(times.begin(), times.end());
  for (size_t i = 0; i < counts.size(); ++i) {
    if (times[i] <= 1.05 * fastest && (out.writers == 0 || counts[i] < out.writers)) {
      out.writers = counts[i];
    }
  }
  return out;
}

Round medianRound(std::vector<Round> rounds) {
  if (rounds.empty()) return {};
  std::sort(rounds.begin(), rounds.end(), [](const Round& a, const Round& b) {
    return a.ours * b.floor < b.ours * a.floor;  // a.ours / a.floor < b.ours / b.floor
  });
  return rounds[rounds.size() / 2];
}

std::string roundRatios(const std::vector<Round>& rounds) {
  std::string out;
  for (const auto& r : rounds) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", r.floor > 0 ? r.ours / r.floor : 0);
    out.append(out.empty() ? "" : ", ").append(buf);
  }
  return out;
}

double timeApplies(kube::Client& client, const std::vector<Apply>& writes, int concurrency) {
  auto start = std::chrono::steady_clock::now();
  forEachConcurrently(writes.size(), static_cast<size_t>(concurrency), [&](size_t i) {
    const Apply& w = writes[i];
    auto applied = client.apply(
        *w.resource, w.namespace_, w.doc,
        {.field_manager = w.field_manager, .force = true, .metadata_only = true}, w.subresource);
    mustBeOk(applied.status(), "floor write " + std::to_string(i) + " of " + w.resource->plural);
  });
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double Replacer::time(std::vector<json::Document> objects, int concurrency) {
  auto start = std::chrono::steady_clock::now();
  forEachConcurrently(objects.size(), static_cast<size_t>(concurrency), [&](size_t i) {
    json::Document& object = objects[i];
    auto meta = kube::ObjectMeta::decode(object);
    std::string key = meta.key();
    std::string rv;
    {
      std::lock_guard lock(mu_);
      rv = resource_versions_[key];
    }
    const kube::WriteOptions options{.field_manager = field_manager_, .metadata_only = true};
    Result<json::Document> written = Status(Code::kInternal, "not written");
    if (rv.empty() && subresource_.empty()) {
      written = client_.create(resource_, meta.namespace_, object, options);
    } else {
      json::setString(object["metadata"], "resourceVersion", rv, object.GetAllocator());
      written = client_.update(resource_, meta.namespace_, object, options, subresource_);
    }
    mustBeOk(written.status(), "floor write " + std::to_string(i) + " of " + resource_.plural);
    std::lock_guard lock(mu_);
    resource_versions_[key] = kube::ObjectMeta::decode(*written).resource_version;
  });
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Replacer::know(const std::string& key, std::string resource_version) {
  std::lock_guard lock(mu_);
  resource_versions_[key] = std::move(resource_version);
}

double WriteSpan::seconds() const {
  return std::chrono::duration<double>(last_completed - first_received).count();
}

double WriteSpan::secondsSince(WallTime t) const {
  return std::chrono::duration<double>(last_completed - t).count();
}

WriteSpan writesOf(const std::vector<testing::AuditEvent>& events, const std::string& user,
                   const std::string& resource, WallTime since) {
  WriteSpan span;
  for (const auto& e : events) {
    if (e.user != user || !e.isWrite() || e.resource == "leases" || e.received < since) continue;
    if (!resource.empty() && e.resource != resource) continue;
    if (span.count == 0 || e.received < span.first_received) span.first_received = e.received;
    if (span.count == 0 || e.completed > span.last_completed) span.last_completed = e.completed;
    ++span.count;
  }
  return span;
}

const std::vector<testing::AuditEvent>& AuditLog::poll() {
  auto more = cp_.auditEventsFrom(offset_);
  events_.insert(events_.end(), std::make_move_iterator(more.begin()),
                 std::make_move_iterator(more.end()));
  return events_;
}

namespace {

// "a 2, b 1" for {a: 2, b: 1}.
std::string countsText(const std::map<std::string, int>& counts) {
  std::string out;
  for (const auto& [what, count] : counts) {
    out.append(out.empty() ? "" : ", ").append(what).append(" ").append(std::to_string(count));
  }
  return out;
}

}  // namespace

std::string writesByResource(const std::vector<testing::AuditEvent>& events,
                             const std::string& user, WallTime since) {
  std::map<std::string, int> counts;
  for (const auto& e : events) {
    if (e.user == user && e.isWrite() && e.resource != "leases" && e.received >= since) {
      ++counts[e.resource];
    }
  }
  return countsText(counts);
}

std::string readsByResource(const std::vector<testing::AuditEvent>& events, const std::string& user,
                            WallTime since) {
  std::map<std::string, int> counts;
  for (const auto& e : events) {
    if (e.user == user && !e.isWrite() && e.resource != "leases" && e.completed >= since) {
      ++counts[e.verb + " " + e.resource];
    }
  }
  return counts.empty() ? "none" : countsText(counts);
}

size_t listJsonBytes(kube::Client& client, const kube::ResourceType& rt, const std::string& ns,
                     const kube::ListOptions& options) {
  auto list = client.listAll(rt, ns, options);
  mustBeOk(list.status(), "listing " + rt.plural);
  size_t bytes = 0;
  for (const auto& item : (*list)["items"].GetArray()) bytes += json::dump(item).size();
  return bytes;
}

double cpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(f);  // utime, stime
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double etcdBytesInUse(const testing::ControlPlane& cp) {
  auto transport = kube::Transport::create("http://127.0.0.1:" + std::to_string(cp.etcdPort()), {});
  if (!transport.ok()) return 0;
  auto got = (*transport)->send({.method = "GET", .target = "/metrics"}, std::chrono::seconds(10));
  if (!got.ok() || got->status != 200) return 0;
  double v = testing::sampleValue(got->body, "etcd_mvcc_db_total_size_in_use_in_bytes");
  return std::isnan(v) ? 0 : v;
}

Cpu Cpu::now(const testing::ControlPlane& cp, pid_t component) {
  return {cpuSeconds(cp.apiServerPid()), cpuSeconds(cp.etcdPid()),
          component > 0 ? cpuSeconds(component) : 0, cpuSeconds(::getpid())};
}

Cpu Cpu::operator-(const Cpu& o) const {
  return {apiserver - o.apiserver, etcd - o.etcd, component - o.component, bench - o.bench};
}

std::string Cpu::describe(const std::string& component_name) const {
  char buf[200];
  std::snprintf(buf, sizeof buf, "CPU: kube-apiserver %.1f s, etcd %.1f s, %s %.1f s, bench %.1f s",
                apiserver, etcd, component_name.c_str(), component, bench);
  return buf;
}

}  // namespace sriovdra::bench
