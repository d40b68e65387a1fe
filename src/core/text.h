// Small text helpers shared across layers, so that each module does not keep its own copy of
// lower-casing, trimming, joining and splitting. All of them work on bytes and know only ASCII:
// UTF-8 text passes through unchanged (no byte of a multi-byte character is ASCII), and nothing
// depends on the process locale.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kernelpro {

// Space, tab, newline, carriage return, form feed, vertical tab: what std::isspace accepts in the
// "C" locale.
bool IsAsciiSpace(char c);

// A-Z → a-z (Lower) or a-z → A-Z (Upper); every other byte is kept.
std::string Lower(std::string_view text);
std::string Upper(std::string_view text);

// Whether a and b are equal once both are lower-cased: HTTP header names, URL schemes.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// `text` without its leading and/or trailing ASCII whitespace. The result points into `text`:
// keep what it views alive (wrap it in std::string to keep a copy).
std::string_view Trim(std::string_view text);
std::string_view TrimLeft(std::string_view text);
std::string_view TrimRight(std::string_view text);

// Whether `part` occurs in `text` (std::string::contains arrives only with C++23).
bool Contains(std::string_view text, std::string_view part);

// The items with `separator` between each two: Join({"a", "b"}, ", ") → "a, b"; {} → "".
std::string Join(const std::vector<std::string>& items, std::string_view separator);

// The pieces between separators, empty ones included: Split("a,,b", ',') → {"a", "", "b"};
// Split("", ',') → {""}.
std::vector<std::string> Split(std::string_view text, char separator);

// The lines of `text` without their line breaks ("\n" or "\r\n"). A final line break ends the
// last line rather than starting an empty one: "a\n\nb\n" → {"a", "", "b"}; "" → {}.
std::vector<std::string> SplitLines(std::string_view text);

// Runs of ASCII whitespace (space, tab, newline, CR, FF, VT) become one space; the ends are
// trimmed. "  a \n\t b  " → "a b".
std::string CollapseWhitespace(std::string_view text);

// The length of the longest prefix of `text` of at most `max_bytes` bytes that does not split a
// UTF-8 character (compiler messages quote with ‘ ’): text.size() when it fits.
std::size_t Utf8Prefix(std::string_view text, std::size_t max_bytes);

// The longest prefix of `text` that ends at a line break and holds at most `max_bytes` bytes, so
// that a cut text ends with whole lines: PrefixAtLineBreak("ab\ncd\n", 4) → "ab\n". When no line
// ends within `max_bytes` (a line break as the very first byte does not count), a hard cut that
// does not split a UTF-8 character: PrefixAtLineBreak("abcdef\n", 3) → "abc". `text` if it fits.
std::string PrefixAtLineBreak(const std::string& text, std::size_t max_bytes);

// The first line of `text` that holds more than whitespace, without the whitespace around it;
// "" when there is none: FirstNonBlankLine("\n  \n  ok 1\nmore") → "ok 1".
std::string FirstNonBlankLine(std::string_view text);

// `text` cut to at most `max_bytes` bytes (at least 4) without splitting a UTF-8 character,
// ending in "..." when it was cut: ShortenText("abcdefgh", 6) → "abc...".
std::string ShortenText(std::string text, std::size_t max_bytes);

// `text` on one line (CollapseWhitespace), then cut to at most `max_bytes` bytes without
// splitting a UTF-8 character, with "..." appended when it was cut: unlike ShortenText the limit
// does not count the "...", so the result has up to max_bytes + 3 bytes.
// OneLineExcerpt("a\n  b c", 3) → "a b...". For quoting compiler output inside a message.
std::string OneLineExcerpt(std::string_view text, std::size_t max_bytes);

// `value` with `digits` decimals: FormatFixed(1.8449, 2) → "1.84".
std::string FormatFixed(double value, int digits = 2);
// A size in GiB (2^30 bytes) with `digits` decimals, without the unit: FormatGib(3 << 30, 1) →
// "3.0".
std::string FormatGib(long long bytes, int digits);

// `value` with an SI prefix and `unit`: FormatSi(17179869184, "FLOP") → "17.18 GFLOP".
std::string FormatSi(double value, const std::string& unit);
// `value` scaled by 1000s until its magnitude is below `limit`, and the SI prefix that scaling
// stands for ("", "k", "M", "G", "T", "P"): the number and prefix FormatSi writes.
std::pair<double, const char*> SiScaled(double value, double limit = 1000);

// A duration for people: 0.0337 → "33.700 ms", 3.37e-5 → "33.7 us", 4e-8 → "40.0 ns".
std::string FormatDuration(double seconds);

// The last line of `text` that trailing newlines leave: what a failed program said last.
std::string LastLine(std::string_view text);

// `text` as a sentence: its first letter upper case and a final '.', unless it has one. "" stays.
std::string AsSentence(std::string text);

// `value` in at most `significant` significant digits, as printf's %g writes it: 0.33, 25, 1e-05,
// 4.823e+07 (with 4).
std::string FormatSignificant(double value, int significant = 6);

}  // namespace kernelpro
