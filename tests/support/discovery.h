#pragma once
// Test support: maps apiVersion + kind to a REST resource through the server's discovery documents
// (/api/v1, /apis/<group>/<version>), like kubectl's RESTMapper. Results are cached per
// group-version; a kind the server does not (yet) serve is re-queried on the next call.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "kube/client.h"

namespace sriovdra::testing {

class Discovery {
 public:
  explicit Discovery(std::shared_ptr<kube::Client> client) : client_(std::move(client)) {}
  Result<kube::ResourceType> resourceFor(const std::string& api_version, const std::string& kind);
  // For an object: reads its apiVersion and kind.
  Result<kube::ResourceType> resourceFor(const json::Value& object);

 private:
  std::shared_ptr<kube::Client> client_;
  std::mutex mu_;
  std::map<std::string, std::map<std::string, kube::ResourceType>> cache_;  // gv -> kind -> type
};

}  // namespace sriovdra::testing
