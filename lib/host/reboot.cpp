#include "host/reboot.h"

#include "base/json.h"
#include "base/process.h"
#include "base/strings.h"

namespace sriovdra::host {
namespace {

class CommandRebooter : public Rebooter {
 public:
  CommandRebooter(std::vector<std::string> argv, std::chrono::milliseconds timeout)
      : argv_(std::move(argv)), timeout_(timeout) {}

  Status reboot() override {
    if (argv_.empty()) return Status(Code::kInvalidArgument, "no reboot command");
    return runTool(argv_, timeout_, "the reboot command " + join(argv_, " "),
                   argv_[0] + " is not installed where the agent runs: it is its --reboot-command")
        .status();
  }

 private:
  std::vector<std::string> argv_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

std::unique_ptr<Rebooter> commandRebooter(std::vector<std::string> argv,
                                          std::chrono::milliseconds timeout) {
  return std::make_unique<CommandRebooter>(std::move(argv), timeout);
}

std::string encodeRebootRecord(const RebootRecord& record) {
  json::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  doc.AddMember("grant", json::str(record.grant, a), a);
  doc.AddMember("bootID", json::str(record.boot_id, a), a);
  return json::dump(doc) + "\n";
}

std::optional<RebootRecord> decodeRebootRecord(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc.ok() || !doc->IsObject()) return std::nullopt;
  auto grant = doc->FindMember("grant");
  auto boot = doc->FindMember("bootID");
  if (grant == doc->MemberEnd() || boot == doc->MemberEnd() || !grant->value.IsString() ||
      !boot->value.IsString()) {
    return std::nullopt;
  }
  return RebootRecord{grant->value.GetString(), boot->value.GetString()};
}

RebootStep rebootStep(const RebootInput& in) {
  if (!in.awaiting) return RebootStep::kNone;
  if (in.grant.empty() || in.grant != in.generation) return RebootStep::kAwaitGrant;
  if (in.record && in.record->grant == in.grant) {
    return in.record->boot_id == in.boot_id ? RebootStep::kRebooting : RebootStep::kNotInEffect;
  }
  return in.can_reboot ? RebootStep::kReboot : RebootStep::kAwaitPerson;
}

std::string rebootStepMessage(RebootStep step) {
  switch (step) {
    case RebootStep::kAwaitGrant:
      return "waiting for the operator to grant it (a rollout slot of the node's pool, then the "
             "drain)";
    case RebootStep::kAwaitPerson:
      return "granted; the agent has no --reboot-command, so a person or a reboot tool reboots "
             "the node";
    case RebootStep::kReboot:
    case RebootStep::kRebooting:
      return "granted; the agent is rebooting the node";
    case RebootStep::kNotInEffect:
      return "the granted reboot happened and the changes are still not in effect (see the "
             "sync error)";
    case RebootStep::kNone:
      break;
  }
  return "";
}

}  // namespace sriovdra::host
