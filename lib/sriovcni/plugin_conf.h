#pragma once
// What the SR-IOV CNIs' configurations and caches share (internal to lib/sriovcni): the
// types.PluginConf keys read with Go's rules and written as upstream's caches write them, a Go
// map's JSON (keys sorted, nested objects too).
#include <map>
#include <string>
#include <string_view>

#include "base/json.h"
#include "cni/go_json.h"
#include "sriovcni/netconf.h"

namespace sriovdra::sriovcni {

using JsonMap = std::map<std::string, json::Value>;

Status readString(const cni::GoFields& fields, std::string_view key, std::string& out);
// cniVersion, name, type, ipam.type, capabilities (map[string]bool), dns, prevResult.
Status readPluginConf(const cni::GoFields& fields, PluginConf& out);
// The keys PluginConf's MarshalJSON writes: "ipam" always ({} without a type), "dns" only when
// not empty, the others when set.
void writePluginConf(const PluginConf& conf, JsonMap& out, json::Allocator& a);
// A copy of `v` whose objects list their members sorted by key, as Go writes a map.
json::Value sortedCopy(const json::Value& v, json::Allocator& a);
// The map as one compact JSON object, its keys in order (values moved out of it).
std::string dumpSorted(JsonMap& map, json::Document& doc);

}  // namespace sriovdra::sriovcni
