#include "node/state/attach_records.h"

#include <filesystem>

#include "base/files.h"
#include "base/log.h"

namespace sriovdra::node {
namespace {

// A sandbox ID becomes a file name: containerd's are 64 hex digits; anything else is refused.
bool isSafeName(const std::string& s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string AttachRecords::path(const std::string& sandbox) const {
  return dir_ + "/" + sandbox + ".json";
}

Result<std::optional<dra::AttachRecord>> AttachRecords::loadLocked(const std::string& file) const {
  auto text = readFile(file, dra::kMaxRecordBytes);
  if (!text.ok()) {
    if (text.status().code() == Code::kNotFound) return std::optional<dra::AttachRecord>();
    return text.status();
  }
  auto record = dra::AttachRecord::decode(*text);
  if (!record.ok()) {
    std::error_code ec;
    std::filesystem::rename(file, file + ".corrupt", ec);
    return Status(Code::kInvalidArgument, file + " is not an attach record (" +
                                              record.status().message() + "); moved to " + file +
                                              ".corrupt: check that pod's interfaces by hand");
  }
  return std::optional<dra::AttachRecord>(std::move(*record));
}

Result<std::optional<dra::AttachRecord>> AttachRecords::load(const std::string& sandbox) const {
  if (!isSafeName(sandbox)) {
    return Status(Code::kInvalidArgument, "pod sandbox ID \"" + sandbox + "\" is not a name");
  }
  std::lock_guard lock(mu_);
  return loadLocked(path(sandbox));
}

Status AttachRecords::save(const dra::AttachRecord& record) const {
  if (!isSafeName(record.sandbox)) {
    return Status(Code::kInvalidArgument,
                  "pod sandbox ID \"" + record.sandbox + "\" is not a name");
  }
  std::lock_guard lock(mu_);
  std::string file = path(record.sandbox);
  if (record.interfaces.empty()) {
    std::error_code ec;
    std::filesystem::remove(file, ec);
    if (ec) return Status::fromErrno(ec.value(), "removing " + file);
    return Status::ok();
  }
  std::string text = record.encode();
  if (text.size() > dra::kMaxRecordBytes) {
    return Status(Code::kTooLarge,
                  "the attach record of pod " + record.pod_namespace + "/" + record.pod_name +
                      " would be " + std::to_string(text.size()) + " bytes, over the " +
                      std::to_string(dra::kMaxRecordBytes) + " an agent reads back; not written");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return Status::fromErrno(ec.value(), "creating " + dir_);
  return writeFileAtomic(file, text, 0600);
}

std::vector<dra::AttachRecord> AttachRecords::all(std::vector<std::string>* problems) const {
  std::lock_guard lock(mu_);
  std::vector<dra::AttachRecord> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
    if (e.path().extension() != ".json") continue;
    auto record = loadLocked(e.path().string());
    if (!record.ok()) {
      SDRA_LOG_WARN << record.status().message();
      if (problems != nullptr) problems->push_back(record.status().message());
      continue;
    }
    if (*record) out.push_back(std::move(**record));
  }
  return out;
}

std::vector<dra::AttachedInterface> AttachRecords::ofClaim(const std::string& claim_uid) const {
  std::vector<dra::AttachedInterface> out;
  for (const auto& r : all()) {
    for (const auto& i : r.interfaces) {
      if (i.claim_uid == claim_uid) out.push_back(i);
    }
  }
  return out;
}

}  // namespace sriovdra::node
