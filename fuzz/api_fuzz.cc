// libFuzzer over the API's request handling: an input is a request
//   METHOD PATH[?QUERY]\n
//   CONTENT-TYPE\n
//   BODY
// handled against a fresh in-memory store. Any crash, sanitizer report or
// hang is a bug: a malformed request must get a 4xx, never take the
// server down.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "server/api_path.h"
#include "server/backend.h"
#include "server/handler.h"
#include "store/sqlite_store.h"

namespace {

using namespace trainyard;

class FuzzBackend final : public server::Backend {
 public:
  explicit FuzzBackend(const Clock& clock)
      : store_(std::move(*store::SqliteStore::Open({.clock = &clock, .kept_events = 64}))) {}
  store::CommittedReader& store() override { return store_->committed(); }
  Result<api::Json> Execute(Write write) override { return write(*store_); }
  std::vector<api::Json> Nodes() const override {
    return {{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "fuzz"}}}}};
  }
  Result<LogRun> Log(const std::string&, const std::string&, const std::string&,
                     bool) const override {
    return NotFoundError("no logs here");
  }
  // The request is checked to the end; nothing is run.
  Result<std::vector<std::string>> ExecArgv(
      const std::string&, const std::string&, const std::string&,
      const std::vector<std::string>& command) const override {
    return command;
  }

 private:
  std::unique_ptr<store::SqliteStore> store_;
};

std::string_view Line(std::string_view& rest) {
  size_t nl = rest.find('\n');
  std::string_view line = rest.substr(0, nl);
  rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::string_view first = Line(rest);
  std::string_view content_type = Line(rest);
  size_t space = first.find(' ');
  std::string_view method = first.substr(0, space);
  std::string_view target = space == std::string_view::npos ? "" : first.substr(space + 1);
  size_t question = target.find('?');

  FakeClock clock;
  FuzzBackend backend(clock);
  server::ApiHandler handler(backend, clock);
  if (!handler.EnsureDefaultNamespace().ok()) return 0;
  server::ApiRequest request{.method = std::string(method),
                             .path = std::string(target.substr(0, question)),
                             .query = question == std::string_view::npos
                                          ? std::multimap<std::string, std::string>()
                                          : server::ParseQuery(target.substr(question + 1)),
                             .content_type = std::string(content_type),
                             .accept = content_type.find("Table") != std::string_view::npos
                                           ? "application/json;as=Table;v=v1;g=meta.k8s.io"
                                           : "application/json",
                             .body = std::string(rest)};
  server::ApiResponse response = handler.Handle(request);
  if (response.code < 200 || response.code >= 600) __builtin_trap();
  if (response.stream) {
    std::string out;
    for (int i = 0; i < 4 && response.stream->Next(out, std::chrono::milliseconds(0)); ++i) {
    }
  }
  return 0;
}
