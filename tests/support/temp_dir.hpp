// A fresh directory under /tmp, removed with everything in it when the object goes away; and
// small helpers for the files tests write and read.
#pragma once

#include <filesystem>
#include <string>

namespace dlq::test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// A file's whole content ("" when it cannot be read).
std::string read_file(const std::string& path);

// A name unique in this run: prefix plus a counter and random digits.
std::string unique_name(const std::string& prefix);

}  // namespace dlq::test
