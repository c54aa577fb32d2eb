#pragma once
// The two framings of an NRI connection, as bytes (pure: no sockets).
//   mux (containerd/nri pkg/net/multiplex): the one unix socket carries several logical
//     connections; each write is a frame: connection id (uint32, big-endian), payload length
//     (uint32, big-endian), payload. Connection 1 carries the plugin service (the runtime calls
//     the plugin), connection 2 the runtime service (the plugin calls the runtime). A frame is a
//     piece of its connection's byte stream, not a message: ttrpc may split one message over two.
//   ttrpc (containerd/ttrpc): on each logical connection, messages with a 10-byte header:
//     length (uint32, big-endian, without the header), stream id (uint32), type (1 request,
//     2 response, 3 data), flags; the payload is a protobuf ttrpc.Request or ttrpc.Response.
//     Client streams have odd ids, starting at 1.
// Readers take bytes as they arrive and return what is complete; they refuse lengths over the
// limits upstream enforces (ttrpc 4 MiB per message) instead of allocating them. A bad length
// fails the reader for good: the records completed before it are still returned (so the result
// does not depend on how the bytes were split), every later feed returns the error.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sriovdra::nri {

inline constexpr uint32_t kPluginServiceConn = 1;
inline constexpr uint32_t kRuntimeServiceConn = 2;
inline constexpr size_t kMaxMessage = 4u << 20;  // ttrpc's messageLengthMax
inline constexpr size_t kTtrpcHeader = 10;
inline constexpr size_t kMaxFramePayload = kMaxMessage + kTtrpcHeader;  // the mux's limit

struct Frame {
  uint32_t conn = 0;
  std::string payload;
};

std::string muxFrame(uint32_t conn, std::string_view payload);

class MuxReader {
 public:
  // The frames completed by `bytes`; kInvalidArgument for a frame over kMaxFramePayload (the
  // connection is unusable after that).
  Result<std::vector<Frame>> feed(std::string_view bytes);

 private:
  std::string buffer_;
  Status failed_ = Status::ok();
};

enum class MessageType : uint8_t { kRequest = 1, kResponse = 2, kData = 3 };

struct Message {
  uint32_t stream = 0;
  MessageType type = MessageType::kRequest;
  uint8_t flags = 0;
  std::string payload;
};

std::string ttrpcMessage(const Message& m);

class MessageReader {
 public:
  // The messages completed by `bytes`; kInvalidArgument for a length over kMaxMessage.
  Result<std::vector<Message>> feed(std::string_view bytes);

 private:
  std::string buffer_;
  Status failed_ = Status::ok();
};

}  // namespace sriovdra::nri
