#pragma once
// Whole-file reads and atomic writes (write to a temporary file in the same directory, fsync,
// rename, fsync the directory), so a crash never leaves a half-written file behind, a reader sees
// the old file or the new one, and a write that returned OK survives a power loss. The file gets
// `mode` exactly (not cut by the umask); the temporary file is created O_EXCL, never through a
// link someone left at its name.
#include <string>
#include <string_view>

#include "base/status.h"

namespace sriovdra {

// How a read knows the file ended. kEmptyRead suits every file (pipes, /proc); kShortRead saves
// the final empty read where a short read can only mean the end: regular files and sysfs
// attributes, whose whole value comes with the first read.
enum class ReadEnd { kEmptyRead, kShortRead };
Result<std::string> readFile(const std::string& path, size_t max_bytes = 64u << 20,
                             ReadEnd end = ReadEnd::kEmptyRead);
// Replaces `path` with `content` (mode `mode`, whatever the umask) so that a reader sees the old
// or the new file, never a part, and a power loss keeps what returned Ok (file and directory
// synced). The new file is written unnamed where the filesystem allows it (O_TMPFILE; /proc
// mounted), so a process killed while it writes leaves nothing behind; elsewhere, and for the
// instant between naming and renaming, a <path>.tmp-<N> can be left.
Status writeFileAtomic(const std::string& path, std::string_view content, int mode = 0644);

}  // namespace sriovdra
