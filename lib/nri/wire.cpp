#include "nri/wire.h"

namespace sriovdra::nri {
namespace {

void putBigEndian(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

uint32_t getBigEndian(std::string_view in, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(in[at + i]);
  return v;
}

// Splits complete records off the front of `buffer`: each a header of `header` bytes whose
// big-endian uint32 at `length_at` is the body length. `take(header, body)` keeps one.
template <typename Take>
Status splitRecords(std::string& buffer, size_t header, size_t length_at, size_t max_body,
                    std::string_view what, Take take) {
  size_t at = 0;
  while (buffer.size() - at >= header) {
    uint32_t length = getBigEndian(buffer, at + length_at);
    if (length > max_body) {
      return Status(Code::kInvalidArgument, std::string(what) + " of " + std::to_string(length) +
                                                " bytes exceeds the limit of " +
                                                std::to_string(max_body));
    }
    if (buffer.size() - at - header < length) break;
    take(std::string_view(buffer).substr(at, header),
         std::string_view(buffer).substr(at + header, length));
    at += header + length;
  }
  buffer.erase(0, at);
  return Status::ok();
}

// A reader's answer: the records, and on a bad length the reader fails for good.
template <typename Record>
Result<std::vector<Record>> deliver(std::vector<Record> records, Status st, Status& failed,
                                    std::string& buffer) {
  if (st.isOk()) return records;
  failed = st;  // the connection is unusable from here on
  buffer.clear();
  buffer.shrink_to_fit();
  if (records.empty()) return st;
  return records;  // what completed before the bad length, however the bytes were split
}

}  // namespace

std::string muxFrame(uint32_t conn, std::string_view payload) {
  std::string out;
  out.reserve(8 + payload.size());
  putBigEndian(out, conn);
  putBigEndian(out, static_cast<uint32_t>(payload.size()));
  out.append(payload);
  return out;
}

Result<std::vector<Frame>> MuxReader::feed(std::string_view bytes) {
  if (!failed_.isOk()) return failed_;
  buffer_.append(bytes);
  std::vector<Frame> frames;
  Status st = splitRecords(buffer_, 8, 4, kMaxFramePayload, "an NRI mux frame",
                           [&](std::string_view header, std::string_view body) {
                             frames.push_back({getBigEndian(header, 0), std::string(body)});
                           });
  return deliver(std::move(frames), st, failed_, buffer_);
}

std::string ttrpcMessage(const Message& m) {
  std::string out;
  out.reserve(kTtrpcHeader + m.payload.size());
  putBigEndian(out, static_cast<uint32_t>(m.payload.size()));
  putBigEndian(out, m.stream);
  out.push_back(static_cast<char>(m.type));
  out.push_back(static_cast<char>(m.flags));
  out.append(m.payload);
  return out;
}

Result<std::vector<Message>> MessageReader::feed(std::string_view bytes) {
  if (!failed_.isOk()) return failed_;
  buffer_.append(bytes);
  std::vector<Message> messages;
  Status st = splitRecords(
      buffer_, kTtrpcHeader, 0, kMaxMessage, "a ttrpc message",
      [&](std::string_view header, std::string_view body) {
        messages.push_back({getBigEndian(header, 4), static_cast<MessageType>(header[8]),
                            static_cast<uint8_t>(header[9]), std::string(body)});
      });
  return deliver(std::move(messages), st, failed_, buffer_);
}

}  // namespace sriovdra::nri
