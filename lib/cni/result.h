#pragma once
// A CNI result as the specification's types define it (containernetworking/cni pkg/types 100, 040
// and 020), pure: read from any version a plugin or an IPAM plugin answers in, written in the
// version the configuration asks for, as the Go library converts and prints it (key order, four
// spaces of indentation, no trailing newline, omitted empty fields, "dns" always present).
//   1.0.0, 1.1.0   interfaces [{name, mac, mtu, sandbox, socketPath, pciID}], ips [{interface,
//                  address, gateway}], routes [{dst, gw, mtu, advmss, priority, table, scope}], dns
//   0.3.0 - 0.4.0  the same without an interface's mtu, socketPath and pciID, and with each IP's
//                  "version" ("4" or "6")
//   0.1.0, 0.2.0   ip4 and ip6 {ip, gateway, routes}: the first address of each family, the routes
//                  of its family; no interfaces
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/ip.h"
#include "base/status.h"

namespace sriovdra::cni {

struct ResultInterface {
  std::string name;
  std::string mac;
  int mtu = 0;
  std::string sandbox;
  std::string socket_path;
  std::string pci_id;
  bool operator==(const ResultInterface&) const = default;
};

struct ResultIp {
  std::optional<int> interface;  // index into interfaces
  IpPrefix address;
  std::optional<IpAddress> gateway;
  bool operator==(const ResultIp&) const = default;
};

struct ResultRoute {
  IpPrefix dst;
  std::optional<IpAddress> gw;
  int mtu = 0;
  int advmss = 0;
  int priority = 0;
  std::optional<int> table;
  std::optional<int> scope;
  bool operator==(const ResultRoute&) const = default;
};

struct CniResult {
  std::string cni_version;
  std::vector<ResultInterface> interfaces;
  std::vector<ResultIp> ips;
  std::vector<ResultRoute> routes;
  std::string dns = "{}";  // the "dns" object as compact JSON
  bool operator==(const CniResult&) const = default;

  // Any version's result (its "cniVersion" says which; none: 0.1.0), in the 1.x model.
  // kInvalidArgument naming the field that is not what the specification allows.
  static Result<CniResult> parse(std::string_view text);
  // Written as `version` (one of cni::supportedVersions()); kInvalidArgument for another.
  Result<std::string> encode(std::string_view version) const;
};

}  // namespace sriovdra::cni
