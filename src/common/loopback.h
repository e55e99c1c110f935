// Whether a name or address stands for this machine's loopback interface.
#pragma once

#include <string_view>

namespace trainyard {

// True for `localhost`, an IPv4 literal in 127.0.0.0/8 and `::1` (bare or
// in brackets, as a URL's host writes it). Only literals count: a name
// such as `127.0.0.1.evil.example` resolves wherever its owner says, so a
// web page whose name is rebound to 127.0.0.1 is never taken for loopback.
bool IsLoopbackHost(std::string_view host);

// `host_header` (an HTTP Host header: name, `[v6]`, either with `:port`)
// without its port.
std::string_view HostWithoutPort(std::string_view host_header);

}  // namespace trainyard
