// Small string helpers shared by every module.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainyard {

std::string Join(const std::vector<std::string>& parts, std::string_view separator);

// ASCII lower case: "Worker" -> "worker" (names in labels and TF_CONFIG).
// "0,,2," split at `separator`, empty parts dropped: {"0", "2"}.
std::vector<std::string> SplitNonEmpty(std::string_view text, char separator);

// `s` without leading and trailing ASCII white space (a token file's newline).
std::string_view Trim(std::string_view s);

std::string AsciiLower(std::string_view s);
// How many characters UTF-8 text holds (its code points), as Python's len
// counts a str: limits written in characters are not limits in bytes.
size_t Utf8Length(std::string_view s);
std::string AsciiUpper(std::string_view s);

// Levenshtein distance, for "did you mean" suggestions.
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate nearest to `word` when it is close enough to be a likely
// typo (at most a third of the word's length away, and at least one edit).
std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates);

// `s` as one word for /bin/sh: single-quoted, each ' written '\''.
std::string ShellQuote(std::string_view s);

// Whether two secrets are equal, compared without stopping at the first
// difference, so the time taken says nothing about how much of a guess was
// right.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// Standard base64 with padding (RFC 4648 section 4), as Kubernetes keeps a
// ConfigMap's binaryData and a Secret's data; nullopt when malformed.
std::optional<std::string> Base64Decode(std::string_view text);
std::string Base64Encode(std::string_view bytes);
// The URL-safe alphabet without padding (RFC 4648 §5), as JWTs write it.
std::string Base64UrlEncode(std::string_view bytes);
std::optional<std::string> Base64UrlDecode(std::string_view text);

// FNV-1a, 64 bits: the same for the same text on every build and machine
// (std::hash is not), for names and seeds that must survive an upgrade.
uint64_t StableHash(std::string_view text);

// A size for people: "512 B", "1.5 KiB", "3.2 MiB", up to TiB.
std::string HumanBytes(uint64_t bytes);

}  // namespace trainyard
