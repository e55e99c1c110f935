#include "runtime/local/log_file.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <vector>

namespace trainyard::runtime {
namespace {

std::string IndexPath(const std::string& log_path) { return log_path + ".runs"; }

// Where each run after the first begins.
std::vector<int64_t> RunStarts(const std::string& log_path) {
  std::vector<int64_t> starts;
  std::ifstream in(IndexPath(log_path));
  int64_t offset;
  while (in >> offset) starts.push_back(offset);
  return starts;
}

}  // namespace

Status MarkNewRun(const std::string& log_path) {
  struct stat st {};
  int64_t size = stat(log_path.c_str(), &st) == 0 ? st.st_size : 0;
  if (size == 0) return OkStatus();  // the first run, or runs that said nothing
  std::ofstream out(IndexPath(log_path), std::ios::app);
  out << size << '\n';
  out.flush();
  if (!out) return InternalError(fmt::format("cannot write {}", IndexPath(log_path)));
  return OkStatus();
}

Result<LogSpan> RunSpan(const std::string& log_path, bool previous) {
  std::vector<int64_t> starts = RunStarts(log_path);
  starts.insert(starts.begin(), 0);  // the first run
  if (!previous) return LogSpan{.begin = starts.back(), .end = -1};
  if (starts.size() < 2) {
    return NotFoundError("previous terminated container not found: it never restarted");
  }
  return LogSpan{.begin = starts[starts.size() - 2], .end = starts.back()};
}

std::string CurrentRunTail(const std::string& log_path, size_t max_bytes, size_t max_lines) {
  Result<LogSpan> span = RunSpan(log_path, /*previous=*/false);
  std::ifstream in(log_path, std::ios::binary);
  if (!span.ok() || !in) return "";
  in.seekg(0, std::ios::end);
  int64_t end = in.tellg();
  int64_t begin = std::max(span->begin, end - static_cast<int64_t>(max_bytes));
  if (begin >= end) return "";
  std::string tail(static_cast<size_t>(end - begin), '\0');
  in.seekg(begin);
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  tail.resize(static_cast<size_t>(in.gcount()));
  while (!tail.empty() && tail.back() == '\n') tail.pop_back();
  size_t lines = 0;
  for (size_t i = tail.size(); i-- > 0;) {
    if (tail[i] == '\n' && ++lines == max_lines) return tail.substr(i + 1);
  }
  return tail;
}

}  // namespace trainyard::runtime
