#pragma once
// What the cluster commands (topology, explain, report) and simulate share: exit codes, errors,
// output formats, tables, and reading the cluster once.
#include <algorithm>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/pointers.h"
#include "cli/commands.h"
#include "cli/objects.h"
#include "kube/client.h"

namespace sriovdra::cli {

inline constexpr int kNegative = 1;  // the answer is no (explain: no node fits)
inline constexpr int kFailed = 2;    // the command could not answer

// Prints "error: <message>" and returns kFailed.
int fail(Streams io, const std::string& message);
bool validOutput(const std::string& o, std::initializer_list<std::string_view> allowed);
Result<std::shared_ptr<kube::Client>> connect(const ClusterArgs& args);
// JSON, or YAML for any other output.
void printDocument(const json::Value& doc, const std::string& output, Streams io);
// Columns padded to the widest cell, like kubectl get.
void printTable(const std::vector<std::vector<std::string>>& rows, std::ostream& out);
// "ns/name", or "name" for an object read from a file without a namespace.
std::string qualified(const kube::ObjectMeta& m);
// Joins the parts in one allocation.
std::string cat(std::initializer_list<std::string_view> parts);
std::string numaText(int64_t numa);
void skippedWarnings(const ObjectBundle& bundle, Streams io);

// Reads the cluster (kubeconfig of `args`) once and calls f(client, bundle).
template <typename F>
int withCluster(const ClusterArgs& args, Streams io, F&& f) {
  auto client = connect(args);
  if (!client.ok()) return fail(io, client.status().message());
  auto bundle = loadCluster(**client);
  if (!bundle.ok()) return fail(io, bundle.status().message());
  skippedWarnings(*bundle, io);
  return f(**client, *bundle);
}

}  // namespace sriovdra::cli
