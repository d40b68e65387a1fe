#include "core/text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kernelpro {
namespace core_text_test {

TEST(CaseTest, OnlyAsciiLettersChange) {
  EXPECT_EQ(Lower("NVIDIA A100-SXM4"), "nvidia a100-sxm4");
  EXPECT_EQ(Upper("warning: x1"), "WARNING: X1");
  EXPECT_EQ(Lower("\xC3\x89T\xC3\x89"), "\xC3\x89t\xC3\x89");  // ÉTÉ: only the T changes
  EXPECT_EQ(Lower(""), "");
}

TEST(CaseTest, EqualsIgnoreCaseComparesLetterByLetter) {
  EXPECT_TRUE(EqualsIgnoreCase("Content-Type", "content-type"));
  EXPECT_FALSE(EqualsIgnoreCase("Content-Type", "content-typ"));
  EXPECT_FALSE(EqualsIgnoreCase("a-b", "a_b"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
}

TEST(TrimTest, RemovesAsciiWhitespaceAtTheEndsOnly) {
  EXPECT_EQ(Trim(" \t a b \r\n\f\v"), "a b");
  EXPECT_EQ(TrimLeft("  a  "), "a  ");
  EXPECT_EQ(TrimRight("  a  "), "  a");
  EXPECT_EQ(Trim(" \n "), "");
  EXPECT_EQ(Trim(""), "");
  EXPECT_TRUE(IsAsciiSpace('\v'));
  EXPECT_FALSE(IsAsciiSpace('\0'));
}

TEST(ContainsTest, FindsAPartAnywhere) {
  EXPECT_TRUE(Contains("load_inline(cuda_sources=...)", "cuda_sources"));
  EXPECT_FALSE(Contains("load_inline", "cuda"));
  EXPECT_TRUE(Contains("anything", ""));
}

TEST(JoinTest, PutsTheSeparatorBetweenItems) {
  EXPECT_EQ(Join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(Join({"only"}, ", "), "only");
  EXPECT_EQ(Join({}, ", "), "");
  EXPECT_EQ(Join({"", "b"}, ";"), ";b");
}

TEST(SplitTest, KeepsEmptyPieces) {
  EXPECT_EQ(Split("syntax\t3\tinvalid syntax", '\t'),
            (std::vector<std::string>{"syntax", "3", "invalid syntax"}));
  EXPECT_EQ(Split("a,,b,", ','), (std::vector<std::string>{"a", "", "b", ""}));
  EXPECT_EQ(Split("", ','), (std::vector<std::string>{""}));
}

TEST(SplitLinesTest, AFinalLineBreakStartsNoEmptyLine) {
  EXPECT_EQ(SplitLines("a\n\nb\n"), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(SplitLines("crlf\r\nfile"), (std::vector<std::string>{"crlf", "file"}));
  EXPECT_EQ(SplitLines("\n"), (std::vector<std::string>{""}));
  EXPECT_TRUE(SplitLines("").empty());
}

TEST(CollapseWhitespaceTest, RunsBecomeOneSpaceAndTheEndsAreTrimmed) {
  EXPECT_EQ(CollapseWhitespace("  a \n\t b  "), "a b");
  EXPECT_EQ(CollapseWhitespace("line one\r\n  continued"), "line one continued");
  EXPECT_EQ(CollapseWhitespace("\f\v"), "");
  EXPECT_EQ(CollapseWhitespace(""), "");
  EXPECT_EQ(CollapseWhitespace("unchanged"), "unchanged");
}

TEST(Utf8PrefixTest, NeverSplitsACharacter) {
  const std::string quoted =
      "a \xE2\x80\x98"
      "b\xE2\x80\x99";  // a ‘b’
  EXPECT_EQ(Utf8Prefix(quoted, 100), quoted.size());
  EXPECT_EQ(Utf8Prefix(quoted, 2), 2u);
  EXPECT_EQ(Utf8Prefix(quoted, 3), 2u);  // inside ‘: back to its first byte
  EXPECT_EQ(Utf8Prefix(quoted, 4), 2u);
  EXPECT_EQ(Utf8Prefix(quoted, 5), 5u);
  EXPECT_EQ(Utf8Prefix("", 0), 0u);
}

TEST(ShortenTextTest, CutsAtACharacterBoundaryAndSaysSo) {
  EXPECT_EQ(ShortenText("abcdefgh", 8), "abcdefgh");
  EXPECT_EQ(ShortenText("abcdefgh", 6), "abc...");
  const std::string quoted =
      "a \xE2\x80\x98"
      "b\xE2\x80\x99";                         // a ‘b’ (8 bytes)
  EXPECT_EQ(ShortenText(quoted, 7), "a ...");  // never half of ‘
}

TEST(OneLineExcerptTest, CollapsesWhitespaceThenCutsBeforeTheEllipsis) {
  EXPECT_EQ(OneLineExcerpt("  a\n\t b  ", 10), "a b");
  EXPECT_EQ(OneLineExcerpt("a\n  b c", 5), "a b c");  // fits once collapsed
  EXPECT_EQ(OneLineExcerpt("a\n  b c", 3), "a b...");
  EXPECT_EQ(OneLineExcerpt("abcd", 3), "abc...");  // the limit does not count the "..."
  const std::string quoted =
      "a \xE2\x80\x98"
      "b\xE2\x80\x99";                            // a ‘b’ (8 bytes)
  EXPECT_EQ(OneLineExcerpt(quoted, 4), "a ...");  // never half of ‘
  EXPECT_EQ(OneLineExcerpt("", 0), "");
}

TEST(PrefixAtLineBreakTest, KeepsWholeLinesElseCutsHard) {
  EXPECT_EQ(PrefixAtLineBreak("ab\ncd\n", 6), "ab\ncd\n");
  EXPECT_EQ(PrefixAtLineBreak("ab\ncd\n", 5), "ab\n");
  EXPECT_EQ(PrefixAtLineBreak("ab\ncd\n", 3), "ab\n");
  EXPECT_EQ(PrefixAtLineBreak("ab\ncd\n", 2), "ab");       // no line ends within 2 bytes
  EXPECT_EQ(PrefixAtLineBreak("\nabcdef\n", 4), "\nabc");  // a leading break does not count
  EXPECT_EQ(PrefixAtLineBreak("abcdef", 0), "");
  const std::string quoted =
      "a \xE2\x80\x98"
      "b\xE2\x80\x99\n";                          // a ‘b’ and a line break
  EXPECT_EQ(PrefixAtLineBreak(quoted, 4), "a ");  // never half of ‘
}

TEST(FirstNonBlankLineTest, SkipsBlankLinesAndTrims) {
  EXPECT_EQ(FirstNonBlankLine("\n  \t\n  ok 1 \r\nmore\n"), "ok 1");
  EXPECT_EQ(FirstNonBlankLine("g++ (Debian 12.2.0-14) 12.2.0"), "g++ (Debian 12.2.0-14) 12.2.0");
  EXPECT_EQ(FirstNonBlankLine(" \n\t\n"), "");
  EXPECT_EQ(FirstNonBlankLine(""), "");
}

TEST(FormatFixedTest, RoundsToTheGivenDecimals) {
  EXPECT_EQ(FormatFixed(1.8449), "1.84");
  EXPECT_EQ(FormatFixed(1.845, 1), "1.8");
  EXPECT_EQ(FormatFixed(95.0, 0), "95");
  EXPECT_EQ(FormatFixed(0.00004, 4), "0.0000");
}

TEST(FormatGibTest, BytesInGibibytesWithTheGivenDecimals) {
  EXPECT_EQ(FormatGib(3LL << 30, 1), "3.0");
  EXPECT_EQ(FormatGib(43415240704, 2), "40.43");  // not 43.42: 2^30, not 10^9
  EXPECT_EQ(FormatGib(0, 1), "0.0");
}

TEST(FormatSignificantTest, WritesWhatPrintfsGWrites) {
  EXPECT_EQ(FormatSignificant(0.33), "0.33");
  EXPECT_EQ(FormatSignificant(25), "25");
  EXPECT_EQ(FormatSignificant(1e-5), "1e-05");
  EXPECT_EQ(FormatSignificant(48229312, 4), "4.823e+07");
}

TEST(TextTest, LastLineIsWhatAProgramSaidLast) {
  EXPECT_EQ(LastLine("building...\nerror: no such file\n\n"), "error: no such file");
  EXPECT_EQ(LastLine("one line"), "one line");
  EXPECT_EQ(LastLine(""), "");
}

TEST(TextTest, AsSentenceCapitalisesAndEndsWithAPeriod) {
  EXPECT_EQ(AsSentence("ncu agrees with the roofline"), "Ncu agrees with the roofline.");
  EXPECT_EQ(AsSentence("Already one."), "Already one.");
  EXPECT_EQ(AsSentence(""), "");
}

}  // namespace core_text_test
}  // namespace kernelpro
