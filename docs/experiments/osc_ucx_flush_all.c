// Whether MPI_Win_flush_all completes a large MPI_Get, with nothing of iris-lua (docs/multinode.md,
// "Ordering and completion"; docs/decisions.md). Every rank exposes a window (MPI_Win_create, passive
// target, one MPI_Win_lock_all, as comm/rma_window.cpp does) and, round after round, writes a pattern
// into it, then gets that many bytes from each rank of the other "node" (ranks 2k and 2k+1 form a node)
// into a fresh buffer marked 0xAB, completes the get, and checks the bytes. Completion is
// MPI_Win_flush_all, or with the argument "target" MPI_Win_flush on that rank.
//
//   mpicc -O2 -o /tmp/flush_all docs/experiments/osc_ucx_flush_all.c
//   OMPI_MCA_osc=ucx OMPI_MCA_btl_vader_single_copy_mechanism=none mpirun --oversubscribe -np 4 /tmp/flush_all all
//   (then the same with "target" for "all"; a third argument sets the bytes of a get)
//
// On the development machine (Open MPI 4.1.4, UCX 1.13.1, one host: UCX emulates one-sided operations
// over its shared-memory transports), gets of 272480 bytes, 300 rounds x 2 gets x 4 ranks: "all" had 32,
// 106 and 169 bad gets of 2400 in three runs, most of them still all 0xAB (the data came after the flush
// returned, into the next round's buffer at the same address); "target" had none. 200000 bytes: none
// either way; 262144: a few with "all". Puts of the same size completed with MPI_Win_flush_all crashed
// a rank (corrupted memory).
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int per_target = argc > 1 && strcmp(argv[1], "target") == 0;
  const size_t heap = (size_t)32 << 20, bytes = argc > 2 ? (size_t)atol(argv[2]) : 272480, offset = 3022848;
  const int rounds = 300;
  char* base = aligned_alloc(4096, heap);
  memset(base, 0, heap);
  MPI_Win win;
  MPI_Win_create(base, (MPI_Aint)heap, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  int bad_gets = 0, gets = 0;
  for (int round = 0; round < rounds; ++round) {
    for (size_t i = 0; i < bytes; ++i) base[offset + i] = (char)(rank * 31 + round + i);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int peer = 0; peer < size; ++peer) {
      if (peer / 2 == rank / 2) continue;  // same "node"
      char* buffer = malloc(bytes);
      memset(buffer, 0xAB, bytes);
      MPI_Get(buffer, (int)bytes, MPI_BYTE, peer, (MPI_Aint)offset, (int)bytes, MPI_BYTE, win);
      if (per_target) {
        MPI_Win_flush(peer, win);
      } else {
        MPI_Win_flush_all(win);
      }
      size_t wrong = 0;
      for (size_t i = 0; i < bytes; ++i) wrong += buffer[i] != (char)(peer * 31 + round + i);
      bad_gets += wrong != 0;
      ++gets;
      free(buffer);
    }
    MPI_Barrier(MPI_COMM_WORLD);  // nobody rewrites its window while another still reads it
  }
  int all_bad = 0, all_gets = 0;
  MPI_Reduce(&bad_gets, &all_bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&gets, &all_gets, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("%s, %zu bytes: %d bad gets of %d\n", per_target ? "MPI_Win_flush per target" : "MPI_Win_flush_all", bytes,
           all_bad, all_gets);
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  free(base);
  MPI_Finalize();
  return 0;
}
