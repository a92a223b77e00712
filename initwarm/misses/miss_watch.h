// The miss watcher's loop (`initwarm misses`): scan the gated pod's view,
// print what was compiled after the gate (or the miss report as JSON), copy
// it into the inbox for a harvest, and send the report to the operator;
// once, or every `interval` forever. initwarm/cli/cmd_misses.cc parses the flags into
// MissWatchOptions and calls WatchMisses.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

namespace kc::initwarm {

struct MissWatchOptions {
  std::filesystem::path view;        // the gate's view symlink
  std::string fingerprint;           // "" = from the view's tree name
  std::string report_url;            // "" = no reports
  std::string token_file;            // the projected token, with report_url
  bool json = false;                 // print the report as JSON (once only)
  std::chrono::seconds interval{0};  // 0 = once
  // The volume's inbox root (v1/.inbox, mounted on its own); "" = no
  // harvest copies. With it: this pod's uid and its caps.
  std::filesystem::path inbox;
  std::string pod_uid;
  int harvest_max_files = 0;
  std::int64_t harvest_max_bytes = 0;
};

// Runs the watch; returns the exit code (core/exit_codes.h): 0 done, 1 the
// view cannot be read or (once) the report could not be sent. Watching
// (interval > 0) never returns.
int WatchMisses(const MissWatchOptions& o);

}  // namespace kc::initwarm
