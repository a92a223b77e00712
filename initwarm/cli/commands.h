// The initwarm subcommands. Each takes the arguments after its name
// (argv[2..]) and returns the process exit code; each prints its own --help.
// Exit codes are documented per command in its --help text and in
// docs/cache-layout.md; core/exit_codes.h holds the shared numbers.
#pragma once

#include <string>
#include <vector>

namespace kc::initwarm {

int RunPrepare(const std::vector<std::string>& args);
int RunSeal(const std::vector<std::string>& args);
int RunWait(const std::vector<std::string>& args);
int RunVerify(const std::vector<std::string>& args);
int RunProbe(const std::vector<std::string>& args);
int RunGc(const std::vector<std::string>& args);
int RunInspect(const std::vector<std::string>& args);
int RunMisses(const std::vector<std::string>& args);
int RunHarvest(const std::vector<std::string>& args);
int RunDrive(const std::vector<std::string>& args);
int RunConverge(const std::vector<std::string>& args);

// The whole command line: `initwarm <command> [flags]` dispatched to the
// Run* above; returns the process exit code.
int InitwarmMain(int argc, char** argv);

}  // namespace kc::initwarm
