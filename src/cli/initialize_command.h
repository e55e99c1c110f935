// `trainyard initialize dataset|model DEST`: what Kubeflow Trainer's
// dataset-initializer and model-initializer images do, on one machine.
// The TrainJob controller runs it in an initializer step whose container
// is one of those images (whose program is inside the image, which
// trainyard does not pull): it fetches STORAGE_URI into DEST
// (/workspace/dataset or /workspace/model, upstream's paths). A file://
// URI or a plain path is copied, links followed (as the data they name),
// every folder left writable by its owner so a rerun can write over it; a
// source that overlaps the destination or loops is refused, and a scheme
// this machine cannot fetch from (hf://, s3://) fails with what to do
// instead.
#pragma once

#include <string>

namespace trainyard::cli {

struct InitializeOptions {
  std::string what;         // dataset | model
  std::string destination;  // /workspace/dataset
};

int RunInitialize(const InitializeOptions& options);

}  // namespace trainyard::cli
