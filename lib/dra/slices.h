#pragma once
// Builds a node's ResourceSlices for driver sriovnetwork.k8snetworkplumbingwg.io (pure).
// Devices: the VFs of SriovNodeState.spec.devices that exist on the node, named like the
// reference driver (0000-c7-00-1), with every discovery attribute of the reference driver (same
// names, types and value formats) plus the spec's attributes; discovery attributes win. A device
// marked exclude_topology is published without dra.net/numaNode, one marked no_rdma with
// rdmaCapable false (so prepare gives it no RDMA devices).
// A device the API server would refuse (api::sliceDeviceProblems: too many attributes, a value
// over 64 characters, ...) is left out and named in SliceSet::refused with the reasons, so the
// rest of the node's devices are still published.
// Pool: one per node (pool name = node name), at most 128 devices per slice. Membership is
// stable: a device stays in its slice while that slice is still needed; new devices fill the
// lowest slice with room. The pool generation goes up whenever more than one slice changes (or
// the slice count changes), so the scheduler never mixes old and new slices; a change confined
// to one slice keeps it.
#include <map>
#include <string>
#include <vector>

#include "api/node_state.h"
#include "api/resource.h"
#include "api/resource_limits.h"

namespace sriovdra::dra {

// The attributes the reference driver discovers for a VF.
api::Attributes discoveryAttributes(const api::InterfaceExt& pf, const api::VirtualFunction& vf);

struct PublishedSlice {
  std::string name;
  api::ResourceSliceSpec spec;
  std::string digest;  // sliceDigest(spec), set by buildSlices
};

// SHA-256 of the spec's JSON encoding (generation included): equal digests, equal specs.
std::string sliceDigest(const api::ResourceSliceSpec& spec);

// What a node keeps of a slice it published: its name and pool, the names of its devices and the
// digest of its spec. That is all the next build needs (which slice each device is in, which
// slices it changes), without the devices' attributes: about 2 KiB per device decoded, 8 MiB for
// 4,096 VFs.
struct SliceSummary {
  std::string name;
  std::string pool;  // spec.pool.name
  int64_t generation = 0;
  std::vector<std::string> devices;  // their names, in the slice's order
  std::string digest;                // sliceDigest(spec)
  static SliceSummary of(const std::string& name, const api::ResourceSliceSpec& spec);
  static SliceSummary of(const PublishedSlice& slice);  // with the digest buildSlices computed
  bool operator==(const SliceSummary&) const = default;
};
std::vector<SliceSummary> summaries(const std::vector<PublishedSlice>& slices);

struct SliceSet {
  std::vector<PublishedSlice> slices;  // index i is named sliceName(node, i)
  std::vector<std::string> missing;    // spec devices not found on the node
  std::vector<std::string> refused;  // "device 0000-c7-00-1: <why the API server would refuse it>"
};

std::string sliceName(const std::string& node, size_t index);

// `previous`: the node's slices as published now (any order; may be empty).
SliceSet buildSlices(const std::string& node, const std::vector<api::Device>& devices,
                     const std::vector<api::InterfaceExt>& discovered,
                     const std::vector<SliceSummary>& previous);

}  // namespace sriovdra::dra
