#include "support/kubelet_client.h"

#include <filesystem>
#include <thread>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "support/poll.h"

namespace sriovdra::testing {
namespace {

// Protocol buffers wire format, just what these messages use: varints (wire type 0) and
// length-delimited fields (wire type 2).
class WireWriter {
 public:
  WireWriter& str(int field, const std::string& s) { return bytes(field, s); }
  WireWriter& boolean(int field, bool v) {
    varint(static_cast<uint64_t>(field) << 3);
    varint(v ? 1 : 0);
    return *this;
  }
  WireWriter& bytes(int field, const std::string& b) {
    varint(static_cast<uint64_t>(field) << 3 | 2);
    varint(b.size());
    out_ += b;
    return *this;
  }
  const std::string& data() const { return out_; }

 private:
  void varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  std::string out_;
};

struct WireField {
  int number;
  uint64_t varint = 0;
  std::string bytes;
};

Result<std::vector<WireField>> readWire(const std::string& in) {
  std::vector<WireField> out;
  size_t i = 0;
  auto varint = [&](uint64_t* v) {
    *v = 0;
    for (int shift = 0; i < in.size() && shift < 64; shift += 7) {
      auto b = static_cast<uint8_t>(in[i++]);
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  };
  while (i < in.size()) {
    uint64_t key = 0;
    if (!varint(&key)) return Status(Code::kInternal, "truncated field key");
    WireField f{static_cast<int>(key >> 3)};
    switch (key & 7) {
      case 0:
        if (!varint(&f.varint)) return Status(Code::kInternal, "truncated varint");
        break;
      case 2: {
        uint64_t len = 0;
        if (!varint(&len) || i + len > in.size()) return Status(Code::kInternal, "truncated bytes");
        f.bytes = in.substr(i, len);
        i += len;
        break;
      }
      default:
        return Status(Code::kInternal, "unexpected wire type " + std::to_string(key & 7));
    }
    out.push_back(std::move(f));
  }
  return out;
}

Result<std::string> call(const std::string& socket, const std::string& method,
                         const std::string& request) {
  auto channel = grpc::CreateChannel("unix://" + socket, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(45));  // kubelet's
  grpc::Slice slice(request);
  grpc::ByteBuffer req(&slice, 1);
  grpc::ByteBuffer resp;
  grpc::Status st;
  // A completion queue drained on this thread: nothing of the call outlives this function (a
  // callback would run on a gRPC thread that can still touch the context after we return).
  grpc::CompletionQueue cq;
  auto rpc = stub.PrepareUnaryCall(&ctx, method, req, &cq);
  rpc->StartCall();
  int tag = 1;
  rpc->Finish(&resp, &st, &tag);
  void* got = nullptr;
  bool ok = false;
  if (!cq.Next(&got, &ok) || got != &tag || !ok) {
    return Status(Code::kUnavailable, method + ": the gRPC call did not complete");
  }
  cq.Shutdown();
  while (cq.Next(&got, &ok)) {
  }
  if (!st.ok()) {
    return Status(Code::kUnavailable,
                  method + ": gRPC " + std::to_string(st.error_code()) + " " + st.error_message());
  }
  std::vector<grpc::Slice> slices;
  if (!resp.Dump(&slices).ok()) return Status(Code::kInternal, "unreadable response");
  std::string out;
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

std::string claimsRequest(const std::vector<KubeletClaim>& claims) {
  WireWriter req;
  for (const auto& c : claims) {
    req.bytes(1, WireWriter().str(1, c.namespace_).str(2, c.uid).str(3, c.name).data());
  }
  return req.data();
}

std::string draMethod(const std::string& version, const std::string& rpc) {
  return "/k8s.io.kubelet.pkg.apis.dra." + version + ".DRAPlugin/" + rpc;
}

// map<string, V> entries: {1: key, 2: value}.
Result<std::map<std::string, std::string>> mapEntries(const std::string& message) {
  auto fields = readWire(message);
  if (!fields.ok()) return fields.status();
  std::map<std::string, std::string> out;
  for (const auto& f : *fields) {
    if (f.number != 1) continue;
    auto entry = readWire(f.bytes);
    if (!entry.ok()) return entry.status();
    std::string key, value;
    for (const auto& e : *entry) {
      if (e.number == 1) key = e.bytes;
      if (e.number == 2) value = e.bytes;
    }
    out[key] = value;
  }
  return out;
}

}  // namespace

Result<KubeletPluginInfo> KubeletClient::registerPlugin(const std::string& registry_dir,
                                                        const std::string& driver, bool accept,
                                                        const std::string& error,
                                                        std::chrono::seconds timeout) {
  std::string socket = registry_dir + "/" + driver + "-reg.sock";
  // Like kubelet's plugin watcher: a socket left behind by a killed plugin refuses connections
  // until the restarted plugin replaces it, so keep trying until the deadline.
  Result<std::string> answer = Status(Code::kTimeout, "no registration socket " + socket);
  auto answered = [&] {
    if (!std::filesystem::exists(socket)) return false;
    answer = call(socket, "/pluginregistration.Registration/GetInfo", "");
    return answer.ok();
  };
  if (!pollUntil(answered, timeout, std::chrono::milliseconds(100))) return answer.status();
  auto fields = readWire(*answer);
  if (!fields.ok()) return fields.status();
  KubeletPluginInfo info;
  for (const auto& f : *fields) {
    if (f.number == 1) info.type = f.bytes;
    if (f.number == 2) info.name = f.bytes;
    if (f.number == 3) info.endpoint = f.bytes;
    if (f.number == 4) info.supported_versions.push_back(f.bytes);
  }
  auto notified = call(socket, "/pluginregistration.Registration/NotifyRegistrationStatus",
                       WireWriter().boolean(1, accept).str(2, error).data());
  if (!notified.ok()) return notified.status();
  return info;
}

Result<std::map<std::string, KubeletPrepared>> KubeletClient::prepare(
    const std::string& endpoint, const std::string& version,
    const std::vector<KubeletClaim>& claims) {
  auto answer = call(endpoint, draMethod(version, "NodePrepareResources"), claimsRequest(claims));
  if (!answer.ok()) return answer.status();
  auto entries = mapEntries(*answer);
  if (!entries.ok()) return entries.status();
  std::map<std::string, KubeletPrepared> out;
  for (const auto& [uid, value] : *entries) {
    auto fields = readWire(value);
    if (!fields.ok()) return fields.status();
    KubeletPrepared p;
    for (const auto& f : *fields) {
      if (f.number == 2) p.error = f.bytes;
      if (f.number != 1) continue;
      auto dev_fields = readWire(f.bytes);
      if (!dev_fields.ok()) return dev_fields.status();
      KubeletDevice d;
      for (const auto& df : *dev_fields) {
        if (df.number == 1) d.request_names.push_back(df.bytes);
        if (df.number == 2) d.pool = df.bytes;
        if (df.number == 3) d.device = df.bytes;
        if (df.number == 4) d.cdi_device_ids.push_back(df.bytes);
      }
      p.devices.push_back(std::move(d));
    }
    out[uid] = std::move(p);
  }
  return out;
}

Result<std::map<std::string, std::string>> KubeletClient::unprepare(
    const std::string& endpoint, const std::string& version,
    const std::vector<KubeletClaim>& claims) {
  auto answer = call(endpoint, draMethod(version, "NodeUnprepareResources"), claimsRequest(claims));
  if (!answer.ok()) return answer.status();
  auto entries = mapEntries(*answer);
  if (!entries.ok()) return entries.status();
  std::map<std::string, std::string> out;
  for (const auto& [uid, value] : *entries) {
    auto fields = readWire(value);
    if (!fields.ok()) return fields.status();
    out[uid] = "";
    for (const auto& f : *fields) {
      if (f.number == 1) out[uid] = f.bytes;
    }
  }
  return out;
}

}  // namespace sriovdra::testing
