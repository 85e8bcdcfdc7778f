// Who may own a link directory and who may be at the other end of a link.
//
// Anyone who can create the link sockets can stand in for the gateway
// (workers would register with it and hand it their apps), and anyone who
// can connect to them can stand in for a worker. So a link directory must
// be a real directory owned by the process's user and not writable by its
// group or others, and both ends check the peer's user (SO_PEERCRED).
// `framegate up` makes a fresh 0700 directory; a standalone gateway's
// default is per user ($XDG_RUNTIME_DIR/framegate, else /tmp/framegate-<uid>).
#pragma once

#include <optional>
#include <string>

#include <sys/types.h>

namespace fg::link {

// The default link directory of a standalone gateway or worker.
std::string default_link_dir();

// Why `dir` cannot be trusted as a link directory (not a directory, a
// symbolic link, owned by another user, writable by group or others), or
// nullopt when it can. A missing directory is nullopt too: the caller
// creates it (gateway) or waits for it (worker).
std::optional<std::string> untrusted_link_dir(const std::string& dir);

// Creates `dir` (mode 0700) if missing, then throws fg::config_error
// (a runtime_error) with a one-line reason if it cannot be trusted.
void prepare_link_dir(const std::string& dir);

// The user at the other end of a connected Unix socket (SO_PEERCRED).
std::optional<uid_t> peer_uid(int fd);

}  // namespace fg::link
