// Kubernetes' `$(VAR)` expansion, as the kubelet applies it to env values
// (against the variables defined before them) and to command and args
// (against the container's whole environment): `$(NAME)` becomes NAME's
// value when NAME is defined and stays as written otherwise; `$$` is a
// literal `$`, so `$$(NAME)` gives `$(NAME)`.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace trainyard::runtime {

using Lookup = std::function<std::optional<std::string>(std::string_view name)>;

std::string ExpandReferences(std::string_view input, const Lookup& lookup);

}  // namespace trainyard::runtime
