#pragma once
// What the two SR-IOV CNI plugins' commands share (internal to controllers/node/cni):
//   runAdd        an ADD's steps in order: load() and recordOriginal() (which change nothing the
//                 cache does not record), configure() and addresses(), then commit(); a failure
//                 from configure() on is handed to undo(), whose answer is the ADD's.
//   readCache     DEL's cache of the attachment, decoded; nullopt (logged, the file removed) when
//                 there is none or it names no PCI address: nothing this plugin knows to undo.
//                 A DEL that keeps failing would block the pod's removal forever.
//   stillTheVf    whether the VF's PF and index are still the cache's; after VFs were made again
//                 they may name another VF (another pod's): false is logged.
//   ipamAdd       an ADD's IPAM step: the IPAM plugin `type` run (`added` once it ran, so undo
//                 releases it), its result made the ADD's with the ADD's interface, and, given
//                 the pod's namespace, its addresses and routes on that interface (ipam.h).
//   UndoNotes     what an undo could not do, logged; clean() when it all went.
#include <optional>
#include <string>
#include <string_view>

#include "base/fault_point.h"
#include "base/status.h"
#include "cni/go_json.h"
#include "cni/result.h"
#include "cni/skel.h"
#include "host/netns.h"
#include "host/pci.h"
#include "node/cni/plugin_host.h"
#include "node/cni/vf_files.h"
#include "node/cni/vf_sysfs.h"

namespace sriovdra::cni_plugin {

template <typename Add>
Result<std::string> runAdd(Add& add) {
  SDRA_RETURN_IF_ERROR(add.load());
  SDRA_RETURN_IF_ERROR(add.recordOriginal());
  for (Status (Add::*step)() : {&Add::configure, &Add::addresses}) {
    if (Status st = (add.*step)(); !st.isOk()) return add.undo(st);
  }
  fault::point("cni-add");
  auto done = add.commit();
  if (!done.ok()) return add.undo(done.status());
  return done;
}

// "DEL of <containerID>/<ifName>: ", how DEL's log lines start.
std::string delPrefix(const cni::CmdArgs& args);

template <typename Conf>
std::optional<Conf> readCache(const PluginHost& h, const VfFiles& files, const cni::CmdArgs& args,
                              Result<Conf> (*decode)(std::string_view)) {
  auto text = files.readCache(args.container_id, args.if_name);
  auto conf = text.ok() ? decode(*text) : Result<Conf>(text.status());
  if (conf.ok() && host::isPciAddress(conf->device_id)) return std::move(*conf);
  h.log(delPrefix(args) + "no usable cache (" +
        (conf.ok() ? "deviceID " + cni::goQuote(conf->device_id) + " is not a PCI address"
                   : conf.status().message()) +
        "): nothing to do");
  (void)files.removeCache(args.container_id, args.if_name);
  return std::nullopt;
}

bool stillTheVf(const PluginHost& h, const cni::CmdArgs& args, const std::string& device,
                const std::string& pf, int64_t index);

// `device` names the device in the failure's message (upstream's plugins differ there).
Status ipamAdd(const PluginHost& h, const cni::CmdArgs& args, const std::string& type,
               const std::string& device, const host::NetNamespace* pod_ns, cni::CniResult& result,
               bool& added);

class UndoNotes {
 public:
  explicit UndoNotes(const PluginHost& h) : h_(h) {}
  void operator()(const Status& st) {
    if (st.isOk()) return;
    clean_ = false;
    h_.log("undoing a failed ADD: " + st.message());
  }
  bool clean() const { return clean_; }

 private:
  const PluginHost& h_;
  bool clean_ = true;
};

}  // namespace sriovdra::cni_plugin
