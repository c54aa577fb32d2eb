#include "node/agent/slice_publisher.h"

#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "api/names.h"
#include "base/log.h"
#include "base/parallel.h"

namespace sriovdra::agent {

Result<CachedSlice> CachedSlice::decode(const json::Value& v) {
  auto slice = api::ResourceSlice::decode(v);
  if (!slice.ok()) return slice.status();
  auto summary = dra::SliceSummary::of(slice->metadata.name, slice->spec);
  return CachedSlice{std::move(slice->metadata), std::move(summary)};
}

SlicePublisher::SlicePublisher(std::shared_ptr<kube::Client> client, std::string node_name,
                               std::function<void()> changed)
    : client_(std::move(client)),
      node_name_(std::move(node_name)),
      changed_(std::move(changed)),
      slices_(client_, api::resources::kResourceSlices,
              {.name = "resourceslices",
               .field_selector = sliceFieldSelector(node_name_),
               .watch_metadata_only = true}) {
  // Our own writes come back here; only someone else's matter (a slice another writer created,
  // changed or deleted).
  auto own = [this](const auto& s) {
    return own_writes_.isOwn(s->metadata.name, s->metadata.resource_version);
  };
  // The watch brings metadata only: our own writes are completed from what we wrote, anyone
  // else's change is read.
  slices_.setCompletion([this](const kube::ObjectMeta& meta, const auto&) {
    auto summary = contents_.take(meta.name, meta.resource_version, kube::kWriteAnswerWait);
    return summary ? std::make_shared<const CachedSlice>(CachedSlice{meta, std::move(*summary)})
                   : nullptr;
  });
  slices_.addHandlers({.on_add =
                           [this, own](const auto& n) {
                             if (!own(n)) changed_();
                           },
                       .on_update =
                           [this, own](const auto& o, const auto& n) {
                             if (o->summary != n->summary && !own(n)) changed_();
                           },
                       .on_delete = [this](const auto&, bool) { changed_(); }});
}

SlicePublisher::~SlicePublisher() { stop(); }

void SlicePublisher::start() {
  auto node = client_->get(kube::resources::kNodes, "", node_name_);
  if (node.ok()) {
    node_uid_ = kube::ObjectMeta::decode(*node).uid;
  } else {
    SDRA_LOG_WARN << "cannot read Node " << node_name_ << " (" << node.status().message()
                  << "): ResourceSlices will have no owner reference";
  }
  slices_.start();
}

void SlicePublisher::stop() { slices_.stop(); }

bool SlicePublisher::synced() const { return slices_.hasSynced(); }

std::vector<dra::SliceSummary> SlicePublisher::published() const {
  std::vector<dra::SliceSummary> out;
  for (const auto& s : slices_.list()) out.push_back(s->summary);
  return out;
}

Status SlicePublisher::publish(const dra::SliceSet& set,
                               const std::vector<dra::SliceSummary>& previous) {
  std::map<std::string_view, std::string_view> digests;
  for (const auto& s : previous) digests.emplace(s.name, s.digest);
  std::set<std::string> wanted;
  std::vector<const dra::PublishedSlice*> changed;
  for (const auto& slice : set.slices) {
    wanted.insert(slice.name);
    auto it = digests.find(slice.name);
    if (it == digests.end() || it->second != slice.digest) changed.push_back(&slice);
  }
  // The changed slices go out kSliceWriters at a time, so the scheduler also sees the pool's new
  // generation complete sooner.
  std::vector<Status> written(changed.size());
  forEachConcurrently(changed.size(), kSliceWriters, [&](size_t i) {
    const dra::PublishedSlice& slice = *changed[i];
    own_writes_.start(slice.name);
    contents_.start(slice.name, dra::SliceSummary::of(slice));
    auto rv = write(slice);
    contents_.answered(slice.name, rv.ok() ? *rv : "");
    if (own_writes_.finish(slice.name, rv.ok() ? *rv : "")) changed_();
    written[i] = rv.status();
    if (!rv.ok()) return;
    SDRA_LOG_INFO << "published ResourceSlice " << slice.name << " (" << slice.spec.devices.size()
                  << " devices, pool generation " << slice.spec.pool.generation << ")";
  });
  for (const auto& st : written) SDRA_RETURN_IF_ERROR(st);
  for (const auto& s : slices_.list()) {
    if (wanted.count(s->metadata.name) != 0) continue;
    Status st = client_->remove(api::resources::kResourceSlices, "", s->metadata.name);
    if (!st.isOk() && st.code() != Code::kNotFound) return st;
    own_writes_.forget(s->metadata.name);
    contents_.forget(s->metadata.name);
  }
  return Status::ok();
}

Result<std::string> SlicePublisher::write(const dra::PublishedSlice& slice) {
  auto cached = slices_.get("", slice.name);
  std::string text;
  auto written = client_->replace(
      api::resources::kResourceSlices, "", slice.name, cached ? &cached->metadata : nullptr,
      [&](const kube::ObjectMeta* current) -> std::string_view {
        text = json::dump(sliceDocument(node_name_, node_uid_, slice, current));
        return text;
      },
      {.field_manager = api::kAgentFieldManager, .metadata_only = true});
  if (!written.ok()) return written.status();
  return kube::ObjectMeta::decode(*written).resource_version;
}

std::string sliceFieldSelector(const std::string& node) {
  return "spec.nodeName=" + node + ",spec.driver=" + std::string(api::kDriverName);
}

json::Document sliceDocument(const std::string& node, const std::string& node_uid,
                             const dra::PublishedSlice& slice, const kube::ObjectMeta* current) {
  auto doc = kube::newObject(api::resources::kResourceSlices, "", slice.name);
  kube::ObjectMeta meta;
  if (current) meta = *current;
  meta.labels[kNodeLabel] = node;
  meta.labels["app.kubernetes.io/managed-by"] = "sriov-dra-agent";
  if (!node_uid.empty()) meta.setOwner({"v1", "Node", node, node_uid});
  meta.encode(doc["metadata"], doc.GetAllocator());
  slice.spec.encode(api::Writer(doc, doc.GetAllocator()).object("spec"));
  return doc;
}

}  // namespace sriovdra::agent
