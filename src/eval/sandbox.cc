#include "eval/sandbox.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "core/subprocess.h"
#include "core/text.h"
#include "core/tool_paths.h"

extern char** environ;

namespace kernelpro::eval {
namespace {

namespace fs = std::filesystem;

// Readable in every sandbox: where programs, libraries, compilers, CUDA and the driver live.
constexpr const char* kSystemDirs[] = {"/usr", "/etc", "/opt", "/sys"};
// Top-level names that are often links into /usr (merged /usr); recreated as the same links.
constexpr const char* kUsrLinks[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
// Under /etc but not for candidates: password hashes, host keys, TLS private keys, sudo rules.
constexpr const char* kEtcSecrets[] = {"/etc/shadow",   "/etc/gshadow",   "/etc/shadow-",
                                       "/etc/gshadow-", "/etc/ssh",       "/etc/ssl/private",
                                       "/etc/sudoers",  "/etc/sudoers.d", "/etc/security/opasswd"};

// Environment names a worker may inherit: what finding and running compilers, CUDA and torch need.
constexpr const char* kAllowedNames[] = {
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "CUDA_HOME",
    "CUDA_PATH",
    "LD_LIBRARY_PATH",
    "LIBRARY_PATH",
    "CPATH",
    "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH",
    "CC",
    "CXX",
    "CUDAHOSTCXX",
    "NVCC_PREPEND_FLAGS",
    "NVCC_APPEND_FLAGS",
    "TORCH_CUDA_ARCH_LIST",
    "MAX_JOBS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "CUTLASS_DIR",
    "KERNELPRO_CUTLASS_DIR",
};
constexpr const char* kAllowedPrefixes[] = {"LC_",   "CUDA_",    "NVIDIA_",
                                            "NCCL_", "NVSHMEM_", "TORCH_SYMM_MEM_"};

bool Exists(const std::string& path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0;
}

bool IsSymlink(const std::string& path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode);
}

std::string Absolute(const std::string& path) {
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  return (ec ? fs::path(path) : absolute).lexically_normal().string();
}

// True when `path` lies under (or is) one of `roots`.
bool Under(const std::string& path, const std::vector<std::string>& roots) {
  for (const std::string& root : roots) {
    if (path == root || (path.size() > root.size() && path.starts_with(root) &&
                         (root.back() == '/' || path[root.size()] == '/'))) {
      return true;
    }
  }
  return false;
}

// The arguments shared by every sandboxed command, before the step's own mounts.
std::vector<std::string> BaseArguments(const std::string& bwrap,
                                       const std::vector<std::string>& read_only,
                                       const std::vector<std::string>& devices) {
  std::vector<std::string> args = {bwrap,           "--die-with-parent", "--unshare-all",
                                   "--new-session", "--cap-drop",        "ALL"};
  for (const char* dir : kSystemDirs) {
    if (Exists(dir)) args.insert(args.end(), {"--ro-bind", dir, dir});
  }
  for (const char* link : kUsrLinks) {
    std::error_code ec;
    if (IsSymlink(link)) {
      args.insert(args.end(), {"--symlink", fs::read_symlink(link, ec).string(), link});
    } else if (Exists(link)) {
      args.insert(args.end(), {"--ro-bind", link, link});
    }
  }
  for (const char* secret : kEtcSecrets) {
    if (!Exists(secret)) continue;
    if (fs::is_directory(secret)) {
      args.insert(args.end(), {"--tmpfs", secret, "--remount-ro", secret});
    } else {
      args.insert(args.end(), {"--ro-bind", "/dev/null", secret});
    }
  }
  args.insert(args.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"});
  for (const std::string& device : devices) args.insert(args.end(), {"--dev-bind", device, device});
  std::vector<std::string> system(std::begin(kSystemDirs), std::end(kSystemDirs));
  for (const std::string& path : read_only) {
    if (Exists(path) && !Under(path, system)) args.insert(args.end(), {"--ro-bind", path, path});
  }
  return args;
}

std::vector<std::string> GpuDevices() {
  std::vector<std::string> devices;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev", ec)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with("nvidia")) devices.push_back(entry.path().string());
  }
  std::sort(devices.begin(), devices.end());
  return devices;
}

}  // namespace

bool LooksLikeCredential(const std::string& name) {
  const std::string upper = Upper(name);
  for (const char* word : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"}) {
    if (upper.find(word) != std::string::npos) return true;
  }
  return upper.starts_with("AWS_");
}

std::map<std::string, std::string> WorkerEnvironment(
    const std::vector<std::string>& extra_names, const std::map<std::string, std::string>& set) {
  std::set<std::string> names(std::begin(kAllowedNames), std::end(kAllowedNames));
  names.insert(extra_names.begin(), extra_names.end());
  std::map<std::string, std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text(*entry);
    const std::size_t equals = text.find('=');
    if (equals == std::string::npos) continue;
    std::string name = text.substr(0, equals);
    bool allowed = names.contains(name);
    for (const char* prefix : kAllowedPrefixes) allowed = allowed || name.starts_with(prefix);
    if (allowed && !LooksLikeCredential(name)) env[name] = text.substr(equals + 1);
  }
  if (!env.contains("PATH")) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& [name, value] : set) env[name] = value;
  return env;
}

Sandbox Sandbox::Unconfined() { return Sandbox(); }

Result<Sandbox> Sandbox::Create(const SandboxOptions& options) {
  if (!options.enabled) return Unconfined();
  Sandbox sandbox;
  sandbox.bwrap_ = options.bwrap.empty() ? FindTool("bwrap") : options.bwrap;
  if (sandbox.bwrap_.empty()) {
    return Status::Unavailable(
        "the sandbox needs bubblewrap, which is not installed (Debian/Ubuntu: apt-get install "
        "bubblewrap; or set KERNELPRO_BWRAP to a bwrap binary). To run candidate code without a "
        "sandbox anyway, pass --unsafe-no-sandbox");
  }
  for (const std::string& path : options.read_only) {
    if (!path.empty()) sandbox.read_only_.push_back(Absolute(path));
  }
  sandbox.devices_ = GpuDevices();
  // A trial run: bwrap may exist but be unable to create namespaces (containers without user
  // namespaces, seccomp policies), and that must be found before any candidate runs.
  ProcessOptions trial;
  trial.argv = sandbox.Wrap({"true"}, {});
  trial.inherit_env = false;
  trial.env = {{"PATH", "/usr/bin:/bin"}};
  trial.limits.wall_timeout = std::chrono::seconds(30);
  auto ran = RunProcess(trial);
  if (!ran.ok() || !ran->started || !ran->exited || ran->exit_code != 0) {
    std::string why = !ran.ok()       ? ran.status().message()
                      : !ran->started ? ran->start_error
                                      : ran->Describe() + ": " + ran->stderr_text;
    while (!why.empty() && std::isspace(static_cast<unsigned char>(why.back()))) why.pop_back();
    return Status::Unavailable("the sandbox cannot be set up with " + sandbox.bwrap_ + " (" + why +
                               "). kernelpro refuses to run candidate code unconfined; pass "
                               "--unsafe-no-sandbox to do so anyway");
  }
  return sandbox;
}

std::string Sandbox::Describe() const {
  if (!active()) {
    return "none (--unsafe-no-sandbox): candidate code ran with kernelpro's own permissions";
  }
  return "bubblewrap (" + bwrap_ + "): private file system, no network, own PID namespace";
}

std::vector<std::string> Sandbox::Wrap(const std::vector<std::string>& argv,
                                       const SandboxMounts& mounts) const {
  if (!active()) return argv;
  std::vector<std::string> args = BaseArguments(bwrap_, read_only_, devices_);
  for (const std::string& path : mounts.read_only) {
    const std::string absolute = Absolute(path);
    if (Exists(absolute)) args.insert(args.end(), {"--ro-bind", absolute, absolute});
  }
  std::string first_writable;
  for (const std::string& path : mounts.writable) {
    const std::string absolute = Absolute(path);
    std::error_code ec;
    fs::create_directories(absolute, ec);
    if (!fs::is_directory(absolute)) continue;
    args.insert(args.end(), {"--bind", absolute, absolute});
    if (first_writable.empty()) first_writable = absolute;
  }
  if (!first_writable.empty()) {
    args.insert(args.end(), {"--chdir", first_writable, "--setenv", "HOME", first_writable});
  } else {
    args.insert(args.end(), {"--chdir", "/tmp", "--setenv", "HOME", "/tmp"});
  }
  // The sandbox's own root (a tmpfs holding the mount points) is read-only too: the step's
  // writable directories and /tmp are the only places it can write.
  args.insert(args.end(), {"--remount-ro", "/", "--setenv", "TMPDIR", "/tmp", "--"});
  args.insert(args.end(), argv.begin(), argv.end());
  return args;
}

}  // namespace kernelpro::eval
