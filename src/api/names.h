// Kubernetes' name and identifier rules (k8s.io/apimachinery validation).
// Each returns the list of problems with `value`, worded as Kubernetes words
// them, empty when the value is fine.
#pragma once

#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace trainyard::api {

using NameProblems = std::vector<std::string>;

NameProblems Dns1035LabelProblems(std::string_view value);      // job names
NameProblems Dns1123LabelProblems(std::string_view value);      // container names, namespaces
NameProblems Dns1123SubdomainProblems(std::string_view value);  // configMap/secret names
NameProblems QualifiedNameProblems(std::string_view value);     // label and annotation keys
NameProblems LabelValueProblems(std::string_view value);
NameProblems EnvVarNameProblems(std::string_view value);
NameProblems PortNameProblems(std::string_view value);  // IANA service names

// A path inside a volume (a volumeMount's subPath): relative, with no ".."
// element, so it can only descend.
NameProblems LocalDescendingPathProblems(std::string_view value);
// A file's path inside a volume (configMap and secret items[].path): also
// never starting with "..", which the kubelet keeps for its own files.
NameProblems LocalNonReservedPathProblems(std::string_view value);

// A generated name's random suffix, as Kubernetes makes them (generateName,
// a ReplicaSet's pods): `length` characters of an alphabet with no vowels
// and no look-alikes, so that no word is ever spelled.
std::string RandomNameSuffix(std::mt19937& random, int length = 5);
// `text` written in that alphabet, a character for each (a template hash).
std::string SafeEncode(std::string_view text);

}  // namespace trainyard::api
