#include "profile/csv_record.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace kernelpro::profile {
namespace profile_csv_record_test {

TEST(CsvRecordTest, SplitterFollowsRfc4180) {
  std::vector<std::vector<std::string>> records =
      SplitCsv("a,\"b,c\",\"d\"\"e\"\r\n\n\"multi\nline\",,x\"y\nlast");
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0], (std::vector<std::string>{"a", "b,c", "d\"e"}));
  EXPECT_EQ(records[1], (std::vector<std::string>{"multi\nline", "", "x\"y"}));
  EXPECT_EQ(records[2], (std::vector<std::string>{"last"}));

  std::size_t pos = 0;
  CsvRecord record;
  std::string_view truncated = "\"1\",\"2,3";
  ASSERT_TRUE(NextCsvRecord(truncated, &pos, &record));
  EXPECT_FALSE(record.complete);
  EXPECT_EQ(record.fields, (std::vector<std::string>{"1", "2,3"}));
  EXPECT_EQ(pos, truncated.size());
  EXPECT_FALSE(NextCsvRecord(truncated, &pos, &record));
}

// A record read line by line ends where NextCsvRecord would end it.
TEST(CsvRecordTest, EndsInsideQuotesFollowsARecordAcrossLines) {
  CsvQuoteState state;
  EXPECT_FALSE(EndsInsideQuotes("a,\"b,c\",\"d\"\"e\"", &state));

  state = {};
  EXPECT_TRUE(EndsInsideQuotes("\"multi", &state));  // a quoted field holds a line break
  EXPECT_TRUE(EndsInsideQuotes("still \"\" quoted, here", &state));
  EXPECT_FALSE(EndsInsideQuotes("line\",,x", &state));

  state = {};
  EXPECT_FALSE(EndsInsideQuotes("x\"y", &state));  // a quote inside an unquoted field is text

  state = {};
  EXPECT_TRUE(EndsInsideQuotes("\"1\",\"2,3", &state));  // truncated: never closed
}

TEST(CsvRecordTest, LineSourcesGiveTheSameLinesWithoutLineBreaks) {
  const std::string text = "a,b\r\n\n\"c\nd\"\nlast";
  const std::vector<std::string> expected = {"a,b", "", "\"c", "d\"", "last"};
  auto read_all = [](LineSource& source) {
    std::vector<std::string> lines;
    std::string_view line;
    while (source.Next(&line)) lines.emplace_back(line);
    return lines;
  };
  TextLineSource in_memory(text);
  EXPECT_EQ(read_all(in_memory), expected);
  std::istringstream stream(text);
  StreamLineSource streamed(stream);
  EXPECT_EQ(read_all(streamed), expected);

  TextLineSource empty("");
  std::string_view line;
  EXPECT_FALSE(empty.Next(&line));
}

}  // namespace profile_csv_record_test
}  // namespace kernelpro::profile
