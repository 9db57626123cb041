// Shared memory between the processes of a node that never has a name, so nothing can be left behind
// when they die, however they die: the memory lives only in open file descriptors and mappings.
//
// The owner creates an unnamed file (O_TMPFILE in /dev/shm, so it counts against that tmpfs's limit as a
// POSIX shared-memory segment would; memfd_create where the kernel lacks O_TMPFILE on tmpfs) and tells
// the others its process id and descriptor number; they open that descriptor themselves, through
// /proc/<pid>/fd/<fd> (allowed between processes of the same user), or pidfd_getfd where /proc refuses.
// The owner keeps its descriptor open until every peer has opened it.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace iris::unnamed_memory {

// A new unnamed file of `bytes`, every page reserved (posix_fallocate: a full /dev/shm is an error now,
// not a SIGBUS at a later write), or -1 with the reason in *why.
int create(size_t bytes, std::string* why);

// Opens descriptor `fd` of process `pid` read-write (close-on-exec), or returns -1 with the reasons
// in *why.
int open_peer(pid_t pid, int fd, std::string* why);

}  // namespace iris::unnamed_memory
