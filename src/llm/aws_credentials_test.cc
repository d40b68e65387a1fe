// Finding AWS keys the way the AWS CLI does: the environment, then the shared credentials file
// and the config file, with a fake environment and temporary files so the real ones never matter.
#include "llm/aws_credentials.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace kernelpro::llm {
namespace llm_aws_credentials_test {

namespace fs = std::filesystem;

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

class AwsCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kernelpro-aws-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / ".aws");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& relative, const std::string& text) {
    fs::path path = dir_ / relative;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }
  std::string Home() const { return dir_.string(); }

  fs::path dir_;
};

const char kCredentialsFile[] =
    "# written by aws configure\n"
    "[default]\n"
    "aws_access_key_id = AKIDDEFAULT\n"
    "aws_secret_access_key = secret/default+key\n"
    "\n"
    "  [ work ]  \r\n"
    "; a comment with = in it\r\n"
    "AWS_Access_Key_Id=AKIDWORK\r\n"
    "aws_secret_access_key   =   secret-work   \r\n"
    "aws_session_token = token-work\r\n"
    "s3 =\r\n"
    "    aws_access_key_id = AKIDNESTED\r\n"
    "[half]\n"
    "aws_access_key_id = AKIDHALF\n";

TEST_F(AwsCredentialsTest, EnvironmentKeysComeFirst) {
  Write(".aws/credentials", kCredentialsFile);
  auto c = LoadAwsCredentials("", FakeEnv({{"AWS_ACCESS_KEY_ID", "AKIDENV"},
                                           {"AWS_SECRET_ACCESS_KEY", "secret-env"},
                                           {"AWS_SESSION_TOKEN", "token-env"},
                                           {"AWS_PROFILE", "work"},
                                           {"HOME", Home()}}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "AKIDENV");
  EXPECT_EQ(c->secret_access_key, "secret-env");
  EXPECT_EQ(c->session_token, "token-env");
}

TEST_F(AwsCredentialsTest, AProfileAskedForByNameWinsOverTheEnvironment) {
  Write(".aws/credentials", kCredentialsFile);
  auto c = LoadAwsCredentials("work", FakeEnv({{"AWS_ACCESS_KEY_ID", "AKIDENV"},
                                               {"AWS_SECRET_ACCESS_KEY", "secret-env"},
                                               {"HOME", Home()}}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  // Section and key names tolerate spaces, case and CRLF; the nested "s3 =" block is not read.
  EXPECT_EQ(c->access_key_id, "AKIDWORK");
  EXPECT_EQ(c->secret_access_key, "secret-work");
  EXPECT_EQ(c->session_token, "token-work");
}

TEST_F(AwsCredentialsTest, ProfileFromAwsProfileElseDefault) {
  std::string file = Write("creds", kCredentialsFile);
  auto work = LoadAwsCredentials(
      "", FakeEnv({{"AWS_SHARED_CREDENTIALS_FILE", file}, {"AWS_PROFILE", "work"}}));
  ASSERT_TRUE(work.ok()) << work.status().ToString();
  EXPECT_EQ(work->access_key_id, "AKIDWORK");
  auto fallback = LoadAwsCredentials("", FakeEnv({{"AWS_SHARED_CREDENTIALS_FILE", file}}));
  ASSERT_TRUE(fallback.ok()) << fallback.status().ToString();
  EXPECT_EQ(fallback->access_key_id, "AKIDDEFAULT");
  EXPECT_EQ(fallback->secret_access_key, "secret/default+key");
  EXPECT_EQ(fallback->session_token, "");
}

TEST_F(AwsCredentialsTest, KeysInTheConfigFileCountToo) {
  Write(".aws/config",
        "[profile ci]\nregion = us-west-2\naws_access_key_id = AKIDCI\n"
        "aws_secret_access_key = secret-ci\n");
  auto c = LoadAwsCredentials("ci", FakeEnv({{"HOME", Home()}}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "AKIDCI");
}

TEST_F(AwsCredentialsTest, AMissingProfileNamesWhereItLookedAndLeaksNoSecret) {
  std::string file = Write("creds", kCredentialsFile);
  auto c = LoadAwsCredentials("prod", FakeEnv({{"AWS_SHARED_CREDENTIALS_FILE", file},
                                               {"AWS_CONFIG_FILE", Home() + "/absent-config"}}));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Status::Code::kNotFound);
  const std::string& m = c.status().message();
  EXPECT_NE(m.find("'prod'"), std::string::npos) << m;
  EXPECT_NE(m.find(file), std::string::npos) << m;
  EXPECT_NE(m.find("default, half, work"), std::string::npos) << m;
  EXPECT_NE(m.find("absent-config"), std::string::npos) << m;
  EXPECT_EQ(m.find("secret"), std::string::npos) << m;
}

TEST_F(AwsCredentialsTest, NothingAnywhereSaysWhatWasTried) {
  auto c = LoadAwsCredentials("", FakeEnv({{"HOME", Home() + "/nobody"}}));
  ASSERT_FALSE(c.ok());
  const std::string& m = c.status().message();
  EXPECT_NE(m.find("AWS_ACCESS_KEY_ID"), std::string::npos) << m;
  EXPECT_NE(m.find(Home() + "/nobody/.aws/credentials"), std::string::npos) << m;
  EXPECT_NE(m.find("'default'"), std::string::npos) << m;

  auto no_home = LoadAwsCredentials("", FakeEnv({}));
  ASSERT_FALSE(no_home.ok());
  EXPECT_NE(no_home.status().message().find("HOME"), std::string::npos);
}

TEST_F(AwsCredentialsTest, HalfConfiguredKeysAreAnErrorNotASilentFallback) {
  std::string file = Write("creds", kCredentialsFile);
  auto env = LoadAwsCredentials(
      "", FakeEnv({{"AWS_ACCESS_KEY_ID", "AKIDENV"}, {"AWS_SHARED_CREDENTIALS_FILE", file}}));
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(env.status().message().find("AWS_SECRET_ACCESS_KEY is not"), std::string::npos);

  auto half = LoadAwsCredentials("half", FakeEnv({{"AWS_SHARED_CREDENTIALS_FILE", file}}));
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.status().message().find("no aws_secret_access_key"), std::string::npos)
      << half.status().message();
}

TEST_F(AwsCredentialsTest, SsoAndRoleProfilesAreReportedAsUnsupported) {
  Write(".aws/config",
        "[profile sso]\nsso_session = corp\nsso_account_id = 123\n[sso-session corp]\n"
        "sso_start_url = https://corp.awsapps.com/start\n");
  auto c = LoadAwsCredentials("sso", FakeEnv({{"HOME", Home()}}));
  ASSERT_FALSE(c.ok());
  const std::string& m = c.status().message();
  EXPECT_NE(m.find("sso_session"), std::string::npos) << m;
  EXPECT_NE(m.find("aws configure export-credentials --profile sso"), std::string::npos) << m;
}

}  // namespace llm_aws_credentials_test
}  // namespace kernelpro::llm
