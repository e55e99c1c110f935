#include "node/host_torchrun.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <string_view>

#include "runtime/local/process.h"

namespace trainyard::node {
namespace {

// torchrun's own options that take a value, in torch 1.13's spelling.
constexpr std::array<std::string_view, 15> kValueOptions = {
    "--nnodes",       "--nproc_per_node", "--rdzv_backend", "--rdzv_endpoint",
    "--rdzv_id",      "--rdzv_conf",      "--max_restarts", "--monitor_interval",
    "--start_method", "--role",           "--log_dir",      "--redirects",
    "--tee",          "--node_rank",      "--master_addr"};
// Its options without a value, and --master_port, in torch 1.13's spelling.
constexpr std::array<std::string_view, 5> kOtherOptions = {"--master_port", "--standalone",
                                                           "--module", "--no_python", "--run_path"};

bool Known(std::string_view option) {
  auto in = [&](const auto& list) {
    return std::find(list.begin(), list.end(), option) != list.end();
  };
  return in(kValueOptions) || in(kOtherOptions);
}

bool TakesValue(std::string_view option) {
  return option == "--master_port" || option == "-r" || option == "-t" ||
         std::find(kValueOptions.begin(), kValueOptions.end(), option) != kValueOptions.end();
}

// "--no-python" as "--no_python"; a short option as it is.
std::string Underscored(std::string_view option) {
  std::string out(option);
  if (out.starts_with("--")) std::replace(out.begin() + 2, out.end(), '-', '_');
  return out;
}

bool IsTorchrun(const std::string& program) {
  size_t slash = program.rfind('/');
  return program.substr(slash == std::string::npos ? 0 : slash + 1) == "torchrun";
}

bool HasEnv(const EnvList& env, std::string_view name) {
  return std::any_of(env.begin(), env.end(), [&](const auto& kv) { return kv.first == name; });
}

}  // namespace

bool IsTorch1UnderPython311(const std::string& path) {
  // The entry script's head: a shebang and a comment naming the package.
  std::ifstream in(path, std::ios::binary);
  std::string head(512, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  std::string_view shebang = std::string_view(head).substr(0, head.find('\n'));
  size_t python = shebang.find("python3.");
  if (!shebang.starts_with("#!") || python == std::string_view::npos) return false;
  std::string_view digits = shebang.substr(python + 8, 3);
  int minor = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), minor);
  if (ec != std::errc() || minor < 11) return false;
  return head.find("'torch==1.") != std::string::npos;
}

size_t OptionsEnd(const std::vector<std::string>& argv) {
  size_t i = 1;
  while (i < argv.size() && argv[i].size() >= 2 && argv[i][0] == '-') {
    const std::string& arg = argv[i++];
    if (arg.find('=') == std::string::npos && TakesValue(Underscored(arg))) ++i;
  }
  return std::min(i, argv.size());
}

std::vector<std::string> RenameTorch2Flags(std::vector<std::string>& argv) {
  std::vector<std::string> renamed;
  size_t end = OptionsEnd(argv);
  for (size_t i = 1; i < end; ++i) {
    std::string& arg = argv[i];
    std::string option = arg.substr(0, arg.find('='));
    if (!option.starts_with("--") || option.find('-', 2) == std::string::npos) continue;
    std::string underscored = Underscored(option);
    if (!Known(underscored)) continue;  // torch 2's own: torch 1 will name it
    renamed.push_back(fmt::format("{} as {}", option, underscored));
    arg.replace(0, option.size(), underscored);
  }
  return renamed;
}

std::string AdaptTorchrunToHost(std::vector<std::string>& argv, EnvList& env) {
  if (argv.empty()) return "";
  // torchrun run by a shell script (Kubeflow's SDK writes `bash -c "...
  // torchrun train.py"`): its flags are the script's to spell, but the
  // streams' default breaks it all the same.
  bool direct = IsTorchrun(argv[0]);
  bool scripted = !direct && std::any_of(argv.begin() + 1, argv.end(), [](const std::string& a) {
    return a.find("torchrun") != std::string::npos;
  });
  if (!direct && !scripted) return "";
  auto path =
      std::find_if(env.begin(), env.end(), [](const auto& kv) { return kv.first == "PATH"; });
  Result<std::string> program =
      runtime::ResolveProgram(direct ? argv[0] : "torchrun", path == env.end() ? "" : path->second);
  if (!program.ok() || !IsTorch1UnderPython311(*program)) return "";
  std::vector<std::string> changes;
  bool stream_flags = false;
  if (direct) {
    changes = RenameTorch2Flags(argv);
    auto options = argv.begin() + static_cast<ptrdiff_t>(OptionsEnd(argv));
    stream_flags = std::any_of(argv.begin() + 1, options, [](const std::string& arg) {
      return arg == "-r" || arg == "-t" || arg.starts_with("--redirects") ||
             arg.starts_with("--tee");
    });
  }
  for (const char* name : {"PET_REDIRECTS", "PET_TEE"}) {
    if (stream_flags || HasEnv(env, name)) continue;
    env.emplace_back(name, "9:1");
    changes.push_back(fmt::format("{}=9:1", name));
  }
  if (changes.empty()) return "";
  return fmt::format(
      "this machine's torchrun ({}) is torch 1.x under Python 3.11; adapted to it: {} (torch 1 "
      "spells its flags with underscores, and cannot parse its own default for --redirects and "
      "--tee there)",
      *program, fmt::join(changes, ", "));
}

}  // namespace trainyard::node
