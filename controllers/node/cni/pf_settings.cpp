#include "node/cni/pf_settings.h"

#include <functional>
#include <optional>
#include <thread>

#include "cni/go_json.h"
#include "node/cni/plugin_host.h"

namespace sriovdra::cni_plugin {
namespace {

using Kind = host::VfSetting::Kind;

// Asks `shows` until it says the value is there (5 tries, 20 ms apart); `differs` otherwise.
Status readBack(const std::function<Result<bool>()>& shows, const std::string& differs) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto there = shows();
    if (!there.ok()) return there.status();
    if (*there) return Status::ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return fail(differs);
}

Result<std::string> parsedMac(const std::string& mac) {
  auto bytes = host::parseMac(mac);
  if (!bytes.ok()) {
    return fail("failed to parse MAC address " + mac + ": " + bytes.status().message());
  }
  return host::macText(*bytes);
}

}  // namespace

host::VfSetting SriovPfSettings::setting(Kind kind) const {
  host::VfSetting s;
  s.kind = kind;
  s.vf = static_cast<int32_t>(conf_.vf_id);
  return s;
}

Status SriovPfSettings::setAdminMac(const std::string& mac) {
  auto wanted = parsedMac(mac);
  if (!wanted.ok()) return wanted.status();
  auto s = setting(Kind::kMac);
  s.mac = mac;
  SDRA_RETURN_IF_ERROR(nl_.setVf(conf_.master, s));
  return readBack(
      [&]() -> Result<bool> {
        auto vfs = nl_.vfs(conf_.master);
        if (!vfs.ok()) {
          return fail("failed to get netlink device with name " + conf_.master + ": " +
                      cni::goQuote(vfs.status().message()));
        }
        for (const auto& vf : *vfs) {
          if (vf.vf == conf_.vf_id && vf.mac == *wanted) return true;
        }
        return false;
      },
      "hardware mac address is different from requested one");
}

Status SriovPfSettings::apply() {
  const auto& c = conf_;
  const std::string vf = std::to_string(c.vf_id);
  if (c.vlan) {
    auto s = setting(Kind::kVlan);
    s.vlan = static_cast<int32_t>(*c.vlan);
    s.qos = static_cast<int32_t>(c.vlan_qos.value_or(0));
    s.vlan_proto = sriovcni::vlanProtoNumber(c.vlan_proto.value_or("802.1q"));
    if (Status st = nl_.setVf(c.master, s); !st.isOk()) {
      return fail("failed to set vf " + vf + " vlan configuration - id " + std::to_string(*c.vlan) +
                  ", qos " + std::to_string(s.qos) + " and proto " +
                  c.vlan_proto.value_or("802.1q") + ": " + st.message());
    }
  }
  if (!c.mac.empty()) {
    if (Status st = setAdminMac(c.mac); !st.isOk()) {
      return fail("failed to set MAC address to " + c.mac + ": " + st.message());
    }
  }
  if (c.min_tx_rate || c.max_tx_rate) {
    auto s = setting(Kind::kRate);
    s.min_tx_rate = static_cast<uint32_t>(c.min_tx_rate.value_or(0));
    s.max_tx_rate = static_cast<uint32_t>(c.max_tx_rate.value_or(0));
    if (Status st = nl_.setVf(c.master, s); !st.isOk()) {
      return fail("failed to set vf " + vf + " min_tx_rate to " + std::to_string(s.min_tx_rate) +
                  " Mbps: max_tx_rate to " + std::to_string(s.max_tx_rate) +
                  " Mbps: " + st.message());
    }
  }
  for (auto [kind, value, word] : {std::tuple{Kind::kSpoofchk, &c.spoofchk, "spoofchk"},
                                   std::tuple{Kind::kTrust, &c.trust, "trust"}}) {
    if (value->empty()) continue;
    auto s = setting(kind);
    s.on = *value == "on";
    if (Status st = nl_.setVf(c.master, s); !st.isOk()) {
      return fail("failed to set vf " + vf + " " + word + " flag to " + *value + ": " +
                  st.message());
    }
  }
  if (!c.link_state.empty()) {
    return setLinkState(nl_, c.master, c.vf_id, sriovcni::linkStateNumber(c.link_state));
  }
  return Status::ok();
}

Status SriovPfSettings::reset() {
  const auto& c = conf_;
  const auto& o = c.orig;
  const std::string vf = std::to_string(c.vf_id);
  // What the PF reports now: a setting that has its original value already is left alone (a
  // driver that refused to change it refuses to set it back too, as igb does a link state).
  std::optional<host::VfInfo> now;
  if (auto vfs = nl_.vfs(c.master); vfs.ok()) {
    for (const auto& v : *vfs) {
      if (v.vf == c.vf_id) now = v;
    }
  }
  auto differs = [&](auto&& same) { return !now || !same(*now); };
  Status first;
  auto note = [&](const Status& st, const std::string& what) {
    if (!st.isOk() && first.isOk()) first = fail(what + ": " + st.message());
  };
  // Caches of old plugin versions have no VLAN protocol: 802.1Q.
  uint16_t vlan_proto =
      o.vlan_proto == 0 ? host::kVlanProto8021Q : static_cast<uint16_t>(o.vlan_proto);
  if (c.vlan && differs([&](const host::VfInfo& v) {
        return v.vlan == o.vlan && v.qos == o.vlan_qos && v.vlan_proto == vlan_proto;
      })) {
    auto s = setting(Kind::kVlan);
    s.vlan = static_cast<int32_t>(o.vlan);
    s.qos = static_cast<int32_t>(o.vlan_qos);
    s.vlan_proto = vlan_proto;
    note(nl_.setVf(c.master, s),
         "failed to set vf " + vf + " vlan configuration - id " + std::to_string(o.vlan) +
             ", qos " + std::to_string(o.vlan_qos) + " and proto " + std::to_string(s.vlan_proto));
  }
  if (!c.spoofchk.empty() &&
      differs([&](const host::VfInfo& v) { return v.spoofchk == o.spoofchk; })) {
    auto s = setting(Kind::kSpoofchk);
    s.on = o.spoofchk;
    note(nl_.setVf(c.master, s), "failed to restore spoofchk for vf " + vf);
  }
  // Whenever the VF had one, as upstream: ADD may have set it through CNI_ARGS or runtimeConfig.
  if (!o.admin_mac.empty() &&
      differs([&](const host::VfInfo& v) { return v.mac == parsedMac(o.admin_mac).valueOr(""); })) {
    note(setAdminMac(o.admin_mac),
         "failed to restore original administrative MAC address " + o.admin_mac);
  }
  if (!c.trust.empty() && differs([&](const host::VfInfo& v) { return v.trust == o.trust; })) {
    auto s = setting(Kind::kTrust);
    s.on = o.trust;
    note(nl_.setVf(c.master, s), "failed to set trust for vf " + vf);
  }
  if ((c.min_tx_rate || c.max_tx_rate) && differs([&](const host::VfInfo& v) {
        return v.min_tx_rate == o.min_tx_rate && v.max_tx_rate == o.max_tx_rate;
      })) {
    auto s = setting(Kind::kRate);
    s.min_tx_rate = static_cast<uint32_t>(o.min_tx_rate);
    s.max_tx_rate = static_cast<uint32_t>(o.max_tx_rate);
    note(nl_.setVf(c.master, s), "failed to disable rate limiting for vf " + vf);
  }
  if (!c.link_state.empty() &&
      differs([&](const host::VfInfo& v) { return v.link_state == o.link_state; })) {
    auto s = setting(Kind::kLinkState);
    s.link_state = o.link_state;
    note(nl_.setVf(c.master, s), "failed to set link state to auto for vf " + vf);
  }
  return first;
}

Status setLinkState(host::Netlink& netlink, const std::string& pf, int64_t vf, uint32_t state) {
  host::VfSetting s{.kind = Kind::kLinkState, .vf = static_cast<int32_t>(vf), .link_state = state};
  if (Status st = netlink.setVf(pf, s); !st.isOk()) {
    return fail("failed to set vf " + std::to_string(vf) + " link state to " +
                std::to_string(state) + ": " + st.message());
  }
  return Status::ok();
}

Status setNetdevMac(const host::Netdevs& nd, const std::string& name, const std::string& mac) {
  auto wanted = parsedMac(mac);
  if (!wanted.ok()) return wanted.status();
  auto link = nd.link(name);
  if (!link.ok()) return link.status();
  if (link->mac == *wanted) return Status::ok();
  SDRA_RETURN_IF_ERROR(nd.setMac(link->index, mac));
  return readBack(
      [&]() -> Result<bool> {
        auto now = nd.link(name);
        if (!now.ok()) {
          return fail("failed to get netlink device with name " + name + ": " +
                      cni::goQuote(now.status().message()));
        }
        return now->mac == *wanted;
      },
      "effective mac address is different from requested one");
}

}  // namespace sriovdra::cni_plugin
