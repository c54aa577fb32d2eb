#pragma once
// Recognises a controller's own writes when its watch brings them back, so that they start no
// reconcile, without losing someone else's write that lands at the same time. A write is known
// by the resourceVersion R of the API server's answer. The watch often delivers a write before
// its answer reaches the writer, so events of an object whose write is in flight are held and
// judged when the answer comes:
//
//   call               | state of the key          | result
//   -------------------+---------------------------+------------------------------------------
//   isOwn(key, rv)     | unknown                   | false
//                      | in flight                 | true; rv held
//                      | answered R                | rv == R, but false for R once when a held
//                      |                           | event was someone else's and R came later
//   finish(key, R)     | held someone else's event | true when R was held too: the cache has
//                      | (rv != R)                 | both writes, look again now; otherwise
//                      |                           | the event at R will say so (see isOwn)
//   finish(key, "")    | (the write failed)        | true when any event was held; forgets key
//   forget(key)        |                           | drops what is known (the writer deleted it)
//
// So the caller reconciles again only once its cache holds its own write, and never misses a
// write by someone else. Only events that change what this writer writes should be asked about
// (a status written by others is never "own"). Thread-safe: the writer's workers and the
// watch's handlers call it concurrently.
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace sriovdra::kube {

class OwnWrites {
 public:
  // Before sending a write of `key` (namespace/name, or name).
  void start(const std::string& key);
  // After the answer: the written resourceVersion, "" when the write failed. True when the
  // caller should look at the object again now (table above).
  [[nodiscard]] bool finish(const std::string& key, const std::string& resource_version);
  // For a watch event of `key` at `resource_version`: true when it needs no reconcile (this
  // writer's own write, or held until finish() judges it).
  bool isOwn(const std::string& key, const std::string& resource_version);
  void forget(const std::string& key);

 private:
  struct Write {
    std::string resource_version;  // of the last answer; "" while in flight
    bool in_flight = false;
    bool look_again = false;        // the event at resource_version is to be reconciled
    std::vector<std::string> held;  // resourceVersions of events seen while in flight
  };
  std::mutex mu_;
  std::map<std::string, Write> writes_;  // guarded by mu_
};

}  // namespace sriovdra::kube
