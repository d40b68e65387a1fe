// Where a key may go: https anywhere, plain http only to this machine, unless a profile vouches for
// the URL. The host is the URL's real host, not a prefix of it.
#include "llm/key_policy.h"

#include <gtest/gtest.h>

namespace kernelpro::llm {
namespace llm_key_policy_test {

TEST(KeyPolicyTest, LoopbackHostsAreLocalhostAnd127And1) {
  for (const char* host : {"localhost", "LocalHost", "localhost.", "127.0.0.1", "127.5.6.7",
                           "[::1]", "::1", "[::ffff:127.0.0.1]"}) {
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  }
  for (const char* host :
       {"192.0.2.10", "128.0.0.1", "127.0.0.1.example.com", "localhost.example.com", "[::2]",
        "example.com", "", "[::ffff:10.0.0.1]"}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  }
}

TEST(KeyPolicyTest, HttpsAndLoopbackHttpMayCarryAKey) {
  for (const char* url :
       {"https://api.openai.com/v1", "https://192.0.2.10:8443/v1", "http://127.0.0.1:8080/v1",
        "http://localhost:11434/v1", "http://[::1]:8000", "HTTP://LOCALHOST:8000/v1"}) {
    EXPECT_TRUE(CheckKeyDestination(url, "OPENAI_API_KEY", false).ok()) << url;
  }
}

TEST(KeyPolicyTest, PlainHttpElsewhereIsRefusedWithTheRule) {
  Status refused = CheckKeyDestination("http://192.0.2.10:8000/v1", "OPENAI_API_KEY", false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(),
            "refusing to send OPENAI_API_KEY over plain http to http://192.0.2.10:8000/v1: use "
            "https, a loopback address (127.0.0.1, ::1, localhost), or name this base_url in an "
            "--llm-config profile with allow_insecure_key = true");
  // A loopback address as the user name is not a loopback host, and the password is not echoed.
  Status userinfo =
      CheckKeyDestination("http://127.0.0.1:secret@evil.example:80/v1", "ANTHROPIC_API_KEY", false);
  ASSERT_FALSE(userinfo.ok());
  EXPECT_EQ(userinfo.message().find("secret"), std::string::npos) << userinfo.message();
  EXPECT_NE(userinfo.message().find("http://evil.example:80/v1"), std::string::npos)
      << userinfo.message();
  EXPECT_FALSE(CheckKeyDestination("http://127.0.0.1.nip.io/v1", "K", false).ok());
  EXPECT_FALSE(CheckKeyDestination("ftp://127.0.0.1/v1", "K", false).ok());
  EXPECT_FALSE(CheckKeyDestination("not a url", "K", false).ok());
}

TEST(KeyPolicyTest, AProfileCanVouchForItsPlainHttpUrl) {
  EXPECT_TRUE(CheckKeyDestination("http://192.0.2.10:8000/v1", "LAB_KEY", true).ok());
  EXPECT_FALSE(CheckKeyDestination("ftp://192.0.2.10/v1", "LAB_KEY", true).ok())
      << "only http is vouched for";
}

}  // namespace llm_key_policy_test
}  // namespace kernelpro::llm
