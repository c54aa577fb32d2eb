#include <catch2/catch.hpp>

#include "kube/events.h"
#include "support/control_plane.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::ControlPlane;

namespace {

std::vector<json::Document> eventsIn(kube::Client& client, const std::string& ns) {
  auto list = client.list(kube::resources::kEvents, ns);
  REQUIRE(list.ok());
  std::vector<json::Document> out;
  for (const auto& item : (*list)["items"].GetArray()) {
    out.emplace_back();
    out.back().CopyFrom(item, out.back().GetAllocator());
  }
  return out;
}

}  // namespace

TEST_CASE("repeated events are counted on one Event; similar ones are combined",
          "[events][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("events");
  kube::EventRecorder recorder(client, "sriov-dra-operator", "test-host");
  kube::ObjectReference ref{
      "sriovnetwork.openshift.io/v1", "SriovNetworkNodePolicy", ns, "policy-a", "1234", "7"};

  SECTION("identical events") {
    for (int i = 0; i < 3; ++i) {
      recorder.warning(ref, "PolicyConflict",
                       "VF range overlaps policy b; give them disjoint ranges");
    }
    REQUIRE(recorder.flush(10s));
    auto events = eventsIn(*client, ns);
    REQUIRE(events.size() == 1);
    const auto& ev = events[0];
    CHECK(json::intOr(ev, "count", 0) == 3);
    CHECK(json::stringOr(ev, "type") == "Warning");
    CHECK(json::stringOr(ev, "reason") == "PolicyConflict");
    CHECK(json::stringOr(*json::at(ev, {"involvedObject"}), "kind") == "SriovNetworkNodePolicy");
    CHECK(json::stringOr(*json::at(ev, {"involvedObject"}), "name") == "policy-a");
    CHECK(json::stringOr(*json::at(ev, {"involvedObject"}), "uid") == "1234");
    CHECK(json::stringOr(*json::at(ev, {"source"}), "component") == "sriov-dra-operator");
    CHECK(json::stringOr(*json::at(ev, {"source"}), "host") == "test-host");
  }
  SECTION("more than 10 different messages for one reason are combined") {
    for (int i = 0; i < 14; ++i) {
      recorder.normal(ref, "Rendered", "rendered node-" + std::to_string(i));
    }
    REQUIRE(recorder.flush(10s));
    auto events = eventsIn(*client, ns);
    CHECK(events.size() == 11);  // 10 distinct, then one combined Event counting the rest
    int combined = 0;
    for (const auto& ev : events) {
      std::string_view msg = json::stringOr(ev, "message");
      if (msg.rfind("(combined from similar events): ", 0) == 0) {
        ++combined;
        CHECK(json::intOr(ev, "count", 0) == 4);
        CHECK(msg == "(combined from similar events): rendered node-13");
      }
    }
    CHECK(combined == 1);
  }
}
