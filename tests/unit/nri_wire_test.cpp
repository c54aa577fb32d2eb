// The NRI connection's framings: mux frames and ttrpc messages byte for byte, reassembled from
// any split, and refused above upstream's limits.
#include <catch2/catch.hpp>

#include "nri/wire.h"

using namespace sriovdra;

namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string out;
  for (int c : b) out.push_back(static_cast<char>(c));
  return out;
}

}  // namespace

TEST_CASE("mux frames and ttrpc messages are big-endian length-prefixed", "[nri][unit]") {
  CHECK(nri::muxFrame(2, "abc") == bytes({0, 0, 0, 2, 0, 0, 0, 3, 'a', 'b', 'c'}));
  CHECK(nri::ttrpcMessage({7, nri::MessageType::kResponse, 0, "xy"}) ==
        bytes({0, 0, 0, 2, 0, 0, 0, 7, 2, 0, 'x', 'y'}));
}

TEST_CASE("frames and messages come out whole however the bytes are split", "[nri][unit]") {
  std::string m1 = nri::ttrpcMessage({1, nri::MessageType::kRequest, 0, std::string(300, 'r')});
  std::string m2 = nri::ttrpcMessage({3, nri::MessageType::kRequest, 0, ""});
  // ttrpc writes a message in two pieces when it is large: two frames for one message.
  std::string stream = nri::muxFrame(1, m1.substr(0, 10)) + nri::muxFrame(1, m1.substr(10)) +
                       nri::muxFrame(2, "other") + nri::muxFrame(1, m2);
  for (size_t step : {size_t{1}, size_t{7}, stream.size()}) {
    INFO("fed " << step << " bytes at a time");
    nri::MuxReader mux;
    nri::MessageReader plugin;
    std::vector<nri::Message> got;
    std::vector<std::string> other;
    for (size_t at = 0; at < stream.size(); at += step) {
      auto frames = mux.feed(std::string_view(stream).substr(at, step));
      REQUIRE(frames.ok());
      for (const auto& f : *frames) {
        if (f.conn != 1) {
          other.push_back(f.payload);
          continue;
        }
        auto messages = plugin.feed(f.payload);
        REQUIRE(messages.ok());
        got.insert(got.end(), messages->begin(), messages->end());
      }
    }
    REQUIRE(got.size() == 2);
    CHECK(got[0].stream == 1);
    CHECK(got[0].payload == std::string(300, 'r'));
    CHECK(got[1].stream == 3);
    CHECK(got[1].payload.empty());
    CHECK(other == std::vector<std::string>{"other"});
  }
}

TEST_CASE("lengths over upstream's limits are refused before anything is allocated",
          "[nri][unit]") {
  nri::MuxReader mux;
  auto big = mux.feed(bytes({0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff}));
  REQUIRE_FALSE(big.ok());
  CHECK_THAT(big.status().message(), Catch::Contains("exceeds the limit"));
  nri::MessageReader messages;
  auto huge = messages.feed(bytes({0, 0x40, 0, 1, 0, 0, 0, 1, 1, 0}));  // 4 MiB + 1
  REQUIRE_FALSE(huge.ok());
  CHECK_THAT(huge.status().message(), Catch::Contains("a ttrpc message of 4194305 bytes"));
  nri::MessageReader exact;
  CHECK(exact.feed(bytes({0, 0x40, 0, 0, 0, 0, 0, 1, 1, 0})).ok());  // 4 MiB: waits for it
}

TEST_CASE("what completed before a bad length is delivered however the bytes are split",
          "[nri][unit]") {
  // A whole frame, then a frame header over the limit (found by the nri_wire fuzzer: fed at once
  // the good frame was dropped, fed byte by byte it was not).
  std::string stream = nri::muxFrame(1, "good") + bytes({0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff});
  for (size_t step : {size_t{1}, stream.size()}) {
    INFO("fed " << step << " bytes at a time");
    nri::MuxReader mux;
    std::vector<std::string> got;
    Status failed = Status::ok();
    for (size_t at = 0; at < stream.size() && failed.isOk(); at += step) {
      auto frames = mux.feed(std::string_view(stream).substr(at, step));
      if (!frames.ok()) {
        failed = frames.status();
        break;
      }
      for (const auto& f : *frames) got.push_back(f.payload);
    }
    CHECK(got == std::vector<std::string>{"good"});
    // Failed for good: this feed or the next says so.
    if (failed.isOk()) failed = mux.feed("").status();
    CHECK_THAT(failed.message(), Catch::Contains("exceeds the limit"));
  }
}
