#pragma once
// The one owner of this node's ResourceSlices of our driver, as upstream's
// resourceslice.Controller is a driver's: the agent hands it the slices it built
// (dra::buildSlices), and it keeps the cache of what is published, writes what changed, deletes
// what is no longer wanted, and tells its own writes from anyone else's.
//
//   the cache       | a metadata-only watch of the node's slices (sliceFieldSelector); our own
//                   | writes are completed from what was written (kube::WriteCompletions),
//                   | anyone else's are read
//   publish()       | writes the slices whose digest differs from `previous`, kSliceWriters at
//                   | once (an update of the cached slice, a create without one; a write that
//                   | lost a race is made once more), then deletes cached slices the set lacks
//   the callback    | runs when someone else created or changed one of the node's slices, when
//                   | any slice of the node was deleted (also by publish(): one more pass then
//                   | finds nothing to write), or when one of our writes raced someone else's
//                   | (kube::OwnWrites): the agent then builds and publishes again. It runs on
//                   | the watch's thread and on publish()'s writers, so it must be thread-safe,
//                   | must not block and must not call publish() (the agent queues its key)
//
// Slices are labelled with the node and owned by its Node object (its uid is read once, by
// start(); without it they have no owner reference). Thread-safety: start() before the first
// publish(), which runs on one thread at a time (the agent's controller runs its one key at a
// time); published() and synced() from any thread.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/resource.h"
#include "dra/slices.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/own_writes.h"
#include "kube/write_completions.h"

namespace sriovdra::agent {

inline constexpr const char* kNodeLabel = "sriovnetwork.k8snetworkplumbingwg.io/node";
// How many of the node's changed ResourceSlices are written at once: the API server takes a
// node's slices faster from several writers than from one (bench/agent_scale measures 1 to 8;
// eight beat four in five of its six sweeps on a 2-core API server). Eight differs from four only
// on nodes with more than 512 VFs (five slices of 128 or more).
inline constexpr size_t kSliceWriters = 8;

// One of this node's ResourceSlices as the publisher keeps it: its metadata and dra::SliceSummary
// (not its devices' attributes, which the node's SriovNodeState gives).
struct CachedSlice {
  kube::ObjectMeta metadata;
  dra::SliceSummary summary;
  static Result<CachedSlice> decode(const json::Value& v);
};

class SlicePublisher {
 public:
  SlicePublisher(std::shared_ptr<kube::Client> client, std::string node_name,
                 std::function<void()> changed);
  ~SlicePublisher();
  SlicePublisher(const SlicePublisher&) = delete;
  SlicePublisher& operator=(const SlicePublisher&) = delete;

  // Reads the Node's uid, then starts the watch.
  void start();
  void stop();
  bool synced() const;
  // The node's slices as the cache has them.
  std::vector<dra::SliceSummary> published() const;
  // Makes the node's slices those of `set`: writes each one whose digest differs from
  // `previous` (what was published before, as the caller knows it) and deletes cached slices
  // `set` has no more. The first error is returned once every write ended.
  Status publish(const dra::SliceSet& set, const std::vector<dra::SliceSummary>& previous);

 private:
  // Updates the slice as the cache has it, or creates it when the cache has none; returns the
  // written resourceVersion.
  Result<std::string> write(const dra::PublishedSlice& slice);

  std::shared_ptr<kube::Client> client_;
  const std::string node_name_;
  std::function<void()> changed_;
  std::string node_uid_;  // set by start() before the first publish()
  kube::Informer<CachedSlice> slices_;
  kube::OwnWrites own_writes_;  // by slice name
  // The summaries of the slices this publisher wrote, by name, until the watch brings them back.
  kube::WriteCompletions<dra::SliceSummary> contents_;
};

// The ResourceSlices of our driver on the node: every slice of it, labelled or not (a stale one,
// e.g. left by the reference driver, is the publisher's to delete). The API server indexes slices
// by spec.nodeName, so each agent's list and watch cost the same at 10,000 nodes as at one; a
// label selector would be matched against every slice's event.
std::string sliceFieldSelector(const std::string& node);

// One ResourceSlice of the node as the publisher writes it: labelled with the node, owned by the
// Node when its uid is known. Without `current` the object to create; with it, the object that
// replaces `current` (an update guarded by its resourceVersion, keeping the labels, annotations,
// finalizers and owners others gave it). Slices are created and updated rather than applied: an
// update of a 128-device slice costs the API server about a third less CPU than the same
// server-side apply (bench/agent_scale). Also what bench/ writes as the agent's floor.
json::Document sliceDocument(const std::string& node, const std::string& node_uid,
                             const dra::PublishedSlice& slice,
                             const kube::ObjectMeta* current = nullptr);

}  // namespace sriovdra::agent
