// What v1/<fp>/READY says, read as volume content (initwarm/fs/safe_file.h: no symlink
// followed beneath --root, never a FIFO, at most 4 KiB): absent (not
// published yet), a digest naming a manifest.json that hashes to it and
// parses, or corrupt (anything else; the gate refuses it at once).
// A digest that is not the operator's (`expected`, when known) is reported
// as it is, its manifest unread: the gate refuses that cache on its digest
// alone, so a rewritten cache costs it 4 KiB, never its manifest.
#pragma once

#include <filesystem>
#include <string>

namespace kc::initwarm {

struct ReadyState {
  enum Kind {
    kAbsent,   // not published (yet)
    kDigest,   // a sha256 naming a manifest.json that hashes to it and parses
               // (not checked when it is not `expected`)
    kCorrupt,  // anything else: refused at once, like a manifest that does not parse
  };
  Kind kind = kAbsent;
  std::string digest;  // kDigest, and kCorrupt when READY holds a sha256
  std::string why;     // kCorrupt
};

// READY of `fp` beneath the trusted `root`; an unmounted root reads absent.
// `expected`: the manifest digest the operator recorded ("" = not known).
ReadyState ReadReady(const std::filesystem::path& root, const std::string& fp,
                     const std::string& expected = "");

}  // namespace kc::initwarm
