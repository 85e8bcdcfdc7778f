// The directory that holds the gateway<->worker Unix sockets. By default a
// fresh private (0700) directory under $XDG_RUNTIME_DIR or /tmp, so two
// clusters on one machine never meet and no other user can connect.
#pragma once

#include <string>

namespace fg::supervisor {

class link_dir {
 public:
  // Creates the directory: `requested` (mode 0700, if it does not exist yet)
  // or, when empty, a fresh one. Throws std::system_error.
  explicit link_dir(const std::string& requested);
  ~link_dir();
  link_dir(const link_dir&) = delete;
  link_dir& operator=(const link_dir&) = delete;

  const std::string& path() const { return path_; }

  // Removes the directory and what the children left in it, if this object
  // created it; a directory the user made stays. Idempotent.
  void remove();

 private:
  std::string path_;
  bool owned_ = false;
};

}  // namespace fg::supervisor
