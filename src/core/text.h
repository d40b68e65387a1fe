// Small text helpers shared across layers.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kernelpro {

// Runs of ASCII whitespace (space, tab, newline, CR, FF, VT) become one space; the ends are
// trimmed. "  a \n\t b  " → "a b".
std::string CollapseWhitespace(std::string_view text);

// The length of the longest prefix of `text` of at most `max_bytes` bytes that does not split a
// UTF-8 character (compiler messages quote with ‘ ’): text.size() when it fits.
std::size_t Utf8Prefix(std::string_view text, std::size_t max_bytes);

// `value` with `digits` decimals: FormatFixed(1.8449, 2) → "1.84".
std::string FormatFixed(double value, int digits = 2);

}  // namespace kernelpro
