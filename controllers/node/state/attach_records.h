#pragma once
// The attach records (dra/attach.h) on disk: one file per pod sandbox under <dir>, written
// atomically. A record that cannot be read is moved aside (<file>.corrupt) and reported, never
// read half. Thread-safe; the NRI attacher writes, LocalState reads them for the claim status it
// writes (local_state.h), so a status written at prepare keeps the pod's network data.
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "dra/attach.h"

namespace sriovdra::node {

class AttachRecords {
 public:
  explicit AttachRecords(std::string dir) : dir_(std::move(dir)) {}
  // nullopt when the sandbox has none; an unreadable file is an error (and moved aside).
  Result<std::optional<dra::AttachRecord>> load(const std::string& sandbox) const;
  // Writes the record, or removes the file when it has no interfaces left. A record over
  // dra::kMaxRecordBytes is not written (kTooLarge): it could not be read back.
  Status save(const dra::AttachRecord& record) const;
  // Every readable record (unreadable ones are moved aside and named in `problems`).
  std::vector<dra::AttachRecord> all(std::vector<std::string>* problems = nullptr) const;
  // The attached interfaces of a claim, in any sandbox.
  std::vector<dra::AttachedInterface> ofClaim(const std::string& claim_uid) const;

 private:
  std::string path(const std::string& sandbox) const;
  Result<std::optional<dra::AttachRecord>> loadLocked(const std::string& path) const;

  std::string dir_;
  mutable std::mutex mu_;  // one reader or writer of the directory at a time
};

}  // namespace sriovdra::node
