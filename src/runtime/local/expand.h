// Kubernetes' `$(VAR)` expansion, as the kubelet applies it to env values
// (against the variables defined before them) and to command and args
// (against the container's whole environment): `$(NAME)` becomes NAME's
// value when NAME is defined and stays as written otherwise; `$$` is a
// literal `$`, so `$$(NAME)` gives `$(NAME)`.
//
// Expansion is bounded: each value may reference earlier ones twice, so a
// few dozen lines (A=xx, B=$(A)$(A), C=$(B)$(B), ...) would otherwise ask
// for gigabytes. The bounds are the kernel's own, so nothing that could
// run is refused.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace trainyard::runtime {

// Linux's MAX_ARG_STRLEN (32 pages): execve fails with E2BIG when any one
// argv or envp string is longer, so no expanded value may be.
inline constexpr size_t kMaxExpandedBytes = 128 * 1024;
// The whole environment plus argv: Linux allows a quarter of the stack
// limit, 2 MiB with the default 8 MiB stack (never more than 6 MiB), and
// the kubelet's containers get the same. Beyond it execve fails anyway.
inline constexpr size_t kMaxEnvAndArgvBytes = 2 * 1024 * 1024;

using Lookup = std::function<std::optional<std::string>(std::string_view name)>;

// The expansion of `input`, or nullopt when it would be longer than
// `max_bytes` (nothing beyond that is ever allocated).
std::optional<std::string> ExpandReferences(std::string_view input, const Lookup& lookup,
                                            size_t max_bytes = kMaxExpandedBytes);

}  // namespace trainyard::runtime
