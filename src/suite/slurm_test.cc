#include "suite/slurm.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/text.h"

namespace kernelpro::suite {
namespace suite_slurm_test {

namespace fs = std::filesystem;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A folder of fake Slurm commands put first on PATH for the test's lifetime. Each fake records its
// argv (one argument a line) in <name>.argv, prints the given stdout and stderr and exits with the
// given code.
class FakeSlurm {
 public:
  explicit FakeSlurm(const std::string& name)
      : dir_((fs::path(::testing::TempDir()) / ("slurm_test_" + name)).lexically_normal().string()),
        old_path_(getenv("PATH")) {
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/bin");
    // Only the fakes (they name what they run by its full path): a real sbatch on this machine
    // must not answer.
    setenv("PATH", (dir_ + "/bin").c_str(), 1);
  }
  ~FakeSlurm() { setenv("PATH", old_path_.c_str(), 1); }

  void Install(const std::string& tool, const std::string& out, const std::string& err = "",
               int exit_code = 0) {
    std::ofstream(dir_ + "/" + tool + ".stdout") << out;
    std::ofstream(dir_ + "/" + tool + ".stderr") << err;
    const std::string path = dir_ + "/bin/" + tool;
    std::ofstream(path) << "#!/bin/sh\n"
                        << "printf '%s\\n' \"$@\" > '" << dir_ << "/" << tool << ".argv'\n"
                        << "/bin/cat '" << dir_ << "/" << tool << ".stdout'\n"
                        << "/bin/cat '" << dir_ << "/" << tool << ".stderr' >&2\n"
                        << "exit " << exit_code << "\n";
    chmod(path.c_str(), 0755);
  }
  void Remove(const std::string& tool) { fs::remove(dir_ + "/bin/" + tool); }
  // The argv the fake last saw, without argv[0]; empty when it never ran.
  std::vector<std::string> Argv(const std::string& tool) const {
    if (!fs::exists(dir_ + "/" + tool + ".argv")) return {};
    return SplitLines(ReadText(dir_ + "/" + tool + ".argv"));
  }
  std::string SuiteDir() const { return dir_ + "/suite"; }

 private:
  std::string dir_;
  std::string old_path_;
};

TEST(SplitShellWordsTest, SplitsLikeAShell) {
  auto words = SplitShellWords(
      "  --partition=gpu --gres=gpu:1\t--time=2:00:00 --comment='two words' "
      "--job-name=\"a \\\"b\\\"\" back\\ slash --empty=''");
  ASSERT_TRUE(words.ok()) << words.status().ToString();
  EXPECT_EQ(*words, (std::vector<std::string>{"--partition=gpu", "--gres=gpu:1", "--time=2:00:00",
                                              "--comment=two words", "--job-name=a \"b\"",
                                              "back slash", "--empty="}));
  EXPECT_TRUE(SplitShellWords("   ")->empty());
}

TEST(SplitShellWordsTest, RefusesUnbalancedQuotes) {
  auto single = SplitShellWords("--partition='gpu");
  ASSERT_FALSE(single.ok());
  EXPECT_EQ(single.status().message(),
            "--slurm options have an unbalanced ' quote: --partition='gpu");
  auto dbl = SplitShellWords("--comment=\"x");
  ASSERT_FALSE(dbl.ok());
  EXPECT_TRUE(Contains(dbl.status().message(), "unbalanced \" quote"));
  EXPECT_FALSE(SplitShellWords("--x=a\\").ok());
}

TEST(ShellQuoteTest, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(ShellQuote("/opt/kernelpro/bin/kernelpro"), "/opt/kernelpro/bin/kernelpro");
  EXPECT_EQ(ShellQuote("my suite"), "'my suite'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
}

TEST(ArraySpecTest, RangesAndLists) {
  EXPECT_EQ(ArraySpec({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(ArraySpec({5, 0, 3}), "0,3,5");
  EXPECT_EQ(ArraySpec({0, 1, 2, 5, 2}), "0-2,5");
  EXPECT_EQ(ArraySpec({4}), "4");
  EXPECT_EQ(*ParseArraySpec("0-2,5"), (std::vector<int>{0, 1, 2, 5}));
  EXPECT_EQ(*ParseArraySpec("[3-5%2]"), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(*ParseArraySpec("7"), (std::vector<int>{7}));
  EXPECT_FALSE(ParseArraySpec("3-1").ok());
  EXPECT_FALSE(ParseArraySpec("a,b").ok());
  EXPECT_FALSE(ParseArraySpec("").ok());
}

TEST(SubmitSlurmArrayTest, WritesTheScriptRunsSbatchAndRecordsTheSubmission) {
  FakeSlurm slurm("submit");
  slurm.Install("sbatch", "4711\n");
  SlurmArrayRequest request;
  request.suite_dir = slurm.SuiteDir();
  request.kernelpro_binary = "/opt/kp/bin/kernelpro";
  request.shards = 4;
  request.sbatch_options = "--partition=gpu --gres=gpu:1 --comment='nightly run'";
  request.run_args = {"--gpus", "0,1"};

  auto submission = SubmitSlurmArray(request);
  ASSERT_TRUE(submission.ok()) << submission.status().ToString();
  EXPECT_EQ(submission->job_id, "4711");
  EXPECT_EQ(submission->array_spec, "0-3");
  const std::string suite = slurm.SuiteDir();
  const std::string script = suite + "/slurm/job-1.sh";
  EXPECT_EQ(submission->script, script);

  EXPECT_EQ(ReadText(script),
            "#!/bin/bash\n"
            "# Written by kernelpro: one Slurm array task = one shard of the suite.\n"
            "#SBATCH --array=0-3\n"
            "#SBATCH --output=" +
                suite +
                "/slurm/slurm-%A_%a.out\n"
                "#SBATCH --job-name=kernelpro-suite\n"
                "exec /opt/kp/bin/kernelpro suite run " +
                suite + " --shard \"$SLURM_ARRAY_TASK_ID\" --shards 4 --gpus 0,1\n");
  EXPECT_EQ(slurm.Argv("sbatch"),
            (std::vector<std::string>{"--parsable", "--partition=gpu", "--gres=gpu:1",
                                      "--comment=nightly run", script}));

  const std::vector<std::string> lines = SplitLines(ReadText(suite + "/slurm/submissions.jsonl"));
  ASSERT_EQ(lines.size(), 1u);
  const Json line = Json::parse(lines[0]);
  EXPECT_EQ(line["job_id"], "4711");
  EXPECT_EQ(line["shards"], 4);
  EXPECT_EQ(line["array"], "0-3");
  EXPECT_EQ(line["sbatch_args"],
            Json::array({"--partition=gpu", "--gres=gpu:1", "--comment=nightly run"}));
  EXPECT_EQ(line["script"], script);
  EXPECT_EQ(line["submitted_at"].get<std::string>().size(),
            std::string("2026-05-01T12:00:00Z").size());
}

TEST(SubmitSlurmArrayTest, AResubmissionRunsOnlyTheGivenShardsInANewScript) {
  FakeSlurm slurm("resubmit");
  slurm.Install("sbatch", "4711\n");
  SlurmArrayRequest request;
  request.suite_dir = slurm.SuiteDir();
  request.kernelpro_binary = "/opt/kp/bin/kernelpro";
  request.shards = 6;
  ASSERT_TRUE(SubmitSlurmArray(request).ok());
  // A federated cluster prints "<id>;<cluster>".
  slurm.Install("sbatch", "sbatch: warning: something\n4712;west\n");
  request.only_shards = {5, 0, 3};
  auto again = SubmitSlurmArray(request);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->job_id, "4712");
  EXPECT_EQ(again->array_spec, "0,3,5");
  EXPECT_EQ(again->script, slurm.SuiteDir() + "/slurm/job-2.sh");
  EXPECT_TRUE(Contains(ReadText(again->script), "#SBATCH --array=0,3,5\n"));
  EXPECT_TRUE(Contains(ReadText(again->script), "--shards 6\n"));
  EXPECT_EQ(slurm.Argv("sbatch"), (std::vector<std::string>{"--parsable", again->script}));

  auto recorded = ReadSlurmSubmissions(slurm.SuiteDir());
  ASSERT_TRUE(recorded.ok());
  ASSERT_EQ(recorded->size(), 2u);
  EXPECT_EQ((*recorded)[0].job_id, "4711");
  EXPECT_EQ((*recorded)[0].array_spec, "0-5");
  EXPECT_EQ((*recorded)[1].job_id, "4712");
  EXPECT_EQ((*recorded)[1].shards, 6);
}

TEST(SubmitSlurmArrayTest, ClearErrors) {
  FakeSlurm slurm("errors");
  SlurmArrayRequest request;
  request.suite_dir = slurm.SuiteDir();
  request.kernelpro_binary = "/opt/kp/bin/kernelpro";
  request.shards = 2;

  auto missing = SubmitSlurmArray(request);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "Slurm's sbatch is not on PATH; install slurm-wlm or drop --slurm");

  slurm.Install("sbatch", "",
                "sbatch: error: invalid partition specified: gpu\n"
                "sbatch: error: Batch job submission failed: Invalid partition name specified\n",
                1);
  auto refused = SubmitSlurmArray(request);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "sbatch refused the job array: sbatch: error: invalid partition specified: gpu; "
            "sbatch: error: Batch job submission failed: Invalid partition name specified "
            "(exit 1)");

  slurm.Install("sbatch", "Submitted batch job 12\n");
  auto unparsable = SubmitSlurmArray(request);
  ASSERT_FALSE(unparsable.ok());
  EXPECT_TRUE(Contains(unparsable.status().message(), "Submitted batch job 12"));

  request.sbatch_options = "--partition=gpu --array=0-9";
  auto array = SubmitSlurmArray(request);
  ASSERT_FALSE(array.ok());
  EXPECT_EQ(array.status().message(),
            "--slurm must not set --array=0-9: kernelpro sets the job array from --shards");

  request.sbatch_options = "--comment='x";
  EXPECT_EQ(SubmitSlurmArray(request).status().code(), Status::Code::kInvalidArgument);

  request.sbatch_options = "";
  request.only_shards = {2};
  EXPECT_EQ(SubmitSlurmArray(request).status().message(), "shard 2 is not in 0..1");

  // Nothing was recorded for the failed submissions, and their scripts are gone.
  EXPECT_TRUE(ReadSlurmSubmissions(slurm.SuiteDir())->empty());
  EXPECT_FALSE(fs::exists(slurm.SuiteDir() + "/slurm/job-1.sh"));
}

SlurmSubmission Submitted(const std::string& job_id, const std::string& array_spec) {
  SlurmSubmission submission;
  submission.job_id = job_id;
  submission.array_spec = array_spec;
  return submission;
}

TEST(QuerySlurmArrayStatesTest, LiveTasksFromSqueueFinishedOnesFromSacct) {
  FakeSlurm slurm("query");
  slurm.Install("squeue", "90_[4-5]|PENDING\n90_1|RUNNING\n91_0|RUNNING\n");
  slurm.Install("sacct", "90_0|COMPLETED\n90_1|RUNNING\n90_2|CANCELLED by 0\n90_3|PREEMPTED\n");
  auto states = QuerySlurmArrayStates(Submitted("90", "0-6"));
  ASSERT_TRUE(states.ok()) << states.status().ToString();
  EXPECT_EQ(*states, (std::map<int, std::string>{{0, "COMPLETED"},
                                                 {1, "RUNNING"},
                                                 {2, "CANCELLED"},
                                                 {3, "PREEMPTED"},
                                                 {4, "PENDING"},
                                                 {5, "PENDING"},
                                                 {6, "gone"}}));
  EXPECT_EQ(slurm.Argv("squeue"),
            (std::vector<std::string>{"-h", "-t", "all", "-j", "90", "-r", "-o", "%i|%T"}));
  EXPECT_EQ(slurm.Argv("sacct"),
            (std::vector<std::string>{"-n", "-P", "-X", "-j", "90", "-o", "JobID,State"}));
}

TEST(QuerySlurmArrayStatesTest, WithoutAccountingFinishedTasksAreGone) {
  FakeSlurm slurm("noacct");
  slurm.Install("squeue", "", "slurm_load_jobs error: Invalid job id specified\n", 1);
  slurm.Install("sacct", "", "Slurm accounting storage is disabled\n", 1);
  auto states = QuerySlurmArrayStates(Submitted("92", "0,3"));
  ASSERT_TRUE(states.ok()) << states.status().ToString();
  EXPECT_EQ(*states, (std::map<int, std::string>{{0, "gone"}, {3, "gone"}}));

  // sacct need not exist at all.
  slurm.Install("squeue", "92_3|TIMEOUT\n");
  slurm.Remove("sacct");
  states = QuerySlurmArrayStates(Submitted("92", "0,3"));
  ASSERT_TRUE(states.ok());
  EXPECT_EQ(*states, (std::map<int, std::string>{{0, "gone"}, {3, "TIMEOUT"}}));
}

TEST(QuerySlurmArrayStatesTest, SqueueTroubleIsAnError) {
  FakeSlurm slurm("squeuefail");
  auto missing = QuerySlurmArrayStates(Submitted("93", "0"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "Slurm's squeue is not on PATH; install slurm-wlm or drop --slurm");
  slurm.Install("squeue", "", "squeue: error: Unable to contact slurm controller\n", 1);
  auto down = QuerySlurmArrayStates(Submitted("93", "0"));
  ASSERT_FALSE(down.ok());
  EXPECT_TRUE(Contains(down.status().message(), "Unable to contact slurm controller"));
}

TEST(ActiveSlurmShardsTest, ShardsStillQueuedInAnySubmission) {
  FakeSlurm slurm("active");
  slurm.Install("sbatch", "50\n");
  SlurmArrayRequest request;
  request.suite_dir = slurm.SuiteDir();
  request.kernelpro_binary = "/opt/kp/bin/kernelpro";
  request.shards = 4;
  ASSERT_TRUE(SubmitSlurmArray(request).ok());
  slurm.Install("sbatch", "51\n");
  request.only_shards = {1, 3};
  ASSERT_TRUE(SubmitSlurmArray(request).ok());
  // The first array: 0 done, 1 pre-empted, 2 running, 3 failed; the resubmission: 1 pending,
  // 3 completed.
  slurm.Install("squeue",
                "50_0|COMPLETED\n50_1|PREEMPTED\n50_2|RUNNING\n50_3|FAILED\n"
                "51_1|PENDING\n51_3|COMPLETED\n");
  auto active = ActiveSlurmShards(slurm.SuiteDir());
  ASSERT_TRUE(active.ok()) << active.status().ToString();
  EXPECT_EQ(*active, (std::set<int>{1, 2}));
}

TEST(SlurmStateTest, ActiveStatesKeepAShardFromBeingResubmitted) {
  EXPECT_TRUE(SlurmStateIsActive("PENDING"));
  EXPECT_TRUE(SlurmStateIsActive("RUNNING"));
  EXPECT_FALSE(SlurmStateIsActive("COMPLETED"));
  EXPECT_FALSE(SlurmStateIsActive("PREEMPTED"));
  EXPECT_FALSE(SlurmStateIsActive("gone"));
}

}  // namespace suite_slurm_test
}  // namespace kernelpro::suite
