#include "kernel/cni_scenario.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_addr.h>
#include <net/if.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include "base/json.h"
#include "base/process.h"
#include "host/apply.h"
#include "host/discovery.h"
#include "host/netdev.h"
#include "host/netns.h"

namespace sriovdra::kernel_test {
namespace {

namespace fs = std::filesystem;

// A network namespace bound at a path, as `ip netns add` makes one (a runtime's pod namespace).
class BoundNetns {
 public:
  explicit BoundNetns(std::string path) : path_(std::move(path)) {
    std::ofstream(path_).flush();
    std::thread([&] {
      if (::unshare(CLONE_NEWNET) != 0) return;
      bound_ = ::mount("/proc/thread-self/ns/net", path_.c_str(), nullptr, MS_BIND, nullptr) == 0;
    }).join();
  }
  ~BoundNetns() {
    ::umount2(path_.c_str(), MNT_DETACH);
    ::unlink(path_.c_str());
  }
  bool bound() const { return bound_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool bound_ = false;
};

std::string errnoNameIn(const std::string& message) {
  for (int e : {EOPNOTSUPP, EPROTONOSUPPORT, EINVAL, EBUSY, ENODEV, EEXIST, EPERM, ERANGE}) {
    if (message.find(std::strerror(e)) != std::string::npos) return strerrorname_np(e);
  }
  return "";
}

// `own`: the MAC the VF's netdev had before the scenario. igb's PF reports as a VF's MAC the
// one the VF set itself once no administrative MAC is set (its mailbox), which a PF-side
// simulation cannot see: the line says "none" for that and for zero alike.
std::string vfLine(const host::Netlink& nl, const std::string& pf, int vf, const std::string& own) {
  auto vfs = nl.vfs(pf);
  if (!vfs.ok()) return "VF " + std::to_string(vf) + ": " + vfs.status().message();
  for (const auto& v : *vfs) {
    if (v.vf != vf) continue;
    static const char* kStates[] = {"auto", "enable", "disable"};
    bool unset = v.mac == "00:00:00:00:00:00" || v.mac == own;
    return "VF " + std::to_string(vf) + " mac=" + (unset ? "none" : v.mac) +
           " vlan=" + std::to_string(v.vlan) + " qos=" + std::to_string(v.qos) +
           " proto=" + host::vlanProtoText(v.vlan_proto) +
           " spoofchk=" + (v.spoofchk ? "on" : "off") + " trust=" + (v.trust ? "on" : "off") +
           " min_tx_rate=" + std::to_string(v.min_tx_rate) +
           " max_tx_rate=" + std::to_string(v.max_tx_rate) + " link_state=" +
           (v.link_state < 3 ? kStates[v.link_state] : std::to_string(v.link_state));
  }
  return "VF " + std::to_string(vf) + " not listed by its PF";
}

// The routes of the calling thread's namespace that are not the kernel's own prefix routes.
std::vector<std::string> ipv4Routes() {
  std::vector<std::string> out;
  std::ifstream in("/proc/thread-self/net/route");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string iface, dst, gw, flags, refcnt, use, metric, mask;
    words >> iface >> dst >> gw >> flags >> refcnt >> use >> metric >> mask;
    if (gw == "00000000") continue;
    auto dotted = [](const std::string& hex) {
      in_addr a{static_cast<in_addr_t>(std::stoul(hex, nullptr, 16))};
      return std::string(::inet_ntoa(a));
    };
    int bits = __builtin_popcount(static_cast<unsigned>(std::stoul(mask, nullptr, 16)));
    out.push_back(dotted(dst) + "/" + std::to_string(bits) + " via " + dotted(gw));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string podLine(const std::string& netns_path) {
  auto ns = host::NetNamespace::open(netns_path);
  if (!ns.ok()) return "pod: " + ns.status().message();
  std::string line;
  (void)ns->run([&]() -> Status {
    host::Netdevs nd;
    auto link = nd.link("net1");
    if (!link.ok()) {
      line = "pod: no net1";
      return Status::ok();
    }
    line = "pod: net1 " + std::string((link->flags & IFF_UP) != 0 ? "up" : "down") +
           " mac=" + link->mac + " mtu=" + std::to_string(link->mtu);
    std::vector<std::string> addresses;
    for (const auto& a : nd.addresses(link->index).valueOr({})) {
      if (!a.prefix.address.isV4() && a.prefix.address.bytes[0] == 0xfe) continue;  // link-local
      addresses.push_back(a.prefix.text());
    }
    std::sort(addresses.begin(), addresses.end());
    for (const auto& a : addresses) line += " " + a;
    for (const auto& r : ipv4Routes()) line += ", route " + r;
    return Status::ok();
  });
  return line;
}

}  // namespace

std::vector<Step> runCniScenario(host::Sysfs& sysfs, host::Netlink& netlink,
                                 const CniScenarioOptions& o) {
  auto start = host::discover(sysfs, netlink);
  if (!start.ok() || start->pfs.empty()) return {{"cni: discover", "no SR-IOV PF", {}}};
  const std::string bdf = start->pfs.front().pci_address;
  const std::string pf = start->pfs.front().name;
  std::vector<Step> steps;
  using Kind = host::Action::Kind;
  // The PF with a known MTU and 4 VFs, then up, as the agent leaves a configured PF: igb limits
  // VF rates only while the PF has a link, which it negotiates a moment after it comes up (and
  // again after an MTU change or new VFs reset it): wait for it, 30 s at most.
  Status made = host::applyAction(sysfs, netlink, {Kind::kSetMtu, bdf, pf, "1500"});
  if (made.isOk()) made = host::applyAction(sysfs, netlink, {Kind::kSetNumVfs, bdf, bdf, "4"});
  if (made.isOk()) made = netlink.setUp(pf, true);
  std::string operstate;
  for (int i = 0; i < 300; ++i) {
    operstate = sysfs.read("sys/class/net/" + pf + "/operstate").valueOr("");
    if (operstate == "up") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (made.isOk() && operstate != "up") {
    made = Status(Code::kUnavailable, "PF " + pf + " has no link after 30 s (operstate " +
                                          (operstate.empty() ? "unreadable" : operstate) + ")");
  }
  auto vfAddress = [&](int i) {
    return host::baseName(
        sysfs.readLink("sys/bus/pci/devices/" + bdf + "/virtfn" + std::to_string(i)).valueOr(""));
  };
  auto netdevOf = [&](const std::string& vf) {
    auto names = sysfs.list("sys/bus/pci/devices/" + vf + "/net");
    return names.ok() && !names->empty() ? names->front() : std::string();
  };
  for (int i = 0; i < 4; ++i) {
    if (o.vf_netdev_created) o.vf_netdev_created(netdevOf(vfAddress(i)));
  }
  const std::string vf1 = vfAddress(1), vf2 = vfAddress(2);
  const std::string netdev1 = netdevOf(vf1);
  host::Netdevs nd;
  auto before = nd.link(netdev1);
  auto before2 = nd.link(netdevOf(vf2));
  fs::create_directories(o.work_dir);
  BoundNetns pod(o.work_dir + "/pod-netns");

  auto hostLine = [&] {
    auto now = nd.link(netdev1);
    if (!now.ok()) return std::string("host: VF 1 netdev absent");
    bool same_mac = before.ok() && now->mac == before->mac;
    return "host: VF 1 netdev present, MAC " + std::string(same_mac ? "as before" : "changed") +
           ", mtu " + std::to_string(now->mtu) + ((now->flags & IFF_UP) != 0 ? ", up" : ", down");
  };
  auto state = [&] {
    return std::vector<std::string>{vfLine(netlink, pf, 1, before.ok() ? before->mac : ""),
                                    vfLine(netlink, pf, 2, before2.ok() ? before2->mac : ""),
                                    podLine(pod.path()), hostLine()};
  };
  steps.push_back({"cni: PF mtu 1500, sriov_numvfs 4, up, pod namespace",
                   !made.isOk()                 ? "failed: " + made.message()
                   : pod.bound() && before.ok() ? "ok"
                                                : "failed",
                   state()});

  int container = 0;
  // Runs the plugin; the step's result and, for an ADD, what its result says.
  auto run = [&](const std::string& name, const char* command, const std::string& config,
                 const std::string& if_name = "net1") {
    ProcessSpec spec;
    spec.argv = {o.plugin};
    spec.env = {{"CNI_COMMAND", command},
                {"CNI_CONTAINERID", "cni-scenario-" + std::to_string(container)},
                {"CNI_NETNS", pod.path()},
                {"CNI_IFNAME", if_name},
                {"CNI_PATH", o.cni_path}};
    spec.env.insert(spec.env.end(), o.env.begin(), o.env.end());
    spec.stdin_data = config;
    auto out = runProcess(spec, std::chrono::seconds(60));
    Step s{name, "ok", state()};
    if (!out.ok()) {
      s.result = "failed";
      s.state.push_back("could not run: " + out.status().message());
    } else if (out->exit_code != 0) {
      auto doc = json::parse(out->out);
      std::string msg = doc.ok() && doc->IsObject() ? std::string(json::stringOr(*doc, "msg"))
                                                    : out->out + out->err;
      s.result = errnoNameIn(msg);
      if (s.result.empty()) {
        s.result = "failed";
        s.state.push_back("message: " + msg);
      }
    } else if (std::string(command) == "ADD") {
      auto result = json::parse(out->out);
      std::string summary = "result:";
      if (result.ok() && result->IsObject()) {
        for (const auto* key : {"interfaces", "ips", "routes"}) {
          if (const auto* v = json::member(*result, key); v != nullptr && v->IsArray()) {
            for (const auto& item : v->GetArray()) {
              for (const auto* field : {"name", "mac", "mtu", "address", "gateway", "dst", "gw"}) {
                if (const auto* f = json::member(item, field); f != nullptr) {
                  summary += std::string(" ") + field + "=" +
                             (f->IsString() ? std::string(f->GetString()) : json::dump(*f));
                }
              }
            }
          }
        }
      }
      s.state.push_back(summary);
    }
    steps.push_back(std::move(s));
  };
  auto config = [&](const std::string& vf, const std::string& extra, bool ipam) {
    std::string c = R"({"cniVersion":"1.0.0","name":"sriov-net","type":"sriov","deviceID":")" + vf +
                    "\"" + extra;
    if (ipam) {
      c += R"(,"ipam":{"type":"host-local","dataDir":")" + o.work_dir +
           R"(/leases","ranges":[[{"subnet":"10.56.217.0/24","rangeStart":"10.56.217.10",)"
           R"("rangeEnd":"10.56.217.20"}],[{"subnet":"fd00:10:56::/64",)"
           R"("rangeStart":"fd00:10:56::10","rangeEnd":"fd00:10:56::20"}]],)"
           R"("routes":[{"dst":"10.60.0.0/16"}]})";
    }
    return c + "}";
  };
  const std::string full =
      config(vf1,
             R"(,"mac":"02:11:22:33:44:55","vlan":100,"vlanQoS":2,"spoofchk":"off","trust":"on",)"
             R"("max_tx_rate":100)",
             true);
  run("cni ADD: MAC, VLAN 100 QoS 2, spoofchk off, trust on, max rate 100, IPv4 + IPv6", "ADD",
      full);
  run("cni CHECK", "CHECK", full);
  run("cni DEL", "DEL", full);
  run("cni DEL again", "DEL", full);
  // Each refused ADD is followed by the DEL a runtime sends after a failed ADD: it must succeed
  // (a DEL that fails blocks the pod's removal), with the VF as it was.
  auto refused = [&](const std::string& what, const std::string& cfg) {
    ++container;
    run("cni ADD refused: " + what, "ADD", cfg);
    run("cni DEL after the refused ADD (" + what + ")", "DEL", cfg);
  };
  refused("link_state enable", config(vf1, R"(,"vlan":100,"link_state":"enable")", true));
  refused("802.1ad", config(vf1, R"(,"vlan":100,"vlanProto":"802.1ad","spoofchk":"off")", false));
  refused("min_tx_rate 10",
          config(vf1, R"(,"trust":"on","min_tx_rate":10,"max_tx_rate":100)", false));
  ++container;
  std::string vf2_driver =
      host::baseName(sysfs.readLink("sys/bus/pci/devices/" + vf2 + "/driver").valueOr(""));
  Status bound =
      host::applyAction(sysfs, netlink, {Kind::kBindDriver, bdf, vf2, "vfio-pci", vf2_driver});
  steps.push_back({"cni: bind VF 2 to vfio-pci", bound.isOk() ? "ok" : "failed", state()});
  const std::string dpdk =
      config(vf2, R"(,"mac":"02:11:22:33:44:66","vlan":200,"trust":"on")", false);
  run("cni ADD DPDK: VF 2 on vfio-pci, MAC, VLAN 200, trust on", "ADD", dpdk, "net2");
  run("cni DEL DPDK", "DEL", dpdk, "net2");
  Status back = host::applyAction(sysfs, netlink, {Kind::kBindDriver, bdf, vf2, "", "vfio-pci"});
  Status removed = host::applyAction(sysfs, netlink, {Kind::kSetNumVfs, bdf, bdf, "0"});
  steps.push_back({"cni: VF 2 back on its driver, sriov_numvfs 0",
                   back.isOk() && removed.isOk() ? "ok" : "failed",
                   {}});
  return steps;
}

}  // namespace sriovdra::kernel_test
