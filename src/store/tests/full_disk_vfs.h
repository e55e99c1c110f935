// A SQLite VFS over the default one whose writes fail with SQLITE_FULL (as
// ENOSPC does) while the "disk" is full: how tests fill the disk under a
// store without a small filesystem, which needs root to mount. Pass
// FullDiskVfs::Name() as SqliteStoreOptions::vfs. Its syncs can also be
// held, to show what goes on while a commit waits for the disk.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace trainyard::store::testing {

class FullDiskVfs {
 public:
  // Registers the VFS (once) and returns its name.
  static const char* Name() {
    static const char* name = Register();
    return name;
  }
  static void SetFull(bool full) { full_ = full; }
  // While held, every sync waits (syncs_waiting() counts them).
  static void HoldSyncs(bool held) {
    std::lock_guard lock(sync_mu_);
    syncs_held_ = held;
    sync_released_.notify_all();
  }
  static int syncs_waiting() { return syncs_waiting_; }

 private:
  // The VFS's file: its own methods, then the real VFS's file.
  struct File {
    sqlite3_file base;
    sqlite3_file* real;
  };
  static sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real; }
  static const sqlite3_io_methods* M(sqlite3_file* f) { return Real(f)->pMethods; }

  static int Sync(sqlite3_file* f, int flags) {
    {
      std::unique_lock lock(sync_mu_);
      ++syncs_waiting_;
      sync_released_.wait(lock, [] { return !syncs_held_; });
      --syncs_waiting_;
    }
    return M(f)->xSync(Real(f), flags);
  }
  static int Write(sqlite3_file* f, const void* data, int n, sqlite3_int64 offset) {
    if (full_) return SQLITE_FULL;
    return M(f)->xWrite(Real(f), data, n, offset);
  }
  static int Open(sqlite3_vfs* vfs, const char* name, sqlite3_file* f, int flags, int* out) {
    auto* real_vfs = static_cast<sqlite3_vfs*>(vfs->pAppData);
    auto* file = reinterpret_cast<File*>(f);
    file->real = reinterpret_cast<sqlite3_file*>(file + 1);
    int rc = real_vfs->xOpen(real_vfs, name, file->real, flags, out);
    file->base.pMethods = file->real->pMethods != nullptr ? &methods_ : nullptr;
    return rc;
  }

  static const char* Register() {
    sqlite3_vfs* real = sqlite3_vfs_find(nullptr);
    static sqlite3_vfs vfs = *real;
    vfs.szOsFile = static_cast<int>(sizeof(File)) + real->szOsFile;
    vfs.zName = "trainyard-full-disk";
    vfs.pAppData = real;
    vfs.xOpen = Open;
    sqlite3_vfs_register(&vfs, 0);
    return vfs.zName;
  }

  // Everything but Write passes through.
  static inline sqlite3_io_methods methods_ = {
      .iVersion = 3,
      .xClose = [](sqlite3_file* f) { return M(f)->xClose(Real(f)); },
      .xRead = [](sqlite3_file* f, void* data, int n,
                  sqlite3_int64 offset) { return M(f)->xRead(Real(f), data, n, offset); },
      .xWrite = Write,
      .xTruncate = [](sqlite3_file* f,
                      sqlite3_int64 size) { return M(f)->xTruncate(Real(f), size); },
      .xSync = Sync,
      .xFileSize = [](sqlite3_file* f,
                      sqlite3_int64* size) { return M(f)->xFileSize(Real(f), size); },
      .xLock = [](sqlite3_file* f, int lock) { return M(f)->xLock(Real(f), lock); },
      .xUnlock = [](sqlite3_file* f, int lock) { return M(f)->xUnlock(Real(f), lock); },
      .xCheckReservedLock = [](sqlite3_file* f,
                               int* out) { return M(f)->xCheckReservedLock(Real(f), out); },
      .xFileControl = [](sqlite3_file* f, int op,
                         void* arg) { return M(f)->xFileControl(Real(f), op, arg); },
      .xSectorSize = [](sqlite3_file* f) { return M(f)->xSectorSize(Real(f)); },
      .xDeviceCharacteristics =
          [](sqlite3_file* f) { return M(f)->xDeviceCharacteristics(Real(f)); },
      .xShmMap =
          [](sqlite3_file* f, int page, int size, int extend, void volatile** out) {
            return M(f)->xShmMap(Real(f), page, size, extend, out);
          },
      .xShmLock = [](sqlite3_file* f, int offset, int n,
                     int flags) { return M(f)->xShmLock(Real(f), offset, n, flags); },
      .xShmBarrier = [](sqlite3_file* f) { M(f)->xShmBarrier(Real(f)); },
      .xShmUnmap = [](sqlite3_file* f, int del) { return M(f)->xShmUnmap(Real(f), del); },
      .xFetch = [](sqlite3_file* f, sqlite3_int64 offset, int n,
                   void** out) { return M(f)->xFetch(Real(f), offset, n, out); },
      .xUnfetch = [](sqlite3_file* f, sqlite3_int64 offset,
                     void* p) { return M(f)->xUnfetch(Real(f), offset, p); },
  };
  static inline std::atomic<bool> full_{false};
  static inline std::mutex sync_mu_;
  static inline std::condition_variable sync_released_;
  static inline bool syncs_held_ = false;  // guarded by sync_mu_
  static inline std::atomic<int> syncs_waiting_{0};
};

}  // namespace trainyard::store::testing
