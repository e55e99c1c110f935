// The nodes the scheduler places pods on. Standalone, that is this machine
// (its CPUs, memory and the GPUs nvidia-smi lists); with `--nodes FILE`,
// a declared inventory of core/v1 Node objects, so that one machine can
// stand in for a cluster: every pod still runs here, but is placed, and
// counted, as if on the node it was bound to.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "runtime/local/machine.h"
#include "scheduler/snapshot.h"

namespace trainyard::engine {

scheduler::Node MachineNode(const std::string& name, const runtime::MachineFacts& facts);

// Reads Node objects (YAML or JSON, one or many documents): metadata.name
// and labels, spec.taints and spec.unschedulable, status.allocatable (or
// status.capacity). GPUs get device ids 0..n-1 unless the annotation
// trainyard.dev/gpus lists them. Errors name the file, the node and field.
Result<std::vector<scheduler::Node>> ReadNodesFile(const std::string& path);
// Whether a manifest's document is a Node: part of an inventory, not of
// what runs.
bool IsNodeDocument(const api::Json& doc);
// One Node document of such a file; `where` prefixes errors ("file:line").
Result<scheduler::Node> NodeFromDocument(const api::Json& doc, const std::string& where);

// The core/v1 Node document for a scheduler node, for the API's /nodes.
api::Json NodeDocument(const scheduler::Node& node);

}  // namespace trainyard::engine
