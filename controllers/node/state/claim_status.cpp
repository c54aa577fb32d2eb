#include "node/state/claim_status.h"

#include <thread>

#include "api/names.h"

namespace sriovdra::node {

Status writeDeviceStatuses(kube::Client& client, const dra::PreparedClaim& claim,
                           const std::string& driver,
                           const std::vector<api::AllocatedDeviceStatus>& ours,
                           std::chrono::milliseconds retry) {
  json::Document encoded(rapidjson::kArrayType);
  for (const auto& s : ours) {
    json::Value v(rapidjson::kObjectType);
    s.encode(api::Writer(v, encoded.GetAllocator()));
    encoded.PushBack(v, encoded.GetAllocator());
  }
  auto attempt_once = [&]() -> Status {
    auto current = client.get(api::resources::kResourceClaims, claim.namespace_, claim.name);
    if (!current.ok()) return current.status();
    auto meta = kube::ObjectMeta::decode(*current);
    if (meta.uid != claim.uid) {
      return Status(Code::kNotFound, "the claim was deleted and created again");
    }
    json::Document patch(rapidjson::kObjectType);
    auto& a = patch.GetAllocator();
    json::Value devices(rapidjson::kArrayType);
    if (const json::Value* existing = json::at(*current, {"status", "devices"});
        existing != nullptr && existing->IsArray()) {
      for (const auto& e : existing->GetArray()) {
        if (json::stringOr(e, "driver") != driver) devices.PushBack(json::Value(e, a), a);
      }
    }
    for (const auto& e : encoded.GetArray()) devices.PushBack(json::Value(e, a), a);
    const json::Value* now = json::at(*current, {"status", "devices"});
    if (now != nullptr && *now == devices) return Status::ok();  // already written
    api::Writer(patch, a).object("metadata").strAlways("resourceVersion", meta.resource_version);
    api::Writer(patch, a).object("status").value("devices", std::move(devices));
    auto patched = client.patch(api::resources::kResourceClaims, claim.namespace_, claim.name,
                                kube::PatchType::kMerge, json::dump(patch),
                                {.field_manager = api::kAgentFieldManager}, "status");
    return patched.ok() ? Status::ok() : patched.status();
  };
  auto delay = retry;
  for (int attempt = 1;; ++attempt) {
    Status st = attempt_once();
    if (st.isOk()) return st;
    bool again = st.isTransient() || st.code() == Code::kConflict;
    if (!again || attempt == 5) return st;
    std::this_thread::sleep_for(delay);
    delay = std::min<std::chrono::milliseconds>(delay * 2, std::chrono::seconds(2));
  }
}

}  // namespace sriovdra::node
