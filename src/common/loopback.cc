#include "common/loopback.h"

#include <arpa/inet.h>

#include <string>

namespace trainyard {

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  // inet_pton takes only the four dotted decimals: no name, no short form
  // (127.1), no octal or hex parts.
  in_addr addr{};
  if (inet_pton(AF_INET, std::string(host).c_str(), &addr) != 1) return false;
  return (ntohl(addr.s_addr) >> 24) == 127;
}

std::string_view HostWithoutPort(std::string_view host_header) {
  if (host_header.starts_with('[')) {
    size_t end = host_header.find(']');
    return end == std::string_view::npos ? host_header : host_header.substr(0, end + 1);
  }
  size_t colon = host_header.rfind(':');
  return colon == std::string_view::npos ? host_header : host_header.substr(0, colon);
}

}  // namespace trainyard
