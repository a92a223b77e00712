// What v1/<fp>/READY says, read as volume content (safe_file.h: no symlink
// followed beneath --root, never a FIFO, at most 4 KiB): absent (not
// published yet), a digest naming a manifest.json that hashes to it and
// parses, or corrupt (anything else; the gate refuses it at once).
#pragma once

#include <filesystem>
#include <string>

namespace kc::initwarm {

struct ReadyState {
  enum Kind {
    kAbsent,   // not published (yet)
    kDigest,   // a sha256 naming a manifest.json that hashes to it and parses
    kCorrupt,  // anything else: refused at once, like a manifest that does not parse
  };
  Kind kind = kAbsent;
  std::string digest;  // kDigest, and kCorrupt when READY holds a sha256
  std::string why;     // kCorrupt
};

// READY of `fp` beneath the trusted `root`; an unmounted root reads absent.
ReadyState ReadReady(const std::filesystem::path& root, const std::string& fp);

}  // namespace kc::initwarm
