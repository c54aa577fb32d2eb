// The product's images as scripts/build-images.sh writes them (SRIOV_DRA_IMAGES): what the agent
// image runs besides the agent works from the image's own files. Its only layer is unpacked and
// the program run with the layer as its root (chroot), so a library or data file the script did
// not copy fails here, not on a customer's node.
#include <filesystem>

#include <catch2/catch.hpp>

#include "base/files.h"
#include "base/json.h"
#include "base/process.h"
#include "support/skip.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using namespace std::chrono_literals;

namespace {

namespace fs = std::filesystem;

ProcessOutput mustRun(std::vector<std::string> argv) {
  auto r = runProcess({.argv = std::move(argv)}, 120s, size_t{64} << 20);
  REQUIRE(r.ok());
  return *r;
}

// "sha256:abc" of an OCI descriptor -> its blob path in the layout.
std::string blobOf(const std::string& layout, const json::Value& descriptor) {
  std::string digest(json::stringOr(descriptor, "digest"));
  REQUIRE(digest.rfind("sha256:", 0) == 0);
  return layout + "/blobs/sha256/" + digest.substr(7);
}

// The root filesystem of the one-layer OCI archive `archive`, unpacked under `dir`.
std::string unpack(const std::string& archive, const std::string& dir) {
  std::string layout = dir + "/layout";
  std::string rootfs = dir + "/rootfs";
  fs::create_directories(layout);
  fs::create_directories(rootfs);
  REQUIRE(mustRun({"tar", "-xf", archive, "-C", layout}).exit_code == 0);
  auto index = json::parse(*readFile(layout + "/index.json"));
  REQUIRE(index.ok());
  auto manifest = json::parse(*readFile(blobOf(layout, (*index)["manifests"][0])));
  REQUIRE(manifest.ok());
  REQUIRE((*manifest)["layers"].Size() == 1);
  std::string layer = blobOf(layout, (*manifest)["layers"][0]);
  REQUIRE(mustRun({"tar", "-xzf", layer, "-C", rootfs}).exit_code == 0);
  return rootfs;
}

}  // namespace

TEST_CASE("the agent image's mstconfig runs from the image's own files", "[images][node]") {
  if (!testing::rootOr("unpacking the agent image and running mstconfig in it (chroot)")) return;
  const char* images = std::getenv("SRIOV_DRA_IMAGES");
  REQUIRE(images != nullptr);
  std::string archive = std::string(images) + "/sriov-dra-agent.tar";
  REQUIRE(fs::exists(archive));
  testing::TempDir dir;
  std::string rootfs = unpack(archive, dir.path());
  CHECK(fs::exists(rootfs + "/usr/share/mstflint/mlxconfig_dbs/mlxconfig_host.db"));
  auto version = mustRun({"chroot", rootfs, "/usr/bin/mstconfig", "-v"});
  INFO(version.out << version.err);
  CHECK(version.exit_code == 0);
  CHECK_THAT(version.out, Catch::Contains("mstconfig, mstflint"));
  // No such device: mstconfig says so and fails, rather than missing a library or its database.
  auto query = mustRun({"chroot", rootfs, "/usr/bin/mstconfig", "-e", "-d", "0000:ff:1f.7", "q"});
  INFO(query.out << query.err);
  CHECK(query.exit_code != 0);
  CHECK_THAT(query.out + query.err, !Catch::Contains("error while loading shared libraries"));
}
