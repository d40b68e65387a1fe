// Small text helpers shared across layers.
#pragma once

#include <string>
#include <string_view>

namespace kernelpro {

// Runs of ASCII whitespace (space, tab, newline, CR, FF, VT) become one space; the ends are
// trimmed. "  a \n\t b  " → "a b".
std::string CollapseWhitespace(std::string_view text);

}  // namespace kernelpro
