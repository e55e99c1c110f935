#include "server/cri_log.h"

#include <fmt/format.h>

#include <optional>

#include "tune/metrics.h"

namespace trainyard::server {
namespace {

struct CriLine {
  std::string_view time;
  int64_t time_ns = 0;
  bool partial = false;
  std::string_view text;
};

std::optional<CriLine> ParseCriLine(std::string_view line) {
  size_t first = line.find(' ');
  if (first == std::string_view::npos) return std::nullopt;
  size_t second = line.find(' ', first + 1);
  if (second == std::string_view::npos || second + 2 > line.size()) return std::nullopt;
  std::string_view stream = line.substr(first + 1, second - first - 1);
  char tag = line[second + 1];
  bool tag_ends = second + 2 == line.size() || line[second + 2] == ' ';
  std::optional<int64_t> ns = tune::ParseRfc3339Nanos(line.substr(0, first));
  if (!ns || (stream != "stdout" && stream != "stderr") || (tag != 'F' && tag != 'P') ||
      !tag_ends) {
    return std::nullopt;
  }
  std::string_view text = second + 3 <= line.size() ? line.substr(second + 3) : std::string_view();
  return CriLine{
      .time = line.substr(0, first), .time_ns = *ns, .partial = tag == 'P', .text = text};
}

}  // namespace

size_t RenderCriLines(std::string_view data, const CriRender& render, std::string& out) {
  size_t start = 0;
  for (size_t end; (end = data.find('\n', start)) != std::string_view::npos; start = end + 1) {
    std::string_view line = data.substr(start, end - start);
    std::optional<CriLine> cri = ParseCriLine(line);
    if (!cri) {
      out.append(line).push_back('\n');
      continue;
    }
    if (cri->time_ns < render.since_ns) continue;
    if (render.timestamps) out.append(cri->time).push_back(' ');
    out.append(cri->text);
    if (!cri->partial) out.push_back('\n');
  }
  return start;
}

std::string CriLogPath(const std::string& dir, const std::string& namespace_,
                       const std::string& pod, const std::string& uid, const std::string& container,
                       int run) {
  return fmt::format("{}/{}_{}_{}/{}/{}.log", dir, namespace_, pod, uid, container, run);
}

}  // namespace trainyard::server
