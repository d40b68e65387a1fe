#include "eval/precompiled_headers.h"

#include <gtest/gtest.h>

namespace kernelpro {
namespace {

TEST(PrecompiledHeadersTest, AnOkResultIsOfferedToBuildRequests) {
  Json result = {{"status", "ok"},
                 {"pch_dir", "/cache/pch"},
                 {"pch_manifest", {{"abc/kp_torch_extension.h.gch", "00ff"}}},
                 {"entries", Json::array({{{"key", "abc"}, {"cached", true}},
                                          {{"variant", {{"extra_cflags", {"-O3"}}}},
                                           {"error", "g++ failed"}}})}};
  auto headers = PrecompiledHeadersFromResult(result);
  ASSERT_TRUE(headers.ok()) << headers.status().ToString();
  Json request = {{"candidate", "/runs/c.py"}};
  OfferPrecompiledHeaders(*headers, request);
  EXPECT_EQ(request["pch_dir"], "/cache/pch");
  EXPECT_EQ(request["pch_manifest"]["abc/kp_torch_extension.h.gch"], "00ff");
  ASSERT_EQ(headers->notes.size(), 1u);
  EXPECT_NE(headers->notes[0].find("g++ failed"), std::string::npos);
}

TEST(PrecompiledHeadersTest, NothingIsOfferedWhenNoHeaderWasMade) {
  auto headers = PrecompiledHeadersFromResult(
      {{"status", "ok"}, {"pch_dir", "/cache/pch"}, {"pch_manifest", Json::object()}});
  ASSERT_TRUE(headers.ok());
  Json request = Json::object();
  OfferPrecompiledHeaders(*headers, request);
  EXPECT_FALSE(request.contains("pch_dir"));
  EXPECT_FALSE(request.contains("pch_manifest"));
}

TEST(PrecompiledHeadersTest, AFailedStepIsAnErrorNotAnOffer) {
  auto headers = PrecompiledHeadersFromResult({{"status", "worker_error"}, {"message", "boom"}});
  ASSERT_FALSE(headers.ok());
  EXPECT_NE(headers.status().message().find("boom"), std::string::npos);
}

}  // namespace
}  // namespace kernelpro
